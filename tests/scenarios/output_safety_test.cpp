// What partsim says it wrote is on disk, whole: full disks (a file size limit), /dev/full on stdout, kills at random
// moments, and output folder names from the scenario.
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

extern char** environ;

namespace partsim::test {
namespace {

std::string scenario_path(const std::string& name) {
  return (source_dir() / "scenarios" / (name + ".json")).string();
}

void expect_one_output_error(const CliResult& r) {
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_EQ(r.err.rfind("partsim: error: cannot write ", 0), 0U) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

/** Every file in `dir` (the run's outputs) is whole: JSON files parse, CSV rows all have the header's field count;
 * no temporary file is left under a final name. */
void expect_whole_outputs(const std::filesystem::path& dir, const std::string& trial) {
  if (!std::filesystem::exists(dir)) return;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.find(".tmp-") != std::string::npos) continue; // a killed run's temporary file: never a final name
    const std::string text = read_file(entry.path());
    if (entry.path().extension() == ".json") {
      EXPECT_TRUE(nlohmann::json::accept(text)) << trial << ": " << name << " is not whole (" << text.size() << " B)";
    } else if (entry.path().extension() == ".csv") {
      std::istringstream lines(text);
      std::string header;
      ASSERT_TRUE(std::getline(lines, header)) << trial << ": " << name;
      const auto fields = std::count(header.begin(), header.end(), ',');
      for (std::string line; std::getline(lines, line);)
        EXPECT_EQ(std::count(line.begin(), line.end(), ','), fields) << trial << ": " << name << ": " << line;
      EXPECT_EQ(text.back(), '\n') << trial << ": " << name;
    } else {
      ADD_FAILURE() << trial << ": unexpected output " << name;
    }
  }
  // report.json is written last: its presence means the set is complete.
  if (std::filesystem::exists(dir / "report.json")) {
    EXPECT_TRUE(std::filesystem::exists(dir / "ranks.csv")) << trial;
    EXPECT_TRUE(std::filesystem::exists(dir / "trace.json")) << trial;
  }
}

TEST(OutputSafety, AFullDiskIsAnOutputErrorAndLeavesNoPartialFile) {
  // A file size limit of 1 KiB (SIGXFSZ ignored: writes past it fail with EFBIG, as on a full disk).
  const auto dir = temp_dir();
  const CliResult r =
      run_cli_in_shell({"run", scenario_path("seed-1-skewed-partitions"), "--out", "out", "--no-progress"}, dir,
                       "ulimit -f 1; trap '' XFSZ;", "/dev/null");
  expect_one_output_error(r);
  expect_whole_outputs(dir / "out", "file size limit");
  EXPECT_FALSE(std::filesystem::exists(dir / "out" / "report.json"));
  for (const auto& entry : std::filesystem::directory_iterator(dir / "out"))
    EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos) << "temporary file left behind";
}

TEST(OutputSafety, ASweepOnAFullDiskIsAnOutputError) {
  const auto dir = temp_dir();
  const CliResult r = run_cli_in_shell(
      {"sweep", scenario_path("default"), "--vary", "/cluster/nodes=1,2", "--out", "out", "--jobs", "2"}, dir,
      "ulimit -f 1; trap '' XFSZ;", "/dev/null");
  // The sweep's progress comes first on stderr; then one error line.
  EXPECT_EQ(r.exit_code, 4) << r.err;
  const std::string last = r.err.substr(r.err.rfind('\n', r.err.size() - 2) + 1);
  EXPECT_EQ(last.rfind("partsim: error: cannot write out/point-0000.report.json: File too large", 0), 0U) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "out" / "sweep.csv"));
}

TEST(OutputSafety, AFailedWriteToStandardOutputIsAnError) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"run", "--json", "--no-files"},
                                               {"run", "--no-files"},
                                               {"validate", scenario_path("default")},
                                               {"list", "scenarios"}}) {
    const CliResult r = run_cli_in_shell(args, {}, "", "/dev/full");
    EXPECT_EQ(r.exit_code, 4) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find("cannot write standard output"), std::string::npos) << r.err;
  }
}

TEST(OutputSafety, FolderNamesFromTheScenarioStayInsideTheOutputRoot) {
  for (const std::string& name : {std::string(".."), std::string("../escape"), std::string("/etc/x"),
                                  std::string(".hidden"), std::string(300, 'n')}) {
    const auto dir = temp_dir();
    const CliResult r = run_cli({"run", "--set", "/name=" + name, "--no-progress"}, dir / "");
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
    std::vector<std::filesystem::path> folders;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) folders.push_back(entry.path());
    ASSERT_EQ(folders.size(), 1U) << name;
    EXPECT_EQ(folders[0].filename(), "partsim-out") << name;
    std::vector<std::string> runs;
    for (const auto& entry : std::filesystem::directory_iterator(folders[0])) runs.push_back(entry.path().filename());
    ASSERT_EQ(runs.size(), 1U) << name;
    EXPECT_NE(runs[0].front(), '.') << name << " -> " << runs[0];
    EXPECT_LE(runs[0].size(), 100U) << name;
    EXPECT_TRUE(std::filesystem::exists(folders[0] / runs[0] / "report.json")) << name;
  }
}

TEST(OutputSafety, OutputsPresentAfterAKillAreWhole) {
  // Kill runs at random moments; every output under its final name must parse. A run of about half a second that
  // writes a 39 MB trace, so that kills land while files are written.
  const std::string cli = PARTSIM_CLI;
  const std::string scenario = scenario_path("llama3-70b-3d-64xh100");
  const std::string data = "PARTSIM_DATA_DIR=" + source_dir().string();
  std::mt19937 rng(20261201);
  std::uniform_int_distribution<int> delay_ms(0, 900);
  int completed = 0;
  for (int trial = 0; trial < 30; ++trial) {
    const auto dir = temp_dir();
    const std::string out = (dir / "out").string();
    std::vector<std::string> args{cli, "run", scenario, "--out", out, "--no-progress"};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_strings{data};
    for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
    std::vector<char*> envp;
    for (std::string& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    ASSERT_EQ(posix_spawn(&pid, cli.c_str(), &actions, nullptr, argv.data(), envp.data()), 0);
    posix_spawn_file_actions_destroy(&actions);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng)));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) ++completed;
    expect_whole_outputs(out, "trial " + std::to_string(trial));
    std::filesystem::remove_all(dir);
  }
  std::cout << completed << " of 30 runs finished before their kill\n";
  EXPECT_LT(completed, 30) << "no kill landed during a run: the test tests nothing";
}

} // namespace
} // namespace partsim::test
