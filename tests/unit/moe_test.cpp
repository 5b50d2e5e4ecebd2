// Mixture of experts: the published models' parameter counts, the routed experts' flops, the routing's shares and
// loads, the plans of expert parallelism (all-to-alls, expert-data groups, per-rank loads), memory, input errors,
// and one simulation whose traffic is checked against the all-to-all's closed form.
#include "partsim/input/workload_library.hpp"
#include "partsim/model/expert_routing.hpp"
#include "partsim/model/transformer.hpp"
#include "partsim/plan/sharded_memory.hpp"
#include "partsim/plan/strategy.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace partsim::test {
namespace {

TransformerModel library_model(const std::string& name) {
  const WorkloadSpec spec = load_workload(source_dir(), name, "test", "/workload/model");
  return TransformerModel(std::get<TransformerConfig>(spec.config));
}

TEST(MixtureOfExperts, ParameterCountsMatchThePublishedModels) {
  // Mixtral 8x7B: 46.7B in total, 12.9B active per token (Mistral AI's announcement; arXiv:2401.04088).
  const TransformerModel mixtral = library_model("mixtral-8x7b");
  EXPECT_NEAR(mixtral.parameters() / 1e9, 46.7, 0.05);
  EXPECT_NEAR(mixtral.active_parameters() / 1e9, 12.9, 0.05);
  // Qwen3-30B-A3B: "30.5B in total and 3.3B activated" (model card; one decimal, truncated). The per-head query/key
  // norms (256 weights a layer) are not modelled.
  const TransformerModel qwen = library_model("qwen3-30b-a3b");
  EXPECT_EQ(std::floor(qwen.parameters() / 1e8), 305.0);
  EXPECT_EQ(std::floor(qwen.active_parameters() / 1e8), 33.0);
  // gpt-oss-120b: 116.83B in total, 5.13B active per token counted without the unembedding (its 201,088 x 2,880
  // LM head; model card Table 1). The attention sinks (64 logits a layer) are not modelled.
  const TransformerModel oss = library_model("gpt-oss-120b");
  EXPECT_NEAR(oss.parameters() / 1e9, 116.83, 0.01);
  EXPECT_NEAR((oss.active_parameters() - 201088.0 * 2880.0) / 1e9, 5.13, 0.01);
  // A dense model's active parameters are all of them.
  const TransformerModel llama = library_model("llama3-8b");
  EXPECT_DOUBLE_EQ(llama.active_parameters(), llama.parameters());
  EXPECT_DOUBLE_EQ(llama.expert_parameters(), 0.0);
}

/** The routed experts' forward flops and weights in one layer's ops on a rank. */
std::pair<double, double> routed_experts(const TransformerModel& model, const TensorSplit& split) {
  double flops = 0.0;
  double weights = 0.0;
  for (const ComputeOp& op : model.layer_ops(1, split))
    if (op.gemm && op.name.starts_with("expert_")) {
      flops += op.forward_flops;
      weights += op.weight_elements;
    }
  return {flops, weights};
}

TEST(MixtureOfExperts, RoutedExpertsComputeWhatTheActiveExpertsWouldDensely) {
  // Mixtral (no biases), one sequence of 32,768 tokens: the routed experts' three GEMMs (gate, up, down) hold
  // 2·t·k·3·h·f flop under uniform routing, whether the rank has all 8 experts or one; a rank holds E / EP of them.
  const TransformerModel mixtral = library_model("mixtral-8x7b");
  const double t = 32768.0;
  const double h = 4096.0;
  const double f = 14336.0;
  for (const int ep : {1, 2, 8}) {
    const auto [flops, weights] = routed_experts(mixtral, TensorSplit{1, false, ep});
    EXPECT_DOUBLE_EQ(flops, 2.0 * t * 2.0 * 3.0 * h * f) << "expert " << ep;
    EXPECT_DOUBLE_EQ(weights, 8.0 / ep * 3.0 * h * f) << "expert " << ep;
  }
  // A rank whose experts get 1.5 times the uniform share of copies computes 1.5 times as much.
  EXPECT_DOUBLE_EQ(routed_experts(mixtral, TensorSplit{1, false, 8, 1.5}).first, 1.5 * 2.0 * t * 2.0 * 3.0 * h * f);
  // Sequence parallelism over 4 tensor ranks: each routes a quarter of the tokens.
  EXPECT_DOUBLE_EQ(routed_experts(mixtral, TensorSplit{4, true, 8}).first, 2.0 * t / 4 * 2.0 * 3.0 * h * f);
}

TEST(ExpertRouting, UniformLoadsEveryRankAlikeAndZipfSkewsIt) {
  const LayerRouting u = route_layer(ExpertRouting{}, 8, 4, 0, 1);
  for (const double load : u.rank_load) EXPECT_DOUBLE_EQ(load, 1.0);
  EXPECT_DOUBLE_EQ(u.dropped, 0.0);

  ExpertRouting zipf{ExpertDistribution::Zipf, 1.0, std::nullopt};
  const LayerRouting z = route_layer(zipf, 8, 4, 0, 1);
  EXPECT_NEAR(std::accumulate(z.shares.begin(), z.shares.end(), 0.0), 1.0, 1e-12);
  std::vector<double> sorted = z.shares;
  std::sort(sorted.rbegin(), sorted.rend());
  double harmonic = 0.0;
  for (int r = 1; r <= 8; ++r) harmonic += 1.0 / r;
  for (int r = 1; r <= 8; ++r) EXPECT_NEAR(sorted[static_cast<std::size_t>(r - 1)], 1.0 / r / harmonic, 1e-15);
  EXPECT_NEAR(z.mean_load(), 1.0, 1e-12); // nothing dropped: the loads average the uniform share
  EXPECT_GT(z.max_load(), 1.0);
  // The same seed and layer: the same routing; other layers draw other permutations.
  EXPECT_EQ(route_layer(zipf, 8, 4, 0, 1).shares, z.shares);
  bool differs = false;
  for (int l = 1; l < 8; ++l) differs = differs || route_layer(zipf, 8, 4, l, 1).shares != z.shares;
  EXPECT_TRUE(differs);
  // Exponent 0 is uniform.
  zipf.zipf_exponent = 0.0;
  EXPECT_NEAR(route_layer(zipf, 8, 4, 3, 1).max_load(), 1.0, 1e-12);

  // Capacity factor 1: no expert takes more than its uniform share; the excess is dropped.
  ExpertRouting capped{ExpertDistribution::Zipf, 1.0, 1.0};
  const LayerRouting c = route_layer(capped, 8, 8, 0, 1);
  double excess = 0.0;
  for (const double share : z.shares) excess += std::max(0.0, share - 1.0 / 8);
  EXPECT_NEAR(c.dropped, excess, 1e-12);
  EXPECT_LE(c.max_load(), 1.0 + 1e-12);
  EXPECT_NEAR(c.mean_load(), 1.0 - excess, 1e-12);
}

/** Mixtral 8x7B on `gpus` H100s of one node at 4,096 tokens, strategy model_parallel `strategy`. */
nlohmann::json moe_scenario(nlohmann::json strategy, int gpus = 8, int global_batch = 8,
                            const std::string& model = "mixtral-8x7b") {
  nlohmann::json doc = base_scenario(1, gpus);
  doc["cluster"]["gpu"] = "h100-sxm5-80gb";
  doc["workload"] = {{"kind", "model_training"},
                     {"model", model},
                     {"sequence_length", 4096},
                     {"global_batch", global_batch},
                     {"micro_batch", 1}};
  strategy["kind"] = "model_parallel";
  doc["strategy"] = std::move(strategy);
  return doc;
}

struct Collectives {
  int count = 0;
  std::uint64_t bytes = 0;
  std::size_t group_size = 0;
};

Collectives collectives_of(const Plan& plan, int rank, CommKind kind, CollectiveOp op) {
  Collectives c;
  for (const Step& step : resolved_steps(plan, rank))
    if (const auto* s = std::get_if<CollectiveStep>(&step); s && s->kind == kind && s->op == op) {
      ++c.count;
      c.bytes += s->bytes;
      c.group_size = plan.groups[static_cast<std::size_t>(s->group)].size();
    }
  return c;
}

TEST(ExpertParallelPlan, TwoAllToAllsOfTheTokenCopiesPerLayerEachWay) {
  // Data 8 x expert 8, one micro-batch per replica: each of the 32 layers sends the rank's k·s·b copies of h bf16
  // values to their experts and back, forward and backward: 4 all-to-alls of 2·4096·4096·2 bytes on the 8 ranks.
  const Plan plan = build_plan(parse(moe_scenario({{"data", 8}, {"expert", 8}})));
  const Collectives a2a = collectives_of(plan, 0, CommKind::Expert, CollectiveOp::AllToAll);
  EXPECT_EQ(a2a.count, 32 * 4);
  EXPECT_EQ(a2a.bytes, std::uint64_t{32} * 4 * (2 * 4096 * 4096 * 2));
  EXPECT_EQ(a2a.group_size, 8u);
  // The all-to-alls run at the tensor collectives' fidelity.
  const Plan analytic =
      build_plan(parse(moe_scenario({{"data", 8}, {"expert", 8}, {"tensor_collectives", {{"fidelity", "analytic"}}}})));
  for (const Step& step : resolved_steps(analytic, 0))
    if (const auto* c = std::get_if<CollectiveStep>(&step); c && c->kind == CommKind::Expert) {
      EXPECT_EQ(c->fidelity, Fidelity::Analytic);
    }
  // Every expert is on one rank only: no expert-data group; the rest is reduced over the 8 replicas.
  for (const auto& group : plan.groups) EXPECT_TRUE(group.size() == 8u) << group.size();
  // Expert 1: all experts on every rank, no all-to-all; expert 2: groups of 2, and each expert's gradients reduced
  // over the 4 replicas that hold it, in buckets of the experts' own: 32 layers x 4 experts' weights, bf16.
  EXPECT_EQ(
      collectives_of(build_plan(parse(moe_scenario({{"data", 8}}))), 0, CommKind::Expert, CollectiveOp::AllToAll).count,
      0);
  const Scenario two = parse(moe_scenario({{"data", 8}, {"expert", 2}}));
  const Plan plan2 = build_plan(two);
  EXPECT_EQ(collectives_of(plan2, 0, CommKind::Expert, CollectiveOp::AllToAll).group_size, 2u);
  std::uint64_t expert_sync = 0;
  for (const Step& step : resolved_steps(plan2, 0))
    if (const auto* s = std::get_if<CollectiveStep>(&step);
        s && s->kind == CommKind::Data && plan2.groups[static_cast<std::size_t>(s->group)].size() == 4u)
      expert_sync += s->bytes;
  const TransformerModel model = std::get<ModelTraining>(two.workload).transformer();
  EXPECT_NEAR(static_cast<double>(expert_sync), 32.0 * model.expert_parameters(2) * 2.0, 64.0);
  EXPECT_DOUBLE_EQ(model.expert_parameters(2), 4.0 * 3.0 * 4096.0 * 14336.0);
}

TEST(ExpertParallelPlan, SkewedRoutingLoadsEachRankByItsExpertsShare) {
  // Zipf routing over expert 8 (one expert per rank): a rank's compute grows with its experts' share of the copies
  // over the layers, and averages what uniform routing gives (the GEMMs are near-linear in their rows here).
  const Plan uniform = build_plan(parse(moe_scenario({{"data", 8}, {"expert", 8}})));
  nlohmann::json doc = moe_scenario({{"data", 8}, {"expert", 8}});
  doc["workload"]["expert_routing"] = {{"distribution", "zipf"}, {"zipf_exponent", 1.2}};
  const Scenario scenario = parse(doc);
  const Plan skewed = build_plan(scenario);
  auto compute = [](const Plan& plan, int rank) {
    double sum = 0.0;
    for (const Step& step : resolved_steps(plan, rank))
      if (const auto* c = std::get_if<ComputeStep>(&step)) sum += c->amount;
    return sum;
  };
  std::vector<double> load(8, 0.0);
  for (int l = 0; l < 32; ++l) {
    const LayerRouting r =
        route_layer(std::get<ModelTraining>(scenario.workload).expert_routing, 8, 8, l, scenario.run.seed);
    for (int j = 0; j < 8; ++j) load[static_cast<std::size_t>(j)] += r.rank_load[static_cast<std::size_t>(j)] - 1.0;
  }
  double mean_difference = 0.0;
  double largest = 0.0;
  for (int j = 0; j < 8; ++j) {
    const double difference = compute(skewed, j) - compute(uniform, j);
    EXPECT_EQ(difference > 0.0, load[static_cast<std::size_t>(j)] > 0.0) << "rank " << j;
    mean_difference += difference / 8.0;
    largest = std::max(largest, std::abs(difference));
  }
  EXPECT_LT(std::abs(mean_difference), 0.02 * largest);
  EXPECT_NE(skewed.summary.find("zipf routing"), std::string::npos) << skewed.summary;
}

TEST(ExpertParallelPlan, FullRecomputationRerunsTheExpertsForward) {
  // A middle pipeline stage holds layers only: with full recomputation its backward passes compute exactly what they
  // computed without, plus its forward passes again (the experts' forward included, not their backward).
  auto plan_with = [](const char* recomputation) {
    nlohmann::json doc = moe_scenario({{"data", 2}, {"pipeline", 4}, {"expert", 2}});
    doc["workload"]["recomputation"] = recomputation;
    return build_plan(parse(doc));
  };
  const Plan none = plan_with("none");
  const Plan full = plan_with("full");
  auto compute = [](const Plan& plan, int rank, char pass) {
    double sum = 0.0;
    for (const Step& step : resolved_steps(plan, rank))
      if (const auto* c = std::get_if<ComputeStep>(&step); c && c->label > 0 && plan.labels[c->label][0] == pass)
        sum += c->amount;
    return sum;
  };
  const int rank = 2; // data 0 of stage 1 (tensor_first: rank = d + 2·p)
  ASSERT_EQ(none.stage_of_rank[rank], 1);
  EXPECT_NEAR(compute(full, rank, 'B'), compute(none, rank, 'B') + compute(none, rank, 'F'),
              1e-9 * compute(full, rank, 'B'));
  EXPECT_DOUBLE_EQ(compute(full, rank, 'F'), compute(none, rank, 'F'));
}

TEST(ExpertParallelMemory, RoutedExpertsShardOverTheExpertGroup) {
  const Scenario one = parse(moe_scenario({{"data", 8}}));
  const Scenario eight = parse(moe_scenario({{"data", 8}, {"expert", 8}, {"zero", 1}}));
  const auto& training = std::get<ModelTraining>(one.workload);
  const GpuProfile& gpu = one.cluster.gpu;
  const MemoryBreakdown m1 = model_parallel_memory(training, std::get<ModelParallel>(one.strategy), gpu, 0);
  const MemoryBreakdown m8 = model_parallel_memory(training, std::get<ModelParallel>(eight.strategy), gpu, 0);
  const TransformerModel model = training.transformer();
  const double experts = 32.0 * model.expert_parameters();
  EXPECT_DOUBLE_EQ(m1.parameters, model.parameters() * 2.0);
  EXPECT_NEAR(m8.parameters, (model.parameters() - experts * 7.0 / 8.0) * 2.0, 1.0);
  // ZeRO-1 shards the dense part's optimizer states over the 8 replicas; each expert has one replica, unsharded.
  const double state = m1.optimizer_states / model.parameters();
  EXPECT_NEAR(m8.optimizer_states, (model.parameters() - experts) * state / 8.0 + experts / 8.0 * state, 16.0);
}

TEST(ExpertParallelErrors, EachInvalidCombinationNamesItsKey) {
  const auto error_of = [](const nlohmann::json& doc) -> std::string {
    try {
      parse(doc);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of(moe_scenario({{"data", 8}, {"expert", 3}})).find("/strategy/expert"), std::string::npos);
  EXPECT_NE(error_of(moe_scenario({{"data", 2}, {"tensor", 4}, {"expert", 4}})).find("/strategy/expert"),
            std::string::npos);
  EXPECT_NE(error_of(moe_scenario({{"data", 2}, {"tensor", 4}})).find("/strategy/sequence_parallel"),
            std::string::npos);
  EXPECT_NE(error_of(moe_scenario({{"data", 8}, {"zero", 3}})).find("/strategy/zero"), std::string::npos);
  EXPECT_NE(error_of(moe_scenario({{"data", 8}, {"expert", 2}}, 8, 8, "llama3-8b")).find("has no experts"),
            std::string::npos);
  nlohmann::json doc = moe_scenario({{"data", 8}});
  doc["workload"]["expert_routing"] = {{"zipf_exponent", 1.0}};
  EXPECT_NE(error_of(doc).find("/workload/expert_routing/zipf_exponent"), std::string::npos);
  doc = moe_scenario({{"data", 8}}, 8, 8, "llama3-8b");
  doc["workload"]["expert_routing"] = {{"distribution", "zipf"}};
  EXPECT_NE(error_of(doc).find("/workload/expert_routing"), std::string::npos);
  doc = moe_scenario({{"data", 8}});
  doc["workload"]["model"] = "mixtral-8x7b";
  doc["workload"]["expert_routing"] = {{"distribution", "skewed"}};
  EXPECT_NE(error_of(doc).find("/workload/expert_routing/distribution"), std::string::npos);
}

TEST(ExpertParallelRun, TheReportGivesEachLayersLoadPerRank) {
  // Mixtral 8x7B, EP 8, Zipf routing: report.json's expert_routing has the 32 layers' loads on the 8 ranks of the
  // expert group, as the planner priced them (route_layer with the scenario's seed), and their summary.
  const nlohmann::json report = run_scenario_json(
      "mixtral-8x7b-ep-64xh100.json", {"/workload/expert_routing={\"distribution\":\"zipf\",\"zipf_exponent\":1}"});
  ASSERT_TRUE(report.contains("expert_routing")) << report.dump().substr(0, 400);
  const nlohmann::json& routing = report["expert_routing"];
  ASSERT_EQ(routing["layers"].size(), 32u);
  double mean_max = 0.0;
  double worst = 0.0;
  for (std::size_t l = 0; l < 32; ++l) {
    const nlohmann::json& layer = routing["layers"][l];
    EXPECT_EQ(layer["layer"], l);
    const LayerRouting expected =
        route_layer({ExpertDistribution::Zipf, 1.0, std::nullopt}, 8, 8, static_cast<std::int64_t>(l), 1);
    ASSERT_EQ(layer["rank_load"].size(), 8u);
    for (std::size_t r = 0; r < 8; ++r) EXPECT_DOUBLE_EQ(layer["rank_load"][r].get<double>(), expected.rank_load[r]);
    EXPECT_DOUBLE_EQ(layer["max_load"].get<double>(), expected.max_load());
    EXPECT_NEAR(layer["mean_load"].get<double>(), 1.0, 1e-12); // nothing dropped
    mean_max += expected.max_load() / 32.0;
    worst = std::max(worst, expected.max_load());
  }
  EXPECT_NEAR(routing["mean_max_load"].get<double>(), mean_max, 1e-12);
  EXPECT_DOUBLE_EQ(routing["worst_max_load"].get<double>(), worst);
  EXPECT_GT(worst, 1.5);
  // A dense model's report has no such section.
  EXPECT_FALSE(run_scenario_json("llama3-70b-3d-64xh100.json", {}).contains("expert_routing"));
}

TEST(ExpertParallelRun, RanksSendWhatTheAllToAllsClosedFormSays) {
  // A small mixture of experts on 4 GPUs, expert 4, no gradient synchronisation, every message simulated: each rank
  // sends (EP - 1) / EP of its 4 all-to-alls per layer and micro-batch, of b·s·k·h·2 bytes each, and receives as much.
  nlohmann::json doc = base_scenario(1, 4);
  doc["workload"] = {{"kind", "model_training"},
                     {"model", tiny_transformer("tiny-moe", 128, {{"experts", {{"count", 8}, {"top_k", 2}}}})},
                     {"global_batch", 8},
                     {"micro_batch", 1}};
  doc["strategy"] = {{"kind", "model_parallel"},
                     {"data", 4},
                     {"expert", 4},
                     {"gradient_sync", "none"},
                     {"tensor_collectives", {{"fidelity", "steps"}}}};
  const Outcome out = simulate_document(doc);
  ASSERT_FALSE(out.report.out_of_memory);
  ASSERT_EQ(out.report.ranks.size(), 4u);
  const double per_all_to_all = 128.0 * 2 * 256 * 2; // b·s·k·h bytes at bf16
  const double expected = 2 /* micro-batches */ * 2 /* layers */ * 4 * per_all_to_all * 3.0 / 4.0;
  for (const RankMetrics& m : out.report.ranks) {
    EXPECT_DOUBLE_EQ(static_cast<double>(m.bytes_sent), expected) << "rank " << m.rank;
    EXPECT_DOUBLE_EQ(static_cast<double>(m.bytes_received), expected) << "rank " << m.rank;
    EXPECT_GT(m.expert_exposed, 0.0);
    EXPECT_NEAR(m.busy() + m.idle(), out.report.makespan, 1e-9 * out.report.makespan);
  }
}

TEST(ExpertParallelRun, SkewedRoutingSendsEachExpertRankItsShareOfTheCopies) {
  // The same 4 GPUs with Zipf routing: a layer's dispatch sends rank q its chunk times q's load, the combine returns
  // as much (times the sender's load), and backward the same two the other way. Rank p therefore sends and receives
  // per layer, micro-batch and pass c ((n - 1) w_p + W - w_p) bytes twice over (c: the chunk, W: the layer's loads'
  // sum).
  nlohmann::json doc = base_scenario(1, 4);
  doc["workload"] = {{"kind", "model_training"},
                     {"model", tiny_transformer("tiny-moe", 128, {{"experts", {{"count", 8}, {"top_k", 2}}}})},
                     {"global_batch", 8},
                     {"micro_batch", 1},
                     {"expert_routing", {{"distribution", "zipf"}, {"zipf_exponent", 1.5}}}};
  doc["strategy"] = {{"kind", "model_parallel"},
                     {"data", 4},
                     {"expert", 4},
                     {"gradient_sync", "none"},
                     {"tensor_collectives", {{"fidelity", "steps"}}}};
  const Scenario scenario = parse(doc);
  const Plan plan = build_plan(scenario);
  ASSERT_EQ(plan.all_to_all_skews.size(), 4u); // two layers, each a dispatch and a combine
  const double c = 128.0 * 2 * 256 * 2 / 4;    // a rank's b·s·k·h bf16 bytes over 4 destinations
  std::vector<double> expected(4, 0.0);
  double busiest = 0.0;
  for (const LayerRouting& layer : plan.expert_routing) {
    double total = 0.0;
    for (const double w : layer.rank_load) total += w;
    for (std::size_t p = 0; p < 4; ++p)
      expected[p] += 2 /* micro-batches */ * 2 /* passes */ * c * (3 * layer.rank_load[p] + total - layer.rank_load[p]);
    busiest = std::max(busiest, layer.max_load());
  }
  ASSERT_GT(busiest, 1.3);
  const Outcome out = simulate_document(doc);
  ASSERT_EQ(out.report.ranks.size(), 4u);
  for (const RankMetrics& m : out.report.ranks) {
    const double want = expected[static_cast<std::size_t>(m.rank)];
    // Each of the rank's 48 messages (2 layers x 2 micro-batches x 2 passes x 2 all-to-alls x 3 peers) is rounded
    // to a whole byte.
    EXPECT_NEAR(static_cast<double>(m.bytes_sent), want, 48 * 0.5) << "rank " << m.rank;
    EXPECT_NEAR(static_cast<double>(m.bytes_received), want, 48 * 0.5) << "rank " << m.rank;
  }
}

TEST(ExpertParallelRun, SkewedAllToAllsTakeAsLongAtEveryFidelityAndLongerThanUniform) {
  // Mixtral 8x7B, EP 8 in a node, Zipf routing: the all-to-alls run unequal sizes as messages (steps), flows (flows)
  // or skewed_all_to_all_time (analytic), which agree within 2%; each waits for the busiest expert rank, so it takes
  // longer than the uniform all-to-all by about the busiest rank's mean load (report: 2.94x).
  auto a2a_time = [](const std::string& routing, const std::string& fidelity) {
    const nlohmann::json report = run_scenario_json(
        "mixtral-8x7b-ep-64xh100.json",
        {"/workload/expert_routing=" + routing, "/strategy/tensor_collectives={\"fidelity\":\"" + fidelity + "\"}"});
    for (const nlohmann::json& c : report.at("collectives"))
      if (c.at("operation") == "all_to_all") return c.at("mean_time_s").get<double>();
    ADD_FAILURE() << "no all-to-all at " << fidelity;
    return 0.0;
  };
  const std::string zipf = R"({"distribution":"zipf","zipf_exponent":1})";
  const double steps = a2a_time(zipf, "steps");
  const double flows = a2a_time(zipf, "flows");
  const double analytic = a2a_time(zipf, "analytic");
  EXPECT_NEAR(flows, steps, 0.02 * steps);
  EXPECT_NEAR(analytic, steps, 0.02 * steps);
  const double uniform = a2a_time(R"({"distribution":"uniform"})", "flows");
  EXPECT_GT(flows, 2.0 * uniform);
  EXPECT_LT(flows, 4.0 * uniform);
}

} // namespace
} // namespace partsim::test
