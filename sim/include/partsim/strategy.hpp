// Strategies turn a validated scenario into a Plan (pure, no SimGrid).
#pragma once

#include "partsim/plan.hpp"
#include "partsim/scenario.hpp"

#include <cstdint>
#include <vector>

namespace partsim {

/** Splits `total` items by `shares` into integers that sum to `total` (largest-remainder method, ties to the
 * lower index), so that every partition is within one item of its exact share. */
std::vector<std::uint64_t> apportion(std::uint64_t total, const std::vector<double>& shares);

/** Builds the plan of a scenario. @throws InputError when the run would exceed /run/max_events. */
Plan build_plan(const Scenario& scenario);

} // namespace partsim
