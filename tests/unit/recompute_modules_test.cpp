// Megatron-Core's selective recomputation modules (--recompute-modules): which ops each module reruns, the flops it
// adds to the backward pass, the activation bytes it frees against closed forms (Korthikanti et al.'s 34·s·b·h as the
// starting point), the tensor collectives a rerun MLP re-issues, the report's words, and the input errors.
#include "partsim/input/workload_library.hpp"
#include "partsim/model/cost_model.hpp"
#include "partsim/model/training.hpp"
#include "partsim/model/transformer.hpp"
#include "partsim/plan/sharded_memory.hpp"
#include "partsim/plan/strategy.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace partsim::test {
namespace {

/** A GPT as Korthikanti et al. count it: MHA, plain 4h MLP, biases, LayerNorm, learned positions, dropout. */
TransformerConfig gpt(std::int64_t h, std::int64_t a, std::int64_t s) {
  TransformerConfig c;
  c.layers = 8;
  c.hidden = h;
  c.heads = a;
  c.ffn = 4 * h;
  c.vocab = 50257;
  c.sequence_length = s;
  c.dropout = true;
  return c;
}

/** Megatron-LM 2021's kernels (every attention product a GEMM op) rerunning `modules`. */
TransformerKernels rerunning(std::initializer_list<LayerModule> modules,
                             TransformerKernels kernels = kMegatronLm2021Kernels) {
  kernels.recompute_modules = RecomputeModules::of(modules);
  return kernels;
}

std::set<std::string> rerun_ops(const TransformerModel& model) {
  std::set<std::string> out;
  for (const ComputeOp& op : model.layer_ops(1))
    if (op.selectively_recomputed) out.insert(op.name);
  return out;
}

double forward_flops(const TransformerModel& model, const std::set<std::string>& names) {
  double sum = 0.0;
  for (const ComputeOp& op : model.layer_ops(1))
    if (names.contains(op.name)) sum += op.forward_flops;
  return sum;
}

TransformerModel library_model(const std::string& name, const TransformerKernels& kernels) {
  const WorkloadSpec spec = load_workload(source_dir(), name, "test", "/workload/model");
  return TransformerModel(std::get<TransformerConfig>(spec.config), kernels);
}

TEST(RecomputeModules, EachModuleTagsItsOps) {
  const TransformerModel core(gpt(1024, 16, 2048), kMegatronLm2021Kernels);
  EXPECT_EQ(rerun_ops(core), (std::set<std::string>{"attention_scores", "attention_softmax", "attention_dropout",
                                                    "attention_over_values"}));
  EXPECT_EQ(rerun_ops(TransformerModel(gpt(1024, 16, 2048), rerunning({LayerModule::LayerNorm}))),
            (std::set<std::string>{"attention_norm", "mlp_norm"}));
  EXPECT_EQ(rerun_ops(TransformerModel(gpt(1024, 16, 2048), rerunning({LayerModule::Mlp}))),
            (std::set<std::string>{"mlp_up", "mlp_activation", "mlp_down"}));
  // Unfused bias and SiLU kernels belong to the MLP module too; the residual after it does not.
  TransformerConfig gated = gpt(1024, 16, 2048);
  gated.mlp = MlpKind::Gated;
  TransformerKernels unfused = rerunning({LayerModule::Mlp});
  unfused.fused_bias_activation = false;
  unfused.fused_bias_dropout_add = false;
  EXPECT_EQ(rerun_ops(TransformerModel(gated, unfused)),
            (std::set<std::string>{"mlp_gate", "mlp_up", "mlp_bias", "mlp_silu", "mlp_activation", "mlp_down"}));
  // The module tags do not depend on what is rerun: the attention core is known to serving and context parallelism.
  for (const ComputeOp& op : TransformerModel(gpt(1024, 16, 2048), rerunning({LayerModule::Mlp})).layer_ops(1))
    EXPECT_EQ(op.module == LayerModule::CoreAttention,
              op.name.starts_with("attention_") && op.name != "attention_norm" && op.name != "attention_residual")
        << op.name;
}

TEST(RecomputeModules, LayerNormFreesBothNormOutputsAndRerunsTheNorms) {
  // Korthikanti et al.'s GPT layer at 2 bytes with 1-byte masks keeps 34·s·b·h under selective recomputation; the
  // norms' outputs (the QKV and first MLP GEMM's inputs) are 2·s·b·h each, so rerunning the norms keeps 30·s·b·h.
  const std::int64_t h = 5120, a = 40, s = 2048, b = 2;
  const double sbh = static_cast<double>(s * b * h);
  const TransformerModel both(gpt(h, a, s), rerunning({LayerModule::CoreAttention, LayerModule::LayerNorm}));
  EXPECT_DOUBLE_EQ(both.layer_activation_bytes(b, Recomputation::Selective), 30 * sbh);
  // Without the core: its s x s tensors stay (5·a·s/h per s·b·h).
  const TransformerModel norms(gpt(h, a, s), rerunning({LayerModule::LayerNorm}));
  EXPECT_DOUBLE_EQ(norms.layer_activation_bytes(b, Recomputation::Selective), sbh * (30 + 5.0 * a * s / h));
  // The modules act under selective recomputation only.
  EXPECT_DOUBLE_EQ(both.layer_activation_bytes(b, Recomputation::None), sbh * (34 + 5.0 * a * s / h));
  EXPECT_DOUBLE_EQ(both.layer_activation_bytes(b, Recomputation::Full), 2 * sbh);
  // What sequence parallelism splits: the norms' inputs and the two 1-byte masks, without their outputs.
  EXPECT_DOUBLE_EQ(both.layer_sequence_bytes(b, Recomputation::Selective), 2 * 2 * sbh + 2 * sbh);
  EXPECT_DOUBLE_EQ(
      TransformerModel(gpt(h, a, s), kMegatronLm2021Kernels).layer_sequence_bytes(b, Recomputation::Selective),
      4 * 2 * sbh + 2 * sbh);
  // The backward reruns the attention core and both norms' forwards.
  const TrainingFlops flops = both.layer_flops(b, Recomputation::Selective);
  double expected = 0.0;
  for (const ComputeOp& op : both.layer_ops(b))
    if (op.kind == OpKind::Norm || op.module == LayerModule::CoreAttention) expected += op.forward_flops;
  EXPECT_DOUBLE_EQ(flops.recompute, expected);
  EXPECT_GT(flops.recompute,
            TransformerModel(gpt(h, a, s), kMegatronLm2021Kernels).layer_flops(b, Recomputation::Selective).recompute);
}

TEST(RecomputeModules, MlpKeepsOnlyItsInput) {
  // Rerunning the 4h MLP frees the GeLU's input (2·4·s·b·h) and the down projection's (2·4·s·b·h): 34 - 16 = 18.
  const std::int64_t h = 2048, a = 16, s = 1024, b = 1;
  const double sbh = static_cast<double>(s * b * h);
  const TransformerModel model(gpt(h, a, s), rerunning({LayerModule::CoreAttention, LayerModule::Mlp}));
  EXPECT_DOUBLE_EQ(model.layer_activation_bytes(b, Recomputation::Selective), 18 * sbh);
  const TransformerModel core(gpt(h, a, s), kMegatronLm2021Kernels);
  EXPECT_DOUBLE_EQ(model.layer_flops(b, Recomputation::Selective).recompute -
                       core.layer_flops(b, Recomputation::Selective).recompute,
                   forward_flops(model, {"mlp_up", "mlp_activation", "mlp_down"}));
}

TEST(RecomputeModules, NormsInsideLayerNormLinearsLeaveOnlyAMixtureOfExpertsNormToRerun) {
  // Megatron-Core's Transformer Engine spec: the attention norm inside the QKV module and a dense MLP's norm inside
  // the first MLP GEMM's module. `layernorm` then frees nothing in a dense layer; `mlp` reruns the norm with the MLP
  // and frees its output too.
  TransformerKernels te = rerunning({LayerModule::LayerNorm}, TransformerKernels{});
  te.norms_in_linears = true;
  const std::int64_t h = 2048, a = 16, s = 1024, b = 1;
  const double sbh = static_cast<double>(s * b * h);
  TransformerConfig dense = gpt(h, a, s);
  const TransformerModel plain(dense, TransformerKernels{});
  const TransformerModel norms(dense, te);
  EXPECT_TRUE(rerun_ops(norms).empty());
  EXPECT_DOUBLE_EQ(norms.layer_activation_bytes(b, Recomputation::Selective),
                   plain.layer_activation_bytes(b, Recomputation::None));
  te.recompute_modules = RecomputeModules::of({LayerModule::Mlp});
  const TransformerModel mlp(dense, te);
  EXPECT_EQ(rerun_ops(mlp), (std::set<std::string>{"mlp_norm", "mlp_up", "mlp_activation", "mlp_down"}));
  EXPECT_DOUBLE_EQ(plain.layer_activation_bytes(b, Recomputation::None) -
                       mlp.layer_activation_bytes(b, Recomputation::Selective),
                   2 * sbh * (1 + 4 + 4));
  EXPECT_DOUBLE_EQ(mlp.layer_sequence_bytes(b, Recomputation::Selective), 3 * 2 * sbh + 2 * sbh);
  // A mixture of experts keeps its norm its own module (the router reads it): `layernorm` reruns it.
  te.recompute_modules = RecomputeModules::of({LayerModule::LayerNorm});
  const TransformerModel oss = library_model("gpt-oss-120b", te);
  EXPECT_EQ(rerun_ops(oss), (std::set<std::string>{"mlp_norm"}));
  const TransformerModel oss_plain = library_model("gpt-oss-120b", TransformerKernels{});
  const double tokens = 4096, hidden = 2880;
  EXPECT_DOUBLE_EQ(oss_plain.layer_activation_bytes(1, Recomputation::None) -
                       oss.layer_activation_bytes(1, Recomputation::Selective),
                   2 * tokens * hidden);
}

TEST(RecomputeModules, MoeActivationFreesTheExpertsActivationOutput) {
  // gpt-oss-120b, one sequence of 4096: each of the k = 4 copies of a token keeps the activation's output (the down
  // projection's input, 2880 wide) at 2 bytes: 4·2·4096·2880 freed; the activation's forward rerun.
  TransformerKernels kernels;
  kernels.recompute_modules = RecomputeModules::of({LayerModule::MoeActivation});
  const TransformerModel oss = library_model("gpt-oss-120b", kernels);
  const TransformerModel plain = library_model("gpt-oss-120b", TransformerKernels{});
  EXPECT_DOUBLE_EQ(plain.layer_activation_bytes(1, Recomputation::None) -
                       oss.layer_activation_bytes(1, Recomputation::Selective),
                   4.0 * 2 * 4096 * 2880);
  EXPECT_EQ(rerun_ops(oss), (std::set<std::string>{"expert_activation"}));
  EXPECT_DOUBLE_EQ(oss.layer_flops(1, Recomputation::Selective).recompute, forward_flops(oss, {"expert_activation"}));
}

TEST(RecomputeModules, MlaUpProjectionFreesTheQueriesKeysAndValues) {
  // DeepSeek-V3: 128 heads, queries and keys of 192 (128 + 64 rotary), values of 128: 2·t·128·(192 + 192 + 128).
  TransformerKernels kernels;
  kernels.recompute_modules = RecomputeModules::of({LayerModule::MlaUpProjection});
  const TransformerModel mla = library_model("deepseek-v3", kernels);
  const TransformerModel plain = library_model("deepseek-v3", TransformerKernels{});
  const double t = static_cast<double>(mla.config().sequence_length);
  EXPECT_DOUBLE_EQ(plain.layer_activation_bytes(1, Recomputation::None) -
                       mla.layer_activation_bytes(1, Recomputation::Selective),
                   2.0 * t * 128 * (192 + 192 + 128));
  EXPECT_EQ(rerun_ops(mla), (std::set<std::string>{"q_up", "kv_up", "rotary_embedding"}));
}

/** `gpus` A100s in one node training `model` with strategy model_parallel `strategy`, selective recomputation of
 * `modules`. */
nlohmann::json mp_scenario(nlohmann::json strategy, const nlohmann::json& modules, int gpus = 8,
                           const std::string& model = "gpt3-13b") {
  nlohmann::json doc = base_scenario(1, gpus);
  doc["cluster"]["gpu"] = "a100-sxm4-80gb";
  doc["workload"] = {{"kind", "model_training"},
                     {"model", model},
                     {"global_batch", 4},
                     {"micro_batch", 1},
                     {"recomputation", "selective"}};
  if (!modules.is_null()) doc["workload"]["recompute_modules"] = modules;
  strategy["kind"] = "model_parallel";
  doc["strategy"] = std::move(strategy);
  return doc;
}

struct Tensor {
  int all_reduces = 0;
  int reduce_scatters = 0;
  int all_gathers = 0;
  double compute = 0.0;
};

Tensor tensor_volume(const Plan& plan) {
  Tensor v;
  for (const Step& step : resolved_steps(plan, 0)) {
    if (const auto* c = std::get_if<CollectiveStep>(&step); c && c->kind == CommKind::Tensor) {
      v.all_reduces += c->op == CollectiveOp::AllReduce ? 1 : 0;
      v.reduce_scatters += c->op == CollectiveOp::ReduceScatter ? 1 : 0;
      v.all_gathers += c->op == CollectiveOp::AllGather ? 1 : 0;
    }
    if (const auto* c = std::get_if<ComputeStep>(&step)) v.compute += c->amount;
  }
  return v;
}

TEST(RecomputeModules, RerunMlpReissuesItsTensorCollectives) {
  // GPT-3 13B (40 layers) on tensor 2, one micro-batch per replica: Megatron-Core checkpoints the whole MLP module,
  // so its rerun repeats the all-reduce after the down projection (with sequence parallelism the all-gather before
  // the up projection and the reduce-scatter after the down projection): one more (two more) per layer.
  for (bool sp : {false, true}) {
    SCOPED_TRACE(sp ? "sequence parallel" : "all-reduce");
    const nlohmann::json strategy = {{"data", 4}, {"tensor", 2}, {"sequence_parallel", sp}};
    const Tensor core = tensor_volume(build_plan(parse(mp_scenario(strategy, nullptr))));
    const Tensor mlp = tensor_volume(build_plan(parse(mp_scenario(strategy, {"core_attn", "mlp"}))));
    EXPECT_EQ(mlp.all_reduces, core.all_reduces + (sp ? 0 : 40));
    EXPECT_EQ(mlp.reduce_scatters, core.reduce_scatters + (sp ? 40 : 0));
    EXPECT_EQ(mlp.all_gathers, core.all_gathers + (sp ? 40 : 0));
    EXPECT_GT(mlp.compute, core.compute);
  }
  // Without a tensor group the rerun is compute only.
  const Tensor alone = tensor_volume(build_plan(parse(mp_scenario({{"data", 4}}, {"core_attn", "mlp"}, 4))));
  EXPECT_EQ(alone.all_reduces + alone.reduce_scatters + alone.all_gathers, 0);
}

TEST(RecomputeModules, PlanMemoryAndStrategyLineFollowTheModules) {
  // Tensor 2 without sequence parallelism: the norms' outputs are whole on each tensor rank, so rerunning the norms
  // frees 2 x 2·s·b·h per layer (s 2048, b 1, h 5120) on every rank, 40 layers, one micro-batch in flight.
  const nlohmann::json strategy = {{"data", 4}, {"tensor", 2}};
  const Plan core = build_plan(parse(mp_scenario(strategy, nullptr)));
  const Plan norms = build_plan(parse(mp_scenario(strategy, {"core_attn", "layernorm"})));
  EXPECT_DOUBLE_EQ(core.memory->activations - norms.memory->activations, 40 * 2 * 2.0 * 2048 * 5120);
  EXPECT_NE(norms.summary.find("selective (core_attn, layernorm) recomputation"), std::string::npos) << norms.summary;
  EXPECT_NE(core.summary.find(", selective recomputation"), std::string::npos) << core.summary;
}

std::string error_pointer(const nlohmann::json& doc) {
  return input_error([&] { parse(doc); }).pointer();
}

TEST(RecomputeModules, EachInvalidListNamesItsKey) {
  const nlohmann::json data = {{"data", 4}};
  nlohmann::json none = mp_scenario(data, {"layernorm"}, 4);
  none["workload"]["recomputation"] = "none";
  EXPECT_EQ(error_pointer(none), "/workload/recompute_modules");
  EXPECT_EQ(error_pointer(mp_scenario(data, {"attention"}, 4)), "/workload/recompute_modules/0");
  EXPECT_EQ(error_pointer(mp_scenario(data, {"mlp", "mlp"}, 4)), "/workload/recompute_modules/1");
  EXPECT_EQ(error_pointer(mp_scenario(data, nlohmann::json::array(), 4)), "/workload/recompute_modules");
  EXPECT_EQ(error_pointer(mp_scenario(data, {"core_attn", "moe"}, 4)), "/workload/recompute_modules/1");
  EXPECT_EQ(error_pointer(mp_scenario(data, {"moe_act"}, 4)), "/workload/recompute_modules/0");        // no experts
  EXPECT_EQ(error_pointer(mp_scenario(data, {"mla_up_proj"}, 4)), "/workload/recompute_modules/0");    // no MLA
  EXPECT_EQ(error_pointer(mp_scenario(data, {"shared_experts"}, 4)), "/workload/recompute_modules/0"); // no experts
  EXPECT_EQ(error_pointer(mp_scenario(data, {"mlp"}, 4, "mixtral-8x7b")), "/workload/recompute_modules/0");
  nlohmann::json overlap =
      mp_scenario({{"data", 4}, {"tensor", 2}, {"sequence_parallel", true}, {"tp_comm_overlap", true}}, {"mlp"});
  EXPECT_EQ(error_pointer(overlap), "/strategy/tp_comm_overlap");
  // Accepted: the same overlap rerunning the norms.
  overlap["workload"]["recompute_modules"] = {"core_attn", "layernorm"};
  EXPECT_TRUE(std::get<ModelParallel>(parse(overlap).strategy).tp_comm_overlap);
}

// --- torchtitan's per-op policy (recompute_policy "torchtitan_op")
// ----------------------------------------------------

/** Llama 3 8B with torchtitan's kernels (flash attention, unfused elementwise) under the per-op policy, FP8 GEMMs by
 * `fp8`. */
TransformerModel torchtitan_llama(Fp8Recipe fp8 = Fp8Recipe::None) {
  TransformerKernels kernels{AttentionKernel::Flash,
                             false,
                             false,
                             CrossEntropyKernel::Fp32LogSoftmax,
                             RecomputeModules::torchtitan_ops(),
                             false};
  kernels.fp8 = fp8;
  return library_model("llama3-8b", kernels);
}

nlohmann::json torchtitan_scenario(nlohmann::json strategy) {
  nlohmann::json doc = mp_scenario(std::move(strategy), nullptr, 8, "llama3-8b");
  doc["cluster"]["gpu"] = "h100-sxm5-80gb";
  doc["workload"]["global_batch"] = 8;
  doc["workload"]["stack"] = "torchtitan";
  doc["workload"]["recompute_policy"] = "torchtitan_op";
  return doc;
}

TEST(RecomputePolicy, TorchtitanOpRerunsEverySecondMatmulAndTheElementwiseOps) {
  // wq, wk, wv, wo, w1, w3, w2: the second, fourth and sixth (wk, wo, w3) rerun; the attention kernel's output is kept.
  const TransformerModel model = torchtitan_llama();
  std::set<std::string> whole;
  double qkv_share = -1.0;
  for (const ComputeOp& op : model.layer_ops(1)) {
    if (op.name == "qkv_projection")
      qkv_share = op.recomputed_share;
    else if (op.selectively_recomputed) {
      EXPECT_DOUBLE_EQ(op.recomputed_share, 1.0) << op.name;
      whole.insert(op.name);
    }
  }
  // Keys: 8 heads of 128 of the 32 + 8 + 8 heads' 128 columns of the fused QKV GEMM.
  EXPECT_DOUBLE_EQ(qkv_share, 8.0 / 48.0);
  EXPECT_EQ(whole,
            (std::set<std::string>{"attention_norm", "rotary_embedding", "output_projection", "attention_residual",
                                   "mlp_norm", "mlp_up", "mlp_silu", "mlp_activation", "mlp_residual"}));
  // The rerun flops: those ops' forwards and the keys' share of the QKV GEMM, in the flops and in the priced backward.
  const TrainingFlops flops = model.layer_flops(1, Recomputation::Selective);
  double expected = forward_flops(model, whole);
  for (const ComputeOp& op : model.layer_ops(1))
    if (op.name == "qkv_projection") expected += op.forward_flops / 6.0;
  EXPECT_DOUBLE_EQ(flops.recompute, expected);
  const GpuProfile gpu = parse(torchtitan_scenario({{"data", 8}})).cluster.gpu;
  double rerun_time = 0.0;
  for (const ComputeOp& op : model.layer_ops(1))
    if (op.selectively_recomputed) rerun_time += op.recomputed_share * op_time(op, gpu, "bf16", 2.0, false);
  const TrainingUnit unit = price_ops("layer", model.layer_ops(1), gpu, "bf16", Recomputation::Selective);
  EXPECT_DOUBLE_EQ(unit.recompute_time, rerun_time);
  EXPECT_GT(rerun_time, 0.0);
}

TEST(RecomputePolicy, TorchtitanOpKeepsTheInputTheKeptMatmulsAndTheAttentionOutput) {
  // Per token at 2 bytes: the input h, wq's q = 4096, wv's kv = 1024, w1's f = 14336, w2's h, the attention output
  // (32 heads of 128) and its fp32 softmax statistics (4 bytes per head and token).
  const TransformerModel model = torchtitan_llama();
  const double t = 8192.0;
  const double h = 4096, q = 4096, kv = 1024, f = 14336;
  EXPECT_DOUBLE_EQ(model.layer_activation_bytes(1, Recomputation::Selective),
                   2.0 * t * (h + q + kv + f + h + q) + 4.0 * 32.0 * t);
  EXPECT_DOUBLE_EQ(model.layer_sequence_bytes(1, Recomputation::Selective), 2.0 * t * h);
  // FP8 GEMMs (torch._scaled_mm) are not kept: every GEMM and its cast rerun; only the attention kernel is not.
  const TransformerModel fp8 = torchtitan_llama(Fp8Recipe::Tensorwise);
  for (const ComputeOp& op : fp8.layer_ops(1)) {
    EXPECT_EQ(op.selectively_recomputed, op.kind != OpKind::Attention) << op.name;
    EXPECT_DOUBLE_EQ(op.recomputed_share, 1.0) << op.name;
  }
  EXPECT_DOUBLE_EQ(fp8.layer_activation_bytes(1, Recomputation::Selective), 2.0 * t * (h + q) + 4.0 * 32.0 * t);
}

TEST(RecomputePolicy, PlanMemorySitsBetweenFullAndModulesAndTheLineNamesThePolicy) {
  const nlohmann::json fsdp = {{"data", 8}, {"zero", 3}};
  const Plan op = build_plan(parse(torchtitan_scenario(fsdp)));
  nlohmann::json full_doc = torchtitan_scenario(fsdp);
  full_doc["workload"].erase("recompute_policy");
  full_doc["workload"]["recomputation"] = "full";
  const Plan full = build_plan(parse(full_doc));
  nlohmann::json none_doc = full_doc;
  none_doc["workload"]["recomputation"] = "none";
  const Plan none = build_plan(parse(none_doc));
  // Full keeps 2·t·h per layer, the policy 2·t·(h + q + kv + f + h + q) + 4·32·t more (32 layers, one micro-batch);
  // both add one layer's activations for its rebuild.
  const double t = 8192.0;
  EXPECT_DOUBLE_EQ(op.memory->activations - full.memory->activations,
                   32.0 * (2.0 * t * (4096 + 1024 + 14336 + 4096 + 4096) + 4.0 * 32.0 * t));
  EXPECT_LT(op.memory->activations, none.memory->activations);
  EXPECT_NE(op.summary.find("selective (torchtitan's per-op policy"), std::string::npos) << op.summary;
}

TEST(RecomputePolicy, EachInvalidUseNamesItsKey) {
  const nlohmann::json data = {{"data", 8}};
  nlohmann::json full = torchtitan_scenario(data);
  full["workload"]["recomputation"] = "full";
  EXPECT_EQ(error_pointer(full), "/workload/recompute_policy");
  nlohmann::json modules = torchtitan_scenario(data);
  modules["workload"]["recompute_modules"] = {"core_attn"};
  EXPECT_EQ(error_pointer(modules), "/workload/recompute_policy");
  nlohmann::json unfused = torchtitan_scenario(data);
  unfused["workload"]["attention"] = "unfused";
  EXPECT_EQ(error_pointer(unfused), "/workload/recompute_policy");
  nlohmann::json moe = torchtitan_scenario(data);
  moe["workload"]["model"] = "mixtral-8x7b";
  EXPECT_EQ(error_pointer(moe), "/workload/recompute_policy");
  EXPECT_EQ(error_pointer(torchtitan_scenario({{"data", 4}, {"tensor", 2}})), "/strategy/tensor");
  nlohmann::json unknown = torchtitan_scenario(data);
  unknown["workload"]["recompute_policy"] = "op";
  EXPECT_EQ(error_pointer(unknown), "/workload/recompute_policy");
}

// --- Megatron-Core's block method (--recompute-method block --recompute-num-layers N) ---------------------------

/** GPT-3 13B (40 layers) on `gpus` A100s of one node with full recomputation, by the block method of `block` layers
 * (none: every layer), or `recomputation` instead of full. */
nlohmann::json block_scenario(nlohmann::json strategy, std::optional<int> block, int gpus = 4,
                              const std::string& recomputation = "full") {
  nlohmann::json doc = mp_scenario(std::move(strategy), nullptr, gpus);
  doc["workload"]["recomputation"] = recomputation;
  if (block) doc["workload"]["recompute_num_layers"] = *block;
  return doc;
}

TEST(RecomputeBlock, TheFirstLayersOfEachChunkRerun) {
  // Pipeline 2 x 2 virtual stages: 4 chunks of 10 layers; the first 3 of each rerun, 12 of 40.
  const Scenario s =
      parse(block_scenario({{"data", 2}, {"pipeline", 2}, {"schedule", "interleaved"}, {"virtual_stages", 2}}, 3));
  const std::vector<bool> rerun =
      block_recomputed_layers(std::get<ModelTraining>(s.workload), std::get<ModelParallel>(s.strategy));
  ASSERT_EQ(rerun.size(), 40U);
  for (std::size_t l = 0; l < rerun.size(); ++l) EXPECT_EQ(rerun[l], l % 10 < 3) << "layer " << l;
  // Without the block method (or without full recomputation) the list is empty: every layer as the training says.
  const Scenario full = parse(block_scenario({{"data", 4}}, std::nullopt));
  EXPECT_TRUE(
      block_recomputed_layers(std::get<ModelTraining>(full.workload), std::get<ModelParallel>(full.strategy)).empty());
}

TEST(RecomputeBlock, ComputeAndHardwareFlopsGrowByTheRerunLayersShare) {
  // Data 4, no tensor group: a layer's rerun is its forward's compute only, so N of 40 layers add N/40 of what full
  // recomputation adds, to the rank's compute and to the hardware flops; N at least the chunk's layers is full.
  const nlohmann::json data = {{"data", 4}};
  const Plan none = build_plan(parse(block_scenario(data, std::nullopt, 4, "none")));
  const Plan full = build_plan(parse(block_scenario(data, std::nullopt)));
  const double added = tensor_volume(full).compute - tensor_volume(none).compute;
  const double added_flops = full.hardware_flops_per_iteration - none.hardware_flops_per_iteration;
  ASSERT_GT(added, 0.0);
  for (int n : {1, 10, 39}) {
    SCOPED_TRACE(n);
    const Plan block = build_plan(parse(block_scenario(data, n)));
    EXPECT_NEAR(tensor_volume(block).compute - tensor_volume(none).compute, n / 40.0 * added, 1e-9 * added);
    EXPECT_NEAR(block.hardware_flops_per_iteration - none.hardware_flops_per_iteration, n / 40.0 * added_flops,
                1e-9 * added_flops);
    EXPECT_DOUBLE_EQ(block.model_flops_per_iteration, none.model_flops_per_iteration);
  }
  for (int n : {40, 100}) {
    const Plan all = build_plan(parse(block_scenario(data, n)));
    EXPECT_DOUBLE_EQ(tensor_volume(all).compute, tensor_volume(full).compute);
    EXPECT_DOUBLE_EQ(all.hardware_flops_per_iteration, full.hardware_flops_per_iteration);
    EXPECT_DOUBLE_EQ(all.memory->activations, full.memory->activations);
  }
}

TEST(RecomputeBlock, OnlyTheRerunLayersReissueTheirTensorCollectives) {
  // Tensor 2 with sequence parallelism: full recomputation re-issues each layer's forward reduce-scatters and
  // all-gathers before its backward; the block method only for its N layers.
  const nlohmann::json strategy = {{"data", 4}, {"tensor", 2}, {"sequence_parallel", true}};
  const Tensor none = tensor_volume(build_plan(parse(block_scenario(strategy, std::nullopt, 8, "none"))));
  const Tensor full = tensor_volume(build_plan(parse(block_scenario(strategy, std::nullopt, 8))));
  const Tensor block = tensor_volume(build_plan(parse(block_scenario(strategy, 10, 8))));
  ASSERT_EQ((full.reduce_scatters - none.reduce_scatters) % 40, 0);
  ASSERT_GT(full.reduce_scatters, none.reduce_scatters);
  EXPECT_EQ(block.reduce_scatters - none.reduce_scatters, (full.reduce_scatters - none.reduce_scatters) / 4);
  EXPECT_EQ(block.all_gathers - none.all_gathers, (full.all_gathers - none.all_gathers) / 4);
  // The same through Transformer Engine's userbuffers overlap (the blocks' collectives beside their GEMMs).
  const nlohmann::json overlap = {{"data", 4}, {"tensor", 2}, {"sequence_parallel", true}, {"tp_comm_overlap", true}};
  const Tensor o_none = tensor_volume(build_plan(parse(block_scenario(overlap, std::nullopt, 8, "none"))));
  const Tensor o_full = tensor_volume(build_plan(parse(block_scenario(overlap, std::nullopt, 8))));
  const Tensor o_block = tensor_volume(build_plan(parse(block_scenario(overlap, 10, 8))));
  EXPECT_NEAR(o_block.compute - o_none.compute, (o_full.compute - o_none.compute) / 4,
              1e-9 * (o_full.compute - o_none.compute));
}

TEST(RecomputeBlock, InterleavedChunksEachRerunTheirFirstLayers) {
  // Pipeline 2 x 2 virtual stages: stage 0 holds chunks of layers 0-9 and 20-29; 3 of each rerun, 6 of its 20.
  const nlohmann::json strategy = {{"data", 2}, {"pipeline", 2}, {"schedule", "interleaved"}, {"virtual_stages", 2}};
  const double none = tensor_volume(build_plan(parse(block_scenario(strategy, std::nullopt, 4, "none")))).compute;
  const double full = tensor_volume(build_plan(parse(block_scenario(strategy, std::nullopt)))).compute;
  const double block = tensor_volume(build_plan(parse(block_scenario(strategy, 3)))).compute;
  EXPECT_NEAR(block - none, 6.0 / 20.0 * (full - none), 1e-9 * (full - none));
}

TEST(RecomputeBlock, ActivationsKeepTheOtherLayersWhole) {
  // One micro-batch in flight, no tensor group: the N rerun layers keep their input (2·s·b·h), the 40 - N others
  // all their activations; full recomputation's one rebuilt layer on top in both.
  const nlohmann::json data = {{"data", 4}};
  const Scenario s = parse(block_scenario(data, 15));
  const TransformerModel model = std::get<ModelTraining>(s.workload).transformer();
  const double kept = model.layer_activation_bytes(1, Recomputation::None);
  const double input = model.layer_activation_bytes(1, Recomputation::Full);
  EXPECT_DOUBLE_EQ(input, 2.0 * 2048 * 5120);
  const Plan full = build_plan(parse(block_scenario(data, std::nullopt)));
  const Plan block = build_plan(s);
  EXPECT_NEAR(block.memory->activations - full.memory->activations, 25 * (kept - input), 1e-6 * kept);
  EXPECT_NE(block.summary.find("full (block: the first 15 layers of each stage's model chunk) recomputation"),
            std::string::npos)
      << block.summary;
}

TEST(RecomputeBlock, InvalidUsesNameTheKey) {
  EXPECT_EQ(error_pointer(block_scenario({{"data", 4}}, 2, 4, "selective")), "/workload/recompute_num_layers");
  EXPECT_EQ(error_pointer(block_scenario({{"data", 4}}, 2, 4, "none")), "/workload/recompute_num_layers");
  EXPECT_EQ(error_pointer(block_scenario({{"data", 4}}, 0)), "/workload/recompute_num_layers");
  nlohmann::json plain = block_scenario({{"data", 4}}, 2);
  plain["strategy"] = {{"kind", "data_parallel"}, {"partitions", 4}, {"shares", "balanced"}};
  const InputError e = input_error([&] { parse(plain); });
  EXPECT_EQ(e.pointer(), "/workload/recompute_num_layers");
  EXPECT_NE(std::string(e.what()).find("strategy kind \"data_parallel\""), std::string::npos) << e.what();
}

} // namespace
} // namespace partsim::test
