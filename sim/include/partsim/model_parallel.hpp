// Model parallelism: pipeline schedules, rank placement of data x tensor x pipeline splits, per-GPU memory under
// tensor/pipeline/ZeRO sharding, and the planner that turns them into rank programs. Pure, no SimGrid.
#pragma once

#include "partsim/plan.hpp"
#include "partsim/scenario.hpp"
#include "partsim/training.hpp"

#include <cstdint>
#include <vector>

namespace partsim {

enum class Pass { Forward, Backward };

/** One pass of a pipeline schedule on one stage: the forward or backward of `micro_batch` through the stage's
 * `chunk`-th group of layers (virtual stage chunk x stages + stage; chunk 0 without interleaving). */
struct PipelineOp {
  Pass pass = Pass::Forward;
  int micro_batch = 0;
  int chunk = 0;

  bool operator==(const PipelineOp&) const = default;
};

/** The passes `stage` (0-based, of `stages`) runs in one iteration of `micro_batches`, in order:
 * - GPipe: every forward (micro-batch order), then every backward (same order);
 * - 1F1B: min(stages - stage - 1, m) warm-up forwards, then alternately one forward and one backward, then the
 *   remaining backwards;
 * - interleaved (Megatron-LM): `chunks` chunks per stage, forwards taken in groups of `stages` micro-batches per chunk
 *   (k-th forward: chunk (k / stages) mod chunks, micro-batch (k / (stages x chunks)) x stages + k mod stages),
 *   backwards in the same order with chunks reversed; (stages - stage - 1) x 2 + (chunks - 1) x stages warm-up
 *   forwards. Needs micro_batches divisible by stages. */
std::vector<PipelineOp> pipeline_schedule(PipelineSchedule schedule, int stages, int stage, int micro_batches,
                                          int chunks = 1);

/** Most micro-batch chunks whose forward is done and backward not yet, over the schedule: what a stage keeps in
 * activation memory (GPipe: m; 1F1B: stages - stage; interleaved: its warm-up + 1). */
int peak_in_flight(const std::vector<PipelineOp>& ops);

/** A rank's position on each axis. */
struct ParallelCoordinates {
  int data = 0;
  int tensor = 0;
  int pipeline = 0;
};

/** Rank (= GPU) of a position under the strategy's placement (fastest axis first). */
int rank_of(const ModelParallel& mp, const ParallelCoordinates& at);
ParallelCoordinates coordinates_of(const ModelParallel& mp, int rank);

/** Layers of each virtual stage (pipeline x virtual_stages of them, virtual stage = chunk x pipeline + stage): the
 * explicit split, or an even one. */
std::vector<int> virtual_stage_layers(const ModelParallel& mp, std::int64_t layers);

/** Memory one GPU of pipeline stage `stage` needs: the parameters, gradients and optimizer states one tensor rank
 * holds of its layers (and of the vocabulary-parallel embedding or head, with tied embeddings and more than one stage
 * a copy of the token table's shard on the last stage; see TensorSplit), sharded over the data degree as ZeRO asks
 * (1: optimizer states, 2: + gradients, 3: + parameters), and the activations of its in-flight micro-batches
 * (peak_in_flight of the schedule), split by the tensor degree except the layer norms' and the GEMM inputs' copies (and
 * dropout masks) unless sequence parallelism splits those too (Korthikanti et al. 2022). */
MemoryBreakdown model_parallel_memory(const ModelTraining& training, const ModelParallel& mp, const GpuProfile& gpu,
                                      int stage);

/** The stage needing the most memory and its breakdown. */
MemoryBreakdown model_parallel_peak_memory(const ModelTraining& training, const ModelParallel& mp,
                                           const GpuProfile& gpu, int* stage = nullptr);

/** The plan of a model-parallel training run (see ModelParallel): per micro-batch, each GEMM priced at its tensor-split
 * shape, the layers' tensor all-reduces, the vocabulary-parallel embedding's all-reduce of b·s·h (forward), the
 * head's (backward) and the cross-entropy's three all-reduces of b·s fp32 values (forward); pipeline transfers; the
 * data-parallel gradient synchronisation per stage; with tied embeddings and more than one stage, an all-reduce of the
 * token table shard's gradient between the first and last stage once per iteration (kind Data). */
Plan plan_model_parallel(const Scenario& scenario, const ModelTraining& training, const ModelParallel& mp);

} // namespace partsim
