// Transformer arithmetic against closed forms: parameter counts, GEMM shapes by hand, Narayanan et al. 2021's
// iteration flops, Korthikanti et al. 2022's activation memory, and config errors.
#include "partsim/common/error.hpp"
#include "partsim/model/transformer.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace partsim {
namespace {

/** A GPT as Narayanan et al. and Korthikanti et al. describe it: MHA, plain 4h MLP, biases, LayerNorm, learned
 * positions, tied embeddings, dropout. */
TransformerConfig gpt(std::int64_t l, std::int64_t h, std::int64_t a, std::int64_t V, std::int64_t s) {
  TransformerConfig c;
  c.layers = l;
  c.hidden = h;
  c.heads = a;
  c.ffn = 4 * h;
  c.vocab = V;
  c.sequence_length = s;
  c.dropout = true;
  return c;
}

/** A Llama: GQA, SwiGLU, RMSNorm, rotary, untied, no biases, no dropout. */
TransformerConfig llama(std::int64_t l, std::int64_t h, std::int64_t a, std::int64_t g, std::int64_t f, std::int64_t V,
                        std::int64_t s) {
  TransformerConfig c;
  c.layers = l;
  c.hidden = h;
  c.heads = a;
  c.kv_heads = g;
  c.ffn = f;
  c.vocab = V;
  c.sequence_length = s;
  c.mlp = MlpKind::Gated;
  c.position = PositionEmbedding::Rotary;
  c.norm = NormKind::RmsNorm;
  c.bias = false;
  c.tied_embeddings = false;
  c.dropout = false;
  return c;
}

const ComputeOp& find_op(const std::vector<ComputeOp>& ops, const std::string& name) {
  for (const ComputeOp& op : ops)
    if (op.name == name) return op;
  throw std::runtime_error("no op named " + name);
}

double gemm_flops(const std::vector<ComputeOp>& ops) {
  double total = 0.0;
  for (const ComputeOp& op : ops)
    if (op.gemm) total += op.gemm->flops();
  return total;
}

std::vector<std::string> names(const std::vector<ComputeOp>& ops) {
  std::vector<std::string> out;
  for (const ComputeOp& op : ops) out.push_back(op.name);
  return out;
}

TEST(Transformer, GptParametersMatchClosedForm) {
  // Per layer: QKV 3h² + 3h, output h² + h, MLP 8h² + 5h, two LayerNorms 4h: 12h² + 13h.
  // Outside: token and position tables (V + s)·h, final LayerNorm 2h.
  const double l = 12, h = 768, V = 50257, s = 1024;
  const TransformerModel model(gpt(12, 768, 12, 50257, 1024), kMegatronLm2021Kernels);
  EXPECT_DOUBLE_EQ(model.layer_parameters(), 12 * h * h + 13 * h);
  EXPECT_DOUBLE_EQ(model.embedding_parameters(), (V + s) * h);
  EXPECT_DOUBLE_EQ(model.output_parameters(), 2 * h);
  EXPECT_DOUBLE_EQ(model.parameters(), l * (12 * h * h + 13 * h) + (V + s) * h + 2 * h);
}

TEST(Transformer, LlamaParametersMatchClosedForm) {
  // Llama-3 8B shape: Q and O 2·h·(a·d), K and V 2·h·(g·d), SwiGLU 3·h·f, two RMSNorms 2h; untied head V·h,
  // final RMSNorm h.
  const double l = 32, h = 4096, d = 128, a = 32, g = 8, f = 14336, V = 128256;
  const TransformerModel model(llama(32, 4096, 32, 8, 14336, 128256, 8192), kMegatronLm2021Kernels);
  const double layer = 2 * h * a * d + 2 * h * g * d + 3 * h * f + 2 * h;
  EXPECT_DOUBLE_EQ(model.layer_parameters(), layer);
  EXPECT_DOUBLE_EQ(model.embedding_parameters(), V * h); // rotary: no position table
  EXPECT_DOUBLE_EQ(model.output_parameters(), V * h + h);
  EXPECT_DOUBLE_EQ(model.parameters(), l * layer + 2 * V * h + h);
}

TEST(Transformer, GptLayerGemmShapesByHand) {
  // GPT-2 small, micro-batch 2: 2048 tokens, h = 768, 12 heads of 64, MLP 3072.
  const TransformerModel model(gpt(12, 768, 12, 50257, 1024), kMegatronLm2021Kernels);
  const std::vector<ComputeOp> ops = model.layer_ops(2);
  EXPECT_EQ(names(ops), (std::vector<std::string>{"attention_norm", "qkv_projection", "attention_scores",
                                                  "attention_softmax", "attention_dropout", "attention_over_values",
                                                  "output_projection", "attention_residual", "mlp_norm", "mlp_up",
                                                  "mlp_activation", "mlp_down", "mlp_residual"}));
  EXPECT_EQ(*find_op(ops, "qkv_projection").gemm, (GemmShape{1, 2048, 2304, 768}));
  EXPECT_EQ(*find_op(ops, "attention_scores").gemm, (GemmShape{24, 1024, 1024, 64}));
  EXPECT_EQ(*find_op(ops, "attention_over_values").gemm, (GemmShape{24, 1024, 64, 1024}));
  EXPECT_EQ(*find_op(ops, "output_projection").gemm, (GemmShape{1, 2048, 768, 768}));
  EXPECT_EQ(*find_op(ops, "mlp_up").gemm, (GemmShape{1, 2048, 3072, 768}));
  EXPECT_EQ(*find_op(ops, "mlp_down").gemm, (GemmShape{1, 2048, 768, 3072}));
  for (const ComputeOp& op : ops) EXPECT_EQ(op.gemm.has_value(), op.kind == OpKind::Gemm) << op.name;
  // QKV with bias: 2·M·N·K + M·N forward; backward two products plus the bias gradient.
  const double qkv = 2.0 * 2048 * 2304 * 768;
  EXPECT_DOUBLE_EQ(find_op(ops, "qkv_projection").forward_flops, qkv + 2048.0 * 2304);
  EXPECT_DOUBLE_EQ(find_op(ops, "qkv_projection").backward_flops, 2 * qkv + 2048.0 * 2304);
  EXPECT_EQ(*find_op(model.outer_ops(2), "logits").gemm, (GemmShape{1, 2048, 50257, 768}));
}

TEST(Transformer, LlamaLayerGemmShapesByHand) {
  // Llama-3 8B, one sequence of 8192: Q 32 x 128 = 4096 wide, K and V 8 x 128 = 1024 each.
  const TransformerModel model(llama(32, 4096, 32, 8, 14336, 128256, 8192), kMegatronLm2021Kernels);
  const std::vector<ComputeOp> ops = model.layer_ops(1);
  EXPECT_EQ(names(ops), (std::vector<std::string>{"attention_norm", "qkv_projection", "rotary_embedding",
                                                  "attention_scores", "attention_softmax", "attention_over_values",
                                                  "output_projection", "attention_residual", "mlp_norm", "mlp_gate",
                                                  "mlp_up", "mlp_activation", "mlp_down", "mlp_residual"}));
  EXPECT_EQ(*find_op(ops, "qkv_projection").gemm, (GemmShape{1, 8192, 6144, 4096}));
  EXPECT_EQ(*find_op(ops, "attention_scores").gemm, (GemmShape{32, 8192, 8192, 128}));
  EXPECT_EQ(*find_op(ops, "attention_over_values").gemm, (GemmShape{32, 8192, 128, 8192}));
  EXPECT_EQ(*find_op(ops, "output_projection").gemm, (GemmShape{1, 8192, 4096, 4096}));
  EXPECT_EQ(*find_op(ops, "mlp_gate").gemm, (GemmShape{1, 8192, 14336, 4096}));
  EXPECT_EQ(*find_op(ops, "mlp_up").gemm, (GemmShape{1, 8192, 14336, 4096}));
  EXPECT_EQ(*find_op(ops, "mlp_down").gemm, (GemmShape{1, 8192, 4096, 14336}));
  EXPECT_EQ(*find_op(model.outer_ops(1), "logits").gemm, (GemmShape{1, 8192, 128256, 4096}));
  // Without biases a GEMM op is exactly its product, and its backward exactly twice that.
  const ComputeOp& down = find_op(ops, "mlp_down");
  EXPECT_DOUBLE_EQ(down.forward_flops, 2.0 * 8192 * 4096 * 14336);
  EXPECT_DOUBLE_EQ(down.backward_flops, 2 * down.forward_flops);
}

TEST(Transformer, BytesMovedByOp) {
  // At 2 bytes per element: the QKV GEMM reads X [T x h] and W [h x N] and writes [T x N].
  const TransformerModel model(llama(32, 4096, 32, 8, 14336, 128256, 8192), kMegatronLm2021Kernels);
  const std::vector<ComputeOp> ops = model.layer_ops(1);
  const double T = 8192, h = 4096, N = 6144;
  const ComputeOp& qkv = find_op(ops, "qkv_projection");
  EXPECT_DOUBLE_EQ(qkv.forward_bytes(2.0), 2.0 * (T * h + h * N + T * N));
  EXPECT_DOUBLE_EQ(qkv.backward_bytes(2.0), 2.0 * qkv.forward_bytes(2.0));
  // RMSNorm: reads T·h and its h scales, writes T·h; backward reads input and output gradient, writes the input
  // gradient, reads the scales and writes their gradient.
  const ComputeOp& norm = find_op(ops, "attention_norm");
  EXPECT_DOUBLE_EQ(norm.forward_bytes(2.0), 2.0 * (T * h + h + T * h));
  EXPECT_DOUBLE_EQ(norm.backward_bytes(2.0), 2.0 * (3 * T * h + 2 * h));
  // The score matrix: 32 heads x 8192 x 8192 written by QK^T.
  EXPECT_DOUBLE_EQ(find_op(ops, "attention_scores").output_elements, 32.0 * 8192 * 8192);
}

/** Narayanan et al. 2021, eq. (3): 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)), with full recomputation. */
double narayanan_full(double B, double s, double l, double h, double V) {
  return 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
}

/** The same accounting without recomputation: the layers lose their repeated forward (3/4 of 96·(...)), the
 * logits layer (6·B·s·h·V, never recomputed) stays. */
double narayanan_none(double B, double s, double l, double h, double V) {
  return 72 * B * s * l * h * h * (1 + s / (6 * h)) + 6 * B * s * h * V;
}

TEST(Transformer, IterationFlopsMatchNarayananWithFullRecomputation) {
  struct Case {
    std::int64_t l, h, a, V, s, B;
  };
  for (const Case& c :
       {Case{96, 12288, 96, 50257, 2048, 8}, Case{12, 768, 12, 50257, 1024, 4}, Case{24, 2048, 16, 51200, 2048, 1}}) {
    SCOPED_TRACE(testing::Message() << "l=" << c.l << " h=" << c.h << " B=" << c.B);
    const TransformerModel model(gpt(c.l, c.h, c.a, c.V, c.s), kMegatronLm2021Kernels);
    const double expected = narayanan_full(c.B, c.s, c.l, c.h, c.V);
    // Matrix products alone: forward, backward (2x) and recomputed forward of every layer, logits thrice.
    const double layer_gemm = gemm_flops(model.layer_ops(c.B));
    const double logits_gemm = gemm_flops(model.outer_ops(c.B));
    EXPECT_NEAR(c.l * 4 * layer_gemm + 3 * logits_gemm, expected, 1e-12 * expected);
    // Everything, with norms, softmax, biases and loss: a little more, within 1%.
    const double total = model.training_flops(c.B, Recomputation::Full).total();
    EXPECT_GT(total, expected);
    EXPECT_NEAR(total, expected, 0.01 * expected);
  }
}

TEST(Transformer, IterationFlopsMatchNarayananWithoutRecomputation) {
  struct Case {
    std::int64_t l, h, a, V, s, B;
  };
  for (const Case& c :
       {Case{96, 12288, 96, 50257, 2048, 8}, Case{12, 768, 12, 50257, 1024, 4}, Case{24, 2048, 16, 51200, 2048, 1}}) {
    SCOPED_TRACE(testing::Message() << "l=" << c.l << " h=" << c.h << " B=" << c.B);
    const TransformerModel model(gpt(c.l, c.h, c.a, c.V, c.s), kMegatronLm2021Kernels);
    const double expected = narayanan_none(c.B, c.s, c.l, c.h, c.V);
    const TrainingFlops flops = model.training_flops(c.B, Recomputation::None);
    EXPECT_EQ(flops.recompute, 0.0);
    EXPECT_GT(flops.total(), expected);
    EXPECT_NEAR(flops.total(), expected, 0.01 * expected);
    // Full recomputation adds exactly one forward of the layers.
    const TrainingFlops full = model.training_flops(c.B, Recomputation::Full);
    EXPECT_DOUBLE_EQ(full.recompute, c.l * model.layer_flops(c.B, Recomputation::None).forward);
    EXPECT_DOUBLE_EQ(full.total() - flops.total(), full.recompute);
  }
}

TEST(Transformer, SelectiveRecomputationRepeatsTheAttentionCore) {
  // QK^T and attention over values: 2 products of 2·b·a·s²·d = 4·b·s²·h flop. Softmax and dropout add a few flop
  // per score, 6·b·a·s² by partsim's convention: 1.5/d of the products, 1.2% at d = 128.
  const std::int64_t b = 2, s = 2048, h = 4096;
  const TransformerModel model(gpt(4, h, 32, 50257, s), kMegatronLm2021Kernels);
  const double core = 4.0 * b * s * s * h;
  const TrainingFlops selective = model.layer_flops(b, Recomputation::Selective);
  EXPECT_GT(selective.recompute, core);
  EXPECT_NEAR(selective.recompute, core, 0.02 * core);
  const TrainingFlops none = model.layer_flops(b, Recomputation::None);
  const TrainingFlops full = model.layer_flops(b, Recomputation::Full);
  EXPECT_DOUBLE_EQ(selective.forward, none.forward);
  EXPECT_DOUBLE_EQ(selective.backward, none.backward);
  EXPECT_LT(selective.recompute, full.recompute);
  EXPECT_DOUBLE_EQ(full.recompute, full.forward);
}

TEST(Transformer, ActivationMemoryMatchesKorthikanti) {
  // Korthikanti et al. 2022, 16-bit activations, 1-byte dropout masks, per layer: s·b·h·(34 + 5·a·s/h) without
  // recomputation, 34·s·b·h with selective recomputation, 2·s·b·h with full recomputation.
  struct Case {
    std::int64_t h, a, s, b;
  };
  for (const Case& c : {Case{12288, 96, 2048, 1}, Case{768, 12, 1024, 8}, Case{5120, 40, 4096, 3}}) {
    SCOPED_TRACE(testing::Message() << "h=" << c.h << " s=" << c.s << " b=" << c.b);
    const TransformerModel model(gpt(8, c.h, c.a, 50257, c.s), kMegatronLm2021Kernels);
    const double sbh = static_cast<double>(c.s) * c.b * c.h;
    EXPECT_DOUBLE_EQ(model.layer_activation_bytes(c.b, Recomputation::None),
                     sbh * (34 + 5.0 * c.a * c.s / static_cast<double>(c.h)));
    EXPECT_DOUBLE_EQ(model.layer_activation_bytes(c.b, Recomputation::Selective), 34 * sbh);
    EXPECT_DOUBLE_EQ(model.layer_activation_bytes(c.b, Recomputation::Full), 2 * sbh);
  }
}

TEST(Transformer, ActivationMemoryOfGatedGqaLayerWithoutDropout) {
  // Same accounting by hand for Llama-3 8B at 2 bytes: attention keeps the norm's input, the QKV input, Q (h),
  // K and V (g·d each) and the output projection's input: 2·sb·(4h + 2gd); the softmax output 2·a·s²·b. The MLP
  // keeps the norm's input and the gate/up input (2·2·sbh), gate and up outputs and the down input (3·2·sbf).
  const double s = 8192, b = 1, h = 4096, gd = 8 * 128, f = 14336, a = 32;
  const TransformerModel model(llama(32, 4096, 32, 8, 14336, 128256, 8192), kMegatronLm2021Kernels);
  const double selective = 2 * s * b * (4 * h + 2 * gd) + 4 * s * b * h + 6 * s * b * f;
  EXPECT_DOUBLE_EQ(model.layer_activation_bytes(1, Recomputation::Selective), selective);
  EXPECT_DOUBLE_EQ(model.layer_activation_bytes(1, Recomputation::None), selective + 2 * a * s * s * b);
  EXPECT_DOUBLE_EQ(model.layer_activation_bytes(1, Recomputation::Full), 2 * s * b * h);
  // fp32 activations double everything (no dropout masks here).
  EXPECT_DOUBLE_EQ(model.layer_activation_bytes(1, Recomputation::Selective, 4.0), 2 * selective);
}

TEST(Transformer, OuterActivationMemory) {
  // GPT: embedding dropout mask s·b·h, final norm and logits inputs 2·2·s·b·h, fp32 logits 4·s·b·V.
  const double s = 1024, b = 2, h = 768, V = 50257;
  const TransformerModel model(gpt(12, 768, 12, 50257, 1024), kMegatronLm2021Kernels);
  EXPECT_DOUBLE_EQ(model.outer_activation_bytes(2), s * b * h + 4 * s * b * h + 4 * s * b * V);
}

TEST(Transformer, ExplicitHeadDimDecouplesAttentionWidth) {
  // 40 heads of 128 on h = 5140 (GPT-3 13B as Table 2.1 prints it): QKV maps 5140 to 3 x 5120.
  TransformerConfig c = gpt(40, 5140, 40, 50257, 2048);
  c.head_dim = 128;
  const TransformerModel model(c, kMegatronLm2021Kernels);
  const std::vector<ComputeOp> ops = model.layer_ops(1);
  EXPECT_EQ(*find_op(ops, "qkv_projection").gemm, (GemmShape{1, 2048, 3 * 5120, 5140}));
  EXPECT_EQ(*find_op(ops, "output_projection").gemm, (GemmShape{1, 2048, 5140, 5120}));
  EXPECT_EQ(*find_op(ops, "attention_scores").gemm, (GemmShape{40, 2048, 2048, 128}));
}

TEST(Transformer, DefaultsResolveKvHeadsAndHeadDim) {
  const TransformerModel model(gpt(2, 1024, 16, 1000, 128), kMegatronLm2021Kernels);
  EXPECT_EQ(model.config().kv_heads, 16);
  EXPECT_EQ(model.config().head_dim, 64);
}

void expect_config_error(const TransformerConfig& config, const std::string& pointer) {
  try {
    TransformerModel model(config, kMegatronLm2021Kernels);
    FAIL() << "expected an InputError at " << pointer;
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), pointer) << e.what();
  }
}

TEST(Transformer, BadConfigsAreInputErrors) {
  expect_config_error(gpt(12, 768, 10, 50257, 1024), "/heads"); // 10 does not divide 768
  TransformerConfig gqa = llama(32, 4096, 32, 8, 14336, 128256, 8192);
  gqa.kv_heads = 5; // 5 does not divide 32
  expect_config_error(gqa, "/kv_heads");
  expect_config_error(gpt(0, 768, 12, 50257, 1024), "/layers");
  expect_config_error(gpt(12, 768, 12, 0, 1024), "/vocab_size");
  expect_config_error(gpt(12, 768, 12, 50257, 0), "/sequence_length");
}

} // namespace
} // namespace partsim
