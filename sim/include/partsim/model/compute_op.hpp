// One operation of a workload (a GEMM, a norm, a softmax, ...) with its flops, bytes moved and GEMM shape (what a
// cost model needs to price it on a GPU profile), sums of ops, and the config problems the models report.
#pragma once

#include "partsim/common/enum_names.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace partsim {

/** Flop convention used throughout partsim: one multiply-accumulate is 2 flop. */
inline constexpr double kFlopPerMultiplyAccumulate = 2.0;

/** Shape of a (batched) matrix product C[M,N] = A[M,K] · B[K,N], repeated `batch` times. A grouped GEMM (a rank's
 * routed experts, each with its own weights) is one shape over all its rows with `row_groups` > 1: the M rows split
 * evenly over that many products, whose weight gradients each reduce over their own M / row_groups rows. */
struct GemmShape {
  std::int64_t batch = 1;
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::int64_t row_groups = 1;

  /** 2·batch·M·N·K flop. */
  double flops() const {
    return kFlopPerMultiplyAccumulate * static_cast<double>(batch) * static_cast<double>(m) * static_cast<double>(n) *
           static_cast<double>(k);
  }
  bool operator==(const GemmShape&) const = default;
};

/** The product that computes the weight gradient of `s` (dW = Xᵀ · dY): K x N over the M rows; for a grouped GEMM
 * one per group, each over its M / row_groups rows (rounded, at least 1), the groups side by side as a batch. */
inline GemmShape weight_gradient_shape(const GemmShape& s) {
  const std::int64_t groups = s.row_groups > 1 ? s.row_groups : 1;
  const std::int64_t depth = (s.m + groups / 2) / groups;
  return GemmShape{s.batch * groups, s.k, s.n, depth > 1 ? depth : 1};
}

/** What an op does, for a cost model: matrix products are compute bound, the rest mostly memory bound. */
enum class OpKind {
  Gemm,        ///< matrix product (linear layer, convolution lowered by im2col, attention batched products)
  Norm,        ///< LayerNorm, RMSNorm, BatchNorm
  Softmax,     ///< softmax (with scaling, masking and dropout where the model has them)
  Elementwise, ///< activations, residual adds, rotary embedding
  Lookup,      ///< embedding table lookup
  Pool,        ///< max or average pooling
  Loss,        ///< softmax cross-entropy over the logits
  Attention,   ///< a fused attention kernel (FlashAttention): scores, softmax and the product with V in one pass
};

template <>
struct EnumNames<OpKind> {
  static constexpr std::array<EnumEntry<OpKind>, 8> entries{{{OpKind::Gemm, "gemm"},
                                                             {OpKind::Norm, "norm"},
                                                             {OpKind::Softmax, "softmax"},
                                                             {OpKind::Elementwise, "elementwise"},
                                                             {OpKind::Lookup, "lookup"},
                                                             {OpKind::Pool, "pool"},
                                                             {OpKind::Loss, "loss"},
                                                             {OpKind::Attention, "attention"}}};
};

/** The submodule of a transformer layer an op belongs to, as Megatron-Core's selective recomputation names them
 * (`--recompute-modules`, megatron/core/transformer/transformer_config.py): the attention core, the two norms, the
 * multi-head latent attention's up projections and rotary part, the dense MLP, a mixture of experts' activation and
 * its shared experts. `None`: an op no module list reruns (the QKV and output projections, residuals, router, the
 * experts' GEMMs). */
enum class LayerModule { None, CoreAttention, LayerNorm, MlaUpProjection, Mlp, MoeActivation, SharedExperts };

template <>
struct EnumNames<LayerModule> {
  static constexpr std::array<EnumEntry<LayerModule>, 7> entries{{{LayerModule::None, "none"},
                                                                  {LayerModule::CoreAttention, "core_attn"},
                                                                  {LayerModule::LayerNorm, "layernorm"},
                                                                  {LayerModule::MlaUpProjection, "mla_up_proj"},
                                                                  {LayerModule::Mlp, "mlp"},
                                                                  {LayerModule::MoeActivation, "moe_act"},
                                                                  {LayerModule::SharedExperts, "shared_experts"}}};
};

/** Lower-case name of an op kind: "gemm", "norm", ... */
inline std::string_view to_string(OpKind kind) {
  return enum_name(kind);
}

/** Shape of a fused attention kernel: `batch_heads` independent heads (micro-batch x heads on the rank) of
 * `sequence_length` queries and keys of `head_dim`; a causal kernel skips the masked half of the scores. With
 * context parallelism (`context` C > 1) the rank holds s/C of the queries (two of 2C chunks, balanced) and attends to
 * every key: 1/C of the work, run as kernels over blocks of s/C queries. */
struct AttentionShape {
  std::int64_t batch_heads = 0;
  std::int64_t sequence_length = 0;
  std::int64_t head_dim = 0;
  bool causal = true;
  std::int64_t context = 1;
  /** Dimension of a head's value (multi-head latent attention: 128 against queries and keys of 192); 0: head_dim. */
  std::int64_t value_dim = 0;
  /** A causal sliding window of this many keys per query (self included); 0: the whole causal prefix. */
  std::int64_t window = 0;
  /** The Triton kernel (`flash_triton`): priced from the profile's attention_efficiency_triton where it has one. */
  bool triton = false;

  std::int64_t values() const { return value_dim > 0 ? value_dim : head_dim; }
  /** Forward flop of the two products (scores and the product with V) as the kernel runs them: 2·bh·s²·(d + d_v)
   * (4·bh·s²·d when d_v = d), halved when causal (FlashAttention's own count), over C with context parallelism. */
  double executed_forward_flops() const {
    const double s = static_cast<double>(sequence_length);
    const double per_pair =
        kFlopPerMultiplyAccumulate * static_cast<double>(batch_heads) * static_cast<double>(head_dim + values());
    if (banded()) {
      // Query i attends to min(i + 1, w) keys: w·s - w(w - 1)/2 pairs over the sequence.
      const double w = static_cast<double>(window);
      return per_pair * (w * s - w * (w - 1.0) / 2.0) / static_cast<double>(context);
    }
    const double full = per_pair * s * s;
    return (causal ? full / 2.0 : full) / static_cast<double>(context);
  }
  /** Whether the kernel skips keys outside a sliding window shorter than the sequence. */
  bool banded() const { return causal && window > 0 && window < sequence_length; }
  /** The sequence length whose measured causal throughput stands for this kernel's: s (s/C under context
   * parallelism), or for a sliding window of w keys 2w, at most that: a query tile then visits about w / tile + 1 key
   * tiles, as a causal kernel over 2w does on average (an assumption; the window's first tile is as partly masked as a
   * causal kernel's diagonal). */
  std::int64_t efficiency_length() const { return banded() ? std::min(query_block(), 2 * window) : query_block(); }
  /** Queries of one kernel call: s, or the rank's block of s/C under context parallelism. */
  std::int64_t query_block() const { return sequence_length / context; }
  bool operator==(const AttentionShape&) const = default;
};

/** One op of a forward pass, for a given batch.
 *
 * Element counts are precision independent; `forward_bytes(e)` prices them at `e` bytes per element. Backward
 * flops are the input-gradient and weight-gradient work without any recomputation (the workload model adds
 * recomputed forwards separately). */
struct ComputeOp {
  std::string name; ///< "qkv_projection", "layer2.0.conv1", ...
  OpKind kind = OpKind::Elementwise;
  std::optional<GemmShape> gemm;           ///< set for OpKind::Gemm
  std::optional<AttentionShape> attention; ///< set for OpKind::Attention
  double forward_flops = 0.0;              ///< flop
  double backward_flops = 0.0;             ///< flop: input gradient + weight gradient
  double weight_elements = 0.0;            ///< parameters read (weights and biases)
  double input_elements = 0.0;             ///< activation elements read
  double output_elements = 0.0;            ///< activation elements written
  /** Bytes whose size does not follow the data type: dropout masks (1 byte per element), a fused attention kernel's
   * fp32 softmax statistics. Written by the forward, read by the backward. */
  double fixed_bytes = 0.0;
  /** Bytes of one pass only that do not follow the data type: the fp32 passes of a cross-entropy over logits cast to
   * fp32 (see CrossEntropyKernel). */
  double extra_forward_bytes = 0.0;
  double extra_backward_bytes = 0.0;
  /** False for an op whose backward does not read its saved input in the data type (a cross-entropy that keeps its
   * own fp32 softmax): the backward then prices the inputs once (the input gradient), not twice. */
  bool backward_reads_input = true;
  /** The layer submodule the op belongs to (transformers). */
  LayerModule module = LayerModule::None;
  /** Repeated in the backward pass under selective activation recomputation: the op's module is one the model's
   * recompute modules name (by default the attention core: scores, softmax, attention over values; Korthikanti et
   * al. 2022). */
  bool selectively_recomputed = false;
  /** Of a selectively recomputed op, the share of its forward the rerun repeats: 1, but under torchtitan's per-op
   * policy (RecomputeModules::torchtitan_op) a fused QKV projection stands for three matmuls (queries, keys, values)
   * of which the second, the keys', is rerun: its share of the GEMM. */
  double recomputed_share = 1.0;
  /** False for an op whose input needs no gradient (the first convolution of a CNN reads images): its backward is
   * the weight gradient only. */
  bool input_gradient = true;
  /** A linear layer's GEMM run in FP8 by Transformer Engine (workload `fp8`): its three products at the GPU's fp8
   * rate and fp8 GEMM efficiency, reading the fp8 copies of its input and weight (1 byte per element) and writing
   * its output in the data type. */
  bool fp8 = false;
  /** FP8 quantization (Transformer Engine's cast-transpose beside an FP8 GEMM): elements converted from the data type
   * to fp8 in the forward (the GEMM's input) and in the backward (its output gradient). Each is read
   * `fp8_cast_reads` times in the data type (1: delayed scaling's cast-transpose, whose scale is known beforehand;
   * 2: current scaling, which first reads the tensor for its absolute maximum) and written as two 1-byte copies, one
   * row-wise and one column-wise, as Hopper's FP8 tensor cores take only the TN layout. */
  double fp8_cast_forward = 0.0;
  double fp8_cast_backward = 0.0;
  double fp8_cast_reads = 1.0;
  /** False where the forward cast writes the row-wise copy only: a column-parallel GEMM's input under sequence
   * parallelism, quantized on the rank's own rows and all-gathered in fp8; its column-wise copy is made in the
   * backward by transposing the gathered fp8 tensor (`fp8_transpose_backward`). */
  bool fp8_cast_columnwise = true;
  /** False where the backward cast writes the row-wise copy only: a row-parallel GEMM's output gradient under
   * sequence parallelism, quantized on the rank's own rows and all-gathered in fp8 (Transformer Engine's
   * grad_output_preprocess); its column-wise copy is made by transposing the gathered tensor
   * (`fp8_transpose_backward`). */
  bool fp8_cast_backward_columnwise = true;
  /** Elements of gathered fp8 tensors transposed in the backward (Transformer Engine's fp8_transpose before the
   * weight-gradient GEMM): read and written at 1 byte each. */
  double fp8_transpose_backward = 0.0;

  /** Bytes the forward reads and writes: weights, inputs and outputs at `bytes_per_element` (an FP8 GEMM's weights
   * and inputs at 1 byte), the fixed bytes, and an FP8 cast's reads and writes. */
  double forward_bytes(double bytes_per_element) const {
    const double operand = fp8 ? 1.0 : bytes_per_element;
    return operand * (weight_elements + input_elements) + bytes_per_element * output_elements + fixed_bytes +
           extra_forward_bytes +
           fp8_cast_forward * (fp8_cast_reads * bytes_per_element + (fp8_cast_columnwise ? 2.0 : 1.0));
  }
  /** Bytes the backward reads and writes. A GEMM runs two products (input gradient, weight gradient) with the
   * forward's traffic each: 2x forward (1x without an input gradient). Any other op reads its saved input and the
   * output gradient, writes the input gradient, and reads weights and writes their gradient: 2·inputs + outputs +
   * 2·weights; plus an FP8 cast's reads and writes. */
  double backward_bytes(double bytes_per_element) const {
    if (kind == OpKind::Gemm) return (input_gradient ? 2.0 : 1.0) * forward_bytes(bytes_per_element);
    const double inputs = (backward_reads_input ? 2.0 : 1.0) * input_elements;
    return bytes_per_element * (inputs + output_elements + 2.0 * weight_elements) + fixed_bytes + extra_backward_bytes +
           fp8_cast_backward * (fp8_cast_reads * bytes_per_element + (fp8_cast_backward_columnwise ? 2.0 : 1.0)) +
           2.0 * fp8_transpose_backward;
  }
};

/** Flops of one pass over a batch, split by phase. */
struct TrainingFlops {
  double forward = 0.0;   ///< flop
  double backward = 0.0;  ///< flop: input and weight gradients
  double recompute = 0.0; ///< flop: forward work repeated in the backward pass by activation recomputation
  double total() const { return forward + backward + recompute; }
};

/** Forward and backward flops summed over `ops` (no recomputation). */
inline TrainingFlops sum_flops(const std::vector<ComputeOp>& ops) {
  TrainingFlops sum;
  for (const ComputeOp& op : ops) {
    sum.forward += op.forward_flops;
    sum.backward += op.backward_flops;
  }
  return sum;
}

/** A field of a model config that breaks a rule: its JSON key and what is wrong (the loader adds the pointer). */
struct ConfigProblem {
  std::string key;
  std::string message;
};

} // namespace partsim
