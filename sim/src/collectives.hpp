// Collectives on SimGrid (engine-internal): each algorithm at each fidelity level.
#pragma once

#include "run_context.hpp"

namespace partsim::engine {

/** Builds the per-group state of every collective in the plan: mailboxes for the step-level algorithms it uses,
 * rendezvous for flows and analytic, the path figures (latency, bandwidth) between members. Call once after the
 * platform is built and ctx.positions is filled, before actors run. Throws InputError for a hierarchical all-reduce
 * over a group with different member counts per node. */
void prepare_collectives(RunContext& ctx);

/** Runs `step` for `rank` in the calling actor until the rank's part of the collective is done, recording wait and
 * communication in `timeline`. Collectives of different groups may run at once on one rank (from different actors);
 * those of one group run in the same order on every member. */
void run_collective(RunContext& ctx, int rank, RankTimeline& timeline, const CollectiveStep& step);

} // namespace partsim::engine
