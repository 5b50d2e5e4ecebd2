// Scenario: the user's question as plain value types (cluster, workload, strategy, run), parsed once from JSON.
#pragma once

#include "partsim/input/energy_cost.hpp"
#include "partsim/input/hardware.hpp"
#include "partsim/input/labels.hpp"
#include "partsim/input/network.hpp"
#include "partsim/input/reliability.hpp"
#include "partsim/input/stragglers.hpp"
#include "partsim/input/workload_library.hpp"
#include "partsim/model/collective_cost.hpp"
#include "partsim/model/expert_routing.hpp"
#include "partsim/plan/class_split.hpp"
#include "partsim/ps/ps_spec.hpp"
#include "partsim/serving/serving_spec.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace partsim {

inline constexpr int kScenarioSchemaVersion = 1;

/** Largest cluster a scenario may describe; larger ones are refused at parse time, not by memory exhaustion. */
inline constexpr std::int64_t kMaxGpus = 65536;
/** Transformer Engine's userbuffers defaults for --tp-comm-overlap (transformer_engine/pytorch/module/base.py,
 * initialize_ub, get_default_config, TE 2.x): the pipelined and bulk overlaps run their transfers on 16 SMs and take
 * them from the GEMM (set_sm_margin), the pipelined one in 4 chunks; the ring exchange moves its chunks with the copy
 * engines (use_ce) on 1 SM without a margin, in one step per tensor rank. */
inline constexpr int kTpOverlapCommSms = 16;
inline constexpr int kTpOverlapPipelineSplits = 4;
/** SMs an overlapped NCCL collective holds by default (GradientSyncSpec::comm_sms): one thread block per channel, and
 * NCCL's own logs show 16 collective channels on an 8-GPU NVSwitch node of H800s ("16 coll channels", NVIDIA/nccl
 * issue 892) and up to its maximum of 32 elsewhere: an assumption, said so in the report. */
inline constexpr int kNcclStreamSms = 16;

/** A node's speed over time, as multipliers of its speed factor: (time, factor) points, optionally repeating.
 * The planner does not see these: they are what nominal speeds hide (throttling, interference). */
struct SpeedChange {
  int node = 0;
  std::vector<std::pair<double, double>> points; ///< (s, factor), times increasing, first at 0
  double period = -1.0;                          ///< s; the points repeat with this period when > 0
};

struct ClusterSpec {
  int nodes = 1;
  int gpus_per_node = 1;
  GpuProfile gpu;
  LinkSpec intra_node;                    ///< GPU to GPU inside a node (NVLink/NVSwitch, PCIe)
  NetworkSpec network;                    ///< between nodes
  std::vector<double> node_speed_factor;  ///< one per node; 1 = nominal, 0.5 = half speed
  std::vector<SpeedChange> speed_changes; ///< unplanned speed changes during the run
  /** `/cluster/stragglers`: GPUs slowed for the run or for single iterations (unplanned too); absent without. */
  std::optional<StragglerSpec> stragglers;

  int gpu_count() const { return nodes * gpus_per_node; }
};

/** A generic data job: every sample costs the same compute and reads the same bytes. With gradient bytes it is
 * training: each iteration every rank processes its share of the samples, then gradients are synchronised. */
struct DataJob {
  std::uint64_t samples = 0;        ///< samples per iteration (the whole data set for a pure processing job)
  double flop_per_sample = 0.0;     ///< flop
  double bytes_read_per_sample = 0; ///< bytes read from GPU memory per sample
  std::string data_type = "bf16";   ///< selects the GPU's peak rate
  std::int64_t iterations = 1;
  double gradient_bytes = 0.0; ///< bytes synchronised per iteration (0: no training state)
  /** Share of the one-GPU time per iteration that no partition can share (data loading, a reduction, a serial
   * stage): run on the coordinator before the partitions start. Amdahl's 1 - f. */
  double serial_fraction = 0.0;
  /** Class labels of the samples (a CSV column or generated), for class-aware splitting; shared, never copied. */
  std::shared_ptr<const Labels> labels;
};

/** The optimizer whose state every data-parallel replica keeps (mixed precision: an fp32 master copy of the weights
 * when the training data type is narrower than fp32). */
enum class Optimizer { Adam, SgdMomentum, Sgd };

/** A training stack whose default kernel choices a scenario can take at once (`/workload/stack`); `custom` takes each
 * field's own default. Each preset is documented with its sources in docs/scenario-reference.md. */
enum class TrainingStack { Custom, MegatronLm2021, MegatronCore2024, Torchtitan };

template <>
struct EnumNames<TrainingStack> {
  static constexpr std::array<EnumEntry<TrainingStack>, 4> entries{
      {{TrainingStack::Custom, "custom"},
       {TrainingStack::MegatronLm2021, "megatron-lm-2021"},
       {TrainingStack::MegatronCore2024, "megatron-core-2024"},
       {TrainingStack::Torchtitan, "torchtitan"}}};
};

inline std::string_view to_string(TrainingStack stack) {
  return enum_name(stack);
}

/** The kernel choices a stack makes by default (TrainingStack::Custom: TransformerKernels' defaults). */
TransformerKernels stack_kernels(TrainingStack stack);
/** The gradients' type a stack uses for training in `data_type`: fp32 for the Megatron stacks in bf16 (their
 * arguments.py forces accumulate_allreduce_grads_in_fp32), else `data_type`. */
std::string stack_gradient_data_type(TrainingStack stack, const std::string& data_type);

/** Training a model from models/workloads (a transformer or a CNN) for `iterations` iterations of `global_batch`
 * sequences (or images), each replica running micro-batches of `micro_batch` with gradient accumulation. */
struct ModelTraining {
  WorkloadSpec model; ///< the config, with any sequence_length override applied
  TrainingStack stack = TrainingStack::Custom;
  /** The stack's kernel choices, with the scenario's own choices over them (transformers). */
  TransformerKernels kernels;
  std::int64_t global_batch = 1;  ///< sequences (images) per iteration over all replicas
  std::int64_t micro_batch = 1;   ///< sequences (images) per forward/backward pass on one GPU
  std::string data_type = "bf16"; ///< compute precision; also the weights' storage
  /** The gradients' type (accumulation, data-parallel reduction, the optimizer's reads); empty: `data_type`. */
  std::string gradient_data_type;
  Recomputation recomputation = Recomputation::None;
  /** With full recomputation, Megatron-Core's block method (`--recompute-method block --recompute-num-layers N`):
   * only the first N layers of each model chunk of a pipeline stage rerun their forward, the others keep their
   * activations; 0: every layer (the uniform method, one layer per checkpoint). model_parallel strategies only. */
  std::int64_t recompute_num_layers = 0;
  Optimizer optimizer = Optimizer::Adam;
  /** Clip gradients by their global L2 norm before the step (Megatron-LM's --clip-grad 1.0, torchtitan's max_norm
   * 1.0): the step first reads every gradient once for the norm. */
  bool gradient_clipping = true;
  /** Dynamic loss scaling (fp16 mixed precision: Megatron-LM's --fp16, PyTorch's GradScaler): the step first unscales
   * every gradient and checks it for infinities (one read and one write). Default: with `data_type` fp16. */
  bool loss_scaling = false;
  std::int64_t iterations = 1;
  /** Bytes per GPU outside the model's tensors: CUDA context, library workspaces, allocator slack. */
  double workspace = 0.0;
  /** s per micro-batch a rank that reads the input waits for its host to hand over the batch (the part of data
   * loading its loader's workers have not hidden); 0: none, an assumption the report states. */
  double data_loading = 0.0;
  /** `/workload/expert_routing`: how a mixture of experts' routers spread the tokens (uniform by default). */
  ExpertRouting expert_routing;

  /** The type gradients are accumulated and reduced in. */
  const std::string& gradient_type() const { return gradient_data_type.empty() ? data_type : gradient_data_type; }

  /** The transformer with this training's kernels (is_transformer() only). */
  TransformerModel transformer() const { return model.transformer(kernels); }
};

/** A collective alone, repeated `iterations` times on every GPU of the cluster (what nccl-tests measures). */
struct CollectiveBenchmark {
  CollectiveOp op = CollectiveOp::AllReduce;
  std::uint64_t bytes = 0; ///< nccl-tests' size (see collective.hpp)
  std::int64_t iterations = 1;
  int root = 0; ///< broadcast
  /** Computes nothing; the GPU hosts still need a speed: bf16's peak, or the profile's first where it has none. */
  std::string data_type = "bf16";
};

using Workload = std::variant<DataJob, ModelTraining, CollectiveBenchmark, ServingWorkload>;

/** The compute data type of a workload (always one the cluster's GPU profile has a peak rate for). */
std::string workload_data_type(const Workload& workload);
/** Iterations of a workload. */
std::int64_t workload_iterations(const Workload& workload);

/** A collective's algorithm and fidelity as the scenario asks: empty for `auto` (chosen when planning). */
struct CollectiveChoice {
  std::optional<CollectiveAlgorithm> algorithm;
  std::optional<Fidelity> fidelity;
  std::optional<int> channels; ///< rings of a ring across nodes (NCCL_MIN/MAX_NCHANNELS); empty: one per NIC
  std::optional<CollectiveProtocol> protocol; ///< NCCL_PROTO; empty: `auto` (NCCL's tuner)
};

enum class GradientSync { None, AllReduce };

/** How data-parallel replicas synchronise gradients: one all-reduce per bucket of `bucket_bytes` of gradients
 * (PyTorch DDP's buckets), overlapping the rest of the backward pass when `overlap` is on (model training). */
struct GradientSyncSpec {
  CollectiveChoice collective;
  double bucket_bytes = 25.0 * 1024 * 1024; ///< PyTorch DDP's default bucket_cap_mb = 25
  bool overlap = true;
  /** ZeRO-1/2: the updated parameters' all-gathers, one per bucket, queued on the communication stream after the
   * optimizer step and waited for by the next forward pass bucket by bucket (Megatron-Core's
   * --overlap-param-gather); otherwise they block after the step. */
  bool overlap_param_gather = false;
  /** Pipeline stages after the first reduce their gradients (and gather their parameters) in one bucket per model
   * chunk, as Megatron-Core does: their data-parallel traffic is off the critical path (the megatron-core-2024
   * stack's default). */
  bool one_bucket_after_first_stage = false;
  /** SMs the collectives of the communication stream hold while they run (NCCL: one thread block, on one SM, per
   * channel), so that a GPU of S SMs computes at (S - comm_sms) / S beside them; 0: no contention (also where the
   * GPU profile gives no sm_count). */
  int comm_sms = 0;
};

/** How work reaches the GPUs when it is handed out at run time by a dispatcher on a coordinator host. */
enum class BalancingPolicy {
  Static,       ///< each GPU's partitions, sent once up front
  WorkQueue,    ///< GPUs pull fixed chunks one at a time
  MeasuredRate, ///< chunks sized and ordered by each GPU's measured processing rate
  WorkStealing, ///< static start; idle GPUs steal half of the most loaded GPU's remaining samples
};

struct Balancing {
  BalancingPolicy policy = BalancingPolicy::Static;
  std::uint64_t chunk_samples = 1; ///< work_queue: samples per chunk; others: the smallest chunk
  double dispatch_overhead = 0.0;  ///< s of coordinator (or victim) time per dispatch or steal
  double sample_bytes = 0.0;       ///< bytes moved per sample from the coordinator (or victim) to the GPU
  double request_bytes = 64.0;     ///< bytes of a request or steal message
};

/** What a coordinator does around each iteration of the partitions (seed situations 6 and 7). */
struct Coordination {
  double per_partition = 0.0;  ///< s of coordinator time per partition per iteration (scheduling, set-up)
  double data_bytes = 0.0;     ///< input bytes per iteration, sent from the coordinator to the partitions by share
  double result_bytes = 0.0;   ///< bytes each partition returns to the coordinator per iteration
  double boundary_bytes = 0.0; ///< bytes exchanged each way between neighbouring partitions p and p+1 (halos)
};

/** Class-aware splitting of labelled samples into the partitions (seed situation 4), done by the coordinator
 * before the first iteration. */
struct ClassSplitSpec {
  SplitMethod method = SplitMethod::Stratified;
  std::uint64_t starved_threshold = 1; ///< a partition with fewer minority samples than this is starved
  std::uint64_t oversample_target = 0; ///< stratified_oversample: minority samples per partition (0: threshold)
  std::string minority_class;          ///< a class name; empty: the rarest class
  double scan_per_sample = 0.0;        ///< s of coordinator time per sample for a stratified pass over the labels
  double replicate_per_sample = 0.0;   ///< s of coordinator time per replicated sample
};

/** Data parallelism: the samples are cut into partitions by share; partition p runs on GPU p mod G. */
struct DataParallel {
  int partitions = 1;
  std::string shares_kind = "balanced"; ///< "balanced", "explicit", "skewed" or "by_speed"
  std::vector<double> shares;           ///< resolved, one per partition, summing to 1
  GradientSync sync = GradientSync::None;
  GradientSyncSpec gradient_sync;     ///< how, when sync is not None
  std::optional<Balancing> balancing; ///< absent: the data is already on the GPUs
  std::optional<Coordination> coordination;
  std::optional<ClassSplitSpec> class_split;
};

/** The strategy of a collective benchmark: which algorithm at which fidelity. */
struct CollectiveStrategy {
  CollectiveChoice choice;
};

/** Pipeline schedules: GPipe (all forwards, then all backwards), 1F1B (PipeDream-Flush: warm-up forwards, then one
 * forward and one backward in turn, then the remaining backwards) and interleaved 1F1B with virtual stages (Narayanan
 * et al. 2021: every GPU holds `virtual_stages` non-adjacent chunks of layers). */
enum class PipelineSchedule { GPipe, OneFOneB, Interleaved };

/** The three axes of a hybrid split, for rank placement (context parallelism follows the tensor axis). */
enum class ParallelAxis { Tensor, Data, Pipeline };

/** How the ranks of a context-parallel group exchange keys and values for attention over the whole sequence:
 * `p2p` passes them around the group's ring, one block per step, overlapped with the attention of the block held
 * (Megatron-Core / Transformer Engine's default `cp_comm_type`); `all_gather` gathers them all before the attention and
 * reduce-scatters their gradients after its backward (Llama 3's, exposed). */
enum class ContextComm { P2P, AllGather, AllToAll };

/** How an expert-parallel group's all-to-alls move the tokens: `direct` (NCCL's all-to-all, every copy to its expert's
 * rank) or `two_hop` (DeepEP's internode kernels: one copy per node over the network to the rank of the sender's
 * rail, forwarded over NVLink; CollectiveAlgorithm::TwoHop). */
enum class ExpertDispatch { Direct, TwoHop };

/** Model parallelism (Megatron-LM style) with data parallelism across replicas: `data` x `tensor` x `pipeline` GPUs.
 * Each transformer layer is split `tensor` ways (column/row split of attention and MLP: two all-reduces of b·s·h
 * elements per layer in the forward pass, two in the backward pass, on the tensor group); the layers are cut into
 * `pipeline` stages (x `virtual_stages` chunks when interleaved) joined by point-to-point transfers of activations
 * and gradients; the replicas synchronise gradients per stage on the data group, sharded as ZeRO asks. */
struct ModelParallel {
  int data = 1;
  int tensor = 1;
  int pipeline = 1;
  /** Rank order, fastest-varying axis first: rank = t + T·(d + D·p) for the default {tensor, data, pipeline}
   * (Megatron-LM's order: tensor groups inside a node). GPU = rank. */
  std::array<ParallelAxis, 3> placement{ParallelAxis::Tensor, ParallelAxis::Data, ParallelAxis::Pipeline};
  PipelineSchedule schedule = PipelineSchedule::OneFOneB;
  int virtual_stages = 1; ///< chunks per GPU (interleaved only; 1 otherwise)
  /** Interleaved only: micro-batches run through one chunk in a row before the next chunk (Megatron-Core's
   * --microbatch-group-size-per-virtual-pipeline-stage, the Llama 3 paper's flexible N); 0: the pipeline degree
   * (Megatron-LM's depth-first schedule). */
  int microbatch_group = 0;
  std::vector<int> stage_layers;  ///< layers per pipeline stage (x virtual stages), empty: an even split
  bool sequence_parallel = false; ///< reduce-scatter + all-gather instead of all-reduce; activations split by T
  /** Megatron-Core's --tp-comm-overlap: the tensor-parallel all-gathers and reduce-scatters of every layer run beside
   * its GEMMs as Transformer Engine's userbuffers run them (ring exchange, pipelined chunks, bulk). */
  bool tp_comm_overlap = false;
  /** Megatron's asynchronous tensor-parallel backward of a column-parallel GEMM (without userbuffers): with sequence
   * parallelism the input re-gathered beside the input-gradient GEMM and the input gradient reduce-scattered beside
   * the weight-gradient GEMM, without it the input gradient all-reduced beside the weight-gradient GEMM; each
   * collective's NCCL kernel taking SMs from the GEMM while it runs (ComputeStep::contended). */
  bool tp_async_backward = false;
  int expert = 1; ///< expert-parallel degree EP: divides data and the model's experts (mixture of experts only)
  /** Expert tensor-parallel degree: 1 (every routed expert whole on its rank) or `tensor` (each expert's FFN split
   * over the tensor group, the copies routed to it gathered over the group before its GEMMs and reduce-scattered
   * after: Megatron-Core's default before --expert-tensor-parallel-size, and that option set to the tensor degree). */
  int expert_tensor = 1;
  ExpertDispatch expert_dispatch = ExpertDispatch::Direct;
  /** Context-parallel degree C: each sequence split over C ranks (2C chunks, rank i holding chunks i and 2C-1-i so
   * that causal attention work is even); the C ranks of a group hold the same weights and synchronise gradients with
   * the data-parallel replicas (a data group of D x C ranks). Placed right after the tensor axis. */
  int context = 1;
  ContextComm context_comm = ContextComm::P2P;
  int zero = 0; ///< ZeRO stage: 0 plain all-reduce, 1 optimizer states, 2 + gradients, 3 + parameters (FSDP)
  GradientSync sync = GradientSync::AllReduce; ///< None: replicas do not synchronise (a what-if)
  GradientSyncSpec gradient_sync;      ///< the data-parallel collectives (algorithm, fidelity, bucket size, overlap)
  CollectiveChoice tensor_collectives; ///< algorithm and fidelity of the tensor-parallel collectives
  /** true: one collective per tensor-parallel all-reduce (2 per layer and pass); false: the all-reduces of a pass over
   * a stage fused into one of the same bytes (latency counted once: for very large runs). */
  bool tensor_per_layer = true;

  int gpus() const { return data * tensor * pipeline * context; }
  /** Ranks holding one weight shard (what a data group spans and ZeRO shards over): data x context. */
  int data_ranks() const { return data * context; }
};

/** The strategy of a serving workload: its stages' pools say where each runs (serving_spec.hpp). */
struct ServingStrategy {};

/** `parameter_server`: workers and server shards under a consistency policy (ps/ps_spec.hpp), with a data job or
 * model training. */
using Strategy = std::variant<DataParallel, CollectiveStrategy, ModelParallel, ServingStrategy, ParameterServer>;

enum class NetworkModel { CM02, LV08 };

struct OutputSelection {
  bool table = true;
  bool report_json = true;
  bool ranks_csv = true;
  bool trace = true;
  /** reliability_trace.json (a run with /reliability): with `trace`, or alone without trace.json (the replay's
   * timeline is small where the iteration's may not be). */
  bool reliability_trace = true;
};

struct RunSpec {
  std::uint64_t seed = 1;
  NetworkModel network_model = NetworkModel::CM02;
  OutputSelection outputs;
  std::uint64_t max_events = 200'000'000; ///< refuse runs that would simulate more messages+executions than this
  bool fold_replicas = true; ///< simulate one representative per class of interchangeable replicas (engine.hpp)
  /** The engine's lean paths (docs/engine.md, "Lean engine"): flows and analytic collectives run by a few driver
   * actors and kernel timers while their members only wait, overlapped streams of such collectives without an actor,
   * executions alone on a GPU of constant speed as sleeps of amount / speed. false: every member runs its part in its
   * own actor and every execution is a SimGrid execution. The same figures (to the last bits of sums). */
  bool lean_engine = true;
};

/** A published measurement the scenario reproduces (the cases of validation/): which figure of report.json to compare
 * with which value, and where the value was published. The simulation does not read it. */
struct PublishedFigure {
  std::string figure; ///< a JSON pointer into report.json ("/summary/makespan_s")
  double value = 0.0; ///< in the report figure's unit
  std::string unit;   ///< for the table ("s", "B/s")
  std::string source; ///< the publication: authors, title, table or figure
  std::string url;
  std::string note;  ///< how the set-up was read from the source, what it leaves open
  std::string group; ///< the family of measurements it belongs to, for the summary per group ("" for none)
};

/** One expectation on a report figure (`/expect`): the figure equals `equals`, or is a number within [min, max] and
 * within `tolerance` (relative) of `value`, each bound given or not. Checked after a run (batch/expectations.hpp). */
struct Expectation {
  std::string figure; ///< a JSON pointer into report.json
  std::optional<nlohmann::json> equals;
  std::optional<double> min;
  std::optional<double> max;
  std::optional<double> value;
  double tolerance = 0.0; ///< relative, with `value`
};

struct Scenario {
  std::string source; ///< file path or "<built-in default>", for messages
  std::string name;
  std::string description;
  ClusterSpec cluster;
  Workload workload;
  Strategy strategy;
  RunSpec run;
  EnergySpec energy;                        ///< `/energy`, defaults resolved
  CostSpec cost;                            ///< `/cost`, defaults resolved
  BudgetSpec budget;                        ///< `/budget`
  std::optional<PublishedFigure> published; ///< a validation case's published figure
  std::vector<Expectation> expectations;    ///< `/expect`, by figure pointer (sorted)
  nlohmann::json document;                  ///< the validated input, with overrides applied (echoed in report.json)
  /** `/reliability`: failures and checkpoints of a long training run; absent without the section. */
  std::optional<ReliabilitySpec> reliability;
};

/** One `--set /json/pointer=value` override. The value is JSON when it parses as JSON, else a string. With `remove`
 * (`--unset /json/pointer`) the field is taken out instead, so that its default applies (a search's derived data
 * degree). */
struct Override {
  std::string pointer;
  nlohmann::json value;
  bool remove = false;
};

/** Parses "`/a/b=value`". @throws InputError (source `--set`) when malformed. */
Override parse_override(const std::string& text);

/** Applies overrides in order; a removal of a field that is not there does nothing. @throws InputError naming
 * `--set POINTER` when a pointer has no parent. */
void apply_overrides(nlohmann::json& document, const std::vector<Override>& overrides);

/** Validates a scenario document. `data_dir` holds models/hardware for named GPU profiles. */
Scenario parse_scenario(const nlohmann::json& document, const std::string& source,
                        const std::filesystem::path& data_dir);

/** Reads, overrides and validates a scenario file. */
Scenario load_scenario(const std::filesystem::path& path, const std::vector<Override>& overrides,
                       const std::filesystem::path& data_dir);

/** The built-in default scenario (scenarios/default.json, compiled in). */
Scenario default_scenario(const std::vector<Override>& overrides, const std::filesystem::path& data_dir);

/** Text of the built-in default scenario. */
const std::string& default_scenario_text();

template <>
struct EnumNames<NetworkModel> {
  static constexpr std::array<EnumEntry<NetworkModel>, 2> entries{
      {{NetworkModel::CM02, "CM02"}, {NetworkModel::LV08, "LV08"}}};
};
template <>
struct EnumNames<GradientSync> {
  static constexpr std::array<EnumEntry<GradientSync>, 2> entries{
      {{GradientSync::None, "none"}, {GradientSync::AllReduce, "all_reduce"}}};
};
template <>
struct EnumNames<Optimizer> {
  static constexpr std::array<EnumEntry<Optimizer>, 3> entries{
      {{Optimizer::Adam, "adam"}, {Optimizer::SgdMomentum, "sgd_momentum"}, {Optimizer::Sgd, "sgd"}}};
};
template <>
struct EnumNames<BalancingPolicy> {
  static constexpr std::array<EnumEntry<BalancingPolicy>, 4> entries{
      {{BalancingPolicy::Static, "static"},
       {BalancingPolicy::WorkQueue, "work_queue"},
       {BalancingPolicy::MeasuredRate, "measured_rate"},
       {BalancingPolicy::WorkStealing, "work_stealing"}}};
};
template <>
struct EnumNames<PipelineSchedule> {
  static constexpr std::array<EnumEntry<PipelineSchedule>, 3> entries{{{PipelineSchedule::GPipe, "gpipe"},
                                                                       {PipelineSchedule::OneFOneB, "1f1b"},
                                                                       {PipelineSchedule::Interleaved, "interleaved"}}};
};
template <>
struct EnumNames<ContextComm> {
  static constexpr std::array<EnumEntry<ContextComm>, 3> entries{
      {{ContextComm::P2P, "p2p"}, {ContextComm::AllGather, "all_gather"}, {ContextComm::AllToAll, "all_to_all"}}};
};
template <>
struct EnumNames<ExpertDispatch> {
  static constexpr std::array<EnumEntry<ExpertDispatch>, 2> entries{
      {{ExpertDispatch::Direct, "direct"}, {ExpertDispatch::TwoHop, "two_hop"}}};
};
template <>
struct EnumNames<ParallelAxis> {
  static constexpr std::array<EnumEntry<ParallelAxis>, 3> entries{
      {{ParallelAxis::Tensor, "tensor"}, {ParallelAxis::Data, "data"}, {ParallelAxis::Pipeline, "pipeline"}}};
};

inline std::string to_string(NetworkModel model) {
  return std::string(enum_name(model));
}
inline std::string to_string(GradientSync sync) {
  return std::string(enum_name(sync));
}
inline std::string to_string(Optimizer optimizer) {
  return std::string(enum_name(optimizer));
}
inline std::string to_string(BalancingPolicy policy) {
  return std::string(enum_name(policy));
}
inline std::string to_string(PipelineSchedule schedule) {
  return std::string(enum_name(schedule));
}
inline std::string to_string(ContextComm comm) {
  return std::string(enum_name(comm));
}
inline std::string to_string(ParallelAxis axis) {
  return std::string(enum_name(axis));
}

} // namespace partsim
