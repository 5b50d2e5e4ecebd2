// The parameter-server strategy (seed situation 9, stale gradients): workers that pull parameters from server shards,
// compute and push gradients, under a consistency policy (sync, async, SSP, local SGD).
#pragma once

#include "partsim/common/enum_names.hpp"
#include "partsim/serving/serving_spec.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace partsim {

class JsonReader;
struct ClusterSpec;

/** When a worker may start a step, and how the servers count versions:
 * - `sync`: a step starts when every worker's previous step is applied; the servers aggregate the W gradients of a
 *   step into one update (one version per step, no staleness);
 * - `async`: no wait; every gradient is one update;
 * - `ssp`: stale synchronous parallel with bound s: a worker starts step t when every worker has completed at least
 *   t - s steps; every gradient is one update;
 * - `local_sgd`: workers take `local_steps` steps on their own copy, then push and wait for every worker's push
 *   before pulling the averaged model (one version per round). */
enum class PsPolicy { Sync, Async, Ssp, LocalSgd };

template <>
struct EnumNames<PsPolicy> {
  static constexpr std::array<EnumEntry<PsPolicy>, 4> entries{{{PsPolicy::Sync, "sync"},
                                                               {PsPolicy::Async, "async"},
                                                               {PsPolicy::Ssp, "ssp"},
                                                               {PsPolicy::LocalSgd, "local_sgd"}}};
};

/** One point of a statistical-efficiency model: the global steps (of the global batch) needed to reach the target
 * when gradients are `mean_staleness` updates stale on average. */
struct StalenessPoint {
  double mean_staleness = 0.0;
  double steps = 0.0;
};

/** Steps to a target against mean staleness, linear between points (mean_staleness increasing), with its source: the
 * effect of staleness on convergence is not a time figure, so the scenario must say where it comes from. */
struct StatisticalEfficiency {
  std::string source; ///< the publication or measurement the points come from (required, non-empty)
  std::string target; ///< the target in words ("76% top-1"); may be empty
  std::vector<StalenessPoint> points;

  /** Steps needed at `mean_staleness`, linear between the points; nullopt outside [first, last]. */
  std::optional<double> steps_needed(double mean_staleness) const;
};

/** Per-step random slow-down of a worker: its compute time times a factor of mean 1 drawn each step. */
struct ComputeJitter {
  DistributionKind kind = DistributionKind::LogNormal;
  double cv = 0.0;
};

/** `/strategy` of kind `parameter_server`. Servers run on the first GPU host of the last `server_shards` nodes (one
 * shard per node, its own NICs); workers on the GPUs of the other nodes, in order. */
struct ParameterServer {
  PsPolicy policy = PsPolicy::Sync;
  int staleness_bound = 2; ///< ssp's s
  int local_steps = 4;     ///< local_sgd's H
  int workers = 1;         ///< resolved
  int server_shards = 1;
  std::vector<double> worker_speeds; ///< resolved, one per worker (1: nominal)
  std::optional<ComputeJitter> jitter;
  std::optional<double> update_time; ///< s for one gradient over the whole model; absent: from the workload
  double request_bytes = 64.0;       ///< a pull request's bytes
  std::optional<StatisticalEfficiency> statistical_efficiency;

  /** The staleness bound the gate applies: 0 for sync and local SGD, s for ssp, none (-1) for async. */
  int gate_bound() const;
  /** Whether the servers count one version per step (sync) or round (local SGD) rather than per gradient. */
  bool aggregates() const { return policy == PsPolicy::Sync || policy == PsPolicy::LocalSgd; }
  /** Steps between pushes: local_steps for local SGD, else 1. */
  int push_interval() const { return policy == PsPolicy::LocalSgd ? local_steps : 1; }
};

/** Reads `/strategy` of kind `parameter_server` (the reader at `/strategy`, its kind set; finishes it) for `cluster`.
 * @throws InputError naming the field. */
ParameterServer parse_parameter_server(JsonReader& reader, const ClusterSpec& cluster);

/** One line: "parameter server: 8 workers, 2 shards, ssp s=2". */
std::string describe(const ParameterServer& ps);

} // namespace partsim
