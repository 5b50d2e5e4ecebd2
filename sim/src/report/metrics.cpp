// Report metrics from the timeline.
#include "partsim/report/metrics.hpp"

#include "partsim/plan/model_parallel.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace partsim {

double amdahl_speedup(double parallel_fraction, double processors) {
  return 1.0 / ((1.0 - parallel_fraction) + parallel_fraction / processors);
}

double karp_flatt(double speedup, double processors) {
  if (processors <= 1.0 || speedup <= 0.0) return 0.0;
  return (1.0 / speedup - 1.0 / processors) / (1.0 - 1.0 / processors);
}

double measured_parallel_fraction(const std::vector<RankTimeline>& ranks, const RankTimeline* coordinator,
                                  const std::vector<int>& representative) {
  if (ranks.size() < 2) return 0.0;
  // Sweep over compute interval edges: work done while exactly one timeline computes is serial. A folded run's
  // identical timelines are one timeline of weight w: w ranks start and stop at the same instants.
  std::vector<int> weight(ranks.size(), representative.empty() ? 1 : 0);
  for (const int rep : representative) ++weight[static_cast<std::size_t>(rep)];
  std::vector<std::pair<double, int>> edges;
  double total = 0.0;
  // The total is summed rank by rank, interval by interval, as if every rank had its own copy: the same bits as the
  // unfolded run (w x d would round differently). Additions only: cheap next to the sort.
  auto add_total = [&](const RankTimeline& t) {
    for (const Interval& i : t.intervals)
      if (i.kind == IntervalKind::Compute) total += i.end - i.begin;
  };
  auto add_edges = [&](const RankTimeline& t, int w) {
    for (const Interval& i : t.intervals)
      if (i.kind == IntervalKind::Compute) {
        edges.emplace_back(i.begin, +w);
        edges.emplace_back(i.end, -w);
      }
  };
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    add_total(representative.empty() ? ranks[r] : ranks[static_cast<std::size_t>(representative[r])]);
    if (weight[r] > 0) add_edges(ranks[r], weight[r]);
  }
  if (coordinator != nullptr) {
    add_total(*coordinator);
    add_edges(*coordinator, 1);
  }
  if (total <= 0.0) return 1.0;
  std::sort(edges.begin(), edges.end());
  double serial = 0.0;
  int active = 0;
  double last = 0.0;
  for (const auto& [time, delta] : edges) {
    if (active == 1) serial += time - last;
    active += delta;
    last = time;
  }
  return std::clamp(1.0 - serial / total, 0.0, 1.0);
}

namespace {

std::vector<Report::Stage> stage_metrics(const Plan& plan, const Report& r) {
  std::vector<Report::Stage> stages(static_cast<std::size_t>(plan.pipeline_stages));
  for (std::size_t s = 0; s < stages.size(); ++s) {
    stages[s].stage = static_cast<int>(s);
    if (s < plan.stage_memory.size()) stages[s].memory = plan.stage_memory[s];
  }
  for (const RankMetrics& m : r.ranks) {
    if (m.stage < 0 || static_cast<std::size_t>(m.stage) >= stages.size()) continue;
    Report::Stage& s = stages[static_cast<std::size_t>(m.stage)];
    ++s.ranks;
    s.compute += m.compute;
    s.tensor_exposed += m.tensor_exposed;
    s.pipeline_exposed += m.pipeline_exposed;
    s.data_exposed += m.data_exposed;
    s.expert_exposed += m.expert_exposed;
    s.context_exposed += m.context_exposed;
    s.bubble += m.bubble;
  }
  for (Report::Stage& s : stages) {
    if (s.ranks == 0) continue;
    const double n = static_cast<double>(s.ranks);
    for (double* v : {&s.compute, &s.tensor_exposed, &s.pipeline_exposed, &s.data_exposed, &s.expert_exposed,
                      &s.context_exposed, &s.bubble})
      *v /= n;
    s.bubble_fraction = r.makespan > 0 ? 1.0 - s.compute / r.makespan : 0.0;
  }
  return stages;
}

/** Plan::marked_rank's layers as it ran them: each transformer layer from the boundary before it in its pass (the
 * pass's start or the previous unit's end) to its end. Absent without marks or when the rank was not simulated. */
std::optional<Report::LayerPasses> layer_passes(const Plan& plan, const RunResult& result) {
  if (plan.marked_rank < 0 || plan.unit_marks.empty()) return std::nullopt;
  const std::vector<double>& at = result.ranks.at(static_cast<std::size_t>(plan.marked_rank)).marks;
  if (at.size() != plan.unit_marks.size()) return std::nullopt;
  Report::LayerPasses out;
  out.rank = plan.marked_rank;
  for (std::size_t i = 1; i < at.size(); ++i) {
    const UnitMark& m = plan.unit_marks[i];
    if (!m.layer_end) continue;
    const double time = at[i] - at[i - 1];
    if (m.forward) {
      out.forward += time;
      ++out.forward_layers;
    } else {
      out.backward += time;
      ++out.backward_layers;
    }
  }
  if (out.forward_layers == 0 || out.backward_layers == 0) return std::nullopt;
  out.forward /= static_cast<double>(out.forward_layers);
  out.backward /= static_cast<double>(out.backward_layers);
  return out;
}

} // namespace

Report make_report(const Scenario& scenario, const Plan& plan, const RunResult& result) {
  Report r;
  r.scenario_name = scenario.name;
  r.scenario_description = scenario.description;
  r.strategy_summary = plan.summary;
  r.seed = scenario.run.seed;
  r.network = result.network;
  r.gpus = static_cast<int>(result.ranks.size());
  r.iterations = plan.iterations;
  r.makespan = result.makespan;
  r.baseline_time = result.baseline_time;
  r.messages = result.messages;
  r.executions = result.executions;
  r.folding = result.folding;
  r.simulated_ranks = result.simulated_ranks;
  r.folded = result.folded();
  r.actors = result.actors;
  r.executions_as_sleeps = result.executions_as_sleeps;
  r.driven_flows = result.driven_flows;
  r.balancing = result.balancing;
  r.class_split = plan.class_split;
  r.class_split_methods = plan.class_split_methods;
  if (r.class_split)
    r.oversampling_compute = static_cast<double>(r.class_split->work.samples_replicated) * plan.sample_time *
                             static_cast<double>(plan.iterations);
  if (result.coordinator) {
    r.coordinator_serial = result.coordinator->serial_compute;
    r.coordinator_coordination = result.coordinator->coordination;
    r.coordinator_setup = result.coordinator->setup;
    r.bytes_sent += result.coordinator->bytes_sent;
    r.bytes_received += result.coordinator->bytes_received;
  }
  if (r.balancing) {
    r.bytes_sent += r.balancing->bytes_sent;
    r.bytes_received += r.balancing->bytes_received;
  }

  const int per_node = scenario.cluster.gpus_per_node;
  r.ranks.reserve(result.ranks.size());
  for (std::size_t i = 0; i < result.ranks.size(); ++i) {
    const RankTimeline& t = result.ranks[i];
    RankMetrics m;
    m.rank = static_cast<int>(i);
    const int gpu = plan.ranks[i].gpu;
    m.node = gpu / per_node;
    m.local_gpu = gpu % per_node;
    m.samples = t.samples;
    m.compute = t.total(IntervalKind::Compute);
    m.communication = t.total(IntervalKind::Communication);
    m.wait = t.total(IntervalKind::Wait);
    m.data_loading = t.total(IntervalKind::DataLoading);
    m.tail_idle = result.makespan - t.finish;
    m.finish = t.finish;
    m.bytes_sent = t.bytes_sent;
    m.bytes_received = t.bytes_received;
    m.messages_sent = t.messages_sent;
    m.stream_wait = t.stream_wait;
    if (i < plan.stage_of_rank.size()) m.stage = plan.stage_of_rank[i];
    m.data_exposed = t.blocked_by_kind[static_cast<std::size_t>(CommKind::Data)];
    m.tensor_exposed = t.blocked_by_kind[static_cast<std::size_t>(CommKind::Tensor)];
    m.pipeline_exposed = t.blocked_by_kind[static_cast<std::size_t>(CommKind::Pipeline)];
    m.expert_exposed = t.blocked_by_kind[static_cast<std::size_t>(CommKind::Expert)];
    m.context_exposed = t.blocked_by_kind[static_cast<std::size_t>(CommKind::Context)];
    m.bubble = t.bubble;
    if (i < result.streams.size()) {
      const RankTimeline& stream = result.streams[i];
      const double on_stream = stream.total(IntervalKind::Communication) + stream.total(IntervalKind::Wait);
      m.overlapped = std::max(0.0, on_stream - t.stream_wait);
      m.bytes_sent += stream.bytes_sent;
      m.bytes_received += stream.bytes_received;
      m.messages_sent += stream.messages_sent;
      r.bytes_sent += stream.bytes_sent;
      r.bytes_received += stream.bytes_received;
    }
    m.overlapped += t.hidden; // collectives beside compute steps (tensor-parallel overlap)
    r.overlapped_communication += m.overlapped;
    r.bytes_sent += t.bytes_sent;
    r.bytes_received += t.bytes_received;
    r.ranks.push_back(m);
  }

  const double n = static_cast<double>(r.gpus);
  const double samples = static_cast<double>(plan.samples_per_iteration) * static_cast<double>(plan.iterations);
  r.throughput = r.makespan > 0 ? samples / r.makespan : 0.0;
  r.speedup = r.makespan > 0 ? r.baseline_time / r.makespan : 0.0;
  r.efficiency = n > 0 ? r.speedup / n : 0.0;

  double compute_sum = 0.0;
  double compute_max = 0.0;
  double comm_sum = 0.0;
  double idle_sum = 0.0;
  double finish_sum = 0.0;
  for (const RankMetrics& m : r.ranks) {
    compute_sum += m.compute;
    compute_max = std::max(compute_max, m.compute);
    comm_sum += m.communication;
    idle_sum += m.idle();
    r.data_loading += m.data_loading;
    finish_sum += m.finish;
  }
  const double compute_mean = compute_sum / n;
  double variance = 0.0;
  for (const RankMetrics& m : r.ranks) variance += (m.compute - compute_mean) * (m.compute - compute_mean);
  variance /= n;
  r.imbalance_max_over_mean = compute_mean > 0 ? compute_max / compute_mean : 1.0;
  r.imbalance_cv = compute_mean > 0 ? std::sqrt(variance) / compute_mean : 0.0;
  const double gpu_seconds = n * r.makespan;
  r.communication_overhead = gpu_seconds > 0 ? comm_sum / gpu_seconds : 0.0;
  r.idle_share = gpu_seconds > 0 ? idle_sum / gpu_seconds : 0.0;
  r.time_lost_waiting = idle_sum;
  r.slowest_rank_excess = std::max(0.0, r.makespan - finish_sum / n); // never negative by rounding

  // The serial part runs on the coordinator: it belongs in the concurrency profile.
  r.parallel_fraction = measured_parallel_fraction(
      result.ranks, result.coordinator ? &result.coordinator->timeline : nullptr, result.representative);
  r.amdahl_speedup_bound = amdahl_speedup(r.parallel_fraction, n);
  r.amdahl_limit =
      r.parallel_fraction < 1.0 ? 1.0 / (1.0 - r.parallel_fraction) : std::numeric_limits<double>::infinity();
  r.karp_flatt = karp_flatt(r.speedup, n);

  r.memory = plan.memory;
  r.model_flops_per_iteration = plan.model_flops_per_iteration;
  if (r.makespan > 0 && plan.model_flops_per_iteration > 0) {
    const double peak = scenario.cluster.gpu.peak(workload_data_type(scenario.workload));
    const double iterations = static_cast<double>(plan.iterations);
    r.mfu = plan.model_flops_per_iteration * iterations / r.makespan / (n * peak);
    r.hfu = plan.hardware_flops_per_iteration * iterations / r.makespan / (n * peak);
    r.tokens_per_second = plan.tokens_per_iteration * iterations / r.makespan;
  }
  r.stages = stage_metrics(plan, r);
  r.expert_parallel = plan.expert_parallel;
  r.context_parallel = plan.context_parallel;
  r.expert_routing = plan.expert_routing;
  if (const auto* training = std::get_if<ModelTraining>(&scenario.workload);
      training != nullptr && training->model.is_transformer()) {
    TensorSplit split;
    if (const auto* mp = std::get_if<ModelParallel>(&scenario.strategy)) split = layer_split(*mp);
    r.layer_ops = layer_ops_breakdown(*training, split, scenario.cluster.gpu);
  }
  r.layer_passes = layer_passes(plan, result);
  for (const CollectiveStats& c : result.collectives) {
    Report::Collective out;
    out.stats = c;
    out.mean_time = c.count > 0 ? c.total_time / static_cast<double>(c.count) : 0.0;
    out.algbw = algorithm_bandwidth(c.op, static_cast<double>(c.bytes), out.mean_time);
    out.busbw = bus_bandwidth(c.op, c.ranks, out.algbw);
    r.collectives.push_back(out);
  }
  if (scenario.cluster.gpu.power) {
    // Not computing and not moving data is idle: waits, the tail and any gap.
    const GpuStateTimes times{compute_sum, comm_sum, std::max(0.0, gpu_seconds - compute_sum - comm_sum)};
    RunExtent extent{r.gpus, scenario.cluster.nodes, r.makespan, plan.iterations, std::nullopt};
    if (plan.tokens_per_iteration > 0)
      extent.tokens = static_cast<double>(plan.tokens_per_iteration) * static_cast<double>(plan.iterations);
    r.energy = energy_figures(scenario.energy, *scenario.cluster.gpu.power, times, extent, scenario.budget.tokens);
    r.cost = cost_figures(scenario.cost, *r.energy, extent, scenario.budget.tokens);
    if (scenario.budget.defaulted && r.energy->budget) {
      r.energy->assumed.emplace_back("/budget/tokens");
      r.cost->assumed.emplace_back("/budget/tokens");
    }
  }
  if (scenario.reliability && r.makespan > 0.0) {
    r.reliability = reliability_figures(scenario, plan, r.makespan, result.checkpoint_write);
    r.reliability->injected = result.injected;
  }
  if (scenario.cluster.stragglers) r.stragglers = stragglers_section(scenario, plan, result);
  return r;
}

Report make_out_of_memory_report(const Scenario& scenario, const Plan& plan) {
  Report r;
  r.scenario_name = scenario.name;
  r.scenario_description = scenario.description;
  r.strategy_summary = plan.summary;
  r.seed = scenario.run.seed;
  r.gpus = scenario.cluster.gpu_count();
  r.iterations = plan.iterations;
  r.memory = plan.memory;
  r.out_of_memory = true;
  for (std::size_t s = 0; s < plan.stage_memory.size(); ++s) {
    Report::Stage stage;
    stage.stage = static_cast<int>(s);
    stage.memory = plan.stage_memory[s];
    r.stages.push_back(stage);
  }
  r.model_flops_per_iteration = plan.model_flops_per_iteration;
  return r;
}

} // namespace partsim
