// Data-parallel strategy: partitions by share, round-robin onto GPUs, optional ring all-reduce per iteration.
#include "partsim/plan/strategy.hpp"

#include "partsim/common/error.hpp"
#include "partsim/plan/model_parallel.hpp"
#include "partsim/plan/plan_collectives.hpp"
#include "partsim/ps/ps_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <tuple>

namespace partsim {

int position_in_group(const Plan& plan, int group, int rank) {
  const auto& members = plan.groups.at(static_cast<std::size_t>(group));
  const auto it = std::find(members.begin(), members.end(), rank);
  return it == members.end() ? -1 : static_cast<int>(it - members.begin());
}

std::vector<Step> resolved_steps(const Plan& plan, int rank) {
  const StepsView view = plan.steps_of(rank);
  return {view.begin(), view.end()};
}

std::vector<CollectiveStep> distinct_collectives(const std::vector<Step>& steps) {
  const auto key = [](const CollectiveStep& c) {
    return std::tuple{c.group, c.op,   c.algorithm, c.fidelity, c.kind,
                      c.bytes, c.root, c.stream,    c.protocol, c.channels};
  };
  std::vector<CollectiveStep> out;
  for (const Step& s : steps)
    if (const auto* c = std::get_if<CollectiveStep>(&s)) out.push_back(*c);
  std::sort(out.begin(), out.end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
  out.erase(std::unique(out.begin(), out.end(), [&](const auto& a, const auto& b) { return key(a) == key(b); }),
            out.end());
  return out;
}

std::size_t Plan::stored_steps() const {
  std::size_t n = 0;
  for (const RankProgram& r : ranks) n += r.own_steps.size();
  return n;
}

std::vector<std::uint64_t> apportion(std::uint64_t total, const std::vector<double>& shares) {
  PARTSIM_CHECK(!shares.empty()) << "no shares";
  const double sum = std::accumulate(shares.begin(), shares.end(), 0.0);
  PARTSIM_CHECK(sum > 0) << "shares sum to " << sum;
  std::vector<std::uint64_t> counts(shares.size());
  std::vector<std::pair<double, std::size_t>> remainders(shares.size());
  std::uint64_t assigned = 0;
  for (std::size_t i = 0; i < shares.size(); ++i) {
    const double exact = static_cast<double>(total) * shares[i] / sum;
    counts[i] = static_cast<std::uint64_t>(std::floor(exact));
    remainders[i] = {exact - std::floor(exact), i};
    assigned += counts[i];
  }
  // Hand the missing items to the largest remainders; floating-point floors can also overshoot by an item for
  // huge totals, which the smallest remainders give back.
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t k = 0; assigned < total; k = (k + 1) % remainders.size(), ++assigned) ++counts[remainders[k].second];
  for (auto it = remainders.rbegin(); assigned > total && it != remainders.rend(); ++it)
    if (counts[it->second] > 0) {
      --counts[it->second];
      --assigned;
    }
  return counts;
}

namespace {

/** Roofline amount in flop at nominal peak for `samples` samples of a data job. */
double compute_amount(const DataJob& job, const GpuProfile& gpu, std::uint64_t samples) {
  const double peak = gpu.peak(job.data_type);
  const double n = static_cast<double>(samples);
  const double compute_time = n * job.flop_per_sample / peak;
  const double memory_time = n * job.bytes_read_per_sample / gpu.achieved_memory_bandwidth();
  return std::max(compute_time, memory_time) * peak;
}

ClassSplit split_samples(const DataJob& job, const DataParallel& dp, std::uint64_t seed, SplitMethod method) {
  const ClassSplitSpec& spec = *dp.class_split;
  SplitOptions options;
  options.method = method;
  options.partitions = dp.partitions;
  options.seed = seed;
  options.starved_threshold = spec.starved_threshold;
  options.oversample_target = spec.oversample_target;
  if (!spec.minority_class.empty()) options.minority_class = job.labels->find_class(spec.minority_class);
  return split_by_class(*job.labels, options);
}

/** Coordinator time of a split: a random split deals samples by position (no pass over the labels); the
 * stratified ones read every label; oversampling writes its replicas. */
double split_time(const ClassSplitSpec& spec, const ClassSplit& split) {
  return (split.method == SplitMethod::Random
              ? 0.0
              : spec.scan_per_sample * static_cast<double>(split.work.samples_scanned)) +
         spec.replicate_per_sample * static_cast<double>(split.work.samples_replicated);
}

/** Summary of one split for the report's side-by-side comparison. */
SplitSummary summarise(const ClassSplitSpec& spec, const ClassSplit& split) {
  SplitSummary summary;
  summary.method = split.method;
  summary.starved_partitions = split.starved_partitions;
  summary.min_minority = UINT64_MAX;
  for (const PartitionClasses& p : split.partitions) {
    summary.min_minority = std::min(summary.min_minority, p.per_class[split.minority_class]);
    summary.max_minority = std::max(summary.max_minority, p.per_class[split.minority_class]);
  }
  summary.samples_replicated = split.work.samples_replicated;
  summary.preprocessing = split_time(spec, split);
  return summary;
}

CoordinatedWork plan_coordination(const DataJob& job, const DataParallel& dp,
                                  const std::vector<std::uint64_t>& per_partition, int gpus, double parallel_amount) {
  const Coordination c = dp.coordination.value_or(Coordination{});
  const auto n = static_cast<std::size_t>(gpus);
  CoordinatedWork work;
  work.serial_amount = parallel_amount * job.serial_fraction / (1.0 - job.serial_fraction);
  work.per_partition = c.per_partition;
  work.partitions_of_rank.assign(n, 0);
  work.start_bytes.assign(n, 0);
  work.result_bytes.assign(n, 0);
  work.halo.assign(n, {});
  const double samples = static_cast<double>(job.samples);
  std::vector<std::map<int, std::uint64_t>> halo(n);
  for (std::size_t p = 0; p < per_partition.size(); ++p) {
    const std::size_t rank = p % n;
    ++work.partitions_of_rank[rank];
    work.start_bytes[rank] +=
        static_cast<std::uint64_t>(std::llround(c.data_bytes * static_cast<double>(per_partition[p]) / samples));
    work.result_bytes[rank] += static_cast<std::uint64_t>(std::llround(c.result_bytes));
    const std::size_t next_rank = (p + 1) % n;
    if (p + 1 < per_partition.size() && next_rank != rank && c.boundary_bytes > 0) {
      const auto bytes = static_cast<std::uint64_t>(std::llround(c.boundary_bytes));
      halo[rank][static_cast<int>(next_rank)] += bytes;
      halo[next_rank][static_cast<int>(rank)] += bytes;
    }
  }
  for (std::size_t r = 0; r < n; ++r) work.halo[r].assign(halo[r].begin(), halo[r].end());
  return work;
}

Plan plan_data_parallel(const Scenario& scenario, const DataJob& job, const DataParallel& dp) {
  const ClusterSpec& cluster = scenario.cluster;
  const int gpus = cluster.gpu_count();
  Plan plan;
  plan.iterations = job.iterations;
  plan.samples_per_iteration = job.samples;

  // Partition p runs on GPU p mod G; a GPU with several partitions processes them back to back, as one kernel.
  std::vector<std::uint64_t> per_partition;
  if (dp.class_split) {
    // All three methods on the same labels (the report compares them); the scenario's one drives the run.
    for (SplitMethod method : {SplitMethod::Random, SplitMethod::Stratified, SplitMethod::StratifiedOversample}) {
      ClassSplit split = split_samples(job, dp, scenario.run.seed, method);
      plan.class_split_methods.push_back(summarise(*dp.class_split, split));
      if (method == dp.class_split->method) plan.class_split = std::move(split);
    }
    for (const PartitionClasses& p : plan.class_split->partitions)
      per_partition.push_back(p.size); // oversampled replicas are extra training samples
  } else {
    per_partition = apportion(job.samples, dp.shares);
  }
  std::vector<std::uint64_t> per_gpu(static_cast<std::size_t>(gpus), 0);
  for (std::size_t p = 0; p < per_partition.size(); ++p)
    per_gpu[p % static_cast<std::size_t>(gpus)] += per_partition[p];

  const bool sync = dp.sync == GradientSync::AllReduce && gpus > 1;
  const auto gradient_bytes = static_cast<std::uint64_t>(std::llround(job.gradient_bytes));
  const auto n = static_cast<std::uint64_t>(gpus);
  const auto iterations = static_cast<std::uint64_t>(job.iterations);
  PlanCollectives collectives(cluster);
  CollectiveStep allreduce;
  if (sync) {
    plan.groups.emplace_back(static_cast<std::size_t>(gpus));
    std::iota(plan.groups[0].begin(), plan.groups[0].end(), 0);
    collectives.set_groups(plan.groups);
    allreduce =
        collectives.step(CollectiveOp::AllReduce, gradient_bytes, 0, dp.gradient_sync.collective, CommKind::Data, 0);
  }
  plan.ranks.resize(static_cast<std::size_t>(gpus));
  for (int r = 0; r < gpus; ++r) {
    RankProgram& program = plan.ranks[static_cast<std::size_t>(r)];
    program.gpu = r;
    const std::uint64_t samples = per_gpu[static_cast<std::size_t>(r)];
    program.own_steps.emplace_back(ComputeStep{compute_amount(job, cluster.gpu, samples), samples});
    if (sync) program.own_steps.emplace_back(allreduce);
  }
  if (sync) {
    const Fidelity fidelity = collectives.resolve_auto_fidelity(
        plan, [&](const CollectiveStep&) { return !dp.gradient_sync.collective.fidelity; });
    if (!dp.gradient_sync.collective.fidelity) allreduce.fidelity = fidelity;
  }
  // Ranks without samples execute nothing (run_compute skips empty steps).
  collectives.count_events(plan);
  plan.baseline_amount = compute_amount(job, cluster.gpu, job.samples);
  plan.sample_time = compute_amount(job, cluster.gpu, 1) / cluster.gpu.peak(job.data_type);
  if (dp.coordination || dp.class_split || job.serial_fraction > 0) {
    CoordinatedWork work = plan_coordination(job, dp, per_partition, gpus, plan.baseline_amount);
    if (plan.class_split) work.setup_time = split_time(*dp.class_split, *plan.class_split);
    // The serial part is work a single GPU does too: Amdahl's 1 - f of the one-GPU time.
    plan.baseline_amount += work.serial_amount;
    plan.mode = std::move(work);
  }
  if (dp.balancing) {
    // The same partitions, but the samples live on the coordinator and reach the GPUs at run time.
    DynamicWork work;
    work.balancing = *dp.balancing;
    work.amount_per_sample = compute_amount(job, cluster.gpu, 1);
    work.total_samples = job.samples;
    for (RankProgram& program : plan.ranks) {
      const auto& compute = std::get<ComputeStep>(program.own_steps.front());
      work.static_samples.push_back(compute.samples);
      const double speed = cluster.gpu.peak(job.data_type) *
                           cluster.node_speed_factor[static_cast<std::size_t>(program.gpu / cluster.gpus_per_node)];
      work.nominal_rate.push_back(work.amount_per_sample > 0 ? speed / work.amount_per_sample : 0.0);
      program.own_steps.clear();
    }
    plan.mode = std::move(work);
  }

  if (const CoordinatedWork* coordinated = plan.coordinated()) {
    // Per iteration: one start and one result message per rank, halo messages, and the serial execution.
    std::uint64_t halo_messages = 0;
    for (const auto& peers : coordinated->halo) halo_messages += peers.size();
    plan.planned_messages += iterations * (2 * n + halo_messages);
    if (coordinated->serial_amount > 0) plan.planned_executions += iterations;
  }
  if (dp.balancing) {
    // Chunks, each a request, an assignment and an execution, plus one stop per rank.
    const std::uint64_t fixed_chunks = job.samples / dp.balancing->chunk_samples + n;
    std::uint64_t chunks = n;
    switch (dp.balancing->policy) {
    case BalancingPolicy::Static:
      break;
    case BalancingPolicy::WorkQueue:
    case BalancingPolicy::WorkStealing:
      chunks = fixed_chunks;
      break;
    case BalancingPolicy::MeasuredRate:
      // Guided chunks halve what is left each round: about n log2(samples / n) of them, at most fixed_chunks.
      chunks = std::min(fixed_chunks, n * (2 + static_cast<std::uint64_t>(std::log2(1.0 + job.samples / n))));
      break;
    }
    plan.planned_executions = chunks;
    plan.planned_messages = 2 * (chunks + n);
  }

  std::string shares = dp.shares_kind;
  if (dp.shares_kind == "skewed")
    shares = fmt::format("skewed, largest {:g}%", *std::max_element(dp.shares.begin(), dp.shares.end()) * 100);
  plan.summary = fmt::format(
      "data_parallel: {} partitions ({}) on {} GPUs, gradient sync {}", dp.partitions, shares, gpus,
      sync ? fmt::format("all_reduce ({}, {})", to_string(allreduce.algorithm), to_string(allreduce.fidelity))
           : "none");
  if (plan.class_split) plan.summary += fmt::format(", class-aware split {}", to_string(plan.class_split->method));
  if (dp.coordination || job.serial_fraction > 0)
    plan.summary += fmt::format(", coordinated (serial fraction {:g}, {:g} s per partition)", job.serial_fraction,
                                plan.coordinated()->per_partition);
  if (dp.balancing)
    plan.summary +=
        fmt::format(", run-time balancing {} (chunks of {} samples, {:g} s per dispatch)",
                    to_string(dp.balancing->policy), dp.balancing->chunk_samples, dp.balancing->dispatch_overhead);
  return plan;
}

/** Data-parallel training of a model: every replica runs micro-batches with gradient accumulation; on the last
 * micro-batch the backward pass goes unit by unit (last first) and each full gradient bucket is all-reduced on the
 * communication stream while the backward pass goes on (DDP); then the optimizer step. */
Plan plan_model_training(const Scenario& scenario, const ModelTraining& training, const DataParallel& dp) {
  const ClusterSpec& cluster = scenario.cluster;
  const int gpus = cluster.gpu_count();
  const double peak = cluster.gpu.peak(training.data_type);
  const TrainingCost cost = training_cost(training, cluster.gpu);
  const std::int64_t accumulation = training.global_batch / (training.micro_batch * gpus);
  const double forward = cost.forward_time();
  const double backward = cost.backward_time();

  Plan plan;
  plan.iterations = training.iterations;
  plan.memory = data_parallel_memory(training, cluster.gpu);
  const double batch = static_cast<double>(training.global_batch);
  plan.model_flops_per_iteration = cost.model_flops_per_sample * batch;
  plan.hardware_flops_per_iteration = cost.hardware_flops_per_sample * batch;
  plan.tokens_per_iteration = cost.tokens_per_sample * batch;
  plan.samples_per_iteration = static_cast<std::uint64_t>(training.global_batch);
  plan.sample_time = (forward + backward) / static_cast<double>(training.micro_batch);
  // One GPU runs the whole global batch in micro-batches, then the optimizer step.
  set_training_baseline(plan, training, forward + backward, cost.optimizer_time, peak);

  const bool sync = dp.sync == GradientSync::AllReduce && gpus > 1;
  const double gradient_bytes_per_parameter = bytes_per_element(training.gradient_type());
  const std::vector<GradientBucket> buckets =
      sync ? gradient_buckets(cost, gradient_bytes_per_parameter, dp.gradient_sync.bucket_bytes)
           : std::vector<GradientBucket>{};
  plan.gradient_buckets = buckets.size();
  PlanCollectives collectives(cluster);
  std::vector<CollectiveStep> allreduces;
  if (sync) {
    plan.groups.emplace_back(static_cast<std::size_t>(gpus));
    std::iota(plan.groups[0].begin(), plan.groups[0].end(), 0);
    collectives.set_groups(plan.groups);
    for (const GradientBucket& bucket : buckets)
      allreduces.push_back(collectives.step(CollectiveOp::AllReduce, bucket.bytes, 0, dp.gradient_sync.collective,
                                            CommKind::Data, dp.gradient_sync.overlap ? 1 : 0));
  }

  const auto per_replica = static_cast<std::uint64_t>(training.global_batch / gpus);
  // Every replica runs the same program: build it once, copy it (one allocation per rank).
  RankProgram program;
  // Every micro-batch's data, handed over before the iteration's compute (one wait: nothing overlaps it).
  if (training.data_loading > 0)
    program.own_steps.emplace_back(HostStep{static_cast<double>(accumulation) * training.data_loading});
  // Every micro-batch but the last, and the last one's forward pass: nothing to synchronise yet.
  const double ahead = static_cast<double>(accumulation - 1) * (forward + backward) + forward;
  program.own_steps.emplace_back(ComputeStep{ahead * peak, per_replica});
  if (!sync) {
    program.own_steps.emplace_back(ComputeStep{backward * peak, 0});
  } else if (dp.gradient_sync.overlap) {
    for (std::size_t b = 0; b < buckets.size(); ++b) {
      double time = 0.0;
      for (std::size_t u = buckets[b].first; u <= buckets[b].last; ++u) time += cost.units[u].backward_time;
      program.own_steps.emplace_back(ComputeStep{time * peak, 0});
      program.own_steps.emplace_back(allreduces[b]);
    }
    program.own_steps.emplace_back(StreamSyncStep{});
  } else {
    program.own_steps.emplace_back(ComputeStep{backward * peak, 0});
    for (const CollectiveStep& step : allreduces) program.own_steps.emplace_back(step);
  }
  program.own_steps.emplace_back(ComputeStep{cost.optimizer_time * peak, 0});
  program.own_steps.shrink_to_fit();
  plan.ranks.assign(static_cast<std::size_t>(gpus), program);
  for (int r = 0; r < gpus; ++r) plan.ranks[static_cast<std::size_t>(r)].gpu = r;
  Fidelity fidelity = Fidelity::Steps;
  if (sync)
    fidelity = collectives.resolve_auto_fidelity(
        plan, [&](const CollectiveStep&) { return !dp.gradient_sync.collective.fidelity; });
  collectives.count_events(plan);

  plan.summary = fmt::format("data_parallel training of {} on {} GPUs: global batch {}, micro-batch {} ({} "
                             "accumulation steps), {}",
                             training.model.name, gpus, training.global_batch, training.micro_batch, accumulation,
                             describe_recomputation(training) + " recomputation");
  if (sync)
    plan.summary += fmt::format(
        ", gradient all-reduce {} / {} in {} buckets of {:.0f} MiB{}", to_string(allreduces.front().algorithm),
        to_string(dp.gradient_sync.collective.fidelity.value_or(fidelity)), buckets.size(),
        dp.gradient_sync.bucket_bytes / (1024.0 * 1024.0),
        dp.gradient_sync.overlap ? " overlapping the backward pass" : " after the backward pass");
  if (training.model.is_transformer()) plan.summary += "; " + describe_stack(training, cluster.gpu);
  plan.summary += "; " + describe_data_loading(training);
  collectives.set_stream_contention(plan, cluster.gpu, dp.gradient_sync);
  return plan;
}

/** A collective alone on all GPUs, `iterations` times (nccl-tests in simulation). */
Plan plan_collective(const Scenario& scenario, const CollectiveBenchmark& bench, const CollectiveStrategy& strategy) {
  const int gpus = scenario.cluster.gpu_count();
  Plan plan;
  plan.iterations = bench.iterations;
  plan.groups.emplace_back(static_cast<std::size_t>(gpus));
  std::iota(plan.groups[0].begin(), plan.groups[0].end(), 0);
  PlanCollectives collectives(scenario.cluster);
  collectives.set_groups(plan.groups);
  CollectiveStep step = collectives.step(bench.op, bench.bytes, 0, strategy.choice, CommKind::Data, 0);
  step.root = bench.root;
  plan.ranks.resize(static_cast<std::size_t>(gpus));
  for (int r = 0; r < gpus; ++r) {
    plan.ranks[static_cast<std::size_t>(r)].gpu = r;
    if (gpus > 1) plan.ranks[static_cast<std::size_t>(r)].own_steps.emplace_back(step);
  }
  const Fidelity fidelity =
      collectives.resolve_auto_fidelity(plan, [&](const CollectiveStep&) { return !strategy.choice.fidelity; });
  if (!strategy.choice.fidelity) step.fidelity = fidelity;
  collectives.count_events(plan);
  plan.summary = fmt::format("{} of {} bytes on {} GPUs: {} at fidelity {}", to_string(bench.op), bench.bytes, gpus,
                             to_string(step.algorithm), to_string(step.fidelity));
  return plan;
}

/** Message sizes are 64-bit byte counts in SimGrid: refuse inputs whose products would not fit (or lose precision). */
void check_byte_counts(const Scenario& scenario, const DataParallel& dp) {
  constexpr double kMaxBytes = 1e18;
  const auto& job = std::get<DataJob>(scenario.workload);
  auto check = [&](double bytes, const char* pointer, const char* what) {
    if (bytes > kMaxBytes)
      throw InputError(scenario.source, pointer,
                       fmt::format("{} come to {:.3g} bytes; expected at most {:g}", what, bytes, kMaxBytes));
  };
  if (dp.balancing)
    check(static_cast<double>(job.samples) * dp.balancing->sample_bytes, "/strategy/balancing/sample_bytes",
          "all samples' bytes");
  if (dp.coordination) {
    check(static_cast<double>(dp.partitions) * dp.coordination->result_bytes, "/strategy/coordination/result_bytes",
          "the results of all partitions");
    check(2.0 * static_cast<double>(dp.partitions) * dp.coordination->boundary_bytes,
          "/strategy/coordination/boundary_bytes", "the halos of all partitions");
  }
}

} // namespace

double speed_profile_events(const ClusterSpec& cluster, double horizon) {
  double events = 0.0;
  for (const SpeedChange& change : cluster.speed_changes) {
    const double rounds = change.period > 0 ? 1.0 + std::floor(std::max(0.0, horizon) / change.period) : 1.0;
    events += static_cast<double>(cluster.gpus_per_node) * static_cast<double>(change.points.size()) * rounds;
  }
  return events;
}

double speed_profile_horizon(const ClusterSpec& cluster, double budget) {
  // Events per second of the repeating profiles; the first round of every profile comes first.
  double rate = 0.0;
  for (const SpeedChange& change : cluster.speed_changes)
    if (change.period > 0)
      rate += static_cast<double>(cluster.gpus_per_node) * static_cast<double>(change.points.size()) / change.period;
  if (rate == 0.0) return std::numeric_limits<double>::infinity();
  return std::max(0.0, budget - speed_profile_events(cluster, 0.0)) / rate;
}

void set_training_baseline(Plan& plan, const ModelTraining& training, double micro_batch_time, double optimizer_time,
                           double peak) {
  const auto micro_batches = static_cast<double>(training.global_batch / training.micro_batch);
  plan.baseline_amount = (micro_batches * micro_batch_time + optimizer_time) * peak;
  plan.baseline_host = micro_batches * training.data_loading;
}

void check_event_budget(const Scenario& scenario, double events, const std::string& what) {
  if (events > static_cast<double>(scenario.run.max_events))
    throw InputError(scenario.source, "/run/max_events",
                     fmt::format("this run would simulate {:.3g} {}, more than the limit of {}; reduce GPUs, "
                                 "micro-batches or iterations, or raise /run/max_events (about 3 us of wall time each)",
                                 events, what, scenario.run.max_events));
}

void check_plan_size(const Scenario& scenario, double steps) {
  if (steps > kMaxPlanSteps)
    throw InputError(scenario.source, "/workload/global_batch",
                     fmt::format("the plan would hold {:.3g} steps (about {:.1f} GB), more than the limit of {:.3g}; "
                                 "expected fewer micro-batches per replica (a smaller global batch, a larger "
                                 "micro-batch or more data-parallel replicas) or fewer GPUs",
                                 steps, steps * static_cast<double>(sizeof(Step)) / 1e9, kMaxPlanSteps));
}

std::optional<MemoryBreakdown> planned_memory(const Scenario& scenario) {
  const auto* training = std::get_if<ModelTraining>(&scenario.workload);
  if (training == nullptr || std::holds_alternative<ParameterServer>(scenario.strategy)) return std::nullopt;
  if (const auto* mp = std::get_if<ModelParallel>(&scenario.strategy))
    return model_parallel_peak_memory(*training, *mp, scenario.cluster.gpu);
  return data_parallel_memory(*training, scenario.cluster.gpu);
}

Plan build_plan(const Scenario& scenario) {
  Plan plan;
  if (const auto* serving = std::get_if<ServingWorkload>(&scenario.workload)) {
    // No rank programs: the serving engine runs the stages' replicas (engine/serving_engine.hpp).
    plan.summary = describe(*serving);
    return plan;
  }
  if (const auto* ps = std::get_if<ParameterServer>(&scenario.strategy)) {
    // No rank programs: the parameter-server engine runs the workers and shards (engine/ps_engine.hpp).
    plan.summary = describe(*ps);
    plan.iterations = workload_iterations(scenario.workload);
    const PsPlan ps_plan = build_ps_plan(scenario);
    check_event_budget(scenario, ps_planned_events(ps_plan), "messages and sleeps");
    plan.planned_messages = static_cast<std::uint64_t>(ps_planned_messages(ps_plan));
    plan.planned_executions = static_cast<std::uint64_t>(ps_planned_sleeps(ps_plan));
    return plan;
  }
  if (const auto* job = std::get_if<DataJob>(&scenario.workload)) {
    const auto& dp = std::get<DataParallel>(scenario.strategy);
    plan = plan_data_parallel(scenario, *job, dp);
    check_byte_counts(scenario, dp);
  } else if (const auto* training = std::get_if<ModelTraining>(&scenario.workload)) {
    if (const auto* mp = std::get_if<ModelParallel>(&scenario.strategy))
      plan = plan_model_parallel(scenario, *training, *mp);
    else
      plan = plan_model_training(scenario, *training, std::get<DataParallel>(scenario.strategy));
  } else {
    plan = plan_collective(scenario, std::get<CollectiveBenchmark>(scenario.workload),
                           std::get<CollectiveStrategy>(scenario.strategy));
  }
  const double events = static_cast<double>(plan.planned_messages) + static_cast<double>(plan.planned_executions);
  check_event_budget(scenario, events, "messages and executions");
  if (!scenario.cluster.speed_changes.empty()) {
    // The profiles tick until the run ends. Its length is estimated as the whole work on one GPU at the slowest
    // speed any node has: an estimate, not a bound (communication comes on top); the engine stops a run whose
    // profiles pass the budget all the same.
    const ClusterSpec& cluster = scenario.cluster;
    double slowest = *std::min_element(cluster.node_speed_factor.begin(), cluster.node_speed_factor.end());
    for (const SpeedChange& change : cluster.speed_changes)
      for (const auto& [at, factor] : change.points)
        slowest = std::min(slowest, factor * cluster.node_speed_factor[static_cast<std::size_t>(change.node)]);
    const double horizon = plan.baseline_amount * static_cast<double>(plan.iterations) /
                           (cluster.gpu.peak(workload_data_type(scenario.workload)) * slowest);
    const double profile = speed_profile_events(cluster, horizon);
    check_event_budget(scenario, events + profile,
                       fmt::format("events ({:.3g} of them from the speed profiles of /cluster/speed_changes over the "
                                   "run's estimated {:.3g} s)",
                                   profile, horizon));
  }
  return plan;
}

} // namespace partsim
