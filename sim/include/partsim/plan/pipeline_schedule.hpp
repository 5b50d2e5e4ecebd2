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
 * - interleaved (Megatron-Core's get_schedule_table): `chunks` chunks per stage, the micro-batches taken in groups of
 *   `group` (0: `stages`), each group through every chunk in turn (for a group starting at g: chunk 0 of micro-batches
 *   g .. g + group - 1, then chunk 1 of the same, ...; the last group takes every micro-batch left), backwards in the
 *   same order with the chunks reversed; min((stages - stage - 1) x 2 + (chunks - 1) x group, micro_batches x chunks)
 *   warm-up forwards. Needs stages <= group <= micro_batches and micro_batches mod group either 0 or at least
 *   stages (Megatron-Core's checks; the scenario parser says which). */
std::vector<PipelineOp> pipeline_schedule(PipelineSchedule schedule, int stages, int stage, int micro_batches,
                                          int chunks = 1, int group = 0);

/** Most micro-batch chunks whose forward is done and backward not yet, over the schedule: what a stage keeps in
 * activation memory (GPipe: m; 1F1B: stages - stage; interleaved: its warm-up + 1, at most every chunk pass). */
int peak_in_flight(const std::vector<PipelineOp>& ops);

} // namespace partsim
