// Failures and checkpoints: the replay against Young/Daly's first-order model and Daly's closed form over many seeds,
// the best simulated interval against sqrt(2 C M), hand-timed cases, determinism, the checkpoint size of a sharded
// plan, the scenario's /reliability and its errors, and the report with and without the section.
#include "partsim/common/exit_codes.hpp"
#include "partsim/input/scenario.hpp"
#include "partsim/model/reliability_replay.hpp"
#include "partsim/plan/strategy.hpp"
#include "partsim/report/reliability.hpp"

#include "test_support.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

namespace partsim {
namespace {

using nlohmann::json;

/** One GPU-like unit of MTBF `mtbf` s, sync checkpoints of `c` s, `r` s per failure, iterations of 1 s. */
ReplayInput one_unit(double mtbf, double c, double r, std::int64_t every, std::int64_t iterations) {
  ReplayInput in;
  in.iteration_time = 1.0;
  in.iterations = iterations;
  in.checkpoint_every = every;
  in.checkpoint_block = c;
  in.recovery = r;
  in.components = {ComponentFailures{FailureComponent::Gpu, 1, mtbf}};
  return in;
}

double overhead(const ReplayResult& r) {
  return r.total / r.useful - 1.0;
}

TEST(ReliabilityReplay, MeanOverheadMatchesYoungDalyOverManySeeds) {
  // M = 20,000 s, C = 100 s, R = 200 s: tau* = sqrt(2 C M) = 2,000 s; about 100 failures per run, 200 seeds.
  const double m = 20'000.0;
  const double c = 100.0;
  const double r = 200.0;
  const double tau = young_daly_interval(c, m);
  ASSERT_DOUBLE_EQ(tau, 2000.0);
  ReplayInput in = one_unit(m, c, r, 2000, 2'000'000);
  double sum = 0.0;
  double lost = 0.0;
  std::int64_t failures = 0;
  constexpr int kSeeds = 200;
  for (int seed = 1; seed <= kSeeds; ++seed) {
    in.seed = static_cast<std::uint64_t>(seed);
    const ReplayResult out = replay_reliability(in);
    sum += overhead(out);
    lost += out.lost;
    failures += out.failures;
  }
  const double simulated = sum / kSeeds;
  const double first_order = first_order_overhead(tau, c, r, m);
  const double daly = daly_expected_time(2'000'000.0, tau, c, r, m) / 2'000'000.0 - 1.0;
  EXPECT_NEAR(simulated / first_order, 1.0, 0.10) << simulated << " against " << first_order;
  EXPECT_NEAR(simulated / daly, 1.0, 0.03) << simulated << " against Daly's " << daly;
  // Lost work per failure: about half an interval plus checkpoint (first order: (tau + C) / 2).
  EXPECT_NEAR(lost / static_cast<double>(failures) / ((tau + c) / 2.0), 1.0, 0.10);
}

TEST(ReliabilityReplay, BestSimulatedIntervalIsYoungDalys) {
  // A scan of intervals from 0.5 to 2 x tau* on the same failure draws (common random numbers): the mean overhead is
  // smallest within 10% of sqrt(2 C M).
  const double m = 20'000.0;
  const double c = 100.0;
  const double r = 200.0;
  const double tau = young_daly_interval(c, m);
  double best = 0.0;
  double best_overhead = 1e300;
  for (double f = 0.5; f <= 2.0 + 1e-9; f += 0.05) {
    const auto every = static_cast<std::int64_t>(std::llround(f * tau));
    ReplayInput in = one_unit(m, c, r, every, 20'000'000);
    double sum = 0.0;
    for (int seed = 1; seed <= 20; ++seed) {
      in.seed = static_cast<std::uint64_t>(seed);
      sum += overhead(replay_reliability(in));
    }
    if (sum < best_overhead) {
      best_overhead = sum;
      best = static_cast<double>(every);
    }
  }
  EXPECT_NEAR(best / tau, 1.0, 0.10) << "best interval " << best << " s against " << tau << " s";
}

TEST(ReliabilityReplay, TimeAddsUpAndIsDeterministic) {
  ReplayInput in = one_unit(5'000.0, 30.0, 100.0, 500, 100'000);
  in.seed = 7;
  in.max_events = 1'000'000;
  const ReplayResult a = replay_reliability(in);
  const ReplayResult b = replay_reliability(in);
  EXPECT_GT(a.failures, 10);
  EXPECT_NEAR(a.total, a.useful + a.lost + a.checkpoint + a.recovery, 1e-9 * a.total);
  EXPECT_EQ(a.total, b.total);
  EXPECT_EQ(a.failures, b.failures);
  EXPECT_EQ(a.events.size(), b.events.size());
  in.seed = 8;
  EXPECT_NE(replay_reliability(in).total, a.total);
}

TEST(ReliabilityReplay, WeibullOfShapeOneIsTheExponential) {
  ReplayInput in = one_unit(5'000.0, 30.0, 100.0, 500, 100'000);
  const ReplayResult exponential = replay_reliability(in);
  in.distribution = FailureDistribution::Weibull;
  in.weibull_shape = 1.0;
  const ReplayResult weibull = replay_reliability(in);
  EXPECT_EQ(weibull.failures, exponential.failures);
  EXPECT_NEAR(weibull.total, exponential.total, 1e-9 * exponential.total);
}

TEST(ReliabilityReplay, WeibullFailuresComeAtTheMtbfRateInTheLongRun) {
  // Renewal theorem: failures / time -> units / MTBF whatever the shape; nothing else takes time here.
  for (const double shape : {0.7, 2.0}) {
    ReplayInput in = one_unit(1'000.0, 0.0, 0.0, 1'000'000, 10'000'000);
    in.components[0].units = 10;
    in.distribution = FailureDistribution::Weibull;
    in.weibull_shape = shape;
    in.iteration_time = 0.1; // a failure loses at most the work since the start: keep it short
    in.checkpoint_every = 1;
    const ReplayResult out = replay_reliability(in);
    EXPECT_NEAR(static_cast<double>(out.failures) / (out.total / 100.0), 1.0, 0.05) << "shape " << shape;
  }
}

/** Iterations of 1 s, a sync checkpoint of 1 s every 10, 5 s to recover, one failure at 25.5 s. */
ReplayInput listed_failure() {
  ReplayInput in;
  in.iteration_time = 1.0;
  in.iterations = 100;
  in.checkpoint_every = 10;
  in.checkpoint_block = 1.0;
  in.recovery = 5.0;
  in.failure_times = {25.5};
  in.max_events = 100;
  return in;
}

TEST(ReliabilityReplay, ListedFailureByHand) {
  // listed_failure(): training from 22 s after the checkpoint of iteration 20, the failure at 25.5 s loses 3.5 s,
  // then 80 iterations and 7 checkpoints from 30.5 s.
  const ReplayResult r = replay_reliability(listed_failure());
  EXPECT_DOUBLE_EQ(r.total, 117.5);
  EXPECT_DOUBLE_EQ(r.lost, 3.5);
  EXPECT_DOUBLE_EQ(r.recovery, 5.0);
  EXPECT_DOUBLE_EQ(r.checkpoint, 9.0);
  EXPECT_EQ(r.checkpoints, 9);
  EXPECT_EQ(r.failures_by_component.at(FailureComponent::Listed), 1);
}

TEST(ReliabilityReplay, AsyncCheckpointIsDurableOnlyWhenWritten) {
  // Copies of 1 s, writes of 5 s behind training, a checkpoint every 10 iterations: iteration 20's checkpoint is
  // copied from 21 s to 22 s and written until 27 s, so the failure at 25 s rolls the run back to iteration 10
  // (3 s + 10 iterations lost); then 90 iterations and 8 checkpoints from 30 s.
  ReplayInput in;
  in.iteration_time = 1.0;
  in.iterations = 100;
  in.checkpoint_every = 10;
  in.checkpoint_block = 1.0;
  in.checkpoint_write = 5.0;
  in.recovery = 5.0;
  in.failure_times = {25.0};
  const ReplayResult r = replay_reliability(in);
  EXPECT_DOUBLE_EQ(r.lost, 13.0);
  EXPECT_EQ(r.checkpoints_lost, 1);
  EXPECT_EQ(r.checkpoints, 10);
  EXPECT_DOUBLE_EQ(r.total, 128.0);
  // A write longer than the interval makes the next copy wait for it: 20 s writes, 10 s between copies.
  in.failure_times.clear();
  in.checkpoint_write = 20.0;
  const ReplayResult slow = replay_reliability(in);
  EXPECT_DOUBLE_EQ(slow.checkpoint, 1.0 + 8 * 11.0);
}

TEST(ReliabilityReplay, NoFailuresCostOnlyTheCheckpoints) {
  ReplayInput in;
  in.iteration_time = 2.0;
  in.iterations = 1000;
  in.checkpoint_every = 100;
  in.checkpoint_block = 3.0;
  const ReplayResult r = replay_reliability(in);
  EXPECT_DOUBLE_EQ(r.total, 2000.0 + 9 * 3.0);
  EXPECT_EQ(r.failures, 0);
}

/** ListedFailureByHand's job (100 iterations of 1 s, a checkpoint of 1 s every 10, 5 s of recovery, one failure at
 * 25.5 s), elastic over `replicas` replicas: the failed one is repaired in 20 s and rejoins after a 2 s pause. */
ReplayInput elastic_listed_failure(int replicas) {
  ReplayInput in = listed_failure();
  in.max_events = 0;
  in.elastic = true;
  in.replicas = replicas;
  in.replicas_hit.fill(1);
  in.repair = 20.0;
  in.rejoin = 2.0;
  return in;
}

TEST(ReliabilityReplay, ElasticGoesOnWithFewerReplicasByHand) {
  // As ListedFailureByHand, but elastic on 4 replicas: after the failure at 25.5 s and 5 s of recovery the job trains
  // on 3 replicas (4/3 s per iteration) until the failed one is repaired at 45.5 s, pauses 2 s to take it back, and
  // goes on at full speed: 10.5 iterations ran slow (3.5 s degraded).
  const ReplayResult r = replay_reliability(elastic_listed_failure(4));
  EXPECT_NEAR(r.total, 123.0, 1e-9);
  EXPECT_NEAR(r.degraded, 3.5, 1e-9);
  EXPECT_NEAR(r.recovery, 7.0, 1e-9);
  EXPECT_DOUBLE_EQ(r.lost, 3.5);
  EXPECT_NEAR(r.total, r.useful + r.degraded + r.lost + r.checkpoint + r.recovery, 1e-9);
}

TEST(ReliabilityReplay, ElasticBelowTheMinimumWaitsForTheRepair) {
  // One replica of one: elastic cannot go on, so it waits for the repair (20 s) and the rejoin pause (2 s), the
  // longer of that and the 5 s recovery.
  const ReplayResult r = replay_reliability(elastic_listed_failure(1));
  EXPECT_NEAR(r.recovery, 22.0, 1e-9);
  EXPECT_NEAR(r.total, 117.5 - 5.0 + 22.0, 1e-9);
  EXPECT_DOUBLE_EQ(r.degraded, 0.0);
}

// --- the scenario --------------------------------------------------------------------------------------------

/** A small model-training scenario: GPT-2-sized, tensor 2 x pipeline 2 x data 2 on 2 nodes of 4. */
json training_scenario() {
  json doc = test::base_scenario(2, 4);
  doc["workload"] = {{"kind", "model_training"}, {"model", "gpt3-1.3b"}, {"sequence_length", 1024},
                     {"global_batch", 16},       {"micro_batch", 2},     {"data_type", "bf16"},
                     {"optimizer", "adam"},      {"iterations", 1}};
  doc["strategy"] = {{"kind", "model_parallel"}, {"data", 2}, {"tensor", 2}, {"pipeline", 2}, {"zero", 1}};
  return doc;
}

TEST(ReliabilityScenario, DefaultsAndComponentCounts) {
  json doc = training_scenario();
  doc["reliability"] = {{"failures", {{"gpu_mtbf_hours", 1000}, {"host_mtbf_hours", 2000}}}};
  const Scenario s = test::parse(doc);
  ASSERT_TRUE(s.reliability);
  const ReliabilitySpec& r = *s.reliability;
  ASSERT_EQ(r.components.size(), 2u);
  EXPECT_EQ(r.components[0].units, 8);
  EXPECT_DOUBLE_EQ(r.components[0].mtbf, 1000 * 3600.0);
  EXPECT_EQ(r.components[1].component, FailureComponent::Host);
  EXPECT_EQ(r.components[1].units, 2);
  EXPECT_DOUBLE_EQ(job_mtbf(r.components), 1.0 / (8 / 3.6e6 + 2 / 7.2e6));
  EXPECT_EQ(r.policy, RecoveryPolicy::Restart);
  EXPECT_EQ(r.mode, CheckpointMode::Sync);
  EXPECT_FALSE(r.interval);
  EXPECT_EQ(r.defaulted, (std::vector<std::string>{
                             "/reliability/recovery/detection_time", "/reliability/recovery/restart_time",
                             "/reliability/recovery/repair_time", "/reliability/checkpoint/storage_bandwidth"}));
  EXPECT_FALSE(test::parse(training_scenario()).reliability);
}

TEST(ReliabilityScenario, BadInputNamesFileAndPointer) {
  const std::vector<std::pair<json, std::string>> cases = {
      {{{"failures", {{"gpu_mtbf_hours", -1}}}}, "/reliability/failures/gpu_mtbf_hours"},
      {{{"failures", {{"weibull_shape", 0.5}}}}, "/reliability/failures/weibull_shape"},
      {{{"failures", {{"times", {"10s", "5s"}}}}}, "/reliability/failures/times/1"},
      {{{"failures", {{"times", {10}}}}}, "/reliability/checkpoint/interval"},
      {{{"recovery", {{"policy", "pray"}}}}, "/reliability/recovery/policy"},
      {{{"checkpoint", {{"interval", "soon"}}}}, "/reliability/checkpoint/interval"},
      {{{"checkpoint", {{"interval", "3600s"}, {"interval_iterations", 5}}}},
       "/reliability/checkpoint/interval_iterations"},
      {{{"checkpoint", {{"storage_bandwidth", 0}}}}, "/reliability/checkpoint/storage_bandwidth"},
      {{{"checkpoint", {{"mod", "async"}}}}, "/reliability/checkpoint/mod"},
      {{{"iteration", 5}}, "/reliability/iteration"},
      {{{"inject", {{"at", "1ms"}}}}, "/reliability/inject"},
      {{{"inject", {{"gpu", 1}, {"node", 0}, {"at", "1ms"}}}}, "/reliability/inject"},
      {{{"inject", {{"gpu", 1000}, {"at", "1ms"}}}}, "/reliability/inject/gpu"},
      {{{"inject", {{"node", 1000}, {"at", "1ms"}}}}, "/reliability/inject/node"},
      {{{"inject", {{"gpu", 1}, {"at", 0}}}}, "/reliability/inject/at"},
      {{{"inject", {{"gpu", 1}}}}, "/reliability/inject/at"},
      {{{"inject", {{"nic", 1}, {"gpu", 1}, {"at", "1ms"}}}}, "/reliability/inject"},
      {{{"inject", {{"nic", 100000}, {"at", "1ms"}}}}, "/reliability/inject/nic"},
      {{{"inject", {{"switch", 2}, {"at", "1ms"}}}}, "/reliability/inject/switch"},
      {{{"inject", {{"switch", 0}, {"nic", 1}, {"at", "1ms"}}}}, "/reliability/inject"},
  };
  for (const auto& [section, pointer] : cases) {
    json doc = training_scenario();
    doc["reliability"] = section;
    const InputError e = test::input_error([&] { test::parse(doc, "scen.json"); });
    EXPECT_EQ(e.source(), "scen.json") << section.dump();
    EXPECT_EQ(e.pointer(), pointer) << section.dump() << ": " << e.what();
  }
  json doc = test::base_scenario();
  doc["reliability"] = json::object();
  EXPECT_EQ(test::input_error([&] { test::parse(doc); }).pointer(), "/reliability");
}

TEST(ReliabilityScenario, BadInputExitsWithTwoAndOneLine) {
  const test::CliResult run =
      test::run_cli({"run", (test::source_dir() / "scenarios/gpt3-1.3b-dp-8xa100.json").string(), "--set",
                     "/reliability={\"checkpoint\":{\"mode\":\"later\"}}", "--no-files", "--no-progress"});
  EXPECT_EQ(run.exit_code, kExitInputError);
  EXPECT_NE(run.err.find("/reliability/checkpoint/mode"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("gpt3-1.3b-dp-8xa100.json"), std::string::npos) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
}

TEST(ReliabilityTrace, ItCanBeWrittenWithoutTheIterationsTrace) {
  // `reliability_trace` alone writes the replay's timeline (small) without trace.json (large for a big split: the
  // GUI asks for it so); `trace` writes both; without a /reliability section there is nothing to write.
  const std::string scenario = (test::source_dir() / "scenarios/gpt3-1.3b-dp-8xa100.json").string();
  const std::string section = R"(/reliability={"iterations":1000,"failures":{"gpu_mtbf_hours":1000}})";
  auto files = [&](const std::string& outputs, bool reliability) {
    const std::filesystem::path dir = test::temp_dir() / "out";
    std::vector<std::string> args{
        "run", scenario, "--out", dir.string(), "--no-progress", "--set", "/run/outputs=" + outputs};
    if (reliability) args.insert(args.end(), {"--set", section});
    const test::CliResult r = test::run_cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::set<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) names.insert(entry.path().filename().string());
    return names;
  };
  EXPECT_EQ(files(R"(["report_json","reliability_trace"])", true),
            (std::set<std::string>{"report.json", "reliability_trace.json"}));
  EXPECT_EQ(files(R"(["trace"])", true), (std::set<std::string>{"trace.json", "reliability_trace.json"}));
  EXPECT_EQ(files(R"(["report_json","reliability_trace"])", false), (std::set<std::string>{"report.json"}));
}

TEST(ReliabilityTrace, TheTimelineIsTheReplaysEvents) {
  // ListedFailureByHand's run as reliability_trace.json: training, checkpoints and the recovery add up to its 117.5 s
  // (103.5 s of training, 3.5 of them lost; nine 1 s checkpoints; 5 s of recovery), the failure an instant at 25.5 s
  // that rolled back to iteration 20, and nothing overlaps on a track.
  ReliabilityFigures f;
  f.spec.mode = CheckpointMode::Sync;
  f.replay = replay_reliability(listed_failure());
  const json trace = json::parse(reliability_chrome_trace("hand", f));
  std::map<std::string, double> seconds;
  std::map<std::string, int> count;
  std::map<int, double> track_end;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] == "i") {
      EXPECT_EQ(e["name"], "listed failure");
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 25.5e6);
      EXPECT_EQ(e["args"]["rolled_back_to_iteration"], 20);
      ++count["failure"];
    }
    if (e["ph"] != "X") continue;
    const std::string name = e["name"];
    seconds[name] += e["dur"].get<double>() / 1e6;
    ++count[name];
    const int tid = e["tid"];
    EXPECT_GE(e["ts"].get<double>() + 1e-6, track_end[tid]) << name;
    track_end[tid] = e["ts"].get<double>() + e["dur"].get<double>();
  }
  EXPECT_EQ(count["failure"], 1);
  EXPECT_NEAR(seconds["training"], 103.5, 1e-9);
  EXPECT_NEAR(seconds["checkpoint"], 9.0, 1e-9);
  EXPECT_EQ(count["checkpoint"], 9);
  EXPECT_NEAR(seconds["recovery"], 5.0, 1e-9);
  EXPECT_NEAR(seconds["training"] + seconds["checkpoint"] + seconds["recovery"], f.replay.total, 1e-9);
}

TEST(ReliabilityReport, AbsentSectionLeavesTheReportAsItWasAndNoFailuresCostNothing) {
  const std::string scenario = "gpt3-1.3b-dp-8xa100.json";
  json plain = test::run_scenario_json(scenario, {});
  json with = test::run_scenario_json(scenario, {"/reliability={\"iterations\":1000}"});
  EXPECT_FALSE(plain.contains("reliability"));
  ASSERT_TRUE(with.contains("reliability"));
  const json r = with["reliability"];
  // Nothing fails and an auto interval never checkpoints: the run takes iterations x the simulated iteration.
  EXPECT_EQ(r["failures"], 0);
  EXPECT_EQ(r["checkpoints"], 0);
  EXPECT_DOUBLE_EQ(r["goodput"].get<double>(), 1.0);
  const double iteration =
      plain["summary"]["makespan_s"].get<double>() / plain["scenario"]["input"]["workload"]["iterations"].get<double>();
  EXPECT_DOUBLE_EQ(r["iteration_time_s"].get<double>(), iteration);
  EXPECT_NEAR(r["time_to_finish_s"].get<double>(), 1000 * iteration, 1e-9 * r["time_to_finish_s"].get<double>());
  // Everything else is the plain run's, to the bit.
  with.erase("reliability");
  with["scenario"]["input"].erase("reliability");
  EXPECT_EQ(with.dump(), plain.dump());
}

TEST(ReliabilityReport, CheckpointSizeIsTheShardedModelAndOptimizerState) {
  // The shipped 405B run: tensor 8 x pipeline 16 x data 128, ZeRO-2 (optimizer states sharded over the replicas).
  // Bytes: bf16 weights (2 B) written once + fp32 master weights and two Adam moments (12 B) over all shards.
  const json r = test::run_scenario_json("llama3-405b-16384xh100.json",
                                         {"/reliability={\"iterations\":10,\"failures\":{\"gpu_mtbf_hours\":50000}}"});
  ASSERT_TRUE(r.contains("reliability"));
  const double bytes = r["reliability"]["checkpoint_bytes"].get<double>();
  EXPECT_NEAR(bytes / (14.0 * 405e9), 1.0, 0.03) << bytes;
  EXPECT_EQ(r["reliability"]["checkpoint_writers"], 16 * 8 * 128);
}

/** scenarios/llama3-70b-3d-64xh100.json (tensor 8 x pipeline 4 x data 2, ZeRO-1) with a /reliability section. */
Scenario llama70b_with_reliability() {
  std::ifstream in(test::source_dir() / "scenarios/llama3-70b-3d-64xh100.json");
  json doc = json::parse(in);
  doc["reliability"] = {{"iterations", 10}};
  return test::parse(doc);
}

TEST(ReliabilityReport, CheckpointWritersAreTheShardsOfTheSize) {
  // Llama-3 70B, tensor 8 x pipeline 4 x data 2 with ZeRO-1: every GPU writes its optimizer shard, those of replica 0
  // their parameters too; the parts add up to the checkpoint's size, one per GPU.
  const Scenario scenario = llama70b_with_reliability();
  const Plan plan = build_plan(scenario);
  const CheckpointSize size = checkpoint_size(scenario, plan);
  const std::vector<CheckpointWrite> writes = checkpoint_writes(scenario, plan);
  EXPECT_EQ(static_cast<std::int64_t>(writes.size()), size.writers);
  double sum = 0.0;
  std::set<int> gpus;
  double largest = 0.0;
  for (const CheckpointWrite& w : writes) {
    sum += w.bytes;
    gpus.insert(w.gpu);
    largest = std::max(largest, w.bytes);
  }
  EXPECT_NEAR(sum, size.bytes, 1e-9 * size.bytes);
  EXPECT_EQ(gpus.size(), writes.size());
  EXPECT_NEAR(largest, size.largest_writer_bytes, 1e-9 * largest);
}

TEST(ReliabilityReport, CheckpointWritesRunOnTheSimulatedNetwork) {
  // Each writer sends its part at once to the storage pool on the top switch (SimGrid, a child engine). Plain DDP:
  // rank 0 writes the whole state. A slow pool (1 GB/s) sets the time: the closed form and the path's latencies. A
  // fast one leaves rank 0's NIC: NDR's 400 Gb/s at the profile's efficiency (models/links/ib-ndr.json), as parsed.
  const auto write = [](const std::string& scenario, const std::string& bandwidth) {
    const json r = test::run_scenario_json(
        scenario, {R"(/reliability={"iterations":100,"checkpoint":{"storage_bandwidth":)" + bandwidth + "}}"});
    return r["reliability"];
  };
  const json slow = write("llama3-8b-dp-64xh200-fat-tree.json", "1e9");
  const double bytes = slow["checkpoint_bytes"].get<double>();
  EXPECT_EQ(slow["checkpoint_writers"], 1);
  EXPECT_DOUBLE_EQ(slow["checkpoint_write_closed_form_s"].get<double>(), bytes / 1e9);
  EXPECT_GT(slow["checkpoint_write_s"].get<double>(), bytes / 1e9);
  EXPECT_NEAR(slow["checkpoint_write_s"].get<double>(), bytes / 1e9, 1e-4);
  EXPECT_DOUBLE_EQ(slow["checkpoint_block_s"].get<double>(), slow["checkpoint_write_s"].get<double>()); // sync
  const json fast = write("llama3-8b-dp-64xh200-fat-tree.json", "1e15");
  const Scenario scenario = llama70b_with_reliability(); // the same NDR NICs
  const double nic = scenario.cluster.network.nic.bandwidth;
  EXPECT_NEAR(nic, 400e9 / 8 * 0.97, 1e3);
  EXPECT_NEAR(fast["checkpoint_write_s"].get<double>(), bytes / nic, 1e-4 * bytes / nic);
  // The 3D split: 64 writers, one per NIC; the largest part sets the time.
  const json split = write("llama3-70b-3d-64xh100.json", "1e15");
  EXPECT_EQ(split["checkpoint_writers"], 64);
  const Plan plan = build_plan(scenario);
  double largest = 0.0;
  for (const CheckpointWrite& w : checkpoint_writes(scenario, plan)) largest = std::max(largest, w.bytes);
  EXPECT_NEAR(split["checkpoint_write_s"].get<double>(), largest / nic, 1e-4 * largest / nic);
}

TEST(ReliabilityReport, ElasticOnTheSeedNineRunLosesLessThanRestart) {
  // seed-9 scenario: elastic (no wait for a spare or a repair, slower on fewer replicas) against waiting for repairs.
  const json elastic =
      test::run_scenario_json("seed-9-failures-checkpointing.json", {"/reliability/recovery/policy=\"elastic\""});
  const json restart =
      test::run_scenario_json("seed-9-failures-checkpointing.json", {"/reliability/recovery/policy=\"restart\""});
  ASSERT_TRUE(elastic.contains("reliability") && restart.contains("reliability"));
  EXPECT_GT(elastic["reliability"]["degraded_s"].get<double>(), 0.0);
  EXPECT_FALSE(restart["reliability"].contains("degraded_s"));
  EXPECT_GT(elastic["reliability"]["goodput"].get<double>(), restart["reliability"]["goodput"].get<double>());
}

/** Llama-3 8B data-parallel on 64 H200s (8 nodes), one GPU or node failing `at` into the iteration. */
json injected_run(const std::string& inject, const std::vector<std::string>& more = {}) {
  std::vector<std::string> sets{"/reliability={\"iterations\":10,\"inject\":" + inject + "}",
                                "/strategy/gradient_sync/fidelity=\"flows\""};
  sets.insert(sets.end(), more.begin(), more.end());
  return test::run_scenario_json("llama3-8b-dp-64xh200-fat-tree.json", sets);
}

TEST(InjectedFailure, TurnsTheGpuOffInSimGridAndTheJobStopsAtDetection) {
  // GPU 5 fails while the gradient all-reduces run after the backward pass (overlap off: the ranks' own actors run
  // them; the 34 buckets take the ~98 ms before the optimizer step, which ends the iteration). Its rank's actor ends
  // with its host; the ranks whose flows ran to or from it see them fail (SimGrid's network failure), the others wait
  // on a peer that will never come until the detection time stops the job. Every rank is one of failed, noticed,
  // hung or finished; no deadlock is reported; the clean iteration's report is the run's without inject.
  const std::vector<std::string> no_overlap{"/strategy/gradient_sync/overlap=false"};
  const json plain = test::run_scenario_json(
      "llama3-8b-dp-64xh200-fat-tree.json",
      {"/reliability={\"iterations\":10}", "/strategy/gradient_sync/fidelity=\"flows\"", no_overlap[0]});
  const double makespan = plain["summary"]["makespan_s"].get<double>();
  const double at = makespan - 0.085; // inside the all-reduces
  const std::vector<std::string> sets{"/reliability/recovery={\"detection_time\":30}", no_overlap[0]};
  json run = injected_run(fmt::format(R"({{"gpu":5,"at":{}}})", at), sets);
  ASSERT_TRUE(run["reliability"].contains("injected")) << run.dump().substr(0, 400);
  const json x = run["reliability"]["injected"];
  EXPECT_TRUE(x["fired"].get<bool>());
  EXPECT_EQ(x["what"], "GPU 5");
  EXPECT_DOUBLE_EQ(x["at_s"].get<double>(), at);
  EXPECT_DOUBLE_EQ(x["stopped_at_s"].get<double>(), at + 30);
  EXPECT_EQ(x["failed_ranks"], json::array({5}));
  EXPECT_GE(x["noticed_ranks"].get<int>(), 1);
  EXPECT_EQ(x["failed_ranks"].size() + x["noticed_ranks"].get<std::size_t>() + x["hung_ranks"].get<std::size_t>() +
                x["finished_ranks"].get<std::size_t>(),
            64u);
  EXPECT_EQ(x["finished_ranks"], 0); // the gradient all-reduce joins every rank: none can finish without GPU 5
  std::int64_t running = 0;
  for (const json& a : x["running_at_failure"]) running += a["ranks"].get<std::int64_t>();
  EXPECT_EQ(running, 64);
  EXPECT_EQ(x["running_at_failure"][0]["activity"], "all_reduce (data, 64 ranks)");
  EXPECT_EQ(x["noticed"][0]["step"], "all_reduce (data, 64 ranks)");
  for (const json& n : x["noticed"]) {
    EXPECT_GE(n["at_s"].get<double>(), at);
    EXPECT_LE(n["at_s"].get<double>(), at + 30);
  }
  EXPECT_DOUBLE_EQ(x["lost_gpu_seconds"].get<double>(), 64 * (at + 30));
  const json& r = run["reliability"];
  EXPECT_DOUBLE_EQ(x["training_again_at_s"].get<double>(), at + r["recovery_per_failure_s"].get<double>());
  EXPECT_DOUBLE_EQ(x["iteration_done_at_s"].get<double>(),
                   x["training_again_at_s"].get<double>() + r["iteration_time_s"].get<double>());
  // The clean iteration is the plain run's, to the bit; and the same seed gives the same outcome.
  EXPECT_EQ(run["summary"].dump(), plain["summary"].dump());
  EXPECT_EQ(run["ranks"].dump(), plain["ranks"].dump());
  EXPECT_EQ(injected_run(fmt::format(R"({{"gpu":5,"at":{}}})", at), sets).dump(), run.dump());
}

/** The 8B DDP run at steps without overlap, `what` ("\"nic\":9") failing `at` into the iteration: no GPU dies, so no
 * rank fails; the transfers over the failed links fail, which some ranks notice; every rank is noticed, hung or
 * finished. Returns reliability/injected. */
json network_failure_at_steps(const std::string& what, double at, std::vector<std::string> sets = {}) {
  sets.push_back(fmt::format(R"(/reliability={{"iterations":10,"inject":{{{},"at":{}}}}})", what, at));
  sets.push_back("/strategy/gradient_sync/overlap=false");
  sets.push_back("/strategy/gradient_sync/fidelity=\"steps\"");
  const json run = test::run_scenario_json("llama3-8b-dp-64xh200-fat-tree.json", sets);
  const json x = run["reliability"]["injected"];
  EXPECT_TRUE(x["fired"].get<bool>());
  EXPECT_TRUE(x["failed_ranks"].empty());
  EXPECT_GE(x["noticed_ranks"].get<int>(), 1);
  EXPECT_EQ(x["noticed_ranks"].get<std::size_t>() + x["hung_ranks"].get<std::size_t>() +
                x["finished_ranks"].get<std::size_t>(),
            64u);
  return x;
}

TEST(InjectedFailure, AfterTheIterationNothingFailsAndANodeTakesItsEightGpus) {
  const json late = injected_run(R"({"gpu":5,"at":1000})");
  EXPECT_FALSE(late["reliability"]["injected"]["fired"].get<bool>());
  EXPECT_EQ(late["reliability"]["injected"]["finished_ranks"], 64);
  const json node = injected_run(R"({"node":1,"at":0.01})");
  const json x = node["reliability"]["injected"];
  EXPECT_TRUE(x["fired"].get<bool>());
  EXPECT_EQ(x["what"], "node 1 (GPUs 8 to 15)");
  EXPECT_EQ(x["failed_ranks"], json::array({8, 9, 10, 11, 12, 13, 14, 15}));
  // Every message simulated (steps), during the all-reduces: a message to or from GPU 5 fails under its sender or
  // receiver.
  const json plain =
      test::run_scenario_json("llama3-8b-dp-64xh200-fat-tree.json",
                              {"/strategy/gradient_sync/overlap=false", "/strategy/gradient_sync/fidelity=\"steps\""});
  const double at = plain["summary"]["makespan_s"].get<double>() - 0.085;
  const json steps =
      test::run_scenario_json("llama3-8b-dp-64xh200-fat-tree.json",
                              {fmt::format(R"(/reliability={{"iterations":10,"inject":{{"gpu":5,"at":{}}}}})", at),
                               "/strategy/gradient_sync/overlap=false", "/strategy/gradient_sync/fidelity=\"steps\""});
  const json s = steps["reliability"]["injected"];
  EXPECT_TRUE(s["fired"].get<bool>());
  EXPECT_GE(s["noticed_ranks"].get<int>(), 1);
  EXPECT_EQ(s["noticed"][0]["step"], "all_reduce (data, 64 ranks)");
  // A NIC (node 1's second: its link to the switch, both ways) instead: no rank dies, the transfers over it fail.
  const json n = network_failure_at_steps(R"("nic":9)", at);
  EXPECT_EQ(n["what"], "NIC 1 of node 1");
}

TEST(InjectedFailure, ALeafSwitchTakesItsNodesNicsAndUplink) {
  // Leaf switch 1 of the fat tree (nodes 4 to 7, 4 per leaf): the links of its nodes' 32 NICs and its uplink are
  // turned off during the all-reduces at steps; no GPU dies, the transfers through the switch fail.
  const json plain =
      test::run_scenario_json("llama3-8b-dp-64xh200-fat-tree.json",
                              {"/strategy/gradient_sync/overlap=false", "/strategy/gradient_sync/fidelity=\"steps\""});
  const json x = network_failure_at_steps(R"("switch":1)", plain["summary"]["makespan_s"].get<double>() - 0.085);
  EXPECT_EQ(x["what"], "leaf switch 1 (nodes 4 to 7)");
  EXPECT_EQ(x["noticed"][0]["step"], "all_reduce (data, 64 ranks)");
}

TEST(InjectedFailure, APodOrTheCoreTakesTheUplinksBelowIt) {
  // The same fat tree's core (2 leaves of 4 nodes): both leaf uplinks off, the all-reduce's ring crosses between the
  // leaves and fails there; nodes under one leaf still reach each other. With 3 levels (a pod per leaf), pod 1: its
  // leaf's uplink and its own.
  const json plain =
      test::run_scenario_json("llama3-8b-dp-64xh200-fat-tree.json",
                              {"/strategy/gradient_sync/overlap=false", "/strategy/gradient_sync/fidelity=\"steps\""});
  const double at = plain["summary"]["makespan_s"].get<double>() - 0.085;
  const json core = network_failure_at_steps(R"("switch":0,"level":"top")", at);
  EXPECT_EQ(core["what"], "the core switch (the uplinks of the 2 leaves)");
  const std::string three_levels =
      R"(/cluster/network/fat_tree={"levels":3,"nodes_per_leaf":4,"leaves_per_pod":1,"leaf_oversubscription":2,)"
      R"("switch_profile":"ib-ndr-switch"})";
  const json pod = network_failure_at_steps(R"("switch":1,"level":"pod")", at, {three_levels});
  EXPECT_EQ(pod["what"], "pod switch 1 (leaves 1 to 1, nodes 4 to 7)");
  // Levels the network does not have, a level without a switch, an index past the level's: exit 2 at the key.
  const auto refused = [](const std::vector<std::string>& sets, const std::string& key) {
    std::vector<std::string> args{"validate",
                                  (test::source_dir() / "scenarios/llama3-8b-dp-64xh200-fat-tree.json").string()};
    for (const std::string& s : sets) {
      args.push_back("--set");
      args.push_back(s);
    }
    const test::CliResult r = test::run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(key), std::string::npos) << r.err;
  };
  refused({R"(/reliability={"inject":{"switch":0,"level":"pod","at":1}})"}, "/reliability/inject/level: a fat_tree");
  refused({R"(/reliability={"inject":{"gpu":0,"level":"top","at":1}})"}, "/reliability/inject/level");
  refused({R"(/reliability={"inject":{"switch":1,"level":"top","at":1}})"}, "/reliability/inject/switch");
  refused({three_levels, R"(/reliability={"inject":{"switch":2,"level":"pod","at":1}})"}, "below the 2 pod switches");
}

TEST(InjectedFailure, IsRefusedWhereWorkIsDispatchedAtRunTime) {
  // Run-time balancing hands samples out as ranks ask for them: no fixed program to fail mid-way. Such workloads (data
  // jobs) take no /reliability at all: exit 2, one line naming the file and the key.
  const test::CliResult r =
      test::run_cli({"run", (test::source_dir() / "scenarios/seed-2-dynamic-balancing.json").string(), "--no-files",
                     "--no-progress", "--set", R"(/reliability={"iterations":10,"inject":{"gpu":1,"at":0.001}})"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("seed-2-dynamic-balancing.json: /reliability: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("model training only"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(InjectedFailure, APipelineStageFailsWithoutAbortingTheSimulation) {
  // Llama-3 70B, tensor 8 x pipeline 4 x data 2: GPU 8 (the second replica's first stage) fails mid-iteration. The
  // next stage receives its activations through a mailbox it receives permanently; the failure actor takes that
  // mailbox from the dead rank first (SimGrid would otherwise start a transfer towards a host that is off and abort,
  // as seed-9-failures-checkpointing.json did with a node failing). Every rank is accounted for.
  const json run =
      test::run_scenario_json("llama3-70b-3d-64xh100.json", {R"(/reliability={"inject":{"gpu":8,"at":2}})"});
  const json x = run["reliability"]["injected"];
  EXPECT_TRUE(x["fired"].get<bool>());
  EXPECT_EQ(x["failed_ranks"].size(), 1u);
  EXPECT_EQ(x["failed_ranks"].size() + x["noticed_ranks"].get<std::size_t>() + x["hung_ranks"].get<std::size_t>() +
                x["finished_ranks"].get<std::size_t>(),
            64u);
  EXPECT_GT(x["hung_ranks"].get<int>(), 0);
}

} // namespace
} // namespace partsim
