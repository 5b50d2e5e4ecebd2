// A parameter-server run's report: the `parameter_server` section from the raw run, report.json's document and the
// terminal table.
#include "partsim/ps/ps_report.hpp"

#include "partsim/input/scenario.hpp"
#include "partsim/ps/ps_plan.hpp"
#include "partsim/report/report_document.hpp"
#include "partsim/report/report_writers.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace partsim {

namespace {

void add_histogram(std::vector<std::uint64_t>& into, const std::vector<std::uint64_t>& from) {
  if (into.size() < from.size()) into.resize(from.size(), 0);
  for (std::size_t i = 0; i < from.size(); ++i) into[i] += from[i];
}

std::int64_t histogram_max(const std::vector<std::uint64_t>& h) {
  for (std::size_t i = h.size(); i > 0; --i)
    if (h[i - 1] > 0) return static_cast<std::int64_t>(i - 1);
  return 0;
}

} // namespace

ReportParameterServer make_ps_section(const Scenario& scenario, const PsPlan& plan, const PsRunResult& r) {
  const ParameterServer& ps = plan.spec;
  ReportParameterServer s;
  s.policy = ps.policy;
  if (ps.policy == PsPolicy::Ssp) s.staleness_bound = ps.staleness_bound;
  if (ps.policy == PsPolicy::LocalSgd) s.local_steps = ps.local_steps;
  s.workers = plan.workers();
  s.shards = plan.shards();
  s.steps_per_worker = plan.steps;
  s.global_batch = plan.global_batch;
  s.parameter_bytes = plan.parameter_bytes;
  s.gradient_bytes = plan.gradient_bytes;
  s.nominal_step_time = plan.nominal_step_time;
  s.update_time = plan.update_time;
  s.update_time_origin = plan.update_time_origin;
  s.makespan = r.makespan;
  const double span = r.makespan > 0 ? r.makespan : 1.0;
  double steps = 0.0;
  double staleness_sum = 0.0;
  std::uint64_t staleness_samples = 0;
  for (std::size_t w = 0; w < r.workers.size(); ++w) {
    const PsWorkerRaw& raw = r.workers[w];
    ReportPsWorker& out = s.worker_figures.emplace_back();
    out.worker = static_cast<std::int64_t>(w);
    out.gpu = plan.worker_gpu[w];
    out.speed = plan.nominal_step_time > 0 ? plan.nominal_step_time / plan.step_time[w] : ps.worker_speeds[w];
    out.steps = raw.steps;
    out.pushes = raw.pushes;
    out.compute = raw.compute;
    out.pull = raw.pull;
    out.push = raw.push;
    out.blocked = raw.blocked;
    out.finish = raw.finish;
    out.staleness_mean =
        raw.staleness_samples > 0 ? raw.staleness_sum / static_cast<double>(raw.staleness_samples) : 0.0;
    out.staleness_histogram = raw.staleness_histogram;
    out.staleness_max = histogram_max(raw.staleness_histogram);
    out.max_lead = raw.max_lead;
    steps += static_cast<double>(raw.steps);
    staleness_sum += raw.staleness_sum;
    staleness_samples += raw.staleness_samples;
    add_histogram(s.staleness_histogram, raw.staleness_histogram);
    s.max_lead = std::max(s.max_lead, raw.max_lead);
    s.blocked += raw.blocked;
  }
  s.staleness_mean = staleness_samples > 0 ? staleness_sum / static_cast<double>(staleness_samples) : 0.0;
  s.staleness_max = histogram_max(s.staleness_histogram);
  s.blocked_share = s.blocked / (static_cast<double>(s.workers) * span);
  s.steps_per_s = steps / static_cast<double>(s.workers) / span;
  s.samples_per_s = steps * plan.samples_per_step / span;
  std::int64_t versions = 0;
  for (const PsShardRaw& shard : r.shards) versions = std::max(versions, shard.version);
  s.updates_per_s = static_cast<double>(versions) / span;
  const double nic = scenario.cluster.network.nic.bandwidth;
  for (std::size_t k = 0; k < r.shards.size(); ++k) {
    const PsShardRaw& raw = r.shards[k];
    ReportPsShard& out = s.shard_figures.emplace_back();
    out.shard = static_cast<std::int64_t>(k);
    out.gpu = plan.shard_gpu[k];
    out.bytes_received = raw.bytes_received;
    out.bytes_sent = raw.bytes_sent;
    out.utilisation_in = raw.bytes_received / (nic * span);
    out.utilisation_out = raw.bytes_sent / (nic * span);
    out.update_busy = raw.updating / span;
    out.gradients = raw.gradients;
    out.version = raw.version;
  }
  if (!ps.statistical_efficiency) {
    s.statistical_efficiency_note =
        "none: the scenario gives no statistical-efficiency model (/strategy/statistical_efficiency), so this report "
        "has no time to a target loss; staleness slows convergence by an amount partsim does not simulate";
    return s;
  }
  const StatisticalEfficiency& model = *ps.statistical_efficiency;
  ReportPsEfficiency e;
  e.source = model.source;
  e.target = model.target;
  e.mean_staleness = s.staleness_mean;
  if (ps.policy == PsPolicy::LocalSgd) {
    s.statistical_efficiency_note =
        fmt::format("the scenario's model ({}) gives steps against staleness; local SGD's {} local steps between "
                    "synchronisations are not staleness, so this report has no time to the target",
                    model.source, ps.local_steps);
  } else if ((e.steps_needed = model.steps_needed(s.staleness_mean))) {
    e.time_to_target = *e.steps_needed / s.steps_per_s;
    s.statistical_efficiency_note = fmt::format("from the scenario's model: {}", model.source);
  } else {
    s.statistical_efficiency_note = fmt::format(
        "the run's mean staleness {:.4g} is outside the model's points ({:g} to {:g}): no time to the target",
        s.staleness_mean, model.points.front().mean_staleness, model.points.back().mean_staleness);
  }
  s.statistical_efficiency = e;
  return s;
}

ReportDocument make_ps_report_document(const Scenario& scenario, const PsPlan& plan, const PsRunResult& r) {
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
  e.folding = "not applicable: a parameter-server run has no rank programs";
  e.actors = r.actors;
  doc.strategy = describe(plan.spec);
  doc.gpu_profile = to_json(scenario.cluster.gpu);
  doc.verdict = Verdict::Simulated;
  doc.parameter_server = make_ps_section(scenario, plan, r);
  ReportSummary summary;
  summary.gpus = plan.workers() + plan.shards();
  summary.iterations = plan.steps;
  summary.makespan = r.makespan;
  summary.throughput = doc.parameter_server->samples_per_s;
  double bytes = 0.0;
  for (const PsShardRaw& shard : r.shards) bytes += shard.bytes_received + shard.bytes_sent;
  summary.bytes_sent = static_cast<std::uint64_t>(bytes);
  summary.bytes_received = summary.bytes_sent;
  doc.summary = summary;
  return doc;
}

std::string format_ps_table(const ReportDocument& doc) {
  const ReportParameterServer& s = *doc.parameter_server;
  std::string out;
  auto line = [&](std::string_view label, const std::string& value) {
    out += fmt::format("  {:<30} {}\n", label, value);
  };
  out += format_document_heading(doc);
  line("makespan", fmt::format("{:.6g} s ({} steps per worker)", s.makespan, s.steps_per_worker));
  line("throughput", fmt::format("{:.6g} steps/s, {:.6g} samples/s, {:.6g} updates/s", s.steps_per_s, s.samples_per_s,
                                 s.updates_per_s));
  line("staleness (updates)", fmt::format("mean {:.4g}, max {}", s.staleness_mean, s.staleness_max));
  line("most steps ahead of the slowest", fmt::format("{}", s.max_lead));
  line("blocked by the policy",
       fmt::format("{:.6g} worker-s ({:.3g}% of worker time)", s.blocked, s.blocked_share * 100.0));
  line("statistical efficiency", s.statistical_efficiency_note);
  if (s.statistical_efficiency && s.statistical_efficiency->time_to_target)
    line("time to target", fmt::format("{:.6g} s ({:.6g} steps)", *s.statistical_efficiency->time_to_target,
                                       *s.statistical_efficiency->steps_needed));
  out += fmt::format("\n  {:<7} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>9} {:>6}\n", "worker", "speed", "compute s",
                     "pull s", "push s", "blocked s", "finish s", "stale", "max");
  for (const ReportPsWorker& w : s.worker_figures)
    out += fmt::format("  {:<7} {:>6.3g} {:>10.5g} {:>10.5g} {:>10.5g} {:>10.5g} {:>10.5g} {:>9.4g} {:>6}\n", w.worker,
                       w.speed, w.compute, w.pull, w.push, w.blocked, w.finish, w.staleness_mean, w.staleness_max);
  out += fmt::format("\n  {:<7} {:>8} {:>8} {:>8} {:>10}\n", "shard", "link in", "link out", "updating", "version");
  for (const ReportPsShard& k : s.shard_figures)
    out += fmt::format("  {:<7} {:>7.1f}% {:>7.1f}% {:>7.1f}% {:>10}\n", k.shard, k.utilisation_in * 100.0,
                       k.utilisation_out * 100.0, k.update_busy * 100.0, k.version);
  return out;
}

} // namespace partsim
