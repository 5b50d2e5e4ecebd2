// The partsim command line end to end: outputs, exit codes, one-line errors, determinism, sweeps.
#include "test_support.hpp"

#include <fmt/format.h>

#include "partsim/common/event_stream.hpp"
#include "partsim/common/exit_codes.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace partsim::test {
namespace {

std::string scenario_path(const std::string& name) {
  return (source_dir() / "scenarios" / (name + ".json")).string();
}

nlohmann::json run_json(const std::vector<std::string>& args) {
  std::vector<std::string> all{"run"};
  all.insert(all.end(), args.begin(), args.end());
  all.insert(all.end(), {"--json", "--no-files"});
  const CliResult r = run_cli(all);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

/** Asserts a one-line error on stderr with exit code 2 that contains `fragment`. */
void expect_input_error(const CliResult& r, const std::string& fragment) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.rfind("partsim: error: ", 0), 0U) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "expected exactly one line: " << r.err;
  EXPECT_NE(r.err.find(fragment), std::string::npos) << r.err;
}

TEST(Cli, DefaultRunPrintsTableAndWritesAllOutputs) {
  const auto dir = temp_dir();
  const CliResult r = run_cli({"run"}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("makespan"), std::string::npos);
  EXPECT_NE(r.out.find("load imbalance"), std::string::npos);
  const auto out = dir / "partsim-out" / "default-seed-1-skewed";
  const auto report = nlohmann::json::parse(read_file(out / "report.json"));
  EXPECT_EQ(report["schema"], "partsim.report");
  EXPECT_EQ(report["schema_version"], 1);
  EXPECT_EQ(report["summary"]["gpus"], 10);
  const auto trace = nlohmann::json::parse(read_file(out / "trace.json"));
  int tracks = 0;
  for (const auto& e : trace["traceEvents"]) tracks += e["ph"] == "M" && e["name"] == "thread_name" ? 1 : 0;
  EXPECT_EQ(tracks, 10) << "one track per rank";
  std::istringstream csv(read_file(out / "ranks.csv"));
  std::string line;
  int lines = 0;
  while (std::getline(csv, line)) ++lines;
  EXPECT_EQ(lines, 11) << "header + one row per rank";
}

TEST(Cli, SkewedPartitionsTakeThreeTimesAsLongAsBalanced) {
  const auto skewed = run_json({scenario_path("seed-1-skewed-partitions")});
  const auto balanced = run_json({scenario_path("seed-1-balanced-partitions")});
  const double ratio = skewed["summary"]["makespan_s"].get<double>() / balanced["summary"]["makespan_s"].get<double>();
  EXPECT_NEAR(ratio, 3.0, 0.03);
}

TEST(Cli, SameScenarioAndSeedGiveIdenticalBytes) {
  const auto a = temp_dir();
  const auto b = temp_dir();
  // Ring all-reduce, run-time balancing, a random class split with a coordinator track, coordinated halos.
  for (const char* name : {"dp-training-ring-allreduce", "seed-2-dynamic-balancing", "seed-7-over-partitioning"}) {
    const std::string scenario = scenario_path(name);
    ASSERT_EQ(run_cli({"run", scenario, "--out", (a / name).string()}).exit_code, 0) << name;
    ASSERT_EQ(run_cli({"run", scenario, "--out", (b / name).string()}).exit_code, 0) << name;
  }
  const std::string seed4 = scenario_path("seed-4-fraud-stratified");
  const std::vector<std::string> random{"--set", "/strategy/class_split/method=random"};
  ASSERT_EQ(run_cli({"run", seed4, random[0], random[1], "--out", (a / "seed-4").string()}).exit_code, 0);
  ASSERT_EQ(run_cli({"run", seed4, random[0], random[1], "--out", (b / "seed-4").string()}).exit_code, 0);
  for (const char* name :
       {"dp-training-ring-allreduce", "seed-2-dynamic-balancing", "seed-7-over-partitioning", "seed-4"})
    for (const char* file : {"report.json", "ranks.csv", "trace.json"}) {
      const std::string first = read_file(a / name / file);
      EXPECT_FALSE(first.empty()) << name << "/" << file;
      EXPECT_EQ(first, read_file(b / name / file)) << name << "/" << file << " differs between two runs";
    }
}

TEST(Cli, Lv08IsSlowerThanCm02OnTheSameRing) {
  const std::string scenario = scenario_path("dp-training-ring-allreduce");
  const auto cm02 = run_json({scenario});
  const auto lv08 = run_json({scenario, "--set", "/run/network_model=LV08"});
  EXPECT_EQ(lv08["engine"]["network_model"], "LV08");
  EXPECT_GT(lv08["summary"]["makespan_s"].get<double>(), cm02["summary"]["makespan_s"].get<double>());
}

TEST(Cli, SetOverridesAField) {
  const auto report = run_json({"--set", "/cluster/nodes=5", "--set", "/strategy/partitions=5"});
  EXPECT_EQ(report["summary"]["gpus"], 5);
  EXPECT_EQ(report["scenario"]["input"]["cluster"]["nodes"], 5);
}

TEST(Cli, BadInputIsOneLineWithPointerAndExitCode2) {
  expect_input_error(run_cli({"run", "--set", "/cluster/nodes=0"}), "<built-in default>: /cluster/nodes: expected");
  expect_input_error(run_cli({"run", "--set", "/cluster/nodes=1000000"}), "/cluster/nodes");
  expect_input_error(run_cli({"run", "--set", "/strategy/kind=\"pipeline\""}), "/strategy/kind");
  expect_input_error(run_cli({"run", "/nonexistent/scenario.json"}), "/nonexistent/scenario.json: no such file");
  expect_input_error(run_cli({"run", source_dir().string()}), "is a directory");
  expect_input_error(run_cli({"validate", scenario_path("default"), "--set", "/cluster/gpu=no-such-gpu"}),
                     "unknown GPU profile \"no-such-gpu\"");
  expect_input_error(run_cli({"run", "--set", "nodes=3"}), "--set");
  expect_input_error(run_cli({"sweep", scenario_path("default"), "--vary", "/cluster/nodes=2,0"}), "/cluster/nodes");
}

TEST(Cli, UsageErrorsExitWith2) {
  const CliResult r = run_cli({"frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(run_cli({"sweep", scenario_path("default")}).exit_code, 2) << "--vary is required";
}

TEST(Cli, HelpAndVersion) {
  const CliResult version = run_cli({"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_NE(version.out.find("partsim 0."), std::string::npos);
  for (const char* command : {"run", "sweep", "merge", "validate", "list"}) {
    const CliResult help = run_cli({command, "--help"});
    EXPECT_EQ(help.exit_code, 0) << command;
    EXPECT_NE(help.out.find("Usage"), std::string::npos) << command;
  }
}

TEST(Cli, ValidateAndList) {
  const CliResult v = run_cli({"validate", scenario_path("dp-training-ring-allreduce")});
  EXPECT_EQ(v.exit_code, 0) << v.err;
  EXPECT_NE(v.out.find("ok: dp-training-ring-allreduce"), std::string::npos) << v.out;
  EXPECT_NE(v.out.find("19840 messages"), std::string::npos) << "10 iterations x 2(32-1) x 32: " << v.out;
  const CliResult hw = run_cli({"list", "hardware"});
  EXPECT_EQ(hw.exit_code, 0);
  EXPECT_NE(hw.out.find("a100-sxm4-80gb"), std::string::npos);
  EXPECT_NE(run_cli({"list", "links"}).out.find("ib-ndr"), std::string::npos);
  EXPECT_NE(run_cli({"list", "workloads"}).out.find("llama3-70b"), std::string::npos);
  const CliResult sc = run_cli({"list", "scenarios"});
  EXPECT_NE(sc.out.find("seed-1-balanced-partitions"), std::string::npos);
}

TEST(Cli, ValidationBreakdownSharesTheTrainingCasesTime) {
  // Three shipped cases: a training run (shares that add up to 100%), a collective benchmark and a memory figure
  // (none).
  const auto dir = temp_dir();
  std::filesystem::create_directories(dir / "cases");
  for (const char* name : {"korthikanti2022-22b-sp-selective", "nccl-tests-allreduce-8xh100-nvls",
                           "megatron-lm-ci2026-gpt-7b-tp4-memory-states-8xh100"})
    std::filesystem::copy_file(source_dir() / "validation" / (std::string(name) + ".json"),
                               dir / "cases" / (std::string(name) + ".json"));
  const CliResult r =
      run_cli({"validation", (dir / "cases").string(), "--jobs", "2", "--breakdown", "--markdown", "table.md"}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("compute   tensor  context   expert     data  pipeline     idle"), std::string::npos) << r.out;
  const std::string markdown = read_file(dir / "table.md");
  for (const char* none : {"nccl-tests-allreduce-8xh100-nvls", "megatron-lm-ci2026-gpt-7b-tp4-memory-states-8xh100"})
    EXPECT_NE(markdown.find(fmt::format("| `{}` | - | - | - | - | - | - | - |", none)), std::string::npos) << markdown;
  // The memory figure reads in GB.
  EXPECT_NE(markdown.find("| 20.56 GB | 20.66 GB | -0.5% |"), std::string::npos) << markdown;
  const auto shares_table = markdown.find("| case | compute |");
  ASSERT_NE(shares_table, std::string::npos) << markdown;
  const auto row = markdown.find("| `korthikanti2022-22b-sp-selective` | ", shares_table);
  ASSERT_NE(row, std::string::npos) << markdown;
  // Its seven shares (tensor parallelism on one node: compute and tensor only) add up to 100% within rounding.
  std::istringstream cells(markdown.substr(row, markdown.find('\n', row) - row));
  std::string cell;
  double total = 0.0;
  int shares = 0;
  while (std::getline(cells, cell, '|'))
    if (cell.find('%') != std::string::npos) {
      total += std::stod(cell);
      ++shares;
    }
  EXPECT_EQ(shares, 7);
  EXPECT_NEAR(total, 100.0, 0.35);
  // Without --breakdown neither the terminal nor the markdown table has the shares.
  const CliResult plain = run_cli({"validation", (dir / "cases").string(), "--markdown", "plain.md"}, dir);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out.find("pipeline"), std::string::npos) << plain.out;
  EXPECT_EQ(read_file(dir / "plain.md").find("| case | compute"), std::string::npos);
}

TEST(Cli, SweepWritesSpeedupAndKarpFlattPerPoint) {
  const auto dir = temp_dir();
  const CliResult r = run_cli({"sweep", scenario_path("seed-1-balanced-partitions"), "--vary",
                               "/cluster/nodes=1,2,5,10", "--jobs", "2", "--out", (dir / "s").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream csv(read_file(dir / "s" / "sweep.csv"));
  std::string header;
  std::getline(csv, header);
  EXPECT_NE(header.find("speedup"), std::string::npos);
  EXPECT_NE(header.find("karp_flatt_serial_fraction"), std::string::npos);
  // Balanced partitions, no communication: 10 partitions on p GPUs, round robin.
  const double expected_speedup[] = {1.0, 2.0, 5.0, 10.0};
  for (double speedup : expected_speedup) {
    std::string line;
    ASSERT_TRUE(std::getline(csv, line));
    std::vector<std::string> cells;
    std::stringstream fields(line);
    for (std::string cell; std::getline(fields, cell, ',');) cells.push_back(cell);
    ASSERT_GE(cells.size(), 7U) << line;
    EXPECT_NEAR(std::stod(cells[5]), speedup, 1e-6) << line; // point, nodes, gpus, makespan, single, speedup
    EXPECT_NEAR(std::stod(cells[7]), 0.0, 1e-6) << "no serial part: Karp-Flatt 0: " << line;
  }
}

TEST(Cli, SweepShardsSplitThePoints) {
  const auto dir = temp_dir();
  const CliResult r = run_cli({"sweep", scenario_path("default"), "--vary", "/cluster/nodes=1,2,5", "--shard", "1/2",
                               "--out", (dir / "s").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream csv(read_file(dir / "s" / "sweep-shard-1-of-2.csv"));
  std::string line;
  std::getline(csv, line);
  ASSERT_TRUE(std::getline(csv, line));
  EXPECT_EQ(line.rfind("1,2,", 0), 0U) << "shard 1 of 2 holds point 1 only: " << line;
  EXPECT_FALSE(std::getline(csv, line));
}

/** `partsim sweep scenarios/default.json --vary /cluster/nodes=1,2,5` with `extra` arguments, into `out`. */
CliResult sweep_default(const std::filesystem::path& out, const std::vector<std::string>& extra) {
  std::vector<std::string> args{
      "sweep", scenario_path("default"), "--vary", "/cluster/nodes=1,2,5", "--jobs", "2", "--out", out.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_cli(args);
}

TEST(Cli, MergedShardsAreByteForByteTheUnshardedSweep) {
  const auto dir = temp_dir();
  const CliResult whole = sweep_default(dir / "whole", {});
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  for (const char* shard : {"0", "1"}) {
    const CliResult r = sweep_default(dir / (std::string("shard-") + shard), {"--shard", std::string(shard) + "/2"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  EXPECT_TRUE(std::filesystem::exists(dir / "shard-1" / "sweep-shard-1-of-2.json"));
  EXPECT_TRUE(std::filesystem::exists(dir / "shard-1" / "summary-shard-1-of-2.txt"));
  const CliResult merged =
      run_cli({"merge", (dir / "shard-1").string(), (dir / "shard-0").string(), "--out", (dir / "merged").string()});
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  for (const char* name : {"sweep.csv", "summary.txt", "sweep.json", "point-0000.report.json", "point-0001.report.json",
                           "point-0002.report.json"}) {
    const std::string expected = read_file(dir / "whole" / name);
    ASSERT_FALSE(expected.empty()) << name;
    EXPECT_EQ(read_file(dir / "merged" / name), expected) << name;
  }
  // Both print the table that summary.txt holds.
  const std::string table = read_file(dir / "whole" / "summary.txt");
  EXPECT_EQ(whole.out.rfind(table, 0), 0U) << whole.out;
  EXPECT_EQ(merged.out.rfind(table, 0), 0U) << merged.out;
  EXPECT_NE(table.find("fastest (*): point 2 (/cluster/nodes=5)"), std::string::npos) << table;
}

TEST(Cli, MergeRefusesAnotherSweepsShardAMissingShardAndAMissingReport) {
  const auto dir = temp_dir();
  ASSERT_EQ(sweep_default(dir / "a", {"--shard", "0/2", "--set", "/run/seed=1"}).exit_code, 0);
  ASSERT_EQ(sweep_default(dir / "b", {"--shard", "1/2", "--set", "/run/seed=2"}).exit_code, 0);
  ASSERT_EQ(sweep_default(dir / "c", {"--shard", "1/2", "--set", "/run/seed=1"}).exit_code, 0);
  const std::string out = (dir / "merged").string();
  expect_input_error(run_cli({"merge", (dir / "a").string(), (dir / "b").string(), "--out", out}),
                     (dir / "b" / "sweep-shard-1-of-2.json").string() + ": /set: expected --set [\"/run/seed=1\"]");
  expect_input_error(run_cli({"merge", (dir / "a").string(), "--out", out}),
                     (dir / "a" / "sweep-shard-0-of-2.json").string() +
                         ": /shards: expected 2 shards, but no folder given holds sweep-shard-1-of-2.json");
  expect_input_error(run_cli({"merge", (dir / "a").string(), (dir / "a").string(), "--out", out}), "given twice");
  std::filesystem::remove(dir / "c" / "point-0001.report.json");
  expect_input_error(run_cli({"merge", (dir / "a").string(), (dir / "c").string(), "--out", out}),
                     (dir / "c" / "point-0001.report.json").string() +
                         ": missing; expected the report of sweep point 1");
  EXPECT_FALSE(std::filesystem::exists(dir / "merged")) << "a refused merge writes nothing";
}

TEST(Cli, MachineReadableProgressAndErrors) {
  // --progress=json: one JSON line per update; --error-format=json: the error as one JSON line with its pointer.
  const CliResult ok = run_cli({"run", scenario_path("seed-1-skewed-partitions"), "--no-files", "--progress=json"});
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  std::istringstream lines(ok.err);
  std::optional<StreamEvent> last;
  for (std::string line; std::getline(lines, line);)
    if (const auto e = parse_stream_line(line); e && e->kind == StreamEvent::Kind::Progress) {
      EXPECT_LE(e->done, e->total) << line;
      last = e;
    }
  ASSERT_TRUE(last) << ok.err;
  EXPECT_EQ(last->done, last->total) << "the stream ends with the run complete";
  const CliResult bad =
      run_cli({"validate", scenario_path("default"), "--set", "/cluster/nodes=0", "--error-format=json"});
  ASSERT_EQ(bad.exit_code, 2) << bad.err;
  const auto e = parse_stream_line(bad.err.substr(0, bad.err.find('\n')));
  ASSERT_TRUE(e) << bad.err;
  EXPECT_EQ(e->kind, StreamEvent::Kind::Error);
  EXPECT_EQ(e->exit_code, 2);
  EXPECT_EQ(e->pointer, "/cluster/nodes");
  EXPECT_NE(e->message.find("/cluster/nodes: expected an integer"), std::string::npos) << e->message;
  const CliResult sweep = run_cli({"sweep", scenario_path("default"), "--vary", "/cluster/nodes=1,2", "--progress=json",
                                   "--out", (temp_dir() / "s").string()});
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  EXPECT_NE(sweep.err.find(sweep_progress_line(2, 2)), std::string::npos) << sweep.err;
}

TEST(Cli, ExpectationsThatFailExitWithFiveAndNameTheFigure) {
  const std::string scenario = scenario_path("default");
  const CliResult held = run_cli({"run", scenario, "--no-files", "--set", R"(/expect={"/verdict":"simulated"})"});
  EXPECT_EQ(held.exit_code, 0) << held.err;
  EXPECT_NE(held.err.find("partsim: 1 expectation(s) hold"), std::string::npos) << held.err;
  const CliResult broken =
      run_cli({"run", scenario, "--no-files", "--set", R"(/expect={"/summary/makespan_s":{"max":1e-9}})"});
  EXPECT_EQ(broken.exit_code, kExitExpectationFailed) << broken.err;
  EXPECT_NE(broken.err.find("partsim: expectation failed: " + scenario +
                            ": /expect: /summary/makespan_s: expected at most 1e-09, got "),
            std::string::npos)
      << broken.err;
  // --no-expect (what sweeps, validation and the GUI pass) skips them; a sweep's points do not fail on them.
  EXPECT_EQ(run_cli({"run", scenario, "--no-files", "--no-expect", "--set",
                     R"(/expect={"/summary/makespan_s":{"max":1e-9}})"})
                .exit_code,
            0);
  EXPECT_EQ(run_cli({"sweep", scenario, "--set", R"(/expect={"/summary/makespan_s":{"max":1e-9}})", "--vary",
                     "/run/seed=1,2", "--out", (temp_dir() / "e").string()})
                .exit_code,
            0);
}

TEST(Cli, SweepPointsThatFailAtRunTimeAreErrorEventsWithTheirPointer) {
  // Valid when planned, stopped at run time: a periodic speed profile outlasts /run/max_events.
  const CliResult r =
      run_cli({"sweep", scenario_path("allreduce-ring-vs-hierarchical"), "--set", "/strategy/fidelity=analytic",
               "--set", R"(/cluster/speed_changes=[{"node":0,"points":[[0,1],[1e-6,0.5]],"period":2e-6}])", "--set",
               "/workload/bytes=8GiB", "--vary", "/run/max_events=100000,100001", "--error-format=json", "--out",
               (temp_dir() / "s").string()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  std::istringstream lines(r.err);
  int errors = 0;
  for (std::string line; std::getline(lines, line);) {
    const auto e = parse_stream_line(line);
    if (!e || e->kind != StreamEvent::Kind::Error) continue;
    ++errors;
    EXPECT_EQ(e->exit_code, 1);
    EXPECT_EQ(e->pointer, "/run/max_events");
    EXPECT_NE(e->message.find(fmt::format("sweep point {} (", errors - 1)), std::string::npos) << e->message;
    EXPECT_NE(e->message.find("failed with exit code 2"), std::string::npos) << e->message;
  }
  EXPECT_EQ(errors, 2) << r.err;
  const CliResult text =
      run_cli({"sweep", scenario_path("allreduce-ring-vs-hierarchical"), "--set", "/strategy/fidelity=analytic",
               "--set", R"(/cluster/speed_changes=[{"node":0,"points":[[0,1],[1e-6,0.5]],"period":2e-6}])", "--set",
               "/workload/bytes=8GiB", "--vary", "/run/max_events=100000", "--out", (temp_dir() / "t").string()});
  EXPECT_EQ(text.exit_code, 1);
  EXPECT_NE(text.err.find("partsim: error: sweep point 0 (100000) failed with exit code 2: "), std::string::npos)
      << text.err;
  EXPECT_NE(text.err.find("/run/max_events"), std::string::npos) << text.err;
}

} // namespace
} // namespace partsim::test
