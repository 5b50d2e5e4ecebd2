// Per-GPU memory of model-parallel training: a pipeline stage's share of the model under tensor, pipeline and ZeRO
// sharding, and the activations its schedule keeps in flight. Pure, no SimGrid.
#pragma once

#include "partsim/input/hardware.hpp"
#include "partsim/input/scenario.hpp"
#include "partsim/model/memory.hpp"

namespace partsim {

/** Memory one GPU of pipeline stage `stage` needs: the parameters, gradients and optimizer states one tensor rank
 * holds of its layers (and of the vocabulary-parallel embedding or head, with tied embeddings and more than one stage
 * a copy of the token table's shard on the last stage; see TensorSplit), sharded over the data degree as ZeRO asks
 * (1: optimizer states, 2: + gradients, 3: + parameters), and the activations of its in-flight micro-batches
 * (peak_in_flight of the schedule), split by the tensor degree except the layer norms' and the GEMM inputs' copies (and
 * dropout masks) unless sequence parallelism splits those too (Korthikanti et al. 2022). */
MemoryBreakdown model_parallel_memory(const ModelTraining& training, const ModelParallel& mp, const GpuProfile& gpu,
                                      int stage);

/** The routed experts' parameters one GPU of pipeline stage `stage` holds before ZeRO sharding (its MoE layers'
 * experts / expert, each split over expert_tensor ranks): the part of model_parallel_memory's parameters and
 * optimizer states that ZeRO shards over the expert-data group; 0 for a dense model. */
double stage_expert_parameters(const ModelTraining& training, const ModelParallel& mp, int stage);

/** Which layers rerun their forward under Megatron-Core's block method (ModelTraining::recompute_num_layers): the
 * first N layers of each model chunk of each pipeline stage, one entry per layer of the model; empty without it (then
 * every layer is under the training's recomputation). */
std::vector<bool> block_recomputed_layers(const ModelTraining& training, const ModelParallel& mp);

/** The stage needing the most memory and its breakdown. */
MemoryBreakdown model_parallel_peak_memory(const ModelTraining& training, const ModelParallel& mp,
                                           const GpuProfile& gpu, int* stage = nullptr);

} // namespace partsim
