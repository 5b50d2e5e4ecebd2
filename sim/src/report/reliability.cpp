// A run's `/reliability` figures (report/reliability.hpp).
#include "partsim/report/reliability.hpp"

#include "partsim/common/error.hpp"
#include "partsim/input/scenario.hpp"
#include "partsim/model/memory.hpp"
#include "partsim/plan/placement.hpp"
#include "partsim/plan/plan.hpp"
#include "partsim/plan/sharded_memory.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace partsim {

namespace {

/** Events kept for the report's consumers; the counts cover all. */
constexpr std::size_t kMaxEvents = 10'000;
constexpr double kSecondsPerDay = 86400.0;
constexpr double kSecondsPerHour = 3600.0;

/** A duration for the table: s, h or days as fits. */
std::string human_duration(double s) {
  if (s < 2.0 * kSecondsPerHour) return fmt::format("{:.4g} s", s);
  if (s < 2.0 * kSecondsPerDay) return fmt::format("{:.4g} h", s / kSecondsPerHour);
  return fmt::format("{:.4g} days", s / kSecondsPerDay);
}

/** The data-parallel replica of each of a node's GPUs, in rank order (rank = GPU). */
std::vector<std::int64_t> replicas_of_node(const Scenario& scenario) {
  const std::int64_t g = scenario.cluster.gpus_per_node;
  std::vector<std::int64_t> out;
  if (const auto* mp = std::get_if<ModelParallel>(&scenario.strategy)) {
    for (std::int64_t rank = 0; rank < g; ++rank) out.push_back(coordinates_of(*mp, static_cast<int>(rank)).data);
  } else {
    for (std::int64_t rank = 0; rank < g; ++rank) out.push_back(rank); // one GPU per replica
  }
  return out;
}

/** Distinct values among the first `n` of `v`. */
std::int64_t distinct(const std::vector<std::int64_t>& v, std::int64_t n) {
  std::vector<std::int64_t> head(v.begin(), v.begin() + std::min<std::int64_t>(n, static_cast<std::int64_t>(v.size())));
  std::sort(head.begin(), head.end());
  return std::unique(head.begin(), head.end()) - head.begin();
}

/** checkpoint_writes before /reliability/checkpoint/size scales them. */
std::vector<CheckpointWrite> unscaled_writes(const Scenario& scenario, const Plan& plan) {
  std::vector<CheckpointWrite> out;
  const auto* mp = std::get_if<ModelParallel>(&scenario.strategy);
  const auto* training = std::get_if<ModelTraining>(&scenario.workload);
  if (mp == nullptr || training == nullptr) {
    PARTSIM_CHECK(plan.memory.has_value()) << "a model-training plan without memory figures";
    out.push_back({0, plan.memory->parameters + plan.memory->optimizer_states});
    return out;
  }
  const double element = bytes_per_element(training->data_type);
  const double state = optimizer_bytes_per_parameter(training->optimizer, training->data_type);
  const double expert_replicas = static_cast<double>(mp->data_ranks()) / static_cast<double>(mp->expert);
  std::vector<double> experts; // per stage: the routed experts' parameters on one GPU, before ZeRO
  for (int s = 0; s < mp->pipeline; ++s) experts.push_back(stage_expert_parameters(*training, *mp, s));
  for (std::size_t rank = 0; rank < plan.ranks.size(); ++rank) {
    const ParallelCoordinates at = coordinates_of(*mp, static_cast<int>(rank));
    const int dr = data_rank(*mp, at);
    const MemoryBreakdown& m = static_cast<std::size_t>(at.pipeline) < plan.stage_memory.size()
                                   ? plan.stage_memory[static_cast<std::size_t>(at.pipeline)]
                                   : *plan.memory;
    const double x = experts[static_cast<std::size_t>(at.pipeline)];
    const double expert_parameters = x * element / (mp->zero >= 3 ? expert_replicas : 1.0);
    const double expert_states = x * state / (mp->zero >= 1 ? expert_replicas : 1.0);
    const double dense_parameters = std::max(0.0, m.parameters - expert_parameters);
    const double dense_states = std::max(0.0, m.optimizer_states - expert_states);
    const bool first = dr == 0;               // the dense part is whole on every data rank
    const bool first_group = dr < mp->expert; // every expert once in the first expert group
    const double part =
        (mp->zero >= 3 || first ? dense_parameters : 0.0) + (mp->zero >= 1 || first ? dense_states : 0.0) +
        (mp->zero >= 3 || first_group ? expert_parameters : 0.0) + (mp->zero >= 1 || first_group ? expert_states : 0.0);
    if (part > 0.0) out.push_back({plan.ranks[rank].gpu, part});
  }
  if (out.empty()) out.push_back({0, 0.0});
  return out;
}

/** The checkpoint's size from its writes: their sum, or /reliability/checkpoint/size with the largest write scaled
 * alike. */
CheckpointSize size_of(const Scenario& scenario, const std::vector<CheckpointWrite>& writes) {
  CheckpointSize out;
  for (const CheckpointWrite& w : writes) {
    out.bytes += w.bytes;
    out.largest_writer_bytes = std::max(out.largest_writer_bytes, w.bytes);
    ++out.writers;
  }
  if (scenario.reliability && scenario.reliability->checkpoint_bytes && out.bytes > 0.0) {
    // /reliability/checkpoint/size
    const double scale = *scenario.reliability->checkpoint_bytes / out.bytes;
    out.largest_writer_bytes *= scale;
    out.bytes = *scenario.reliability->checkpoint_bytes;
  }
  return out;
}

} // namespace

CheckpointSize checkpoint_size(const Scenario& scenario, const Plan& plan) {
  return size_of(scenario, unscaled_writes(scenario, plan));
}

std::vector<CheckpointWrite> checkpoint_writes(const Scenario& scenario, const Plan& plan) {
  std::vector<CheckpointWrite> out = unscaled_writes(scenario, plan);
  const CheckpointSize size = size_of(scenario, out);
  double sum = 0.0;
  for (const CheckpointWrite& w : out) sum += w.bytes;
  if (sum > 0.0)
    for (CheckpointWrite& w : out) w.bytes *= size.bytes / sum;
  return out;
}

ReliabilityFigures reliability_figures(const Scenario& scenario, const Plan& plan, double makespan,
                                       std::optional<double> simulated_write) {
  PARTSIM_CHECK(scenario.reliability.has_value() && plan.iterations > 0 && makespan > 0.0) << makespan;
  ReliabilityFigures f;
  f.spec = *scenario.reliability;
  const ReliabilitySpec& spec = f.spec;
  f.assumed = spec.defaulted;
  f.iteration_time = makespan / static_cast<double>(plan.iterations);
  if (spec.iterations) {
    f.iterations = *spec.iterations;
  } else {
    PARTSIM_CHECK(plan.tokens_per_iteration > 0.0) << "model training without tokens";
    f.iterations = std::max<std::int64_t>(
        1, static_cast<std::int64_t>(std::ceil(scenario.budget.tokens / plan.tokens_per_iteration)));
    if (scenario.budget.defaulted) f.assumed.emplace_back("/budget/tokens");
  }
  if (plan.tokens_per_iteration > 0.0) f.tokens = static_cast<double>(f.iterations) * plan.tokens_per_iteration;

  f.size = checkpoint_size(scenario, plan);
  f.checkpoint_write_closed_form = f.size.bytes / spec.write_bandwidth;
  f.checkpoint_write = simulated_write.value_or(f.checkpoint_write_closed_form);
  f.write_simulated = simulated_write.has_value();
  f.reload = f.size.bytes / spec.read_bandwidth;
  f.checkpoint_block =
      spec.mode == CheckpointMode::Sync ? f.checkpoint_write : f.size.largest_writer_bytes / spec.host_copy_bandwidth;
  const double wait = spec.policy == RecoveryPolicy::Restart ? spec.repair_time
                      : spec.policy == RecoveryPolicy::Spare ? spec.spare_delay
                                                             : 0.0; // elastic: no wait for the failed part
  f.recovery = spec.detection_time + wait + spec.restart_time + f.reload;

  if (!spec.components.empty()) {
    f.mtbf = job_mtbf(spec.components);
    f.young_daly = young_daly_interval(f.checkpoint_block, *f.mtbf);
  }
  if (spec.interval_iterations) {
    f.interval_iterations = *spec.interval_iterations;
  } else {
    const std::optional<double> interval = spec.interval ? spec.interval : f.young_daly;
    // Without failures an auto interval never checkpoints.
    f.interval_iterations =
        interval ? std::max<std::int64_t>(1, std::llround(*interval / f.iteration_time)) : f.iterations;
  }
  f.interval_iterations = std::min(f.interval_iterations, f.iterations);
  f.interval = static_cast<double>(f.interval_iterations) * f.iteration_time;
  if (f.mtbf)
    f.daly_expected_time = daly_expected_time(static_cast<double>(f.iterations) * f.iteration_time, f.interval,
                                              f.checkpoint_block, f.recovery, *f.mtbf);

  ReplayInput in;
  in.iteration_time = f.iteration_time;
  in.iterations = f.iterations;
  in.checkpoint_every = f.interval_iterations;
  in.checkpoint_block = f.checkpoint_block;
  in.checkpoint_write = spec.mode == CheckpointMode::Async ? f.checkpoint_write : 0.0;
  in.recovery = f.recovery;
  in.distribution = spec.distribution;
  in.weibull_shape = spec.weibull_shape;
  in.components = spec.components;
  in.failure_times = spec.failure_times;
  in.seed = scenario.run.seed;
  in.max_events = kMaxEvents;
  if (spec.policy == RecoveryPolicy::Elastic) {
    const auto* mp = std::get_if<ModelParallel>(&scenario.strategy);
    in.elastic = true;
    in.replicas = mp != nullptr ? mp->data : scenario.cluster.gpu_count();
    if (spec.min_replicas > in.replicas)
      throw InputError(
          scenario.source, "/reliability/recovery/min_replicas",
          fmt::format("expected at most the {} data-parallel replicas, got {}", in.replicas, spec.min_replicas));
    in.min_replicas = spec.min_replicas;
    const std::vector<std::int64_t> node = replicas_of_node(scenario);
    const std::int64_t g = scenario.cluster.gpus_per_node;
    const std::int64_t nics = scenario.cluster.nodes > 1 ? scenario.cluster.network.nics_per_node : 1;
    auto hit = [&](FailureComponent c) -> std::int64_t& { return in.replicas_hit[static_cast<std::size_t>(c)]; };
    hit(FailureComponent::Gpu) = 1;
    hit(FailureComponent::Listed) = 1;
    hit(FailureComponent::Nic) = distinct(node, std::max<std::int64_t>(1, g / nics));
    hit(FailureComponent::Host) = distinct(node, g);
    hit(FailureComponent::Switch) = in.replicas; // the simulated network has no redundant path
    in.repair = spec.repair_time;
    in.rejoin = spec.restart_time;
    f.replicas = in.replicas;
  }
  f.replay = replay_reliability(in);
  return f;
}

ReportReliability reliability_section(const ReliabilityFigures& f, std::uint64_t seed) {
  const ReplayResult& r = f.replay;
  ReportReliability out;
  out.method = fmt::format("{} simulated on SimGrid; replayed over a seeded discrete-event process of failures, "
                           "checkpoints and recoveries (docs/failures.md)",
                           f.write_simulated ? "one iteration and one checkpoint's writes" : "one iteration");
  out.seed = seed;
  out.iterations = f.iterations;
  out.tokens = f.tokens;
  out.iteration_time = f.iteration_time;
  out.time_to_finish = r.total;
  out.time_to_finish_days = r.total / kSecondsPerDay;
  out.useful = r.useful;
  out.goodput = r.total > 0.0 ? r.useful / r.total : 0.0;
  if (f.spec.policy == RecoveryPolicy::Elastic) out.degraded = r.degraded;
  out.lost_work = r.lost;
  out.checkpoint_time = r.checkpoint;
  out.recovery_time = r.recovery;
  out.failures = r.failures;
  for (const auto& [component, count] : r.failures_by_component)
    out.failures_by_component[std::string(enum_name(component))] = count;
  out.job_mtbf = f.mtbf;
  out.distribution = f.spec.distribution;
  out.weibull_shape = f.spec.weibull_shape;
  out.policy = f.spec.policy;
  out.recovery_per_failure = f.recovery;
  if (f.injected && f.spec.inject) {
    const InjectedFailureOutcome& x = *f.injected;
    ReportInjectedFailure in;
    in.method = "the failing GPUs' hosts (or the NIC's or switch's links) turned off in SimGrid at at_s of a run of "
                "the iteration on an engine of its own (every rank simulated, no folding): their actors end, transfers "
                "to and from them fail; the ranks "
                "whose activity fails stop, the others wait until the detection time stops the job";
    in.what = f.spec.inject->what;
    in.fired = x.fired;
    in.at = x.fired ? x.at : f.spec.inject->at;
    in.detection = f.spec.detection_time;
    in.stopped = x.fired ? x.stopped : 0.0;
    in.ranks = x.ranks;
    in.failed_ranks.assign(x.failed_ranks.begin(), x.failed_ranks.end());
    in.noticed_ranks = x.noticed_count;
    in.hung_ranks = x.hung;
    in.finished_ranks = x.finished;
    for (const auto& [activity, ranks] : x.running_at_failure) in.running_at_failure.push_back({activity, ranks});
    for (const InjectedFailureNotice& n : x.noticed) in.noticed.push_back({n.rank, n.at, n.step});
    if (x.fired) {
      in.lost_gpu_seconds = static_cast<double>(x.ranks) * x.stopped;
      in.training_again_at = x.at + f.recovery;
      in.iteration_done_at = in.training_again_at + f.iteration_time;
    }
    out.injected = std::move(in);
  }
  out.checkpoint_mode = f.spec.mode;
  out.checkpoint_bytes = f.size.bytes;
  out.checkpoint_writers = f.size.writers;
  out.checkpoint_block = f.checkpoint_block;
  out.checkpoint_write = f.checkpoint_write;
  out.checkpoint_write_closed_form = f.checkpoint_write_closed_form;
  out.reload = f.reload;
  out.checkpoints = r.checkpoints;
  out.checkpoints_lost = r.checkpoints_lost;
  out.interval_iterations = f.interval_iterations;
  out.interval = f.interval;
  out.young_daly_interval = f.young_daly;
  if (f.young_daly && *f.young_daly > 0.0) out.interval_over_young_daly = f.interval / *f.young_daly;
  out.daly_expected_time = f.daly_expected_time;
  out.storage_source = f.spec.bandwidth_source;
  out.assumed = f.assumed;
  return out;
}

std::vector<std::pair<std::string, std::string>> reliability_table_lines(const ReliabilityFigures& f) {
  const ReplayResult& r = f.replay;
  std::vector<std::pair<std::string, std::string>> out;
  out.emplace_back("time to finish / goodput",
                   fmt::format("{} for {} iterations / {:.2f}% (replayed over failures)", human_duration(r.total),
                               f.iterations, r.total > 0.0 ? 100.0 * r.useful / r.total : 0.0));
  if (f.spec.policy == RecoveryPolicy::Elastic)
    out.emplace_back("on fewer replicas (elastic)",
                     fmt::format("{} beyond the full-speed time, {} replicas", human_duration(r.degraded), f.replicas));
  std::string by;
  for (const auto& [component, count] : r.failures_by_component)
    by += fmt::format("{}{} {}", by.empty() ? "" : ", ", count, enum_name(component));
  out.emplace_back("failures / lost work / recovery",
                   fmt::format("{}{} / {} / {} ({} each, {})", r.failures, by.empty() ? "" : " (" + by + ")",
                               human_duration(r.lost), human_duration(r.recovery), human_duration(f.recovery),
                               enum_name(f.spec.policy)));
  out.emplace_back("checkpoints", fmt::format("{} of {:.4g} GB ({}), {} blocking each, {} in all", r.checkpoints,
                                              f.size.bytes / 1e9, enum_name(f.spec.mode),
                                              human_duration(f.checkpoint_block), human_duration(r.checkpoint)));
  out.emplace_back("checkpoint interval",
                   f.young_daly
                       ? fmt::format("every {} iterations ({}); Young/Daly {}", f.interval_iterations,
                                     human_duration(f.interval), human_duration(*f.young_daly))
                       : fmt::format("every {} iterations ({})", f.interval_iterations, human_duration(f.interval)));
  if (f.injected && f.spec.inject) {
    const InjectedFailureOutcome& x = *f.injected;
    if (!x.fired) {
      out.emplace_back("injected failure", fmt::format("{} at {}: the iteration had ended (nothing failed)",
                                                       f.spec.inject->what, human_duration(f.spec.inject->at)));
    } else {
      std::string running;
      for (std::size_t i = 0; i < x.running_at_failure.size() && i < 3; ++i)
        running +=
            fmt::format("{}{} {}", i == 0 ? "" : ", ", x.running_at_failure[i].second, x.running_at_failure[i].first);
      out.emplace_back("injected failure",
                       fmt::format("{} at {} (ranks then: {}{})", f.spec.inject->what, human_duration(x.at), running,
                                   x.running_at_failure.size() > 3 ? ", ..." : ""));
      out.emplace_back("  failed / noticed / hung",
                       fmt::format("{} / {}{} / {} ranks of {}, stopped at {} (detection), training again at {}",
                                   x.failed_ranks.size(), x.noticed_count,
                                   x.noticed.empty()
                                       ? std::string()
                                       : fmt::format(" (first rank {} at {}: {})", x.noticed.front().rank,
                                                     human_duration(x.noticed.front().at), x.noticed.front().step),
                                   x.hung, x.ranks, human_duration(x.stopped), human_duration(x.at + f.recovery)));
    }
  }
  return out;
}

std::string reliability_chrome_trace(const std::string& scenario_name, const ReliabilityFigures& figures) {
  const std::vector<ReplayEvent>& events = figures.replay.events;
  std::string out = fmt::format(R"j({{"displayTimeUnit":"ms","otherData":{{"scenario":{},"time_unit":"us (replayed)",)j"
                                R"j("events":"{} of the replay's first {}"}},"traceEvents":[)j",
                                nlohmann::json(scenario_name).dump(), events.size(), kMaxEvents);
  bool first = true;
  const auto event = [&](const std::string& text) {
    out += first ? "\n" : ",\n";
    out += text;
    first = false;
  };
  constexpr int kTraining = 0, kCheckpoints = 1, kRecovery = 2, kFailures = 3; // tids; failures per component after
  event(R"({"ph":"M","name":"process_name","pid":0,"tid":0,"args":{"name":"the run, replayed"}})");
  for (const auto& [tid, name] : std::vector<std::pair<int, std::string>>{
           {kTraining, "training"}, {kCheckpoints, "checkpoints"}, {kRecovery, "recovery"}})
    event(fmt::format(R"({{"ph":"M","name":"thread_name","pid":0,"tid":{},"args":{{"name":"{}"}}}})", tid, name));
  for (int c = 0; c < 5; ++c)
    event(fmt::format(R"({{"ph":"M","name":"thread_name","pid":0,"tid":{},"args":{{"name":"failures: {}"}}}})",
                      kFailures + c, enum_name(static_cast<FailureComponent>(c))));
  const auto span = [&](const char* name, int tid, double begin, double end, const std::string& args) {
    if (end > begin)
      event(fmt::format(R"({{"ph":"X","name":"{}","pid":0,"tid":{},"ts":{},"dur":{}{}}})", name, tid, begin * 1e6,
                        (end - begin) * 1e6, args));
  };
  double training_since = 0.0; // training runs from here until the next checkpoint or failure
  double recovering = -1.0;    // since the first failure of a recovery (-1: training)
  double checkpointing = -1.0; // since a checkpoint began, until durable (-1: none)
  std::int64_t saving = 0;
  for (const ReplayEvent& e : events) {
    switch (e.kind) {
    case ReplayEvent::Kind::Failure:
      if (recovering < 0.0) {
        span("training", kTraining, training_since, e.time, "");
        recovering = e.time;
      }
      if (checkpointing >= 0.0) { // lost before it was durable
        span("checkpoint (lost)", kCheckpoints, checkpointing, e.time,
             fmt::format(R"(,"args":{{"iteration":{}}})", saving));
        checkpointing = -1.0;
      }
      event(fmt::format(R"({{"ph":"i","s":"t","name":"{} failure","pid":0,"tid":{},"ts":{},"args":{{"rolled_back_to_)"
                        R"(iteration":{}}}}})",
                        enum_name(e.component), kFailures + static_cast<int>(e.component), e.time * 1e6, e.iteration));
      break;
    case ReplayEvent::Kind::Resumed:
      if (recovering >= 0.0) span("recovery", kRecovery, recovering, e.time, "");
      recovering = -1.0;
      training_since = e.time;
      break;
    case ReplayEvent::Kind::Checkpoint:
      span("training", kTraining, training_since, e.time, "");
      training_since = e.time;
      checkpointing = e.time;
      saving = e.iteration;
      break;
    case ReplayEvent::Kind::Durable:
      if (checkpointing >= 0.0)
        span("checkpoint", kCheckpoints, checkpointing, e.time,
             fmt::format(R"(,"args":{{"iteration":{}}})", e.iteration));
      checkpointing = -1.0;
      if (figures.spec.mode == CheckpointMode::Sync) training_since = e.time; // training stopped for the write
      break;
    }
  }
  if (events.size() < kMaxEvents && recovering < 0.0)
    span("training", kTraining, training_since, figures.replay.total, "");
  out += "\n]}\n";
  return out;
}

} // namespace partsim
