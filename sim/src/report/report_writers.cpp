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

nlohmann::json finite_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}
} // namespace

nlohmann::json class_split_json(const ClassSplit& split, const Report& r) {
  nlohmann::json risk;
  risk["threshold"] = split.random_risk.threshold;
  risk["starved_probability_per_partition"] = split.random_risk.per_partition;
  risk["expected_starved_partitions"] = split.random_risk.expected_starved;
  risk["any_starved_at_least"] = split.random_risk.any_lower;
  risk["any_starved_at_most"] = split.random_risk.any_upper;
  risk["exact"] = split.random_risk.exact;
  nlohmann::json partitions = nlohmann::json::array();
  for (std::size_t p = 0; p < split.partitions.size(); ++p) {
    const PartitionClasses& part = split.partitions[p];
    nlohmann::json counts = nlohmann::json::object();
    for (std::size_t c = 0; c < split.class_names.size(); ++c) counts[split.class_names[c]] = part.per_class[c];
    nlohmann::json row;
    row["partition"] = p;
    row["rank"] = p % r.ranks.size();
    row["size"] = part.size;
    row["per_class"] = std::move(counts);
    row["minority_share"] = part.minority_share;
    row["replicas"] = part.replicas;
    row["starved"] = part.starved;
    partitions.push_back(std::move(row));
  }
  nlohmann::json out;
  out["method"] = std::string(to_string(split.method));
  out["minority_class"] = split.class_names[split.minority_class];
  out["starved_threshold"] = split.threshold;
  out["oversample_target"] = split.oversample_target;
  out["starved_partitions"] = split.starved_partitions;
  out["random_split_risk"] = std::move(risk);
  out["preprocessing_s"] = r.coordinator_setup;
  out["samples_replicated"] = split.work.samples_replicated;
  out["oversampling_compute_gpu_s"] = r.oversampling_compute;
  out["partitions"] = std::move(partitions);
  nlohmann::json methods = nlohmann::json::array();
  for (const SplitSummary& m : r.class_split_methods) {
    nlohmann::json row;
    row["method"] = std::string(to_string(m.method));
    row["starved_partitions"] = m.starved_partitions;
    row["min_minority"] = m.min_minority;
    row["max_minority"] = m.max_minority;
    row["samples_replicated"] = m.samples_replicated;
    row["preprocessing_s"] = m.preprocessing;
    methods.push_back(std::move(row));
  }
  out["methods_compared"] = std::move(methods);
  return out;
}

namespace {

double exposed_communication(const Report& r) {
  double sum = 0.0;
  for (const RankMetrics& m : r.ranks) sum += m.communication + m.wait;
  return sum;
}

nlohmann::json memory_json(const MemoryBreakdown& m) {
  nlohmann::json out;
  out["parameters_bytes"] = m.parameters;
  out["gradients_bytes"] = m.gradients;
  out["optimizer_states_bytes"] = m.optimizer_states;
  out["activations_bytes"] = m.activations;
  out["workspace_bytes"] = m.workspace;
  out["total_bytes"] = m.total();
  out["capacity_bytes"] = m.capacity;
  out["fits"] = m.fits();
  return out;
}

} // namespace

nlohmann::json report_to_json(const Report& r, const Scenario& scenario) {
  // Built key by key: GCC 12 warns falsely (-Warray-bounds) on large nested initializer lists of nlohmann::json.
  nlohmann::json ranks = nlohmann::json::array();
  for (const RankMetrics& m : r.ranks) {
    nlohmann::json row;
    row["rank"] = m.rank;
    row["node"] = m.node;
    row["local_gpu"] = m.local_gpu;
    row["samples"] = m.samples;
    row["compute_s"] = m.compute;
    row["communication_s"] = m.communication;
    row["wait_s"] = m.wait;
    row["tail_idle_s"] = m.tail_idle;
    row["busy_s"] = m.busy();
    row["idle_s"] = m.idle();
    row["finish_s"] = m.finish;
    row["bytes_sent"] = m.bytes_sent;
    row["bytes_received"] = m.bytes_received;
    row["messages_sent"] = m.messages_sent;
    row["overlapped_communication_s"] = m.overlapped;
    row["stream_wait_s"] = m.stream_wait;
    if (!r.stages.empty()) {
      row["stage"] = m.stage;
      row["tensor_exposed_s"] = m.tensor_exposed;
      row["pipeline_exposed_s"] = m.pipeline_exposed;
      row["data_exposed_s"] = m.data_exposed;
      row["bubble_s"] = m.bubble;
    }
    ranks.push_back(std::move(row));
  }

  nlohmann::json engine;
  engine["simulator"] = "SimGrid";
  engine["simgrid_version"] = r.network.simgrid_version;
  engine["network_model"] = r.network.model;
  engine["cross_traffic"] = r.network.cross_traffic;
  engine["network_note"] = r.network.note;
  engine["seed"] = r.seed;
  engine["messages"] = r.messages;
  engine["executions"] = r.executions;
  engine["simulated_ranks"] = r.simulated_ranks;
  engine["folding"] = r.folding;
  engine["actors"] = r.actors;
  engine["executions_as_sleeps"] = r.executions_as_sleeps;
  engine["driven_flows"] = r.driven_flows;

  nlohmann::json summary;
  summary["gpus"] = r.gpus;
  summary["iterations"] = r.iterations;
  summary["makespan_s"] = r.makespan;
  summary["throughput_samples_per_s"] = r.throughput;
  summary["single_gpu_time_s"] = r.baseline_time;
  summary["speedup"] = r.speedup;
  summary["parallel_efficiency"] = r.efficiency;
  summary["load_imbalance_max_over_mean"] = r.imbalance_max_over_mean;
  summary["load_imbalance_cv"] = r.imbalance_cv;
  summary["communication_overhead"] = r.communication_overhead;
  summary["idle_share"] = r.idle_share;
  summary["time_lost_waiting_gpu_s"] = r.time_lost_waiting;
  summary["slowest_rank_excess_s"] = r.slowest_rank_excess;
  summary["parallel_fraction"] = r.parallel_fraction;
  summary["amdahl_speedup_bound"] = r.amdahl_speedup_bound;
  summary["amdahl_limit"] = finite_or_null(r.amdahl_limit);
  summary["karp_flatt_serial_fraction"] = r.karp_flatt;
  summary["bytes_sent"] = r.bytes_sent;
  summary["bytes_received"] = r.bytes_received;
  summary["exposed_communication_gpu_s"] = exposed_communication(r);
  summary["overlapped_communication_gpu_s"] = r.overlapped_communication;
  if (r.model_flops_per_iteration > 0) {
    summary["mfu"] = r.mfu;
    summary["hfu"] = r.hfu;
    summary["tokens_per_s"] = r.tokens_per_second;
    summary["model_flops_per_iteration"] = r.model_flops_per_iteration;
  }

  nlohmann::json scenario_json;
  scenario_json["name"] = r.scenario_name;
  scenario_json["description"] = r.scenario_description;
  scenario_json["input"] = scenario.document;

  nlohmann::json report;
  report["schema"] = "partsim.report";
  report["schema_version"] = kReportSchemaVersion;
  report["partsim_version"] = partsim_version();
  report["scenario"] = std::move(scenario_json);
  report["engine"] = std::move(engine);
  report["strategy"] = r.strategy_summary;
  report["gpu_profile"] = to_json(scenario.cluster.gpu);
  report["verdict"] = r.out_of_memory ? "out_of_memory" : "simulated";
  if (!r.out_of_memory) report["summary"] = std::move(summary);
  if (r.memory) report["memory_per_gpu"] = memory_json(*r.memory);
  if (!r.collectives.empty()) {
    nlohmann::json collectives = nlohmann::json::array();
    for (const Report::Collective& c : r.collectives) {
      nlohmann::json row;
      row["operation"] = to_string(c.stats.op);
      row["algorithm"] = to_string(c.stats.algorithm);
      row["fidelity"] = to_string(c.stats.fidelity);
      row["kind"] = to_string(c.stats.kind);
      row["ranks"] = c.stats.ranks;
      row["bytes"] = c.stats.bytes;
      row["count"] = c.stats.count;
      row["mean_time_s"] = c.mean_time;
      row["min_time_s"] = c.stats.min_time;
      row["max_time_s"] = c.stats.max_time;
      row["algbw_bytes_per_s"] = c.algbw;
      row["busbw_bytes_per_s"] = c.busbw;
      collectives.push_back(std::move(row));
    }
    report["collectives"] = std::move(collectives);
  }
  if (r.class_split) report["class_split"] = class_split_json(*r.class_split, r);
  if (r.coordinator_serial > 0 || r.coordinator_coordination > 0 || r.coordinator_setup > 0) {
    nlohmann::json coordinator;
    coordinator["setup_s"] = r.coordinator_setup;
    coordinator["serial_compute_s"] = r.coordinator_serial;
    coordinator["coordination_s"] = r.coordinator_coordination;
    report["coordinator"] = std::move(coordinator);
  }
  if (r.balancing) {
    nlohmann::json balancing;
    balancing["policy"] = r.balancing->policy;
    balancing["dispatches"] = r.balancing->dispatches;
    balancing["steals"] = r.balancing->steals;
    balancing["coordinator_busy_s"] = r.balancing->coordinator_busy;
    balancing["coordinator_bytes_sent"] = r.balancing->bytes_sent;
    balancing["coordinator_bytes_received"] = r.balancing->bytes_received;
    report["balancing"] = std::move(balancing);
  }
  if (!r.stages.empty()) {
    nlohmann::json stages = nlohmann::json::array();
    for (const Report::Stage& s : r.stages) {
      nlohmann::json row;
      row["stage"] = s.stage;
      if (!r.out_of_memory) {
        row["ranks"] = s.ranks;
        row["compute_s"] = s.compute;
        row["tensor_exposed_s"] = s.tensor_exposed;
        row["pipeline_exposed_s"] = s.pipeline_exposed;
        row["data_exposed_s"] = s.data_exposed;
        row["bubble_s"] = s.bubble;
        row["bubble_fraction"] = s.bubble_fraction;
      }
      if (s.memory) row["memory_per_gpu"] = memory_json(*s.memory);
      stages.push_back(std::move(row));
    }
    report["pipeline_stages"] = std::move(stages);
  }
  report["ranks"] = std::move(ranks);
  return report;
}

void write_ranks_csv(std::ostream& out, const Report& r) {
  out << "rank,node,local_gpu,samples,compute_s,communication_s,wait_s,tail_idle_s,busy_s,idle_s,finish_s,"
         "bytes_sent,bytes_received,messages_sent,overlapped_communication_s\n";
  for (const RankMetrics& m : r.ranks)
    out << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", m.rank, m.node, m.local_gpu, m.samples,
                       m.compute, m.communication, m.wait, m.tail_idle, m.busy(), m.idle(), m.finish, m.bytes_sent,
                       m.bytes_received, m.messages_sent, m.overlapped);
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
  auto track = [&](int pid, std::size_t tid, const std::string& name, const RankTimeline& timeline) {
    sep();
    out << fmt::format(R"j({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":{}}}}})j", pid, tid,
                       json_string(name));
    for (const Interval& i : timeline.intervals) {
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
    track(gpu / per_node, rank, fmt::format("rank {} (gpu {})", rank, gpu), result.ranks[rank]);
  }
  // Communication streams get their own tracks after the ranks, in the rank's node.
  for (std::size_t rank = 0; rank < result.streams.size(); ++rank) {
    if (result.streams[rank].intervals.empty()) continue;
    const int gpu = plan.ranks[rank].gpu;
    track(gpu / per_node, result.ranks.size() + 1 + rank, fmt::format("rank {} stream", rank), result.streams[rank]);
  }
  if (result.coordinator) {
    // The coordinator gets its own process after the nodes: its compute is the serial part.
    const int pid = scenario.cluster.nodes;
    sep();
    out << fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":"coordinator"}}}})", pid);
    track(pid, result.ranks.size(), "coordinator", result.coordinator->timeline);
  }
  out << "\n]}\n";
}

namespace {
std::string human_seconds(double s) {
  if (s == 0.0) return "0 s";
  if (s < 1e-3) return fmt::format("{:.3g} us", s * 1e6);
  if (s < 1.0) return fmt::format("{:.4g} ms", s * 1e3);
  return fmt::format("{:.4g} s", s);
}

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
         fmt::format("{:.2f} / {:.2f} / {:.2f} GiB", m.parameters / gib, m.gradients / gib, m.optimizer_states / gib));
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
    line("slowest rank vs mean finish", fmt::format("+{}", human_seconds(r.slowest_rank_excess)));
    line("measured parallel fraction", fmt::format("{:.4f}", r.parallel_fraction));
    line("Amdahl bound on these GPUs", fmt::format("{:.3f}x", r.amdahl_speedup_bound));
    line("Amdahl limit (infinite GPUs)",
         std::isfinite(r.amdahl_limit) ? fmt::format("{:.3f}x", r.amdahl_limit) : std::string("unbounded"));
    line("Karp-Flatt serial fraction", fmt::format("{:.4f}", r.karp_flatt));
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
    line(fmt::format("{} {} ({})", to_string(c.stats.op), to_string(c.stats.algorithm), to_string(c.stats.fidelity)),
         fmt::format("{} x {} B on {} ranks: {} each, algbw {}/s, busbw {}/s", c.stats.count, c.stats.bytes,
                     c.stats.ranks, human_seconds(c.mean_time), human_bytes(c.algbw), human_bytes(c.busbw)));
  line("bytes sent / received", fmt::format("{} / {}", human_bytes(static_cast<double>(r.bytes_sent)),
                                            human_bytes(static_cast<double>(r.bytes_received))));

  constexpr std::size_t kMaxRows = 32;
  if (!r.stages.empty()) {
    out += fmt::format("\n  {:>5} {:>11} {:>11} {:>11} {:>11} {:>11} {:>7} {:>10}\n", "stage", "compute", "tensor",
                       "pipeline", "data", "bubble", "bubble%", "memory");
    for (std::size_t i = 0; i < r.stages.size() && i < kMaxRows; ++i) {
      const Report::Stage& s = r.stages[i];
      out += fmt::format("  {:>5} {:>11} {:>11} {:>11} {:>11} {:>11} {:>7} {:>10}\n", s.stage, human_seconds(s.compute),
                         human_seconds(s.tensor_exposed), human_seconds(s.pipeline_exposed),
                         human_seconds(s.data_exposed), human_seconds(s.bubble), percent(s.bubble_fraction),
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
