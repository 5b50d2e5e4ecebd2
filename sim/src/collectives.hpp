// Collectives on SimGrid (engine-internal): each algorithm at each fidelity level.
#pragma once

#include "run_context.hpp"

namespace partsim::engine {

/** Runs `step` for `rank` in the calling actor until the rank's part of the collective is done, recording wait and
 * communication in `timeline`. Collectives of different groups may run at once on one rank (from different actors);
 * those of one group run in the same order on every member. */
void run_collective(RunContext& ctx, int rank, RankTimeline& timeline, const CollectiveStep& step);

} // namespace partsim::engine
