// The raw figures of a parameter-server run, as the engine counts them (ps_report.hpp turns them into report.json).
#pragma once

#include "partsim/report/run_result.hpp"

#include <cstdint>
#include <vector>

namespace partsim {

struct PsWorkerRaw {
  std::int64_t steps = 0;
  std::int64_t pushes = 0;
  double compute = 0.0; ///< s computing
  double pull = 0.0;    ///< s from the pull requests to the last shard's parameters
  double push = 0.0;    ///< s from the first gradient sent to the last one received by its shard
  double blocked = 0.0; ///< s waiting at the policy's gate
  double finish = 0.0;  ///< s when its last gradient was applied
  /** Staleness of each gradient shard applied: the shard's version before the update minus the version the worker
   * pulled; index: staleness, value: count. */
  std::vector<std::uint64_t> staleness_histogram;
  double staleness_sum = 0.0;
  std::uint64_t staleness_samples = 0;
  std::int64_t max_lead = 0; ///< the most steps it started ahead of the slowest worker's completed steps
};

struct PsShardRaw {
  double bytes_received = 0.0; ///< gradients and pull requests
  double bytes_sent = 0.0;     ///< parameters
  std::uint64_t gradients = 0; ///< gradients applied
  std::int64_t version = 0;    ///< at the end
  double updating = 0.0;       ///< s applying gradients
};

struct PsRunResult {
  NetworkConfig network;
  double makespan = 0.0; ///< s: the last gradient applied
  std::vector<PsWorkerRaw> workers;
  std::vector<PsShardRaw> shards;
  std::uint64_t messages = 0;
  std::uint64_t sleeps = 0;
  std::uint64_t actors = 0;
};

} // namespace partsim
