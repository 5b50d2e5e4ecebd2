// A serving run's report: the `serving` section from the raw run, report.json's document and the terminal table.
#include "partsim/serving/serving_report.hpp"

#include "partsim/input/scenario.hpp"
#include "partsim/report/report_document.hpp"
#include "partsim/report/report_writers.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <tuple>

namespace partsim {

namespace {

ReportLatency latency_section(const std::vector<double>& values) {
  ReportLatency r;
  static_cast<LatencySummary&>(r) = summarize_latency(values);
  return r;
}

std::string ms(double s) {
  return fmt::format("{:.4g} ms", s * 1e3);
}

std::string with_ci(double value, double ci) {
  return ci > 0 ? fmt::format("{} ±{:.2g}", ms(value), ci * 1e3) : ms(value);
}

} // namespace

ReportServing make_serving_section(const ServingWorkload& w, const ServingRunResult& r) {
  ReportServing s;
  if (w.arrivals.process == ArrivalProcess::Poisson)
    s.arrivals = fmt::format("poisson at {:g} requests/s", w.arrivals.rate);
  else if (w.arrivals.process == ArrivalProcess::Gamma)
    s.arrivals = fmt::format("gamma at {:g} requests/s, cv {:g}", w.arrivals.rate, w.arrivals.cv);
  else if (const ArrivalTrace* t = w.arrivals.trace.get())
    s.arrivals = fmt::format("trace {} ({} requests over {:g} s{}{})", t->source, t->times.size(), t->times.back(),
                             t->speed == 1.0 ? "" : fmt::format(", replayed at {:g}x speed", t->speed),
                             t->input_tokens.empty() && t->output_tokens.empty() ? "" : ", with their token counts");
  else
    s.arrivals = fmt::format("closed loop of {} clients, think time {} mean {:g} s", w.arrivals.clients,
                             enum_name(w.arrivals.think_time.kind), w.arrivals.think_time.mean);
  s.orchestration = std::string(enum_name(w.orchestration.preset));
  s.dispatch_latency = w.orchestration.dispatch_latency;
  s.per_item_overhead = w.orchestration.per_item_overhead;
  s.sent = r.sent;
  s.answered = r.answered;
  s.dropped = r.dropped;
  s.drop_rate =
      r.measured_sent > 0 ? static_cast<double>(r.measured_dropped) / static_cast<double>(r.measured_sent) : 0.0;
  s.warmup = w.warmup;
  s.window = std::max(0.0, r.end - r.window_begin);
  s.throughput = s.window > 0 ? static_cast<double>(r.answered_in_window) / s.window : 0.0;
  s.latency = latency_section(r.latency);
  s.latency_quantiles = percent_quantiles(r.latency);
  if (w.latency_target) {
    const auto met = static_cast<double>(
        std::count_if(r.latency.begin(), r.latency.end(), [&](double l) { return l <= *w.latency_target; }));
    s.latency_target = w.latency_target;
    s.within_target = r.measured_sent > 0 ? met / static_cast<double>(r.measured_sent) : 0.0;
    s.within_target_per_s = s.window > 0 ? met / s.window : 0.0;
  }
  // One bin width for every stage's series: the widest any of them reached.
  double bin = 0.0;
  for (const ServingStageRaw& raw : r.stages)
    bin = std::max({bin, raw.queue_over_time.width(), raw.busy_over_time.width()});
  // A stage idle at the window's end recorded nothing there: widen until the window fits in kMaxBins bins.
  while (s.window > bin * static_cast<double>(BinnedIntegral::kMaxBins)) bin *= 2.0;
  double highest = -1.0;
  for (std::size_t i = 0; i < w.stages.size(); ++i) {
    const ServingStage& spec = w.stages[i];
    const ServingStageRaw& raw = r.stages[i];
    ReportServingStage& st = s.stages.emplace_back();
    st.name = spec.name;
    st.device = spec.device;
    st.nodes = spec.nodes;
    st.replicas = spec.replicas();
    st.served = raw.served;
    st.batches = raw.batches;
    st.mean_batch = raw.batches > 0 ? static_cast<double>(raw.served) / static_cast<double>(raw.batches) : 0.0;
    st.dropped = raw.dropped;
    st.utilisation = s.window > 0 ? raw.busy_in_window / (s.window * spec.replicas()) : 0.0;
    st.mean_queue = s.window > 0 ? raw.queue_area / s.window : 0.0;
    st.max_queue = raw.max_queue;
    st.capacity = raw.busy > 0 ? static_cast<double>(raw.served) / raw.busy * spec.replicas() : 0.0;
    double wait = 0.0;
    for (double v : raw.wait) wait += v;
    st.mean_wait = raw.wait.empty() ? 0.0 : wait / static_cast<double>(raw.wait.size());
    st.latency = latency_section(raw.latency);
    st.latency_quantiles = percent_quantiles(raw.latency);
    {
      BinnedIntegral queue = raw.queue_over_time;
      BinnedIntegral busy = raw.busy_over_time;
      queue.coarsen_to(bin);
      busy.coarsen_to(bin);
      ReportServingOverTime& o = st.over_time;
      o.begin = r.window_begin;
      o.bin = bin;
      const auto bins = s.window > 0 ? static_cast<std::size_t>(std::ceil(s.window / bin)) : 0;
      for (std::size_t b = 0; b < bins; ++b) {
        const double covered = std::min(bin, s.window - bin * static_cast<double>(b));
        const auto at = [&](const BinnedIntegral& x) { return b < x.bins().size() ? x.bins()[b] : 0.0; };
        o.queue_length.push_back(covered > 0 ? at(queue) / covered : 0.0);
        o.utilisation.push_back(covered > 0 ? at(busy) / (covered * static_cast<double>(spec.replicas())) : 0.0);
      }
    }
    if (spec.llm) {
      ReportServingLlm& l = st.llm.emplace();
      l.model = spec.llm->model_name;
      l.tensor_parallel = spec.llm->tensor_parallel;
      l.kv_bytes_per_token = raw.kv_bytes_per_token;
      l.kv_capacity_tokens = raw.kv_capacity_tokens;
      l.kv_peak_tokens = raw.kv_peak_tokens;
      l.kv_peak_occupancy =
          raw.kv_capacity_tokens > 0 ? static_cast<double>(raw.kv_peak_tokens) / raw.kv_capacity_tokens : 0.0;
      l.kv_blocked_steps = raw.kv_blocked_steps;
      l.rejected = raw.rejected;
      l.steps = raw.steps;
      l.prefill_steps = raw.prefill_steps;
      l.mean_running = raw.busy > 0 ? raw.running_area / raw.busy : 0.0;
      l.max_running = raw.max_running;
      l.input_tokens = raw.input_tokens;
      l.output_tokens = raw.output_tokens;
      l.output_tokens_per_s = s.window > 0 ? static_cast<double>(raw.output_tokens_in_window) / s.window : 0.0;
      l.ttft = latency_section(raw.ttft);
      l.tpot = latency_section(raw.tpot);
      l.ttft_target = spec.llm->ttft_target;
      l.tpot_target = spec.llm->tpot_target;
      if (l.ttft_target || l.tpot_target) {
        l.goodput = r.measured_sent > 0 ? static_cast<double>(raw.slo_met) / static_cast<double>(r.measured_sent) : 0.0;
        l.goodput_per_s = s.window > 0 ? static_cast<double>(raw.slo_met) / s.window : 0.0;
      }
      l.kv_admission = spec.llm->kv_admission;
      l.chunked_prefill = spec.llm->chunked_prefill;
      l.preemptions = raw.preemptions;
      l.recomputed_tokens = raw.recomputed_tokens;
      if (const auto& pool = spec.llm->prefill_pool) {
        ReportServingDisaggregation& d = l.disaggregation.emplace();
        d.prefill_replicas = pool->replicas();
        d.decode_replicas = spec.nodes * spec.replicas_per_node;
        const double decode_busy = raw.busy_in_window - raw.prefill_busy_in_window;
        d.prefill_utilisation = s.window > 0 ? raw.prefill_busy_in_window / (s.window * d.prefill_replicas) : 0.0;
        d.decode_utilisation = s.window > 0 ? decode_busy / (s.window * d.decode_replicas) : 0.0;
        d.kv_transfers = raw.kv_transfers;
        d.kv_transfer_bytes = raw.kv_transfer_bytes;
        d.kv_transfer = latency_section(raw.kv_transfer);
      }
      // A time-weighted mean batch: what `mean_batch_size` means for continuous batching.
      st.mean_batch = l.mean_running;
    }
    if (st.utilisation > highest) {
      highest = st.utilisation;
      s.bottleneck = st.name;
    }
  }
  return s;
}

ReportDocument make_serving_report_document(const Scenario& scenario, const ServingRunResult& r) {
  const auto& w = std::get<ServingWorkload>(scenario.workload);
  ReportDocument doc;
  doc.partsim_version = partsim_version();
  doc.scenario = {scenario.name, scenario.description, scenario.document};
  ReportEngine& e = doc.engine;
  e.simgrid_version = r.network.simgrid_version;
  e.network_model = r.network.model;
  e.cross_traffic = r.network.cross_traffic;
  e.network_note = r.network.note;
  e.seed = scenario.run.seed;
  e.messages = r.messages;
  e.executions = r.sleeps;
  e.executions_as_sleeps = r.sleeps;
  e.folding = "not applicable: a serving run has no rank programs";
  e.actors = r.actors;
  doc.strategy = describe(w);
  doc.gpu_profile = to_json(scenario.cluster.gpu);
  doc.verdict = Verdict::Simulated;
  doc.serving = make_serving_section(w, r);
  ReportSummary summary;
  std::int64_t nodes = 0;
  for (const ServingStage& s : w.stages)
    nodes += s.nodes + (s.llm && s.llm->prefill_pool ? s.llm->prefill_pool->nodes : 0);
  summary.gpus = nodes * scenario.cluster.gpus_per_node;
  summary.makespan = r.end;
  summary.throughput = doc.serving->throughput;
  summary.bytes_sent = r.bytes_sent;
  summary.bytes_received = r.bytes_sent;
  doc.summary = summary;
  return doc;
}

std::string format_serving_table(const ReportDocument& doc) {
  const ReportServing& s = *doc.serving;
  std::string out;
  auto line = [&](std::string_view label, const std::string& value) {
    out += fmt::format("  {:<34} {}\n", label, value);
  };
  out += format_document_heading(doc);
  line("arrivals", s.arrivals);
  if (s.dispatch_latency > 0 || s.per_item_overhead > 0)
    line("orchestration per hop",
         fmt::format("{}: {} latency, {} per item", s.orchestration, ms(s.dispatch_latency), ms(s.per_item_overhead)));
  line("requests sent / answered / dropped",
       fmt::format("{} / {} / {} (drop rate {:.3g}%)", s.sent, s.answered, s.dropped, s.drop_rate * 100.0));
  line("measured window", fmt::format("{:.6g} s after a {:g} s warm-up", s.window, s.warmup));
  line("throughput", fmt::format("{:.6g} items/s", s.throughput));
  line("latency mean (95% CI)", with_ci(s.latency.mean, s.latency.mean_ci));
  line("latency p50 / p90 / p95 / p99", fmt::format("{} / {} / {} / {}", ms(s.latency.p50), ms(s.latency.p90),
                                                    ms(s.latency.p95), with_ci(s.latency.p99, s.latency.p99_ci)));
  if (s.within_target)
    line("within the latency target", fmt::format("{:.4g}% of requests ({:.6g}/s) within {}", *s.within_target * 100.0,
                                                  s.within_target_per_s.value_or(0.0), ms(*s.latency_target)));
  line("bottleneck", s.bottleneck);
  out += fmt::format("\n  {:<16} {:>8} {:>7} {:>9} {:>10} {:>11} {:>10} {:>10} {:>9}\n", "stage", "replicas", "util",
                     "queue", "batch", "cap items/s", "p50", "p99", "dropped");
  for (const ReportServingStage& st : s.stages)
    out +=
        fmt::format("  {:<16} {:>8} {:>6.1f}% {:>9.3g} {:>10.3g} {:>11.5g} {:>10} {:>10} {:>9}{}\n", st.name,
                    st.replicas, st.utilisation * 100.0, st.mean_queue, st.mean_batch, st.capacity, ms(st.latency.p50),
                    ms(st.latency.p99), st.dropped, st.name == s.bottleneck ? "  <- bottleneck" : "");
  for (const ReportServingStage& st : s.stages) {
    if (!st.llm) continue;
    const ReportServingLlm& l = *st.llm;
    out += fmt::format("\n  LLM stage {}: {} on {} GPU{} per replica\n", st.name, l.model, l.tensor_parallel,
                       l.tensor_parallel > 1 ? "s" : "");
    line("TTFT p50 / p90 / p99",
         fmt::format("{} / {} / {}", ms(l.ttft.p50), ms(l.ttft.p90), with_ci(l.ttft.p99, l.ttft.p99_ci)));
    line("TPOT p50 / p90 / p99",
         fmt::format("{} / {} / {}", ms(l.tpot.p50), ms(l.tpot.p90), with_ci(l.tpot.p99, l.tpot.p99_ci)));
    line("output tokens/s",
         fmt::format("{:.6g} (batch mean {:.3g}, max {})", l.output_tokens_per_s, l.mean_running, l.max_running));
    line("KV cache peak", fmt::format("{:.3g}% of {:.6g} tokens ({:.4g} kB/token/GPU); waited for room {} steps",
                                      l.kv_peak_occupancy * 100.0, l.kv_capacity_tokens, l.kv_bytes_per_token / 1e3,
                                      l.kv_blocked_steps));
    if (l.goodput) {
      std::string targets;
      if (l.ttft_target) targets += "TTFT <= " + ms(*l.ttft_target);
      if (l.tpot_target) targets += std::string(targets.empty() ? "" : ", ") + "TPOT <= " + ms(*l.tpot_target);
      line("goodput",
           fmt::format("{:.4g}% of requests ({:.6g}/s) within {}", *l.goodput * 100.0, *l.goodput_per_s, targets));
    }
    if (l.rejected > 0) line("rejected (too long)", fmt::format("{}", l.rejected));
    line("KV admission", fmt::format("{}{}; {} preemptions, {} tokens recomputed", enum_name(l.kv_admission),
                                     l.chunked_prefill ? ", chunked prefill" : "", l.preemptions, l.recomputed_tokens));
    if (const auto& d = l.disaggregation) {
      line("prefill / decode replicas",
           fmt::format("{} / {}, busy {:.1f}% / {:.1f}%", d->prefill_replicas, d->decode_replicas,
                       d->prefill_utilisation * 100.0, d->decode_utilisation * 100.0));
      line("KV transfer p50 / p99", fmt::format("{} / {} ({} transfers, {:.4g} GB)", ms(d->kv_transfer.p50),
                                                ms(d->kv_transfer.p99), d->kv_transfers, d->kv_transfer_bytes / 1e9));
    }
  }
  return out;
}

std::string serving_chrome_trace(const std::string& scenario_name, const ServingWorkload& workload,
                                 const ServingRunResult& result) {
  const auto quoted = [](const std::string& text) { return nlohmann::json(text).dump(); };
  std::string out =
      fmt::format(R"j({{"displayTimeUnit":"ms","otherData":{{"scenario":{},"time_unit":"us (simulated)",)j"
                  R"("requests_traced":"the first {} sent"}},"traceEvents":[)",
                  quoted(scenario_name), kTracedRequests);
  bool first = true;
  const auto event = [&](const std::string& text) {
    out += first ? "\n" : ",\n";
    out += text;
    first = false;
  };
  const auto name_process = [&](std::size_t pid, const std::string& name) {
    event(
        fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":{}}}}})", pid, quoted(name)));
  };
  const auto span = [&](const std::string& name, const char* category, std::size_t pid, std::uint64_t tid, double begin,
                        double end, const std::string& args) {
    event(fmt::format(R"({{"ph":"X","name":{},"cat":"{}","pid":{},"tid":{},"ts":{},"dur":{}{}}})", quoted(name),
                      category, pid, tid, begin * 1e6, std::max(0.0, end - begin) * 1e6, args));
  };
  // Each request's stages in order: the hop into it (transfer, orchestration), queue, service.
  name_process(0, fmt::format("requests (the first {} sent)", kTracedRequests));
  std::vector<ServingSpan> by_request = result.spans;
  std::stable_sort(by_request.begin(), by_request.end(), [](const ServingSpan& a, const ServingSpan& b) {
    return a.request != b.request ? a.request < b.request : a.stage < b.stage;
  });
  // A graph's stages that may hold a request at the same time (`parallel`) each get a row of their own per request,
  // after the requests' rows, so that no two events of one row overlap.
  const auto row_of = [&](std::uint32_t request, std::uint32_t stage) -> std::uint64_t {
    if (!workload.stages.at(stage).parallel) return request;
    return std::uint64_t{kTracedRequests} * (1 + stage) + request;
  };
  const auto row = [&](const ServingSpan& x) { return row_of(x.request, x.stage); };
  for (std::size_t i = 0; i < by_request.size(); ++i) {
    const ServingSpan& x = by_request[i];
    const ServingStage& spec = workload.stages.at(x.stage);
    const std::string& stage = spec.name;
    // The hop into this stage: from the end of the last of its predecessors to finish the request (a pipeline: the
    // stage before), on this stage's row.
    double from = -1.0;
    for (std::size_t j = i; j-- > 0 && by_request[j].request == x.request;)
      if (std::find(spec.after.begin(), spec.after.end(), by_request[j].stage) != spec.after.end())
        from = std::max(from, by_request[j].end);
    if (from >= 0.0 && x.enter > from) span("to " + stage, "hop", 0, row(x), from, x.enter, "");
    if (x.begin > x.enter) span("queue " + stage, "queue", 0, row(x), x.enter, x.begin, "");
    span(stage, "service", 0, row(x), x.begin, x.end, fmt::format(R"(,"args":{{"replica":{}}})", x.replica));
  }
  for (const ServingMark& m : result.marks)
    event(fmt::format(R"({{"ph":"i","s":"t","name":{},"cat":"{}","pid":0,"tid":{},"ts":{}}})",
                      quoted(fmt::format("{} at {}", m.kind == ServingMark::Kind::Dropped ? "dropped" : "preempted",
                                         workload.stages.at(m.stage).name)),
                      m.kind == ServingMark::Kind::Dropped ? "drop" : "preemption", row_of(m.request, m.stage),
                      m.time * 1e6));
  // Each stage's replicas: what they served. Items of one batch share their begin and end: one event per batch.
  for (std::size_t st = 0; st < workload.stages.size(); ++st) {
    const ServingStage& spec = workload.stages[st];
    name_process(st + 1, "stage " + spec.name);
    std::vector<ServingSpan> mine;
    for (const ServingSpan& x : result.spans)
      if (x.stage == st) mine.push_back(x);
    std::stable_sort(mine.begin(), mine.end(), [](const ServingSpan& a, const ServingSpan& b) {
      return std::tie(a.replica, a.begin, a.end, a.request) < std::tie(b.replica, b.begin, b.end, b.request);
    });
    for (std::size_t i = 0; i < mine.size();) {
      std::size_t j = i + 1;
      if (!spec.llm)
        while (j < mine.size() && mine[j].replica == mine[i].replica && mine[j].begin == mine[i].begin &&
               mine[j].end == mine[i].end)
          ++j;
      const std::string name = spec.llm     ? fmt::format("request {}", mine[i].request)
                               : j - i == 1 ? fmt::format("request {}", mine[i].request)
                                            : fmt::format("batch of {} (requests {}..)", j - i, mine[i].request);
      span(name, spec.llm ? "request" : "batch", st + 1, static_cast<std::uint64_t>(mine[i].replica), mine[i].begin,
           mine[i].end, fmt::format(R"(,"args":{{"items":{}}})", j - i));
      i = j;
    }
  }
  out += "\n]}\n";
  return out;
}

} // namespace partsim
