// Report metrics derived from a run's timeline: breakdowns, imbalance, overhead, speedup, Amdahl and Karp-Flatt.
#pragma once

#include "partsim/engine/engine.hpp"
#include "partsim/input/scenario.hpp"
#include "partsim/model/training.hpp"
#include "partsim/plan/plan.hpp"
#include "partsim/report/energy_cost.hpp"
#include "partsim/report/reliability.hpp"
#include "partsim/report/report_stragglers.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace partsim {

struct RankMetrics {
  int rank = 0;
  int node = 0;
  int local_gpu = 0;
  std::uint64_t samples = 0;
  double compute = 0.0;       ///< s
  double communication = 0.0; ///< s, transfers moving
  double wait = 0.0;          ///< s, blocked in a collective on a peer
  double tail_idle = 0.0;     ///< s, finished early, waiting for the makespan
  double finish = 0.0;        ///< s
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t messages_sent = 0;
  double overlapped = 0.0;  ///< s of collectives on the communication stream hidden behind the rank's compute
  double stream_wait = 0.0; ///< s blocked on the communication stream (exposed; part of `communication`)
  // Model parallelism (0 elsewhere).
  int stage = 0;                 ///< pipeline stage
  double tensor_exposed = 0.0;   ///< s blocked in tensor-parallel collectives (waits included)
  double pipeline_exposed = 0.0; ///< s blocked receiving from a pipeline peer, bubble included
  double data_exposed = 0.0;     ///< s blocked in data-parallel collectives or on the stream carrying them
  double expert_exposed = 0.0;   ///< s blocked in the experts' all-to-alls (waits for the busiest expert included)
  double context_exposed = 0.0;  ///< s blocked exchanging keys and values on the context group
  double bubble = 0.0;           ///< s waiting for a pipeline peer to send (part of wait)
  double data_loading = 0.0;     ///< s idle while the host hands over input data (HostStep)

  double busy() const { return compute + communication; }
  double idle() const { return wait + data_loading + tail_idle; }
};

struct Report {
  // What ran.
  std::string scenario_name;
  std::string scenario_description;
  std::string strategy_summary;
  std::uint64_t seed = 0;
  NetworkConfig network;
  int gpus = 0;
  std::int64_t iterations = 1;

  // Headline figures.
  double makespan = 0.0;                ///< s
  double throughput = 0.0;              ///< samples/s
  double baseline_time = 0.0;           ///< s, same work on one nominal GPU
  double speedup = 0.0;                 ///< baseline_time / makespan
  double efficiency = 0.0;              ///< speedup / gpus
  double imbalance_max_over_mean = 0.0; ///< of compute time
  double imbalance_cv = 0.0;            ///< coefficient of variation of compute time
  double communication_overhead = 0.0;  ///< communication GPU-seconds / (gpus x makespan)
  double idle_share = 0.0;              ///< idle GPU-seconds / (gpus x makespan)
  double time_lost_waiting = 0.0;       ///< GPU-seconds idle (wait + data loading + tail) in all
  double data_loading = 0.0;            ///< GPU-seconds idle while hosts hand over input data, all ranks
  double slowest_rank_excess = 0.0;     ///< makespan - mean finish: what the slowest rank costs, s
  double parallel_fraction = 0.0;       ///< of compute work done while two or more ranks compute
  double amdahl_speedup_bound = 0.0;    ///< 1 / ((1-f) + f/gpus)
  double amdahl_limit = 0.0;            ///< 1 / (1-f), infinite GPUs (inf when f = 1)
  double karp_flatt = 0.0;              ///< (1/S - 1/p) / (1 - 1/p), 0 for one GPU
  std::uint64_t messages = 0;
  std::uint64_t executions = 0;
  std::string folding;                    ///< RunResult::folding
  std::size_t simulated_ranks = 0;        ///< RunResult::simulated_ranks
  bool folded = false;                    ///< RunResult::folded()
  std::size_t actors = 0;                 ///< RunResult::actors
  std::uint64_t executions_as_sleeps = 0; ///< RunResult::executions_as_sleeps
  std::uint64_t driven_flows = 0;         ///< RunResult::driven_flows
  std::uint64_t bytes_sent = 0;           ///< by all ranks and the coordinator
  std::uint64_t bytes_received = 0;       ///< by all ranks and the coordinator

  std::optional<BalancingStats> balancing;       ///< run-time balancing: the coordinator's side
  double coordinator_serial = 0.0;               ///< s the coordinator spent on the serial part (coordinated runs)
  double coordinator_coordination = 0.0;         ///< s of per-partition coordination (coordinated runs)
  double coordinator_setup = 0.0;                ///< s of preprocessing before the first iteration (class-aware split)
  std::optional<ClassSplit> class_split;         ///< per-partition class counts and starvation (class-aware runs)
  std::vector<SplitSummary> class_split_methods; ///< random, stratified, stratified_oversample side by side
  double oversampling_compute = 0.0;             ///< GPU-seconds of training on replicated samples, all iterations

  // Overlap, memory and utilisation (model training), and the collectives that ran.
  double overlapped_communication = 0.0;    ///< GPU-seconds of collectives hidden behind compute
  std::optional<MemoryBreakdown> memory;    ///< per GPU
  bool out_of_memory = false;               ///< the plan does not fit: nothing was simulated
  bool expert_parallel = false;             ///< the plan's experts exchange tokens (Plan::expert_parallel)
  bool context_parallel = false;            ///< the plan's context groups exchange keys and values
  std::vector<LayerRouting> expert_routing; ///< per layer (Plan::expert_routing)
  /** A transformer's layer and outer ops, priced one by one on one rank (model training of a transformer). */
  std::optional<LayerOpsBreakdown> layer_ops;
  /** A transformer layer's passes as simulated on Plan::marked_rank, first iteration: each layer timed from the
   * boundary before it in its pass (Plan::unit_marks), averaged over the rank's forward and backward layers. */
  struct LayerPasses {
    int rank = 0;
    double forward = 0.0;  ///< s, mean
    double backward = 0.0; ///< s, mean (recomputation included)
    std::int64_t forward_layers = 0;
    std::int64_t backward_layers = 0;
  };
  std::optional<LayerPasses> layer_passes;
  double mfu = 0.0; ///< model flops per second / (gpus x peak of the data type)
  double hfu = 0.0; ///< the same with recomputed work counted
  double tokens_per_second = 0.0;
  double model_flops_per_iteration = 0.0;
  struct Collective {
    CollectiveStats stats;
    double mean_time = 0.0; ///< s per instance
    double algbw = 0.0;     ///< bytes/s, nccl-tests' algorithm bandwidth
    double busbw = 0.0;     ///< bytes/s, nccl-tests' bus bandwidth
  };
  std::vector<Collective> collectives;

  /** One pipeline stage: means over its ranks (model parallelism only). */
  struct Stage {
    int stage = 0;
    int ranks = 0;
    double compute = 0.0;          ///< s per rank
    double tensor_exposed = 0.0;   ///< s per rank
    double pipeline_exposed = 0.0; ///< s per rank (bubble included)
    double data_exposed = 0.0;     ///< s per rank
    double expert_exposed = 0.0;   ///< s per rank
    double context_exposed = 0.0;  ///< s per rank
    double bubble = 0.0;           ///< s per rank
    double bubble_fraction = 0.0; ///< 1 - compute / makespan: the share of the run a rank of the stage does not compute
    std::optional<MemoryBreakdown> memory; ///< per GPU of the stage
  };
  std::vector<Stage> stages;

  std::vector<RankMetrics> ranks;

  /** Energy by state and facility (absent when the GPU profile has no power figures or nothing was simulated). */
  std::optional<EnergyFigures> energy;
  std::optional<CostFigures> cost; ///< with `energy`
  /** The run replayed over failures and checkpoints (scenarios with `/reliability`). */
  std::optional<ReliabilityFigures> reliability;
  /** Iteration times and the tail effect (scenarios with `/cluster/stragglers`). */
  std::optional<ReportStragglers> stragglers;
};

/** Amdahl's speedup on `p` processors for parallel fraction `f`. */
double amdahl_speedup(double parallel_fraction, double processors);

/** Karp-Flatt experimentally determined serial fraction; 0 when processors <= 1. */
double karp_flatt(double speedup, double processors);

/** Fraction of compute time spent while at least two ranks compute (1 - serial work / total work); 0 with one rank.
 * A coordinator's compute (a serial part) joins the profile. With `representative` (a folded run: per rank, the rank
 * whose intervals it has), each simulated rank's intervals count once per rank they stand for. */
double measured_parallel_fraction(const std::vector<RankTimeline>& ranks, const RankTimeline* coordinator = nullptr,
                                  const std::vector<int>& representative = {});

Report make_report(const Scenario& scenario, const Plan& plan, const RunResult& result);

/** The report of a plan that does not fit in GPU memory: what it needs, by kind, and no timings (not simulated). */
Report make_out_of_memory_report(const Scenario& scenario, const Plan& plan);

} // namespace partsim
