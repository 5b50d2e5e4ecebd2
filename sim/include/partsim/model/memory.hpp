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
  double activations = 0.0;      ///< bytes kept from the forward for the backward pass, at the peak in flight
  double workspace = 0.0;        ///< bytes: context, library workspaces, allocator slack (the scenario's figure)
  double capacity = 0.0;         ///< bytes: the GPU's memory

  /** What stays allocated between iterations (ZeRO's "model states"). */
  double model_states() const { return parameters + gradients + optimizer_states; }
  double total() const { return model_states() + activations + workspace; }
  bool fits() const { return total() <= capacity; }
};

/** Bytes of optimizer state per parameter: Adam keeps two fp32 moments, SGD with momentum one; with a training
 * data type narrower than fp32 every optimizer also keeps an fp32 master copy of the weights (mixed precision). */
double optimizer_bytes_per_parameter(Optimizer optimizer, const std::string& data_type);

/** Memory of one plain data-parallel replica (every GPU holds the whole model and optimizer state). */
MemoryBreakdown data_parallel_memory(const ModelTraining& training, const GpuProfile& gpu);

} // namespace partsim
