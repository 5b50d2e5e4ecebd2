// ReportDocument: report.json as a typed value, with one field table per section that drives to_json, from_json
// and the schema reference (docs/report-reference.md).
#pragma once

#include "partsim/common/enum_names.hpp"
#include "partsim/input/energy_cost.hpp"
#include "partsim/model/collective_cost.hpp"
#include "partsim/plan/class_split.hpp"
#include "partsim/ps/ps_report.hpp"
#include "partsim/report/report_reliability.hpp"
#include "partsim/report/report_stragglers.hpp"
#include "partsim/serving/serving_report.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace partsim {

struct Report;
struct Scenario;

/** Version of the report.json schema; bump on any incompatible change. */
inline constexpr int kReportSchemaVersion = 1;

/** report.json `verdict`. */
enum class Verdict { Simulated, OutOfMemory };
template <>
struct EnumNames<Verdict> {
  static constexpr std::array<EnumEntry<Verdict>, 2> entries{
      {{Verdict::Simulated, "simulated"}, {Verdict::OutOfMemory, "out_of_memory"}}};
};

/** A field table: each section has `template <typename Self, typename Fields> static void fields(Self&, Fields&)`,
 * which calls `f.field(key, member, unit, meaning)` for every key in the order of this header (report.json itself
 * is sorted by key), or `f.nullable(...)` for a key that is always there but may be null. An enum member is
 * written and read by its EnumNames table. A member of type
 * std::optional is a key present only in some reports; its meaning says when. The writer, the strict reader and
 * the reference all walk these tables, so a key is spelled once. */

/** `memory_per_gpu`, and a pipeline stage's: what one GPU needs, by kind. */
struct ReportMemory {
  double parameters = 0.0;
  double gradients = 0.0;
  double optimizer_states = 0.0;
  double activations = 0.0;
  double workspace = 0.0;
  double total = 0.0;
  double capacity = 0.0;
  bool fits = true;
  double model_states = 0.0;

  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("parameters_bytes", s.parameters, "B", "weights in the training data type");
    f.field("gradients_bytes", s.gradients, "B", "one gradient per weight, in the gradient data type");
    f.field("optimizer_states_bytes", s.optimizer_states, "B", "fp32 master weights (mixed precision) and moments");
    f.field("model_states_bytes", s.model_states, "B",
            "parameters, gradients and optimizer states (ZeRO's model states): what stays allocated between "
            "iterations, as PyTorch's memory_allocated() after the optimizer step");
    f.field("activations_bytes", s.activations, "B",
            "kept from the forward passes for their backward passes, at the schedule's peak of micro-batches in "
            "flight, with the working sets that exist only at that peak (one layer rebuilt at a time under full "
            "recomputation; on the rank that computes the loss, the cross-entropy's transient copies of the logits)");
    f.field("workspace_bytes", s.workspace, "B",
            "context, library workspaces, allocator slack (the scenario's figure)");
    f.field("total_bytes", s.total, "B", "the peak: model states + activations + workspace");
    f.field("capacity_bytes", s.capacity, "B", "the GPU's memory");
    f.field("fits", s.fits, "", "total_bytes <= capacity_bytes");
  }
};

/** One (key, value) figure of a section, in report.json's order. */
using ReportFigure = std::pair<std::string, double>;

/** `summary`: the headline figures of a simulated run. */
struct ReportSummary {
  std::int64_t gpus = 0;
  std::int64_t iterations = 1;
  double makespan = 0.0;
  double throughput = 0.0;
  double single_gpu_time = 0.0;
  double speedup = 0.0;
  double parallel_efficiency = 0.0;
  double imbalance_max_over_mean = 0.0;
  double imbalance_cv = 0.0;
  double communication_overhead = 0.0;
  double idle_share = 0.0;
  double time_lost_waiting = 0.0;
  double slowest_rank_excess = 0.0;
  double parallel_fraction = 0.0;
  double amdahl_speedup_bound = 0.0;
  std::optional<double> amdahl_limit; ///< null: unbounded (parallel fraction 1)
  double karp_flatt = 0.0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
  double exposed_communication = 0.0;
  double overlapped_communication = 0.0;
  std::optional<double> mfu;
  std::optional<double> hfu;
  std::optional<double> tokens_per_s;
  std::optional<double> model_flops_per_iteration;
  std::optional<double> data_loading;

  /** Every numeric field with a value, in report.json's order (by key). */
  std::vector<ReportFigure> figures() const;

  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("gpus", s.gpus, "", "GPUs of the run, one rank each");
    f.field("iterations", s.iterations, "", "iterations simulated");
    f.field("makespan_s", s.makespan, "s", "the last rank's finish time");
    f.field("throughput_samples_per_s", s.throughput, "samples/s", "samples of all iterations / makespan_s");
    f.field("single_gpu_time_s", s.single_gpu_time, "s", "the same work on one nominal GPU (0: nothing to compare)");
    f.field("speedup", s.speedup, "", "single_gpu_time_s / makespan_s");
    f.field("parallel_efficiency", s.parallel_efficiency, "", "speedup / gpus");
    f.field("load_imbalance_max_over_mean", s.imbalance_max_over_mean, "", "max / mean of the ranks' compute time");
    f.field("load_imbalance_cv", s.imbalance_cv, "", "coefficient of variation of the ranks' compute time");
    f.field("communication_overhead", s.communication_overhead, "", "communication GPU-seconds / (gpus x makespan)");
    f.field("idle_share", s.idle_share, "", "idle GPU-seconds / (gpus x makespan)");
    f.field("time_lost_waiting_gpu_s", s.time_lost_waiting, "GPU-s", "idle time (wait + tail) of all ranks");
    f.field("slowest_rank_excess_s", s.slowest_rank_excess, "s", "makespan - mean finish: what the slowest rank costs");
    f.field("parallel_fraction", s.parallel_fraction, "", "share of compute done while two or more ranks compute");
    f.field("amdahl_speedup_bound", s.amdahl_speedup_bound, "", "1 / ((1-f) + f/gpus) for the parallel fraction f");
    f.nullable("amdahl_limit", s.amdahl_limit, "", "1 / (1-f), infinite GPUs; null when unbounded (f = 1)");
    f.field("karp_flatt_serial_fraction", s.karp_flatt, "", "(1/speedup - 1/gpus) / (1 - 1/gpus); 0 on one GPU");
    f.field("bytes_sent", s.bytes_sent, "B", "by all ranks and the coordinator");
    f.field("bytes_received", s.bytes_received, "B", "by all ranks and the coordinator");
    f.field("exposed_communication_gpu_s", s.exposed_communication, "GPU-s",
            "communication and waits on the ranks' critical paths, summed over ranks");
    f.field("overlapped_communication_gpu_s", s.overlapped_communication, "GPU-s",
            "collectives hidden behind compute, summed over ranks");
    f.field("mfu", s.mfu, "", "model FLOP/s / (gpus x peak of the data type); model training only");
    f.field("hfu", s.hfu, "", "the same with recomputed work counted; model training only");
    f.field("tokens_per_s", s.tokens_per_s, "tokens/s", "model training only");
    f.field("model_flops_per_iteration", s.model_flops_per_iteration, "FLOP", "model training only");
    f.field("data_loading_gpu_s", s.data_loading, "GPU-s",
            "idle while hosts hand over input data, summed over ranks (part of time_lost_waiting_gpu_s); only when "
            "workload/data_loading is set");
  }
};

/** `scenario`: what was asked. */
struct ReportScenario {
  std::string name;
  std::string description;
  nlohmann::json input = nlohmann::json::object();

  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("name", s.name, "", "the scenario's name");
    f.field("description", s.description, "", "its one-line description");
    f.field("input", s.input, "", "the scenario as validated, overrides applied (docs/scenario-reference.md)");
  }
};

/** `engine`: how it was simulated. */
struct ReportEngine {
  std::string simulator = "SimGrid";
  std::string simgrid_version;
  std::string network_model;
  bool cross_traffic = false;
  std::string network_note;
  std::uint64_t seed = 0;
  std::uint64_t messages = 0;
  std::uint64_t executions = 0;
  std::uint64_t simulated_ranks = 0;
  std::string folding;
  std::uint64_t actors = 0;
  std::uint64_t executions_as_sleeps = 0;
  std::uint64_t driven_flows = 0;

  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("simulator", s.simulator, "", "always \"SimGrid\"");
    f.field("simgrid_version", s.simgrid_version, "", "of the library that ran the simulation");
    f.field("network_model", s.network_model, "", "SimGrid's network model");
    f.field("cross_traffic", s.cross_traffic, "", "whether SimGrid models the acknowledgements' cross traffic");
    f.field("network_note", s.network_note, "", "why this network model");
    f.field("seed", s.seed, "", "the scenario's seed");
    f.field("messages", s.messages, "", "point-to-point messages simulated");
    f.field("executions", s.executions, "", "executions simulated (the baseline excluded)");
    f.field("simulated_ranks", s.simulated_ranks, "",
            "ranks with an actor; the others took a representative's figures");
    f.field("folding", s.folding, "", "what folding of identical replicas did, or why it did not");
    f.field("actors", s.actors, "", "SimGrid actors the run created (programs, streams, flow drivers)");
    f.field("executions_as_sleeps", s.executions_as_sleeps, "",
            "of executions: alone on a GPU of constant speed, simulated as sleeps");
    f.field("driven_flows", s.driven_flows, "", "of messages: flows started by driver actors");
  }
};

/** One element of `collectives`: the instances of one kind of collective. */
struct ReportCollective {
  CollectiveOp operation = CollectiveOp::AllReduce;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Ring;
  CollectiveProtocol protocol = CollectiveProtocol::Simple;
  Fidelity fidelity = Fidelity::Steps;
  CommKind kind = CommKind::Data;
  std::int64_t ranks = 0;
  std::uint64_t bytes = 0;
  std::uint64_t count = 0;
  double mean_time = 0.0;
  double min_time = 0.0;
  double max_time = 0.0;
  double algbw = 0.0;
  double busbw = 0.0;

  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("operation", s.operation, "", "the collective");
    f.field("algorithm", s.algorithm, "", "how it was run");
    f.field("protocol", s.protocol, "", "NCCL's protocol it ran with");
    f.field("fidelity", s.fidelity, "", "how it was simulated");
    f.field("kind", s.kind, "", "what it carries");
    f.field("ranks", s.ranks, "", "group size");
    f.field("bytes", s.bytes, "B", "per instance");
    f.field("count", s.count, "", "instances");
    f.field("mean_time_s", s.mean_time, "s", "per instance, last arrival to last completion");
    f.field("min_time_s", s.min_time, "s", "fastest instance");
    f.field("max_time_s", s.max_time, "s", "slowest instance");
    f.field("algbw_bytes_per_s", s.algbw, "B/s", "nccl-tests' algorithm bandwidth");
    f.field("busbw_bytes_per_s", s.busbw, "B/s", "nccl-tests' bus bandwidth");
  }
};

/** `class_split/random_split_risk`: what a random split of the same samples would starve. */
struct ReportStarvationRisk {
  std::uint64_t threshold = 1;
  double per_partition = 0.0;
  double expected_starved = 0.0;
  double any_lower = 0.0;
  double any_upper = 0.0;
  bool exact = false;

  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("threshold", s.threshold, "samples", "fewer minority samples than this starve a partition");
    f.field("starved_probability_per_partition", s.per_partition, "", "mean P[a partition is starved]");
    f.field("expected_starved_partitions", s.expected_starved, "", "expected starved partitions");
    f.field("any_starved_at_least", s.any_lower, "", "P[at least one starved] is at least this");
    f.field("any_starved_at_most", s.any_upper, "", "... and at most this");
    f.field("exact", s.exact, "", "the two bounds are the exact probability");
  }
};

/** One element of `class_split/partitions`. */
struct ReportPartition {
  std::uint64_t partition = 0;
  std::uint64_t rank = 0;
  std::uint64_t size = 0;
  std::map<std::string, std::uint64_t> per_class;
  double minority_share = 0.0;
  std::uint64_t replicas = 0;
  bool starved = false;

  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("partition", s.partition, "", "its index");
    f.field("rank", s.rank, "", "the rank that trains on it");
    f.field("size", s.size, "samples", "replicas included");
    f.field("per_class", s.per_class, "samples", "per class, by class name, replicas included");
    f.field("minority_share", s.minority_share, "", "minority samples / size");
    f.field("replicas", s.replicas, "samples", "minority samples added by oversampling");
    f.field("starved", s.starved, "", "fewer minority samples than the threshold, after oversampling");
  }
};

/** One element of `class_split/methods_compared`. */
struct ReportSplitMethod {
  SplitMethod method = SplitMethod::Random;
  std::int64_t starved_partitions = 0;
  std::uint64_t min_minority = 0;
  std::uint64_t max_minority = 0;
  std::uint64_t samples_replicated = 0;
  double preprocessing = 0.0;

  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("method", s.method, "", "the split method");
    f.field("starved_partitions", s.starved_partitions, "", "partitions with too few minority samples");
    f.field("min_minority", s.min_minority, "samples", "fewest minority samples in a partition");
    f.field("max_minority", s.max_minority, "samples", "most minority samples in a partition");
    f.field("samples_replicated", s.samples_replicated, "samples", "copies written by oversampling");
    f.field("preprocessing_s", s.preprocessing, "s", "on the coordinator");
  }
};

/** `class_split`: a class-aware split's partitions and starvation. */
struct ReportClassSplit {
  SplitMethod method = SplitMethod::Stratified;
  std::string minority_class;
  std::uint64_t starved_threshold = 1;
  std::uint64_t oversample_target = 0;
  std::int64_t starved_partitions = 0;
  ReportStarvationRisk random_split_risk;
  double preprocessing = 0.0;
  std::uint64_t samples_replicated = 0;
  double oversampling_compute = 0.0;
  std::vector<ReportPartition> partitions;
  std::vector<ReportSplitMethod> methods_compared;

  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("method", s.method, "", "the split method of the run");
    f.field("minority_class", s.minority_class, "", "the class whose scarcity matters");
    f.field("starved_threshold", s.starved_threshold, "samples", "fewer minority samples than this starve");
    f.field("oversample_target", s.oversample_target, "samples", "0 unless stratified_oversample");
    f.field("starved_partitions", s.starved_partitions, "", "partitions starved after oversampling");
    f.field("random_split_risk", s.random_split_risk, "", "the same samples split at random");
    f.field("preprocessing_s", s.preprocessing, "s", "on the coordinator before the first iteration");
    f.field("samples_replicated", s.samples_replicated, "samples", "copies written by oversampling");
    f.field("oversampling_compute_gpu_s", s.oversampling_compute, "GPU-s", "training on replicated samples");
    f.field("partitions", s.partitions, "", "one per partition");
    f.field("methods_compared", s.methods_compared, "", "every split method on the same labels");
  }
};

/** `coordinator`: the coordinator's time (coordinated and class-aware runs). */
struct ReportCoordinator {
  double setup = 0.0;
  double serial_compute = 0.0;
  double coordination = 0.0;

  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("setup_s", s.setup, "s", "preprocessing before the first iteration");
    f.field("serial_compute_s", s.serial_compute, "s", "the serial part");
    f.field("coordination_s", s.coordination, "s", "per-partition coordination");
  }
};

/** `balancing`: the dispatcher's side of run-time balancing. */
struct ReportBalancing {
  std::string policy;
  std::uint64_t dispatches = 0;
  std::uint64_t steals = 0;
  double coordinator_busy = 0.0;
  std::uint64_t coordinator_bytes_sent = 0;
  std::uint64_t coordinator_bytes_received = 0;

  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("policy", s.policy, "", "the balancing policy");
    f.field("dispatches", s.dispatches, "", "chunks handed out by the coordinator");
    f.field("steals", s.steals, "", "work-stealing transfers between GPUs");
    f.field("coordinator_busy_s", s.coordinator_busy, "s", "dispatch overhead spent by the coordinator");
    f.field("coordinator_bytes_sent", s.coordinator_bytes_sent, "B", "by the coordinator");
    f.field("coordinator_bytes_received", s.coordinator_bytes_received, "B", "by the coordinator");
  }
};

/** One layer of `expert_routing`: how its token copies spread over the expert-parallel group. */
struct ReportExpertLayer {
  std::int64_t layer = 0;
  double max_load = 0.0;
  double mean_load = 0.0;
  double dropped_fraction = 0.0;
  std::vector<double> rank_load;

  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("layer", s.layer, "", "in the model, from 0");
    f.field("max_load", s.max_load, "",
            "the busiest rank's copies over the uniform share: the layer's slow-down of the experts' compute");
    f.field("mean_load", s.mean_load, "", "over the group's ranks; below 1 when copies are dropped");
    f.field("dropped_fraction", s.dropped_fraction, "", "of the layer's copies, by the capacity factor");
    f.field("rank_load", s.rank_load, "", "per position in the expert-parallel group, over the uniform share");
  }
};

/** `expert_routing`: the routing the planner priced the experts' compute with (a mixture of experts with expert
 * parallelism). */
struct ReportExpertRouting {
  double mean_max_load = 0.0;
  double worst_max_load = 0.0;
  double dropped_fraction = 0.0;
  std::vector<ReportExpertLayer> layers;

  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("mean_max_load", s.mean_max_load, "", "the busiest rank's load, averaged over the layers");
    f.field("worst_max_load", s.worst_max_load, "", "the busiest rank's load in the worst layer");
    f.field("dropped_fraction", s.dropped_fraction, "", "of all layers' copies, by the capacity factor");
    f.field("layers", s.layers, "", "per layer");
  }
};

/** One op of `layer_ops`. */
struct ReportOp {
  std::string name;
  double forward_s = 0.0;
  double backward_s = 0.0;
  double forward_flops = 0.0;
  double forward_fraction_of_peak = 0.0;

  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("name", s.name, "", "as TransformerModel names it (qkv_projection, attention_core, mlp_up, ...)");
    f.field("forward_s", s.forward_s, "s", "one micro-batch on one rank, the launch overhead included");
    f.field("backward_s", s.backward_s, "s", "input and weight gradients, without recomputation");
    f.field("forward_flops", s.forward_flops, "flop", "model flops of the forward (attention at full s x s)");
    f.field("forward_fraction_of_peak", s.forward_fraction_of_peak, "",
            "forward flops over the forward time, over the data type's dense peak");
  }
};

/** `layer_ops/simulated`: a layer's passes as one rank ran them in the simulation. */
struct ReportLayerPasses {
  std::int64_t rank = 0;
  double forward_s = 0.0;
  double backward_s = 0.0;
  std::int64_t forward_layers = 0;
  std::int64_t backward_layers = 0;

  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("rank", s.rank, "", "the rank timed (rank 0: the first pipeline stage's first tensor rank)");
    f.field("forward_s", s.forward_s, "s",
            "mean over the rank's forward passes of its transformer layers in the first iteration, each from the end "
            "of the unit before it in the pass (or the pass's start, its input arrived) to its own end: compute, "
            "exposed tensor-parallel (and context, expert) communication and waits for the group included; the "
            "time per layer that Korthikanti et al. 2022 (Table 4) publish");
    f.field("backward_s", s.backward_s, "s", "the same for the backward passes, recomputation included");
    f.field("forward_layers", s.forward_layers, "", "layer passes averaged (layers x micro-batches)");
    f.field("backward_layers", s.backward_layers, "", "layer passes averaged");
  }
};

/** `layer_ops`: a transformer's ops priced one by one (model training of a transformer): where a layer's time goes. */
struct ReportLayerOps {
  std::int64_t micro_batch = 0;
  double layer_forward_s = 0.0;
  double layer_backward_s = 0.0;
  std::vector<ReportOp> layer;
  std::vector<ReportOp> outer;
  std::optional<ReportLayerPasses> simulated;

  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("micro_batch", s.micro_batch, "", "sequences the ops are priced for");
    f.field("layer_forward_s", s.layer_forward_s, "s", "the layer's ops summed");
    f.field("layer_backward_s", s.layer_backward_s, "s", "the layer's ops summed, without recomputation");
    f.field("layer", s.layer, "",
            "one layer's ops on one rank of the tensor (and expert, context) split, in execution order (a mixture "
            "of experts: an expert layer, routing uniform); priced alone, before recomputation and overlaps");
    f.field("outer", s.outer, "", "the embedding, final norm, logits and loss");
    f.field("simulated", s.simulated, "",
            "a layer's passes as simulated on one rank; absent where the plan runs each pass's layers as one compute "
            "(`strategy/tensor_collectives/granularity: pass` without ZeRO-3, experts across ranks or context "
            "parallelism), or when the timed rank did not run its iteration to the end");
  }
};

/** One element of `pipeline_stages`: means over the stage's ranks (model parallelism). */
struct ReportStage {
  std::int64_t stage = 0;
  std::optional<std::int64_t> ranks;
  std::optional<double> compute;
  std::optional<double> tensor_exposed;
  std::optional<double> pipeline_exposed;
  std::optional<double> data_exposed;
  std::optional<double> expert_exposed;
  std::optional<double> context_exposed;
  std::optional<double> bubble;
  std::optional<double> bubble_fraction;
  std::optional<ReportMemory> memory;

  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("stage", s.stage, "", "its index");
    f.field("ranks", s.ranks, "", "ranks of the stage; absent when out of memory");
    f.field("compute_s", s.compute, "s", "per rank; absent when out of memory");
    f.field("tensor_exposed_s", s.tensor_exposed, "s", "per rank; absent when out of memory");
    f.field("pipeline_exposed_s", s.pipeline_exposed, "s", "per rank, bubble included; absent when out of memory");
    f.field("data_exposed_s", s.data_exposed, "s", "per rank; absent when out of memory");
    f.field("expert_exposed_s", s.expert_exposed, "s",
            "per rank, in the experts' all-to-alls; expert parallelism only, absent when out of memory");
    f.field("context_exposed_s", s.context_exposed, "s",
            "per rank, exchanging keys and values on the context group; context parallelism only, absent when out "
            "of memory");
    f.field("bubble_s", s.bubble, "s", "per rank; absent when out of memory");
    f.field("bubble_fraction", s.bubble_fraction, "", "1 - compute / makespan; absent when out of memory");
    f.field("memory_per_gpu", s.memory, "", "per GPU of the stage, when known");
  }
};

/** One element of `ranks`. */
struct ReportRank {
  std::int64_t rank = 0;
  std::int64_t node = 0;
  std::int64_t local_gpu = 0;
  std::uint64_t samples = 0;
  double compute = 0.0;
  double communication = 0.0;
  double wait = 0.0;
  double tail_idle = 0.0;
  double busy = 0.0;
  double idle = 0.0;
  double finish = 0.0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t messages_sent = 0;
  double overlapped_communication = 0.0;
  double stream_wait = 0.0;
  std::optional<std::int64_t> stage;
  std::optional<double> tensor_exposed;
  std::optional<double> pipeline_exposed;
  std::optional<double> data_exposed;
  std::optional<double> expert_exposed;
  std::optional<double> context_exposed;
  std::optional<double> bubble;
  std::optional<double> data_loading;

  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("rank", s.rank, "", "its index");
    f.field("node", s.node, "", "the node of its GPU");
    f.field("local_gpu", s.local_gpu, "", "its GPU's index in the node");
    f.field("samples", s.samples, "samples", "the samples it was given");
    f.field("compute_s", s.compute, "s", "computing");
    f.field("communication_s", s.communication, "s", "transfers moving (exposed)");
    f.field("wait_s", s.wait, "s", "blocked in a collective on a peer");
    f.field("tail_idle_s", s.tail_idle, "s", "finished early, waiting for the makespan");
    f.field("busy_s", s.busy, "s", "compute_s + communication_s");
    f.field("idle_s", s.idle, "s", "wait_s + data_loading_s + tail_idle_s");
    f.field("finish_s", s.finish, "s", "when it finished");
    f.field("bytes_sent", s.bytes_sent, "B", "sent by the rank");
    f.field("bytes_received", s.bytes_received, "B", "received by the rank");
    f.field("messages_sent", s.messages_sent, "", "point-to-point messages sent");
    f.field("overlapped_communication_s", s.overlapped_communication, "s",
            "collectives on the communication stream hidden behind compute");
    f.field("stream_wait_s", s.stream_wait, "s", "blocked on the communication stream (part of communication_s)");
    f.field("stage", s.stage, "", "pipeline stage; model parallelism only");
    f.field("tensor_exposed_s", s.tensor_exposed, "s",
            "blocked in tensor-parallel collectives; model parallelism only");
    f.field("pipeline_exposed_s", s.pipeline_exposed, "s", "blocked on a pipeline peer; model parallelism only");
    f.field("data_exposed_s", s.data_exposed, "s", "blocked in data-parallel collectives; model parallelism only");
    f.field("expert_exposed_s", s.expert_exposed, "s",
            "blocked in the experts' all-to-alls, waits for the busiest expert rank included; expert parallelism only");
    f.field("context_exposed_s", s.context_exposed, "s",
            "blocked exchanging keys and values on the context group (ring hops or all-gathers), waits for peers "
            "included; context parallelism only");
    f.field("bubble_s", s.bubble, "s", "waiting for a pipeline peer to send; model parallelism only");
    f.field("data_loading_s", s.data_loading, "s",
            "idle while its host hands over the next micro-batch (workload/data_loading); only when that is set");
  }
};

/** `energy`: power x time per GPU state from the simulated intervals, nodes, switches and PUE
 * (docs/energy-and-cost.md).
 */
struct ReportEnergy {
  std::string method;
  double gpu_compute_power = 0.0;
  double gpu_communication_power = 0.0;
  double gpu_idle_power = 0.0;
  double node_power = 0.0;
  std::int64_t nodes = 0;
  double switch_power = 0.0;
  std::int64_t switches = 0;
  double pue = 1.0;
  double gpu_compute_time = 0.0;
  double gpu_communication_time = 0.0;
  double gpu_idle_time = 0.0;
  double gpu_compute = 0.0;
  double gpu_communication = 0.0;
  double gpu_idle = 0.0;
  double nodes_energy = 0.0;
  double switches_energy = 0.0;
  double it = 0.0;
  double facility = 0.0;
  double average_power = 0.0;
  double per_iteration = 0.0;
  std::optional<double> per_token;
  std::optional<double> budget_tokens;
  std::optional<double> budget;
  std::vector<std::string> assumed;

  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("method", s.method, "", "how the energy was computed");
    f.field("gpu_compute_power_w", s.gpu_compute_power, "W", "a GPU computing: compute_power_fraction x TDP");
    f.field("gpu_communication_power_w", s.gpu_communication_power, "W",
            "a GPU moving exposed transfers: communication_power_fraction x TDP");
    f.field("gpu_idle_power_w", s.gpu_idle_power, "W", "a GPU waiting or idle: the profile's idle power");
    f.field("node_power_w", s.node_power, "W", "a node beyond its GPUs");
    f.field("nodes", s.nodes, "", "nodes of the cluster");
    f.field("switch_power_w", s.switch_power, "W", "a network switch");
    f.field("switches", s.switches, "", "network switches");
    f.field("pue", s.pue, "", "facility power / IT power");
    f.field("gpu_compute_gpu_s", s.gpu_compute_time, "GPU-s",
            "computing, all GPUs (overlapped communication included)");
    f.field("gpu_communication_gpu_s", s.gpu_communication_time, "GPU-s", "exposed transfers moving, all GPUs");
    f.field("gpu_idle_gpu_s", s.gpu_idle_time, "GPU-s", "neither: waits, the tail and gaps, all GPUs");
    f.field("gpu_compute_j", s.gpu_compute, "J", "gpu_compute_gpu_s x gpu_compute_power_w");
    f.field("gpu_communication_j", s.gpu_communication, "J", "gpu_communication_gpu_s x gpu_communication_power_w");
    f.field("gpu_idle_j", s.gpu_idle, "J", "gpu_idle_gpu_s x gpu_idle_power_w");
    f.field("nodes_j", s.nodes_energy, "J", "nodes x node_power_w x makespan");
    f.field("switches_j", s.switches_energy, "J", "switches x switch_power_w x makespan");
    f.field("it_j", s.it, "J", "the five above: the IT equipment's energy for the run (all iterations)");
    f.field("facility_j", s.facility, "J", "it_j x pue");
    f.field("average_power_w", s.average_power, "W", "facility_j / makespan: the cluster's average facility power");
    f.field("per_iteration_j", s.per_iteration, "J", "facility_j / iterations");
    f.field("per_token_j", s.per_token, "J", "facility_j / tokens of the run; model training only");
    f.field("budget_tokens", s.budget_tokens, "tokens", "the scenario's /budget/tokens; model training only");
    f.field("budget_j", s.budget, "J", "per_token_j x budget_tokens; model training only");
    f.field("assumed", s.assumed, "",
            "scenario fields that took their default (examples or assumptions), /budget/tokens among them");
  }
};

/** `cost`: prices from the scenario (defaults are labelled examples), in its currency. */
struct ReportCost {
  PricingModel model = PricingModel::Cloud;
  std::string currency;
  bool example_prices = false;
  double gpu_hour_rate = 0.0;
  double hardware = 0.0;
  double electricity = 0.0;
  double total = 0.0;
  double per_iteration = 0.0;
  std::optional<double> per_million_tokens;
  std::optional<double> budget_tokens;
  std::optional<double> budget;
  std::optional<double> budget_days;
  std::optional<double> budget_gpu_hours;
  std::vector<std::string> assumed;

  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("model", s.model, "", "cloud: GPU-hours at a price; owned: amortised purchase plus electricity");
    f.field("currency", s.currency, "", "of every cost here");
    f.field("example_prices", s.example_prices, "", "a price of the pricing model took its example default");
    f.field("gpu_hour_rate", s.gpu_hour_rate, "currency/GPU-hour",
            "cloud: the price; owned: purchase / (lifetime hours)");
    f.field("hardware", s.hardware, "currency", "GPU-hours of the run x gpu_hour_rate");
    f.field("electricity", s.electricity, "currency",
            "owned: facility kWh x electricity price; cloud: 0 (in the price)");
    f.field("total", s.total, "currency", "hardware + electricity, the run (all iterations)");
    f.field("per_iteration", s.per_iteration, "currency", "total / iterations");
    f.field("per_million_tokens", s.per_million_tokens, "currency", "model training only");
    f.field("budget_tokens", s.budget_tokens, "tokens", "the scenario's /budget/tokens; model training only");
    f.field("budget", s.budget, "currency", "to train budget_tokens; model training only");
    f.field("budget_days", s.budget_days, "days", "wall-clock time to train budget_tokens; model training only");
    f.field("budget_gpu_hours", s.budget_gpu_hours, "GPU-hours", "to train budget_tokens; model training only");
    f.field("assumed", s.assumed, "", "scenario fields that took their example default: prices, /budget/tokens");
  }
};

/** report.json, whole. */
struct ReportDocument {
  std::string schema = "partsim.report";
  std::int64_t schema_version = kReportSchemaVersion;
  std::string partsim_version;
  ReportScenario scenario;
  ReportEngine engine;
  std::string strategy;
  nlohmann::json gpu_profile = nlohmann::json::object();
  Verdict verdict = Verdict::Simulated;
  std::optional<ReportSummary> summary;
  std::optional<ReportMemory> memory_per_gpu;
  std::optional<std::vector<ReportCollective>> collectives;
  std::optional<ReportClassSplit> class_split;
  std::optional<ReportCoordinator> coordinator;
  std::optional<ReportBalancing> balancing;
  std::optional<std::vector<ReportStage>> pipeline_stages;
  std::optional<ReportEnergy> energy;
  std::optional<ReportCost> cost;
  std::optional<ReportServing> serving;
  std::optional<ReportParameterServer> parameter_server;
  std::optional<ReportReliability> reliability;
  std::optional<ReportStragglers> stragglers;
  std::optional<ReportExpertRouting> expert_routing;
  std::optional<ReportLayerOps> layer_ops;
  std::vector<ReportRank> ranks;

  bool out_of_memory() const { return verdict == Verdict::OutOfMemory; }
  /** GPUs of the run: the summary's, or the cluster's of the scenario input when there is no summary (out of
   * memory; report_document_from_json checks that the input has them). */
  std::int64_t gpus() const;

  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("schema", s.schema, "", "always \"partsim.report\"");
    f.field("schema_version", s.schema_version, "", "bumped on any incompatible change");
    f.field("partsim_version", s.partsim_version, "", "of the partsim that wrote the report");
    f.field("scenario", s.scenario, "", "what was asked");
    f.field("engine", s.engine, "", "how it was simulated");
    f.field("strategy", s.strategy, "", "the plan in one line");
    f.field("gpu_profile", s.gpu_profile, "", "the GPU profile used, as its own JSON (docs/calibrate.md)");
    f.field("verdict", s.verdict, "", "out_of_memory: the plan does not fit, nothing was simulated");
    f.field("summary", s.summary, "", "headline figures; absent when out of memory");
    f.field("memory_per_gpu", s.memory_per_gpu, "", "model training only");
    f.field("collectives", s.collectives, "", "one per kind of collective that ran; absent when none");
    f.field("class_split", s.class_split, "", "class-aware splits only");
    f.field("coordinator", s.coordinator, "", "runs whose coordinator spent time (serial part, set-up)");
    f.field("balancing", s.balancing, "", "run-time balancing only");
    f.field("pipeline_stages", s.pipeline_stages, "", "model parallelism only");
    f.field("energy", s.energy, "", "simulated runs on a GPU profile with power figures");
    f.field("cost", s.cost, "", "with energy");
    f.field("serving", s.serving, "", "serving workloads only (docs/serving.md)");
    f.field("parameter_server", s.parameter_server, "",
            "strategy kind parameter_server only: stale gradients (docs/stale-gradients.md)");
    f.field("reliability", s.reliability, "", "scenarios with /reliability (model training)");
    f.field("stragglers", s.stragglers, "", "scenarios with /cluster/stragglers (docs/stragglers.md)");
    f.field("layer_ops", s.layer_ops, "", "model training of a transformer: each op's price");
    f.field("expert_routing", s.expert_routing, "",
            "a mixture of experts with expert parallelism: each layer's load per expert-parallel rank");
    f.field("ranks", s.ranks, "", "one per rank; empty when out of memory");
  }
};

/** Every numeric field of `memory_per_gpu` in report.json's order (by key). */
std::vector<ReportFigure> figures(const ReportMemory& memory);

/** The document of a run's report. */
ReportDocument make_report_document(const Report& report, const Scenario& scenario);

/** report.json's value: exactly what partsim writes. */
nlohmann::json to_json(const ReportDocument& document);

/** Reads report.json strictly: a missing key, an unknown key or a wrong type is an InputError naming `source`
 * and the JSON pointer; so is another schema or schema version. */
ReportDocument report_document_from_json(const nlohmann::json& json, const std::string& source);

/** docs/report-reference.md, generated from the field tables. */
std::string report_reference_markdown();

} // namespace partsim
