// Search spaces and points: constraints, derived values, the space file, invalid points by reason, memory pruning,
// metrics, ranking and the Pareto front (no simulation: the CLI tests run searches end to end).
#include "partsim/batch/search.hpp"
#include "partsim/common/error.hpp"
#include "partsim/input/json_file.hpp"
#include "partsim/plan/strategy.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <map>
#include <sstream>

namespace partsim {
namespace {

using nlohmann::json;
using test::input_error;

json llama70b() {
  return read_json_file(test::source_dir() / "scenarios" / "llama3-70b-3d-64xh100.json");
}

std::vector<SearchRow> classify_all(const json& scenario, SearchSpace space) {
  std::vector<SearchRow> rows;
  for (const SweepPoint& p : expand_sweep(space.axes))
    rows.push_back(classify_point(scenario, "llama.json", space, p, test::source_dir()));
  return rows;
}

std::map<PointStatus, int> statuses(const std::vector<SearchRow>& rows) {
  std::map<PointStatus, int> out;
  for (const SearchRow& r : rows) ++out[r.status];
  return out;
}

TEST(SearchSpace, ConstraintsCompareProductsOfPointersAndNumbers) {
  const json doc{{"strategy", {{"tensor", 8}, {"pipeline", 4}}}, {"cluster", {{"gpus_per_node", 8}}}};
  SearchSpace space;
  space.constraints.push_back(parse_constraint("/strategy/tensor <= /cluster/gpus_per_node", "--constraint", ""));
  EXPECT_EQ(broken_constraint(space, doc), std::nullopt);
  space.constraints.push_back(parse_constraint("/strategy/tensor * /strategy/pipeline divides 64", "c", ""));
  EXPECT_EQ(broken_constraint(space, doc), std::nullopt);
  space.constraints.push_back(parse_constraint("/strategy/tensor*/strategy/pipeline*2 < 64", "c", ""));
  EXPECT_EQ(broken_constraint(space, doc), std::optional<std::size_t>(2)) << "8 x 4 x 2 = 64 is not below 64";
  space.constraints.erase(space.constraints.begin() + 2);
  space.constraints.push_back(parse_constraint("/strategy/pipeline divides 6", "c", ""));
  EXPECT_EQ(broken_constraint(space, doc), std::optional<std::size_t>(2));
}

TEST(SearchSpace, BadConstraintsAndDerivedValuesAreInputErrors) {
  EXPECT_EQ(input_error([] { parse_constraint("/strategy/tensor 8", "--constraint", ""); }).source(), "--constraint");
  EXPECT_EQ(input_error([] { parse_constraint("/strategy/tensor <= eight", "f.json", "/constraints/0"); }).pointer(),
            "/constraints/0");
  EXPECT_EQ(input_error([] { parse_constraint("<= 8", "c", ""); }).source(), "c");
  EXPECT_EQ(input_error([] { parse_derived("strategy/data=default", "--derive", ""); }).source(), "--derive");
  EXPECT_EQ(input_error([] { parse_derived("/workload/global_batch=", "--derive", ""); }).source(), "--derive");
  // A pointer the point's scenario does not have is a mistake of the space, not an invalid point.
  SearchSpace space;
  space.constraints.push_back(parse_constraint("/strategy/virtual <= 2", "--constraint", ""));
  EXPECT_NE(std::string(input_error([&] { broken_constraint(space, json::object()); }).what()).find("absent"),
            std::string::npos);
}

TEST(SearchSpace, TheSpaceFileNamesTheFileAndPointerOfEveryMistake) {
  const auto error = [](const json& document) { return input_error([&] { parse_search_space(document, "s.json"); }); };
  EXPECT_EQ(error(json{{"axis", json::object()}}).pointer(), "/axis");
  EXPECT_EQ(error(json{{"axes", {{"/strategy/tensor", 4}}}}).pointer(), "/axes/~1strategy~1tensor");
  EXPECT_EQ(error(json{{"axes", {{"strategy", {1}}}}}).pointer(), "/axes/strategy");
  EXPECT_EQ(error(json{{"constraints", {"/a < 1", 3}}}).pointer(), "/constraints/1");
  EXPECT_EQ(error(json{{"derived", {{"/strategy/data", 4}}}}).pointer(), "/derived/~1strategy~1data");
  EXPECT_EQ(error(json::array()).source(), "s.json");
  const SearchSpace space = parse_search_space(
      json::parse(R"({"description": "d", "axes": {"/strategy/tensor": [1, 2], "/workload/recomputation": ["full"]},
                     "set": {"/workload/global_batch": 128}, "derived": {"/strategy/data": "default"},
                     "constraints": ["/strategy/tensor <= 8"]})"),
      "s.json");
  ASSERT_EQ(space.axes.size(), 2U);
  EXPECT_EQ(space.axes[0].pointer, "/strategy/tensor");
  EXPECT_EQ(space.axes[1].labels, std::vector<std::string>{"full"});
  ASSERT_EQ(space.derived.size(), 1U);
  EXPECT_FALSE(space.derived[0].product.has_value());
  EXPECT_EQ(space.sets.at(0).value, 128);
  // An axis that is also derived is refused.
  SearchSpace more;
  more.axes.push_back(parse_vary("/strategy/data=1,2"));
  SearchSpace merged = space;
  const InputError both = input_error([&] { merge_search_space(merged, more); });
  EXPECT_EQ(both.source(), "s.json");
  EXPECT_EQ(both.pointer(), "/derived/~1strategy~1data");
}

TEST(SearchSpace, DerivedValuesFollowTheAxisValues) {
  SearchSpace space;
  space.axes.push_back(parse_vary("/strategy/tensor=2,4"));
  space.derived.push_back(parse_derived("/workload/global_batch=/strategy/tensor * 16", "--derive", ""));
  space.derived.push_back(parse_derived("/strategy/data=default", "--derive", ""));
  const json scenario = llama70b();
  const std::vector<SweepPoint> points = expand_sweep(space.axes);
  const std::vector<Override> o = point_overrides(scenario, space, points[1]);
  ASSERT_EQ(o.size(), 3U);
  EXPECT_EQ(o[1].pointer, "/workload/global_batch");
  EXPECT_EQ(o[1].value, json(64)) << "an integer, not 64.0";
  EXPECT_TRUE(o[2].remove);
  json document = scenario;
  apply_overrides(document, o);
  EXPECT_FALSE(document["strategy"].contains("data"));
  EXPECT_EQ(parse_scenario(document, "s", test::source_dir()).strategy.index(), 2U);
  EXPECT_EQ(std::get<ModelParallel>(parse_scenario(document, "s", test::source_dir()).strategy).data, 4)
      << "64 GPUs / (tensor 4 x the scenario's pipeline 4)";
}

TEST(SearchSpace, TheDataDegreeIsDerivedWhenTheSplitVariesAndNothingGivesIt) {
  const json scenario = llama70b(); // gives /strategy/data 2
  SearchSpace space;
  space.axes.push_back(parse_vary("/strategy/tensor=2,4,8")); // 1 is refused: sequence parallelism needs 2
  space.axes.push_back(parse_vary("/strategy/pipeline=2,4,8"));
  SearchSpace fixed = space;
  derive_data_degree(space, scenario);
  ASSERT_EQ(space.derived.size(), 1U);
  EXPECT_EQ(space.derived[0].pointer, "/strategy/data");
  EXPECT_EQ(space.notes.size(), 1U);
  // Every product is now valid; without the derived degree all but tensor x pipeline = 32 are refused, counted under
  // one reason.
  const auto derived = statuses(classify_all(scenario, space));
  EXPECT_EQ(derived.count(PointStatus::Invalid), 0U);
  const std::vector<SearchRow> rows = classify_all(scenario, fixed);
  const std::vector<InvalidReason> reasons = count_invalid(rows);
  ASSERT_EQ(reasons.size(), 1U) << reasons[0].reason;
  EXPECT_EQ(reasons[0].count, 7U) << "9 points, 2 of them with tensor x pipeline = 32";
  EXPECT_EQ(reasons[0].reason.rfind("/strategy: ", 0), 0U) << reasons[0].reason;
  EXPECT_EQ(reasons[0].reason.find_first_of("0123456789"), std::string::npos) << reasons[0].reason;
  EXPECT_EQ(reasons[0].example, 0U);
  // An axis or a --set of the data degree keeps it.
  SearchSpace given = fixed;
  given.sets.push_back({"/strategy/data", 4});
  derive_data_degree(given, scenario);
  EXPECT_TRUE(given.derived.empty());
}

TEST(SearchSpace, InvalidPointsAreCountedByReasonAndConstraintsExcludeBeforeValidation) {
  const json scenario = llama70b(); // interleaved schedule, 5 virtual stages, 80 layers, 64 heads, 8 kv heads
  SearchSpace space;
  space.axes.push_back(parse_vary("/strategy/tensor=1,3,8,16"));
  space.axes.push_back(parse_vary("/strategy/pipeline=1,2,4,32"));
  space.constraints.push_back(parse_constraint("/strategy/tensor <= /cluster/gpus_per_node", "--constraint", ""));
  derive_data_degree(space, scenario);
  const std::vector<SearchRow> rows = classify_all(scenario, space);
  const auto count = statuses(rows);
  EXPECT_EQ(count.at(PointStatus::Excluded), 4) << "tensor 16 > 8 GPUs per node, whatever the pipeline";
  std::map<std::string, std::size_t> reasons;
  for (const InvalidReason& r : count_invalid(rows)) reasons[r.reason.substr(0, r.reason.find(':'))] += r.count;
  EXPECT_EQ(reasons["/strategy"], 5U) << "tensor 3 x any pipeline, 8 x 32: the product does not divide 64 GPUs";
  EXPECT_EQ(reasons["/strategy/schedule"], 2U) << "interleaved with pipeline 1 (tensor 1 and 8)";
  EXPECT_EQ(reasons["/strategy/sequence_parallel"], 2U) << "tensor 1 (pipeline 2 and 4)";
  EXPECT_EQ(reasons["/strategy/pipeline"], 1U) << "32 x 5 virtual stages > 80 layers (tensor 1)";
  EXPECT_EQ(reasons.size(), 4U);
  EXPECT_EQ(count.at(PointStatus::Simulated), 2) << "tensor 8 x pipeline 2 and 4";
  for (const SearchRow& r : rows) {
    if (r.status == PointStatus::Excluded) {
      EXPECT_EQ(r.reason, "/strategy/tensor <= /cluster/gpus_per_node");
    }
  }
}

TEST(SearchSpace, InvalidReasonsDropThePointsFiguresOnly) {
  EXPECT_EQ(invalid_reason("/strategy", "data x tensor x pipeline (2 x 8 x 4 = 64) is not the GPU count 128."),
            "/strategy: data x tensor x pipeline (N x N x N = N) is not the GPU count N.");
  EXPECT_EQ(invalid_reason("/cluster/gpu", "h100-sxm5-80gb needs 3.5e10 bytes, 1,024 GPUs"),
            "/cluster/gpu: h100-sxm5-80gb needs N bytes, N GPUs");
  EXPECT_EQ(invalid_reason("", "llama3-70b: 2.5 GiB"), "llama3-70b: N GiB");
}

TEST(SearchSpace, MemoryPruningIsThePlannersMemoryModel) {
  const json scenario = llama70b();
  SearchSpace space;
  space.axes.push_back(parse_vary("/strategy/tensor=2,4,8"));
  space.axes.push_back(parse_vary("/strategy/pipeline=2,4"));
  space.axes.push_back(parse_vary("/strategy/zero=0,1"));
  derive_data_degree(space, scenario);
  const std::vector<SearchRow> rows = classify_all(scenario, space);
  int pruned = 0;
  int fit = 0;
  for (const SearchRow& r : rows) {
    ASSERT_NE(r.status, PointStatus::Invalid) << r.detail;
    json document = scenario;
    apply_overrides(document, r.overrides);
    const Plan plan = build_plan(parse_scenario(document, "s", test::source_dir()));
    ASSERT_TRUE(plan.memory && r.memory);
    EXPECT_EQ(plan.memory->total(), r.memory->total()) << "point " << r.point.index;
    EXPECT_EQ(r.status == PointStatus::OutOfMemory, !plan.memory->fits()) << "point " << r.point.index;
    (r.status == PointStatus::OutOfMemory ? pruned : fit) += 1;
  }
  EXPECT_GT(pruned, 0) << "the space must have points that do not fit";
  EXPECT_GT(fit, 0);
}

TEST(SearchSpace, TheFastFidelityMakesEveryCollectiveAnalytic) {
  json doc = llama70b();
  std::vector<Override> fast = fast_fidelity_overrides(doc);
  apply_overrides(doc, fast);
  EXPECT_EQ(doc["strategy"]["gradient_sync"], json({{"fidelity", "analytic"}}));
  EXPECT_EQ(doc["strategy"]["tensor_collectives"], json({{"fidelity", "analytic"}, {"granularity", "pass"}}));
  EXPECT_NO_THROW(parse_scenario(doc, "s", test::source_dir()));
  json ring = llama70b();
  ring["strategy"]["gradient_sync"] = "ring_allreduce";
  apply_overrides(ring, fast_fidelity_overrides(ring));
  EXPECT_EQ(ring["strategy"]["gradient_sync"]["algorithm"], "ring");
  json none = llama70b();
  none["strategy"]["gradient_sync"] = "none";
  apply_overrides(none, fast_fidelity_overrides(none));
  EXPECT_EQ(none["strategy"]["gradient_sync"], "none");
  json collective = json{{"strategy", {{"kind", "collective"}}}};
  EXPECT_EQ(fast_fidelity_overrides(collective).at(0).pointer, "/strategy/fidelity");
}

TEST(SearchMetrics, NamedMetricsAndReportPointers) {
  EXPECT_EQ(parse_search_metric("throughput", "--rank-by").goal, Goal::Maximise);
  EXPECT_EQ(parse_search_metric("makespan", "--rank-by").goal, Goal::Minimise);
  EXPECT_TRUE(parse_search_metric("time_to_train", "--rank-by").per_token_budget);
  // Budgets in time, money and energy: tokens / rate, cost per million tokens x tokens / 1e6, J per token x tokens.
  const json report = {{"summary", {{"tokens_per_s", 2.0e6}}},
                       {"cost", {{"per_million_tokens", 0.5}}},
                       {"energy", {{"per_token_j", 0.75}}}};
  const double tokens = 1e12;
  EXPECT_DOUBLE_EQ(search_metric_value(parse_search_metric("time_to_train", "x"), report, "r", tokens), 5e5);
  EXPECT_DOUBLE_EQ(search_metric_value(parse_search_metric("cost_to_train", "x"), report, "r", tokens), 5e5);
  EXPECT_DOUBLE_EQ(search_metric_value(parse_search_metric("energy_to_train", "x"), report, "r", tokens), 7.5e11);
  EXPECT_DOUBLE_EQ(search_metric_value(parse_search_metric("cost_per_million_tokens", "x"), report, "r", tokens), 0.5);
  EXPECT_DOUBLE_EQ(search_metric_value(parse_search_metric("energy_per_token", "x"), report, "r", tokens), 0.75);
  for (const char* name : {"time_to_train", "cost_to_train", "energy_to_train"})
    EXPECT_TRUE(parse_search_metric(name, "x").needs_tokens()) << name;
  EXPECT_FALSE(parse_search_metric("cost_per_million_tokens", "x").needs_tokens());
  // A point whose report has no cost (a GPU profile without power figures) names the figure it lacks.
  EXPECT_EQ(
      input_error([&] {
        search_metric_value(parse_search_metric("cost_to_train", "x"), json{{"summary", json::object()}}, "r", tokens);
      }).pointer(),
      "/cost/per_million_tokens");
  const SearchMetric idle = parse_search_metric("/summary/idle_share:min", "--rank-by");
  EXPECT_EQ(idle.pointers, std::vector<std::string>{"/summary/idle_share"});
  EXPECT_EQ(idle.goal, Goal::Minimise);
  EXPECT_EQ(input_error([] { parse_search_metric("speed", "--rank-by"); }).source(), "--rank-by");
  EXPECT_EQ(input_error([] { parse_search_metric("/summary/mfu:best", "--pareto"); }).source(), "--pareto");
}

SearchRow simulated(std::size_t index, double rank_value, double pareto_value, std::optional<double> faithful = {}) {
  SearchRow r;
  r.point.index = index;
  r.fast = SearchFigures{};
  r.fast->rank_value = rank_value;
  r.fast->pareto_value = pareto_value;
  if (faithful) {
    r.faithful = r.fast;
    r.faithful->rank_value = *faithful;
  }
  return r;
}

TEST(SearchMetrics, RefinedPointsRankFirstThenTheFastOnesTiesByIndex) {
  const SearchMetric throughput = parse_search_metric("throughput", "--rank-by");
  std::vector<SearchRow> rows{simulated(0, 10, 1), simulated(1, 30, 2), simulated(2, 20, 4), simulated(3, 30, 8)};
  rows.push_back(SearchRow{});
  rows.back().status = PointStatus::Invalid;
  EXPECT_EQ(refine_candidates(rows, throughput, 2), (std::vector<std::size_t>{1, 3}));
  rows[1].faithful = rows[1].fast;
  rows[1].faithful->rank_value = 15;
  rows[3].faithful = rows[3].fast;
  rows[3].faithful->rank_value = 25;
  EXPECT_EQ(rank_rows(rows, throughput), (std::vector<std::size_t>{3, 1, 2, 0}));
  EXPECT_EQ(rank_rows(rows, parse_search_metric("makespan", "--rank-by")), (std::vector<std::size_t>{1, 3, 0, 2}));
}

TEST(SearchMetrics, TheParetoFrontKeepsThePointsNoOtherBeatsOnBoth) {
  const SearchMetric throughput = parse_search_metric("throughput", "--rank-by");
  const SearchMetric gpus = parse_search_metric("gpus", "--pareto");
  // (throughput, gpus): 1 and 3 dominate 0 and 2; 4 ties 1 on both (kept: neither is better on one).
  std::vector<SearchRow> rows{simulated(0, 10, 64), simulated(1, 20, 64), simulated(2, 25, 256), simulated(3, 40, 128),
                              simulated(4, 20, 64)};
  EXPECT_EQ(pareto_front(rows, throughput, gpus), (std::vector<std::size_t>{1, 4, 3}));
}

} // namespace
} // namespace partsim
