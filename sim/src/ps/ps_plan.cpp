// The parameter-server plan: where workers and shards run, what a step computes and moves, what an update costs.
#include "partsim/ps/ps_plan.hpp"

#include "partsim/common/error.hpp"
#include "partsim/model/training.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace partsim {

std::int64_t PsPlan::pushes_per_worker() const {
  // After every H-th step, and after the last one when H does not divide the steps (a closed form: steps may be huge
  // in a scenario that /run/max_events then refuses).
  const std::int64_t h = spec.push_interval();
  return steps / h + (steps % h != 0 ? 1 : 0);
}

void check_parameter_server(const ParameterServer& ps, const ClusterSpec& cluster, const Workload& workload,
                            const std::string& source) {
  if (!cluster.speed_changes.empty())
    throw InputError(source, "/cluster/speed_changes",
                     "the parameter-server engine does not apply speed changes over time; expected none (give "
                     "/strategy/worker_speeds and /strategy/jitter instead)");
  if (const auto* job = std::get_if<DataJob>(&workload)) {
    if (job->gradient_bytes <= 0)
      throw InputError(source, "/workload/gradient_bytes",
                       "a parameter server moves the model's parameters and gradients: expected gradient_bytes > 0");
    if (job->serial_fraction > 0)
      throw InputError(source, "/workload/serial_fraction",
                       "a parameter-server run has no coordinator for a serial part; expected 0");
    if (job->samples < static_cast<std::uint64_t>(ps.workers))
      throw InputError(source, "/workload/samples",
                       fmt::format("expected at least one sample per worker per step ({} workers), got {}", ps.workers,
                                   job->samples));
    return;
  }
  if (const auto* training = std::get_if<ModelTraining>(&workload)) {
    const std::int64_t per_step = training->micro_batch * ps.workers;
    if (training->global_batch % per_step != 0)
      throw InputError(source, "/workload/global_batch",
                       fmt::format("expected a multiple of micro_batch x workers = {} x {} = {}, got {}",
                                   training->micro_batch, ps.workers, per_step, training->global_batch));
    return;
  }
  throw InputError(source, "/strategy/kind",
                   "strategy kind \"parameter_server\" needs /workload/kind \"data_job\" or \"model_training\"");
}

PsPlan build_ps_plan(const Scenario& scenario) {
  const auto& ps = std::get<ParameterServer>(scenario.strategy);
  const ClusterSpec& cluster = scenario.cluster;
  const GpuProfile& gpu = cluster.gpu;
  PsPlan plan;
  plan.spec = ps;
  plan.steps = workload_iterations(scenario.workload);
  for (int w = 0; w < ps.workers; ++w) plan.worker_gpu.push_back(w);
  for (int k = 0; k < ps.server_shards; ++k)
    plan.shard_gpu.push_back((cluster.nodes - ps.server_shards + k) * cluster.gpus_per_node);
  double update_time = 0.0;
  if (const auto* job = std::get_if<DataJob>(&scenario.workload)) {
    plan.global_batch = static_cast<double>(job->samples);
    plan.samples_per_step = plan.global_batch / ps.workers;
    const double compute = plan.samples_per_step * job->flop_per_sample / gpu.peak(job->data_type);
    const double memory = plan.samples_per_step * job->bytes_read_per_sample / gpu.achieved_memory_bandwidth();
    plan.nominal_step_time = std::max(compute, memory);
    plan.parameter_bytes = job->gradient_bytes;
    plan.gradient_bytes = job->gradient_bytes;
    // Plain SGD on the server's GPU: read the gradient, read and write the weights.
    update_time = 3.0 * job->gradient_bytes / gpu.achieved_memory_bandwidth();
    plan.update_time_origin = "3 x gradient_bytes / the GPU's achieved memory bandwidth (SGD: read the gradient, "
                              "read and write the weights)";
  } else {
    const auto& training = std::get<ModelTraining>(scenario.workload);
    const TrainingCost cost = training_cost(training, gpu);
    plan.global_batch = static_cast<double>(training.global_batch);
    plan.samples_per_step = plan.global_batch / ps.workers;
    const double micro_batches = plan.samples_per_step / static_cast<double>(training.micro_batch);
    plan.nominal_step_time = micro_batches * (cost.forward_time() + cost.backward_time());
    plan.parameter_bytes = cost.parameters * bytes_per_element(training.data_type);
    plan.gradient_bytes = cost.parameters * bytes_per_element(training.gradient_type());
    update_time = cost.optimizer_time;
    plan.update_time_origin = "the optimizer step over all parameters on one GPU (the cost model)";
  }
  if (ps.update_time) {
    update_time = *ps.update_time;
    plan.update_time_origin = "the scenario's /strategy/update_time";
  }
  plan.update_time = update_time;
  for (int w = 0; w < ps.workers; ++w) {
    const double node_speed = cluster.node_speed_factor[static_cast<std::size_t>(
        plan.worker_gpu[static_cast<std::size_t>(w)] / cluster.gpus_per_node)];
    plan.step_time.push_back(plan.nominal_step_time / (node_speed * ps.worker_speeds[static_cast<std::size_t>(w)]));
  }
  return plan;
}

double ps_planned_messages(const PsPlan& plan) {
  const double pushes = static_cast<double>(plan.pushes_per_worker());
  const double pulls = static_cast<double>((plan.steps + plan.spec.push_interval() - 1) / plan.spec.push_interval());
  return plan.workers() * (pulls * 2.0 + pushes) * plan.shards();
}

double ps_planned_sleeps(const PsPlan& plan) {
  const double pushes = static_cast<double>(plan.pushes_per_worker());
  return plan.workers() * (static_cast<double>(plan.steps) + pushes * plan.shards());
}

double ps_planned_events(const PsPlan& plan) {
  return ps_planned_messages(plan) + ps_planned_sleeps(plan);
}

} // namespace partsim
