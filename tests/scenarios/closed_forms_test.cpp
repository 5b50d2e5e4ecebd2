// Whole runs checked against closed forms: compute time, roofline, ring all-reduce alpha-beta time, baselines.
// Each TEST runs in its own process (gtest_discover_tests): SimGrid allows one simulation per process.
#include "test_support.hpp"

#include "partsim/engine/engine.hpp"
#include "partsim/model/collective_cost.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace partsim::test {
namespace {

constexpr double kPeak = 100e12;       // base_scenario(): inline GPU, flop/s
constexpr double kMemBandwidth = 1e12; // bytes/s
constexpr double kNetBandwidth = 25e9; // bytes/s per NIC direction
constexpr double kNetLatency = 2e-6;   // s
constexpr double kIntraBandwidth = 300e9;
constexpr double kIntraLatency = 1e-6;

/** Alpha-beta time of a ring all-reduce of S bytes over n ranks whose slowest hop has bandwidth B, latency a. */
double ring_time(int n, double bytes, double bandwidth, double latency) {
  return 2.0 * (n - 1) / n * bytes / bandwidth + 2.0 * (n - 1) * latency;
}

/** What NCCL's Simple protocol adds to that ring (the data job's `ring_allreduce` runs Simple): its base latency and
 * its per-step latencies beyond the links' (protocol_latency), g GPUs per node on m nodes. The base scenario's links
 * have no transport: PCIe's figures inside a node. */
double simple_latency(int g, int m) {
  const TwoLevelCost links{{kIntraLatency, kIntraBandwidth}, {kNetLatency, kNetBandwidth}, 1};
  return protocol_latency(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, CollectiveProtocol::Simple, g * m, g, m,
                          links);
}

TEST(ClosedForms, BalancedComputeOnlyMakespanIsShareTimesWorkOverPeak) {
  auto doc = base_scenario(10, 1);
  doc["workload"]["samples"] = 1000000;
  const Outcome o = simulate_document(doc);
  const double expected = 100000.0 * 1e9 / kPeak; // 10% of the samples each
  EXPECT_NEAR(o.report.makespan, expected, expected * 1e-9);
  EXPECT_NEAR(o.report.imbalance_max_over_mean, 1.0, 1e-12);
  EXPECT_NEAR(o.report.speedup, 10.0, 1e-6);
}

TEST(ClosedForms, SkewedComputeOnlyMakespanIsLargestShare) {
  auto doc = base_scenario(10, 1);
  doc["workload"]["samples"] = 1000000;
  doc["strategy"]["shares"] = {{"skewed", 0.3}};
  const Outcome o = simulate_document(doc);
  const double expected = 300000.0 * 1e9 / kPeak;
  EXPECT_NEAR(o.report.makespan, expected, expected * 1e-9);
  // Same work on one GPU: all samples at nominal speed.
  EXPECT_NEAR(o.report.baseline_time, 1e6 * 1e9 / kPeak, 1e-9);
  EXPECT_NEAR(o.report.speedup, 1.0 / 0.3, 1e-6);
  // Nine ranks finish at 70%/9 of the work; they wait the rest: max/mean = 0.3 / 0.1.
  EXPECT_NEAR(o.report.imbalance_max_over_mean, 3.0, 1e-6);
  // Work done by the big rank alone: (0.3 - 0.7/9) of the total.
  EXPECT_NEAR(o.report.parallel_fraction, 1.0 - (0.3 - 0.7 / 9.0), 1e-6);
}

TEST(ClosedForms, MemoryBoundSamplesRunAtMemoryBandwidth) {
  auto doc = base_scenario(2, 1);
  doc["workload"]["flop_per_sample"] = "1MFLOP";
  doc["workload"]["bytes_read_per_sample"] = "1GB"; // 1 ms per sample from memory, 10 ns of compute
  const Outcome o = simulate_document(doc);
  const double expected = 500.0 * 1e9 / kMemBandwidth;
  EXPECT_NEAR(o.report.makespan, expected, expected * 1e-9);
}

TEST(ClosedForms, SlowNodeTakesProportionallyLonger) {
  auto doc = base_scenario(4, 1);
  doc["cluster"]["node_speed_factors"] = {1.0, 1.0, 0.25, 1.0};
  const Outcome o = simulate_document(doc);
  const double nominal = 250.0 * 1e9 / kPeak;
  EXPECT_NEAR(o.report.ranks[2].compute, nominal / 0.25, 1e-12);
  EXPECT_NEAR(o.report.ranks[0].compute, nominal, 1e-12);
  EXPECT_NEAR(o.report.makespan, nominal / 0.25, 1e-12);
}

/** Ring all-reduce over N single-GPU nodes: every hop crosses the star network. */
class RingAllReduceOverNetwork : public ::testing::TestWithParam<int> {};

TEST_P(RingAllReduceOverNetwork, MatchesAlphaBeta) {
  const int n = GetParam();
  const double bytes = 1e9;
  auto doc = base_scenario(n, 1);
  doc["workload"]["samples"] = n; // one sample each: equal compute, so the ring starts on every rank at once
  doc["workload"]["gradient_bytes"] = bytes;
  doc["strategy"]["gradient_sync"] = "ring_allreduce";
  const Outcome o = simulate_document(doc);
  const double compute = 1e9 / kPeak;
  const double ring = o.report.makespan - compute;
  const double expected = ring_time(n, bytes, kNetBandwidth, kNetLatency) + simple_latency(1, n);
  EXPECT_NEAR(ring, expected, 0.05 * expected) << "the issue's bound";
  // CM02 without cross-traffic is alpha-beta exactly; chunks differ by at most one byte.
  EXPECT_NEAR(ring, expected, 2.0 * (n - 1) / kNetBandwidth + 1e-12);
  EXPECT_EQ(o.report.messages, static_cast<std::uint64_t>(2 * (n - 1) * n));
}

INSTANTIATE_TEST_SUITE_P(N2To64, RingAllReduceOverNetwork, ::testing::Range(2, 65));

TEST(ClosedForms, RingInsideOneNodeUsesIntraNodeLinks) {
  const int n = 8;
  auto doc = base_scenario(1, n);
  doc["cluster"].erase("network");
  doc["workload"]["samples"] = n;
  doc["workload"]["gradient_bytes"] = "2GB";
  doc["strategy"]["gradient_sync"] = "ring_allreduce";
  const Outcome o = simulate_document(doc);
  const double expected = ring_time(n, 2e9, kIntraBandwidth, kIntraLatency) + simple_latency(n, 1);
  EXPECT_NEAR(o.report.makespan - 1e9 / kPeak, expected, expected * 1e-9);
}

TEST(ClosedForms, RingAcrossNodesIsPacedByTheSlowestHop) {
  // 2 nodes x 4 GPUs in ring order: 6 hops over NVLink-class links, 2 over the network, all in parallel per step.
  const int n = 8;
  auto doc = base_scenario(2, 4);
  doc["workload"]["samples"] = n;
  doc["workload"]["gradient_bytes"] = "1GB";
  doc["strategy"]["gradient_sync"] = "ring_allreduce";
  const Outcome o = simulate_document(doc);
  const double chunk = 1e9 / n;
  const double step = std::max(kIntraLatency + chunk / kIntraBandwidth, kNetLatency + chunk / kNetBandwidth);
  const double expected = 2.0 * (n - 1) * step + simple_latency(4, 2);
  EXPECT_NEAR(o.report.makespan - 1e9 / kPeak, expected, expected * 1e-9);
}

TEST(ClosedForms, TrainingIterationsRepeatComputeAndRing) {
  const int n = 4;
  const int iterations = 5;
  auto doc = base_scenario(n, 1);
  doc["workload"]["iterations"] = iterations;
  doc["workload"]["gradient_bytes"] = "100MB";
  const Outcome o = simulate_document(doc); // gradient_sync defaults to ring_allreduce with gradients
  const double per_iteration =
      250.0 * 1e9 / kPeak + ring_time(n, 1e8, kNetBandwidth, kNetLatency) + simple_latency(1, n);
  EXPECT_NEAR(o.report.makespan, iterations * per_iteration, iterations * per_iteration * 1e-9);
  EXPECT_NEAR(o.report.baseline_time, iterations * 1000.0 * 1e9 / kPeak, 1e-9);
  EXPECT_NEAR(o.report.throughput, iterations * 1000.0 / o.report.makespan, 1e-6);
}

/** Two ranks on one node, each computing `compute_s` beside a ring all-reduce of `bytes` between them
 * (ComputeStep::beside_next, as tensor-parallel communication overlap runs): the makespan is the longer of the two,
 * the collective's part past the compute is exposed communication, the rest hidden. */
RunResult beside_run(double compute_s, double bytes, bool lean_engine) {
  auto doc = base_scenario(1, 2);
  doc["cluster"].erase("network");
  doc["run"]["lean_engine"] = lean_engine;
  const Scenario s = parse(doc);
  Plan plan;
  plan.groups.push_back({0, 1});
  for (int gpu = 0; gpu < 2; ++gpu) {
    CollectiveStep ring;
    ring.group = 0;
    ring.op = CollectiveOp::AllReduce;
    ring.algorithm = CollectiveAlgorithm::Ring;
    ring.fidelity = Fidelity::Steps;
    ring.kind = CommKind::Tensor;
    ring.bytes = static_cast<std::uint64_t>(bytes);
    plan.ranks.push_back(own_program(gpu, {ComputeStep{compute_s * kPeak, 0, 0, true}, ring}));
  }
  return simulate(s, plan);
}

double beside_collective_time(double bytes) {
  return ring_time(2, bytes, kIntraBandwidth, kIntraLatency) + simple_latency(2, 1);
}

TEST(ClosedForms, ACollectiveBesideALongerComputeIsHidden) {
  const double bytes = 1e9;
  const double collective = beside_collective_time(bytes);
  const RunResult r = beside_run(2.0 * collective, bytes, true);
  EXPECT_NEAR(r.makespan, 2.0 * collective, collective * 1e-9);
  const RankTimeline& t = r.ranks[0];
  EXPECT_NEAR(t.total(IntervalKind::Compute), 2.0 * collective, collective * 1e-9);
  EXPECT_NEAR(t.total(IntervalKind::Communication), 0.0, collective * 1e-9);
  EXPECT_NEAR(t.hidden, collective, collective * 1e-9);
  EXPECT_EQ(t.bytes_sent, static_cast<std::uint64_t>(bytes)); // two messages of S/2
  EXPECT_EQ(t.bytes_received, t.bytes_sent);
}

TEST(ClosedForms, ACollectiveBesideAShorterComputeIsExposedPastIt) {
  // With every execution a SimGrid execution (lean engine off): the compute runs as an activity beside the transfers.
  const double bytes = 1e9;
  const double collective = beside_collective_time(bytes);
  const RunResult r = beside_run(0.25 * collective, bytes, false);
  EXPECT_NEAR(r.makespan, collective, collective * 1e-9);
  const RankTimeline& t = r.ranks[1];
  EXPECT_NEAR(t.total(IntervalKind::Compute), 0.25 * collective, collective * 1e-9);
  EXPECT_NEAR(t.total(IntervalKind::Communication), 0.75 * collective, collective * 1e-9);
  EXPECT_NEAR(t.hidden, 0.25 * collective, collective * 1e-9);
  EXPECT_NEAR(t.blocked_by_kind[static_cast<std::size_t>(CommKind::Tensor)], 0.75 * collective, collective * 1e-9);
  // Busy + idle = makespan: no interval counted twice, none missing.
  EXPECT_NEAR(t.total(IntervalKind::Compute) + t.total(IntervalKind::Communication) + t.total(IntervalKind::Wait),
              t.finish, collective * 1e-9);
  EXPECT_NEAR(t.finish, r.makespan, collective * 1e-9);
}

} // namespace
} // namespace partsim::test
