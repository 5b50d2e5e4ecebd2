// The model-parallel planner: a data x tensor x pipeline split of a training run as rank programs. Its parts are
// the pipeline schedules, the rank placement and the sharded memory (each in its header). Pure, no SimGrid.
#pragma once

#include "partsim/input/scenario.hpp"
#include "partsim/plan/pipeline_schedule.hpp"
#include "partsim/plan/placement.hpp"
#include "partsim/plan/plan.hpp"
#include "partsim/plan/sharded_memory.hpp"

namespace partsim {

/** The plan of a model-parallel training run (see ModelParallel): per micro-batch, each GEMM priced at its tensor-split
 * shape, the layers' tensor all-reduces, the vocabulary-parallel embedding's all-reduce of b·s·h (forward), the
 * head's (backward) and the cross-entropy's three all-reduces of b·s fp32 values (forward); pipeline transfers; the
 * data-parallel gradient synchronisation per stage; with tied embeddings and more than one stage, an all-reduce of the
 * token table shard's gradient between the first and last stage once per iteration (kind Data). */
/** `share_programs`: ranks of a class run one program relabeled (RankProgram::like); false builds each rank's own
 * (the same steps: tests compare the two). */
Plan plan_model_parallel(const Scenario& scenario, const ModelTraining& training, const ModelParallel& mp,
                         bool share_programs = true);

/** How `mp` splits a transformer layer's ops on a rank (TensorSplit), uniform routing: tensor, sequence, expert,
 * expert tensor and context degrees, and the reordering of the received copies by local expert that Megatron-Core's
 * all-to-all dispatcher does (`direct` dispatch over more than one expert rank). */
TensorSplit layer_split(const ModelParallel& mp);

} // namespace partsim
