// Engine: the only code that talks to SimGrid. Builds the platform, runs one actor per rank, records the timeline.
#pragma once

#include "partsim/plan.hpp"
#include "partsim/scenario.hpp"
#include "partsim/timeline.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace partsim {

struct EngineOptions {
  /** Called at most every `progress_interval_s` of wall time with events done and events planned. */
  std::function<void(std::uint64_t done, std::uint64_t planned)> progress;
  double progress_interval_s = 0.5;
};

/** How the network was configured, for the report. */
struct NetworkConfig {
  std::string model; ///< SimGrid network model
  bool cross_traffic = false;
  std::string note; ///< why
};

struct RunResult {
  std::vector<RankTimeline> ranks; ///< indexed by rank
  double makespan = 0.0;           ///< last rank's finish time, s
  double baseline_time = 0.0;      ///< the same work on one nominal GPU, simulated in the same engine, s
  std::uint64_t messages = 0;      ///< point-to-point messages simulated
  std::uint64_t executions = 0;    ///< executions simulated (baseline excluded)
  NetworkConfig network;
};

/** Simulates a plan on the scenario's cluster. One call per process: SimGrid 3.32 allows one engine per process. */
RunResult simulate(const Scenario& scenario, const Plan& plan, const EngineOptions& options = {});

/** Version string of the SimGrid library in use. */
std::string simgrid_version();

} // namespace partsim
