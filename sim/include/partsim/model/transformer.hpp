// Transformer workload model: parameters, per-op flops, bytes and GEMM shapes, and training activation memory of a
// decoder or encoder from its config. Pure arithmetic.
#pragma once

#include "partsim/common/enum_names.hpp"

#include "partsim/model/compute_op.hpp"

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace partsim {

enum class TransformerArchitecture { Decoder, Encoder };
/** Plain: up projection, GeLU, down projection (2 matrices). Gated: SwiGLU, SiLU(gate)·up then down (3 matrices). */
enum class MlpKind { Plain, Gated };
/** Learned: a sequence_length x hidden table added to the token embeddings. Rotary: no parameters. */
enum class PositionEmbedding { Learned, Rotary };
/** LayerNorm: scale and bias (2h parameters). RMSNorm: scale only (h parameters). */
enum class NormKind { LayerNorm, RmsNorm };
/** Activation recomputation (Korthikanti et al. 2022): none, the attention core only, or the whole layer. A fused
 * attention kernel (FlashAttention) costs what `Selective` costs: no s x s activations kept, the attention core
 * recomputed in the backward pass. */
enum class Recomputation { None, Selective, Full };

/** How the attention core (scores, softmax, product with V) runs:
 * - `flash`: one fused kernel (FlashAttention, cuDNN fused attention): the b·a·s² scores never reach memory, the
 *   backward recomputes them; priced from the profile's measured attention throughput (attention_efficiency);
 * - `flash_triton`: the same kernel written in Triton (Tri Dao's flash_attn_triton.py, which MPT's llm-foundry
 *   adapted as its `attn_impl: triton`): priced from the profile's measured Triton throughput
 *   (attention_efficiency_triton), or where it has none from attention_efficiency, and the report says so;
 * - `fused_softmax`: Megatron-LM 2021-2022: the scores written by a batched GEMM, one scale-mask-softmax kernel,
 *   attention dropout as its own kernel, then the batched product with V;
 * - `unfused`: the same with the mask and the softmax as separate kernels (each a pass over the scores). */
enum class AttentionKernel { Flash, FusedSoftmax, Unfused, FlashTriton };

/** Whether the kernel is a fused one that keeps the scores on chip (FlashAttention in CUDA or in Triton). */
constexpr bool fused_attention(AttentionKernel kernel) {
  return kernel == AttentionKernel::Flash || kernel == AttentionKernel::FlashTriton;
}

/** How the loss over the logits runs (E = tokens x the rank's vocabulary shard logits, e bytes per element):
 * - `fused`: one kernel over the logits in the training data type: the forward reads them, the backward writes their
 *   gradient (what fused cross-entropy kernels do);
 * - `fp32_log_softmax`: PyTorch's cross_entropy on logits cast to fp32 (torchtitan: `cross_entropy(pred.float(),
 *   labels)`): the cast (read eE, write 4E), log_softmax (read 4E, write 4E); backward the gradient's fill (write 4E),
 *   log_softmax's backward (read 4E twice, write 4E) and the cast back (read 4E, write eE);
 * - `megatron_fp32`: Megatron's vocabulary-parallel cross-entropy on fp32 logits
 *   (megatron/core/tensor_parallel/cross_entropy.py; megatron/mpu/cross_entropy.py in 2021-2022, the logits cast by
 *   `.float()` unless --fp16-lm-cross-entropy): the cast (read eE, write 4E), the max (read 4E), the max subtracted in
 *   place (8E), exp in place (8E), the sum (read 4E), the softmax divided in place and kept for the backward (8E);
 *   backward the in-place product with the loss gradient (8E) and the cast back (read 4E, write eE). */
enum class CrossEntropyKernel { Fused, Fp32LogSoftmax, MegatronFp32 };

/** FP8 training as Transformer Engine runs it (Megatron-Core's `--fp8-format hybrid --fp8-recipe`; Micikevicius et al.
 * 2022, "FP8 Formats for Deep Learning", arXiv:2209.05433): the layers' linear GEMMs (QKV, output projection, MLP and
 * expert GEMMs; not the router, the attention core or the LM head) take FP8 operands, E4M3 in the forward and E5M2
 * gradients in the backward, each tensor scaled as a whole; every other op stays in the data type.
 * - `delayed`: TE's DelayedScaling (the scale from the absolute maxima of earlier iterations): one cast-transpose
 *   kernel per quantized tensor;
 * - `tensorwise`: TE's Float8CurrentScaling (Megatron-Core's `tensorwise` recipe): the tensor's own absolute maximum
 *   first (a pass over it), then the cast-transpose. */
enum class Fp8Recipe { None, Delayed, Tensorwise };

template <>
struct EnumNames<Fp8Recipe> {
  static constexpr std::array<EnumEntry<Fp8Recipe>, 3> entries{
      {{Fp8Recipe::None, "none"}, {Fp8Recipe::Delayed, "delayed"}, {Fp8Recipe::Tensorwise, "tensorwise"}}};
};

/** Kernel choices of a training stack that change memory traffic, not flops (the defaults: what current stacks run,
 * and the `custom` stack of a scenario): the attention core, bias + activation
 * in one kernel (Megatron-LM bias_gelu / bias_swiglu), bias + dropout + residual add in one kernel
 * (bias_dropout_add_fused_train). Unfused, each step is its own pass over the activations. */
/** The layer submodules selective recomputation reruns (Megatron-Core's `--recompute-modules`, default
 * `core_attn`: Korthikanti et al.'s selective recomputation): a set of LayerModule values other than `none`. */
struct RecomputeModules {
  /** One bit per LayerModule; default the attention core. */
  std::uint32_t bits = bit(LayerModule::CoreAttention);
  /** torchtitan's per-op policy instead of modules (`selective_ac_option = "op"`,
   * torchtitan/models/llama3/parallelize_llama.py at e7c0cae): the outputs of the attention kernel and of every
   * second matmul (aten.mm, counted in the layer's forward order: the first, third, ...) are kept, every other op is
   * rerun, FP8 GEMMs (torch._scaled_mm, not in the save list) included; no module is then in the set. */
  bool torchtitan_op = false;

  static RecomputeModules of(std::initializer_list<LayerModule> modules) {
    RecomputeModules out{0};
    for (LayerModule m : modules) out.bits |= bit(m);
    return out;
  }
  static RecomputeModules torchtitan_ops() { return RecomputeModules{0, true}; }
  bool contains(LayerModule m) const { return !torchtitan_op && m != LayerModule::None && (bits & bit(m)) != 0; }
  void add(LayerModule m) { bits |= bit(m); }
  bool is_default() const { return !torchtitan_op && bits == bit(LayerModule::CoreAttention); }
  /** "core_attn, layernorm" in LayerModule's order, or the per-op policy's summary. */
  std::string describe() const;
  bool operator==(const RecomputeModules&) const = default;
  static constexpr std::uint32_t bit(LayerModule m) {
    return m == LayerModule::None ? 0u : 1u << static_cast<unsigned>(m);
  }
};

struct TransformerKernels {
  AttentionKernel attention = AttentionKernel::Flash;
  bool fused_bias_activation = true;
  bool fused_bias_dropout_add = true;
  CrossEntropyKernel cross_entropy = CrossEntropyKernel::Fused;
  /** What selective recomputation reruns (only read under Recomputation::Selective). */
  RecomputeModules recompute_modules;
  /** Transformer Engine's LayerNormLinear (Megatron-Core's TE layer spec): the attention norm lives inside the QKV
   * projection's module and a dense MLP's norm inside the first MLP GEMM's, so `layernorm` recomputation has only a
   * mixture of experts' norm to rerun (the router reads it: its own module). Changes nothing else. */
  bool norms_in_linears = false;
  /** A mixture of experts' token permutation by Transformer Engine's fused kernel (Megatron-Core's
   * `--moe-permute-fusion`, te.pytorch moe_permute): each token's row read once and written to its k copies, the
   * backward summing the k copies' gradients into the row, (1 + k)·t·h elements each way. Unfused (PyTorch's
   * index_select and its scatter-add backward): 2k·t·h forward, 3k·t·h backward. Off by default, as in Megatron-Core
   * and torchtitan. */
  bool fused_moe_permute = false;
  /** FP8 GEMMs in the layers (see Fp8Recipe); none by default. */
  Fp8Recipe fp8 = Fp8Recipe::None;
  /** The layers' weights kept and gathered in fp8 (Megatron-Core's `--fp8-param-gather`, with FP8 GEMMs and a
   * distributed optimizer): Transformer Engine's fp8 weight tensors replace the data-type copy, so a layer weight
   * takes 2 bytes (row- and column-wise fp8) instead of the data type plus the 2-byte fp8 copy, and the distributed
   * optimizer all-gathers it at 1 byte per parameter, cast from the fp32 main weights. */
  bool fp8_param_gather = false;
  bool operator==(const TransformerKernels&) const = default;
};

/** Megatron-LM 2021-2022's kernels (the `megatron-lm-2021` stack): the attention core as two batched GEMMs around a
 * fused scale-mask-softmax and a dropout kernel, fused bias + GeLU and bias + dropout + add. Every product of the
 * model is then a GEMM op, as the classic closed forms (Narayanan et al. 2021, Korthikanti et al. 2022) count them. */
inline const TransformerKernels kMegatronLm2021Kernels{
    AttentionKernel::FusedSoftmax, true, true, CrossEntropyKernel::MegatronFp32, RecomputeModules{}, false};

/** One line for reports: "flash attention, fused bias + activation, unfused bias + dropout + add, fused
 * cross-entropy". */
std::string describe(const TransformerKernels& kernels);

template <>
struct EnumNames<AttentionKernel> {
  static constexpr std::array<EnumEntry<AttentionKernel>, 4> entries{{{AttentionKernel::Flash, "flash"},
                                                                      {AttentionKernel::FusedSoftmax, "fused_softmax"},
                                                                      {AttentionKernel::Unfused, "unfused"},
                                                                      {AttentionKernel::FlashTriton, "flash_triton"}}};
};

template <>
struct EnumNames<CrossEntropyKernel> {
  static constexpr std::array<EnumEntry<CrossEntropyKernel>, 3> entries{
      {{CrossEntropyKernel::Fused, "fused"},
       {CrossEntropyKernel::Fp32LogSoftmax, "fp32_log_softmax"},
       {CrossEntropyKernel::MegatronFp32, "megatron_fp32"}}};
};

template <>
struct EnumNames<TransformerArchitecture> {
  static constexpr std::array<EnumEntry<TransformerArchitecture>, 2> entries{
      {{TransformerArchitecture::Decoder, "decoder"}, {TransformerArchitecture::Encoder, "encoder"}}};
};
template <>
struct EnumNames<MlpKind> {
  static constexpr std::array<EnumEntry<MlpKind>, 2> entries{{{MlpKind::Plain, "plain"}, {MlpKind::Gated, "gated"}}};
};
template <>
struct EnumNames<PositionEmbedding> {
  static constexpr std::array<EnumEntry<PositionEmbedding>, 2> entries{
      {{PositionEmbedding::Learned, "learned"}, {PositionEmbedding::Rotary, "rotary"}}};
};
template <>
struct EnumNames<NormKind> {
  static constexpr std::array<EnumEntry<NormKind>, 2> entries{
      {{NormKind::LayerNorm, "layernorm"}, {NormKind::RmsNorm, "rmsnorm"}}};
};
template <>
struct EnumNames<Recomputation> {
  static constexpr std::array<EnumEntry<Recomputation>, 3> entries{
      {{Recomputation::None, "none"}, {Recomputation::Selective, "selective"}, {Recomputation::Full, "full"}}};
};

inline std::string_view to_string(TransformerArchitecture architecture) {
  return enum_name(architecture);
}
inline std::string_view to_string(MlpKind mlp) {
  return enum_name(mlp);
}
inline std::string_view to_string(PositionEmbedding position) {
  return enum_name(position);
}
inline std::string_view to_string(NormKind norm) {
  return enum_name(norm);
}
inline std::string_view to_string(Recomputation recomputation) {
  return enum_name(recomputation);
}
inline std::string_view to_string(AttentionKernel attention) {
  return enum_name(attention);
}
inline std::string_view to_string(CrossEntropyKernel cross_entropy) {
  return enum_name(cross_entropy);
}
inline std::string_view to_string(Fp8Recipe recipe) {
  return enum_name(recipe);
}

/** A transformer's shape. The JSON key of each field is named in its comment (models/workloads/NAME.json). */
/** `experts` of a transformer config: a mixture of experts in every layer's MLP (absent: a dense MLP). */
struct ExpertConfig {
  std::int64_t count = 0;      ///< "count": routed experts per layer E (0: a dense model)
  std::int64_t top_k = 0;      ///< "top_k": experts each token is sent to, k
  std::int64_t shared = 0;     ///< "shared": shared experts, which every token goes through
  std::int64_t shared_ffn = 0; ///< "shared_ffn_size": a shared expert's inner width; 0: ffn_size
  /** "first_dense_layers": the first layers keep a dense MLP (DeepSeek-V3's first_k_dense_replace: 3), of
   * "dense_ffn_size" (`dense_ffn`; 0: ffn_size). */
  std::int64_t first_dense = 0;
  std::int64_t dense_ffn = 0;
  /** "groups" and "groups_per_token": node-limited routing (DeepSeek-V3's `n_group` 8 and `topk_group` 4): the
   * experts in `groups` contiguous groups, each token's experts within `groups_per_token` of them (1 and 1: no limit;
   * node_token_share, expert_routing.hpp). */
  std::int64_t groups = 1;
  std::int64_t groups_per_token = 1;

  bool moe() const { return count > 0; }
  std::int64_t shared_ffn_size(std::int64_t ffn) const { return shared_ffn > 0 ? shared_ffn : ffn; }
};

/** A causal sliding attention window (Mistral, Gemma, gpt-oss): on a windowed layer each query attends to itself and
 * the `size` - 1 tokens before it, on every layer, or on all but every `full_every`-th one, which attend to the whole
 * sequence (layer l from 0 is full when (l + 1) % full_every == 0: gpt-oss's 128 tokens with full_every 2 window
 * layers 0, 2, 4, ..., as Megatron-Core's window_attn_skip_freq and Hugging Face's layer_types say). Absent (size 0):
 * every layer attends to the whole sequence. */
struct AttentionWindow {
  std::int64_t size = 0;       ///< "size": keys per query, self included
  std::int64_t full_every = 0; ///< "full_every": every n-th layer full; 0: every layer windowed
  bool enabled() const { return size > 0; }
  /** Whether layer `layer` (from 0) attends within the window. */
  bool windowed(std::int64_t layer) const { return size > 0 && (full_every == 0 || (layer + 1) % full_every != 0); }
};

/** `mla` of a transformer config: multi-head latent attention (DeepSeek-V2/V3, arXiv:2405.04434 §2.1): the queries
 * through a low-rank latent of q_lora_rank (0: one projection h -> a·d), the keys and values through a shared latent of
 * kv_lora_rank plus one decoupled rotary key of rope_dim per token; each head's query and key have head_dim = the
 * non-rotary part + rope_dim, its value v_head_dim. Absent (kv_lora_rank 0): ordinary attention. */
struct MlaConfig {
  std::int64_t q_lora_rank = 0;  ///< "q_lora_rank"
  std::int64_t kv_lora_rank = 0; ///< "kv_lora_rank"
  std::int64_t rope_dim = 0;     ///< "qk_rope_head_dim"
  std::int64_t v_head_dim = 0;   ///< "v_head_dim"

  bool enabled() const { return kv_lora_rank > 0; }
};

struct TransformerConfig {
  TransformerArchitecture architecture = TransformerArchitecture::Decoder; ///< "architecture": decoder | encoder
  std::int64_t layers = 0;                                                 ///< "layers"
  std::int64_t hidden = 0;                                                 ///< "hidden_size": h, the model width
  std::int64_t heads = 0;                                                  ///< "heads": query heads a
  std::int64_t kv_heads = 0; ///< "kv_heads": key/value heads g (g = a: MHA, 1 < g < a: GQA, g = 1: MQA); 0: a
  std::int64_t head_dim = 0; ///< "head_dim": d; 0: h / a. Explicit where a·d != h (GPT-3 13B: 40 x 128, h = 5140)
  std::int64_t ffn = 0;      ///< "ffn_size": f, the MLP's inner width
  std::int64_t vocab = 0;    ///< "vocab_size": V
  std::int64_t sequence_length = 0;                        ///< "sequence_length": s, tokens per sequence
  MlpKind mlp = MlpKind::Plain;                            ///< "mlp": plain | gated
  PositionEmbedding position = PositionEmbedding::Learned; ///< "position_embedding": learned | rotary
  NormKind norm = NormKind::LayerNorm;                     ///< "norm": layernorm | rmsnorm
  bool bias = true;                                        ///< "bias": biases on the linear layers
  bool tied_embeddings = true; ///< "tied_embeddings": the LM head reuses the token embedding matrix
  bool dropout = false;        ///< "dropout": dropout after attention softmax and on residual branches
  /** "experts": a mixture of experts, `ffn_size` being then each expert's inner width. */
  ExpertConfig experts;
  /** "mla": multi-head latent attention; `head_dim` is then the query and key head dimension (non-rotary + rotary). */
  MlaConfig mla;
  /** "attention_window": a sliding attention window on some or all layers (decoders only). */
  AttentionWindow window;
};

/** How a tensor-parallel group of `tensor` ranks splits a transformer (Megatron-LM, Shoeybi et al. 2019;
 * Korthikanti et al. 2022 for sequence parallelism). Per rank:
 * - column-parallel GEMMs (QKV, MLP up and gate, the logits) keep N / tensor output columns (and their biases);
 *   row-parallel GEMMs (output projection, MLP down) keep K / tensor input rows and the whole bias;
 * - the attention core (rotary, scores, softmax, attention over values) keeps heads / tensor heads;
 * - the MLP activation keeps ffn / tensor columns;
 * - the token table and the LM head keep a vocabulary shard of ceil(V / tensor) rows (the vocabulary padded to a
 *   multiple of the degree: Megatron-LM pads further, to a multiple of 128 x degree, which partsim does not);
 * - norms, residual adds, the position table and the embedding's dropout stay whole on every rank (their weights are
 *   always replicated), unless `sequence_parallel` splits their work along the sequence.
 * Needs the degree to divide heads, kv_heads and ffn_size (checked: a broken invariant aborts). */
struct TensorSplit {
  int tensor = 1;
  bool sequence_parallel = false;
  /** A mixture of experts: the routed experts split over `expert` ranks (experts / expert each, whole), this rank's
   * getting `expert_load` times the uniform share of the token copies (1: uniform routing). */
  int expert = 1;
  double expert_load = 1.0;
  /** Expert tensor parallelism: each routed expert's FFN split over `expert_tensor` ranks (its first GEMMs
   * column-parallel, its last row-parallel), which run it on the copies routed to any of them (gathered): rows x
   * expert_tensor, width / expert_tensor. 1: experts whole. */
  int expert_tensor = 1;
  /** The copies a rank's experts receive are reordered from source-rank order into local-expert order before the
   * experts, and back after them: Megatron-Core's all-to-all dispatcher (sort_chunks_by_idxs with
   * sort_input_by_local_experts and restore_output_by_local_experts in megatron/core/transformer/moe/
   * token_dispatcher.py), which does it when a rank holds more than one expert. One copy of the received rows each
   * way, in both passes; nothing kept for the backward (a permutation's gradient is the inverse permutation). */
  bool expert_sort = false;
  /** Context parallelism: the rank's tokens are s/context of each sequence, its attention queries those against all
   * the sequence's keys (load-balanced causal chunks: 1/context of the attention work). */
  int context = 1;
};

/** The first problem with a config (counts below 1, heads not dividing the hidden size when head_dim is implied,
 * kv_heads not dividing heads), or nothing. */
std::optional<ConfigProblem> find_problem(const TransformerConfig& config);

/** The arithmetic of a transformer: parameters, ops, flops and activation memory.
 *
 * Conventions:
 * - 2 flop per multiply-accumulate. Attention products count the full s x s score matrix, causal or not (as
 *   Narayanan et al. 2021 and Korthikanti et al. 2022 do; a causal kernel that skips masked blocks does about half).
 * - Backward: every GEMM runs two products of the forward's size (input gradient and weight gradient; for the
 *   attention products, the gradients of both operands): 2x its forward flops, plus one add per output element for
 *   a bias gradient. Every other op (norms, softmax, activations, residual adds, loss) is taken as 2x its forward.
 *   Embedding lookups cost nothing forward and one add per gathered element backward (gradient scatter-add).
 * - Non-GEMM forward flop per element: LayerNorm 8, RMSNorm 4, softmax 5 (+1 with dropout), GeLU 8,
 *   SiLU(gate)·up 5, rotary 3, residual add 1 (+1 with dropout), bias add 1. A GEMM op's flops include its bias add.
 * - Recomputation: `selective` repeats the attention core's forward (scores, softmax, attention over values) in
 *   the backward pass, `full` the whole layer's forward. The embedding, final norm, logits and loss are never
 *   recomputed.
 * - The extra norm outside the layers is the final norm of a pre-LN model, or the embedding norm of a post-LN
 *   encoder (BERT): the same parameter count. BERT's token-type table (2h) and pooler are not modelled. */
/** Whether `op` of TransformerModel::layer_ops is work on the copies a rank's experts receive (expert_*): their GEMMs
 * and activation, and their reordering by local expert (expert_sort, expert_restore); not the router, the sender's
 * permutation or un-permutation of its copies, nor a shared expert (shared_expert_*). */
inline bool is_routed_expert_op(const ComputeOp& op) {
  return op.name.starts_with("expert_") && op.name != "expert_permute" && op.name != "expert_unpermute";
}

class TransformerModel {
 public:
  /** Resolves kv_heads and head_dim left at 0.
   * @throws InputError (source "transformer config", pointer "/KEY") when find_problem() reports one. */
  explicit TransformerModel(TransformerConfig config, TransformerKernels kernels = {});

  /** The config with kv_heads and head_dim resolved. */
  const TransformerConfig& config() const { return config_; }
  /** The kernels the ops are built for. */
  const TransformerKernels& kernels() const { return kernels_; }

  /** Parameters of one layer on one of `tensor` ranks (see TensorSplit): two norms, QKV and output projections, the
   * MLP, biases; sharded GEMM weights, whole norms and row-parallel biases. */
  double layer_parameters(int tensor = 1) const;
  /** Token embedding table on one of `tensor` ranks (vocab_shard·h), plus the whole position table when learned. */
  double embedding_parameters(int tensor = 1) const;
  /** The extra norm, plus the LM head matrix (vocab_shard·h on one of `tensor` ranks) when embeddings are untied. */
  double output_parameters(int tensor = 1) const;
  /** Everything: layers_parameters(0, layers) + embedding_parameters() + output_parameters(). */
  double parameters() const;
  /** The routed experts' weights of one layer on one of `expert` x `expert_tensor` ranks (experts / expert of them,
   * each split over expert_tensor ranks); 0 when dense. */
  double expert_parameters(int expert = 1, int expert_tensor = 1) const;
  /** The parameters a token goes through: all but the routed experts it is not sent to (E - k of E per layer). */
  double active_parameters() const;

  /** A head's value dimension: mla's v_head_dim, else head_dim. */
  std::int64_t value_dim() const { return config_.mla.enabled() ? config_.mla.v_head_dim : config_.head_dim; }
  /** Whether layer `index` (0-based) has the mixture of experts: a MoE model past its first dense layers. */
  bool moe_layer(std::int64_t index) const { return config_.experts.moe() && index >= config_.experts.first_dense; }
  /** Layers with the mixture of experts among `count` layers from `first`. */
  std::int64_t moe_layers(std::int64_t first, std::int64_t count) const;
  /** The model of a MoE model's first dense layers: the same config without experts and with dense_ffn_size (the
   * model itself when dense). Its layer_ops and layer_parameters are those of a dense layer. */
  TransformerModel dense_model() const;
  /** Parameters of `count` layers from `first` on one of `tensor` ranks, each priced as its kind (dense or MoE). */
  double layers_parameters(std::int64_t first, std::int64_t count, int tensor = 1) const;

  /** Rows of the token table (and of an untied LM head) on one of `tensor` ranks: ceil(V / tensor). */
  std::int64_t vocab_shard(int tensor) const;

  /** Forward ops of one layer for `micro_batch` sequences on one rank of a tensor-parallel group, in execution order:
   * attention_norm, qkv_projection, [rotary_embedding], the attention core, output_projection, attention_residual,
   * mlp_norm, [mlp_gate], mlp_up, mlp_activation, mlp_down, mlp_residual; with the split shapes, flops, bytes and
   * weights of `split` (the default, tensor 1 without sequence parallelism: the whole layer).
   *
   * The attention core by kernel: `flash` one attention_core op; `fused_softmax` attention_scores,
   * attention_softmax, [attention_dropout], attention_over_values; `unfused` the same with attention_mask before the
   * softmax. Unfused bias + activation adds mlp_bias (where the model has biases) before mlp_activation; unfused
   * bias + dropout + add splits each residual op into [*_output_bias], [*_output_dropout], *_residual. The kernels
   * change bytes, never flops: the sum of every op's flops is the same for every choice (the attention core's softmax
   * flops ride on the flash op).
   *
   * A mixture of experts replaces the MLP after mlp_norm with: router (GEMM h -> E on the rank's tokens, its sequence
   * slice with sequence parallelism), router_topk, expert_permute (the k copies of each token), the routed experts as
   * an MLP named expert_* over the copies the rank's experts process (tokens x k x split.expert_load rows, weights of
   * experts / split.expert experts, whole: not split by tensor parallelism), expert_unpermute (each token's k results
   * weighted and summed), [shared_expert_*] (a dense MLP of shared x shared_ffn_size on the rank's tokens), then
   * mlp_residual as a dense layer.
   *
   * Multi-head latent attention (config.mla) replaces qkv_projection with: [q_down (h -> q_lora_rank), q_norm],
   * q_up (q_lora_rank, or h without a query latent, -> the rank's heads x head_dim), kv_down (h -> kv_lora_rank +
   * rope_dim), kv_norm, kv_up (kv_lora_rank -> the rank's heads x (head_dim - rope_dim + v_head_dim)); the down
   * projections whole on every tensor rank (Megatron-Core's MLA duplicates them), the up projections column-parallel;
   * rotary on the queries' and the shared key's rotary parts; the attention core with values of v_head_dim; the
   * output projection from heads x v_head_dim.
   *
   * Context parallelism (split.context C): every op on the rank's b·s/C tokens; the attention core's queries are those
   * tokens against all s keys (b·a·s²/C scores, GEMM shapes s/C x s), 1/C of the whole layer's attention work. */
  std::vector<ComputeOp> layer_ops(std::int64_t micro_batch, const TensorSplit& split = {}) const;
  /** Forward ops outside the layers: embedding, final_norm, logits (M = b·s, N = V, K = h), loss. On one rank of a
   * tensor-parallel group (`split`): the vocabulary-parallel embedding (a masked lookup in the rank's shard: rows read
   * and gradient scatter-adds / tensor, whole output) and LM head (logits N = vocab_shard, the cross-entropy over the
   * rank's logits), the final norm whole unless sequence parallel. */
  std::vector<ComputeOp> outer_ops(std::int64_t micro_batch, const TensorSplit& split = {}) const;

  /** Flops of one layer for `micro_batch` sequences. */
  TrainingFlops layer_flops(std::int64_t micro_batch, Recomputation recomputation) const;
  /** Flops of the embedding, final norm, logits and loss (never recomputed). */
  TrainingFlops outer_flops(std::int64_t micro_batch) const;
  /** One training iteration over `batch` sequences: each layer's layer_flops (of dense_model() for a MoE model's
   * first dense layers) + outer_flops(). */
  TrainingFlops training_flops(std::int64_t batch, Recomputation recomputation) const;

  /** Bytes one layer keeps from its forward for its backward pass, with activations at `bytes_per_element` and
   * dropout masks at 1 byte. For a GPT layer (plain 4h MLP, MHA, a·d = h, dropout, 2 bytes) this is Korthikanti et
   * al.'s s·b·h·(34 + 5·a·s/h) without recomputation, 34·s·b·h with selective and 2·s·b·h with full recomputation;
   * the same accounting extends it to GQA, gated MLPs and models without dropout. With the `flash` kernel no s x s
   * tensor is kept under any recomputation, only the softmax statistics (4·b·a·s bytes). */
  double layer_activation_bytes(std::int64_t micro_batch, Recomputation recomputation,
                                double bytes_per_element = 2.0) const;
  /** Of layer_activation_bytes, what every tensor-parallel rank keeps whole unless sequence parallelism splits it:
   * the two norms' inputs, their outputs (the first GEMMs' inputs) unless selective recomputation reruns
   * `layernorm`, and the dropout masks after each block; under full recomputation the layer's input. */
  double layer_sequence_bytes(std::int64_t micro_batch, Recomputation recomputation,
                              double bytes_per_element = 2.0) const;
  /** layer_activation_bytes summed over `count` layers from `first`, each of its kind (dense or MoE). */
  double layers_activation_bytes(std::int64_t first, std::int64_t count, std::int64_t micro_batch,
                                 Recomputation recomputation, double bytes_per_element = 2.0) const;
  /** The most layer_activation_bytes of one layer among `count` layers from `first` (dense or MoE). */
  double largest_layer_activation_bytes(std::int64_t first, std::int64_t count, std::int64_t micro_batch,
                                        Recomputation recomputation, double bytes_per_element = 2.0) const;
  /** Activation bytes outside the layers: the embedding dropout mask, the final norm's and the logits' inputs, and
   * the fp32 logits kept for the cross-entropy (4·s·b·V). */
  double outer_activation_bytes(std::int64_t micro_batch, double bytes_per_element = 2.0) const;

 private:
  double tokens(std::int64_t micro_batch) const;
  /** Bytes per element a linear GEMM keeps of its input for the backward: 1 with FP8 GEMMs (the fp8 copy), else the
   * data type's. */
  double gemm_input_bytes(double bytes_per_element) const {
    return kernels_.fp8 == Fp8Recipe::None ? bytes_per_element : 1.0;
  }
  /** Sets each op's LayerModule from its name, and selectively_recomputed from the kernels' recompute modules. */
  void tag_modules(std::vector<ComputeOp>& ops) const;
  /** torchtitan's per-op policy (RecomputeModules::torchtitan_op): which ops rerun, and what share of each. */
  void tag_torchtitan_op(std::vector<ComputeOp>& ops) const;
  /** Whether `layernorm` recomputation reruns the attention norm and the MLP block's norm of this model's layers
   * (a norm inside a LayerNormLinear module is not rerun). */
  bool attention_norm_rerun(Recomputation recomputation) const;
  bool mlp_norm_rerun(Recomputation recomputation) const;

  TransformerConfig config_;
  TransformerKernels kernels_;
};

} // namespace partsim
