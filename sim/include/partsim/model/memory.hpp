// Memory one GPU needs, by kind (parameters, gradients, optimizer states, activations, workspace), against its
// capacity; the optimizer's state per parameter; the memory of one plain data-parallel replica. Pure arithmetic.
#pragma once

#include "partsim/input/hardware.hpp"
#include "partsim/input/scenario.hpp"

#include <string>

namespace partsim {

/** Memory one GPU needs, by kind, against its capacity. */
struct MemoryBreakdown {
  double parameters = 0.0;       ///< bytes: weights in the training data type
  double gradients = 0.0;        ///< bytes: one gradient per weight, in the gradient data type
  double optimizer_states = 0.0; ///< bytes: fp32 master weights (mixed precision) and moments
  /// bytes kept from the forward for the backward pass, at the peak in flight, with the working sets that exist only
  /// at that peak: one layer rebuilt at a time under full recomputation, and on the rank holding the loss the
  /// cross-entropy's transient copies of the logits (cross_entropy_transient_bytes)
  double activations = 0.0;
  double workspace = 0.0; ///< bytes: context, library workspaces, allocator slack (the scenario's figure)
  double capacity = 0.0;  ///< bytes: the GPU's memory

  /** What stays allocated between iterations (ZeRO's "model states"). */
  double model_states() const { return parameters + gradients + optimizer_states; }
  double total() const { return model_states() + activations + workspace; }
  bool fits() const { return total() <= capacity; }
};

/** Bytes of optimizer state per parameter: Adam keeps two fp32 moments, SGD with momentum one; with a training
 * data type narrower than fp32 every optimizer also keeps an fp32 master copy of the weights (mixed precision). */
double optimizer_bytes_per_parameter(Optimizer optimizer, const std::string& data_type);

/** Bytes the loss holds beside what its backward keeps (the fp32 logits, 4 bytes each, counted with the
 * activations), at its forward or its backward, whichever is larger, for `logits` logits on the rank in a training
 * data type of `bytes_per_element`:
 * - `megatron_fp32` (megatron/core/tensor_parallel/cross_entropy.py, `calculate_logits_max`): `.float()` copies the
 *   logits while the caller (the model's forward) still holds them, and the max, exp and divide run in place on the
 *   copy, which is kept; the backward turns that copy into the gradient in place and autograd casts it back to the
 *   training type before freeing it: e bytes per logit either way, none in fp32 (`.float()` returns the tensor).
 * - `fp32_log_softmax` (PyTorch's `cross_entropy(pred.float(), labels)`, torchtitan): the forward holds the
 *   training-type logits and their fp32 copy while log_softmax writes its (kept) output; the backward's nll_loss
 *   gradient (a dense fp32 tensor of the logits' shape) and log_softmax's fp32 input gradient exist together with
 *   the kept output: max(e + 4, 8) = 8 bytes per logit for fp32 and narrower types.
 * - `fused`: none; fused cross-entropy kernels work on the logits in place or in blocks. */
double cross_entropy_transient_bytes(CrossEntropyKernel kernel, double logits, double bytes_per_element);

/** Memory of one plain data-parallel replica (every GPU holds the whole model and optimizer state). */
MemoryBreakdown data_parallel_memory(const ModelTraining& training, const GpuProfile& gpu);

} // namespace partsim
