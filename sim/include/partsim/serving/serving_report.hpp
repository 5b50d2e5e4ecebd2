// report.json's `serving` section (a serving workload's run) as field tables, and the table lines that say it.
#pragma once

#include "partsim/serving/serving_result.hpp"
#include "partsim/serving/serving_spec.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace partsim {

struct ReportDocument;
struct Scenario;

/** A latency sample in report.json: the summary's figures (mean and percentiles, each with the half-width of its
 * 95% batch-means interval) under their report keys. */
struct ReportLatency : LatencySummary {
  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("count", s.count, "", "measured items (sent at or after the warm-up, not dropped)");
    f.field("mean_s", s.mean, "s", "mean");
    f.field("mean_ci_s", s.mean_ci, "s", "half-width of the mean's 95% interval (20 batch means, Student's t)");
    f.field("p50_s", s.p50, "s", "median");
    f.field("p50_ci_s", s.p50_ci, "s", "half-width of the 95% interval of the batches' medians");
    f.field("p90_s", s.p90, "s", "90th percentile");
    f.field("p90_ci_s", s.p90_ci, "s", "its half-width, as above");
    f.field("p95_s", s.p95, "s", "95th percentile");
    f.field("p95_ci_s", s.p95_ci, "s", "its half-width, as above");
    f.field("p99_s", s.p99, "s", "99th percentile");
    f.field("p99_ci_s", s.p99_ci, "s", "its half-width, as above");
    f.field("max_s", s.max, "s", "the largest");
  }
};

/** A disaggregated LLM stage's figures: `serving/stages/N/llm/disaggregation`. */
struct ReportServingDisaggregation {
  std::int64_t prefill_replicas = 0;
  std::int64_t decode_replicas = 0;
  double prefill_utilisation = 0.0;
  double decode_utilisation = 0.0;
  std::uint64_t kv_transfers = 0;
  double kv_transfer_bytes = 0.0;
  ReportLatency kv_transfer;

  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("prefill_replicas", s.prefill_replicas, "", "replicas of the prefill pool");
    f.field("decode_replicas", s.decode_replicas, "", "replicas of the stage's own pool, which decode");
    f.field("prefill_utilisation", s.prefill_utilisation, "",
            "the prefill pool's replica time in steps / (its replicas x window)");
    f.field("decode_utilisation", s.decode_utilisation, "",
            "the decode pool's replica time in steps / (its replicas x window)");
    f.field("kv_transfers", s.kv_transfers, "",
            "requests whose KV cache was sent from prefill to decode, warm-up "
            "included");
    f.field("kv_transfer_bytes", s.kv_transfer_bytes, "bytes",
            "their bytes: prompt tokens x kv_bytes_per_token x tensor_parallel (one message per GPU)");
    f.field("kv_transfer", s.kv_transfer, "",
            "a measured request's KV transfer time, from the end of its prefill step to its last shard's arrival");
  }
};

/** An LLM stage's figures: `serving/stages/N/llm`. */
struct ReportServingLlm {
  std::string model;
  std::int64_t tensor_parallel = 1;
  double kv_bytes_per_token = 0.0;
  double kv_capacity_tokens = 0.0;
  std::uint64_t kv_peak_tokens = 0;
  double kv_peak_occupancy = 0.0;
  std::uint64_t kv_blocked_steps = 0;
  std::uint64_t rejected = 0;
  std::uint64_t steps = 0;
  std::uint64_t prefill_steps = 0;
  double mean_running = 0.0;
  std::uint64_t max_running = 0;
  std::uint64_t input_tokens = 0;
  std::uint64_t output_tokens = 0;
  double output_tokens_per_s = 0.0;
  ReportLatency ttft;
  ReportLatency tpot;
  std::optional<double> ttft_target;
  std::optional<double> tpot_target;
  std::optional<double> goodput;
  std::optional<double> goodput_per_s;
  KvAdmission kv_admission = KvAdmission::Preempt;
  bool chunked_prefill = false;
  std::uint64_t preemptions = 0;
  std::uint64_t recomputed_tokens = 0;
  std::optional<ReportServingDisaggregation> disaggregation;

  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("model", s.model, "", "the transformer served (models/workloads)");
    f.field("tensor_parallel", s.tensor_parallel, "", "GPUs per replica");
    f.field("kv_bytes_per_token", s.kv_bytes_per_token, "bytes",
            "KV cache per token on one GPU: 2 x layers x kv_heads / tensor_parallel x head_dim x bytes");
    f.field("kv_capacity_tokens", s.kv_capacity_tokens, "tokens",
            "per replica: (GPU memory - weights - workspace) / kv_bytes_per_token");
    f.field("kv_peak_tokens", s.kv_peak_tokens, "tokens", "most tokens held in one replica's KV cache");
    f.field("kv_peak_occupancy", s.kv_peak_occupancy, "", "kv_peak_tokens / kv_capacity_tokens");
    f.field("kv_blocked_steps", s.kv_blocked_steps, "",
            "steps after which the queue's first request waited for KV room (reserve_full: for its prompt and "
            "output; preempt: for its prompt, or its recomputation)");
    f.field("rejected", s.rejected, "",
            "requests refused (counted in `dropped`): longer than the model's context, a step's tokens or an empty "
            "KV cache");
    f.field("steps", s.steps, "", "iterations of all replicas");
    f.field("prefill_steps", s.prefill_steps, "", "iterations that prefilled at least one prompt");
    f.field("mean_running", s.mean_running, "", "requests in a running batch, weighted by step time");
    f.field("max_running", s.max_running, "", "the largest running batch");
    f.field("input_tokens", s.input_tokens, "tokens", "prompt tokens prefilled, warm-up included");
    f.field("output_tokens", s.output_tokens, "tokens", "tokens generated, warm-up included");
    f.field("output_tokens_per_s", s.output_tokens_per_s, "tokens/s", "tokens generated within the window / window_s");
    f.field("ttft", s.ttft, "", "time to first token: from sending the request to the end of its prefill step");
    f.field("tpot", s.tpot, "",
            "time per output token: (last token - first token) / (output tokens - 1), requests of 2 tokens or more");
    f.field("ttft_target_s", s.ttft_target, "s", "the scenario's TTFT target; absent: none");
    f.field("tpot_target_s", s.tpot_target, "s", "the scenario's TPOT target; absent: none");
    f.field("goodput", s.goodput, "",
            "share of the measured requests sent (drops included) answered within the targets; absent without one");
    f.field("goodput_requests_per_s", s.goodput_per_s, "requests/s",
            "requests answered within the targets / window_s; absent without a target");
    f.field("kv_admission", s.kv_admission, "",
            "`preempt`: KV slots taken as sequences grow, the latest admitted preempted when full; `reserve_full`: "
            "prompt and whole output reserved at admission");
    f.field("chunked_prefill", s.chunked_prefill, "", "prompts prefilled in chunks mixed with decodes");
    f.field("preemptions", s.preemptions, "", "requests preempted when the KV cache was full (all)");
    f.field("recomputed_tokens", s.recomputed_tokens, "tokens",
            "tokens prefilled again after a preemption (prompt + tokens generated before it)");
    f.field("disaggregation", s.disaggregation, "", "prefill/decode disaggregation's figures; absent without it");
  }
};

/** A stage's queue and utilisation over the window, in bins of equal width (`serving/stages/i/over_time`). */
struct ReportServingOverTime {
  double begin = 0.0;
  double bin = 0.0;
  std::vector<double> queue_length;
  std::vector<double> utilisation;

  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("begin_s", s.begin, "s", "the first bin's start: the warm-up's end");
    f.field("bin_s", s.bin, "s",
            "the bins' width (the same for every stage: 1 ms doubled until at most 128 bins cover the window)");
    f.field("queue_length", s.queue_length, "",
            "per bin: the time-weighted mean of the items queued (the last bin over its part inside the window)");
    f.field("utilisation", s.utilisation, "", "per bin: replica time serving / (replicas x the bin's time)");
  }
};

/** One element of `serving/stages`. */
struct ReportServingStage {
  std::string name;
  PoolDevice device = PoolDevice::Gpu;
  std::int64_t nodes = 0;
  std::int64_t replicas = 0;
  std::uint64_t served = 0;
  std::uint64_t batches = 0;
  double mean_batch = 0.0;
  std::uint64_t dropped = 0;
  double utilisation = 0.0;
  double mean_queue = 0.0;
  std::uint64_t max_queue = 0;
  double capacity = 0.0;
  double mean_wait = 0.0;
  ReportLatency latency;
  std::vector<double> latency_quantiles;
  ReportServingOverTime over_time;
  std::optional<ReportServingLlm> llm;

  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("name", s.name, "", "the stage");
    f.field("device", s.device, "", "the processor that serves (a label)");
    f.field("nodes", s.nodes, "", "nodes of its pool");
    f.field("replicas", s.replicas, "", "replicas in all");
    f.field("served", s.served, "", "items served, warm-up included");
    f.field("batches", s.batches, "", "batches served (an LLM stage: steps that finished a request)");
    f.field("mean_batch_size", s.mean_batch, "",
            "served / batches (an LLM stage: its running batch, weighted by step time)");
    f.field("dropped", s.dropped, "", "items dropped at its full queue");
    f.field("utilisation", s.utilisation, "", "replica time serving / (replicas x window)");
    f.field("mean_queue_length", s.mean_queue, "", "time-weighted mean of the items queued, over the window");
    f.field("max_queue_length", s.max_queue, "", "the longest queue seen");
    f.field("capacity_items_per_s", s.capacity, "items/s",
            "replicas x items served per second of service: what the stage sustains at the batch sizes seen");
    f.field("mean_wait_s", s.mean_wait, "s", "measured items' time in the queue (and in a filling batch)");
    f.field("latency", s.latency, "", "measured items' time in the stage: queue, batching, service");
    f.field("latency_quantiles_s", s.latency_quantiles, "s",
            "that time's CDF: 101 quantiles, at 0, 1, .., 99 and 100% (the smallest, each percentile, the largest); "
            "empty without measured items");
    f.field("over_time", s.over_time, "", "its queue length and utilisation over the window");
    f.field("llm", s.llm, "", "an LLM stage's figures; absent for other stages");
  }
};

/** report.json `serving`. */
struct ReportServing {
  std::string arrivals;
  std::string orchestration;
  double dispatch_latency = 0.0;
  double per_item_overhead = 0.0;
  std::uint64_t sent = 0;
  std::uint64_t answered = 0;
  std::uint64_t dropped = 0;
  double drop_rate = 0.0;
  double warmup = 0.0;
  double window = 0.0;
  double throughput = 0.0;
  std::string bottleneck;
  ReportLatency latency;
  std::vector<double> latency_quantiles;
  std::optional<double> latency_target;
  std::optional<double> within_target;
  std::optional<double> within_target_per_s;
  std::vector<ReportServingStage> stages;

  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("arrivals", s.arrivals, "", "the arrival process in words");
    f.field("orchestration", s.orchestration, "", "the orchestration preset (`none`: the figures below as given)");
    f.field("dispatch_latency_s", s.dispatch_latency, "s", "per hop");
    f.field("per_item_overhead_s", s.per_item_overhead, "s", "replica time per item, stages after the first");
    f.field("sent", s.sent, "", "requests sent, warm-up included");
    f.field("answered", s.answered, "", "requests through every stage");
    f.field("dropped", s.dropped, "", "requests dropped at a full queue");
    f.field("drop_rate", s.drop_rate, "", "dropped / sent, of requests sent at or after the warm-up");
    f.field("warmup_s", s.warmup, "s", "requests sent before are not measured");
    f.field("window_s", s.window, "s", "from the warm-up's end to the last answer or drop");
    f.field("throughput_items_per_s", s.throughput, "items/s", "answers within the window / window_s");
    f.field("bottleneck", s.bottleneck, "", "the stage of highest utilisation");
    f.field("latency", s.latency, "", "end to end, from sending to the last stage's end");
    f.field("latency_quantiles_s", s.latency_quantiles, "s",
            "its CDF: 101 quantiles, at 0, 1, .., 99 and 100% (the smallest, each percentile, the largest)");
    f.field("latency_target_s", s.latency_target, "s", "the scenario's end-to-end latency target; absent: none");
    f.field("within_target", s.within_target, "",
            "share of the measured requests sent (drops included) answered within the target; absent without one");
    f.field("within_target_items_per_s", s.within_target_per_s, "items/s",
            "measured requests answered within the target / window_s; absent without a target");
    f.field("stages", s.stages, "", "one per stage, in pipeline order");
  }
};

/** The `serving` section of a run. */
ReportServing make_serving_section(const ServingWorkload& workload, const ServingRunResult& result);

/** report.json of a serving run: scenario, engine, strategy, GPU profile, a summary (makespan: the last answer;
 * throughput: items/s) and `serving`; no ranks. */
ReportDocument make_serving_report_document(const Scenario& scenario, const ServingRunResult& result);

/** The terminal table of a serving run. */
std::string format_serving_table(const ReportDocument& document);

/** trace.json of a serving run (Chrome trace format, Perfetto / chrome://tracing): the first kTracedRequests
 * requests, one track each in a "requests" process (its queue, service and hop to the next stage in every stage), and
 * one process per stage with a track per replica (what it served: a batch, or an LLM stage's requests from admission
 * to their last token). Times in simulated microseconds. */
std::string serving_chrome_trace(const std::string& scenario_name, const ServingWorkload& workload,
                                 const ServingRunResult& result);

} // namespace partsim
