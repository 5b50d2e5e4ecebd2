// The serving engine: a serving workload's stages as SimGrid actors (docs/serving.md).
#pragma once

#include "partsim/input/scenario.hpp"
#include "partsim/serving/serving_result.hpp"

namespace partsim {

/** Simulates the scenario's serving workload on its cluster: every replica of every stage is an actor that takes
 * batches from its stage's shared queue and sleeps their service time; items travel between pools as SimGrid
 * messages over the cluster's network. One call per process (SimGrid 3.32 allows one engine per process). */
ServingRunResult simulate_serving(const Scenario& scenario);

} // namespace partsim
