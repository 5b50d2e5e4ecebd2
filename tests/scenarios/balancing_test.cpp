// Run-time balancing and time-varying node speed, checked against closed forms and invariants.
// One simulation per TEST (one process each); comparisons between policies go through the CLI.
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <numeric>

namespace partsim::test {
namespace {

constexpr double kPeak = 100e12;  // base_scenario(): inline GPU, flop/s
constexpr double kLatency = 2e-6; // network latency, s

nlohmann::json balanced_job(int nodes, const std::string& policy) {
  auto doc = base_scenario(nodes, 1);
  doc["strategy"]["balancing"] = {{"policy", policy}, {"request_bytes", 0}};
  return doc;
}

void expect_dynamic_invariants(const Outcome& o, std::uint64_t samples) {
  std::uint64_t processed = 0;
  for (std::size_t r = 0; r < o.result.ranks.size(); ++r) {
    const RankMetrics& m = o.report.ranks[r];
    EXPECT_NEAR(m.busy() + m.idle(), o.report.makespan, 1e-9 * o.report.makespan) << "rank " << r;
    double cursor = 0.0;
    for (const Interval& i : o.result.ranks[r].intervals) {
      EXPECT_NEAR(i.begin, cursor, 1e-12 * o.report.makespan) << "rank " << r << ": gap or overlap";
      cursor = i.end;
    }
    EXPECT_NEAR(cursor, o.result.ranks[r].finish, 1e-12 * o.report.makespan) << "rank " << r << ": ends early";
    processed += m.samples;
  }
  EXPECT_EQ(processed, samples) << "every sample processed exactly once";
  ASSERT_TRUE(o.report.balancing.has_value());
  EXPECT_EQ(o.report.bytes_sent, o.report.bytes_received) << "ranks and coordinator together";
}

TEST(Balancing, StaticIsThePartitionedRunPlusTheMessageLatencies) {
  auto doc = balanced_job(4, "static");
  const Outcome o = simulate_document(doc);
  expect_dynamic_invariants(o, 1000);
  // Request and assignment (0 bytes: latency only), 250 samples, then request and stop.
  const double expected = 4 * kLatency + 250.0 * 1e9 / kPeak;
  EXPECT_NEAR(o.report.makespan, expected, 1e-12);
  EXPECT_EQ(o.report.balancing->dispatches, 4U);
}

TEST(Balancing, SampleBytesCrossTheCoordinatorNic) {
  auto doc = balanced_job(4, "static");
  doc["strategy"]["balancing"]["sample_bytes"] = "100MB"; // 250 samples x 100 MB = 25 GB per rank
  const Outcome o = simulate_document(doc);
  expect_dynamic_invariants(o, 1000);
  // All four assignments share the coordinator's 25 GB/s NIC: 100 GB leave it in 4 s, fairly shared, so every
  // rank's data arrives at 4 s (+ latencies), then it computes.
  const double expected = 4 * kLatency + 4.0 + 250.0 * 1e9 / kPeak;
  EXPECT_NEAR(o.report.makespan, expected, 1e-9);
  EXPECT_EQ(o.report.balancing->bytes_sent, 4ULL * 25'000'000'000ULL);
}

TEST(Balancing, TinyChunksMakeTheDispatcherTheBottleneck) {
  auto doc = balanced_job(4, "work_queue");
  doc["workload"]["samples"] = 10000;
  doc["workload"]["flop_per_sample"] = "1MFLOP"; // 10 ns per sample: compute is negligible
  doc["strategy"]["balancing"]["chunk_samples"] = 10;
  doc["strategy"]["balancing"]["dispatch_overhead"] = "1ms";
  const Outcome o = simulate_document(doc);
  expect_dynamic_invariants(o, 10000);
  EXPECT_EQ(o.report.balancing->dispatches, 1000U);
  // The dispatcher serves one chunk per millisecond, whatever the number of GPUs.
  EXPECT_NEAR(o.report.makespan, 1000 * 1e-3, 0.01);
  EXPECT_NEAR(o.report.balancing->coordinator_busy, 1.0, 1e-9);
}

TEST(Balancing, WorkQueueShareFollowsSpeed) {
  auto doc = balanced_job(2, "work_queue");
  doc["workload"]["samples"] = 30000;
  doc["strategy"]["balancing"]["chunk_samples"] = 100;
  doc["cluster"]["node_speed_factors"] = {1.0, 0.5};
  const Outcome o = simulate_document(doc);
  expect_dynamic_invariants(o, 30000);
  // Pulling work, the twice-as-fast GPU does about two thirds of it (to within a chunk or two).
  EXPECT_NEAR(static_cast<double>(o.report.ranks[0].samples), 20000.0, 200.0);
  const double ideal = 30000.0 * 1e9 / (kPeak * 1.5);
  EXPECT_NEAR(o.report.makespan, ideal, 0.02 * ideal);
}

TEST(Balancing, WorkStealingEvensOutAThrottledNode) {
  auto doc = balanced_job(4, "work_stealing");
  doc["workload"]["samples"] = 40000;
  doc["strategy"]["balancing"]["chunk_samples"] = 100;
  doc["cluster"]["speed_changes"] = nlohmann::json::parse(R"([{"node": 3, "points": [["0s", 0.25]]}])");
  const Outcome o = simulate_document(doc);
  expect_dynamic_invariants(o, 40000);
  EXPECT_GT(o.report.balancing->steals, 0U);
  const double ideal = 40000.0 * 1e9 / (kPeak * 3.25);
  EXPECT_NEAR(o.report.makespan, ideal, 0.03 * ideal);
}

TEST(Balancing, MeasuredRateAdaptsToASlowdownMidRun) {
  auto doc = balanced_job(4, "measured_rate");
  doc["workload"]["samples"] = 400000; // 1 s of nominal work per GPU
  doc["strategy"]["balancing"]["chunk_samples"] = 1000;
  doc["cluster"]["speed_changes"] = nlohmann::json::parse(R"([{"node": 0, "points": [["0s", 1], ["0.3s", 0.2]]}])");
  const Outcome o = simulate_document(doc);
  expect_dynamic_invariants(o, 400000);
  // A fluid split would end when 3t + 0.3 + 0.2 (t - 0.3) = 4 s of work, t = 3.76 / 3.2: GPU 0 manages 0.3 s of
  // work, then a fifth. The policy lags by the chunk GPU 0 holds when it slows (its rate is only measured when that
  // chunk completes), which costs a few percent; a static split would take 0.3 + 0.7 / 0.2 = 3.8 s.
  const double ideal = 3.76 / 3.2;
  EXPECT_GE(o.report.makespan, ideal);
  EXPECT_NEAR(o.report.makespan, ideal, 0.05 * ideal);
}

TEST(SpeedChanges, ASlowdownStretchesTheRemainingWork) {
  auto doc = base_scenario(2, 1);
  doc["workload"]["samples"] = 400000; // 2 s of work per GPU at full speed
  doc["cluster"]["speed_changes"] = nlohmann::json::parse(R"([{"node": 1, "points": [["0s", 1], ["1s", 0.5]]}])");
  const Outcome o = simulate_document(doc);
  // GPU 1: 1 s at full speed, then the second half of its work at half speed: 2 s more.
  EXPECT_NEAR(o.report.ranks[1].compute, 3.0, 1e-9);
  EXPECT_NEAR(o.report.ranks[0].compute, 2.0, 1e-9);
}

TEST(SpeedChanges, PeriodicInterferenceRepeats) {
  auto doc = base_scenario(1, 1);
  doc["workload"]["samples"] = 300000; // 3 s of work at full speed
  // Full speed for 1 s, half speed for 1 s, repeating every 2 s: 1.5 s of work per period.
  doc["cluster"]["speed_changes"] =
      nlohmann::json::parse(R"([{"node": 0, "points": [["0s", 1], ["1s", 0.5]], "period": "2s"}])");
  const Outcome o = simulate_document(doc);
  EXPECT_NEAR(o.report.makespan, 4.0, 1e-9);
}

double makespan_of(const std::string& policy) {
  const CliResult r = run_cli({"run", (source_dir() / "scenarios" / "seed-2-dynamic-balancing.json").string(), "--set",
                               "/strategy/balancing/policy=" + policy, "--json", "--no-files"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out)["summary"]["makespan_s"].get<double>();
}

TEST(SeedSituation2, MeasuredRateBalancingCutsAbout42sToAbout11s) {
  // 8 GPUs with 10.5 s of nominal work each; GPU 7 runs at a quarter of its speed, which the static split ignores.
  const double nominal = 1e6 * 3.276e9 / 312e12;
  const double static_time = makespan_of("static");
  EXPECT_NEAR(static_time, nominal / 0.25, 0.02 * nominal / 0.25);
  const double fluid = 8 * nominal / 7.25; // all GPUs busy until the end
  const double measured = makespan_of("measured_rate");
  EXPECT_GE(measured, fluid);
  EXPECT_NEAR(measured, fluid, 0.03 * fluid);
  EXPECT_GT(static_time / measured, 3.4);
  EXPECT_LT(makespan_of("work_queue"), 0.3 * static_time);
  EXPECT_LT(makespan_of("work_stealing"), 0.3 * static_time);
}

TEST(Balancing, WorkStealingWaitsForSamplesStillInFlight) {
  // All samples start on GPU 0, and its assignment (1 MB) arrives after the others' empty ones: the idle GPUs must
  // wait for it and steal, not quit.
  auto doc = base_scenario(1, 4);
  doc["workload"]["samples"] = 1000;
  doc["strategy"]["shares"] = {1.0, 0.0, 0.0, 0.0};
  doc["strategy"]["balancing"] = {{"policy", "work_stealing"}, {"sample_bytes", "1kB"}, {"chunk_samples", 10}};
  const Outcome o = simulate_document(doc);
  expect_dynamic_invariants(o, 1000);
  EXPECT_GT(o.report.balancing->steals, 0U);
  for (const RankMetrics& m : o.report.ranks)
    EXPECT_GT(m.samples, 100U) << "rank " << m.rank << " got a fair part by stealing";
  const double alone = 1000.0 * 1e9 / kPeak;
  EXPECT_LT(o.report.makespan, 0.5 * alone);
}

} // namespace
} // namespace partsim::test
