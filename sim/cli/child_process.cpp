// posix_spawn + poll: a small process pool that captures stdout and stderr of each child.
#include "child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "partsim/common/event_stream.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace partsim::cli {

namespace {

struct Running {
  std::size_t index = 0;
  pid_t pid = -1;
  int out_fd = -1;
  int err_fd = -1;
};

Running spawn(std::size_t index, const std::vector<std::string>& command) {
  std::array<int, 2> out_pipe{};
  std::array<int, 2> err_pipe{};
  if (pipe2(out_pipe.data(), O_CLOEXEC) != 0 || pipe2(err_pipe.data(), O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("cannot create a pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
  std::vector<char*> argv;
  for (const std::string& arg : command) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (rc != 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    throw std::runtime_error("cannot start " + command[0] + ": " + std::strerror(rc));
  }
  return {index, pid, out_pipe[0], err_pipe[0]};
}

/** Reads what is available; returns false at end of file. */
bool drain(int fd, std::string& sink) {
  std::array<char, 65536> buffer{};
  const ssize_t n = read(fd, buffer.data(), buffer.size());
  if (n > 0) {
    sink.append(buffer.data(), static_cast<std::size_t>(n));
    return true;
  }
  return n < 0 && (errno == EINTR || errno == EAGAIN);
}

} // namespace

std::string self_executable() {
  return std::filesystem::read_symlink("/proc/self/exe").string();
}

std::vector<ChildResult> run_children(const std::vector<std::vector<std::string>>& commands, std::size_t jobs,
                                      const std::function<void(std::size_t)>& on_done) {
  std::vector<ChildResult> results(commands.size());
  std::vector<Running> running;
  std::size_t next = 0;
  jobs = jobs == 0 ? 1 : jobs;
  while (next < commands.size() || !running.empty()) {
    while (next < commands.size() && running.size() < jobs) {
      running.push_back(spawn(next, commands[next]));
      ++next;
    }
    std::vector<pollfd> fds;
    for (const Running& r : running) {
      if (r.out_fd >= 0) fds.push_back({r.out_fd, POLLIN, 0});
      if (r.err_fd >= 0) fds.push_back({r.err_fd, POLLIN, 0});
    }
    if (!fds.empty() && poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR)
      throw std::runtime_error(std::string("poll failed: ") + std::strerror(errno));
    for (auto it = running.begin(); it != running.end();) {
      ChildResult& result = results[it->index];
      for (int* fd : {&it->out_fd, &it->err_fd}) {
        if (*fd < 0) continue;
        for (const pollfd& p : fds)
          if (p.fd == *fd && (p.revents & (POLLIN | POLLHUP | POLLERR)) != 0 &&
              !drain(*fd, fd == &it->out_fd ? result.out : result.err)) {
            close(*fd);
            *fd = -1;
          }
      }
      if (it->out_fd < 0 && it->err_fd < 0) {
        int status = 0;
        while (waitpid(it->pid, &status, 0) < 0 && errno == EINTR) {
        }
        result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        const std::size_t done = it->index;
        it = running.erase(it);
        if (on_done) on_done(done);
      } else {
        ++it;
      }
    }
  }
  return results;
}

ChildError child_error(const ChildResult& result) {
  std::istringstream lines(result.err);
  for (std::string line; std::getline(lines, line);)
    if (const auto event = parse_stream_line(line); event && event->kind == StreamEvent::Kind::Error)
      return {event->source, event->pointer, event->message};
  const std::string first = result.err.substr(0, result.err.find('\n'));
  return {"", "", first.empty() ? "exit code " + std::to_string(result.exit_code) : first};
}

std::vector<std::string> child_run_command(const std::string& scenario, const std::vector<std::string>& sets,
                                           const std::vector<std::string>& unsets) {
  std::vector<std::string> argv{self_executable(),     "run",        scenario, "--json", "--no-files", "--no-progress",
                                "--error-format=json", "--no-expect"};
  for (const std::string& pointer : unsets) argv.insert(argv.end(), {"--unset", pointer});
  for (const std::string& text : sets) argv.insert(argv.end(), {"--set", text});
  return argv;
}

std::size_t job_count(std::size_t requested) {
  return requested > 0 ? requested : std::max(1U, std::thread::hardware_concurrency());
}

} // namespace partsim::cli
