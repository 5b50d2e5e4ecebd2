// Mixture of experts: the published models' parameter counts, the routed experts' flops, the routing's shares and
// loads, the plans of expert parallelism (all-to-alls, expert-data groups, per-rank loads), memory, input errors,
// and one simulation whose traffic is checked against the all-to-all's closed form; expert tensor parallelism (the
// experts split over the tensor group: flops, weights, gathers, memory, errors, and its traffic's closed form);
// context parallelism of a mixture of experts (expert groups over data x context ranks); checkpoint sizes.
#include "partsim/input/workload_library.hpp"
#include "partsim/model/cost_model.hpp"
#include "partsim/model/expert_routing.hpp"
#include "partsim/model/memory.hpp"
#include "partsim/model/transformer.hpp"
#include "partsim/plan/model_parallel.hpp"
#include "partsim/plan/placement.hpp"
#include "partsim/plan/sharded_memory.hpp"
#include "partsim/plan/strategy.hpp"
#include "partsim/report/reliability.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <random>
#include <set>

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

  ExpertRouting zipf{ExpertDistribution::Zipf, 1.0, std::nullopt, {}};
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
  ExpertRouting capped{ExpertDistribution::Zipf, 1.0, 1.0, {}};
  const LayerRouting c = route_layer(capped, 8, 8, 0, 1);
  double excess = 0.0;
  for (const double share : z.shares) excess += std::max(0.0, share - 1.0 / 8);
  EXPECT_NEAR(c.dropped, excess, 1e-12);
  EXPECT_LE(c.max_load(), 1.0 + 1e-12);
  EXPECT_NEAR(c.mean_load(), 1.0 - excess, 1e-12);
}

nlohmann::json two_hop_document(const std::string& dispatch, const std::string& fidelity, int sequence = 128);

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

TEST(ExpertParallelPlan, TheDispatcherGathersEveryRanksCountsPerExpertBeforeEachForwardAllToAll) {
  // Megatron-Core's all-to-all dispatcher all-gathers each rank's copies per expert (8 int64 counts for Mixtral's 8
  // experts) over the 8 expert ranks before every MoE layer's forward dispatch: 32 all-gathers of 8 x 8 x 8 bytes,
  // each right before the layer's first all-to-all; the backward reuses the split sizes.
  const Plan plan = build_plan(parse(moe_scenario({{"data", 8}, {"expert", 8}})));
  const Collectives gathers = collectives_of(plan, 0, CommKind::Expert, CollectiveOp::AllGather);
  EXPECT_EQ(gathers.count, 32);
  EXPECT_EQ(gathers.bytes, std::uint64_t{32} * 8 * 8 * 8);
  EXPECT_EQ(gathers.group_size, 8u);
  const std::vector<Step> steps = resolved_steps(plan, 0);
  int before_dispatch = 0;
  for (std::size_t i = 0; i + 1 < steps.size(); ++i) {
    const auto* c = std::get_if<CollectiveStep>(&steps[i]);
    if (c == nullptr || c->kind != CommKind::Expert || c->op != CollectiveOp::AllGather) continue;
    const auto* next = std::get_if<CollectiveStep>(&steps[i + 1]);
    if (next != nullptr && next->op == CollectiveOp::AllToAll && next->kind == CommKind::Expert) ++before_dispatch;
  }
  EXPECT_EQ(before_dispatch, 32);
  // None without expert ranks, nor with DeepEP's two-hop dispatch (its layout exchange is inside its kernels).
  EXPECT_EQ(collectives_of(build_plan(parse(moe_scenario({{"data", 8}}))), 0, CommKind::Expert, CollectiveOp::AllGather)
                .count,
            0);
  EXPECT_EQ(collectives_of(build_plan(parse(two_hop_document("two_hop", "steps"))), 0, CommKind::Expert,
                           CollectiveOp::AllGather)
                .count,
            0);
  EXPECT_EQ(collectives_of(build_plan(parse(two_hop_document("direct", "steps"))), 0, CommKind::Expert,
                           CollectiveOp::AllGather)
                .count,
            2 * 2); // 2 micro-batches x 2 layers
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

TEST(ExpertParallel, TheAllToAllDispatcherSortsTheReceivedCopiesByLocalExpert) {
  // gpt-oss-120b (128 experts, top 4, h 2,880) over 8 expert ranks: each rank's 16 experts get the copies in
  // source-rank order; Megatron-Core's all-to-all dispatcher sorts them by local expert before the experts and
  // restores the order after: t·k rows of h each way, read once and written once, in both passes.
  const TransformerModel oss = library_model("gpt-oss-120b");
  const double t = static_cast<double>(oss.config().sequence_length);
  const double rows = t * 4.0 * 2880.0;
  TensorSplit split{1, false, 8};
  split.expert_sort = true;
  const std::vector<ComputeOp> ops = oss.layer_ops(1, split);
  auto find = [&](const std::string& name) {
    return std::find_if(ops.begin(), ops.end(), [&](const ComputeOp& op) { return op.name == name; });
  };
  const auto sort = find("expert_sort");
  const auto restore = find("expert_restore");
  ASSERT_NE(sort, ops.end());
  ASSERT_NE(restore, ops.end());
  EXPECT_LT(sort, find("expert_gate"));
  EXPECT_GT(restore, find("expert_down"));
  EXPECT_LT(restore, find("expert_unpermute"));
  for (const auto& op : {*sort, *restore}) {
    EXPECT_DOUBLE_EQ(op.input_elements, rows);
    EXPECT_DOUBLE_EQ(op.output_elements, rows);
    EXPECT_DOUBLE_EQ(op.forward_flops, 0.0);
    EXPECT_DOUBLE_EQ(op.weight_elements, 0.0);
    EXPECT_DOUBLE_EQ(op.forward_bytes(2.0), 2.0 * 2.0 * rows);
    EXPECT_DOUBLE_EQ(op.backward_bytes(2.0), 2.0 * 2.0 * rows); // the gradients through the inverse order
    EXPECT_EQ(op.module, LayerModule::None);                    // never rerun by selective recomputation
    EXPECT_TRUE(is_routed_expert_op(op));                       // priced with the rank's routed load
  }
  // Skewed load: the rank's share of the copies.
  split.expert_load = 1.5;
  for (const ComputeOp& op : oss.layer_ops(1, split)) {
    if (op.name == "expert_sort") {
      EXPECT_DOUBLE_EQ(op.input_elements, std::round(t * 4.0 * 1.5) * 2880.0);
    }
  }
  // Expert tensor parallelism: the gathered copies (sequence-parallel halves of the tokens, gathered over 2 ranks).
  TensorSplit et{2, true, 4};
  et.expert_tensor = 2;
  et.expert_sort = true;
  for (const ComputeOp& op : oss.layer_ops(1, et)) {
    if (op.name == "expert_sort") {
      EXPECT_DOUBLE_EQ(op.input_elements, 2.0 * (t / 2.0) * 4.0 * 2880.0);
    }
  }
  // No sort without the dispatcher's order, nor with one expert per rank (Mixtral's 8 over 8 ranks).
  auto has_sort = [](const TransformerModel& model, const TensorSplit& s) {
    const std::vector<ComputeOp> list = model.layer_ops(1, s);
    return std::any_of(list.begin(), list.end(), [](const ComputeOp& op) { return op.name == "expert_sort"; });
  };
  EXPECT_FALSE(has_sort(oss, TensorSplit{1, false, 8}));
  TensorSplit one{1, false, 8};
  one.expert_sort = true;
  EXPECT_FALSE(has_sort(library_model("mixtral-8x7b"), one));

  // The planner's split: the sort with direct dispatch over more than one expert rank, not with two-hop dispatch
  // (DeepEP's receiver permutes the tokens into expert order once, as the sender's permute is priced).
  ModelParallel mp;
  mp.tensor = 2;
  mp.sequence_parallel = true;
  mp.expert = 8;
  mp.expert_tensor = 2;
  mp.context = 2;
  const TensorSplit planned = layer_split(mp);
  EXPECT_EQ(planned.tensor, 2);
  EXPECT_TRUE(planned.sequence_parallel);
  EXPECT_EQ(planned.expert, 8);
  EXPECT_EQ(planned.expert_tensor, 2);
  EXPECT_EQ(planned.context, 2);
  EXPECT_TRUE(planned.expert_sort);
  mp.expert_dispatch = ExpertDispatch::TwoHop;
  EXPECT_FALSE(layer_split(mp).expert_sort);
  mp.expert_dispatch = ExpertDispatch::Direct;
  mp.expert = 1;
  EXPECT_FALSE(layer_split(mp).expert_sort);
}

TEST(ExpertParallelPlan, TheSortAddsItsTimeToEveryLayersExpertsEachPass) {
  // Mixtral over 2 expert ranks (4 experts each) against 8 (one each): the same routed rows and GEMM shapes (the
  // GEMMs compute-bound either way), so the forward compute differs by the sort and the restore alone, 2 x their
  // forward time per layer and micro-batch; the backward by theirs and by the 4 experts' weight gradients, each over
  // a quarter of the copies.
  auto plan_with = [](int expert) { return build_plan(parse(moe_scenario({{"data", 8}, {"expert", expert}}))); };
  const Plan two = plan_with(2);
  const Plan eight = plan_with(8);
  const Scenario scenario = parse(moe_scenario({{"data", 8}, {"expert", 2}}));
  const ModelTraining& training = std::get<ModelTraining>(scenario.workload);
  const GpuProfile& gpu = scenario.cluster.gpu;
  auto routed_time = [&](int expert, bool backward) {
    TensorSplit split{1, false, expert};
    split.expert_sort = true;
    double sum = 0.0;
    for (const ComputeOp& op : training.transformer().layer_ops(1, split))
      if (is_routed_expert_op(op)) sum += op_time(op, gpu, training.data_type, 2.0, backward);
    return sum;
  };
  double sort_forward = 0.0;
  TensorSplit split{1, false, 2};
  split.expert_sort = true;
  for (const ComputeOp& op : training.transformer().layer_ops(1, split))
    if (op.name == "expert_sort" || op.name == "expert_restore")
      sort_forward += op_time(op, gpu, training.data_type, 2.0, false);
  ASSERT_GT(sort_forward, 0.0);
  EXPECT_NEAR(routed_time(2, false) - routed_time(8, false), sort_forward, 1e-12);
  auto compute = [](const Plan& plan, char pass) {
    double sum = 0.0;
    for (const Step& step : resolved_steps(plan, 0))
      if (const auto* c = std::get_if<ComputeStep>(&step); c && c->label > 0 && plan.labels[c->label][0] == pass)
        sum += c->amount;
    return sum;
  };
  const double peak = gpu.peak(training.data_type);
  EXPECT_NEAR((compute(two, 'F') - compute(eight, 'F')) / peak, 32.0 * sort_forward, 1e-9 * compute(two, 'F') / peak);
  EXPECT_NEAR((compute(two, 'B') - compute(eight, 'B')) / peak, 32.0 * (routed_time(2, true) - routed_time(8, true)),
              1e-9 * compute(two, 'B') / peak);
}

TEST(ExpertParallel, EachExpertsWeightGradientReducesOverItsOwnCopies) {
  // gpt-oss-120b over 8 expert ranks: a rank's 16 experts share its 4096 x 4 copies, 1,024 each. Their forward and
  // input-gradient products tile all the rows side by side (the rate of one GEMM over them, as before), but each
  // expert's weight gradient reduces over its own 1,024 rows: 16 products of 2,880 x 2,880 x 1,024.
  const TransformerModel oss = library_model("gpt-oss-120b");
  const double t = static_cast<double>(oss.config().sequence_length);
  const std::vector<ComputeOp> ops = oss.layer_ops(1, TensorSplit{1, false, 8});
  const auto up = std::find_if(ops.begin(), ops.end(), [](const ComputeOp& op) { return op.name == "expert_up"; });
  ASSERT_NE(up, ops.end());
  ASSERT_TRUE(up->gemm.has_value());
  EXPECT_EQ(up->gemm->m, static_cast<std::int64_t>(t * 4.0));
  EXPECT_EQ(up->gemm->row_groups, 16);
  EXPECT_EQ(weight_gradient_shape(*up->gemm), (GemmShape{16, 2880, 2880, 1024}));
  for (const ComputeOp& op : ops) {
    if (op.gemm && !op.name.starts_with("expert_")) {
      EXPECT_EQ(op.gemm->row_groups, 1) << op.name;
    }
  }

  const Scenario scenario = parse(moe_scenario({{"data", 8}, {"expert", 8}}));
  const GpuProfile& gpu = scenario.cluster.gpu;
  ComputeOp whole = *up; // the same op as one product over all the rows
  whole.gemm->row_groups = 1;
  EXPECT_DOUBLE_EQ(op_time(*up, gpu, "bf16", 2.0, false), op_time(whole, gpu, "bf16", 2.0, false));
  const GemmBackwardTimes grouped = gemm_backward_times(*up, gpu, "bf16", 2.0);
  const GemmBackwardTimes single = gemm_backward_times(whole, gpu, "bf16", 2.0);
  EXPECT_DOUBLE_EQ(grouped.input_gradient, single.input_gradient);
  const double rate = gpu.peak("bf16") * gemm_efficiency(gpu, GemmShape{16, 2880, 2880, 1024}, "bf16");
  EXPECT_DOUBLE_EQ(grouped.weight_gradient,
                   kernel_time(gpu, 0.5 * up->backward_flops, rate, 0.5 * up->backward_bytes(2.0)));
  EXPECT_GT(grouped.weight_gradient, 1.05 * single.weight_gradient); // a shallower reduction runs slower

  // One expert per rank (Mixtral over 8 ranks) or a dense MLP: one product.
  for (const ComputeOp& op : library_model("mixtral-8x7b").layer_ops(1, TensorSplit{1, false, 8})) {
    if (op.gemm) {
      EXPECT_EQ(op.gemm->row_groups, 1) << op.name;
    }
  }
  // The shape's rounding: the nearest whole row count per group, at least one.
  EXPECT_EQ(weight_gradient_shape(GemmShape{2, 101, 8, 4, 2}), (GemmShape{4, 4, 8, 51}));
  EXPECT_EQ(weight_gradient_shape(GemmShape{1, 1, 8, 4, 4}), (GemmShape{4, 4, 8, 1}));
  EXPECT_EQ(weight_gradient_shape(GemmShape{3, 64, 8, 4}), (GemmShape{3, 4, 8, 64}));
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

/** The input error `doc` gets, or "" when it parses. */
std::string error_of(const nlohmann::json& doc) {
  try {
    parse(doc);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ExpertParallel, TheFusedPermuteReadsEachTokenOnceAndSumsItsCopiesBackward) {
  // gpt-oss-120b (top 4, h 2,880), one rank's 4,096 tokens. Unfused (index_select): the k copies' rows read and
  // written, 2k·t·h elements forward, and the scatter-add backward reads the k gradients and the saved copies,
  // 3k·t·h. Transformer Engine's moe_permute: each row read once and written k times, (1 + k)·t·h, and the
  // backward (moe_unpermute of the gradients) reads the k gradients and writes the row, (1 + k)·t·h.
  const TransformerConfig config = library_model("gpt-oss-120b").config();
  const double t = static_cast<double>(config.sequence_length);
  const double row = 2880.0;
  auto permute = [&](bool fused) {
    TransformerKernels kernels;
    kernels.fused_moe_permute = fused;
    const std::vector<ComputeOp> ops = TransformerModel(config, kernels).layer_ops(1, TensorSplit{1, false, 8});
    const auto it =
        std::find_if(ops.begin(), ops.end(), [](const ComputeOp& op) { return op.name == "expert_permute"; });
    EXPECT_NE(it, ops.end());
    return *it;
  };
  const ComputeOp unfused = permute(false);
  const ComputeOp fused = permute(true);
  EXPECT_DOUBLE_EQ(unfused.forward_bytes(2.0), 2.0 * 8.0 * t * row);
  EXPECT_DOUBLE_EQ(unfused.backward_bytes(2.0), 2.0 * 12.0 * t * row);
  EXPECT_DOUBLE_EQ(fused.forward_bytes(2.0), 2.0 * 5.0 * t * row);
  EXPECT_DOUBLE_EQ(fused.backward_bytes(2.0), 2.0 * 5.0 * t * row);
  EXPECT_DOUBLE_EQ(fused.forward_flops, 0.0);
  EXPECT_EQ(fused.module, LayerModule::None);
  EXPECT_FALSE(is_routed_expert_op(fused)); // the rank's own tokens, not its experts' load
  // Priced by its traffic at the profile's achieved bandwidth (no flops).
  nlohmann::json doc = moe_scenario({{"data", 8}});
  const GpuProfile gpu = parse(doc).cluster.gpu;
  EXPECT_DOUBLE_EQ(op_time(fused, gpu, "bf16", 2.0, false), kernel_time(gpu, 0.0, 1.0, 2.0 * 5.0 * t * row));
  EXPECT_DOUBLE_EQ(op_time(fused, gpu, "bf16", 2.0, true), kernel_time(gpu, 0.0, 1.0, 2.0 * 5.0 * t * row));
  EXPECT_DOUBLE_EQ(op_time(unfused, gpu, "bf16", 2.0, false), kernel_time(gpu, 0.0, 1.0, 2.0 * 8.0 * t * row));
  EXPECT_DOUBLE_EQ(op_time(unfused, gpu, "bf16", 2.0, true), kernel_time(gpu, 0.0, 1.0, 2.0 * 12.0 * t * row));
  // The scenario key: only for a model with experts, and the report names the choice.
  doc["workload"]["fused_moe_permute"] = true;
  const Scenario scenario = parse(doc);
  EXPECT_TRUE(std::get<ModelTraining>(scenario.workload).kernels.fused_moe_permute);
  EXPECT_NE(describe(std::get<ModelTraining>(scenario.workload).kernels).find("fused token permutation"),
            std::string::npos);
  EXPECT_FALSE(std::get<ModelTraining>(parse(moe_scenario({{"data", 8}})).workload).kernels.fused_moe_permute);
  doc = moe_scenario({{"data", 8}}, 8, 8, "llama3-8b");
  doc["workload"]["fused_moe_permute"] = true;
  EXPECT_NE(error_of(doc).find("/workload/fused_moe_permute"), std::string::npos);
  EXPECT_NE(error_of(doc).find("has no experts"), std::string::npos);
}

TEST(ExpertParallelErrors, EachInvalidCombinationNamesItsKey) {
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
        route_layer({ExpertDistribution::Zipf, 1.0, std::nullopt, {}}, 8, 8, static_cast<std::int64_t>(l), 1);
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

/** A tiny mixture of experts (2 layers of 256, 8 experts, top-2, 128 tokens) on `gpus` GPUs of one node, split as
 * `strategy` says (model_parallel), with no gradient synchronisation and every message simulated. */
nlohmann::json tiny_moe_run(int gpus, int global_batch, nlohmann::json strategy) {
  nlohmann::json doc = base_scenario(1, gpus);
  doc["workload"] = {{"kind", "model_training"},
                     {"model", tiny_transformer("tiny-moe", 128, {{"experts", {{"count", 8}, {"top_k", 2}}}})},
                     {"global_batch", global_batch},
                     {"micro_batch", 1}};
  strategy["kind"] = "model_parallel";
  strategy["gradient_sync"] = "none";
  strategy["tensor_collectives"] = {{"fidelity", "steps"}};
  doc["strategy"] = std::move(strategy);
  return doc;
}

/** The report of `doc` run by the CLI (a child process: its own SimGrid engine). */
nlohmann::json cli_report(const nlohmann::json& doc) {
  const std::filesystem::path folder = temp_dir();
  { std::ofstream(folder / "scenario.json") << doc.dump(); }
  const CliResult r = run_cli({"run", (folder / "scenario.json").string(), "--json", "--no-files", "--no-progress"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

/** Every rank of `out` sends and receives `added` bytes more than in report `before`; busy + idle = makespan. */
void expect_added_bytes(const Outcome& out, const nlohmann::json& before, double added) {
  ASSERT_TRUE(before.contains("ranks"));
  for (const RankMetrics& m : out.report.ranks) {
    const nlohmann::json& r = before["ranks"][static_cast<std::size_t>(m.rank)];
    EXPECT_DOUBLE_EQ(static_cast<double>(m.bytes_sent) - r["bytes_sent"].get<double>(), added) << "rank " << m.rank;
    EXPECT_DOUBLE_EQ(static_cast<double>(m.bytes_received) - r["bytes_received"].get<double>(), added)
        << "rank " << m.rank;
    EXPECT_NEAR(m.busy() + m.idle(), out.report.makespan, 1e-9 * out.report.makespan);
  }
}

TEST(ExpertParallelRun, RanksSendWhatTheAllToAllsClosedFormSays) {
  // A small mixture of experts on 4 GPUs, expert 4, no gradient synchronisation, every message simulated: each rank
  // sends (EP - 1) / EP of its 4 all-to-alls per layer and micro-batch, of b·s·k·h·2 bytes each, and its 8 experts'
  // int64 counts to the 3 others in the forward's count all-gather; it receives as much.
  const Outcome out = simulate_document(tiny_moe_run(4, 8, {{"data", 4}, {"expert", 4}}));
  ASSERT_FALSE(out.report.out_of_memory);
  ASSERT_EQ(out.report.ranks.size(), 4u);
  const double per_all_to_all = 128.0 * 2 * 256 * 2; // b·s·k·h bytes at bf16
  const double counts = 3.0 * 8 * 8;                 // the all-gather's bytes leaving (and reaching) a rank
  const double expected = 2 /* micro-batches */ * 2 /* layers */ * (4 * per_all_to_all * 3.0 / 4.0 + counts);
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
  // sum), and in the forward its 8 experts' int64 counts to the 3 others (the count all-gather, unskewed).
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
      expected[p] += 2 /* micro-batches */ *
                     (2 /* passes */ * c * (3 * layer.rank_load[p] + total - layer.rank_load[p]) + 3.0 * 8 * 8);
    busiest = std::max(busiest, layer.max_load());
  }
  ASSERT_GT(busiest, 1.3);
  const Outcome out = simulate_document(doc);
  ASSERT_EQ(out.report.ranks.size(), 4u);
  for (const RankMetrics& m : out.report.ranks) {
    const double want = expected[static_cast<std::size_t>(m.rank)];
    // Each of the rank's 48 all-to-all messages (2 layers x 2 micro-batches x 2 passes x 2 all-to-alls x 3 peers)
    // is rounded to a whole byte.
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

/** node_token_share against the routing drawn at random: a token picks `groups_per_token` groups, then `top_k`
 * experts among theirs; the share of node b is P(b holds one of them) / (top_k x its experts / all experts). */
TEST(ExpertRouting, NodeLimitedRoutingSendsATokenOnceToEachNodeItReaches) {
  struct Case {
    std::int64_t experts, top_k, groups, per_token;
    int ranks, per_node;
  };
  // DeepSeek-V3 (256 experts, top-8 within 4 of 8 groups) on EP 64 over 8 nodes; no limit; and groups that straddle
  // nodes (24 experts in 4 groups of 6, EP 6 over 3 nodes of 8 experts).
  for (const Case& c : {Case{256, 8, 8, 4, 64, 8}, Case{256, 8, 1, 1, 64, 8}, Case{24, 3, 4, 2, 6, 2}}) {
    SCOPED_TRACE(std::to_string(c.experts) + " experts, " + std::to_string(c.groups) + " groups");
    std::vector<std::vector<int>> members(static_cast<std::size_t>(c.ranks / c.per_node));
    for (int p = 0; p < c.ranks; ++p) members[static_cast<std::size_t>(p / c.per_node)].push_back(p);
    const std::vector<double> share = node_token_share(c.experts, c.top_k, c.groups, c.per_token, c.ranks, members);
    ASSERT_EQ(share.size(), members.size());
    const std::int64_t per_group = c.experts / c.groups;
    const std::int64_t per_node = c.experts / c.ranks * c.per_node;
    std::mt19937_64 random(7);
    std::vector<double> hits(members.size(), 0.0);
    const int samples = 100000;
    std::vector<std::int64_t> groups(static_cast<std::size_t>(c.groups));
    std::iota(groups.begin(), groups.end(), 0);
    for (int i = 0; i < samples; ++i) {
      std::shuffle(groups.begin(), groups.end(), random);
      std::vector<std::int64_t> pool;
      for (std::int64_t k = 0; k < c.per_token; ++k)
        for (std::int64_t e = 0; e < per_group; ++e)
          pool.push_back(groups[static_cast<std::size_t>(k)] * per_group + e);
      std::shuffle(pool.begin(), pool.end(), random);
      std::set<std::int64_t> nodes;
      for (std::int64_t k = 0; k < c.top_k; ++k) nodes.insert(pool[static_cast<std::size_t>(k)] / per_node);
      for (const std::int64_t b : nodes) hits[static_cast<std::size_t>(b)] += 1.0;
    }
    const double copies = static_cast<double>(c.top_k * per_node) / static_cast<double>(c.experts);
    for (std::size_t b = 0; b < members.size(); ++b)
      EXPECT_NEAR(share[b], hits[b] / samples / copies, 0.01) << "node " << b;
  }
  // One expert per token: one copy, one node, nothing saved.
  const std::vector<double> one = node_token_share(16, 1, 4, 2, 8, {{0, 1, 2, 3}, {4, 5, 6, 7}});
  EXPECT_DOUBLE_EQ(one[0], 1.0);
  EXPECT_DOUBLE_EQ(one[1], 1.0);
  // DeepSeek-V3: a node is among a token's 4 groups with probability 4/8, and then holds one of its 8 experts drawn
  // from those groups' 128 with probability 1 - C(96,8)/C(128,8) = 0.9073 (3.63 of the 4 nodes reached); one copy per
  // node direct (8 x 32/256): 0.4536 of the direct all-to-all's copies cross.
  std::vector<std::vector<int>> deepseek(8);
  for (int p = 0; p < 64; ++p) deepseek[static_cast<std::size_t>(p / 8)].push_back(p);
  double miss = 1.0; // C(96,8) / C(128,8)
  for (int i = 0; i < 8; ++i) miss *= (96.0 - i) / (128.0 - i);
  EXPECT_NEAR(node_token_share(256, 8, 8, 4, 64, deepseek)[3], 0.5 * (1.0 - miss), 1e-12);
  EXPECT_NEAR(0.5 * (1.0 - miss), 0.4536, 1e-4);
}

/** Two nodes of 4 GPUs, EP 8, 8 experts in 2 groups (a node each), each token's 2 experts within 1 group. */
nlohmann::json two_hop_document(const std::string& dispatch, const std::string& fidelity, int sequence) {
  nlohmann::json doc = base_scenario(2, 4);
  doc["workload"] = {
      {"kind", "model_training"},
      {"model", tiny_transformer("tiny-moe", sequence,
                                 {{"experts", {{"count", 8}, {"top_k", 2}, {"groups", 2}, {"groups_per_token", 1}}}})},
      {"global_batch", 16},
      {"micro_batch", 1}};
  doc["strategy"] = {{"kind", "model_parallel"},
                     {"data", 8},
                     {"expert", 8},
                     {"expert_dispatch", dispatch},
                     {"gradient_sync", "none"},
                     {"tensor_collectives", {{"fidelity", fidelity}}}};
  return doc;
}

/** A two-hop all-to-all sends each token over the network once to at most one node (share 1/2 of a direct
 * all-to-all's copies) and forwards it there over NVLink: every rank sends and receives what the schedule says. */
TEST(ExpertParallelRun, TwoHopDispatchCrossesTheNetworkOncePerNode) {
  const Plan plan = build_plan(parse(two_hop_document("two_hop", "steps")));
  ASSERT_EQ(plan.all_to_all_skews.size(), 4u); // every MoE layer's dispatch and combine carry the shares
  EXPECT_EQ(plan.all_to_all_skews[0].node_share, (std::vector<double>{0.5, 0.5}));
  EXPECT_NE(plan.summary.find("two-hop dispatch (each token within 1 of 2 expert groups): 0.5 of the copies"),
            std::string::npos)
      << plan.summary;
  const Outcome steps = simulate_document(two_hop_document("two_hop", "steps"));
  // Per all-to-all a rank sends one network message of half its 4 chunks for the other node, its 3 chunks for its own
  // node's ranks, and forwards the other node's 3 chunks for them: 8 chunks of b·s·k·h·2 / 8 bytes.
  const double chunk = 128.0 * 2 * 256 * 2 / 8;
  const double expected = 2 /* micro-batches */ * 2 /* layers */ * 4 /* all-to-alls */ * 8 * chunk;
  ASSERT_EQ(steps.report.ranks.size(), 8u);
  for (const RankMetrics& m : steps.report.ranks) {
    EXPECT_DOUBLE_EQ(static_cast<double>(m.bytes_sent), expected) << "rank " << m.rank;
    EXPECT_DOUBLE_EQ(static_cast<double>(m.bytes_received), expected) << "rank " << m.rank;
    EXPECT_NEAR(m.busy() + m.idle(), steps.report.makespan, 1e-9 * steps.report.makespan);
  }
  // Expert groups inside one node have nothing to forward: an input error at the key.
  nlohmann::json one_node = two_hop_document("two_hop", "steps");
  one_node["cluster"]["nodes"] = 1;
  one_node["cluster"]["gpus_per_node"] = 8;
  const InputError e = input_error([&] { build_plan(parse(one_node)); });
  EXPECT_NE(std::string(e.what()).find("/strategy/expert_dispatch"), std::string::npos) << e.what();
}

/** Measured routing: each layer's shares are its counts over their sum, and the ranks' loads follow (EP 4, 2 experts
 * each). */
TEST(ExpertRouting, MeasuredCountsGiveEachLayersShares) {
  const auto dir = temp_dir();
  {
    std::ofstream csv(dir / "routing.csv");
    csv << "layer,expert,tokens\n";
    const double layer0[8] = {8, 0, 0, 0, 4, 4, 4, 4};
    for (int e = 0; e < 8; ++e) csv << "0," << e << "," << layer0[e] << "\n";
    for (int e = 0; e < 8; ++e) csv << "1," << e << ",2.5\n";
  }
  nlohmann::json doc = base_scenario(1, 4);
  doc["workload"] = {{"kind", "model_training"},
                     {"model", tiny_transformer("tiny-moe", 128, {{"experts", {{"count", 8}, {"top_k", 2}}}})},
                     {"global_batch", 8},
                     {"micro_batch", 1},
                     {"expert_routing", {{"distribution", "measured"}, {"counts", (dir / "routing.csv").string()}}}};
  doc["strategy"] = {{"kind", "model_parallel"}, {"data", 4}, {"expert", 4}, {"gradient_sync", "none"}};
  const Plan plan = build_plan(parse(doc));
  ASSERT_EQ(plan.expert_routing.size(), 2u);
  const std::vector<double> first = plan.expert_routing[0].rank_load;
  ASSERT_EQ(first.size(), 4u);
  EXPECT_NEAR(first[0], 4.0 / 3.0, 1e-12);
  EXPECT_NEAR(first[1], 0.0, 1e-12);
  EXPECT_NEAR(first[2], 4.0 / 3.0, 1e-12);
  EXPECT_NEAR(first[3], 4.0 / 3.0, 1e-12);
  for (const double load : plan.expert_routing[1].rank_load) EXPECT_NEAR(load, 1.0, 1e-12);
  EXPECT_NE(plan.summary.find("measured routing"), std::string::npos) << plan.summary;

  // Each fault names the file's line or what is missing, under the key that names the file.
  const auto error_with = [&](const std::string& text) {
    std::ofstream(dir / "bad.csv") << text;
    nlohmann::json bad = doc;
    bad["workload"]["expert_routing"]["counts"] = (dir / "bad.csv").string();
    return std::string(input_error([&] { parse(bad); }).what());
  };
  std::string all;
  for (int l = 0; l < 2; ++l)
    for (int e = 0; e < 8; ++e) all += std::to_string(l) + "," + std::to_string(e) + ",1\n";
  const std::string header = "layer,expert,tokens\n";
  EXPECT_NE(error_with(header + all.substr(0, all.find("1,0,1"))).find("no counts for layer 1"), std::string::npos);
  EXPECT_NE(error_with(header + all + "1,7,1\n").find("line 18: layer 1 expert 7 is given twice"), std::string::npos);
  EXPECT_NE(error_with(header + "0,8,1\n").find("line 2: '8' in column 'expert'"), std::string::npos);
  EXPECT_NE(error_with(header + "0,1,-3\n").find("line 2: '-3' in column 'tokens'"), std::string::npos);
  EXPECT_NE(error_with(header + "0,1,1\n").find("no count for layer 0 expert 0"), std::string::npos);
  EXPECT_NE(error_with("layer,tokens\n0,1\n").find("expert"), std::string::npos);
  const std::string zero = error_with(header + all.substr(0, all.find("1,0,1")) +
                                      "1,0,0\n1,1,0\n1,2,0\n1,3,0\n1,4,0\n"
                                      "1,5,0\n1,6,0\n1,7,0\n");
  EXPECT_NE(zero.find("layer 1 routes no tokens"), std::string::npos) << zero;
  EXPECT_NE(zero.find("/workload/expert_routing/counts"), std::string::npos) << zero;
  nlohmann::json without = doc;
  without["workload"]["expert_routing"].erase("counts");
  EXPECT_NE(std::string(input_error([&] { parse(without); }).what()).find("/workload/expert_routing/distribution"),
            std::string::npos);
  nlohmann::json zipf = doc;
  zipf["workload"]["expert_routing"]["distribution"] = "zipf";
  EXPECT_NE(std::string(input_error([&] { parse(zipf); }).what()).find("/workload/expert_routing/counts"),
            std::string::npos);
}

/** Node-limited routing must divide the experts into groups that can hold a token's experts. */
TEST(ExpertParallelErrors, NodeLimitedRoutingNamesItsKey) {
  nlohmann::json doc = two_hop_document("two_hop", "steps");
  doc["workload"]["model"]["experts"]["groups"] = 3;
  EXPECT_NE(std::string(input_error([&] { parse(doc); }).what()).find("/experts/groups: expected groups dividing"),
            std::string::npos);
  doc["workload"]["model"]["experts"] = {{"count", 8}, {"top_k", 4}, {"groups", 4}, {"groups_per_token", 1}};
  EXPECT_NE(std::string(input_error([&] { parse(doc); }).what()).find("/experts/groups_per_token"), std::string::npos);
}

/** The two-hop all-to-all takes as long at every fidelity, and about half as long as the direct one: the node's one
 * NIC carries 8 chunks instead of 16 (512-token sequences: 64 KiB chunks, so that bandwidth, not latency, sets it). */
TEST(ExpertParallelRun, TwoHopTakesAsLongAtEveryFidelityAndLessThanDirect) {
  const auto a2a_time = [](const std::string& dispatch, const std::string& fidelity) {
    const auto dir = temp_dir();
    {
      std::ofstream file(dir / "two-hop.json");
      file << two_hop_document(dispatch, fidelity, 512).dump();
    }
    const CliResult r = run_cli({"run", (dir / "two-hop.json").string(), "--json", "--no-files", "--no-progress"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json report = nlohmann::json::parse(r.out, nullptr, false);
    if (report.is_object() && report.contains("collectives"))
      for (const nlohmann::json& c : report.at("collectives"))
        if (c.at("operation") == "all_to_all") return c.at("mean_time_s").get<double>();
    ADD_FAILURE() << "no all-to-all at " << fidelity << ": " << r.err;
    return 0.0;
  };
  const double steps = a2a_time("two_hop", "steps");
  EXPECT_NEAR(a2a_time("two_hop", "flows"), steps, 0.02 * steps);
  EXPECT_NEAR(a2a_time("two_hop", "analytic"), steps, 0.02 * steps);
  const double direct = a2a_time("direct", "steps");
  EXPECT_LT(steps, 0.65 * direct);
  EXPECT_GT(steps, 0.45 * direct);
}

// --- expert tensor parallelism ------------------------------------------------------------------------------------

TEST(ExpertTensorParallel, EachExpertSplitsOverTheTensorGroupWithTheSameFlops) {
  // Mixtral on 4 tensor ranks with sequence parallelism, EP 8: each rank routes a quarter of the 32,768 tokens. With
  // the experts split over the 4 tensor ranks, a rank runs a quarter of its expert's FFN on the copies of all 4 ranks:
  // the same flops, a quarter of the weights, GEMMs 4x taller and 4x narrower.
  const TransformerModel mixtral = library_model("mixtral-8x7b");
  const double t = 32768.0;
  const double h = 4096.0;
  const double f = 14336.0;
  TensorSplit whole{4, true, 8};
  TensorSplit split = whole;
  split.expert_tensor = 4;
  const auto [flops1, weights1] = routed_experts(mixtral, whole);
  const auto [flops4, weights4] = routed_experts(mixtral, split);
  EXPECT_DOUBLE_EQ(flops1, 2.0 * t / 4 * 2.0 * 3.0 * h * f);
  EXPECT_DOUBLE_EQ(flops4, flops1);
  EXPECT_DOUBLE_EQ(weights1, 3.0 * h * f);
  EXPECT_DOUBLE_EQ(weights4, weights1 / 4);
  EXPECT_DOUBLE_EQ(mixtral.expert_parameters(8, 4), mixtral.expert_parameters(8) / 4);
  for (const ComputeOp& op : mixtral.layer_ops(1, split))
    if (op.name == "expert_up") {
      ASSERT_TRUE(op.gemm.has_value());
      EXPECT_DOUBLE_EQ(static_cast<double>(op.gemm->m), t / 4 * 2.0 * 4.0); // the gathered copies
      EXPECT_EQ(op.gemm->n, 14336 / 4);
    }
}

/** A rank's tensor-group collectives of `op` on groups of `size`: count and bytes. */
Collectives tensor_collectives_of(const Plan& plan, int rank, CollectiveOp op) {
  return collectives_of(plan, rank, CommKind::Tensor, op);
}

/** Mixtral on 8 GPUs, data 2 x tensor 4 x expert 2 with sequence parallelism, 4 micro-batches per replica: the
 * experts whole (expert_tensor 1), then split over the tensor group (4). */
std::pair<Scenario, Scenario> whole_and_split_experts() {
  const nlohmann::json strategy = {{"data", 2}, {"tensor", 4}, {"expert", 2}, {"sequence_parallel", true}};
  nlohmann::json split = strategy;
  split["expert_tensor"] = 4;
  return {parse(moe_scenario(strategy, 8, 8)), parse(moe_scenario(split, 8, 8))};
}

TEST(ExpertTensorParallelPlan, TheCopiesAreGatheredAndReduceScatteredOverTheTensorGroup) {
  // Data 2 x tensor 4 x expert 2 on 8 GPUs, 4 micro-batches per replica: with the experts split over the tensor
  // group, every layer's experts are wrapped, forward and backward, in an all-gather and a reduce-scatter of the
  // 4 ranks' copies: 4 x (4096 / 4 tokens x top-2) x 4,096 bf16 values.
  const auto [s1, s4] = whole_and_split_experts();
  const Plan p1 = build_plan(s1);
  const Plan p4 = build_plan(s4);
  const std::uint64_t gathered = std::uint64_t{4} * (1024 * 2) * 4096 * 2;
  for (const CollectiveOp op : {CollectiveOp::AllGather, CollectiveOp::ReduceScatter}) {
    const Collectives c1 = tensor_collectives_of(p1, 0, op);
    const Collectives c4 = tensor_collectives_of(p4, 0, op);
    EXPECT_EQ(c4.count - c1.count, 32 * 2 * 4) << static_cast<int>(op);
    EXPECT_EQ(c4.bytes - c1.bytes, std::uint64_t{32} * 2 * 4 * gathered) << static_cast<int>(op);
    EXPECT_EQ(c4.group_size, 4u);
  }
  // The all-to-alls are unchanged; the experts' gradients, reduced over the expert-data group (the 1 other replica
  // holding the same experts: no group with data 2 = expert 2), are absent, the rest as before.
  EXPECT_EQ(collectives_of(p4, 0, CommKind::Expert, CollectiveOp::AllToAll).bytes,
            collectives_of(p1, 0, CommKind::Expert, CollectiveOp::AllToAll).bytes);
  EXPECT_NE(p4.summary.find("split over 4 tensor ranks"), std::string::npos) << p4.summary;

  // Data 4 x expert 2: the experts' gradients go over the expert-data group of 2, a quarter of them per rank.
  const nlohmann::json wide = {{"data", 4}, {"tensor", 4}, {"expert", 2}, {"sequence_parallel", true}};
  nlohmann::json wide4 = wide;
  wide4["expert_tensor"] = 4;
  auto expert_sync = [](const Plan& plan) {
    std::uint64_t bytes = 0;
    for (const Step& step : resolved_steps(plan, 0))
      if (const auto* c = std::get_if<CollectiveStep>(&step);
          c && c->kind == CommKind::Data && plan.groups[static_cast<std::size_t>(c->group)].size() == 2u &&
          c->op != CollectiveOp::AllGather)
        bytes += c->bytes;
    return static_cast<double>(bytes);
  };
  const double sync1 = expert_sync(build_plan(parse(moe_scenario(wide, 16, 16))));
  const double sync4 = expert_sync(build_plan(parse(moe_scenario(wide4, 16, 16))));
  EXPECT_GT(sync1, 0.0);
  EXPECT_NEAR(sync4, sync1 / 4, 64.0);
}

TEST(ExpertTensorParallelPlan, SkewedRoutingGathersEachPositionsLoad) {
  // Zipf routing: the tensor group of expert position j gathers 4 x its copies, round(1024 x 2 x load_j), per layer.
  nlohmann::json doc = moe_scenario(
      {{"data", 2}, {"tensor", 4}, {"expert", 2}, {"expert_tensor", 4}, {"sequence_parallel", true}}, 8, 8);
  doc["workload"]["expert_routing"] = {{"distribution", "zipf"}, {"zipf_exponent", 1.0}};
  const Scenario scenario = parse(doc);
  const Plan plan = build_plan(scenario);
  const auto& routing = std::get<ModelTraining>(scenario.workload).expert_routing;
  const auto& mp = std::get<ModelParallel>(scenario.strategy);
  for (int j = 0; j < 2; ++j) {
    std::uint64_t expected = 0;
    for (int l = 0; l < 32; ++l) {
      const double load = route_layer(routing, 8, 2, l, scenario.run.seed).rank_load[static_cast<std::size_t>(j)];
      expected += std::uint64_t{4} * static_cast<std::uint64_t>(std::round(1024.0 * 2.0 * load)) * 4096 * 2;
    }
    // The rank at data position j, tensor 0; its reduce-scatters beyond the layers' sequence-parallel ones.
    const int rank = rank_of(mp, {j, 0, 0});
    std::uint64_t gathered = 0;
    const std::uint64_t sequence = std::uint64_t{4096} * 4096 * 2; // b·s·h, the sequence-parallel collectives
    for (const Step& step : resolved_steps(plan, rank))
      if (const auto* c = std::get_if<CollectiveStep>(&step);
          c && c->kind == CommKind::Tensor && c->op == CollectiveOp::AllGather && c->bytes != sequence)
        gathered += c->bytes;
    EXPECT_EQ(gathered, expected * 2 /* forward, backward */ * 4 /* micro-batches */) << "position " << j;
  }
}

TEST(ExpertTensorParallelMemory, ExpertWeightsFallByTheTensorDegree) {
  // Tensor 4, expert 2: the experts' weights, gradients and optimizer states per rank fall by 4; the gathered copies
  // kept for the experts' first GEMMs add (4 - 1) / 4 of k·b·s·h per MoE layer and micro-batch in flight.
  const auto [s1, s4] = whole_and_split_experts();
  const auto& training = std::get<ModelTraining>(s1.workload);
  const MemoryBreakdown m1 = model_parallel_memory(training, std::get<ModelParallel>(s1.strategy), s1.cluster.gpu, 0);
  const MemoryBreakdown m4 = model_parallel_memory(training, std::get<ModelParallel>(s4.strategy), s4.cluster.gpu, 0);
  const TransformerModel model = training.transformer();
  const double removed = 32.0 * model.expert_parameters(2) * 3.0 / 4.0;
  EXPECT_NEAR(m1.parameters - m4.parameters, removed * 2.0, 1.0);
  EXPECT_NEAR(m1.optimizer_states - m4.optimizer_states, removed * m1.optimizer_states / (m1.parameters / 2.0),
              1e-6 * m1.optimizer_states);
  EXPECT_NEAR(m4.activations - m1.activations, 32.0 * 2.0 * 2.0 * 4096.0 * 4096.0 * 3.0 / 4.0, 1.0);
}

TEST(ExpertTensorParallelErrors, EachInvalidCombinationNamesItsKey) {
  EXPECT_NE(error_of(moe_scenario({{"data", 2}, {"tensor", 4}, {"sequence_parallel", true}, {"expert_tensor", 2}}))
                .find("/strategy/expert_tensor: the experts split over the tensor group: expected 1 or the tensor "
                      "degree (4), got 2"),
            std::string::npos);
  EXPECT_NE(error_of(moe_scenario({{"data", 2}, {"tensor", 4}, {"sequence_parallel", true}, {"expert_tensor", 4}}, 8, 8,
                                  "llama3-8b"))
                .find("/strategy/expert_tensor"),
            std::string::npos);
  EXPECT_EQ(error_of(moe_scenario({{"data", 2}, {"tensor", 4}, {"sequence_parallel", true}, {"expert_tensor", 4}})),
            "");
}

TEST(ExpertTensorParallelRun, RanksSendWhatTheGatherAndReduceScatterClosedFormsSay) {
  // A small mixture of experts on 4 GPUs: tensor 2 x data 2 x expert 2, every message simulated, no gradient
  // synchronisation. Splitting the experts over the tensor pair adds, per layer and pass, an all-gather and a
  // reduce-scatter of S = 2 x (64 tokens x top-2) x 256 bf16 values on 2 ranks: each rank sends and receives S / 2
  // for each, (n - 1) / n of S as the ring's closed form says.
  nlohmann::json doc = tiny_moe_run(4, 8, {{"data", 2}, {"tensor", 2}, {"expert", 2}, {"sequence_parallel", true}});
  const nlohmann::json before = cli_report(doc);
  doc["strategy"]["expert_tensor"] = 2;
  const Outcome out = simulate_document(doc);
  ASSERT_FALSE(out.report.out_of_memory);
  ASSERT_EQ(out.report.ranks.size(), 4u);
  const double s = 2.0 * (64 * 2) * 256 * 2;
  expect_added_bytes(out, before,
                     4 /* micro-batches */ * 2 /* layers */ * 2 /* passes */ * 2 /* collectives */ * s / 2);
}

// --- context parallelism of a mixture of experts --------------------------------------------------------------------

TEST(ContextParallelExperts, ExpertGroupsSpanTheDataAndContextRanks) {
  // Mixtral on 8 GPUs: data 4 x context 2, expert 8. The expert group holds the 8 data x context ranks (Megatron-Core
  // carves expert groups out of them); each rank routes its s/C = 2,048 tokens: 4 all-to-alls per layer and
  // micro-batch of 2,048 x top-2 x 4,096 bf16 values, half what the same split without context parallelism sends.
  const Scenario scenario = parse(moe_scenario({{"data", 4}, {"context", 2}, {"expert", 8}}, 8, 8));
  const Plan plan = build_plan(scenario);
  const Collectives a2a = collectives_of(plan, 0, CommKind::Expert, CollectiveOp::AllToAll);
  EXPECT_EQ(a2a.group_size, 8u);
  EXPECT_EQ(a2a.count, 32 * 4 * 2 /* micro-batches */);
  EXPECT_EQ(a2a.bytes, std::uint64_t{32} * 4 * 2 * (2048 * 2 * 4096 * 2));
  const auto& mp = std::get<ModelParallel>(scenario.strategy);
  std::set<int> members;
  for (const Step& step : resolved_steps(plan, 0))
    if (const auto* c = std::get_if<CollectiveStep>(&step); c && c->kind == CommKind::Expert)
      for (const int r : plan.groups[static_cast<std::size_t>(c->group)]) members.insert(r);
  std::set<int> expected;
  for (int d = 0; d < 4; ++d)
    for (int c = 0; c < 2; ++c) expected.insert(rank_of(mp, {d, 0, 0, c}));
  EXPECT_EQ(members, expected);
  // Every rank's experts and its attention core keep their share: the expert time, priced at the rank's tokens,
  // is the same on every rank; the context exchange runs in every MoE layer (the ring's hops).
  int hops = 0;
  for (const Step& step : resolved_steps(plan, 0)) hops += std::holds_alternative<SendStep>(step) ? 1 : 0;
  EXPECT_EQ(hops, 32 * 2 /* micro-batches */ * (1 + 2) /* forward 1 block, backward 2 */);
  EXPECT_EQ(mp.data_ranks(), 8);
}

TEST(ContextParallelExperts, MemoryFallsWithTheContextDegree) {
  // Data 8 x expert 8 against data 4 x context 2 x expert 8: the same experts per rank (one), the same ZeRO shards,
  // activations halved but for the exchange's buffers.
  const Scenario plain = parse(moe_scenario({{"data", 8}, {"expert", 8}, {"zero", 1}}, 8, 16));
  const Scenario split = parse(moe_scenario({{"data", 4}, {"context", 2}, {"expert", 8}, {"zero", 1}}, 8, 8));
  const auto& training = std::get<ModelTraining>(plain.workload);
  const auto& training2 = std::get<ModelTraining>(split.workload);
  const MemoryBreakdown m1 =
      model_parallel_memory(training, std::get<ModelParallel>(plain.strategy), plain.cluster.gpu, 0);
  const MemoryBreakdown m2 =
      model_parallel_memory(training2, std::get<ModelParallel>(split.strategy), split.cluster.gpu, 0);
  EXPECT_DOUBLE_EQ(m2.parameters, m1.parameters);
  EXPECT_DOUBLE_EQ(m2.optimizer_states, m1.optimizer_states);
  EXPECT_NEAR(m2.activations, m1.activations / 2.0, 1e-9 * m1.activations);
}

TEST(ContextParallelExperts, TheDegreeMustDivideTheDataAndContextRanks) {
  try {
    parse(moe_scenario({{"data", 2}, {"context", 2}, {"pipeline", 2}, {"expert", 8}}, 8, 8));
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/strategy/expert: expected a degree that divides the 8 experts and the "
                                         "data-parallel degree x context (4), got 8"),
              std::string::npos)
        << e.what();
  }
}

TEST(ContextParallelExpertsRun, RanksSendTheAllToAllsAndTheRingsClosedForms) {
  // A small mixture of experts on 2 GPUs: context 2 x expert 2, every message simulated, no gradient
  // synchronisation. Against the same split with expert 1 (each rank holding all experts), each rank sends and
  // receives (EP - 1) / EP of 4 all-to-alls per layer and micro-batch of (128 / 2 tokens) x top-2 x 256 bf16 values,
  // and in each forward its 8 experts' int64 counts to the other (the dispatcher's count all-gather).
  nlohmann::json doc = tiny_moe_run(2, 4, {{"data", 1}, {"context", 2}});
  const nlohmann::json before = cli_report(doc);
  doc["strategy"]["expert"] = 2;
  const Outcome out = simulate_document(doc);
  ASSERT_FALSE(out.report.out_of_memory);
  ASSERT_EQ(out.report.ranks.size(), 2u);
  for (const RankMetrics& m : out.report.ranks) EXPECT_GT(m.expert_exposed, 0.0);
  const double per_all_to_all = 64.0 * 2 * 256 * 2;
  expect_added_bytes(out, before, 4 /* micro-batches */ * 2 /* layers */ * (4 * per_all_to_all / 2 + 8 * 8));
}

TEST(ExpertParallelCheckpoint, EveryExpertIsWrittenOnce) {
  // Mixtral, expert 8 over 8 data ranks: a checkpoint holds every parameter and optimizer state once, whether ZeRO
  // shards the states or not, whether the data ranks are replicas or context ranks, and whether the experts are
  // whole or split over the tensor group. Without ZeRO the 8 ranks of the first expert group write (each its
  // experts; rank 0 the dense part too).
  const TransformerModel model = library_model("mixtral-8x7b");
  auto size_of = [&](const nlohmann::json& strategy) {
    const Scenario scenario = parse(moe_scenario(strategy, static_cast<int>(strategy.value("tensor", 1)) * 8, 16));
    const auto& training = std::get<ModelTraining>(scenario.workload);
    const CheckpointSize size = checkpoint_size(scenario, build_plan(scenario));
    const double per_parameter =
        bytes_per_element(training.data_type) + optimizer_bytes_per_parameter(training.optimizer, training.data_type);
    return std::pair{size.bytes / (model.parameters() * per_parameter), size.writers};
  };
  const auto [plain, plain_writers] = size_of({{"data", 8}, {"expert", 8}});
  EXPECT_NEAR(plain, 1.0, 1e-12);
  EXPECT_EQ(plain_writers, 8);
  const auto [zero, zero_writers] = size_of({{"data", 8}, {"expert", 8}, {"zero", 1}});
  EXPECT_NEAR(zero, 1.0, 1e-12);
  EXPECT_EQ(zero_writers, 8);
  EXPECT_NEAR(size_of({{"data", 4}, {"context", 2}, {"expert", 8}, {"zero", 1}}).first, 1.0, 1e-12);
  EXPECT_NEAR(size_of({{"data", 2}, {"context", 4}, {"expert", 4}}).first, 1.0, 1e-12);
  // Tensor 2: the dense part's replicated norms and routers are written by both tensor ranks (1.3M of 46.7B
  // parameters); the experts once.
  EXPECT_NEAR(
      size_of({{"data", 8}, {"tensor", 2}, {"expert", 8}, {"sequence_parallel", true}, {"expert_tensor", 2}}).first,
      1.0, 1e-4);
}

} // namespace
} // namespace partsim::test
