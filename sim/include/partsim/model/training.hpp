// Model training on a GPU: per-unit forward/backward times from the cost model, gradient buckets, the optimizer step
// (the memory one data-parallel replica needs is in memory.hpp). Pure arithmetic, no SimGrid.
#pragma once

#include "partsim/input/hardware.hpp"
#include "partsim/input/scenario.hpp"
#include "partsim/model/compute_op.hpp"
#include "partsim/model/memory.hpp"
#include "partsim/model/transformer.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace partsim {

/** Bytes per element of a data type training can run in (find_data_type's table; scenarios refuse the others). */
double bytes_per_element(const std::string& data_type);

/** A piece of the model whose gradients are ready together: a transformer layer, the embedding, the output head, or
 * one layer of a CNN. Times are for one micro-batch on one GPU at nominal speed. */
struct TrainingUnit {
  std::string name;
  double forward_time = 0.0;  ///< s
  double backward_time = 0.0; ///< s, including recomputed forward work
  /** s, of backward_time: the forward of the ops `recomputation` runs again. */
  double recompute_time = 0.0;
  double parameters = 0.0;
};

/** Forward and backward time of `ops` (one micro-batch) on one GPU at nominal speed, each op's roofline time from the
 * cost model; the backward includes the forward of the ops `recomputation` runs again. Parameters are left at 0. */
TrainingUnit price_ops(std::string name, const std::vector<ComputeOp>& ops, const GpuProfile& gpu,
                       const std::string& data_type, Recomputation recomputation);

/** `ops` (a layer's) with their fused attention kernel confined to a sliding window of `window` keys per query
 * (AttentionShape::window; the model's AttentionWindow says which layers). */
std::vector<ComputeOp> with_attention_window(std::vector<ComputeOp> ops, std::int64_t window);

/** The ops outside the layers (embedding, final norm, LM head and loss) of a transformer as a training step runs them:
 * TransformerModel::outer_ops, with the embedding's backward as PyTorch runs it. Its gradient is dense
 * (nn.Embedding and Megatron-LM's VocabParallelEmbedding call F.embedding, whose CUDA backward allocates the whole
 * table's gradient with at::zeros and scatter-adds the token rows into it: aten/src/ATen/native/cuda/Embedding.cu,
 * embedding_dense_backward_cuda), and that gradient is then accumulated into the one the optimizer reads (Megatron-LM's
 * gradient hook: main_grad.add_(param.grad); PyTorch's accumulation over micro-batches alike). Per element of the
 * rank's tables (vocab_shard·h, and the position table when learned): the zero fill (e), the gradient read (e) and
 * the accumulated gradient read and written (2 e_g), e the data type's size and e_g the gradient type's. */
std::vector<ComputeOp> training_outer_ops(const ModelTraining& training, const TransformerModel& model,
                                          std::int64_t micro_batch, const TensorSplit& split = {});

/** One op as the cost model prices it alone (op_time) for one micro-batch on one rank. */
struct PricedOp {
  std::string name;
  double forward_time = 0.0;  ///< s
  double backward_time = 0.0; ///< s, without recomputation
  double forward_flops = 0.0;
};

/** The ops of one transformer layer (a mixture of experts' expert layer, its routing uniform) and the ops outside the
 * layers, for one micro-batch on one rank of `split`, each priced alone: what the planner sums before recomputation
 * and overlaps (tensor-parallel overlap splits some GEMMs into chunks priced at their own shapes). Empty for a CNN. */
struct LayerOpsBreakdown {
  std::vector<PricedOp> layer;
  std::vector<PricedOp> outer;
};
LayerOpsBreakdown layer_ops_breakdown(const ModelTraining& training, const TensorSplit& split, const GpuProfile& gpu);

/** Bytes one optimizer step moves per parameter, as the fused multi-tensor kernels of the training stacks run it
 * (Megatron-LM with apex FusedAdam and amp_C multi-tensor kernels; PyTorch's fused/foreach optimizers), weights at
 * `data_type`, gradients at `gradient_type` (empty: `data_type`):
 * - with `clipping`, the global norm reads every gradient once (multi_tensor_l2norm);
 * - the update reads the gradient and reads and writes the optimizer state (the fp32 master copy below 4 bytes, and
 *   the moments: optimizer_bytes_per_parameter);
 * - the working weights: with a master copy, read it and write the weights (Megatron's
 *   _copy_main_params_to_model_params); without, the update reads and writes them in place;
 * - the gradients are zeroed for the next iteration (one write).
 * - with `loss_scaling` (fp16's dynamic loss scaling), first the unscale-and-check pass reads and writes every
 *   gradient once (Megatron-LM's _unscale_main_grads_and_check_for_nan: torch._amp_foreach_non_finite_check_and_
 *   unscale_ over the main gradients; PyTorch's GradScaler.unscale_ runs the same kernel).
 * Adam in bf16 with clipping: 2 + (2 + 2·12) + (4 + 2) + 2 = 36 bytes; fp16 with loss scaling 40. The clipping norm's
 * all-reduce and the loss scaler's found-inf all-reduce (one fp32 value each over the model-parallel group) are not
 * simulated: a few microseconds against a step of milliseconds. */
double optimizer_step_bytes_per_parameter(Optimizer optimizer, const std::string& data_type, bool clipping,
                                          const std::string& gradient_type = {}, bool loss_scaling = false);

/** "none", "full", "selective", or with modules other than the attention core "selective (layernorm, moe_act)". */
std::string describe_recomputation(const ModelTraining& training);
/** The strategy line's words on data loading: the figure per micro-batch, or that none is simulated and why. */
std::string describe_data_loading(const ModelTraining& training);

/** "stack megatron-core-2024: flash attention, ..." for the plan's summary; with the `flash_triton` attention also
 * which of `gpu`'s measurements prices it (its Triton table, or for want of one its fused-attention table). */
std::string describe_stack(const ModelTraining& training, const GpuProfile& gpu);

/** One micro-batch of a model on a GPU profile. */
struct TrainingCost {
  std::vector<TrainingUnit> units; ///< in forward order
  double optimizer_time = 0.0;     ///< s: one optimizer step over all parameters (memory bound)
  double parameters = 0.0;
  double model_flops_per_sample = 0.0;    ///< forward + backward, without recomputation (what MFU counts)
  double hardware_flops_per_sample = 0.0; ///< including recomputed forward work
  double tokens_per_sample = 1.0;         ///< the sequence length for a transformer, 1 image for a CNN

  double forward_time() const;
  double backward_time() const;
};

/** Prices every op of one micro-batch with the cost model (op_time) and groups them into units. `recomputed`, when
 * not empty (one entry per layer, with full recomputation): which layers rerun their forward (Megatron-Core's block
 * method, see recompute_num_layers); the others are priced, and their hardware flops counted, without recomputation. */
TrainingCost training_cost(const ModelTraining& training, const GpuProfile& gpu,
                           const std::vector<bool>& recomputed = {});

/** Gradients reduced together: units [first, last] in forward order, filled from the last unit backwards (the order
 * the backward pass produces them) until a bucket holds at least `bucket_bytes`, as PyTorch DDP does. */
struct GradientBucket {
  std::size_t first = 0;
  std::size_t last = 0;
  std::uint64_t bytes = 0;
};

/** Buckets in the order their all-reduces start (the last units first). */
std::vector<GradientBucket> gradient_buckets(const TrainingCost& cost, double gradient_bytes_per_parameter,
                                             double bucket_bytes);

} // namespace partsim
