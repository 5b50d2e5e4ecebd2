// Capacity planning of a serving pipeline: layout, trial figures, growth and trim steps (batch/replica_plan.hpp).
#include "partsim/batch/replica_plan.hpp"

#include "partsim/common/error.hpp"
#include "partsim/serving/serving_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>

namespace partsim {

ReplicaLayout replica_layout(const Scenario& scenario) {
  const auto* serving = std::get_if<ServingWorkload>(&scenario.workload);
  if (serving == nullptr)
    throw InputError(scenario.source, "/workload/kind",
                     "plan-replicas sizes the stages of a serving pipeline; expected \"serving\"");
  const ArrivalProcess process = serving->arrivals.process;
  ReplicaLayout layout;
  if (process == ArrivalProcess::Closed) {
    layout.rate_pointer = "/workload/arrivals/clients";
    layout.closed.clients = serving->arrivals.clients;
    layout.closed.think_mean = serving->arrivals.think_time.mean;
  } else if (process == ArrivalProcess::Trace) {
    const ArrivalTrace& trace = *serving->arrivals.trace;
    std::size_t rows = trace.times.size();
    if (serving->requests) rows = std::min(rows, static_cast<std::size_t>(*serving->requests));
    // The rows' span as the CSV has it (the scenario's times are divided by its speed).
    const double span = rows >= 2 ? trace.times[rows - 1] * trace.speed : 0.0;
    if (!(span > 0.0))
      throw InputError(scenario.source, "/workload/arrivals/trace",
                       fmt::format("plan-replicas replays the trace at the speed that gives the target rate, and the "
                                   "{} row(s) it sends arrive at one time: they have no rate; expected a trace whose "
                                   "arrivals span some time",
                                   rows));
    layout.rate_pointer = "/workload/arrivals/trace/speed";
    layout.rate_scale = span / static_cast<double>(rows - 1);
  }
  for (std::size_t i = 0; i < serving->stages.size(); ++i) {
    const ServingStage& s = serving->stages[i];
    const auto& prefill = s.llm ? s.llm->prefill_pool : std::nullopt;
    layout.names.push_back(s.name);
    layout.replicas_per_node.push_back(s.replicas_per_node);
    layout.nodes_pointers.push_back(fmt::format("/workload/stages/{}/pool/nodes", i));
    layout.per_node_pointers.push_back(fmt::format("/workload/stages/{}/pool/replicas_per_node", i));
    layout.utilisation_pointers.push_back(
        prefill ? fmt::format("/serving/stages/{}/llm/disaggregation/decode_utilisation", i)
                : fmt::format("/serving/stages/{}/utilisation", i));
    if (!prefill) continue;
    layout.names.push_back(s.name + "-prefill");
    layout.replicas_per_node.push_back(prefill->replicas_per_node);
    layout.nodes_pointers.push_back(fmt::format("/workload/stages/{}/llm/prefill_pool/nodes", i));
    layout.per_node_pointers.push_back(fmt::format("/workload/stages/{}/llm/prefill_pool/replicas_per_node", i));
    layout.utilisation_pointers.push_back(fmt::format("/serving/stages/{}/llm/disaggregation/prefill_utilisation", i));
  }
  return layout;
}

std::string ReplicaLayout::nodes_pointer(std::size_t i) const {
  return i < nodes_pointers.size() ? nodes_pointers[i] : fmt::format("/workload/stages/{}/pool/nodes", i);
}

std::string ReplicaLayout::per_node_pointer(std::size_t i) const {
  return i < per_node_pointers.size() ? per_node_pointers[i]
                                      : fmt::format("/workload/stages/{}/pool/replicas_per_node", i);
}

std::string ReplicaLayout::utilisation_pointer(std::size_t i) const {
  return i < utilisation_pointers.size() ? utilisation_pointers[i] : fmt::format("/serving/stages/{}/utilisation", i);
}

namespace {

double figure(const nlohmann::json& report, const std::string& pointer) {
  const nlohmann::json::json_pointer p(pointer);
  if (!report.contains(p) || !report.at(p).is_number())
    throw InputError("report", pointer, "expected a number in the candidate's report");
  return report.at(p).get<double>();
}

} // namespace

ReplicaTrial read_trial(const nlohmann::json& report, const ReplicaLayout& layout, std::vector<int> nodes,
                        double offered, std::vector<int> per_node) {
  ReplicaTrial t;
  t.nodes = std::move(nodes);
  t.per_node = per_node.empty() ? layout.replicas_per_node : std::move(per_node);
  t.offered = offered;
  t.throughput = figure(report, "/serving/throughput_items_per_s");
  t.p50 = figure(report, "/serving/latency/p50_s");
  t.p99 = figure(report, "/serving/latency/p99_s");
  t.drop_rate = figure(report, "/serving/drop_rate");
  for (std::size_t i = 0; i < t.nodes.size(); ++i)
    t.utilisation.push_back(figure(report, layout.utilisation_pointer(i)));
  const nlohmann::json::json_pointer bottleneck("/serving/bottleneck");
  if (report.contains(bottleneck) && report.at(bottleneck).is_string())
    t.bottleneck = report.at(bottleneck).get<std::string>();
  return t;
}

bool meets_targets(const ReplicaTrial& trial, const ReplicaTargets& targets) {
  return trial.throughput >= (1.0 - targets.tolerance) * targets.throughput && trial.p99 <= targets.p99 &&
         trial.drop_rate <= targets.max_drop_rate &&
         std::all_of(trial.utilisation.begin(), trial.utilisation.end(),
                     [&](double u) { return u <= targets.max_utilisation; });
}

std::optional<std::vector<int>> grow(const ReplicaTrial& trial, const ReplicaTargets& targets) {
  std::optional<std::size_t> busiest;
  for (std::size_t i = 0; i < trial.nodes.size(); ++i) {
    if (trial.nodes[i] >= targets.max_nodes_per_stage) continue;
    if (!busiest || trial.utilisation[i] > trial.utilisation[*busiest]) busiest = i;
  }
  if (!busiest) return std::nullopt;
  std::vector<int> next = trial.nodes;
  ++next[*busiest];
  return next;
}

std::vector<std::vector<int>> trim_candidates(const ReplicaTrial& trial) {
  std::vector<std::size_t> order(trial.nodes.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return trial.utilisation[a] < trial.utilisation[b]; });
  std::vector<std::vector<int>> out;
  for (const std::size_t i : order) {
    if (trial.nodes[i] <= 1) continue;
    std::vector<int> fewer = trial.nodes;
    --fewer[i];
    out.push_back(std::move(fewer));
  }
  return out;
}

std::vector<Override> replica_overrides(const ReplicaLayout& layout, const std::vector<int>& nodes, double rate) {
  PARTSIM_CHECK(nodes.size() == layout.names.size()) << nodes.size() << " node counts for " << layout.names.size();
  std::vector<Override> out;
  int total = layout.fixed_nodes;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    out.push_back({layout.nodes_pointer(i), nodes[i]});
    total += nodes[i];
  }
  out.push_back({"/cluster/nodes", total});
  if (layout.closed.clients > 0) {
    PARTSIM_CHECK(layout.closed.target > 0.0) << "a closed-loop layout without its target";
    const double clients = static_cast<double>(layout.closed.clients) * rate / layout.closed.target;
    out.push_back({layout.rate_pointer, std::max<std::int64_t>(1, std::llround(clients))});
  } else {
    out.push_back({layout.rate_pointer, rate * layout.rate_scale});
  }
  return out;
}

std::optional<std::pair<int, int>> pool_shape(int replicas, int per_node_max) {
  PARTSIM_CHECK(replicas >= 1 && per_node_max >= 1) << replicas << " replicas, " << per_node_max << " per node";
  const int nodes = (replicas + per_node_max - 1) / per_node_max;
  if (replicas % nodes != 0) return std::nullopt;
  return std::make_pair(nodes, replicas / nodes);
}

std::vector<int> replica_counts(int lo, int hi, int per_node_max) {
  std::vector<int> out;
  for (int r = std::max(lo, 1); r <= hi; ++r)
    if (pool_shape(r, per_node_max)) out.push_back(r);
  return out;
}

int fewest_replicas(int replicas, double utilisation) {
  const double busy = static_cast<double>(replicas) * std::clamp(utilisation, 0.0, 1.0);
  return std::min(replicas, static_cast<int>(std::floor(busy)) + 1);
}

std::vector<Override> replica_overrides(const ReplicaLayout& layout, const std::vector<int>& nodes,
                                        const std::vector<int>& per_node, double rate) {
  PARTSIM_CHECK(per_node.size() == nodes.size()) << per_node.size() << " per-node counts for " << nodes.size();
  std::vector<Override> out = replica_overrides(layout, nodes, rate);
  for (std::size_t i = 0; i < per_node.size(); ++i)
    out.insert(out.begin() + static_cast<std::ptrdiff_t>(nodes.size() + i), {layout.per_node_pointer(i), per_node[i]});
  return out;
}

void check_closed_loop_target(const ReplicaLayout& layout, double target, double tolerance) {
  const ReplicaLayout::ClosedLoop& c = layout.closed;
  if (c.clients <= 0 || c.think_mean <= 0.0) return;
  const double most = static_cast<double>(c.clients) / c.think_mean;
  if ((1.0 - tolerance) * target >= most)
    throw InputError("--throughput", "",
                     fmt::format("expected below {:g} items/s: {} closed-loop clients thinking {:g} s on average ask "
                                 "at most clients / think time (X = N / (R + Z))",
                                 most, c.clients, c.think_mean));
}

} // namespace partsim
