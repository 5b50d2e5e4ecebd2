// DeepSeek-V3's two departures from the transformers before it: multi-head latent attention (queries, keys and values
// through low-rank latents, a decoupled rotary key) and a mixture of experts whose first layers stay dense. The
// published parameter counts, the latent GEMMs' shapes and weights under tensor parallelism, the attention core's
// flops with values narrower than the keys, the dense layers in flops, memory and the plan, the input errors, and
// context parallelism's exchange of keys and values of their own widths.
#include "partsim/input/workload_library.hpp"
#include "partsim/model/cost_model.hpp"
#include "partsim/model/transformer.hpp"
#include "partsim/plan/sharded_memory.hpp"
#include "partsim/plan/strategy.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

namespace partsim::test {
namespace {

TransformerModel deepseek() {
  const WorkloadSpec spec = load_workload(source_dir(), "deepseek-v3", "test", "/workload/model");
  return TransformerModel(std::get<TransformerConfig>(spec.config));
}

// DeepSeek-V3's shape (arXiv:2412.19437 §4.2; the Hugging Face config.json).
constexpr double kH = 7168;
constexpr double kHeads = 128;
constexpr double kQkDim = 192; // 128 + 64 rotary
constexpr double kVDim = 128;
constexpr double kRope = 64;
constexpr double kQLatent = 1536;
constexpr double kKvLatent = 512;

std::map<std::string, ComputeOp> by_name(const std::vector<ComputeOp>& ops) {
  std::map<std::string, ComputeOp> out;
  for (const ComputeOp& op : ops) out.emplace(op.name, op);
  return out;
}

TEST(DeepSeekV3, ParameterCountsMatchThePublishedModel) {
  // "671B total parameters, of which 37B are activated for each token" (the main model, without the 14B
  // multi-token-prediction module). Whole billions, as published.
  const TransformerModel model = deepseek();
  EXPECT_EQ(std::floor(model.parameters() / 1e9), 671.0);
  EXPECT_EQ(std::floor(model.active_parameters() / 1e9), 37.0);
  // 3 dense layers, 58 with experts.
  EXPECT_EQ(model.moe_layers(0, 61), 58);
  EXPECT_EQ(model.moe_layers(0, 3), 0);
  EXPECT_EQ(model.moe_layers(2, 4), 3);
  EXPECT_FALSE(model.moe_layer(2));
  EXPECT_TRUE(model.moe_layer(3));
}

TEST(MultiHeadLatentAttention, ProjectionsFollowTheLatentShapes) {
  const TransformerModel model = deepseek();
  const double t = 4096;
  const auto ops = by_name(model.layer_ops(1));
  ASSERT_FALSE(ops.contains("qkv_projection"));
  auto shape = [&](const std::string& name) {
    const GemmShape& g = *ops.at(name).gemm;
    return std::array<double, 3>{static_cast<double>(g.m), static_cast<double>(g.k), static_cast<double>(g.n)};
  };
  EXPECT_EQ(shape("q_down"), (std::array<double, 3>{t, kH, kQLatent}));
  EXPECT_EQ(shape("q_up"), (std::array<double, 3>{t, kQLatent, kHeads * kQkDim}));
  EXPECT_EQ(shape("kv_down"), (std::array<double, 3>{t, kH, kKvLatent + kRope}));
  EXPECT_EQ(shape("kv_up"), (std::array<double, 3>{t, kKvLatent, kHeads * (kQkDim - kRope + kVDim)}));
  EXPECT_EQ(shape("output_projection"), (std::array<double, 3>{t, kHeads * kVDim, kH}));
  EXPECT_DOUBLE_EQ(ops.at("q_norm").weight_elements, kQLatent); // RMSNorm: a scale per element
  EXPECT_DOUBLE_EQ(ops.at("kv_norm").weight_elements, kKvLatent);
  // Rotary on each head's 64 rotary query dimensions and on the one shared rotary key.
  EXPECT_DOUBLE_EQ(ops.at("rotary_embedding").output_elements, t * (kHeads * kRope + kRope));
  // The attention weights of a layer: 187,107,328 (the projections and the two latent norms).
  double attention = 0.0;
  for (const auto& [name, op] : ops)
    if (name == "q_down" || name == "q_norm" || name == "q_up" || name == "kv_down" || name == "kv_norm" ||
        name == "kv_up" || name == "output_projection")
      attention += op.weight_elements;
  EXPECT_DOUBLE_EQ(attention, 187'107'328.0);

  // Tensor parallelism 8: the down projections and latent norms whole on every rank, the up projections and the
  // output projection split.
  const auto split = by_name(model.layer_ops(1, TensorSplit{8, true}));
  EXPECT_DOUBLE_EQ(split.at("q_down").weight_elements, kH * kQLatent);
  EXPECT_DOUBLE_EQ(split.at("kv_down").weight_elements, kH * (kKvLatent + kRope));
  EXPECT_DOUBLE_EQ(split.at("q_up").weight_elements, kQLatent * kHeads / 8 * kQkDim);
  EXPECT_DOUBLE_EQ(split.at("kv_up").weight_elements, kKvLatent * kHeads / 8 * (kQkDim - kRope + kVDim));
  EXPECT_DOUBLE_EQ(split.at("output_projection").weight_elements, kHeads / 8 * kVDim * kH);
}

TEST(MultiHeadLatentAttention, TheCoreMultipliesKeysOf192AndValuesOf128) {
  // One sequence of s = 4096: the scores cost 2·a·s²·192 flop, the product with the values 2·a·s²·128; the fused
  // kernel runs half of both (causal), and its output is heads x 128 wide.
  const TransformerModel model = deepseek();
  const double s = 4096;
  const auto ops = by_name(model.layer_ops(1));
  const ComputeOp& core = ops.at("attention_core");
  ASSERT_TRUE(core.attention.has_value());
  EXPECT_EQ(core.attention->head_dim, 192);
  EXPECT_EQ(core.attention->values(), 128);
  const double products = 2.0 * kHeads * s * s * (kQkDim + kVDim);
  EXPECT_DOUBLE_EQ(core.attention->executed_forward_flops(), products / 2.0);
  EXPECT_DOUBLE_EQ(core.forward_flops, products + 5.0 * kHeads * s * s); // + the softmax
  EXPECT_DOUBLE_EQ(core.output_elements, s * kHeads * kVDim);
  // Without fused attention, the two products are GEMMs of those depths.
  const WorkloadSpec spec = load_workload(source_dir(), "deepseek-v3", "test", "/workload/model");
  const TransformerModel unfused(std::get<TransformerConfig>(spec.config), kMegatronLm2021Kernels);
  const auto plain = by_name(unfused.layer_ops(1));
  EXPECT_EQ(plain.at("attention_scores").gemm->k, 192);
  EXPECT_EQ(plain.at("attention_over_values").gemm->n, 128);
  EXPECT_DOUBLE_EQ(plain.at("attention_scores").forward_flops + plain.at("attention_over_values").forward_flops,
                   products);
}

TEST(FirstDenseLayers, FlopsParametersAndActivationsCountEachLayerAsItsKind) {
  const TransformerModel model = deepseek();
  const TransformerModel dense = model.dense_model();
  EXPECT_FALSE(dense.config().experts.moe());
  EXPECT_EQ(dense.config().ffn, 18432);
  // A dense layer: the attention, two norms and a SwiGLU MLP of 18,432.
  EXPECT_DOUBLE_EQ(dense.layer_parameters(), 187'107'328.0 + 2.0 * kH + 3.0 * kH * 18432.0);
  EXPECT_DOUBLE_EQ(model.layers_parameters(0, 61), 3.0 * dense.layer_parameters() + 58.0 * model.layer_parameters());
  const TrainingFlops all = model.training_flops(1, Recomputation::None);
  const TrainingFlops d = dense.layer_flops(1, Recomputation::None);
  const TrainingFlops m = model.layer_flops(1, Recomputation::None);
  const TrainingFlops outer = model.outer_flops(1);
  EXPECT_NEAR(all.forward, 3.0 * d.forward + 58.0 * m.forward + outer.forward, 1e-9 * all.forward);
  EXPECT_NEAR(all.backward, 3.0 * d.backward + 58.0 * m.backward + outer.backward, 1e-9 * all.backward);
  EXPECT_DOUBLE_EQ(model.layers_activation_bytes(0, 5, 1, Recomputation::None),
                   3.0 * dense.layer_activation_bytes(1, Recomputation::None) +
                       2.0 * model.layer_activation_bytes(1, Recomputation::None));
  // Full recomputation rebuilds one layer at a time: the largest kind among the layers asked for.
  const double dense_bytes = dense.layer_activation_bytes(1, Recomputation::None);
  const double moe_bytes = model.layer_activation_bytes(1, Recomputation::None);
  ASSERT_NE(dense_bytes, moe_bytes);
  EXPECT_DOUBLE_EQ(model.largest_layer_activation_bytes(0, 3, 1, Recomputation::None), dense_bytes);
  EXPECT_DOUBLE_EQ(model.largest_layer_activation_bytes(3, 58, 1, Recomputation::None), moe_bytes);
  EXPECT_DOUBLE_EQ(model.largest_layer_activation_bytes(0, 61, 1, Recomputation::None),
                   std::max(dense_bytes, moe_bytes));
}

/** DeepSeek-V3 on 2 x 8 H100s, strategy model_parallel `strategy`, 4,096-token sequences. */
nlohmann::json deepseek_scenario(nlohmann::json strategy, int global_batch) {
  nlohmann::json doc = base_scenario(2, 8);
  doc["cluster"]["gpu"] = "h100-sxm5-80gb";
  doc["workload"] = {
      {"kind", "model_training"}, {"model", "deepseek-v3"}, {"global_batch", global_batch}, {"micro_batch", 1}};
  strategy["kind"] = "model_parallel";
  doc["strategy"] = std::move(strategy);
  return doc;
}

TEST(FirstDenseLayers, StagesHoldTheirOwnLayersKindAndOnlyMoeLayersRoute) {
  // Pipeline 2 with the split 30 / 31: stage 0 holds the 3 dense layers and 27 MoE layers, stage 1 31 MoE layers.
  // Without any sharding, the two stages hold the whole model between them.
  const Scenario s = parse(deepseek_scenario({{"data", 8}, {"pipeline", 2}, {"stage_layers", {30, 31}}}, 8));
  const auto& training = std::get<ModelTraining>(s.workload);
  const auto& mp = std::get<ModelParallel>(s.strategy);
  const TransformerModel model = training.transformer();
  const MemoryBreakdown first = model_parallel_memory(training, mp, s.cluster.gpu, 0);
  const MemoryBreakdown last = model_parallel_memory(training, mp, s.cluster.gpu, 1);
  EXPECT_NEAR(first.parameters + last.parameters, 2.0 * model.parameters(), 1.0);
  EXPECT_NEAR(first.parameters, 2.0 * (model.layers_parameters(0, 30) + model.embedding_parameters()), 1.0);
  // Expert parallelism 8: the report's routing covers the 58 MoE layers, from layer 3.
  const Plan plan = build_plan(
      parse(deepseek_scenario({{"data", 8}, {"pipeline", 2}, {"expert", 8}, {"stage_layers", {30, 31}}}, 8)));
  ASSERT_EQ(plan.expert_routing.size(), 58u);
  EXPECT_EQ(plan.expert_routing.front().layer, 3);
  EXPECT_EQ(plan.expert_routing.back().layer, 60);
}

TEST(MultiHeadLatentAttention, WhatIsNotModelledIsAnInputError) {
  nlohmann::json bad = tiny_transformer(
      "t", 64, {{"mla", {{"kv_lora_rank", 16}, {"qk_rope_head_dim", 8}, {"v_head_dim", 32}}}, {"head_dim", 8}});
  nlohmann::json doc = base_scenario(1, 2);
  doc["workload"] = {{"kind", "model_training"}, {"model", bad}, {"global_batch", 2}, {"micro_batch", 1}};
  doc["strategy"] = {{"kind", "model_parallel"}, {"data", 2}};
  EXPECT_NE(std::string(input_error([&] { parse(doc); }).what()).find("/head_dim"), std::string::npos);
  doc["workload"]["model"]["head_dim"] = 64;
  doc["workload"]["model"]["kv_heads"] = 2;
  EXPECT_NE(std::string(input_error([&] { parse(doc); }).what()).find("/kv_heads"), std::string::npos);
  doc["workload"]["model"].erase("kv_heads");
  EXPECT_NO_THROW(parse(doc));
  doc["strategy"] = {{"kind", "model_parallel"}, {"context", 2}};
  EXPECT_NO_THROW(parse(doc)); // context parallelism: see ContextParallelismPassesKeysAndValuesOfTheirOwnWidths
  // The first dense layers must leave a layer with experts.
  nlohmann::json moe =
      tiny_transformer("t", 64, {{"experts", {{"count", 4}, {"top_k", 2}, {"first_dense_layers", 2}}}});
  doc["workload"]["model"] = moe;
  doc["strategy"] = {{"kind", "model_parallel"}, {"data", 2}};
  EXPECT_NE(std::string(input_error([&] { parse(doc); }).what()).find("/experts/first_dense_layers"),
            std::string::npos);
  // Serving prices every layer alike and caches each head's keys and values: DeepSeek-V3 is refused, exit 2.
  const CliResult serving = run_cli({"run", (source_dir() / "scenarios" / "seed-5-llm-serving.json").string(), "--set",
                                     "/workload/stages/0/llm/model=deepseek-v3", "--no-files", "--no-progress"});
  EXPECT_EQ(serving.exit_code, 2);
  EXPECT_NE(serving.err.find("/workload/stages/0/llm/model: serving \"deepseek-v3\""), std::string::npos)
      << serving.err;
}

TEST(MultiHeadLatentAttention, ContextParallelismPassesKeysAndValuesOfTheirOwnWidths) {
  // DeepSeek-V3 on 16 GPUs, data 8 x context 2 x expert 16, one micro-batch per replica. The ring passes a rank's
  // keys (128 heads of 192: after the up projection, with the shared rotary part) and values (128 heads of 128) of
  // its 2,048 tokens: per layer one block forward, two (with their gradients) backward and one returning them.
  const Plan plan = build_plan(parse(deepseek_scenario({{"data", 8}, {"context", 2}, {"expert", 16}}, 8)));
  const std::uint64_t block = 2048ULL * 128 * (192 + 128) * 2;
  int sends = 0;
  std::uint64_t bytes = 0;
  for (const Step& step : resolved_steps(plan, 0))
    if (const auto* s = std::get_if<SendStep>(&step); s && s->kind == CommKind::Context) {
      ++sends;
      bytes += s->bytes;
    }
  EXPECT_EQ(sends, 61 * 3);
  EXPECT_EQ(bytes, 61ULL * 4 * block);
  // Ulysses: the queries (128 x 192), keys (128 x 192) and values (128 x 128) of the rank's tokens, then the output
  // (128 x 128).
  const Plan ulysses = build_plan(
      parse(deepseek_scenario({{"data", 8}, {"context", 2}, {"expert", 16}, {"context_comm", "all_to_all"}}, 8)));
  std::set<std::uint64_t> sizes;
  for (const Step& step : resolved_steps(ulysses, 0))
    if (const auto* c = std::get_if<CollectiveStep>(&step); c && c->kind == CommKind::Context) sizes.insert(c->bytes);
  EXPECT_EQ(sizes, (std::set<std::uint64_t>{2048ULL * 128 * (192 + 192 + 128) * 2, 2048ULL * 128 * 128 * 2}));
  // Memory: the ring keeps two blocks in flight.
  const Scenario one = parse(deepseek_scenario({{"data", 16}, {"expert", 16}}, 16));
  const Scenario two = parse(deepseek_scenario({{"data", 8}, {"context", 2}, {"expert", 16}}, 8));
  const auto& training = std::get<ModelTraining>(one.workload);
  const MemoryBreakdown m1 = model_parallel_memory(training, std::get<ModelParallel>(one.strategy), one.cluster.gpu, 0);
  const MemoryBreakdown m2 = model_parallel_memory(training, std::get<ModelParallel>(two.strategy), two.cluster.gpu, 0);
  EXPECT_NEAR(m2.workspace - m1.workspace, 2.0 * static_cast<double>(block), 1.0);
  EXPECT_NEAR(m2.activations, m1.activations / 2.0, 1e-9 * m1.activations);
}

} // namespace
} // namespace partsim::test
