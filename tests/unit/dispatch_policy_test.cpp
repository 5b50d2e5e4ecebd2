// Run-time balancing decisions without SimGrid: chunks per policy, service order, steals.
#include "partsim/plan/dispatch_policy.hpp"

#include <gtest/gtest.h>

#include <numeric>

namespace partsim {
namespace {

DynamicWork work(BalancingPolicy policy, std::uint64_t chunk, std::vector<std::uint64_t> shares,
                 std::vector<double> nominal) {
  DynamicWork w;
  w.balancing.policy = policy;
  w.balancing.chunk_samples = chunk;
  w.total_samples = std::accumulate(shares.begin(), shares.end(), std::uint64_t{0});
  w.static_samples = std::move(shares);
  w.nominal_rate = std::move(nominal);
  return w;
}

TEST(DispatchPolicy, StaticHandsEachRankItsShareOnceThenStops) {
  DispatchPolicy p(work(BalancingPolicy::Static, 1, {30, 70}, {1, 1}));
  EXPECT_EQ(p.assign(1), 70u);
  EXPECT_EQ(p.assign(0), 30u);
  EXPECT_EQ(p.running(), 2u);
  EXPECT_EQ(p.assign(0), 0u);
  EXPECT_EQ(p.assign(1), 0u);
  EXPECT_EQ(p.running(), 0u);
  EXPECT_EQ(p.remaining(), 0u);
}

TEST(DispatchPolicy, WorkQueueHandsFixedChunksUntilNothingIsLeft) {
  DispatchPolicy p(work(BalancingPolicy::WorkQueue, 40, {50, 50}, {1, 1}));
  EXPECT_EQ(p.assign(0), 40u);
  EXPECT_EQ(p.assign(1), 40u);
  EXPECT_EQ(p.assign(0), 20u); // the last chunk is what is left
  EXPECT_EQ(p.assign(1), 0u);
  EXPECT_EQ(p.assign(0), 0u);
  EXPECT_EQ(p.running(), 0u);
}

TEST(DispatchPolicy, WorkStealingHandsTheShareAndTheWorkerNeverAsksAgain) {
  DispatchPolicy p(work(BalancingPolicy::WorkStealing, 5, {10, 20, 30}, {1, 1, 1}));
  EXPECT_EQ(p.assign(2), 30u);
  EXPECT_EQ(p.running(), 2u);
  EXPECT_EQ(p.assign(0), 10u);
  EXPECT_EQ(p.assign(1), 20u);
  EXPECT_EQ(p.running(), 0u);
}

TEST(DispatchPolicy, MeasuredRateProbesThenSchedulesByRate) {
  // 1000 samples, probes of 10; rank 0 measured at 300 samples/s, rank 1 at 100.
  DispatchPolicy p(work(BalancingPolicy::MeasuredRate, 10, {500, 500}, {200, 200}));
  EXPECT_EQ(p.assign(0), 10u);
  EXPECT_EQ(p.assign(1), 10u);
  p.record(0, 10, 10.0 / 300);
  p.record(1, 10, 10.0 / 100);
  EXPECT_DOUBLE_EQ(p.measured_rate(0), 300);
  EXPECT_TRUE(p.serves_before(0, 1));
  EXPECT_FALSE(p.serves_before(1, 0));
  // Half of rank 0's share of the 980 left: ceil(980 x 300/400 / 2) = 368.
  EXPECT_EQ(p.assign(0), 368u);
  // Rank 1: ceil(612 x 100/400 / 2) = 77.
  EXPECT_EQ(p.assign(1), 77u);
  // Never below chunk_samples scaled by the rank's rate over the fastest: 10 x 100/300 -> 3.
  p.record(1, 1, 1.0 / 100);
  std::uint64_t handed = 0;
  for (int i = 0; i < 100 && p.remaining() > 0; ++i) handed += p.assign(1);
  EXPECT_EQ(p.remaining(), 0u);
  EXPECT_EQ(handed, 535u);
}

TEST(DispatchPolicy, OtherPoliciesServeInArrivalOrder) {
  DispatchPolicy p(work(BalancingPolicy::WorkQueue, 1, {5, 5}, {1, 1}));
  p.record(0, 10, 1.0);
  p.record(1, 10, 0.1);
  EXPECT_FALSE(p.serves_before(1, 0));
  EXPECT_FALSE(p.serves_before(0, 1));
}

TEST(DispatchPolicy, StealsHalfOfTheFullestQueueRoundedUp) {
  EXPECT_EQ(choose_steal({3, 9, 9, 1}).victim, 1u); // the first of the fullest
  EXPECT_EQ(choose_steal({3, 9, 9, 1}).samples, 5u);
  EXPECT_EQ(choose_steal({0, 1}).samples, 1u);
  EXPECT_EQ(choose_steal({0, 0, 0}).samples, 0u);
}

} // namespace
} // namespace partsim
