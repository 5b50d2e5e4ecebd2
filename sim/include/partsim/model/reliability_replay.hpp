// A long training run replayed over failures and checkpoints: a seeded discrete-event process whose steps are
// training segments of a simulated iteration time, checkpoints, failures and recoveries (docs/failures.md). Pure
// arithmetic, no SimGrid: the iteration time comes from one simulated iteration.
#pragma once

#include "partsim/input/reliability.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace partsim {

/** What the replay needs, in s. */
struct ReplayInput {
  double iteration_time = 0.0;
  std::int64_t iterations = 0;       ///< to train
  std::int64_t checkpoint_every = 0; ///< iterations between checkpoints (>= 1)
  double checkpoint_block = 0.0;     ///< training stops this long per checkpoint (sync: the write; async: the copy)
  double checkpoint_write = 0.0;     ///< async: the storage write behind training, until the checkpoint is durable
  double recovery = 0.0;             ///< from a failure to training again: detection, repair or spare, restart, reload
  FailureDistribution distribution = FailureDistribution::Exponential;
  double weibull_shape = 1.0;
  std::vector<ComponentFailures> components;
  std::vector<double> failure_times; ///< listed failures, s from the start
  std::uint64_t seed = 1;
  std::size_t max_events = 0; ///< events kept in ReplayResult::events (the counts cover all)
  // Elastic recovery: the job goes on with the replicas a failure left, each slower by replicas / (replicas - down)
  // (the same global batch on fewer replicas), and the failed ones rejoin after their repair.
  bool elastic = false;
  std::int64_t replicas = 1;                  ///< data-parallel replicas
  std::int64_t min_replicas = 1;              ///< fewer: wait for repairs
  std::array<std::int64_t, 5> replicas_hit{}; ///< replicas one failure takes out, by FailureComponent
  double repair = 0.0;                        ///< s from a failure to its replicas' return
  double rejoin = 0.0;                        ///< s training stops when replicas rejoin
};

/** One event of the replay, for the trace and the report. */
struct ReplayEvent {
  enum class Kind : std::uint8_t { Failure, Checkpoint, Durable, Resumed };
  Kind kind = Kind::Failure;
  double time = 0.0;
  FailureComponent component = FailureComponent::Gpu; ///< failures
  std::int64_t iteration = 0;                         ///< checkpoints: the iteration saved; failures: rolled back to
};

/** Where the replayed time went. useful + degraded + lost + checkpoint + recovery == total (to rounding). */
struct ReplayResult {
  double total = 0.0;      ///< s to finish
  double useful = 0.0;     ///< iterations x iteration time
  double degraded = 0.0;   ///< elastic: kept training beyond `useful`, for running on fewer replicas
  double lost = 0.0;       ///< training rolled back by failures
  double checkpoint = 0.0; ///< training stopped for checkpoints (blocks and waits for a previous async write)
  double recovery = 0.0;   ///< from failures to training again (failures during recovery restart it)
  std::int64_t failures = 0;
  std::map<FailureComponent, std::int64_t> failures_by_component;
  std::int64_t checkpoints = 0;      ///< started
  std::int64_t checkpoints_lost = 0; ///< interrupted by a failure before durable
  std::vector<ReplayEvent> events;   ///< the first max_events
};

/** Replays the run. Each unit of each component fails after a time drawn from its law (the scale of a Weibull makes
 * the mean the MTBF), all new at the start; a failed unit is replaced by a new one at its failure time (units age in
 * wall time, during recoveries too). Same input and seed, same result, on every machine that rounds like IEEE 754
 * (the draws use partsim's xoshiro256**). */
ReplayResult replay_reliability(const ReplayInput& input);

/** The job's mean time between failures: 1 / sum of units / MTBF over the components; +inf without any. */
double job_mtbf(const std::vector<ComponentFailures>& components);

/** Young's optimal interval between checkpoints (1974), sqrt(2 x C x M), Daly's first order (2006). */
double young_daly_interval(double checkpoint_cost, double mtbf);

/** Daly's expected time (2006, eq. for exponential failures, failures during restart included) to do `work` s in
 * segments of `interval` s, each followed by a checkpoint of `checkpoint_cost` s, with `recovery` s per failure:
 * M e^(R/M) (e^((tau + C)/M) - 1) work / tau. */
double daly_expected_time(double work, double interval, double checkpoint_cost, double recovery, double mtbf);

/** Young/Daly's first-order overhead per unit of work: C / tau + (tau + C) / (2 M) + R / M. */
double first_order_overhead(double interval, double checkpoint_cost, double recovery, double mtbf);

} // namespace partsim
