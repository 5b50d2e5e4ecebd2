// Strategies turn a validated scenario into a Plan (pure, no SimGrid).
#pragma once

#include "partsim/input/scenario.hpp"
#include "partsim/model/memory.hpp"
#include "partsim/plan/plan.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace partsim {

/** Splits `total` items by `shares` into integers that sum to `total` (largest-remainder method, ties to the
 * lower index), so that every partition is within one item of its exact share. */
std::vector<std::uint64_t> apportion(std::uint64_t total, const std::vector<double>& shares);

/** Builds the plan of a scenario. Where a plan's size can be known before it is built (per micro-batch programs of
 * model parallelism), it is estimated first. @throws InputError when the run would exceed /run/max_events, counting
 * messages, executions and the speed profiles' events up to the run's estimated length. */
Plan build_plan(const Scenario& scenario);

/** What build_plan's Plan::memory will be, without building the plan: the memory one GPU needs (the peak stage's
 * under model parallelism), or nothing when the workload has no memory model (a data job, a collective). Cheap: a
 * search prunes the points that do not fit with it before planning or simulating them. */
std::optional<MemoryBreakdown> planned_memory(const Scenario& scenario);

/** Events of the speed profiles (/cluster/speed_changes) up to `horizon` s of simulated time: every GPU of a node
 * with a speed change steps through its points once, or again every period. */
double speed_profile_events(const ClusterSpec& cluster, double horizon);

/** The simulated time by which the speed profiles have made `budget` events; infinity when none repeats. */
double speed_profile_horizon(const ClusterSpec& cluster, double budget);

/** Most steps a plan holds in memory (about 48 bytes each: 2.9 GB). */
inline constexpr double kMaxPlanSteps = 60e6;

/** Refuses a plan of more than kMaxPlanSteps `steps`, before it is built. */
void check_plan_size(const Scenario& scenario, double steps);

/** Refuses a run of `events` (messages, executions, profile events) past /run/max_events. `what` names them. */
void check_event_budget(const Scenario& scenario, double events, const std::string& what);

/** The speedup reference of a training plan: one GPU runs the global batch in micro-batches of `micro_batch_time`
 * (forward + backward, s at nominal speed) each, then the optimizer step of `optimizer_time`, at `peak` flop/s
 * (baseline_amount), and its host hands over every micro-batch's data (baseline_host). */
void set_training_baseline(Plan& plan, const ModelTraining& training, double micro_batch_time, double optimizer_time,
                           double peak);

} // namespace partsim
