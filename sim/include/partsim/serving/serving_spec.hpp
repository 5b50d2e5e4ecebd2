// A serving workload (seed situation 5): requests flowing through a linear pipeline of named stages, each with its
// pool of replicas, service time, batching, queue and the bytes it passes on, plus the orchestration cost per hop.
#pragma once

#include "partsim/common/enum_names.hpp"
#include "partsim/common/random.hpp"
#include "partsim/model/transformer.hpp"

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace partsim {

class JsonReader;
struct ClusterSpec;

/** The shape of a random time. */
enum class DistributionKind { Fixed, Exponential, LogNormal, Gamma, Empirical };

template <>
struct EnumNames<DistributionKind> {
  static constexpr std::array<EnumEntry<DistributionKind>, 5> entries{{{DistributionKind::Fixed, "fixed"},
                                                                       {DistributionKind::Exponential, "exponential"},
                                                                       {DistributionKind::LogNormal, "lognormal"},
                                                                       {DistributionKind::Gamma, "gamma"},
                                                                       {DistributionKind::Empirical, "empirical"}}};
};

/** A random duration given by its mean and coefficient of variation (sd / mean): fixed (cv 0), exponential (cv 1),
 * log-normal or gamma (any cv > 0); or empirical: one of measured `values`, each as likely (mean and cv theirs). */
struct TimeDistribution {
  DistributionKind kind = DistributionKind::Fixed;
  double mean = 0.0;                                 ///< s
  double cv = 0.0;                                   ///< lognormal, gamma; fixed 0, exponential 1
  std::shared_ptr<const std::vector<double>> values; ///< empirical: s, in the file's order
};

/** Draws one value of `d` from `rng` (portable: the same seed gives the same values everywhere). */
double sample(const TimeDistribution& d, Xoshiro256StarStar& rng);

/** Where a stage runs: `nodes` nodes of the scenario's cluster (taken in stage order), `replicas_per_node` replicas
 * on each. `device` says which processor of the node serves (the host CPUs or its GPUs); the service time is the
 * scenario's figure for that processor, so it only labels the stage. */
enum class PoolDevice { Gpu, Cpu };

template <>
struct EnumNames<PoolDevice> {
  static constexpr std::array<EnumEntry<PoolDevice>, 2> entries{{{PoolDevice::Gpu, "gpu"}, {PoolDevice::Cpu, "cpu"}}};
};

/** What a full bounded queue does with an arriving item: hold the producer until there is room, or drop the item. */
enum class QueueFull { Block, Drop };

template <>
struct EnumNames<QueueFull> {
  static constexpr std::array<EnumEntry<QueueFull>, 2> entries{
      {{QueueFull::Block, "block"}, {QueueFull::Drop, "drop"}}};
};

/** The shape of a random token count. */
enum class LengthKind { Fixed, Uniform, Exponential, LogNormal, Gamma };

template <>
struct EnumNames<LengthKind> {
  static constexpr std::array<EnumEntry<LengthKind>, 5> entries{{{LengthKind::Fixed, "fixed"},
                                                                 {LengthKind::Uniform, "uniform"},
                                                                 {LengthKind::Exponential, "exponential"},
                                                                 {LengthKind::LogNormal, "lognormal"},
                                                                 {LengthKind::Gamma, "gamma"}}};
};

/** A request's token count: fixed (`mean`), uniform over the integers `min`..`max`, or exponential, log-normal or
 * gamma by mean and cv, rounded to the nearest integer and kept within `min`..`max`. */
struct TokenLengths {
  LengthKind kind = LengthKind::Fixed;
  double mean = 0.0;
  double cv = 0.0;
  std::int64_t min = 1;
  std::int64_t max = 0;
};

/** Draws one token count of `d` from `rng`. */
std::int64_t sample(const TokenLengths& d, Xoshiro256StarStar& rng);

/** How an LLM replica admits requests into its KV cache: `reserve_full` reserves each request's prompt and whole
 * output at admission (nothing is ever preempted); `preempt` (vLLM's default) takes KV slots as the sequence grows and
 * preempts the most recently admitted request when a decode step finds the cache full (its KV freed, its prefill
 * recomputed over prompt + tokens generated when it is admitted again). */
enum class KvAdmission { ReserveFull, Preempt };

template <>
struct EnumNames<KvAdmission> {
  static constexpr std::array<EnumEntry<KvAdmission>, 2> entries{
      {{KvAdmission::ReserveFull, "reserve_full"}, {KvAdmission::Preempt, "preempt"}}};
};

/** Prefill/decode disaggregation: a separate pool of prefill replicas (the stage's own pool decodes). */
struct LlmPrefillPool {
  int nodes = 1;
  int replicas_per_node = 1;
  int first_node = 0; ///< resolved: the cluster node of the pool's first node (after the stage's own pool)

  int replicas() const { return nodes * replicas_per_node; }
};

/** An LLM server as a stage: a transformer from models/workloads on GPU replicas of `tensor_parallel` GPUs each,
 * continuous batching at iteration level (docs/serving.md#llm-serving-stage). */
struct LlmStage {
  std::string model_name;
  TransformerConfig model;
  std::string data_type = "bf16";
  int tensor_parallel = 1;
  std::int64_t max_num_seqs = 256;         ///< requests running together
  std::int64_t max_num_batched_tokens = 0; ///< tokens of one step (prompts + decodes)
  double workspace_fraction = 0.1;         ///< of GPU memory kept from the KV cache
  TokenLengths input_tokens;
  TokenLengths output_tokens;
  std::optional<double> ttft_target; ///< s
  std::optional<double> tpot_target; ///< s
  KvAdmission kv_admission = KvAdmission::Preempt;
  bool chunked_prefill = false; ///< prompts prefilled in chunks within max_num_batched_tokens, mixed with decodes
  std::optional<LlmPrefillPool> prefill_pool; ///< disaggregated: prefill here, decode on the stage's pool
};

struct ServingStage {
  std::string name;
  PoolDevice device = PoolDevice::Gpu;
  int nodes = 1;
  int replicas_per_node = 1;
  int first_node = 0;       ///< resolved: the cluster node of the pool's first node
  std::optional<int> cores; ///< the pool's node type: cores per node, the most replicas a node runs; absent: no bound
  double speed = 1.0;       ///< the pool's node type: its speed against the one `service` was measured on
  TimeDistribution service;
  int max_batch = 1;            ///< items served together
  double max_wait = 0.0;        ///< s a replica holding a partial batch waits for more, from taking its first item
  double extra_item_time = 0.0; ///< s a batch of n takes beyond one service time: (n - 1) x this
  double output_bytes = 0.0;    ///< per item, sent to the next stage's pool (the last stage's answer is not sent)
  std::optional<std::int64_t> capacity; ///< waiting room of the stage's queue; absent: unbounded
  QueueFull when_full = QueueFull::Drop;
  std::optional<LlmStage> llm; ///< an LLM server: the service comes from the model, not `service`
  /** The earlier stages whose output this one takes (their indices, in the order given): by default the stage before
   * it; none: it takes the arrivals (a root). With two or more, an item joins this stage's queue once every one of
   * them has handed it on (a join). */
  std::vector<std::size_t> after;
  std::vector<std::size_t> next; ///< resolved: the stages that take this one's output, each a copy (a fan-out)
  /** resolved: another stage may hold a request while this one does (neither comes before the other) */
  bool parallel = false;
  /** `model_service`: s per batch of n = 1 .. max_batch (index n - 1), the model's forward at micro-batch n; empty:
   * the service is `service` (+ extra_item_time per extra item). */
  std::vector<double> batch_service;
  std::string service_model; ///< `model_service`: the model's name (and sequence length) for the report

  /** Replicas of the stage's pool; a disaggregated LLM stage's prefill pool too. */
  int replicas() const {
    return nodes * replicas_per_node + (llm && llm->prefill_pool ? llm->prefill_pool->replicas() : 0);
  }
};

/** A preset of the orchestration cost per hop, or `custom`. */
enum class OrchestrationPreset { None, RayActorCall, KubeflowPipelineStep };

template <>
struct EnumNames<OrchestrationPreset> {
  static constexpr std::array<EnumEntry<OrchestrationPreset>, 3> entries{
      {{OrchestrationPreset::None, "none"},
       {OrchestrationPreset::RayActorCall, "ray_actor_call"},
       {OrchestrationPreset::KubeflowPipelineStep, "kubeflow_pipeline_step"}}};
};

/** The cost of handing an item from one stage to the next: a delay before it joins the next queue (it occupies no
 * replica) and replica time spent on each item it takes (deserialising, the runtime's bookkeeping). */
struct Orchestration {
  OrchestrationPreset preset = OrchestrationPreset::None;
  double dispatch_latency = 0.0;  ///< s per hop
  double per_item_overhead = 0.0; ///< s of the receiving replica per item
};

/** The preset's figures (docs/serving.md has their sources). */
Orchestration orchestration_preset(OrchestrationPreset preset);

enum class ArrivalProcess { Poisson, Closed, Gamma, Trace };

template <>
struct EnumNames<ArrivalProcess> {
  static constexpr std::array<EnumEntry<ArrivalProcess>, 4> entries{{{ArrivalProcess::Poisson, "poisson"},
                                                                     {ArrivalProcess::Closed, "closed"},
                                                                     {ArrivalProcess::Gamma, "gamma"},
                                                                     {ArrivalProcess::Trace, "trace"}}};
};

/** Requests recorded by a production system, replayed in order: each one's arrival time (s after the first) and, when
 * the trace has them, its input and output tokens (an LLM stage then takes them instead of drawing them). */
struct ArrivalTrace {
  std::vector<double> times;               ///< s, from 0, non-decreasing
  std::vector<std::int64_t> input_tokens;  ///< one per request, or empty
  std::vector<std::int64_t> output_tokens; ///< one per request, or empty
  std::string source;                      ///< the CSV file
  double speed = 1.0;                      ///< replay speed: the CSV's times were divided by it
};

/** Open loop: Poisson arrivals at `rate`; a gamma renewal process at `rate` whose gaps have the coefficient of
 * variation `cv` (cv > 1: bursty, cv = 1: Poisson, cv < 1: regular); or a trace replayed. Closed loop: `clients` each
 * sending a request, waiting for its answer (or its drop) and thinking for `think_time` before the next. */
struct Arrivals {
  ArrivalProcess process = ArrivalProcess::Poisson;
  double rate = 0.0; ///< requests/s (poisson, gamma)
  double cv = 1.0;   ///< gamma: of the gaps between arrivals
  int clients = 0;   ///< closed
  TimeDistribution think_time;
  std::shared_ptr<const ArrivalTrace> trace; ///< trace

  bool open() const { return process != ArrivalProcess::Closed; }
};

/** Reads an arrival trace: the CSV file `path`, its column `time_column` of arrival times (seconds as numbers, or
 * datetimes "YYYY-MM-DD HH:MM:SS[.fraction]" as in Azure's LLM inference traces), made relative to the first row and
 * required non-decreasing, and optionally columns of input and output tokens (positive integers; empty names: none).
 * @throws InputError naming the file and line. */
ArrivalTrace read_arrival_trace(const std::filesystem::path& path, const std::string& time_column,
                                const std::string& input_column, const std::string& output_column);

struct ServingWorkload {
  std::vector<ServingStage> stages;
  std::vector<std::size_t> roots; ///< resolved: the stages that take the arrivals (the first, and any with no `after`)
  std::vector<std::size_t> sinks; ///< resolved: the stages with no successor; a request is answered when all are done
  bool dag = false;               ///< resolved: some stage's `after` is not the stage before it alone
  Arrivals arrivals;
  std::optional<std::int64_t> requests; ///< requests sent in all (warm-up included)
  std::optional<double> duration;       ///< s: no request is sent after this time
  double warmup = 0.0;                  ///< s: requests sent before are left out of the statistics
  std::optional<double> latency_target; ///< s end to end: the report's share of requests answered within it
  Orchestration orchestration;
  std::int64_t iterations = 1; ///< one run of the pipeline (for code that asks every workload)
  std::string data_type = "bf16";
};

/** Reads `/workload` of kind "serving" (the reader is at `/workload`, its kind set). Pools are laid out on the
 * cluster's nodes in stage order. @throws InputError naming the field. */
ServingWorkload parse_serving_workload(JsonReader& reader, const ClusterSpec& cluster,
                                       const std::filesystem::path& data_dir);

/** One line: "serving pipeline tokenise(1x16 cpu) -> infer(2x8 gpu); poisson 800/s, 100000 requests". */
std::string describe(const ServingWorkload& workload);

} // namespace partsim
