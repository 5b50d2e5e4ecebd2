// Kernel choices of a training stack (attention core, fused bias + activation, fused bias + dropout + add): the op
// lists they give, flops that never depend on them, the bytes each variant moves by closed form, the activation
// memory of a fused attention kernel, and the pricing of that kernel from a measured attention table.
#include "partsim/input/hardware.hpp"
#include "partsim/input/json_reader.hpp"
#include "partsim/input/scenario.hpp"
#include "partsim/model/compute_op.hpp"
#include "partsim/model/cost_model.hpp"
#include "partsim/model/training.hpp"
#include "partsim/model/transformer.hpp"
#include "partsim/plan/plan.hpp"
#include "partsim/plan/strategy.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace partsim {
namespace {

/** The stack choices `attention`, bias + activation and bias + dropout + add fusions, cross-entropy kernel; the rest
 * (recompute modules) at their defaults. */
TransformerKernels kernels_of(AttentionKernel attention, bool fused_bias_activation, bool fused_bias_dropout_add,
                              CrossEntropyKernel cross_entropy = CrossEntropyKernel::Fused) {
  TransformerKernels k;
  k.attention = attention;
  k.fused_bias_activation = fused_bias_activation;
  k.fused_bias_dropout_add = fused_bias_dropout_add;
  k.cross_entropy = cross_entropy;
  return k;
}

using nlohmann::json;

TransformerConfig gpt() {
  TransformerConfig c;
  c.layers = 2;
  c.hidden = 1024;
  c.heads = 16;
  c.ffn = 4096;
  c.vocab = 50304;
  c.sequence_length = 2048;
  c.dropout = true;
  return c;
}

using test::find_op;
using test::op_names;

double bytes(const std::vector<ComputeOp>& ops) {
  double sum = 0.0;
  for (const ComputeOp& op : ops) sum += op.forward_bytes(2.0) + op.backward_bytes(2.0);
  return sum;
}

TEST(AttentionKernel, OpListsPerKernel) {
  const TransformerModel fused(gpt(), kMegatronLm2021Kernels);
  EXPECT_EQ(
      op_names(fused.layer_ops(1)),
      (std::vector<std::string>{"attention_norm", "qkv_projection", "attention_scores", "attention_softmax",
                                "attention_dropout", "attention_over_values", "output_projection", "attention_residual",
                                "mlp_norm", "mlp_up", "mlp_activation", "mlp_down", "mlp_residual"}));
  const TransformerModel flash(gpt(), kernels_of(AttentionKernel::Flash, true, true));
  EXPECT_EQ(op_names(flash.layer_ops(1)),
            (std::vector<std::string>{"attention_norm", "qkv_projection", "attention_core", "output_projection",
                                      "attention_residual", "mlp_norm", "mlp_up", "mlp_activation", "mlp_down",
                                      "mlp_residual"}));
  const TransformerModel unfused(gpt(), kernels_of(AttentionKernel::Unfused, false, false));
  EXPECT_EQ(op_names(unfused.layer_ops(1)),
            (std::vector<std::string>{"attention_norm", "qkv_projection", "attention_scores", "attention_mask",
                                      "attention_softmax", "attention_dropout", "attention_over_values",
                                      "output_projection", "attention_output_bias", "attention_output_dropout",
                                      "attention_residual", "mlp_norm", "mlp_up", "mlp_bias", "mlp_activation",
                                      "mlp_down", "mlp_output_bias", "mlp_output_dropout", "mlp_residual"}));
}

TEST(AttentionKernel, FlopsDoNotDependOnTheKernels) {
  const TransformerModel reference(gpt(), kMegatronLm2021Kernels);
  for (const AttentionKernel attention :
       {AttentionKernel::Flash, AttentionKernel::FusedSoftmax, AttentionKernel::Unfused})
    for (const bool fused : {true, false}) {
      const TransformerModel model(gpt(), kernels_of(attention, fused, fused));
      for (const Recomputation r : {Recomputation::None, Recomputation::Selective, Recomputation::Full}) {
        const TrainingFlops a = model.layer_flops(2, r);
        const TrainingFlops b = reference.layer_flops(2, r);
        EXPECT_DOUBLE_EQ(a.forward, b.forward) << to_string(attention) << fused;
        EXPECT_DOUBLE_EQ(a.backward, b.backward) << to_string(attention) << fused;
        EXPECT_DOUBLE_EQ(a.recompute, b.recompute) << to_string(attention) << fused;
      }
    }
}

TEST(AttentionKernel, BytesOfEachVariantByClosedForm) {
  // b = 1, s = 2048, 16 heads: 16·s² scores; T = 2048 tokens of h = 1024, f = 4096. 2 bytes per element, masks 1.
  const double S = 16.0 * 2048 * 2048, T = 2048, h = 1024, f = 4096;
  const TransformerModel fused(gpt(), kMegatronLm2021Kernels);
  const TransformerModel unfused(gpt(), kernels_of(AttentionKernel::Unfused, true, true));
  const TransformerModel flash(gpt(), kernels_of(AttentionKernel::Flash, true, true));
  // Dropout on the probabilities: read S, write S, a 1-byte mask; backward reads the gradient and the mask, writes
  // the input gradient (2·in + out at 2 bytes, + the mask).
  const ComputeOp& drop = find_op(fused.layer_ops(1), "attention_dropout");
  EXPECT_DOUBLE_EQ(drop.forward_bytes(2.0), 2 * (2 * S) + S);
  EXPECT_DOUBLE_EQ(drop.backward_bytes(2.0), 2 * (3 * S) + S);
  // Unfused adds the mask pass: one read and one write of S forward, 2·in + out backward.
  EXPECT_DOUBLE_EQ(bytes(unfused.layer_ops(1)) - bytes(fused.layer_ops(1)), 2 * (2 * S) + 2 * (3 * S));
  // Flash reads Q, K, V and writes O and the fp32 softmax statistics (one per query and head).
  const ComputeOp& core = find_op(flash.layer_ops(1), "attention_core");
  EXPECT_DOUBLE_EQ(core.forward_bytes(2.0), 2 * (3 * T * h + T * h) + 4.0 * 16 * 2048);
  EXPECT_DOUBLE_EQ(core.forward_bytes(4.0), 4 * (3 * T * h + T * h) + 4.0 * 16 * 2048);
  EXPECT_EQ(core.attention->batch_heads, 16);
  EXPECT_TRUE(core.attention->causal);
  // Unfused bias + GeLU: one more pass over T x f; unfused bias + dropout + add: bias (T·h in and out) and dropout
  // (T·h in and out, the mask) before the add, per block.
  const TransformerModel split(gpt(), kernels_of(AttentionKernel::FusedSoftmax, false, false));
  const double bias_gelu = 2 * (2 * T * f) + 2 * (3 * T * f);
  const double per_block = 2 * (2 * T * h) + 2 * (3 * T * h) + 2 * (2 * T * h) + 2 * (3 * T * h);
  EXPECT_DOUBLE_EQ(bytes(split.layer_ops(1)) - bytes(fused.layer_ops(1)), bias_gelu + 2 * per_block);
}

TEST(CrossEntropyKernel, BytesOfEachVariantByClosedForm) {
  // b = 1: T = 2048 tokens; on one of 4 tensor-parallel ranks a vocabulary shard of 50304 / 4 = 12576 logits each.
  const double T = 2048, E = T * 12576;
  const TensorSplit four{4, false};
  auto loss = [&](CrossEntropyKernel kernel) {
    const TransformerModel model(gpt(), kernels_of(AttentionKernel::Flash, true, true, kernel));
    return find_op(model.outer_ops(1, four), "loss");
  };
  // Fused: the logits read once forward, the loss written; backward the logits read and their gradient written.
  const ComputeOp fused = loss(CrossEntropyKernel::Fused);
  EXPECT_DOUBLE_EQ(fused.forward_bytes(2.0), 2 * (E + T));
  EXPECT_DOUBLE_EQ(fused.backward_bytes(2.0), 2 * (2 * E + T));
  // Megatron on fp32 logits: the cast's read (2E) and write (4E), max 4E, subtract 8E, exp 8E, sum 4E, divide 8E;
  // backward the product in place 8E, the cast back (read 4E, write 2E) and the loss gradient.
  const ComputeOp megatron = loss(CrossEntropyKernel::MegatronFp32);
  EXPECT_DOUBLE_EQ(megatron.forward_bytes(2.0), 2 * E + 2 * T + 36 * E);
  EXPECT_DOUBLE_EQ(megatron.backward_bytes(2.0), 2 * E + 2 * T + 12 * E);
  // PyTorch's cross_entropy on fp32 logits: cast 2E + 4E, log_softmax 4E + 4E; backward the gradient's fill 4E,
  // log_softmax's backward 4E + 4E + 4E, the cast back 4E + 2E.
  const ComputeOp torch = loss(CrossEntropyKernel::Fp32LogSoftmax);
  EXPECT_DOUBLE_EQ(torch.forward_bytes(2.0), 2 * E + 2 * T + 12 * E);
  EXPECT_DOUBLE_EQ(torch.backward_bytes(2.0), 2 * E + 2 * T + 20 * E);
  // The fp32 passes do not follow the data type; the casts do.
  EXPECT_DOUBLE_EQ(megatron.forward_bytes(4.0) - megatron.forward_bytes(2.0), 2 * (E + T));
  // Flops never change.
  EXPECT_DOUBLE_EQ(megatron.forward_flops, fused.forward_flops);
  EXPECT_DOUBLE_EQ(torch.backward_flops, fused.backward_flops);
}

TEST(CrossEntropyKernel, EachStackHasItsOwn) {
  EXPECT_EQ(stack_kernels(TrainingStack::MegatronLm2021).cross_entropy, CrossEntropyKernel::MegatronFp32);
  EXPECT_EQ(stack_kernels(TrainingStack::MegatronCore2024).cross_entropy, CrossEntropyKernel::MegatronFp32);
  EXPECT_EQ(stack_kernels(TrainingStack::Torchtitan).cross_entropy, CrossEntropyKernel::Fp32LogSoftmax);
  EXPECT_EQ(stack_kernels(TrainingStack::Custom).cross_entropy, CrossEntropyKernel::Fused);
  EXPECT_EQ(describe(stack_kernels(TrainingStack::MegatronCore2024)),
            "flash attention, fused bias + activation, fused bias + dropout + add, megatron_fp32 cross-entropy");
}

TEST(AttentionKernel, FlashKeepsNoScoresUnderAnyRecomputation) {
  const TransformerModel fused(gpt(), kMegatronLm2021Kernels);
  const TransformerModel flash(gpt(), kernels_of(AttentionKernel::Flash, true, true));
  const double stats = 4.0 * 16 * 2048; // fp32 softmax statistics per query and head
  EXPECT_DOUBLE_EQ(flash.layer_activation_bytes(1, Recomputation::None),
                   fused.layer_activation_bytes(1, Recomputation::Selective) + stats);
  EXPECT_DOUBLE_EQ(flash.layer_activation_bytes(1, Recomputation::Selective),
                   flash.layer_activation_bytes(1, Recomputation::None));
  EXPECT_DOUBLE_EQ(flash.layer_activation_bytes(1, Recomputation::Full),
                   fused.layer_activation_bytes(1, Recomputation::Full));
}

GpuProfile attention_gpu() {
  const json doc = {
      {"name", "hand"},
      {"peak_flops", {{"bf16", "1000TFLOPs"}, {"fp32", "50TFLOPs"}}},
      {"memory_bandwidth", "2TBps"},
      {"memory_capacity", "80GB"},
      {"memory_efficiency", 0.5},
      {"kernel_launch_overhead", "5us"},
      {"attention_efficiency",
       {{"data_type", "bf16"},
        {"points",
         json::array({{{"sequence_length", 1024}, {"head_dim", 64}, {"causal", true}, {"efficiency", 0.2}},
                      {{"sequence_length", 4096}, {"head_dim", 64}, {"causal", true}, {"efficiency", 0.4}},
                      {{"sequence_length", 4096}, {"head_dim", 128}, {"causal", true}, {"efficiency", 0.6}},
                      {{"sequence_length", 4096}, {"head_dim", 128}, {"causal", false}, {"efficiency", 0.7}}})}}}};
  JsonReader reader(doc, "gpu.json");
  return parse_gpu_profile(reader);
}

TEST(AttentionKernel, EfficiencyFromTheMeasuredTable) {
  const GpuProfile gpu = attention_gpu();
  const AttentionEfficiencyTable& table = *gpu.attention_efficiency;
  // Exact at points, linear in ln(s) between them, the edge value outside, the nearest head dimension in log space.
  EXPECT_DOUBLE_EQ(attention_efficiency(table, {8, 1024, 64, true}), 0.2);
  EXPECT_DOUBLE_EQ(attention_efficiency(table, {8, 2048, 64, true}), 0.3);
  EXPECT_DOUBLE_EQ(attention_efficiency(table, {8, 512, 64, true}), 0.2);
  EXPECT_DOUBLE_EQ(attention_efficiency(table, {8, 65536, 64, true}), 0.4);
  EXPECT_DOUBLE_EQ(attention_efficiency(table, {8, 4096, 80, true}), 0.4);  // ln 80 nearer ln 64
  EXPECT_DOUBLE_EQ(attention_efficiency(table, {8, 4096, 100, true}), 0.6); // ln 100 nearer ln 128
  EXPECT_DOUBLE_EQ(attention_efficiency(table, {8, 4096, 128, false}), 0.7);
  EXPECT_DOUBLE_EQ(attention_efficiency(table, {8, 1024, 64, false}), 0.7); // only one non-causal point
}

TEST(AttentionKernel, FlashTimeByHand) {
  const GpuProfile gpu = attention_gpu();
  EXPECT_DOUBLE_EQ(gpu.achieved_memory_bandwidth(), 1e12);
  TransformerConfig c = gpt();
  c.hidden = 2048; // 16 heads of 128
  c.ffn = 8192;
  c.sequence_length = 4096;
  const TransformerModel flash(c, kernels_of(AttentionKernel::Flash, true, true));
  const ComputeOp& core = find_op(flash.layer_ops(1), "attention_core");
  // Causal: 4·16·4096²·128 / 2 flop forward at 0.6 x 1000 TFLOP/s, 2.5x that backward, plus the launch.
  const double executed = 4.0 * 16 * 4096.0 * 4096 * 128 / 2;
  EXPECT_DOUBLE_EQ(op_time(core, gpu, "bf16", 2.0, false), executed / 600e12 + 5e-6);
  EXPECT_DOUBLE_EQ(op_time(core, gpu, "bf16", 2.0, true), 2.5 * executed / 600e12 + 5e-6);
  // Memory-bound ops move at the achieved bandwidth (memory_efficiency x memory_bandwidth).
  const ComputeOp& norm = find_op(flash.layer_ops(1), "attention_norm");
  EXPECT_DOUBLE_EQ(op_time(norm, gpu, "bf16", 2.0, false), norm.forward_bytes(2.0) / 1e12 + 5e-6);
}

TEST(AttentionKernel, TritonPadsTheHeadToAPowerOfTwo) {
  // flash_attn_triton.py multiplies over BLOCK_HEADDIM = max(next_power_of_2(d), 16): a head of 112 costs
  // the products of 128, so at the same table point (128 is the nearest head dimension) its time is that of 128 heads
  // of 112 x 128/112; a power of two is unchanged, and `flash` is not padded.
  const GpuProfile gpu = attention_gpu(); // no Triton table: attention_efficiency prices it
  auto core = [](AttentionKernel kernel, std::int64_t heads, std::int64_t hidden) {
    TransformerConfig c = gpt();
    c.hidden = hidden;
    c.heads = heads;
    c.ffn = 4 * hidden;
    c.sequence_length = 4096;
    return find_op(TransformerModel(c, kernels_of(kernel, true, true)).layer_ops(1), "attention_core");
  };
  const ComputeOp d112 = core(AttentionKernel::FlashTriton, 16, 16 * 112);
  const ComputeOp d128 = core(AttentionKernel::FlashTriton, 16, 16 * 128);
  const double executed112 = 4.0 * 16 * 4096.0 * 4096 * 112 / 2;
  EXPECT_DOUBLE_EQ(op_time(d112, gpu, "bf16", 2.0, false), executed112 * (128.0 / 112.0) / 600e12 + 5e-6);
  EXPECT_DOUBLE_EQ(op_time(d112, gpu, "bf16", 2.0, true), 2.5 * executed112 * (128.0 / 112.0) / 600e12 + 5e-6);
  EXPECT_DOUBLE_EQ(op_time(d112, gpu, "bf16", 2.0, false), op_time(d128, gpu, "bf16", 2.0, false));
  const double executed128 = 4.0 * 16 * 4096.0 * 4096 * 128 / 2;
  EXPECT_DOUBLE_EQ(op_time(d128, gpu, "bf16", 2.0, false), executed128 / 600e12 + 5e-6);
  EXPECT_DOUBLE_EQ(op_time(core(AttentionKernel::Flash, 16, 16 * 112), gpu, "bf16", 2.0, false),
                   executed112 / 600e12 + 5e-6);
}

TEST(AttentionKernel, TritonIsTheFlashKernelPricedFromItsOwnTable) {
  // The same ops, bytes and flops as `flash`; only the attention core's time comes from attention_efficiency_triton.
  TransformerConfig c = gpt();
  c.hidden = 2048; // 16 heads of 128
  c.ffn = 8192;
  c.sequence_length = 4096;
  const TransformerModel flash(c, kernels_of(AttentionKernel::Flash, true, true));
  const TransformerModel triton(c, kernels_of(AttentionKernel::FlashTriton, true, true));
  const std::vector<ComputeOp> flash_ops = flash.layer_ops(1), triton_ops = triton.layer_ops(1);
  EXPECT_EQ(op_names(triton_ops), op_names(flash_ops));
  EXPECT_DOUBLE_EQ(bytes(triton_ops), bytes(flash_ops));
  for (Recomputation r : {Recomputation::None, Recomputation::Selective, Recomputation::Full})
    EXPECT_DOUBLE_EQ(triton.layer_activation_bytes(1, r, 2.0), flash.layer_activation_bytes(1, r, 2.0));
  const ComputeOp& core = find_op(triton_ops, "attention_core");
  ASSERT_TRUE(core.attention.has_value());
  EXPECT_TRUE(core.attention->triton);
  EXPECT_FALSE(find_op(flash_ops, "attention_core").attention->triton);
  EXPECT_DOUBLE_EQ(core.forward_flops, find_op(flash_ops, "attention_core").forward_flops);

  // A profile with a Triton table: causal, head dimension 128 at 0.25 of 1000 TFLOP/s (the flash table says 0.6).
  json doc = {{"name", "hand"},
              {"peak_flops", {{"bf16", "1000TFLOPs"}, {"fp32", "50TFLOPs"}}},
              {"memory_bandwidth", "2TBps"},
              {"memory_capacity", "80GB"},
              {"kernel_launch_overhead", "5us"}};
  const json flash_points =
      json::array({{{"sequence_length", 4096}, {"head_dim", 128}, {"causal", true}, {"efficiency", 0.6}}});
  const json triton_points =
      json::array({{{"sequence_length", 4096}, {"head_dim", 128}, {"causal", true}, {"efficiency", 0.25}}});
  doc["attention_efficiency"] = {{"data_type", "bf16"}, {"points", flash_points}};
  JsonReader without_reader(doc, "gpu.json");
  const GpuProfile without = parse_gpu_profile(without_reader);
  doc["attention_efficiency_triton"] = {{"data_type", "bf16"}, {"points", triton_points}};
  JsonReader with_reader(doc, "gpu.json");
  const GpuProfile with = parse_gpu_profile(with_reader);
  ASSERT_TRUE(with.attention_efficiency_triton.has_value());
  EXPECT_FALSE(without.attention_efficiency_triton.has_value());
  const double executed = 4.0 * 16 * 4096.0 * 4096 * 128 / 2;
  EXPECT_DOUBLE_EQ(op_time(core, with, "bf16", 2.0, false), executed / 250e12 + 5e-6);
  EXPECT_DOUBLE_EQ(op_time(core, with, "bf16", 2.0, true), 2.5 * executed / 250e12 + 5e-6);
  // The CUDA kernel ignores the Triton table; without one, the Triton kernel is priced as the CUDA one.
  const ComputeOp& flash_core = find_op(flash_ops, "attention_core");
  EXPECT_DOUBLE_EQ(op_time(flash_core, with, "bf16", 2.0, false), executed / 600e12 + 5e-6);
  EXPECT_DOUBLE_EQ(op_time(core, without, "bf16", 2.0, false), executed / 600e12 + 5e-6);
  // The profile writes the table back as it read it.
  EXPECT_EQ(to_json(with)["attention_efficiency_triton"]["points"], triton_points);
  EXPECT_FALSE(to_json(without).contains("attention_efficiency_triton"));
}

TEST(AttentionKernel, TheStackLineSaysWhatPricesTheTritonKernel) {
  ModelTraining training;
  training.kernels = kernels_of(AttentionKernel::FlashTriton, true, true);
  GpuProfile gpu = attention_gpu();
  EXPECT_NE(describe_stack(training, gpu).find("flash (Triton) attention"), std::string::npos);
  EXPECT_NE(describe_stack(training, gpu)
                .find("hand has no measured Triton throughput, priced as its measured fused "
                      "attention, an assumption"),
            std::string::npos)
      << describe_stack(training, gpu);
  gpu.attention_efficiency_triton = gpu.attention_efficiency;
  EXPECT_NE(describe_stack(training, gpu).find("priced from hand's attention_efficiency_triton, measured"),
            std::string::npos)
      << describe_stack(training, gpu);
  gpu.attention_efficiency_triton->provenance.kind = "assumption";
  EXPECT_NE(describe_stack(training, gpu).find("attention_efficiency_triton, an assumption the profile explains"),
            std::string::npos)
      << describe_stack(training, gpu);
  training.kernels.attention = AttentionKernel::Flash;
  EXPECT_EQ(describe_stack(training, gpu).find("Triton"), std::string::npos) << describe_stack(training, gpu);
}

TEST(AttentionKernel, FlashWithoutATableIsPricedAsItsProducts) {
  const json doc = {{"name", "plain"},
                    {"peak_flops", "1000TFLOPs"},
                    {"memory_bandwidth", "2TBps"},
                    {"memory_capacity", "80GB"},
                    {"kernel_launch_overhead", "0s"}};
  JsonReader reader(doc, "gpu.json");
  const GpuProfile gpu = parse_gpu_profile(reader);
  const TransformerModel flash(gpt(), kernels_of(AttentionKernel::Flash, true, true));
  const ComputeOp& core = find_op(flash.layer_ops(1), "attention_core");
  const GemmShape scores{16, 2048, 2048, 64};
  const GemmShape values{16, 2048, 64, 2048};
  const double half = 4.0 * 16 * 2048.0 * 2048 * 64 / 2 / 2; // each product, causal
  const double es = gemm_efficiency(gpu, scores, "bf16"), ev = gemm_efficiency(gpu, values, "bf16");
  EXPECT_DOUBLE_EQ(op_time(core, gpu, "bf16", 2.0, false), half * (1 / es + 1 / ev) / 1000e12);
  EXPECT_DOUBLE_EQ(op_time(core, gpu, "bf16", 2.0, true), half * (2 / es + 3 / ev) / 1000e12);
}

TEST(AttentionKernel, ASlidingWindowRunsTheBandAtTheRateOfACausalKernelOfTwiceItsWidth) {
  const GpuProfile gpu = attention_gpu();
  const AttentionEfficiencyTable& table = *gpu.attention_efficiency;
  // 8 heads of 64 over 4,096 tokens, a window of 128 keys: query i attends to min(i + 1, 128) keys, 128·4096 -
  // 128·127/2 pairs of 2·(64 + 64) flop each; the throughput of a causal kernel over 256 tokens (below the table:
  // its edge, 0.2).
  AttentionShape band{8, 4096, 64, true};
  band.window = 128;
  EXPECT_TRUE(band.banded());
  EXPECT_DOUBLE_EQ(band.executed_forward_flops(), 2.0 * 8 * 128 * (128.0 * 4096 - 128.0 * 127 / 2));
  EXPECT_EQ(band.efficiency_length(), 256);
  EXPECT_DOUBLE_EQ(attention_efficiency(table, band), 0.2);
  band.window = 1024; // a causal kernel over 2,048 tokens: 0.3
  EXPECT_DOUBLE_EQ(attention_efficiency(table, band), 0.3);
  // A window as long as the sequence is the causal kernel: the same flops (s(s + 1)/2 pairs against s²/2) and rate.
  AttentionShape whole{8, 4096, 64, true};
  band.window = 4096;
  EXPECT_FALSE(band.banded());
  EXPECT_DOUBLE_EQ(band.executed_forward_flops(), whole.executed_forward_flops());
  EXPECT_DOUBLE_EQ(attention_efficiency(table, band), attention_efficiency(table, whole));
  band.window = 128;
  band.causal = false; // only a causal window is banded (an encoder's window is refused when parsing)
  EXPECT_FALSE(band.banded());
  // The op's time: the band's flops at 0.2 x 1000 TFLOP/s forward, 2.5x backward, or its bytes (Q, K, V read once,
  // the output written) at the achieved bandwidth where they take longer, as here, plus the launch.
  TransformerConfig c = gpt();
  c.hidden = 1024; // 16 heads of 64
  c.sequence_length = 4096;
  const TransformerModel flash(c, kernels_of(AttentionKernel::Flash, true, true));
  ComputeOp core = find_op(flash.layer_ops(1), "attention_core");
  core.attention->window = 128;
  const double executed = 2.0 * 16 * 128 * (128.0 * 4096 - 128.0 * 127 / 2);
  const double forward_memory = core.forward_bytes(2.0) / 1e12;
  const double backward_memory = core.backward_bytes(2.0) / 1e12;
  EXPECT_GT(forward_memory, executed / 200e12);
  EXPECT_DOUBLE_EQ(op_time(core, gpu, "bf16", 2.0, false), forward_memory + 5e-6);
  EXPECT_DOUBLE_EQ(op_time(core, gpu, "bf16", 2.0, true), std::max(2.5 * executed / 200e12, backward_memory) + 5e-6);
  // Longer windows are compute bound: 2,048 keys at the rate of a causal kernel over 4,096 tokens (0.4).
  core.attention->window = 2048;
  const double wide = 2.0 * 16 * 128 * (2048.0 * 4096 - 2048.0 * 2047 / 2);
  ASSERT_GT(wide / 400e12, forward_memory);
  EXPECT_DOUBLE_EQ(op_time(core, gpu, "bf16", 2.0, false), wide / 400e12 + 5e-6);
}

/** A tiny decoder of 4 layers on one GPU, 1,024 tokens, flash attention, `window` as its attention_window. */
json windowed_training(const json& window) {
  json doc = test::base_scenario(1, 1);
  json model = test::tiny_transformer("tiny-window", 1024, {{"layers", 4}});
  if (!window.is_null()) model["attention_window"] = window;
  doc["workload"] = {{"kind", "model_training"}, {"model", model}, {"global_batch", 2}, {"micro_batch", 1}};
  doc["strategy"] = {{"kind", "model_parallel"}, {"gradient_sync", "none"}};
  return doc;
}

TEST(SlidingWindow, OnlyTheWindowedLayersAttentionIsCheaper) {
  // Layers 0 and 2 of 4 windowed (64 keys, every second layer full): against the same model without a window the
  // plan's compute is lower by exactly 2 layers x 2 micro-batches x the attention core's time saved, each pass.
  const Scenario windowed = test::parse(windowed_training({{"size", 64}, {"full_every", 2}}));
  const Scenario whole = test::parse(windowed_training(nullptr));
  const auto& training = std::get<ModelTraining>(windowed.workload);
  const TransformerModel model = training.transformer();
  const TransformerConfig& config = model.config();
  EXPECT_TRUE(config.window.windowed(0));
  EXPECT_FALSE(config.window.windowed(1));
  EXPECT_TRUE(config.window.windowed(2));
  EXPECT_FALSE(config.window.windowed(3));
  const GpuProfile& gpu = windowed.cluster.gpu;
  ComputeOp core = find_op(std::get<ModelTraining>(whole.workload).transformer().layer_ops(1), "attention_core");
  const double full_forward = op_time(core, gpu, "bf16", 2.0, false);
  const double full_backward = op_time(core, gpu, "bf16", 2.0, true);
  core.attention->window = 64;
  const double saved_forward = full_forward - op_time(core, gpu, "bf16", 2.0, false);
  const double saved_backward = full_backward - op_time(core, gpu, "bf16", 2.0, true);
  ASSERT_GT(saved_forward, 0.0);
  auto compute = [&](const Scenario& scenario, char pass) {
    const Plan plan = build_plan(scenario);
    double sum = 0.0;
    for (const Step& step : resolved_steps(plan, 0))
      if (const auto* c = std::get_if<ComputeStep>(&step); c && c->label > 0 && plan.labels[c->label][0] == pass)
        sum += c->amount;
    return sum / gpu.peak("bf16");
  };
  EXPECT_NEAR(compute(whole, 'F') - compute(windowed, 'F'), 4 * saved_forward, 1e-12);
  EXPECT_NEAR(compute(whole, 'B') - compute(windowed, 'B'), 4 * saved_backward, 1e-12);
  // Every layer windowed (full_every 0): all four.
  EXPECT_NEAR(compute(whole, 'F') - compute(test::parse(windowed_training({{"size", 64}})), 'F'), 8 * saved_forward,
              1e-12);
}

TEST(SlidingWindow, ErrorsNameTheirPointer) {
  auto error_of = [](const json& doc) -> std::string {
    try {
      test::parse(doc);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of(windowed_training({{"size", 64}, {"full_every", 1}})).find("/attention_window/full_every"),
            std::string::npos);
  EXPECT_NE(error_of(windowed_training({{"size", 0}})).find("/attention_window/size"), std::string::npos);
  EXPECT_NE(error_of(windowed_training({{"size", 64}, {"every", 2}})).find("/attention_window"), std::string::npos);
  json encoder = windowed_training({{"size", 64}});
  encoder["workload"]["model"]["architecture"] = "encoder";
  EXPECT_NE(error_of(encoder).find("/attention_window"), std::string::npos);
  json context = test::base_scenario(1, 2);
  context["workload"] = windowed_training({{"size", 64}})["workload"];
  context["strategy"] = {{"kind", "model_parallel"}, {"context", 2}, {"gradient_sync", "none"}};
  EXPECT_NE(error_of(context).find("/strategy/context"), std::string::npos);
  // Serving prices every layer alike and caches every key: a windowed model is refused, exit 2.
  const test::CliResult serving =
      test::run_cli({"run", (test::source_dir() / "scenarios" / "seed-5-llm-serving.json").string(), "--set",
                     "/workload/stages/0/llm/model=gpt-oss-120b", "--no-files", "--no-progress"});
  EXPECT_EQ(serving.exit_code, 2);
  EXPECT_NE(serving.err.find("/workload/stages/0/llm/model: serving \"gpt-oss-120b\" (a sliding attention window"),
            std::string::npos)
      << serving.err;
}

TEST(AttentionKernel, ProfileErrorsNameTheirPointer) {
  const json base = {
      {"name", "hand"}, {"peak_flops", "1000TFLOPs"}, {"memory_bandwidth", "2TBps"}, {"memory_capacity", "80GB"}};
  auto parse_with = [&](const std::string& key, const json& value) {
    json doc = base;
    doc[key] = value;
    JsonReader reader(doc, "gpu.json");
    return parse_gpu_profile(reader);
  };
  EXPECT_THROW(parse_with("memory_efficiency", 1.5), InputError);
  EXPECT_THROW(parse_with("memory_efficiency", 0.0), InputError);
  const json p = {{"sequence_length", 1024}, {"head_dim", 64}, {"causal", true}, {"efficiency", 0.5}};
  EXPECT_THROW(parse_with("attention_efficiency", {{"data_type", "bf16"}, {"points", json::array({p, p})}}),
               InputError);
  json bad = p;
  bad["causal"] = "yes";
  EXPECT_THROW(parse_with("attention_efficiency", {{"data_type", "bf16"}, {"points", json::array({bad})}}), InputError);
  EXPECT_THROW(parse_with("attention_efficiency", {{"data_type", "fp8"}, {"points", json::array({p})}}), InputError);
  EXPECT_THROW(parse_with("attention_efficiency", {{"data_type", "bf16"}, {"points", json::array()}}), InputError);
  try {
    parse_with("attention_efficiency", {{"data_type", "bf16"}, {"points", json::array({bad})}});
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/attention_efficiency/points/0/causal"), std::string::npos) << e.what();
  }
  try {
    parse_with("attention_efficiency_triton", {{"data_type", "bf16"}, {"points", json::array({bad})}});
    ADD_FAILURE() << "a bad Triton point was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/attention_efficiency_triton/points/0/causal"), std::string::npos)
        << e.what();
  }
}

TEST(AttentionKernel, ShippedProfilesCarryPublishedFigures) {
  for (const std::string name : {"a100-sxm4-80gb", "h100-sxm5-80gb", "h200-sxm-141gb"}) {
    const GpuProfile gpu = load_gpu_profile(test::source_dir(), name, "test", "/cluster/gpu");
    EXPECT_EQ(gpu.memory_efficiency.provenance.kind, "published_measurement") << name;
    EXPECT_GT(gpu.memory_efficiency.value, 0.8) << name;
    EXPECT_LT(gpu.memory_efficiency.value, 0.9) << name;
    ASSERT_TRUE(gpu.attention_efficiency.has_value()) << name;
    EXPECT_EQ(gpu.attention_efficiency->provenance.kind, "published_measurement") << name;
  }
  // The H100's stands in from its FlashAttention (v1) bars, an assumption the profile explains.
  const GpuProfile h100 = load_gpu_profile(test::source_dir(), "h100-sxm5-80gb", "test", "/cluster/gpu");
  ASSERT_TRUE(h100.attention_efficiency_triton.has_value());
  EXPECT_EQ(h100.attention_efficiency_triton->provenance.kind, "assumption");
  // The A100's Triton FlashAttention table: the FlashAttention-2 paper's Triton bars, causal at head dimension 128
  // between 0.42 and 0.51 of FlashAttention-2's on the same figure.
  const GpuProfile a100 = load_gpu_profile(test::source_dir(), "a100-sxm4-80gb", "test", "/cluster/gpu");
  ASSERT_TRUE(a100.attention_efficiency_triton.has_value());
  EXPECT_EQ(a100.attention_efficiency_triton->provenance.kind, "published_measurement");
  EXPECT_EQ(a100.attention_efficiency_triton->points.size(), 24u);
  for (std::int64_t s : {512, 1024, 2048, 4096, 8192, 16384}) {
    const AttentionShape shape{16, s, 128, true};
    const double ratio = attention_efficiency(*a100.attention_efficiency_triton, shape) /
                         attention_efficiency(*a100.attention_efficiency, shape);
    EXPECT_GT(ratio, 0.41) << s;
    EXPECT_LT(ratio, 0.52) << s;
  }
}

} // namespace
} // namespace partsim
