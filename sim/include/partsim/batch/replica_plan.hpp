// Capacity planning of a serving pipeline (`partsim plan-replicas`): the smallest node count per stage (and with
// `--granularity replica`, the smallest replica count) whose simulation meets a throughput and a p99 latency target,
// found by simulating candidates, and the latency-against-load curve of the plan found. The search is here, free of
// processes; the CLI runs each candidate as a child simulation.
#pragma once

#include "partsim/input/scenario.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace partsim {

/** What a plan must achieve, at open-loop arrivals of `throughput` items/s. */
struct ReplicaTargets {
  double throughput = 0.0;    ///< items/s answered, at least (1 - tolerance) of it
  double p99 = 0.0;           ///< s end to end, at most
  double tolerance = 0.02;    ///< of the throughput: the answered rate of a finite run scatters around the offered
  double max_drop_rate = 0.0; ///< share of the requests a bounded queue may drop
  /** Every pool's utilisation at most this: a margin from saturation, which a finite run at 98% busy does not show
   * in its p99 (1: none). */
  double max_utilisation = 1.0;
  int max_nodes_per_stage = 256; ///< a stage's pool never grows past this
};

/** The pools a plan sizes, each growing by whole nodes of `replicas_per_node` replicas (the node type of the
 * scenario): every stage's pool, and a disaggregated LLM stage's prefill pool as a pool of its own (`<stage>-prefill`,
 * after its stage's), each judged by its own utilisation (the decode and prefill pools' figures of
 * `llm/disaggregation`). */
struct ReplicaLayout {
  std::vector<std::string> names;
  std::vector<int> replicas_per_node; ///< per pool, as the scenario has it
  /** Per pool: its node count's field in the scenario (empty: `/workload/stages/i/pool/nodes`, i its index). */
  std::vector<std::string> nodes_pointers;
  /** Per pool: its replicas per node's field (empty: `/workload/stages/i/pool/replicas_per_node`). */
  std::vector<std::string> per_node_pointers;
  /** Per pool: its utilisation in a report (empty: `/serving/stages/i/utilisation`). */
  std::vector<std::string> utilisation_pointers;
  int fixed_nodes = 0; ///< nodes the search does not change
  /** Where a candidate's offered rate goes, and the value per item/s: `/workload/arrivals/rate` and 1 for Poisson or
   * gamma arrivals; for a trace, `/workload/arrivals/trace/speed` and 1 / the trace's own rate (its rows replayed
   * faster or slower so that they arrive at the rate asked, bursts and lulls kept). */
  std::string rate_pointer = "/workload/arrivals/rate";
  double rate_scale = 1.0;
  /** Closed loop instead (clients > 0): the throughput is the clients' (X = N / (R + Z)), not offered. Every step runs
   * the scenario's `clients`; the curve's loads scale them (at least one, rounded), `rate` x clients / `target`. */
  struct ClosedLoop {
    int clients = 0;
    double think_mean = 0.0; ///< s
    double target = 0.0;     ///< items/s, the plan's (set by the planner)
  } closed;

  std::string nodes_pointer(std::size_t i) const;
  std::string per_node_pointer(std::size_t i) const;
  std::string utilisation_pointer(std::size_t i) const;
};

/** The layout of a serving scenario: open-loop arrivals, Poisson or gamma (whose rate the plan sets to the target) or
 * a trace (replayed at the speed that gives the target rate: its own rate is the rows the run sends, less one, over
 * the time from the first to the last); or closed-loop clients (ReplicaLayout::closed). @throws InputError when the
 * scenario is not a serving workload. */
ReplicaLayout replica_layout(const Scenario& scenario);

/** One simulated candidate: nodes per stage and what its report said. */
struct ReplicaTrial {
  std::vector<int> nodes;
  std::vector<int> per_node; ///< replicas per node of each pool (the layout's, unless a refinement changed them)
  double offered = 0.0;      ///< items/s sent
  double throughput = 0.0;   ///< items/s answered
  double p50 = 0.0;          ///< s end to end
  double p99 = 0.0;          ///< s end to end
  double drop_rate = 0.0;
  std::vector<double> utilisation; ///< per stage
  std::string bottleneck;          ///< the report's busiest stage
  bool meets = false;              ///< against the targets, at the target rate
};

/** Reads a candidate's figures from its report.json (`/serving`; each pool's utilisation where `layout` says); its
 * replicas per node are `per_node`, or the layout's when empty. @throws InputError (source `report`) when a figure is
 * missing. */
ReplicaTrial read_trial(const nlohmann::json& report, const ReplicaLayout& layout, std::vector<int> nodes,
                        double offered, std::vector<int> per_node = {});

/** The trial meets the targets: answered throughput, p99, drops and every pool's utilisation. */
bool meets_targets(const ReplicaTrial& trial, const ReplicaTargets& targets);

/** The next candidate of the growth phase: one more node for the busiest stage that may still grow (its utilisation
 * decides, ties to the earlier stage); nothing when every stage is at the limit. */
std::optional<std::vector<int>> grow(const ReplicaTrial& trial, const ReplicaTargets& targets);

/** The candidates of the trim phase from a plan that meets the targets: one node fewer for one stage, least busy
 * stage first, stages at one node left out. */
std::vector<std::vector<int>> trim_candidates(const ReplicaTrial& trial);

/** A pool of `replicas` replicas on nodes that hold at most `per_node_max` each (the scenario's replicas per node):
 * the fewest nodes that can hold them, ceil(replicas / per_node_max), each with the same number, as {nodes, replicas
 * per node}; nothing when they do not split evenly over those nodes (17 with at most 16 per node: 2 nodes cannot hold
 * 8.5 each). */
std::optional<std::pair<int, int>> pool_shape(int replicas, int per_node_max);

/** The replica counts in [lo, hi] that pool_shape accepts, ascending (every count up to per_node_max, then the
 * even splits: with at most 4 per node, 1 2 3 4 6 8 9 12 16 20 ...). */
std::vector<int> replica_counts(int lo, int hi, int per_node_max);

/** The fewest replicas below `replicas` that a pool `utilisation` busy could have: its busy replicas, replicas x
 * utilisation, rounded down, plus one (fewer would be busy above 100%). */
int fewest_replicas(int replicas, double utilisation);

/** The overrides that make a candidate: each pool's node count, `/cluster/nodes` to what the pools need, and the
 * offered rate (`rate_pointer` set to rate x rate_scale), or in a closed loop the clients (clients x rate / target,
 * rounded, at least 1). */
std::vector<Override> replica_overrides(const ReplicaLayout& layout, const std::vector<int>& nodes, double rate);

/** The same with each pool's replicas per node set too (a refinement's candidate), after the node counts. */
std::vector<Override> replica_overrides(const ReplicaLayout& layout, const std::vector<int>& nodes,
                                        const std::vector<int>& per_node, double rate);

/** Checks that a closed loop can answer `target` items/s within `tolerance`: N clients thinking Z s on average ask
 * at most N / Z items/s (the response-time law X = N / (R + Z) with R > 0). @throws InputError naming --throughput
 * otherwise. Nothing for open-loop arrivals. */
void check_closed_loop_target(const ReplicaLayout& layout, double target, double tolerance);

/** The load points of the latency curve, as fractions of the target throughput. */
inline const std::vector<double>& curve_loads() {
  static const std::vector<double> loads{0.25, 0.5, 0.75, 0.9, 1.0, 1.1, 1.25};
  return loads;
}

} // namespace partsim
