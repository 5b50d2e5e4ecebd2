// Running one step of a rank's program (engine-internal).
#pragma once

#include "run_context.hpp"

#include <utility>

namespace partsim::engine {

/** Runs `step` for `rank` in the calling actor, recording its intervals in `timeline`. */
void run_step(RunContext& ctx, int rank, RankTimeline& timeline, const Step& step);

/** Records [posted, end of both transfers] as communication while either transfer (begin, end) moves data, and as
 * wait otherwise. */
void record_transfers(RankTimeline& timeline, double posted, std::pair<double, double> a, std::pair<double, double> b);

} // namespace partsim::engine
