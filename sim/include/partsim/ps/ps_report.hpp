// report.json's `parameter_server` section (stale gradients) as field tables, and the table lines that say it.
#pragma once

#include "partsim/ps/ps_result.hpp"
#include "partsim/ps/ps_spec.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace partsim {

struct PsPlan;
struct ReportDocument;
struct Scenario;

/** One element of `parameter_server/workers`. */
struct ReportPsWorker {
  std::int64_t worker = 0;
  std::int64_t gpu = 0;
  double speed = 1.0;
  std::int64_t steps = 0;
  std::int64_t pushes = 0;
  double compute = 0.0;
  double pull = 0.0;
  double push = 0.0;
  double blocked = 0.0;
  double finish = 0.0;
  double staleness_mean = 0.0;
  std::int64_t staleness_max = 0;
  std::vector<std::uint64_t> staleness_histogram;
  std::int64_t max_lead = 0;

  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("worker", s.worker, "", "its index");
    f.field("gpu", s.gpu, "", "the global GPU it runs on");
    f.field("speed", s.speed, "", "its speed factor: /strategy/worker_speeds x its node's speed factor");
    f.field("steps", s.steps, "", "steps computed (async, ssp: taken from the shared budget)");
    f.field("pushes", s.pushes, "", "gradients pushed (every step; local_sgd: every local_steps steps and the last)");
    f.field("compute_s", s.compute, "s", "time computing (jitter included)");
    f.field("pull_s", s.pull, "s", "time pulling parameters: from its requests to its last shard's parameters");
    f.field("push_s", s.push, "s", "time pushing gradients: until its last shard received them");
    f.field("blocked_s", s.blocked, "s", "time held at the policy's gate (the staleness bound, or the barrier)");
    f.field("finish_s", s.finish, "s", "when its last gradient was applied on every shard");
    f.field("staleness_mean", s.staleness_mean, "updates", "mean staleness of its gradients (see `staleness_mean`)");
    f.field("staleness_max", s.staleness_max, "updates", "the largest");
    f.field("staleness_histogram", s.staleness_histogram, "",
            "index: staleness in updates, value: gradient shards applied with that staleness");
    f.field("max_lead_steps", s.max_lead, "steps",
            "most steps it started ahead of the slowest worker's completed steps (ssp: at most the bound)");
  }
};

/** One element of `parameter_server/shards`. */
struct ReportPsShard {
  std::int64_t shard = 0;
  std::int64_t gpu = 0;
  double bytes_received = 0.0;
  double bytes_sent = 0.0;
  double utilisation_in = 0.0;
  double utilisation_out = 0.0;
  double update_busy = 0.0;
  std::uint64_t gradients = 0;
  std::int64_t version = 0;

  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("shard", s.shard, "", "its index");
    f.field("gpu", s.gpu, "", "the global GPU host it runs on (the first of its node)");
    f.field("bytes_received", s.bytes_received, "B", "gradients and pull requests");
    f.field("bytes_sent", s.bytes_sent, "B", "parameters");
    f.field("link_utilisation_in", s.utilisation_in, "",
            "bytes_received / (its NIC's bandwidth x makespan_s): the server link's inbound use");
    f.field("link_utilisation_out", s.utilisation_out, "", "bytes_sent / (its NIC's bandwidth x makespan_s)");
    f.field("update_busy", s.update_busy, "", "time applying gradients / makespan_s");
    f.field("gradients", s.gradients, "", "gradients applied");
    f.field("version", s.version, "", "its version at the end");
  }
};

/** `parameter_server/statistical_efficiency`: time to the target from the scenario's model. */
struct ReportPsEfficiency {
  std::string source;
  std::string target;
  double mean_staleness = 0.0;
  std::optional<double> steps_needed;
  std::optional<double> time_to_target;

  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("source", s.source, "", "where the model's points come from (the scenario's)");
    f.field("target", s.target, "", "the target in words (the scenario's)");
    f.field("mean_staleness", s.mean_staleness, "updates", "the run's `staleness_mean`, the model's input");
    f.field("steps_needed", s.steps_needed, "steps",
            "global steps to the target at that staleness, linear between the model's points; absent outside them "
            "or with local_sgd");
    f.field("time_to_target_s", s.time_to_target, "s", "steps_needed / steps_per_s; absent with steps_needed");
  }
};

/** report.json `parameter_server`. */
struct ReportParameterServer {
  PsPolicy policy = PsPolicy::Sync;
  std::optional<std::int64_t> staleness_bound;
  std::optional<std::int64_t> local_steps;
  std::int64_t workers = 0;
  std::int64_t shards = 0;
  std::int64_t steps_per_worker = 0;
  double global_batch = 0.0;
  double parameter_bytes = 0.0;
  double gradient_bytes = 0.0;
  double nominal_step_time = 0.0;
  double update_time = 0.0;
  std::string update_time_origin;
  double makespan = 0.0;
  double steps_per_s = 0.0;
  double samples_per_s = 0.0;
  double updates_per_s = 0.0;
  double staleness_mean = 0.0;
  std::int64_t staleness_max = 0;
  std::vector<std::uint64_t> staleness_histogram;
  std::int64_t max_lead = 0;
  double blocked = 0.0;
  double blocked_share = 0.0;
  std::string statistical_efficiency_note;
  std::optional<ReportPsEfficiency> statistical_efficiency;
  std::vector<ReportPsWorker> worker_figures;
  std::vector<ReportPsShard> shard_figures;

  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("policy", s.policy, "",
            "`sync`, `async`, `ssp` (stale synchronous parallel) or `local_sgd` (docs/stale-gradients.md)");
    f.field("staleness_bound", s.staleness_bound, "steps", "ssp's bound s; absent with other policies");
    f.field("local_steps", s.local_steps, "steps", "local_sgd's H; absent with other policies");
    f.field("workers", s.workers, "", "worker actors, one per GPU");
    f.field("shards", s.shards, "", "server shards, one per node (the last nodes)");
    f.field("steps_per_worker", s.steps_per_worker, "",
            "the workload's iterations: each worker's steps (sync, local_sgd); async and ssp share a budget of "
            "workers x this many worker steps, a faster worker taking more");
    f.field("global_batch_samples", s.global_batch, "samples", "of one global step: one step of every worker");
    f.field("parameter_bytes", s.parameter_bytes, "B", "the model, pulled (split evenly over the shards)");
    f.field("gradient_bytes", s.gradient_bytes, "B", "a gradient, pushed (split evenly over the shards)");
    f.field("nominal_step_time_s", s.nominal_step_time, "s", "a worker's compute per step at speed 1");
    f.field("update_time_s", s.update_time, "s", "a server's time to apply one gradient over the whole model");
    f.field("update_time_origin", s.update_time_origin, "", "where update_time_s comes from");
    f.field("makespan_s", s.makespan, "s", "the last gradient applied");
    f.field("steps_per_s", s.steps_per_s, "steps/s", "global steps (steps of all workers / workers) / makespan_s");
    f.field("samples_per_s", s.samples_per_s, "samples/s", "samples of all workers' steps / makespan_s");
    f.field("updates_per_s", s.updates_per_s, "updates/s",
            "model versions / makespan_s (sync: one per step; local_sgd: one per round; else one per gradient)");
    f.field("staleness_mean", s.staleness_mean, "updates",
            "over every gradient shard applied: the shard's version before the update minus the version the worker "
            "pulled (sync and local_sgd count a step's or round's gradients as one version: 0)");
    f.field("staleness_max", s.staleness_max, "updates", "the largest (ssp: at most (workers - 1) x (2s + 1))");
    f.field("staleness_histogram", s.staleness_histogram, "",
            "index: staleness, value: gradient shards applied with it, all workers");
    f.field("max_lead_steps", s.max_lead, "steps",
            "most steps a worker started ahead of the slowest worker's completed steps (ssp: at most s; sync and "
            "local_sgd: 0)");
    f.field("blocked_s", s.blocked, "s", "workers' time held at the gate, summed");
    f.field("blocked_share", s.blocked_share, "", "blocked_s / (workers x makespan_s)");
    f.field("statistical_efficiency_note", s.statistical_efficiency_note, "",
            "says whether the scenario gave a statistical-efficiency model, and where it comes from");
    f.field("statistical_efficiency", s.statistical_efficiency, "",
            "time to the target from the scenario's model; absent without one");
    f.field("workers_detail", s.worker_figures, "", "one per worker");
    f.field("shards_detail", s.shard_figures, "", "one per server shard");
  }
};

/** The `parameter_server` section of a run. */
ReportParameterServer make_ps_section(const Scenario& scenario, const PsPlan& plan, const PsRunResult& result);

/** report.json of a parameter-server run: scenario, engine, strategy, GPU profile, a summary (makespan, samples/s,
 * bytes) and `parameter_server`; no ranks. */
ReportDocument make_ps_report_document(const Scenario& scenario, const PsPlan& plan, const PsRunResult& result);

/** The terminal table of a parameter-server run. */
std::string format_ps_table(const ReportDocument& document);

} // namespace partsim
