// What a parameter-server run does, derived from the scenario without SimGrid: hosts, per-step compute times, bytes
// pulled and pushed, the servers' update cost.
#pragma once

#include "partsim/input/scenario.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace partsim {

struct PsPlan {
  ParameterServer spec;
  /** The workload's iterations: each worker's steps (sync, local_sgd), or async and ssp's budget of steps x workers
   * worker steps that the workers take from as they go (a faster worker takes more, as a global step counter does). */
  std::int64_t steps = 1;
  std::vector<int> worker_gpu;    ///< global GPU index of each worker
  std::vector<int> shard_gpu;     ///< global GPU index of each server shard
  std::vector<double> step_time;  ///< s of compute per step of each worker, before jitter (speed applied)
  double nominal_step_time = 0.0; ///< s of compute per step at nominal speed
  double parameter_bytes = 0.0;   ///< the whole model, pulled
  double gradient_bytes = 0.0;    ///< the whole model, pushed
  double update_time = 0.0;       ///< s a server spends applying one gradient over the whole model
  double samples_per_step = 0.0;  ///< per worker
  double global_batch = 0.0;      ///< samples of one global step (all workers' steps)
  std::string update_time_origin; ///< where update_time came from, for the report

  int workers() const { return static_cast<int>(worker_gpu.size()); }
  int shards() const { return static_cast<int>(shard_gpu.size()); }
  double shard_parameter_bytes() const { return parameter_bytes / shards(); }
  double shard_gradient_bytes() const { return gradient_bytes / shards(); }
  double shard_update_time() const { return update_time / shards(); }
  /** Whether the workers share a budget of worker steps (async, ssp) rather than each taking `steps`. */
  bool shares_steps() const { return spec.policy == PsPolicy::Async || spec.policy == PsPolicy::Ssp; }
  /** Whether step t (0-based) of a worker starts with a pull. */
  bool pulls_at(std::int64_t t) const { return t % spec.push_interval() == 0; }
  /** Whether step t ends with a push (local SGD: every H steps and the last). */
  bool pushes_at(std::int64_t t) const { return (t + 1) % spec.push_interval() == 0 || t + 1 == steps; }
  /** Pushes each worker makes. */
  std::int64_t pushes_per_worker() const;
};

/** Checks a parameter-server strategy against its workload (a data job with gradient bytes, or model training whose
 * global batch splits into micro-batches over the workers). @throws InputError naming the field. */
void check_parameter_server(const ParameterServer& ps, const ClusterSpec& cluster, const Workload& workload,
                            const std::string& source);

/** The plan of a scenario whose strategy is a ParameterServer. */
PsPlan build_ps_plan(const Scenario& scenario);

/** Messages the run sends: per pull a request and a reply per shard, per push a gradient per shard. */
double ps_planned_messages(const PsPlan& plan);
/** Sleeps the run takes: a compute per worker step, an update per gradient and shard. */
double ps_planned_sleeps(const PsPlan& plan);
/** SimGrid events the run would take (messages and sleeps), for /run/max_events. */
double ps_planned_events(const PsPlan& plan);

} // namespace partsim
