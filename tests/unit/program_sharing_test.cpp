// Ranks of a class share one program (issue 17): a model-parallel plan stores the programs of the first data-parallel
// replica's ranks (of the first expert group's with expert parallelism), and every other rank runs its template's
// relabeled, with its own peers and groups. Checked step for step against the plan that builds every rank's own.
#include "partsim/plan/model_parallel.hpp"
#include "partsim/plan/placement.hpp"
#include "partsim/plan/strategy.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>

namespace partsim::test {
namespace {

/** A tiny decoder on `nodes` nodes of 8 GPUs, strategy model_parallel `strategy`. */
nlohmann::json sharing_scenario(nlohmann::json strategy, int nodes, int global_batch,
                                const nlohmann::json& model_extra = nlohmann::json::object(), int gpus_per_node = 8) {
  nlohmann::json extra = model_extra;
  extra["layers"] = 8;
  nlohmann::json doc = base_scenario(nodes, gpus_per_node);
  doc["cluster"]["gpu"] = "h100-sxm5-80gb";
  doc["workload"] = {{"kind", "model_training"},
                     {"model", tiny_transformer("tiny", 256, extra)},
                     {"global_batch", global_batch},
                     {"micro_batch", 1}};
  strategy["kind"] = "model_parallel";
  doc["strategy"] = std::move(strategy);
  return doc;
}

auto fields(const Step& step) {
  return std::visit(
      [&](const auto& s) {
        using S = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<S, ComputeStep>)
          return std::tuple{0, s.amount, static_cast<std::int64_t>(s.samples), static_cast<std::int64_t>(s.label), 0,
                            0, 0};
        else if constexpr (std::is_same_v<S, CollectiveStep>)
          return std::tuple{1,
                            static_cast<double>(s.bytes),
                            static_cast<std::int64_t>(s.group),
                            static_cast<std::int64_t>(s.op) * 1000 + static_cast<std::int64_t>(s.algorithm),
                            static_cast<int>(s.fidelity) * 100 + static_cast<int>(s.kind),
                            static_cast<int>(s.stream) * 100 + static_cast<int>(s.protocol),
                            s.channels * 1000 + s.root};
        else if constexpr (std::is_same_v<S, StreamSyncStep>)
          return std::tuple{2, 0.0, static_cast<std::int64_t>(s.pending), std::int64_t{0}, 0, 0, 0};
        else if constexpr (std::is_same_v<S, SendStep>)
          return std::tuple{3,
                            static_cast<double>(s.bytes),
                            static_cast<std::int64_t>(s.peer),
                            std::int64_t{0},
                            s.channel,
                            static_cast<int>(s.kind),
                            0};
        else if constexpr (std::is_same_v<S, RecvStep>)
          return std::tuple{
              4, 0.0, static_cast<std::int64_t>(s.peer), std::int64_t{0}, s.channel, static_cast<int>(s.kind), 0};
        else
          return std::tuple{5, s.seconds, std::int64_t{0}, std::int64_t{0}, 0, 0, 0};
      },
      step);
}

/** Plans `doc` with and without shared programs: the same steps for every rank, the same events, fewer stored. */
void expect_same_plans(const nlohmann::json& doc, int expected_templates) {
  const Scenario scenario = parse(doc);
  const auto& training = std::get<ModelTraining>(scenario.workload);
  const auto& mp = std::get<ModelParallel>(scenario.strategy);
  const Plan shared = plan_model_parallel(scenario, training, mp, true);
  const Plan own = plan_model_parallel(scenario, training, mp, false);
  ASSERT_EQ(shared.ranks.size(), own.ranks.size());
  int templates = 0;
  std::size_t template_steps = 0;
  for (std::size_t r = 0; r < shared.ranks.size(); ++r) {
    const int rank = static_cast<int>(r);
    templates += shared.ranks[r].like < 0 ? 1 : 0;
    if (shared.ranks[r].like < 0) template_steps += own.ranks[r].own_steps.size();
    EXPECT_EQ(own.ranks[r].like, -1);
    const std::vector<Step> a = resolved_steps(shared, rank);
    const std::vector<Step> b = resolved_steps(own, rank);
    ASSERT_EQ(a.size(), b.size()) << "rank " << rank;
    for (std::size_t k = 0; k < a.size(); ++k)
      ASSERT_EQ(fields(a[k]), fields(b[k])) << "rank " << rank << " step " << k;
    // Relabeled for the rank: it belongs to every group it meets, and its peers are in its own replica.
    for (const Step& step : a) {
      if (const auto* c = std::get_if<CollectiveStep>(&step)) {
        EXPECT_GE(position_in_group(shared, c->group, rank), 0) << "rank " << rank;
      }
      if (const auto* s = std::get_if<SendStep>(&step)) {
        EXPECT_EQ(coordinates_of(mp, s->peer).data, coordinates_of(mp, rank).data);
      }
    }
  }
  EXPECT_EQ(templates, expected_templates);
  EXPECT_EQ(shared.planned_messages, own.planned_messages);
  EXPECT_EQ(shared.planned_executions, own.planned_executions);
  EXPECT_EQ(shared.groups, own.groups);
  EXPECT_EQ(shared.stored_steps(), template_steps);
  EXPECT_LT(shared.stored_steps(), own.stored_steps());
}

TEST(ProgramSharing, ThreeDimensionalSplitStoresOneReplicasPrograms) {
  // Tensor 2 x pipeline 4 interleaved x data 4 over 4 nodes: the 8 ranks of replica 0 hold programs.
  expect_same_plans(sharing_scenario({{"tensor", 2},
                                      {"pipeline", 4},
                                      {"virtual_stages", 2},
                                      {"schedule", "interleaved"},
                                      {"data", 4},
                                      {"zero", 1},
                                      {"gradient_sync", {{"overlap", true}, {"overlap_param_gather", true}}}},
                                     4, 32),
                    8);
}

TEST(ProgramSharing, DataLoadingWaitsAreSharedWithTheirStages) {
  // The first and last stages wait for their data before each forward pass; every replica's ranks alike.
  nlohmann::json doc = sharing_scenario(
      {{"tensor", 2}, {"pipeline", 4}, {"virtual_stages", 2}, {"schedule", "interleaved"}, {"data", 4}}, 4, 32);
  doc["workload"]["data_loading"] = "1ms";
  expect_same_plans(doc, 8);
  const Scenario scenario = parse(doc);
  const Plan plan = build_plan(scenario);
  const auto& mp = std::get<ModelParallel>(scenario.strategy);
  for (std::size_t r = 0; r < plan.ranks.size(); ++r) {
    const std::vector<Step> steps = resolved_steps(plan, static_cast<int>(r));
    const auto waits = std::count_if(steps.begin(), steps.end(), [](const Step& step) {
      return std::holds_alternative<HostStep>(step) && std::get<HostStep>(step).seconds == 1e-3;
    });
    // 8 micro-batches per replica; the first stage loads its tokens in chunk 0, the last its labels in chunk 1.
    const int stage = coordinates_of(mp, static_cast<int>(r)).pipeline;
    EXPECT_EQ(waits, stage == 0 || stage == 3 ? 8 : 0) << "rank " << r;
  }
}

TEST(ProgramSharing, ContextRingPeersAndGroupsAreRelabeled) {
  for (const char* comm : {"p2p", "all_gather"})
    expect_same_plans(
        sharing_scenario({{"tensor", 2}, {"context", 2}, {"pipeline", 2}, {"data", 4}, {"context_comm", comm}}, 4, 8,
                         {{"kv_heads", 2}}),
        8);
}

TEST(ProgramSharing, ExpertGroupsShareByPositionInTheExpertGroup) {
  // Data 8 with expert groups of 4: each position of the first expert group routes its own share of the tokens.
  expect_same_plans(
      sharing_scenario({{"data", 8}, {"expert", 4}, {"zero", 1}}, 1, 8, {{"experts", {{"count", 8}, {"top_k", 2}}}}),
      4);
}

TEST(ProgramSharing, ZeroThreeAndTiedEmbeddingsAcrossStages) {
  expect_same_plans(sharing_scenario({{"data", 16}, {"zero", 3}}, 2, 16), 1);
  expect_same_plans(sharing_scenario({{"pipeline", 2}, {"data", 8}, {"zero", 1}}, 2, 16, {{"tied_embeddings", true}}),
                    2);
}

TEST(ProgramSharing, ARankWhoseGroupsLieDifferentlyKeepsItsOwnProgram) {
  // Tensor 4 x data 3 on 2 nodes of 6 GPUs: replica 1's tensor group (GPUs 4-7) straddles the nodes, where replica
  // 0's and 2's lie in one node, so its algorithm choices may differ: its 4 ranks build their own programs.
  expect_same_plans(sharing_scenario({{"tensor", 4}, {"data", 3}}, 2, 3, nlohmann::json::object(), 6), 8);
}

} // namespace
} // namespace partsim::test
