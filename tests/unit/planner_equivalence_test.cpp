// Data-parallel training is planned two ways: by the data-parallel planner (plan_model_training) and as the data = N
// case of the model-parallel planner. Until the first is removed, both must plan the same work: the same compute per
// rank, the same gradient bytes reduced, the same memory and FLOPs.
#include "partsim/input/json_file.hpp"
#include "partsim/plan/strategy.hpp"

#include "test_support.hpp"

#include <numeric>

namespace partsim {
namespace {

using nlohmann::json;

struct Totals {
  double compute = 0.0;               ///< flop at nominal peak, one rank, one iteration
  std::uint64_t data_bytes = 0;       ///< bytes of the data-parallel collectives, one rank, one iteration
  std::vector<std::uint64_t> buckets; ///< their sizes, in program order
  std::vector<int> streams;           ///< and streams
};

Totals totals(const Plan& plan, int rank) {
  Totals t;
  for (const Step& step : resolved_steps(plan, rank)) {
    if (const auto* c = std::get_if<ComputeStep>(&step)) t.compute += c->amount;
    if (const auto* c = std::get_if<CollectiveStep>(&step); c != nullptr && c->kind == CommKind::Data) {
      t.data_bytes += c->bytes;
      t.buckets.push_back(c->bytes);
      t.streams.push_back(c->stream);
    }
  }
  return t;
}

struct Case {
  const char* name;
  const char* recomputation;
  bool overlap;
};

class PlannerEquivalence : public ::testing::TestWithParam<Case> {};

TEST_P(PlannerEquivalence, DataParallelIsTheDataNCaseOfModelParallel) {
  json dp = read_json_file(test::source_dir() / "scenarios/gpt3-1.3b-dp-8xa100.json");
  dp["workload"]["recomputation"] = GetParam().recomputation;
  dp["workload"]["iterations"] = 1;
  dp["strategy"]["gradient_sync"]["overlap"] = GetParam().overlap;
  json mp = dp;
  mp["strategy"] = {{"kind", "model_parallel"}, {"data", 8}, {"gradient_sync", dp["strategy"]["gradient_sync"]}};

  const Plan a = build_plan(test::parse(dp));
  const Plan b = build_plan(test::parse(mp));
  ASSERT_EQ(a.ranks.size(), b.ranks.size());
  for (int rank : {0, 7}) {
    const Totals ta = totals(a, rank);
    const Totals tb = totals(b, rank);
    EXPECT_NEAR(ta.compute, tb.compute, 1e-9 * ta.compute) << "rank " << rank;
    EXPECT_EQ(ta.data_bytes, tb.data_bytes) << "rank " << rank;
    EXPECT_EQ(ta.buckets, tb.buckets) << "rank " << rank;
    EXPECT_EQ(ta.streams, tb.streams) << "rank " << rank;
    EXPECT_GT(ta.buckets.size(), 10u);
  }
  ASSERT_TRUE(a.memory.has_value());
  ASSERT_FALSE(b.stage_memory.empty());
  EXPECT_NEAR(a.memory->total(), b.stage_memory.front().total(), 1e-9 * a.memory->total());
  EXPECT_NEAR(a.model_flops_per_iteration, b.model_flops_per_iteration, 1e-9 * a.model_flops_per_iteration);
  EXPECT_NEAR(a.hardware_flops_per_iteration, b.hardware_flops_per_iteration, 1e-9 * a.hardware_flops_per_iteration);
  EXPECT_EQ(a.tokens_per_iteration, b.tokens_per_iteration);
  EXPECT_NEAR(a.baseline_amount, b.baseline_amount, 1e-9 * a.baseline_amount);
}

INSTANTIATE_TEST_SUITE_P(Cases, PlannerEquivalence,
                         ::testing::Values(Case{"selective_overlap", "selective", true},
                                           Case{"none_after_backward", "none", false},
                                           Case{"full_overlap", "full", true}),
                         [](const auto& info) { return std::string(info.param.name); });

} // namespace
} // namespace partsim
