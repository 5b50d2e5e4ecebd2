// Invariants that every run must keep: timelines tile [0, makespan]; bytes sent = bytes received; ring volumes.
// One simulation per TEST (one process each).
#include "test_support.hpp"

#include "partsim/model/collective_cost.hpp"

#include <gtest/gtest.h>

#include <numeric>

namespace partsim::test {
namespace {

/** Checks the timeline invariants of a finished run. */
void expect_invariants(const Outcome& o) {
  const double makespan = o.report.makespan;
  ASSERT_GT(makespan, 0.0);
  double latest = 0.0;
  for (std::size_t r = 0; r < o.result.ranks.size(); ++r) {
    const RankTimeline& t = o.result.ranks[r];
    double cursor = 0.0;
    for (const Interval& i : o.result.intervals_of(r)) {
      EXPECT_NEAR(i.begin, cursor, 1e-12 * makespan) << "rank " << r << ": gap or overlap in the timeline";
      EXPECT_GT(i.end, i.begin) << "rank " << r << ": empty interval kept";
      cursor = i.end;
    }
    EXPECT_NEAR(cursor, t.finish, 1e-12 * makespan) << "rank " << r;
    latest = std::max(latest, t.finish);
    const RankMetrics& m = o.report.ranks[r];
    EXPECT_NEAR(m.busy() + m.idle(), makespan, 1e-9 * makespan) << "rank " << r << ": busy + idle != makespan";
    EXPECT_GE(m.tail_idle, 0.0);
  }
  EXPECT_DOUBLE_EQ(latest, makespan);
  EXPECT_EQ(o.report.bytes_sent, o.report.bytes_received);
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
  for (const RankTimeline& t : o.result.ranks) {
    sent += t.bytes_sent;
    received += t.bytes_received;
  }
  EXPECT_EQ(sent, received);
}

TEST(Invariants, SkewedComputeOnly) {
  auto doc = base_scenario(10, 1);
  doc["strategy"]["shares"] = {{"skewed", 0.3}};
  const Outcome o = simulate_document(doc);
  expect_invariants(o);
  EXPECT_EQ(o.report.bytes_sent, 0U);
  EXPECT_EQ(o.report.messages, 0U);
}

TEST(Invariants, SkewedTrainingWithRingOnMultiGpuNodes) {
  auto doc = base_scenario(3, 4);
  doc["strategy"]["shares"] = {{"skewed", 0.4}, {"largest_partition", 5}};
  doc["workload"]["iterations"] = 3;
  doc["workload"]["gradient_bytes"] = 123456789; // not a multiple of 12: chunks differ by a byte
  const Outcome o = simulate_document(doc);
  expect_invariants(o);
  const int n = 12;
  // Each ring step moves every chunk once: S bytes per step, 2(n-1) steps per iteration.
  EXPECT_EQ(o.report.bytes_sent, 3ULL * 2 * (n - 1) * 123456789ULL);
  EXPECT_EQ(o.report.messages, 3ULL * 2 * (n - 1) * n);
  // Every rank waits: the others for rank 5's bigger partition, rank 5 for the network hops upstream of it, which
  // pace the ring while its own neighbours sit on faster intra-node links.
  for (std::size_t r = 0; r < 12; ++r) EXPECT_GT(o.report.ranks[r].wait, 0.0) << "rank " << r;
}

TEST(Invariants, FastRanksWaitForTheStragglerInTheRing) {
  const int n = 4;
  auto doc = base_scenario(n, 1);
  doc["cluster"]["node_speed_factors"] = {1.0, 0.1, 1.0, 1.0}; // 22.5 ms late: longer than a 4 ms chunk
  doc["workload"]["gradient_bytes"] = "400MB";
  const Outcome o = simulate_document(doc);
  expect_invariants(o);
  const double fast = 250.0 * 1e9 / 100e12;
  const double slow = fast / 0.1;
  // The data job's ring runs NCCL's Simple protocol: its latency on top (protocol_latency).
  const LinkCost net{2e-6, 25e9};
  const double ring = 2.0 * (n - 1) / n * 4e8 / 25e9 + 2.0 * (n - 1) * 2e-6 +
                      protocol_latency(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, CollectiveProtocol::Simple,
                                       n, 1, n, TwoLevelCost{net, net, 1});
  EXPECT_NEAR(o.report.makespan, slow + ring, 1e-9 * (slow + ring));
  for (int r : {0, 2, 3}) {
    const RankMetrics& m = o.report.ranks[static_cast<std::size_t>(r)];
    // What a fast rank does after computing: wait for the straggler, then the ring itself.
    EXPECT_NEAR(m.wait + m.communication, (slow - fast) + ring, 1e-9) << "rank " << r;
    EXPECT_GT(m.wait, 0.0) << "rank " << r;
  }
  EXPECT_NEAR(o.report.ranks[1].wait, 0.0, 1e-12);
}

TEST(Invariants, MorePartitionsThanGpusRunBackToBack) {
  auto doc = base_scenario(4, 1);
  doc["strategy"]["partitions"] = 10; // GPUs 0 and 1 get three partitions, GPUs 2 and 3 two
  const Outcome o = simulate_document(doc);
  expect_invariants(o);
  EXPECT_EQ(o.report.ranks[0].samples, 300U);
  EXPECT_EQ(o.report.ranks[3].samples, 200U);
  EXPECT_NEAR(o.report.makespan, 300.0 * 1e9 / 100e12, 1e-12);
}

} // namespace
} // namespace partsim::test
