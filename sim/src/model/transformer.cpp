// Transformer arithmetic: parameter counts, per-op flops/bytes/GEMM shapes, recomputation, activation memory.
#include "partsim/model/transformer.hpp"

#include "partsim/common/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <utility>

namespace partsim {

namespace {

// Forward flop per element of the non-GEMM ops (see TransformerModel's conventions).
constexpr double kLayerNormFlop = 8.0;
constexpr double kRmsNormFlop = 4.0;
constexpr double kSoftmaxFlop = 5.0;
constexpr double kGeluFlop = 8.0;
constexpr double kSwiGluFlop = 5.0;
constexpr double kRotaryFlop = 3.0;
constexpr double kDropoutFlop = 1.0;
// A fused attention kernel keeps one fp32 log-sum-exp per query and head for its backward pass.
constexpr double kSoftmaxStatisticsBytes = 4.0;

double as_double(std::int64_t v) {
  return static_cast<double>(v);
}

/** A linear layer on `tokens` rows: X[tokens, in] · W[in, out] (+ bias). */
ComputeOp linear_op(std::string name, double tokens, std::int64_t in, std::int64_t out, bool bias) {
  ComputeOp op;
  op.name = std::move(name);
  op.kind = OpKind::Gemm;
  op.gemm = GemmShape{1, static_cast<std::int64_t>(tokens), out, in};
  const double bias_adds = bias ? tokens * as_double(out) : 0.0;
  op.forward_flops = op.gemm->flops() + bias_adds;
  op.backward_flops = 2.0 * op.gemm->flops() + bias_adds;
  op.weight_elements = as_double(in) * as_double(out) + (bias ? as_double(out) : 0.0);
  op.input_elements = tokens * as_double(in);
  op.output_elements = tokens * as_double(out);
  return op;
}

/** A non-GEMM op: `flop_per_element` per output element, backward 2x forward. */
ComputeOp pointwise_op(std::string name, OpKind kind, double flop_per_element, double inputs, double outputs,
                       double weights) {
  ComputeOp op;
  op.name = std::move(name);
  op.kind = kind;
  op.forward_flops = flop_per_element * outputs;
  op.backward_flops = 2.0 * op.forward_flops;
  op.weight_elements = weights;
  op.input_elements = inputs;
  op.output_elements = outputs;
  return op;
}

/** FP8 (Transformer Engine): marks the layer's linear GEMMs (those with weights, but the router, which Megatron-Core
 * keeps in the data type) and puts before each a cast op, NAME_fp8_cast, that quantizes the GEMM's input in the
 * forward and its output gradient in the backward. A gated MLP's gate and up GEMMs read the same input (one GEMM in
 * Transformer Engine): one cast of it, and of both output gradients. With sequence parallelism over `tensor` > 1
 * ranks (`gathered`), the inputs of the column-parallel GEMMs that follow a sequence-parallel all-gather (the QKV
 * projection, a dense MLP's up and gate) are quantized on the rank's 1/T of the rows, row-wise only, and all-gathered
 * in fp8; the backward re-gathers that fp8 copy and transposes it for the weight gradient (Transformer Engine's
 * LayerNormLinear: ln_out quantized before gather_along_first_dim, fp8_transpose of ln_out_total in its backward).
 * Likewise the output gradients of the row-parallel GEMMs (the output projection, a dense MLP's down), which arrive
 * sequence-split and are all-gathered for the backward: quantized on the rank's rows, row-wise only, gathered in fp8
 * and transposed for the weight gradient (TransformerEngineBaseModule.grad_output_preprocess: gather_along_first_dim
 * with the grad-output quantizer, transformer_engine/pytorch/module/base.py). */
void apply_fp8(std::vector<ComputeOp>& ops, Fp8Recipe recipe, bool gathered = false, double tensor = 1.0) {
  if (recipe == Fp8Recipe::None) return;
  const double reads = recipe == Fp8Recipe::Tensorwise ? 2.0 : 1.0;
  auto linear = [](const ComputeOp& op) {
    return op.kind == OpKind::Gemm && op.weight_elements > 0.0 && op.name != "router";
  };
  std::vector<ComputeOp> out;
  out.reserve(2 * ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (!linear(ops[i])) {
      out.push_back(std::move(ops[i]));
      continue;
    }
    ComputeOp gemm = std::move(ops[i]);
    ComputeOp cast;
    cast.name = gemm.name + "_fp8_cast";
    cast.kind = OpKind::Elementwise;
    cast.backward_reads_input = false;
    cast.fp8_cast_reads = reads;
    cast.fp8_cast_forward = gemm.input_elements;
    cast.fp8_cast_backward = gemm.output_elements;
    if (gathered && (gemm.name == "qkv_projection" || gemm.name == "mlp_up" || gemm.name == "mlp_gate")) {
      cast.fp8_cast_forward = gemm.input_elements / tensor;
      cast.fp8_cast_columnwise = false;
      cast.fp8_transpose_backward = gemm.input_elements;
    }
    if (gathered && (gemm.name == "output_projection" || gemm.name == "mlp_down")) {
      cast.fp8_cast_backward = gemm.output_elements / tensor;
      cast.fp8_cast_backward_columnwise = false;
      cast.fp8_transpose_backward = gemm.output_elements;
    }
    gemm.fp8 = true;
    std::optional<ComputeOp> up;
    if (gemm.name.ends_with("_gate") && i + 1 < ops.size() && linear(ops[i + 1]) &&
        ops[i + 1].name == gemm.name.substr(0, gemm.name.size() - 5) + "_up") {
      up = std::move(ops[++i]);
      up->fp8 = true;
      cast.fp8_cast_backward += up->output_elements;
    }
    out.push_back(std::move(cast));
    out.push_back(std::move(gemm));
    if (up) out.push_back(std::move(*up));
  }
  ops = std::move(out);
}

} // namespace

std::string RecomputeModules::describe() const {
  if (torchtitan_op)
    return "torchtitan's per-op policy: the attention kernel's and every second matmul's outputs kept, the other ops "
           "rerun";
  std::string out;
  for (const auto& entry : EnumNames<LayerModule>::entries)
    if (contains(entry.value)) out += (out.empty() ? "" : ", ") + std::string(entry.name);
  return out;
}

std::string describe(const TransformerKernels& kernels) {
  return fmt::format("{} attention, {} bias + activation, {} bias + dropout + add, {} cross-entropy{}{}",
                     kernels.attention == AttentionKernel::FlashTriton ? std::string("flash (Triton)")
                                                                       : std::string(to_string(kernels.attention)),
                     kernels.fused_bias_activation ? "fused" : "unfused",
                     kernels.fused_bias_dropout_add ? "fused" : "unfused", to_string(kernels.cross_entropy),
                     kernels.fused_moe_permute ? ", fused token permutation" : "",
                     kernels.fp8 == Fp8Recipe::None
                         ? ""
                         : fmt::format(", FP8 layer GEMMs ({} scaling{})", to_string(kernels.fp8),
                                       kernels.fp8_param_gather ? ", weights kept and gathered in fp8" : ""));
}

std::optional<ConfigProblem> find_problem(const TransformerConfig& c) {
  const std::pair<const char*, std::int64_t> counts[] = {
      {"layers", c.layers}, {"hidden_size", c.hidden}, {"heads", c.heads},
      {"ffn_size", c.ffn},  {"vocab_size", c.vocab},   {"sequence_length", c.sequence_length}};
  for (const auto& [key, value] : counts)
    if (value < 1) return ConfigProblem{key, fmt::format("expected an integer >= 1, got {}", value)};
  if (c.kv_heads < 0) return ConfigProblem{"kv_heads", fmt::format("expected an integer >= 1, got {}", c.kv_heads)};
  if (c.head_dim < 0) return ConfigProblem{"head_dim", fmt::format("expected an integer >= 1, got {}", c.head_dim)};
  if (c.head_dim == 0 && c.hidden % c.heads != 0)
    return ConfigProblem{"heads", fmt::format("{} heads do not divide hidden_size {}; expected a divisor of "
                                              "hidden_size, or an explicit head_dim",
                                              c.heads, c.hidden)};
  const ExpertConfig& x = c.experts;
  if (x.moe() || x.top_k != 0 || x.shared != 0) {
    if (x.count < 2)
      return ConfigProblem{"experts", fmt::format("expected count >= 2 routed experts, got {}", x.count)};
    if (x.top_k < 1 || x.top_k > x.count)
      return ConfigProblem{"experts", fmt::format("expected top_k from 1 to the {} experts, got {}", x.count, x.top_k)};
    if (x.shared < 0 || x.shared_ffn < 0)
      return ConfigProblem{"experts", "expected shared >= 0 experts and shared_ffn_size >= 1"};
    if (x.first_dense < 0 || x.first_dense >= c.layers || x.dense_ffn < 0)
      return ConfigProblem{"experts", fmt::format("expected first_dense_layers from 0 to {} (fewer than the layers) "
                                                  "and dense_ffn_size >= 1, got {} and {}",
                                                  c.layers - 1, x.first_dense, x.dense_ffn)};
  }
  const MlaConfig& mla = c.mla;
  if (mla.enabled() || mla.q_lora_rank != 0 || mla.rope_dim != 0 || mla.v_head_dim != 0) {
    if (mla.kv_lora_rank < 1 || mla.q_lora_rank < 0 || mla.rope_dim < 1 || mla.v_head_dim < 1)
      return ConfigProblem{"mla", "expected kv_lora_rank >= 1, q_lora_rank >= 0 (0: no query latent), "
                                  "qk_rope_head_dim >= 1 and v_head_dim >= 1"};
    if (c.head_dim <= mla.rope_dim)
      return ConfigProblem{"head_dim", fmt::format("with mla, head_dim is the query and key head dimension (the "
                                                   "non-rotary part + qk_rope_head_dim {}); expected more than {}, "
                                                   "got {}",
                                                   mla.rope_dim, mla.rope_dim, c.head_dim)};
    if (c.kv_heads != 0 && c.kv_heads != c.heads)
      return ConfigProblem{"kv_heads", fmt::format("with mla every head has its own key and value (decompressed from "
                                                   "the shared latent); expected kv_heads absent or {}, got {}",
                                                   c.heads, c.kv_heads)};
  }
  const std::int64_t kv_heads = c.kv_heads == 0 ? c.heads : c.kv_heads;
  if (c.heads % kv_heads != 0)
    return ConfigProblem{"kv_heads",
                         fmt::format("{} kv_heads do not divide {} heads; expected a divisor of heads (grouped-query "
                                     "attention shares each key/value head among heads/kv_heads query heads)",
                                     kv_heads, c.heads)};
  return std::nullopt;
}

TransformerModel::TransformerModel(TransformerConfig config, TransformerKernels kernels)
    : config_(config), kernels_(kernels) {
  if (const auto problem = find_problem(config_))
    throw InputError("transformer config", "/" + problem->key, problem->message);
  if (config_.kv_heads == 0) config_.kv_heads = config_.heads;
  if (config_.head_dim == 0) config_.head_dim = config_.hidden / config_.heads;
}

double TransformerModel::tokens(std::int64_t micro_batch) const {
  PARTSIM_CHECK(micro_batch >= 1) << "micro-batch " << micro_batch;
  return as_double(micro_batch) * as_double(config_.sequence_length);
}

// --- parameters ----------------------------------------------------------------------------------------------------

double TransformerModel::parameters() const {
  return layers_parameters(0, config_.layers) + embedding_parameters() + output_parameters();
}

std::int64_t TransformerModel::moe_layers(std::int64_t first, std::int64_t count) const {
  if (!config_.experts.moe()) return 0;
  const std::int64_t from = std::max(first, config_.experts.first_dense);
  return std::max<std::int64_t>(0, first + count - from);
}

TransformerModel TransformerModel::dense_model() const {
  if (!config_.experts.moe()) return *this;
  TransformerConfig dense = config_;
  if (config_.experts.dense_ffn > 0) dense.ffn = config_.experts.dense_ffn;
  dense.experts = {};
  return TransformerModel(dense, kernels_);
}

double TransformerModel::layers_parameters(std::int64_t first, std::int64_t count, int tensor) const {
  const std::int64_t moe = moe_layers(first, count);
  const double dense = count > moe ? as_double(count - moe) * dense_model().layer_parameters(tensor) : 0.0;
  return dense + (moe > 0 ? as_double(moe) * layer_parameters(tensor) : 0.0);
}

std::int64_t TransformerModel::vocab_shard(int tensor) const {
  PARTSIM_CHECK(tensor >= 1) << "tensor degree " << tensor;
  return (config_.vocab + tensor - 1) / tensor;
}

double TransformerModel::layer_parameters(int tensor) const {
  double total = 0.0;
  for (const ComputeOp& op : layer_ops(1, TensorSplit{tensor, false})) total += op.weight_elements;
  return total;
}

double TransformerModel::expert_parameters(int expert, int expert_tensor) const {
  if (!config_.experts.moe()) return 0.0;
  double total = 0.0;
  TensorSplit split{1, false, expert};
  split.expert_tensor = expert_tensor;
  for (const ComputeOp& op : layer_ops(1, split))
    if (is_routed_expert_op(op)) total += op.weight_elements;
  return total;
}

double TransformerModel::active_parameters() const {
  const ExpertConfig& x = config_.experts;
  const double idle = x.moe() ? expert_parameters() * (1.0 - as_double(x.top_k) / as_double(x.count)) : 0.0;
  return parameters() - as_double(moe_layers(0, config_.layers)) * idle;
}

double TransformerModel::embedding_parameters(int tensor) const {
  const double h = as_double(config_.hidden);
  return as_double(vocab_shard(tensor)) * h +
         (config_.position == PositionEmbedding::Learned ? as_double(config_.sequence_length) * h : 0.0);
}

double TransformerModel::output_parameters(int tensor) const {
  const double h = as_double(config_.hidden);
  const double norm = config_.norm == NormKind::LayerNorm ? 2.0 * h : h;
  return norm + (config_.tied_embeddings ? 0.0 : as_double(vocab_shard(tensor)) * h);
}

// --- ops -----------------------------------------------------------------------------------------------------------

std::vector<ComputeOp> TransformerModel::layer_ops(std::int64_t micro_batch, const TensorSplit& split) const {
  const TransformerConfig& c = config_;
  const std::int64_t n = split.tensor;
  PARTSIM_CHECK(n >= 1 && c.heads % n == 0 && c.kv_heads % n == 0 && c.ffn % n == 0)
      << "tensor degree " << n << " does not divide heads " << c.heads << ", kv_heads " << c.kv_heads << " and ffn "
      << c.ffn;
  PARTSIM_CHECK(split.context >= 1 && c.sequence_length % split.context == 0)
      << "context degree " << split.context << " does not divide the sequence length " << c.sequence_length;
  const std::int64_t cp = split.context;
  const double t = tokens(micro_batch) / as_double(cp); // the rank's tokens
  const double h = as_double(c.hidden);
  // Whole on every rank (norms, residual adds) unless sequence parallelism splits them along the sequence.
  const double r = split.sequence_parallel ? 1.0 / as_double(n) : 1.0;
  const std::int64_t heads = c.heads / n; // this rank's query heads
  const std::int64_t q_width = heads * c.head_dim;
  const std::int64_t kv_width = c.kv_heads / n * c.head_dim; // the keys
  const std::int64_t v_width = c.kv_heads / n * value_dim(); // the values
  const std::int64_t out_width = heads * value_dim();        // the core's output
  const MlaConfig& mla = c.mla;
  const std::int64_t queries = c.sequence_length / cp; // per sequence on this rank, against all s keys
  const double scores = as_double(micro_batch) * as_double(heads) * as_double(queries) *
                        as_double(c.sequence_length); // b·a·s²/C elements
  const double norm_flop = c.norm == NormKind::LayerNorm ? kLayerNormFlop : kRmsNormFlop;
  const double norm_weights = c.norm == NormKind::LayerNorm ? 2.0 * h : h;
  const double dropout_flop = c.dropout ? kDropoutFlop : 0.0;

  std::vector<ComputeOp> ops;
  // After each block: the row-parallel GEMM's bias, dropout and the residual add on `elements` values (whole or
  // sequence-split). Fused: one kernel reading the branch and the residual, writing the sum and the dropout mask.
  auto push_residual = [&](std::vector<ComputeOp>& list, const std::string& block, double elements) {
    if (kernels_.fused_bias_dropout_add) {
      ComputeOp op =
          pointwise_op(block + "_residual", OpKind::Elementwise, 1.0 + dropout_flop, 2.0 * elements, elements, 0.0);
      if (c.dropout) op.fixed_bytes = elements; // the dropout mask
      list.push_back(op);
      return;
    }
    if (c.bias) list.push_back(pointwise_op(block + "_output_bias", OpKind::Elementwise, 0.0, elements, elements, 0.0));
    if (c.dropout) {
      list.push_back(
          pointwise_op(block + "_output_dropout", OpKind::Elementwise, kDropoutFlop, elements, elements, 0.0));
      list.back().fixed_bytes = elements;
    }
    list.push_back(pointwise_op(block + "_residual", OpKind::Elementwise, 1.0, 2.0 * elements, elements, 0.0));
  };
  ops.push_back(pointwise_op("attention_norm", OpKind::Norm, norm_flop, r * t * h, r * t * h, norm_weights));
  if (!mla.enabled()) {
    ops.push_back(linear_op("qkv_projection", t, c.hidden, q_width + kv_width + v_width, c.bias));
  } else {
    // The down projections are whole on every tensor rank (weights not split), the up projections column-parallel.
    auto latent_norm = [&](std::string name, std::int64_t width) {
      const double w = as_double(width);
      return pointwise_op(std::move(name), OpKind::Norm, norm_flop, t * w, t * w,
                          c.norm == NormKind::LayerNorm ? 2.0 * w : w);
    };
    if (mla.q_lora_rank > 0) {
      ops.push_back(linear_op("q_down", t, c.hidden, mla.q_lora_rank, c.bias));
      ops.push_back(latent_norm("q_norm", mla.q_lora_rank));
    }
    ops.push_back(linear_op("q_up", t, mla.q_lora_rank > 0 ? mla.q_lora_rank : c.hidden, q_width, c.bias));
    ops.push_back(linear_op("kv_down", t, c.hidden, mla.kv_lora_rank + mla.rope_dim, c.bias));
    ops.push_back(latent_norm("kv_norm", mla.kv_lora_rank));
    ops.push_back(linear_op("kv_up", t, mla.kv_lora_rank, heads * (c.head_dim - mla.rope_dim) + v_width, c.bias));
  }
  if (c.position == PositionEmbedding::Rotary) {
    // Every query's and key's rotary part: the whole head, or with mla the decoupled rope_dim (one shared key).
    const double rotated =
        mla.enabled() ? t * as_double(heads * mla.rope_dim + mla.rope_dim) : t * as_double(q_width + kv_width);
    ops.push_back(pointwise_op("rotary_embedding", OpKind::Elementwise, kRotaryFlop, rotated, rotated, 0.0));
  }

  const AttentionKernel kernel = kernels_.attention;
  ComputeOp qk;
  qk.name = "attention_scores";
  qk.kind = OpKind::Gemm;
  qk.gemm = GemmShape{micro_batch * heads, queries, c.sequence_length, c.head_dim};
  qk.forward_flops = qk.gemm->flops();
  qk.backward_flops = 2.0 * qk.forward_flops;
  qk.input_elements = t * as_double(q_width + kv_width);
  qk.output_elements = scores;
  qk.module = LayerModule::CoreAttention;

  ComputeOp av;
  av.name = "attention_over_values";
  av.kind = OpKind::Gemm;
  av.gemm = GemmShape{micro_batch * heads, queries, value_dim(), c.sequence_length};
  av.forward_flops = av.gemm->flops();
  av.backward_flops = 2.0 * av.forward_flops;
  av.input_elements = scores + t * as_double(v_width);
  av.output_elements = t * as_double(out_width);
  av.module = LayerModule::CoreAttention;

  const double softmax_flop = kSoftmaxFlop + dropout_flop;
  if (fused_attention(kernel)) {
    // One kernel reads Q, K, V and writes the output (and the softmax statistics, fp32 per query and head); the
    // scores stay on chip. Its flops are those of the unfused core (both products and the softmax), so that model
    // flops do not depend on the kernel; its time comes from the products' shape (see cost_model.hpp).
    ComputeOp core;
    core.name = "attention_core";
    core.kind = OpKind::Attention;
    core.attention = AttentionShape{micro_batch * heads,
                                    c.sequence_length,
                                    c.head_dim,
                                    c.architecture == TransformerArchitecture::Decoder,
                                    cp,
                                    mla.enabled() ? value_dim() : 0};
    core.attention->triton = kernel == AttentionKernel::FlashTriton;
    core.forward_flops = qk.forward_flops + av.forward_flops + softmax_flop * scores;
    core.backward_flops = qk.backward_flops + av.backward_flops + 2.0 * softmax_flop * scores;
    core.input_elements = t * as_double(q_width + kv_width + v_width);
    core.output_elements = t * as_double(out_width);
    core.fixed_bytes = kSoftmaxStatisticsBytes * as_double(micro_batch * heads * queries);
    core.module = LayerModule::CoreAttention;
    ops.push_back(core);
  } else {
    ops.push_back(qk);
    // Megatron-LM scales the scores in the batched GEMM (baddbmm's alpha); unfused, the causal mask is a pass of its
    // own (masked_fill), then the softmax; fused, one scale-mask-softmax kernel.
    if (kernel == AttentionKernel::Unfused) {
      ComputeOp mask = pointwise_op("attention_mask", OpKind::Elementwise, 0.0, scores, scores, 0.0);
      mask.module = LayerModule::CoreAttention;
      ops.push_back(mask);
    }
    ComputeOp softmax = pointwise_op("attention_softmax", OpKind::Softmax, kSoftmaxFlop, scores, scores, 0.0);
    softmax.module = LayerModule::CoreAttention;
    ops.push_back(softmax);
    if (c.dropout) {
      // torch dropout on the probabilities: reads them, writes the kept ones and a 1-byte mask.
      ComputeOp drop = pointwise_op("attention_dropout", OpKind::Elementwise, kDropoutFlop, scores, scores, 0.0);
      drop.fixed_bytes = scores;
      drop.module = LayerModule::CoreAttention;
      ops.push_back(drop);
    }
    ops.push_back(av);
  }

  // Row-parallel: K split, the bias whole (added once the partial products are reduced).
  ops.push_back(linear_op("output_projection", t, out_width, c.hidden, c.bias));
  push_residual(ops, "attention", r * t * h);
  ops.push_back(pointwise_op("mlp_norm", OpKind::Norm, norm_flop, r * t * h, r * t * h, norm_weights));
  const bool gated = c.mlp == MlpKind::Gated;
  // An MLP of width `width` (this rank's columns) on `rows` tokens, named prefix_gate, _up, [_bias], [_silu],
  // _activation, _down; each GEMM's weights counted `copies` times (a rank's experts).
  auto push_mlp = [&](const std::string& prefix, double rows, std::int64_t width, double copies) {
    const double w = as_double(width);
    auto linear = [&](std::string name, std::int64_t in, std::int64_t out) {
      ComputeOp op = linear_op(std::move(name), rows, in, out, c.bias);
      op.weight_elements *= copies;
      // A rank's experts run one product each on their own copies (a grouped GEMM: Transformer Engine's
      // GroupedLinear issues one cuBLAS GEMM per expert): the rows split over them (GemmShape::row_groups).
      op.gemm->row_groups = static_cast<std::int64_t>(copies);
      return op;
    };
    if (gated) ops.push_back(linear(prefix + "_gate", c.hidden, width));
    ops.push_back(linear(prefix + "_up", c.hidden, width));
    const double activation_inputs = gated ? 2.0 * rows * w : rows * w;
    // The GEMMs' bias adds are counted with their flops; fused, the activation kernel adds them on the way
    // (bias_gelu), unfused they are a pass of their own over the GEMMs' outputs.
    if (c.bias && !kernels_.fused_bias_activation)
      ops.push_back(
          pointwise_op(prefix + "_bias", OpKind::Elementwise, 0.0, activation_inputs, activation_inputs, 0.0));
    if (gated && !kernels_.fused_bias_activation) {
      // SiLU(gate), then the product with up: two kernels.
      ops.push_back(pointwise_op(prefix + "_silu", OpKind::Elementwise, 0.0, rows * w, rows * w, 0.0));
      ops.push_back(
          pointwise_op(prefix + "_activation", OpKind::Elementwise, kSwiGluFlop, 2.0 * rows * w, rows * w, 0.0));
    } else {
      ops.push_back(pointwise_op(prefix + "_activation", OpKind::Elementwise, gated ? kSwiGluFlop : kGeluFlop,
                                 activation_inputs, rows * w, 0.0));
    }
    ops.push_back(linear(prefix + "_down", width, c.hidden));
  };
  if (!c.experts.moe()) {
    push_mlp("mlp", t, c.ffn / n, 1.0);
    push_residual(ops, "mlp", r * t * h);
    apply_fp8(ops, kernels_.fp8, split.sequence_parallel && split.tensor > 1, as_double(split.tensor));
    tag_modules(ops);
    return ops;
  }
  // Mixture of experts. The rank routes its own tokens (its sequence slice with sequence parallelism): a router GEMM
  // h -> E and the softmax / top-k over the E logits; the k copies of each token are permuted into expert order and
  // sent to the experts' ranks (the planner's all-to-all); this rank's experts (E / expert ranks of them) run on the
  // copies routed to them, `load` times the uniform share (tokens x k on every rank when routing is uniform), in
  // local-expert order (TensorSplit::expert_sort); the results come back and are unpermuted: each token sums its k
  // copies weighted by their router probabilities.
  // Shared experts are a dense MLP on the rank's own tokens. With expert tensor parallelism ET each expert's FFN is
  // split over ET ranks, which gather the copies routed to each of them (the planner's all-gather) and run their
  // 1/ET of the FFN on all of them: ET x the rows, 1/ET of the width, the same flops in narrower GEMMs.
  const ExpertConfig& x = c.experts;
  PARTSIM_CHECK(split.expert >= 1 && x.count % split.expert == 0 && split.expert_load >= 0.0 &&
                split.expert_tensor >= 1 && c.ffn % split.expert_tensor == 0)
      << split.expert << " expert ranks for " << x.count << " experts, load " << split.expert_load << ", "
      << split.expert_tensor << " expert tensor ranks for an FFN of " << c.ffn;
  const double own = r * t; // the tokens this rank routes
  const double k = as_double(x.top_k);
  const double logits = own * as_double(x.count);
  ops.push_back(linear_op("router", own, c.hidden, x.count, c.bias));
  ops.push_back(pointwise_op("router_topk", OpKind::Softmax, kSoftmaxFlop, logits, logits, 0.0));
  if (kernels_.fused_moe_permute) {
    // Transformer Engine's moe_permute: each row read once, written to its k copies; the backward (moe_unpermute of
    // the gradients) reads the k copies' gradients and writes the row's sum, reading no saved input.
    ComputeOp permute = pointwise_op("expert_permute", OpKind::Elementwise, 0.0, own * h, own * k * h, 0.0);
    permute.backward_reads_input = false;
    ops.push_back(permute);
  } else {
    ops.push_back(pointwise_op("expert_permute", OpKind::Elementwise, 0.0, own * k * h, own * k * h, 0.0));
  }
  const double routed = std::round(own * k * split.expert_load); // the copies this rank's experts process
  const double et = as_double(split.expert_tensor);
  // The received (and with expert tensor parallelism gathered) copies into local-expert order and back: a copy of
  // every row each way; the backward copies the gradients back through the inverse order (reads no saved input).
  const bool sort = split.expert_sort && x.count / split.expert > 1;
  auto permutation = [&](std::string name) {
    ComputeOp op = pointwise_op(std::move(name), OpKind::Elementwise, 0.0, routed * et * h, routed * et * h, 0.0);
    op.backward_reads_input = false;
    return op;
  };
  if (sort) ops.push_back(permutation("expert_sort"));
  push_mlp("expert", routed * et, c.ffn / split.expert_tensor, as_double(x.count / split.expert));
  if (sort) ops.push_back(permutation("expert_restore"));
  ops.push_back(pointwise_op("expert_unpermute", OpKind::Elementwise, 2.0, own * k * h, own * h, 0.0));
  if (x.shared > 0) push_mlp("shared_expert", own, x.shared * x.shared_ffn_size(c.ffn), 1.0);
  push_residual(ops, "mlp", r * t * h);
  apply_fp8(ops, kernels_.fp8, split.sequence_parallel && split.tensor > 1, as_double(split.tensor));
  tag_modules(ops);
  return ops;
}

void TransformerModel::tag_modules(std::vector<ComputeOp>& ops) const {
  // By the names layer_ops gives (the attention core is tagged where it is built). A norm inside a LayerNormLinear is
  // no module of its own: the attention norm belongs to none, a dense MLP's norm to the MLP.
  const bool fused_norms = kernels_.norms_in_linears;
  for (ComputeOp& op : ops) {
    const std::string& name = op.name;
    if (op.module != LayerModule::None) {
    } else if (name == "attention_norm") {
      op.module = fused_norms ? LayerModule::None : LayerModule::LayerNorm;
    } else if (name == "mlp_norm") {
      op.module = fused_norms && !config_.experts.moe() ? LayerModule::Mlp : LayerModule::LayerNorm;
    } else if (config_.mla.enabled() && (name == "q_up" || name == "kv_up" || name == "rotary_embedding")) {
      op.module = LayerModule::MlaUpProjection;
    } else if (name.starts_with("shared_expert_")) {
      op.module = LayerModule::SharedExperts;
    } else if (name == "expert_bias" || name == "expert_silu" || name == "expert_activation") {
      op.module = LayerModule::MoeActivation;
    } else if (name.starts_with("mlp_") && name != "mlp_residual" && name != "mlp_output_bias" &&
               name != "mlp_output_dropout") {
      op.module = LayerModule::Mlp; // up (gate), bias, activation, down
    }
    op.selectively_recomputed = kernels_.recompute_modules.contains(op.module);
  }
  if (kernels_.recompute_modules.torchtitan_op) tag_torchtitan_op(ops);
  // An FP8 cast belongs to the module of the GEMM it feeds (the op after it).
  for (std::size_t i = 0; i + 1 < ops.size(); ++i)
    if (ops[i].name.ends_with("_fp8_cast")) {
      ops[i].module = ops[i + 1].module;
      ops[i].selectively_recomputed = ops[i + 1].selectively_recomputed;
    }
}

void TransformerModel::tag_torchtitan_op(std::vector<ComputeOp>& ops) const {
  // torchtitan's policy saves the outputs of aten.mm (but every second one, counted in the layer's forward order),
  // of the attention kernel (SDPA), of reduce-scatters and of aten.max; everything else is rerun before the backward.
  // torchtitan's Llama runs wq, wk and wv as three matmuls (the QKV op's queries, keys and values, in that order),
  // then wo, w1 (gate), w3 (up) and w2 (down): wk, wo and w3 are rerun. An FP8 GEMM (torchao's Float8Linear calls
  // torch._scaled_mm, not in the save list) is rerun whole; its cast with it.
  const TransformerConfig& c = config_;
  std::int64_t matmuls = 0;
  auto rerun = [&]() { return ++matmuls % 2 == 0; };
  for (ComputeOp& op : ops) {
    op.recomputed_share = 1.0;
    op.selectively_recomputed = op.kind != OpKind::Attention;
    if (op.kind != OpKind::Gemm || op.fp8) continue;
    if (op.name == "qkv_projection") {
      const double parts[] = {as_double(c.heads * c.head_dim), as_double(c.kv_heads * c.head_dim),
                              as_double(c.kv_heads * value_dim())};
      double share = 0.0;
      for (const double part : parts)
        if (rerun()) share += part;
      op.recomputed_share = share / (parts[0] + parts[1] + parts[2]);
    } else {
      op.recomputed_share = rerun() ? 1.0 : 0.0;
    }
    op.selectively_recomputed = op.recomputed_share > 0.0;
  }
}

std::vector<ComputeOp> TransformerModel::outer_ops(std::int64_t micro_batch, const TensorSplit& split) const {
  const TransformerConfig& c = config_;
  const double t = tokens(micro_batch) / as_double(split.context); // the rank's tokens
  const double h = as_double(c.hidden);
  const bool learned = c.position == PositionEmbedding::Learned;
  const double n = as_double(split.tensor);
  const double r = split.sequence_parallel ? 1.0 / n : 1.0; // whole unless split along the sequence
  const std::int64_t vocab = vocab_shard(split.tensor);

  std::vector<ComputeOp> ops;
  // Gather t rows of h (token ids in, activations out); a learned position row is added to each. Vocabulary-parallel:
  // a rank reads and scatter-adds only the rows of tokens in its shard (1/n of them on average) but writes every row
  // of its partial output (zeros elsewhere); the position table and dropout act on the reduced output.
  ComputeOp embedding;
  embedding.name = "embedding";
  embedding.kind = OpKind::Lookup;
  embedding.forward_flops = r * ((learned ? t * h : 0.0) + (c.dropout ? kDropoutFlop * t * h : 0.0));
  embedding.backward_flops = t * h / n + (learned ? r * t * h : 0.0);  // scatter-add into the tables
  embedding.weight_elements = t * h / n + (learned ? r * t * h : 0.0); // rows read, not whole tables
  embedding.input_elements = t;
  embedding.output_elements = t * h;
  embedding.input_gradient = false;
  ops.push_back(embedding);

  const bool layer_norm = c.norm == NormKind::LayerNorm;
  ops.push_back(pointwise_op("final_norm", OpKind::Norm, layer_norm ? kLayerNormFlop : kRmsNormFlop, r * t * h,
                             r * t * h, layer_norm ? 2.0 * h : h));
  ops.push_back(linear_op("logits", t, c.hidden, vocab, false));
  const double logits = t * as_double(vocab);
  ops.push_back(pointwise_op("loss", OpKind::Loss, kSoftmaxFlop, logits, logits, 0.0));
  ComputeOp& loss = ops.back();
  loss.output_elements = t; // one loss per token; the softmax works over every logit
  // The element counts price a fused kernel: forward e·E + e·t, backward 2e·E + e·t. The fp32 kernels (see
  // CrossEntropyKernel) read the logits once in the data type (the cast) and write their gradient once (the cast
  // back), and add their fp32 passes.
  if (kernels_.cross_entropy != CrossEntropyKernel::Fused) loss.backward_reads_input = false;
  if (kernels_.cross_entropy == CrossEntropyKernel::Fp32LogSoftmax) {
    loss.extra_forward_bytes = 12.0 * logits;  // cast write 4, log_softmax read 4 + write 4
    loss.extra_backward_bytes = 20.0 * logits; // gradient fill 4, log_softmax backward read 4 + 4 and write 4, cast 4
  } else if (kernels_.cross_entropy == CrossEntropyKernel::MegatronFp32) {
    loss.extra_forward_bytes = 36.0 * logits;  // cast write 4, max 4, subtract 8, exp 8, sum 4, divide 8
    loss.extra_backward_bytes = 12.0 * logits; // product in place 8, cast read 4
  }
  return ops;
}

// --- flops ---------------------------------------------------------------------------------------------------------

TrainingFlops TransformerModel::layer_flops(std::int64_t micro_batch, Recomputation recomputation) const {
  const std::vector<ComputeOp> ops = layer_ops(micro_batch);
  TrainingFlops flops = sum_flops(ops);
  if (recomputation == Recomputation::Full) flops.recompute = flops.forward;
  if (recomputation == Recomputation::Selective)
    for (const ComputeOp& op : ops)
      if (op.selectively_recomputed) flops.recompute += op.recomputed_share * op.forward_flops;
  return flops;
}

TrainingFlops TransformerModel::outer_flops(std::int64_t micro_batch) const {
  return sum_flops(outer_ops(micro_batch));
}

TrainingFlops TransformerModel::training_flops(std::int64_t batch, Recomputation recomputation) const {
  const TrainingFlops layer = layer_flops(batch, recomputation);
  const TrainingFlops outer = outer_flops(batch);
  const double l = as_double(config_.layers);
  TrainingFlops all{l * layer.forward + outer.forward, l * layer.backward + outer.backward, l * layer.recompute};
  const std::int64_t dense = config_.layers - moe_layers(0, config_.layers);
  if (config_.experts.moe() && dense > 0) { // the first dense layers in place of as many MoE layers
    const TrainingFlops d = dense_model().layer_flops(batch, recomputation);
    all.forward += as_double(dense) * (d.forward - layer.forward);
    all.backward += as_double(dense) * (d.backward - layer.backward);
    all.recompute += as_double(dense) * (d.recompute - layer.recompute);
  }
  return all;
}

// --- activation memory ---------------------------------------------------------------------------------------------

double TransformerModel::layer_activation_bytes(std::int64_t micro_batch, Recomputation recomputation,
                                                double bytes_per_element) const {
  const TransformerConfig& c = config_;
  const double e = bytes_per_element;
  const double t = tokens(micro_batch);
  const double h = as_double(c.hidden);
  const double f = as_double(c.ffn);
  const double q = as_double(c.heads * c.head_dim);
  const double k = as_double(c.kv_heads * c.head_dim);
  const double v = as_double(c.kv_heads * value_dim()); // the values, and (x heads / kv_heads) the core's output
  const double out = as_double(c.heads * value_dim());
  // Multi-head latent attention also keeps its latents: the query latent's norm and up-projection inputs, the
  // key/value latent's norm input and up-projection input, and the shared rotary key.
  const MlaConfig& mla = c.mla;
  const double latents = mla.enabled() ? as_double(2 * mla.q_lora_rank + 2 * mla.kv_lora_rank + mla.rope_dim) : 0.0;
  // Of them, the up projections' inputs (q_lora_rank + kv_lora_rank per token) are GEMM inputs.
  const double latent_gemm_inputs = mla.enabled() ? as_double(mla.q_lora_rank + mla.kv_lora_rank) : 0.0;
  const double scores =
      as_double(micro_batch) * as_double(c.heads) * as_double(c.sequence_length) * as_double(c.sequence_length);
  const double mask = c.dropout ? 1.0 : 0.0; // dropout masks: 1 byte per element

  if (recomputation == Recomputation::Full) return e * t * h; // the layer's input only
  if (recomputation == Recomputation::Selective && kernels_.recompute_modules.torchtitan_op) {
    // torchtitan's per-op policy: the layer's input (the checkpoint's), the outputs of the matmuls it keeps (their
    // unrerun share) and the attention kernel's output and softmax statistics; everything else is rebuilt.
    double kept = e * t * h;
    for (const ComputeOp& op : layer_ops(micro_batch)) {
      if (op.kind == OpKind::Gemm && !op.fp8) kept += (1.0 - op.recomputed_share) * e * op.output_elements;
      if (op.kind == OpKind::Attention) kept += e * op.output_elements + op.fixed_bytes;
    }
    return kept;
  }

  // Selective recomputation frees what the rerun modules would otherwise keep (Megatron-Core's --recompute-modules):
  // `layernorm` and `moe_act` discard their outputs (the next op's saved input) and rebuild them before the backward
  // needs them; `mla_up_proj` discards the up projections' queries, keys and values; `mlp` and `shared_experts`
  // keep their input and drop everything inside; `core_attn` the s x s tensors of an unfused core.
  auto rerun = [&](LayerModule m) {
    return recomputation == Recomputation::Selective && kernels_.recompute_modules.contains(m);
  };
  // What an FP8 GEMM keeps of its input for the weight gradient: the 1-byte column-wise copy (Transformer Engine);
  // the router and everything else keep theirs in the data type.
  const double g = gemm_input_bytes(e);
  // A norm's output: the next GEMM's (or the router's) saved input.
  const double attention_norm_output = attention_norm_rerun(recomputation) ? 0.0 : g * t * h;
  const double mlp_norm_output = mlp_norm_rerun(recomputation) ? 0.0 : (c.experts.moe() ? e : g) * t * h;
  // Attention block: the norm's input, the QKV input, Q, K and V, the output projection's input, its dropout mask.
  double bytes = e * t * h + attention_norm_output + (rerun(LayerModule::MlaUpProjection) ? 0.0 : e * t * (q + k + v)) +
                 e * t * (latents - latent_gemm_inputs) + g * t * latent_gemm_inputs + g * t * out + mask * t * h;
  // MLP block: the norm's input, the first GEMM's input, the activation's inputs, the last GEMM's input, the mask.
  const double activation_inputs = c.mlp == MlpKind::Gated ? 2.0 * f : f;
  if (!c.experts.moe()) {
    bytes += e * t * h + mlp_norm_output + (rerun(LayerModule::Mlp) ? 0.0 : e * t * activation_inputs + g * t * f) +
             mask * t * h;
  } else {
    // Mixture of experts, with every expert's rank getting the uniform share: the norm's input, the router's input
    // and its fp32 probabilities, then per copy (k per token) the experts' first GEMM input, the activation's inputs,
    // the last GEMM's input and its output (which the unpermute's backward needs); the shared experts as an MLP.
    const ExpertConfig& x = c.experts;
    const double k = as_double(x.top_k);
    bytes += e * t * h + mlp_norm_output + 4.0 * t * as_double(x.count) + mask * t * h;
    bytes +=
        k * (g * t * h + e * t * activation_inputs + (rerun(LayerModule::MoeActivation) ? 0.0 : g * t * f) + e * t * h);
    if (x.shared > 0) {
      const double fs = as_double(x.shared * x.shared_ffn_size(c.ffn));
      bytes += g * t * h;
      if (!rerun(LayerModule::SharedExperts)) bytes += e * t * (c.mlp == MlpKind::Gated ? 2.0 * fs : fs) + g * t * fs;
    }
  }
  // Attention core: softmax output, with dropout also its mask and the dropped-out probabilities.
  if (fused_attention(kernels_.attention))
    bytes += kSoftmaxStatisticsBytes * as_double(micro_batch) * as_double(c.heads) * as_double(c.sequence_length);
  else if (!rerun(LayerModule::CoreAttention))
    bytes += e * scores + (c.dropout ? (1.0 + e) * scores : 0.0);
  return bytes;
}

double TransformerModel::layer_sequence_bytes(std::int64_t micro_batch, Recomputation recomputation,
                                              double bytes_per_element) const {
  const double t = tokens(micro_batch);
  const double h = as_double(config_.hidden);
  if (recomputation == Recomputation::Full ||
      (recomputation == Recomputation::Selective && kernels_.recompute_modules.torchtitan_op))
    return bytes_per_element * t * h;
  // The norms' inputs, and their outputs (the first GEMMs' saved inputs: 1 byte with FP8; a MoE's MLP norm output is
  // the router's input, kept in the data type).
  const double e = bytes_per_element;
  const double g = gemm_input_bytes(e);
  const double outputs = (attention_norm_rerun(recomputation) ? 0.0 : g) +
                         (mlp_norm_rerun(recomputation) ? 0.0 : (config_.experts.moe() ? e : g));
  return (2.0 * e + outputs) * t * h + (config_.dropout ? 2.0 * t * h : 0.0);
}

bool TransformerModel::attention_norm_rerun(Recomputation recomputation) const {
  return recomputation == Recomputation::Selective && kernels_.recompute_modules.contains(LayerModule::LayerNorm) &&
         !kernels_.norms_in_linears;
}

bool TransformerModel::mlp_norm_rerun(Recomputation recomputation) const {
  if (recomputation != Recomputation::Selective) return false;
  const RecomputeModules& modules = kernels_.recompute_modules;
  return kernels_.norms_in_linears && !config_.experts.moe() ? modules.contains(LayerModule::Mlp)
                                                             : modules.contains(LayerModule::LayerNorm);
}

double TransformerModel::layers_activation_bytes(std::int64_t first, std::int64_t count, std::int64_t micro_batch,
                                                 Recomputation recomputation, double bytes_per_element) const {
  const std::int64_t moe = moe_layers(first, count);
  double bytes = moe > 0 ? as_double(moe) * layer_activation_bytes(micro_batch, recomputation, bytes_per_element) : 0.0;
  if (count > moe)
    bytes +=
        as_double(count - moe) * dense_model().layer_activation_bytes(micro_batch, recomputation, bytes_per_element);
  return bytes;
}

double TransformerModel::largest_layer_activation_bytes(std::int64_t first, std::int64_t count,
                                                        std::int64_t micro_batch, Recomputation recomputation,
                                                        double bytes_per_element) const {
  const std::int64_t moe = moe_layers(first, count);
  double bytes = moe > 0 ? layer_activation_bytes(micro_batch, recomputation, bytes_per_element) : 0.0;
  if (count > moe)
    bytes = std::max(bytes, dense_model().layer_activation_bytes(micro_batch, recomputation, bytes_per_element));
  return bytes;
}

double TransformerModel::outer_activation_bytes(std::int64_t micro_batch, double bytes_per_element) const {
  const double t = tokens(micro_batch);
  const double h = as_double(config_.hidden);
  const double mask = config_.dropout ? t * h : 0.0;
  return mask + 2.0 * bytes_per_element * t * h + 4.0 * t * as_double(config_.vocab);
}

} // namespace partsim
