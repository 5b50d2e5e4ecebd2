// Run-time balancing (engine-internal): a dispatcher on the coordinator host and worker actors on the GPUs.
#pragma once

#include "platform.hpp"
#include "run_context.hpp"

namespace partsim::engine {

/** Creates the dispatcher and one worker per rank for `ctx.plan.dynamic()`. Call before Engine::run(). */
void start_balancing(RunContext& ctx, const Platform& platform);

} // namespace partsim::engine
