// Engine: the only code that talks to SimGrid. Builds the platform, runs one actor per rank, records the timeline.
#pragma once

#include "partsim/input/scenario.hpp"
#include "partsim/plan/plan.hpp"
#include "partsim/report/run_result.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace partsim {

struct EngineOptions {
  /** Called at most every `progress_interval_s` of wall time with events done and events planned. */
  std::function<void(std::uint64_t done, std::uint64_t planned)> progress;
  double progress_interval_s = 0.5;
  /** Keep every communication and wait interval (for trace.json and tests); off, only compute intervals and the
   * per-kind totals are kept, so memory stays O(ranks) rather than O(messages). */
  bool record_all_intervals = true;
  /** Run the scenario's injected failure (/reliability/inject) in this engine: set in the child process that
   * simulate() starts for it; off, simulate() runs the clean iteration and takes the child's outcome. */
  bool injecting = false;
};

/** Simulates a plan on the scenario's cluster. One call per process: SimGrid 3.32 allows one engine per process. */
RunResult simulate(const Scenario& scenario, const Plan& plan, const EngineOptions& options = {});

/** Version string of the SimGrid library in use. */
std::string simgrid_version();

} // namespace partsim
