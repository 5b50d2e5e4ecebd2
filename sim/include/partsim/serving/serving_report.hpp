// report.json's `serving` section (a serving workload's run) as field tables, and the table lines that say it.
#pragma once

#include "partsim/serving/serving_result.hpp"
#include "partsim/serving/serving_spec.hpp"

#include <cstdint>
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

  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("name", s.name, "", "the stage");
    f.field("device", s.device, "", "the processor that serves (a label)");
    f.field("nodes", s.nodes, "", "nodes of its pool");
    f.field("replicas", s.replicas, "", "replicas in all");
    f.field("served", s.served, "", "items served, warm-up included");
    f.field("batches", s.batches, "", "batches served");
    f.field("mean_batch_size", s.mean_batch, "", "served / batches");
    f.field("dropped", s.dropped, "", "items dropped at its full queue");
    f.field("utilisation", s.utilisation, "", "replica time serving / (replicas x window)");
    f.field("mean_queue_length", s.mean_queue, "", "time-weighted mean of the items queued, over the window");
    f.field("max_queue_length", s.max_queue, "", "the longest queue seen");
    f.field("capacity_items_per_s", s.capacity, "items/s",
            "replicas x items served per second of service: what the stage sustains at the batch sizes seen");
    f.field("mean_wait_s", s.mean_wait, "s", "measured items' time in the queue (and in a filling batch)");
    f.field("latency", s.latency, "", "measured items' time in the stage: queue, batching, service");
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

} // namespace partsim
