// Memory of one GPU: optimizer states per parameter, and one plain data-parallel replica.
#include "partsim/model/memory.hpp"

#include "partsim/model/cnn.hpp"
#include "partsim/model/training.hpp"
#include "partsim/model/transformer.hpp"

#include <algorithm>

namespace partsim {

double optimizer_bytes_per_parameter(Optimizer optimizer, const std::string& data_type) {
  const double master = bytes_per_element(data_type) < 4.0 ? 4.0 : 0.0;
  switch (optimizer) {
  case Optimizer::Adam:
    return master + 8.0;
  case Optimizer::SgdMomentum:
    return master + 4.0;
  case Optimizer::Sgd:
    return master;
  }
  return master;
}

double cross_entropy_transient_bytes(CrossEntropyKernel kernel, double logits, double bytes_per_element) {
  switch (kernel) {
  case CrossEntropyKernel::MegatronFp32:
    return bytes_per_element < 4.0 ? bytes_per_element * logits : 0.0;
  case CrossEntropyKernel::Fp32LogSoftmax: {
    const double forward = bytes_per_element + (bytes_per_element < 4.0 ? 4.0 : 0.0);
    return std::max(forward, 8.0) * logits;
  }
  case CrossEntropyKernel::Fused:
    break;
  }
  return 0.0;
}

MemoryBreakdown data_parallel_memory(const ModelTraining& training, const GpuProfile& gpu) {
  MemoryBreakdown m;
  const double element = bytes_per_element(training.data_type);
  const std::int64_t b = training.micro_batch;
  double parameters = 0.0;
  double fp8_copies = 0.0; // bytes of the layers' fp8 weight copies (FP8 GEMMs; see sharded_memory.cpp)
  if (training.model.is_transformer()) {
    const TransformerModel model = training.transformer();
    parameters = model.parameters();
    if (training.kernels.fp8 != Fp8Recipe::None) fp8_copies = 2.0 * model.layers_parameters(0, model.config().layers);
    m.activations = model.layers_activation_bytes(0, model.config().layers, b, training.recomputation, element) +
                    model.outer_activation_bytes(b, element);
    // Under full recomputation (and torchtitan's per-op policy) one layer at a time rebuilds all its activations
    // during the backward pass: the largest layer's.
    if (training.recomputation == Recomputation::Full || training.kernels.recompute_modules.torchtitan_op)
      m.activations += model.largest_layer_activation_bytes(0, model.config().layers, b, Recomputation::None, element);
    // The loss's transient copies of the logits (the whole vocabulary on every replica).
    const double logits = static_cast<double>(b) * static_cast<double>(model.config().sequence_length) *
                          static_cast<double>(model.config().vocab);
    m.activations += cross_entropy_transient_bytes(training.kernels.cross_entropy, logits, element);
  } else {
    const CnnModel model = training.model.cnn();
    parameters = model.parameters();
    m.activations = model.activation_bytes(b, element);
  }
  m.parameters = parameters * element + fp8_copies;
  m.gradients = parameters * bytes_per_element(training.gradient_type());
  m.optimizer_states = parameters * optimizer_bytes_per_parameter(training.optimizer, training.data_type);
  m.workspace = training.workspace;
  m.capacity = gpu.memory_capacity.value;
  return m;
}

} // namespace partsim
