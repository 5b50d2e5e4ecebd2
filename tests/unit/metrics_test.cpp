// Metrics from hand-built timelines: parallel fraction, Amdahl, Karp-Flatt, interval merging and the report.
#include "partsim/report/metrics.hpp"
#include "partsim/report/timeline.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace partsim {
namespace {

RankTimeline computing(double begin, double end) {
  RankTimeline t;
  t.record(IntervalKind::Compute, begin, end);
  t.finish = end;
  return t;
}

// --- RankTimeline::record --------------------------------------------------------------------------------------

TEST(Timeline, AdjacentIntervalsOfOneKindMerge) {
  RankTimeline t;
  t.record(IntervalKind::Compute, 0.0, 1.0);
  t.record(IntervalKind::Compute, 1.0, 2.5);
  ASSERT_EQ(t.intervals.size(), 1u);
  EXPECT_EQ(t.intervals[0].begin, 0.0);
  EXPECT_EQ(t.intervals[0].end, 2.5);
  EXPECT_EQ(t.intervals[0].kind, IntervalKind::Compute);
}

TEST(Timeline, DifferentKindsDoNotMerge) {
  RankTimeline t;
  t.record(IntervalKind::Compute, 0.0, 1.0);
  t.record(IntervalKind::Wait, 1.0, 2.0);
  t.record(IntervalKind::Compute, 2.0, 3.0);
  t.record(IntervalKind::Communication, 3.0, 4.0);
  ASSERT_EQ(t.intervals.size(), 4u);
  EXPECT_EQ(t.intervals[1].kind, IntervalKind::Wait);
  EXPECT_EQ(t.intervals[2].kind, IntervalKind::Compute);
  EXPECT_EQ(t.intervals[3].kind, IntervalKind::Communication);
}

TEST(Timeline, IntervalsWithAGapDoNotMerge) {
  RankTimeline t;
  t.record(IntervalKind::Compute, 0.0, 1.0);
  t.record(IntervalKind::Compute, 1.5, 2.0);
  ASSERT_EQ(t.intervals.size(), 2u);
  EXPECT_EQ(t.intervals[1].begin, 1.5);
}

TEST(Timeline, EmptyAndReversedIntervalsAreSkipped) {
  RankTimeline t;
  t.record(IntervalKind::Compute, 1.0, 1.0);
  t.record(IntervalKind::Wait, 2.0, 1.0);
  EXPECT_TRUE(t.intervals.empty());
  t.record(IntervalKind::Compute, 0.0, 1.0);
  t.record(IntervalKind::Wait, 1.0, 1.0); // empty: must not split the compute run
  t.record(IntervalKind::Compute, 1.0, 2.0);
  ASSERT_EQ(t.intervals.size(), 1u);
  EXPECT_EQ(t.intervals[0].end, 2.0);
}

TEST(Timeline, TotalsPerKind) {
  RankTimeline t;
  t.record(IntervalKind::Compute, 0.0, 2.0);
  t.record(IntervalKind::Communication, 2.0, 2.5);
  t.record(IntervalKind::Wait, 2.5, 4.0);
  t.record(IntervalKind::Compute, 4.0, 7.0);
  EXPECT_DOUBLE_EQ(t.total(IntervalKind::Compute), 5.0);
  EXPECT_DOUBLE_EQ(t.total(IntervalKind::Communication), 0.5);
  EXPECT_DOUBLE_EQ(t.total(IntervalKind::Wait), 1.5);
}

// --- measured_parallel_fraction ----------------------------------------------------------------------------------

TEST(ParallelFraction, TwoRanksOverlappingHalfTheTime) {
  // [0,2) and [1,3): 4 s of work, 2 s of it alone ([0,1) and [2,3)): f = 1 - 2/4.
  EXPECT_DOUBLE_EQ(measured_parallel_fraction({computing(0, 2), computing(1, 3)}), 1.0 - 2.0 / 4.0);
}

TEST(ParallelFraction, OneRankIsSerial) {
  EXPECT_EQ(measured_parallel_fraction({computing(0, 5)}), 0.0);
}

TEST(ParallelFraction, FullOverlapIsParallel) {
  EXPECT_DOUBLE_EQ(measured_parallel_fraction({computing(0, 5), computing(0, 5), computing(0, 5)}), 1.0);
}

TEST(ParallelFraction, BackToBackIsSerial) {
  // One rank starts the instant the other stops: never two at once.
  EXPECT_DOUBLE_EQ(measured_parallel_fraction({computing(0, 1), computing(1, 2)}), 0.0);
}

TEST(ParallelFraction, ThreeStaggeredRanks) {
  // [0,3), [1,4), [2,5): one rank computes in [0,1) and [4,5), so 2 s of 9 s of work are serial.
  EXPECT_DOUBLE_EQ(measured_parallel_fraction({computing(0, 3), computing(1, 4), computing(2, 5)}), 1.0 - 2.0 / 9.0);
}

TEST(ParallelFraction, MomentsWithoutComputeAreNotSerialWork) {
  // Two ranks compute together in [1,2) and [3,4), nobody before 1 or between 2 and 3: all work is parallel.
  RankTimeline a;
  a.record(IntervalKind::Wait, 0, 1);
  a.record(IntervalKind::Compute, 1, 2);
  a.record(IntervalKind::Wait, 2, 3);
  a.record(IntervalKind::Compute, 3, 4);
  a.finish = 4;
  EXPECT_DOUBLE_EQ(measured_parallel_fraction({a, a}), 1.0);
}

TEST(ParallelFraction, OnlyComputeCounts) {
  // Rank 0 computes [0,1) then communicates [1,3); rank 1 computes [0,3). Serial work: rank 1 in [1,3).
  RankTimeline a;
  a.record(IntervalKind::Compute, 0, 1);
  a.record(IntervalKind::Communication, 1, 3);
  a.finish = 3;
  EXPECT_DOUBLE_EQ(measured_parallel_fraction({a, computing(0, 3)}), 1.0 - 2.0 / 4.0);
}

TEST(ParallelFraction, AFoldedRunCountsEachRepresentativeOncePerRankItStandsFor) {
  // Ranks 1 and 3 took the timelines of 0 and 2 (folded: no intervals of their own). Unfolded: [0,2) twice and
  // [1,3) twice, so at least two ranks compute at every instant and f = 1.
  const std::vector<RankTimeline> unfolded{computing(0, 2), computing(0, 2), computing(1, 3), computing(1, 3)};
  std::vector<RankTimeline> folded{computing(0, 2), RankTimeline{}, computing(1, 3), RankTimeline{}};
  EXPECT_DOUBLE_EQ(measured_parallel_fraction(unfolded), 1.0);
  EXPECT_EQ(measured_parallel_fraction(folded, nullptr, {0, 0, 2, 2}), measured_parallel_fraction(unfolded));
  // Rank 2 alone computes in [2,3): 1 s of 6 s of work is serial.
  const std::vector<RankTimeline> three{computing(0, 2), computing(0, 2), computing(1, 3)};
  EXPECT_EQ(measured_parallel_fraction({computing(0, 2), RankTimeline{}, computing(1, 3)}, nullptr, {0, 0, 2}),
            measured_parallel_fraction(three));
  EXPECT_DOUBLE_EQ(measured_parallel_fraction(three), 1.0 - 1.0 / 6.0);
}

// --- Amdahl and Karp-Flatt -------------------------------------------------------------------------------------

TEST(Amdahl, ClosedForm) {
  EXPECT_DOUBLE_EQ(amdahl_speedup(0.5, 10), 1.0 / (0.5 + 0.05));
  EXPECT_DOUBLE_EQ(amdahl_speedup(0.9, 4), 1.0 / (0.1 + 0.9 / 4));
  EXPECT_DOUBLE_EQ(amdahl_speedup(1.0, 16), 16.0);
  EXPECT_DOUBLE_EQ(amdahl_speedup(0.0, 16), 1.0);
  EXPECT_DOUBLE_EQ(amdahl_speedup(0.75, 1), 1.0);
}

TEST(KarpFlatt, RecoversTheSerialFractionOfAnAmdahlSpeedup) {
  for (double f : {0.0, 0.1, 0.5, 0.9, 0.99, 1.0})
    for (double p : {2.0, 3.0, 10.0, 64.0, 1024.0})
      EXPECT_NEAR(karp_flatt(amdahl_speedup(f, p), p), 1.0 - f, 1e-12) << "f " << f << ", p " << p;
}

TEST(KarpFlatt, ClosedForm) {
  // (1/S - 1/p) / (1 - 1/p) with S = 2.5, p = 4: (0.4 - 0.25) / 0.75.
  EXPECT_DOUBLE_EQ(karp_flatt(2.5, 4), 0.15 / 0.75);
  EXPECT_DOUBLE_EQ(karp_flatt(8, 8), 0.0); // linear speedup: no serial part
  EXPECT_DOUBLE_EQ(karp_flatt(1, 8), 1.0); // no speedup: all serial
}

TEST(KarpFlatt, ZeroForOneProcessor) {
  EXPECT_EQ(karp_flatt(1.0, 1.0), 0.0);
  EXPECT_EQ(karp_flatt(0.5, 1.0), 0.0);
}

// --- make_report -------------------------------------------------------------------------------------------------

/** Four ranks on 2 nodes x 2 GPUs, makespan 8 s:
 *   rank 0: compute [0,4) comm [4,5) wait [5,6)      finish 6
 *   rank 1: compute [0,2) comm [2,3) wait [3,6)      finish 6
 *   rank 2: compute [0,2) comm [2,4)                 finish 4
 *   rank 3: wait [0,4) compute [4,8)                 finish 8 */
struct HandBuiltRun {
  Scenario scenario = test::parse(test::base_scenario(2, 2));
  Plan plan;
  RunResult result;

  HandBuiltRun() {
    plan.iterations = 2;
    plan.samples_per_iteration = 1000;
    plan.summary = "hand-built";
    for (int gpu : {2, 0, 3, 1}) // ranks on permuted GPUs, so node and local index come from the plan
      plan.ranks.emplace_back().gpu = gpu;

    result.ranks.resize(4);
    auto& r = result.ranks;
    r[0].record(IntervalKind::Compute, 0, 4);
    r[0].record(IntervalKind::Communication, 4, 5);
    r[0].record(IntervalKind::Wait, 5, 6);
    r[0].finish = 6;
    r[1].record(IntervalKind::Compute, 0, 2);
    r[1].record(IntervalKind::Communication, 2, 3);
    r[1].record(IntervalKind::Wait, 3, 6);
    r[1].finish = 6;
    r[2].record(IntervalKind::Compute, 0, 2);
    r[2].record(IntervalKind::Communication, 2, 4);
    r[2].finish = 4;
    r[3].record(IntervalKind::Wait, 0, 4);
    r[3].record(IntervalKind::Compute, 4, 8);
    r[3].finish = 8;
    for (std::size_t i = 0; i < r.size(); ++i) {
      r[i].samples = 250;
      r[i].bytes_sent = 100 * (i + 1);
      r[i].bytes_received = 1000 * (i + 1);
      r[i].messages_sent = i;
    }
    result.makespan = 8;
    result.baseline_time = 20;
    result.messages = 6;
    result.executions = 8;
    result.network = {"CM02", false, "test", "3.32"};
  }
};

TEST(Report, WhatRan) {
  const HandBuiltRun run;
  const Report r = make_report(run.scenario, run.plan, run.result);
  EXPECT_EQ(r.scenario_name, "test");
  EXPECT_EQ(r.scenario_description, "test scenario");
  EXPECT_EQ(r.strategy_summary, "hand-built");
  EXPECT_EQ(r.seed, 1u);
  EXPECT_EQ(r.network.model, "CM02");
  EXPECT_EQ(r.gpus, 4);
  EXPECT_EQ(r.iterations, 2);
  EXPECT_EQ(r.messages, 6u);
  EXPECT_EQ(r.executions, 8u);
  EXPECT_EQ(r.bytes_sent, 100u + 200 + 300 + 400);
  EXPECT_EQ(r.bytes_received, 1000u + 2000 + 3000 + 4000);
}

TEST(Report, HeadlineFigures) {
  const HandBuiltRun run;
  const Report r = make_report(run.scenario, run.plan, run.result);
  EXPECT_DOUBLE_EQ(r.makespan, 8.0);
  EXPECT_DOUBLE_EQ(r.throughput, 1000.0 * 2 / 8);
  EXPECT_DOUBLE_EQ(r.speedup, 20.0 / 8);
  EXPECT_DOUBLE_EQ(r.efficiency, 20.0 / 8 / 4);
  EXPECT_DOUBLE_EQ(r.karp_flatt, (1 / 2.5 - 1.0 / 4) / (1 - 1.0 / 4));
}

TEST(Report, Imbalance) {
  // Compute times 4, 2, 2, 4: mean 3, max 4, deviations of 1 each so a standard deviation of 1.
  const HandBuiltRun run;
  const Report r = make_report(run.scenario, run.plan, run.result);
  EXPECT_DOUBLE_EQ(r.imbalance_max_over_mean, 4.0 / 3.0);
  EXPECT_DOUBLE_EQ(r.imbalance_cv, 1.0 / 3.0);
}

TEST(Report, BalancedComputeHasNoImbalance) {
  HandBuiltRun run;
  for (auto& t : run.result.ranks) {
    t = RankTimeline{};
    t.record(IntervalKind::Compute, 0, 8);
    t.finish = 8;
  }
  const Report r = make_report(run.scenario, run.plan, run.result);
  EXPECT_DOUBLE_EQ(r.imbalance_max_over_mean, 1.0);
  EXPECT_DOUBLE_EQ(r.imbalance_cv, 0.0);
  EXPECT_DOUBLE_EQ(r.parallel_fraction, 1.0);
  EXPECT_EQ(r.amdahl_limit, std::numeric_limits<double>::infinity());
  EXPECT_DOUBLE_EQ(r.idle_share, 0.0);
}

TEST(Report, OverheadAndIdle) {
  // Communication 1 + 1 + 2 + 0 = 4 GPU-s; idle (wait + tail) 3 + 5 + 4 + 4 = 16 GPU-s; of 4 x 8 GPU-s.
  const HandBuiltRun run;
  const Report r = make_report(run.scenario, run.plan, run.result);
  EXPECT_DOUBLE_EQ(r.communication_overhead, 4.0 / 32.0);
  EXPECT_DOUBLE_EQ(r.idle_share, 16.0 / 32.0);
  EXPECT_DOUBLE_EQ(r.time_lost_waiting, 16.0);
  EXPECT_DOUBLE_EQ(r.slowest_rank_excess, 8.0 - (6.0 + 6 + 4 + 8) / 4);
}

TEST(Report, PerRankBreakdown) {
  const HandBuiltRun run;
  const Report r = make_report(run.scenario, run.plan, run.result);
  ASSERT_EQ(r.ranks.size(), 4u);
  const double compute[] = {4, 2, 2, 4};
  const double communication[] = {1, 1, 2, 0};
  const double wait[] = {1, 3, 0, 4};
  const double finish[] = {6, 6, 4, 8};
  const int gpu[] = {2, 0, 3, 1};
  for (std::size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE(i);
    const RankMetrics& m = r.ranks[i];
    EXPECT_EQ(m.rank, static_cast<int>(i));
    EXPECT_EQ(m.node, gpu[i] / 2);
    EXPECT_EQ(m.local_gpu, gpu[i] % 2);
    EXPECT_EQ(m.samples, 250u);
    EXPECT_DOUBLE_EQ(m.compute, compute[i]);
    EXPECT_DOUBLE_EQ(m.communication, communication[i]);
    EXPECT_DOUBLE_EQ(m.wait, wait[i]);
    EXPECT_DOUBLE_EQ(m.finish, finish[i]);
    EXPECT_DOUBLE_EQ(m.tail_idle, 8.0 - finish[i]);
    EXPECT_DOUBLE_EQ(m.idle(), wait[i] + 8.0 - finish[i]);
    EXPECT_DOUBLE_EQ(m.busy() + m.idle(), r.makespan);
    EXPECT_EQ(m.bytes_sent, 100 * (i + 1));
    EXPECT_EQ(m.messages_sent, i);
  }
}

TEST(Report, ParallelFractionAndAmdahl) {
  // Compute: ranks 1 and 2 in [0,2) with rank 0, rank 0 alone in [2,4), rank 3 alone in [4,8): 6 of 12 s serial.
  const HandBuiltRun run;
  const Report r = make_report(run.scenario, run.plan, run.result);
  const double f = 1.0 - 6.0 / 12.0;
  EXPECT_DOUBLE_EQ(r.parallel_fraction, f);
  EXPECT_DOUBLE_EQ(r.amdahl_speedup_bound, 1.0 / ((1 - f) + f / 4));
  EXPECT_DOUBLE_EQ(r.amdahl_limit, 1.0 / (1 - f));
}

} // namespace
} // namespace partsim
