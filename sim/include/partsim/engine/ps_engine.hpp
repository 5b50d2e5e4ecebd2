// The parameter-server engine: workers and server shards as SimGrid actors (docs/stale-gradients.md).
#pragma once

#include "partsim/ps/ps_plan.hpp"
#include "partsim/ps/ps_result.hpp"

namespace partsim {

/** Simulates a parameter-server run: each worker is an actor on its GPU host that waits at its policy's gate, pulls
 * its shards' parameters, computes (sleeps its step time, times a jitter factor) and pushes its gradient shards; each
 * shard is an actor on its host that answers pulls and applies gradients one at a time. Pulls and pushes are SimGrid
 * communications over the cluster's network. One call per process (SimGrid 3.32 allows one engine per process).
 * @throws InputError when the run would pass /run/max_events. */
PsRunResult simulate_parameter_server(const Scenario& scenario, const PsPlan& plan);

} // namespace partsim
