// Writers for report.json, ranks.csv, trace.json and the terminal table.
#include "partsim/report/report_writers.hpp"

#include "partsim/version.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace partsim {

std::string partsim_version() {
  return PARTSIM_VERSION;
}

namespace {
/** A JSON string literal (quotes included) for `text`. */
std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\')
      out += {'\\', c};
    else if (static_cast<unsigned char>(c) < 0x20)
      out += fmt::format("\\u{:04x}", static_cast<int>(c));
    else
      out += c;
  }
  return out + "\"";
}

double exposed_communication(const Report& r) {
  double sum = 0.0;
  for (const RankMetrics& m : r.ranks) sum += m.communication + m.wait;
  return sum;
}

ReportMemory memory_section(const MemoryBreakdown& m) {
  return {m.parameters, m.gradients, m.optimizer_states, m.activations,   m.workspace,
          m.total(),    m.capacity,  m.fits(),           m.model_states()};
}

ReportClassSplit class_split_section(const ClassSplit& split, const Report& r) {
  ReportClassSplit out;
  out.method = split.method;
  out.minority_class = split.class_names[split.minority_class];
  out.starved_threshold = split.threshold;
  out.oversample_target = split.oversample_target;
  out.starved_partitions = split.starved_partitions;
  out.random_split_risk = {split.random_risk.threshold,        split.random_risk.per_partition,
                           split.random_risk.expected_starved, split.random_risk.any_lower,
                           split.random_risk.any_upper,        split.random_risk.exact};
  out.preprocessing = r.coordinator_setup;
  out.samples_replicated = split.work.samples_replicated;
  out.oversampling_compute = r.oversampling_compute;
  for (std::size_t p = 0; p < split.partitions.size(); ++p) {
    const PartitionClasses& part = split.partitions[p];
    ReportPartition& row = out.partitions.emplace_back();
    row.partition = p;
    row.rank = p % r.ranks.size();
    row.size = part.size;
    for (std::size_t c = 0; c < split.class_names.size(); ++c) row.per_class[split.class_names[c]] = part.per_class[c];
    row.minority_share = part.minority_share;
    row.replicas = part.replicas;
    row.starved = part.starved;
  }
  for (const SplitSummary& m : r.class_split_methods)
    out.methods_compared.push_back(
        {m.method, m.starved_partitions, m.min_minority, m.max_minority, m.samples_replicated, m.preprocessing});
  return out;
}

ReportRank rank_row(const RankMetrics& m, bool pipelined, bool experts, bool context, bool loading) {
  ReportRank row;
  row.rank = m.rank;
  row.node = m.node;
  row.local_gpu = m.local_gpu;
  row.samples = m.samples;
  row.compute = m.compute;
  row.communication = m.communication;
  row.wait = m.wait;
  row.tail_idle = m.tail_idle;
  row.busy = m.busy();
  row.idle = m.idle();
  row.finish = m.finish;
  row.bytes_sent = m.bytes_sent;
  row.bytes_received = m.bytes_received;
  row.messages_sent = m.messages_sent;
  row.overlapped_communication = m.overlapped;
  row.stream_wait = m.stream_wait;
  if (pipelined) {
    row.stage = m.stage;
    row.tensor_exposed = m.tensor_exposed;
    row.pipeline_exposed = m.pipeline_exposed;
    row.data_exposed = m.data_exposed;
    row.bubble = m.bubble;
  }
  if (experts) row.expert_exposed = m.expert_exposed;
  if (context) row.context_exposed = m.context_exposed;
  if (loading) row.data_loading = m.data_loading;
  return row;
}

ReportSummary summary_section(const Report& r) {
  ReportSummary s;
  s.gpus = r.gpus;
  s.iterations = r.iterations;
  s.makespan = r.makespan;
  s.throughput = r.throughput;
  s.single_gpu_time = r.baseline_time;
  s.speedup = r.speedup;
  s.parallel_efficiency = r.efficiency;
  s.imbalance_max_over_mean = r.imbalance_max_over_mean;
  s.imbalance_cv = r.imbalance_cv;
  s.communication_overhead = r.communication_overhead;
  s.idle_share = r.idle_share;
  s.time_lost_waiting = r.time_lost_waiting;
  if (r.data_loading > 0) s.data_loading = r.data_loading;
  s.slowest_rank_excess = r.slowest_rank_excess;
  s.parallel_fraction = r.parallel_fraction;
  s.amdahl_speedup_bound = r.amdahl_speedup_bound;
  if (std::isfinite(r.amdahl_limit)) s.amdahl_limit = r.amdahl_limit;
  s.karp_flatt = r.karp_flatt;
  s.bytes_sent = r.bytes_sent;
  s.bytes_received = r.bytes_received;
  s.exposed_communication = exposed_communication(r);
  s.overlapped_communication = r.overlapped_communication;
  if (r.model_flops_per_iteration > 0) {
    s.mfu = r.mfu;
    s.hfu = r.hfu;
    s.tokens_per_s = r.tokens_per_second;
    s.model_flops_per_iteration = r.model_flops_per_iteration;
  }
  return s;
}
} // namespace

namespace {
/** Whether a price of the pricing model took its example default (the token budget is not a price). */
bool example_prices(const CostFigures& c) {
  return std::any_of(c.assumed.begin(), c.assumed.end(),
                     [](const std::string& pointer) { return pointer.starts_with("/cost/"); });
}

ReportEnergy energy_section(const EnergyFigures& e) {
  ReportEnergy out;
  out.method = "power x time per GPU state from the simulated per-GPU intervals, plus nodes and switches at "
               "constant power, x PUE (docs/energy-and-cost.md)";
  out.gpu_compute_power = e.gpu_compute_power;
  out.gpu_communication_power = e.gpu_communication_power;
  out.gpu_idle_power = e.gpu_idle_power;
  out.node_power = e.node_power;
  out.nodes = e.nodes;
  out.switch_power = e.switch_power;
  out.switches = e.switches;
  out.pue = e.pue;
  out.gpu_compute_time = e.times.compute;
  out.gpu_communication_time = e.times.communication;
  out.gpu_idle_time = e.times.idle;
  out.gpu_compute = e.gpu_compute;
  out.gpu_communication = e.gpu_communication;
  out.gpu_idle = e.gpu_idle;
  out.nodes_energy = e.node_energy;
  out.switches_energy = e.switch_energy;
  out.it = e.it_energy;
  out.facility = e.facility_energy;
  out.average_power = e.average_power;
  out.per_iteration = e.per_iteration;
  out.per_token = e.per_token;
  if (e.per_token) out.budget_tokens = e.budget_tokens;
  out.budget = e.budget;
  out.assumed = e.assumed;
  return out;
}

ReportCost cost_section(const CostFigures& c) {
  ReportCost out;
  out.model = c.model;
  out.currency = c.currency;
  out.example_prices = example_prices(c);
  out.gpu_hour_rate = c.gpu_hour_rate;
  out.hardware = c.hardware;
  out.electricity = c.electricity;
  out.total = c.total;
  out.per_iteration = c.per_iteration;
  out.per_million_tokens = c.per_million_tokens;
  if (c.per_million_tokens) out.budget_tokens = c.budget_tokens;
  out.budget = c.budget;
  out.budget_days = c.budget_time_days;
  out.budget_gpu_hours = c.budget_gpu_hours;
  out.assumed = c.assumed;
  return out;
}
} // namespace

ReportDocument make_report_document(const Report& r, const Scenario& scenario) {
  ReportDocument doc;
  doc.partsim_version = partsim_version();
  doc.scenario = {r.scenario_name, r.scenario_description, scenario.document};

  ReportEngine& e = doc.engine;
  e.simgrid_version = r.network.simgrid_version;
  e.network_model = r.network.model;
  e.cross_traffic = r.network.cross_traffic;
  e.network_note = r.network.note;
  e.seed = r.seed;
  e.messages = r.messages;
  e.executions = r.executions;
  e.simulated_ranks = r.simulated_ranks;
  e.folding = r.folding;
  e.actors = r.actors;
  e.executions_as_sleeps = r.executions_as_sleeps;
  e.driven_flows = r.driven_flows;

  doc.strategy = r.strategy_summary;
  doc.gpu_profile = to_json(scenario.cluster.gpu);
  doc.verdict = r.out_of_memory ? Verdict::OutOfMemory : Verdict::Simulated;
  if (!r.out_of_memory) doc.summary = summary_section(r);
  if (r.memory) doc.memory_per_gpu = memory_section(*r.memory);
  if (!r.collectives.empty()) {
    doc.collectives.emplace();
    for (const Report::Collective& c : r.collectives)
      doc.collectives->push_back({c.stats.op, c.stats.algorithm, c.stats.protocol, c.stats.fidelity, c.stats.kind,
                                  c.stats.ranks, c.stats.bytes, c.stats.count, c.mean_time, c.stats.min_time,
                                  c.stats.max_time, c.algbw, c.busbw});
  }
  if (r.class_split) doc.class_split = class_split_section(*r.class_split, r);
  if (r.coordinator_serial > 0 || r.coordinator_coordination > 0 || r.coordinator_setup > 0)
    doc.coordinator = ReportCoordinator{r.coordinator_setup, r.coordinator_serial, r.coordinator_coordination};
  if (r.balancing)
    doc.balancing =
        ReportBalancing{r.balancing->policy,           r.balancing->dispatches, r.balancing->steals,
                        r.balancing->coordinator_busy, r.balancing->bytes_sent, r.balancing->bytes_received};
  if (!r.stages.empty()) {
    doc.pipeline_stages.emplace();
    for (const Report::Stage& s : r.stages) {
      ReportStage& row = doc.pipeline_stages->emplace_back();
      row.stage = s.stage;
      if (!r.out_of_memory) {
        row.ranks = s.ranks;
        row.compute = s.compute;
        row.tensor_exposed = s.tensor_exposed;
        row.pipeline_exposed = s.pipeline_exposed;
        row.data_exposed = s.data_exposed;
        if (r.expert_parallel) row.expert_exposed = s.expert_exposed;
        if (r.context_parallel) row.context_exposed = s.context_exposed;
        row.bubble = s.bubble;
        row.bubble_fraction = s.bubble_fraction;
      }
      if (s.memory) row.memory = memory_section(*s.memory);
    }
  }
  if (r.energy) doc.energy = energy_section(*r.energy);
  if (r.cost) doc.cost = cost_section(*r.cost);
  if (r.reliability) doc.reliability = reliability_section(*r.reliability, r.seed);
  doc.stragglers = r.stragglers;
  if (r.layer_ops && !r.layer_ops->layer.empty()) {
    const auto& training = std::get<ModelTraining>(scenario.workload);
    const double peak = scenario.cluster.gpu.peak(training.data_type);
    ReportLayerOps& ops = doc.layer_ops.emplace();
    ops.micro_batch = training.micro_batch;
    auto rows = [&](const std::vector<PricedOp>& from, std::vector<ReportOp>& into) {
      for (const PricedOp& op : from)
        into.push_back({op.name, op.forward_time, op.backward_time, op.forward_flops,
                        op.forward_time > 0 ? op.forward_flops / op.forward_time / peak : 0.0});
    };
    rows(r.layer_ops->layer, ops.layer);
    rows(r.layer_ops->outer, ops.outer);
    for (const PricedOp& op : r.layer_ops->layer) {
      ops.layer_forward_s += op.forward_time;
      ops.layer_backward_s += op.backward_time;
    }
    if (const auto& p = r.layer_passes)
      ops.simulated = ReportLayerPasses{p->rank, p->forward, p->backward, p->forward_layers, p->backward_layers};
  }
  if (!r.expert_routing.empty()) {
    ReportExpertRouting& routing = doc.expert_routing.emplace();
    for (std::size_t l = 0; l < r.expert_routing.size(); ++l) {
      const LayerRouting& lr = r.expert_routing[l];
      routing.layers.push_back({lr.layer, lr.max_load(), lr.mean_load(), lr.dropped, lr.rank_load});
      routing.mean_max_load += lr.max_load() / static_cast<double>(r.expert_routing.size());
      routing.worst_max_load = std::max(routing.worst_max_load, lr.max_load());
      routing.dropped_fraction += lr.dropped / static_cast<double>(r.expert_routing.size());
    }
  }
  for (const RankMetrics& m : r.ranks)
    doc.ranks.push_back(rank_row(m, !r.stages.empty(), r.expert_parallel, r.context_parallel, r.data_loading > 0));
  return doc;
}

nlohmann::json report_to_json(const Report& r, const Scenario& scenario) {
  return to_json(make_report_document(r, scenario));
}

void write_ranks_csv(std::ostream& out, const Report& r) {
  out << "rank,node,local_gpu,samples,compute_s,communication_s,wait_s,tail_idle_s,busy_s,idle_s,finish_s,"
         "bytes_sent,bytes_received,messages_sent,overlapped_communication_s,data_loading_s\n";
  for (const RankMetrics& m : r.ranks)
    out << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", m.rank, m.node, m.local_gpu, m.samples,
                       m.compute, m.communication, m.wait, m.tail_idle, m.busy(), m.idle(), m.finish, m.bytes_sent,
                       m.bytes_received, m.messages_sent, m.overlapped, m.data_loading);
}

void write_chrome_trace(std::ostream& out, const Scenario& scenario, const Plan& plan, const RunResult& result) {
  // Written by hand rather than through a json tree: traces of large runs have millions of events.
  const int per_node = scenario.cluster.gpus_per_node;
  out << "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"scenario\":" << json_string(scenario.name)
      << ",\"time_unit\":\"us (simulated)\"},\"traceEvents\":[\n";
  bool first = true;
  auto sep = [&] {
    if (!first) out << ",\n";
    first = false;
  };
  for (int node = 0; node < scenario.cluster.nodes; ++node) {
    sep();
    out << fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":"node {}"}}}})", node,
                       node);
  }
  auto track = [&](int pid, std::size_t tid, const std::string& name, const std::vector<Interval>& intervals) {
    sep();
    out << fmt::format(R"j({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":{}}}}})j", pid, tid,
                       json_string(name));
    for (const Interval& i : intervals) {
      sep();
      // Named compute (a pipeline pass, "F mb3") carries its name so the schedule reads off the trace.
      const std::string name =
          i.label > 0 && i.label < plan.labels.size() ? plan.labels[i.label] : std::string(to_string(i.kind));
      out << fmt::format(R"({{"ph":"X","name":"{}","cat":"{}","pid":{},"tid":{},"ts":{},"dur":{}}})", name,
                         to_string(i.kind), pid, tid, i.begin * 1e6, (i.end - i.begin) * 1e6);
    }
  };
  for (std::size_t rank = 0; rank < result.ranks.size(); ++rank) {
    const int gpu = plan.ranks[rank].gpu;
    track(gpu / per_node, rank, fmt::format("rank {} (gpu {})", rank, gpu), result.intervals_of(rank));
  }
  // Communication streams get their own tracks after the ranks, in the rank's node.
  for (std::size_t rank = 0; rank < result.streams.size(); ++rank) {
    const std::vector<Interval>& intervals = result.intervals_of(rank, true);
    if (intervals.empty()) continue;
    const int gpu = plan.ranks[rank].gpu;
    track(gpu / per_node, result.ranks.size() + 1 + rank, fmt::format("rank {} stream", rank), intervals);
  }
  if (result.coordinator) {
    // The coordinator gets its own process after the nodes: its compute is the serial part.
    const int pid = scenario.cluster.nodes;
    sep();
    out << fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":"coordinator"}}}})", pid);
    track(pid, result.ranks.size(), "coordinator", result.coordinator->timeline.intervals);
  }
  out << "\n]}\n";
}

std::string human_seconds(double s) {
  if (s == 0.0) return "0 s";
  if (s < 1e-3) return fmt::format("{:.3g} us", s * 1e6);
  if (s < 1.0) return fmt::format("{:.4g} ms", s * 1e3);
  return fmt::format("{:.4g} s", s);
}

namespace {
std::string human_bytes(double b) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  int u = 0;
  while (b >= 1000.0 && u < 5) {
    b /= 1000.0;
    ++u;
  }
  return fmt::format("{:.4g} {}", b, units[u]);
}

std::string percent(double f) {
  return fmt::format("{:.1f}%", f * 100.0);
}
} // namespace

std::string format_document_heading(const ReportDocument& doc) {
  std::string out = fmt::format("partsim {}: {}\n", doc.partsim_version, doc.scenario.name);
  if (!doc.scenario.description.empty()) out += fmt::format("  {}\n", doc.scenario.description);
  out += fmt::format("  {}\n", doc.strategy);
  out += fmt::format("  SimGrid {}, network model {} ({})\n\n", doc.engine.simgrid_version, doc.engine.network_model,
                     doc.engine.network_note);
  return out;
}

std::string format_table(const Report& r) {
  std::string out;
  auto line = [&](std::string_view label, const std::string& value) {
    out += fmt::format("  {:<34} {}\n", label, value);
  };
  out += fmt::format("partsim {}: {}\n", partsim_version(), r.scenario_name);
  if (!r.scenario_description.empty()) out += fmt::format("  {}\n", r.scenario_description);
  out += fmt::format("  {}\n", r.strategy_summary);
  out += fmt::format("  SimGrid {}, network model {} ({})\n\n", r.network.simgrid_version, r.network.model,
                     r.network.note);

  if (r.memory) {
    const MemoryBreakdown& m = *r.memory;
    const double gib = 1024.0 * 1024.0 * 1024.0;
    line("memory per GPU",
         fmt::format("{:.2f} of {:.1f} GiB{}", m.total() / gib, m.capacity / gib, m.fits() ? "" : ": OUT OF MEMORY"));
    line("  weights / gradients / optimizer",
         fmt::format("{:.2f} / {:.2f} / {:.2f} GiB ({:.2f} GiB stay between iterations)", m.parameters / gib,
                     m.gradients / gib, m.optimizer_states / gib, m.model_states() / gib));
    line("  activations / workspace", fmt::format("{:.2f} / {:.2f} GiB", m.activations / gib, m.workspace / gib));
  }
  if (r.out_of_memory) {
    out += "\n  out of memory: this configuration does not fit on the GPU, so it was not simulated\n";
    return out;
  }
  line("makespan", human_seconds(r.makespan));
  line("throughput", fmt::format("{:.6g} samples/s", r.throughput));
  // A collective benchmark computes nothing: speedup and Amdahl figures say nothing about it.
  if (r.baseline_time > 0) {
    line("same work on one GPU", human_seconds(r.baseline_time));
    line("speedup / parallel efficiency",
         fmt::format("{:.3f}x on {} GPUs / {}", r.speedup, r.gpus, percent(r.efficiency)));
    line("load imbalance (compute max/mean)",
         fmt::format("{:.3f} (CV {:.3f})", r.imbalance_max_over_mean, r.imbalance_cv));
    line("communication overhead", percent(r.communication_overhead) + " of GPU time");
    if (r.overlapped_communication > 0)
      line("communication overlapped", fmt::format("{:.4g} GPU-seconds hidden behind compute; {:.4g} exposed",
                                                   r.overlapped_communication, exposed_communication(r)));
    if (r.model_flops_per_iteration > 0)
      line("MFU / HFU / tokens per second",
           fmt::format("{} / {} / {:.6g}", percent(r.mfu), percent(r.hfu), r.tokens_per_second));
    line("idle",
         fmt::format("{} of GPU time ({:.4g} GPU-seconds lost waiting)", percent(r.idle_share), r.time_lost_waiting));
    if (r.data_loading > 0) line("  waiting for data loading", fmt::format("{:.4g} GPU-seconds", r.data_loading));
    line("slowest rank vs mean finish", fmt::format("+{}", human_seconds(r.slowest_rank_excess)));
    line("measured parallel fraction", fmt::format("{:.4f}", r.parallel_fraction));
    line("Amdahl bound on these GPUs", fmt::format("{:.3f}x", r.amdahl_speedup_bound));
    line("Amdahl limit (infinite GPUs)",
         std::isfinite(r.amdahl_limit) ? fmt::format("{:.3f}x", r.amdahl_limit) : std::string("unbounded"));
    line("Karp-Flatt serial fraction", fmt::format("{:.4f}", r.karp_flatt));
  }
  if (r.layer_ops && !r.layer_ops->layer.empty()) {
    // Where one layer's time goes: its total, and its three largest ops' shares of forward + backward.
    std::vector<std::pair<double, std::string>> ops;
    double forward = 0.0;
    double backward = 0.0;
    for (const PricedOp& op : r.layer_ops->layer) {
      forward += op.forward_time;
      backward += op.backward_time;
      ops.emplace_back(op.forward_time + op.backward_time, op.name);
    }
    std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::string largest;
    for (std::size_t i = 0; i < std::min<std::size_t>(3, ops.size()); ++i)
      largest += fmt::format("{}{} {}", i > 0 ? ", " : "", ops[i].second, percent(ops[i].first / (forward + backward)));
    line("one layer forward / backward", fmt::format("{} / {} per micro-batch on a rank ({})", human_seconds(forward),
                                                     human_seconds(backward), largest));
    if (const auto& p = r.layer_passes)
      line(fmt::format("  as simulated on rank {}", p->rank),
           fmt::format("{} / {} (mean of {} and {} layer passes, exposed communication included)",
                       human_seconds(p->forward), human_seconds(p->backward), p->forward_layers, p->backward_layers));
  }
  line("simulated messages / executions", fmt::format("{} / {}", r.messages, r.executions));
  if (r.folded) line("folded replicas", r.folding);
  if (r.coordinator_serial > 0 || r.coordinator_coordination > 0)
    line("coordinator: serial part / coordination",
         fmt::format("{} / {}", human_seconds(r.coordinator_serial), human_seconds(r.coordinator_coordination)));
  if (r.class_split) {
    const ClassSplit& split = *r.class_split;
    line("class-aware split", fmt::format("{}: {} of {} partitions starved (< {} \"{}\" samples)",
                                          to_string(split.method), split.starved_partitions, split.partitions.size(),
                                          split.threshold, split.class_names[split.minority_class]));
    line("  a random split would starve",
         fmt::format("{:.3g} partitions on average; P[any] {}", split.random_risk.expected_starved,
                     split.random_risk.exact ? fmt::format("{:.4g}", split.random_risk.any_lower)
                                             : fmt::format("in [{:.4g}, {:.4g}]", split.random_risk.any_lower,
                                                           split.random_risk.any_upper)));
    line("  preprocessing / oversampling",
         fmt::format("{} on the coordinator / {} replicated samples, {:.4g} GPU-seconds",
                     human_seconds(r.coordinator_setup), split.work.samples_replicated, r.oversampling_compute));
  }
  if (r.balancing)
    line("run-time balancing",
         fmt::format("{}: {} dispatches, {} steals, coordinator busy {}", r.balancing->policy, r.balancing->dispatches,
                     r.balancing->steals, human_seconds(r.balancing->coordinator_busy)));
  for (const Report::Collective& c : r.collectives)
    line(fmt::format("{} {}/{} ({})", to_string(c.stats.op), to_string(c.stats.algorithm), to_string(c.stats.protocol),
                     to_string(c.stats.fidelity)),
         fmt::format("{} x {} B on {} ranks: {} each, algbw {}/s, busbw {}/s", c.stats.count, c.stats.bytes,
                     c.stats.ranks, human_seconds(c.mean_time), human_bytes(c.algbw), human_bytes(c.busbw)));
  line("bytes sent / received", fmt::format("{} / {}", human_bytes(static_cast<double>(r.bytes_sent)),
                                            human_bytes(static_cast<double>(r.bytes_received))));
  if (r.energy) {
    const EnergyFigures& e = *r.energy;
    constexpr double kJoulesPerKwh = 3.6e6;
    line("energy per iteration / mean power",
         fmt::format("{:.4g} kWh / {:.4g} kW (PUE {:.3g}{})", e.per_iteration / kJoulesPerKwh, e.average_power / 1e3,
                     e.pue, e.assumed.empty() ? "" : "; assumed figures in report.json"));
    if (e.per_token && e.budget)
      line("energy per token / budget", fmt::format("{:.4g} J / {:.4g} MWh for {:.4g} tokens", *e.per_token,
                                                    *e.budget / kJoulesPerKwh / 1e3, e.budget_tokens));
  }
  if (r.cost) {
    const CostFigures& c = *r.cost;
    const std::string examples = example_prices(c) ? " (EXAMPLE prices: give yours in /cost)" : "";
    line("cost per iteration", fmt::format("{:.4g} {} ({}, {:.4g} {}/GPU-hour){}", c.per_iteration, c.currency,
                                           enum_name(c.model), c.gpu_hour_rate, c.currency, examples));
    if (c.per_million_tokens && c.budget && c.budget_time_days)
      line("cost per 1M tokens / budget",
           fmt::format("{:.4g} / {:.4g} {}, {:.4g} days on {} GPUs", *c.per_million_tokens, *c.budget, c.currency,
                       *c.budget_time_days, r.gpus));
  }
  if (r.reliability)
    for (const auto& [label, value] : reliability_table_lines(*r.reliability)) line(label, value);
  if (r.stragglers)
    for (const auto& [label, value] : stragglers_table_lines(*r.stragglers)) line(label, value);

  constexpr std::size_t kMaxRows = 32;
  if (!r.stages.empty()) {
    // Expert and context columns only for runs that have those exchanges.
    const std::string extra_header = fmt::format("{}{}", r.expert_parallel ? fmt::format(" {:>11}", "expert") : "",
                                                 r.context_parallel ? fmt::format(" {:>11}", "context") : "");
    out += fmt::format("\n  {:>5} {:>11} {:>11} {:>11} {:>11}{} {:>11} {:>7} {:>10}\n", "stage", "compute", "tensor",
                       "pipeline", "data", extra_header, "bubble", "bubble%", "memory");
    for (std::size_t i = 0; i < r.stages.size() && i < kMaxRows; ++i) {
      const Report::Stage& s = r.stages[i];
      const std::string extra =
          fmt::format("{}{}", r.expert_parallel ? fmt::format(" {:>11}", human_seconds(s.expert_exposed)) : "",
                      r.context_parallel ? fmt::format(" {:>11}", human_seconds(s.context_exposed)) : "");
      out += fmt::format("  {:>5} {:>11} {:>11} {:>11} {:>11}{} {:>11} {:>7} {:>10}\n", s.stage,
                         human_seconds(s.compute), human_seconds(s.tensor_exposed), human_seconds(s.pipeline_exposed),
                         human_seconds(s.data_exposed), extra, human_seconds(s.bubble), percent(s.bubble_fraction),
                         s.memory ? human_bytes(s.memory->total()) : std::string("-"));
    }
  }
  if (!r.class_split_methods.empty()) {
    out += fmt::format("\n  {:<22} {:>8} {:>13} {:>9} {:>13}\n", "split method", "starved", "minority", "replicas",
                       "preprocessing");
    for (const SplitSummary& m : r.class_split_methods)
      out += fmt::format("  {:<22} {:>8} {:>13} {:>9} {:>13}\n", to_string(m.method), m.starved_partitions,
                         fmt::format("{}..{}", m.min_minority, m.max_minority), m.samples_replicated,
                         human_seconds(m.preprocessing));
  }
  if (r.class_split && r.class_split->partitions.size() <= kMaxRows) {
    const ClassSplit& split = *r.class_split;
    out += fmt::format("\n  {:>9} {:>5} {:>12} {:>10} {:>10} {:>9} {:>8}\n", "partition", "rank", "size", "minority",
                       "share", "replicas", "starved");
    for (std::size_t p = 0; p < split.partitions.size(); ++p) {
      const PartitionClasses& part = split.partitions[p];
      out += fmt::format("  {:>9} {:>5} {:>12} {:>10} {:>9.3f}% {:>9} {:>8}\n", p, p % r.ranks.size(), part.size,
                         part.per_class[split.minority_class], part.minority_share * 100, part.replicas,
                         part.starved ? "yes" : "no");
    }
  }
  out += fmt::format("\n  {:>5} {:>5} {:>12} {:>12} {:>12} {:>12} {:>12} {:>7}\n", "rank", "node", "samples", "compute",
                     "comm", "wait", "idle", "busy");
  auto row = [&](const RankMetrics& m) {
    out += fmt::format("  {:>5} {:>5} {:>12} {:>12} {:>12} {:>12} {:>12} {:>7}\n", m.rank, m.node, m.samples,
                       human_seconds(m.compute), human_seconds(m.communication), human_seconds(m.wait),
                       human_seconds(m.idle()), percent(r.makespan > 0 ? m.busy() / r.makespan : 0.0));
  };
  if (r.ranks.size() <= kMaxRows) {
    for (const RankMetrics& m : r.ranks) row(m);
  } else {
    // Show the busiest and the idlest ranks: that is where imbalance lives.
    std::vector<const RankMetrics*> order;
    for (const RankMetrics& m : r.ranks) order.push_back(&m);
    std::stable_sort(order.begin(), order.end(),
                     [](const RankMetrics* a, const RankMetrics* b) { return a->busy() > b->busy(); });
    for (std::size_t i = 0; i < kMaxRows / 2; ++i) row(*order[i]);
    out += fmt::format("  {:>5} ... {} more ranks in ranks.csv ...\n", "", r.ranks.size() - kMaxRows);
    for (std::size_t i = order.size() - kMaxRows / 2; i < order.size(); ++i) row(*order[i]);
  }
  return out;
}

} // namespace partsim
