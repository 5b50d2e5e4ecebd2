// Coordinated iterations (engine-internal): a coordinator runs the serial part, starts every rank with its
// partitions' input, and collects results; ranks exchange partition boundaries between computing and reporting.
#pragma once

#include "platform.hpp"
#include "run_context.hpp"

namespace partsim::engine {

/** Creates the coordinator and one actor per rank for `ctx.plan.coordinated()`. Call before Engine::run(). */
void start_coordinated(RunContext& ctx, const Platform& platform);

} // namespace partsim::engine
