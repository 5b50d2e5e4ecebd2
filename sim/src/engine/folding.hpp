// Folding identical replicas (engine-internal): simulate one representative of each class of interchangeable
// replicas and give its figures to the others. See docs/engine.md, "Folding replicas".
#pragma once

#include "run_context.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace partsim::engine {

/** Which ranks a run simulates. A replica is a connected component of the ranks' message-level communication
 * (pipeline transfers and collectives at steps or flows fidelity); replicas meet only in analytic collectives, which
 * touch no link. Two replicas are interchangeable when, rank by rank in rank order, their GPUs run at the same speed
 * (with the same straggler factors in every iteration), their programs are the same step for step (the same collectives
 * over groups of the same closed form, transfers to corresponding peers over routes of the same links' figures, shared
 * alike), every analytic group's members have as representatives exactly the simulated members of the group standing
 * for it, and no two replicas share a link or a GPU. Then every replica of a class starts, waits and finishes at the
 * same simulated times as the class's first one, which is the only one simulated: the result is the same as simulating
 * all of them, not an approximation. */
struct Folding {
  bool active = false;
  std::string note;                ///< what was folded, or why nothing was
  std::vector<int> representative; ///< per rank: the simulated rank whose timeline it takes (itself when simulated)
  std::vector<char> simulated;     ///< per rank
  std::vector<int> group_weight;   ///< per group: instances of the unfolded run one simulated instance stands for
  std::size_t simulated_ranks = 0;
};

/** Decides the folding of ctx.plan; call after prepare_collectives(). Without `enabled`, or when the plan does not
 * qualify, every rank is simulated and `note` says why. */
Folding fold_replicas(const RunContext& ctx, bool enabled);

/** Copies each simulated rank's timelines (program and communication stream) to the ranks it stands for, with their
 * own bytes in analytic collectives. */
void unfold_results(const RunContext& ctx, const Folding& folding, RunResult& result);

} // namespace partsim::engine
