// partsim batch end to end: exit codes 0, 1 and 2, JUnit XML / markdown / JSON outputs, the baseline regression
// table, and byte-identical outputs for the same scenarios.
#include "test_support.hpp"

#include "partsim/common/exit_codes.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

namespace partsim::test {
namespace {

namespace fs = std::filesystem;

/** A folder with the shipped default scenario as a.json and seed-1-balanced-partitions as b.json; `expect_b` replaces
 * b's expectations. */
fs::path scenario_folder(const nlohmann::json& expect_b = nullptr) {
  const fs::path dir = temp_dir() / "scenarios";
  fs::create_directories(dir);
  fs::copy_file(source_dir() / "scenarios" / "default.json", dir / "a.json");
  nlohmann::json b = nlohmann::json::parse(read_file(source_dir() / "scenarios" / "seed-1-balanced-partitions.json"));
  if (!expect_b.is_null()) b["expect"] = expect_b;
  std::ofstream(dir / "b.json") << b.dump(2);
  return dir;
}

TEST(BatchCli, AllExpectationsHoldExitZeroWithJUnitMarkdownAndJson) {
  const fs::path dir = scenario_folder();
  const fs::path out = temp_dir() / "out";
  const CliResult r = run_cli({"batch", dir.string(), "--out", out.string(), "--jobs", "2"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("2 scenarios: 2 passed, 0 failed, 0 errors"), std::string::npos) << r.out;
  const std::string junit = read_file(out / "junit.xml");
  EXPECT_NE(junit.find(R"(<testsuites name="partsim batch" tests=")"), std::string::npos) << junit;
  EXPECT_NE(junit.find(R"(failures="0" errors="0">)"), std::string::npos) << junit;
  EXPECT_NE(junit.find(R"(<testcase classname="b" name="expect /summary/speedup"/>)"), std::string::npos) << junit;
  const auto summary = nlohmann::json::parse(read_file(out / "summary.json"));
  EXPECT_EQ(summary["counts"]["passed"], 2);
  EXPECT_EQ(summary["cases"][0]["name"], "a");
  const auto report = nlohmann::json::parse(read_file(out / "reports" / "b.report.json"));
  EXPECT_NEAR(report["summary"]["speedup"].get<double>(), 10.0, 1e-9);
  EXPECT_NE(read_file(out / "summary.md").find("| b | passed | simulated | 13.141 s | 3 of 3 hold | - |"),
            std::string::npos);
}

TEST(BatchCli, ABrokenExpectationExitsOneAndIsListedLastWithTheFigureTheBoundAndTheValue) {
  const fs::path dir = scenario_folder({{"/summary/makespan_s", {{"max", 1}}}});
  const fs::path out = temp_dir() / "out";
  const CliResult r = run_cli({"batch", dir.string(), "--out", out.string(), "--no-progress"});
  ASSERT_EQ(r.exit_code, kExitFailure) << r.err;
  EXPECT_NE(r.out.find("failed b: expectation /summary/makespan_s: expected at most 1, got 13.141"), std::string::npos)
      << r.out;
  EXPECT_NE(r.err.find("partsim: error: case b: 1 expectation failed, 0 figures moved past the baseline"),
            std::string::npos)
      << r.err;
  const std::string junit = read_file(out / "junit.xml");
  EXPECT_NE(
      junit.find(R"(<failure message="/summary/makespan_s: expected at most 1, got 13.141" type="expectation"/>)"),
      std::string::npos)
      << junit;
  EXPECT_LT(junit.find(R"(<testsuite name="a")"), junit.find(R"(<testsuite name="b")"));
}

TEST(BatchCli, AnInputErrorExitsTwoAndTheOtherScenariosStillRun) {
  const fs::path dir = scenario_folder();
  std::ofstream(dir / "c.json") << R"({"schema_version": 1, "cluster": {"nodes": "many"}})";
  const fs::path out = temp_dir() / "out";
  const CliResult r = run_cli({"batch", dir.string(), "--out", out.string(), "--no-progress"});
  ASSERT_EQ(r.exit_code, kExitInputError) << r.err;
  EXPECT_NE(r.out.find("2 passed, 0 failed, 1 errors"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("partsim: error: case c: " + (dir / "c.json").string() + ": "), std::string::npos) << r.err;
  EXPECT_NE(read_file(out / "junit.xml").find(R"(<error message=")"), std::string::npos);
  // A command-line error is one line, exit 2, before anything runs.
  const CliResult missing = run_cli({"batch", (dir / "nothing-here").string(), "--no-progress"});
  EXPECT_EQ(missing.exit_code, kExitInputError);
  EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1) << missing.err;
  const CliResult tolerance = run_cli({"batch", dir.string(), "--tolerance", "/summary/mfu=lots"});
  EXPECT_EQ(tolerance.exit_code, kExitInputError);
  EXPECT_NE(tolerance.err.find("--tolerance: /summary/mfu: expected a relative tolerance"), std::string::npos)
      << tolerance.err;
  const CliResult baseline = run_cli({"batch", dir.string(), "--baseline", dir.string()});
  EXPECT_EQ(baseline.exit_code, kExitInputError);
  EXPECT_NE(baseline.err.find("expected the output folder of an earlier partsim batch"), std::string::npos)
      << baseline.err;
}

TEST(BatchCli, ABaselineReportsEveryFigureThatMovedPastItsTolerance) {
  const fs::path dir = scenario_folder();
  const fs::path before = temp_dir() / "before";
  ASSERT_EQ(run_cli({"batch", dir.string(), "--out", before.string(), "--no-progress"}).exit_code, kExitOk);

  // Unchanged: the baseline comparison passes.
  const fs::path same = temp_dir() / "same";
  const CliResult unchanged =
      run_cli({"batch", dir.string(), "--out", same.string(), "--baseline", before.string(), "--no-progress"});
  ASSERT_EQ(unchanged.exit_code, kExitOk) << unchanged.err;
  EXPECT_NE(read_file(same / "junit.xml").find(R"(<testcase classname="a" name="baseline"/>)"), std::string::npos);

  // Every GPU 10% slower in every scenario (a hardware-plan change): b's makespan moves. Its expectations
  // are dropped so that only the baseline can fail it.
  const fs::path after = temp_dir() / "after";
  const CliResult moved =
      run_cli({"batch", dir.string(), "--out", after.string(), "--baseline", before.string(), "--no-progress", "--set",
               "/cluster/node_speed_factors=[0.9,0.9,0.9,0.9,0.9,0.9,0.9,0.9,0.9,0.9]", "--set", "/expect={}"});
  ASSERT_EQ(moved.exit_code, kExitFailure) << moved.err;
  const std::string md = read_file(after / "summary.md");
  EXPECT_NE(md.find("## Figures that moved past their tolerance"), std::string::npos) << md;
  EXPECT_NE(md.find("| b | `/summary/makespan_s` | 13.141 | 14.6011 | +11.11% | 1% |"), std::string::npos) << md;
  EXPECT_NE(read_file(after / "junit.xml").find(R"(type="regression">)"), std::string::npos);

  // Tolerances wide enough for the moves pass. Karp-Flatt moves from 0 (the one-GPU reference runs at nominal
  // speed): from zero, a move is 100%, so it takes a tolerance of 1.
  const CliResult tolerated =
      run_cli({"batch", dir.string(), "--out", (temp_dir() / "t").string(), "--baseline", before.string(),
               "--no-progress", "--set", "/cluster/node_speed_factors=[0.9,0.9,0.9,0.9,0.9,0.9,0.9,0.9,0.9,0.9]",
               "--set", "/expect={}", "--tolerance", "0.2", "--tolerance", "/summary/karp_flatt_serial_fraction=1"});
  EXPECT_EQ(tolerated.exit_code, kExitOk) << tolerated.out;
}

TEST(BatchCli, TheSameScenariosGiveByteIdenticalOutputs) {
  const fs::path dir = scenario_folder({{"/summary/makespan_s", {{"max", 1}}}});
  const fs::path one = temp_dir() / "one";
  const fs::path two = temp_dir() / "two";
  run_cli({"batch", dir.string(), "--out", one.string(), "--jobs", "1", "--no-progress"});
  run_cli({"batch", dir.string(), "--out", two.string(), "--jobs", "2", "--no-progress"});
  for (const char* file : {"junit.xml", "summary.md", "summary.json", "reports/a.report.json"})
    EXPECT_EQ(read_file(one / file), read_file(two / file)) << file;
}

} // namespace
} // namespace partsim::test
