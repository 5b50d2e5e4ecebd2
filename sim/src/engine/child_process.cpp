// A simulation of its own in a forked child process (child_process.hpp).
#include "child_process.hpp"

#include <fmt/format.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <stdexcept>

namespace partsim::engine {

namespace {

/** Writes all of `text` to `fd`. */
bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

} // namespace

std::string run_in_child(const std::string& what, const std::function<std::string()>& work) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(fmt::format("pipe: {}", std::strerror(errno)));
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(fmt::format("fork: {}", std::strerror(errno)));
  if (pid == 0) {
    ::close(fds[0]);
    int code = 0;
    try {
      const std::string text = work();
      code = !text.empty() && write_all(fds[1], text) ? 0 : 3;
    } catch (const std::exception& e) {
      write_all(STDERR_FILENO, fmt::format("partsim: {}: {}\n", what, e.what()));
      code = 4;
    }
    ::close(fds[1]);
    ::_exit(code); // no exit handlers: SimGrid's would tear the engine down one object at a time
  }
  ::close(fds[1]);
  std::string text;
  char buffer[4096];
  while (true) {
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error(fmt::format("{} (a child process) ended with {} {}", what,
                                         WIFEXITED(status) ? "exit status" : "signal",
                                         WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status)));
  return text;
}

} // namespace partsim::engine
