// Pipeline schedules: the passes (forward, backward) each stage runs in one iteration under GPipe, 1F1B and
// interleaved 1F1B, and the activations a stage keeps in flight. Pure, no SimGrid.
#pragma once

#include "partsim/input/scenario.hpp"

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

} // namespace partsim
