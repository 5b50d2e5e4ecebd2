// A run's `stragglers` section (report/report_stragglers.hpp).
#include "partsim/report/report_stragglers.hpp"

#include "partsim/common/error.hpp"
#include "partsim/input/scenario.hpp"
#include "partsim/plan/plan.hpp"
#include "partsim/report/run_result.hpp"
#include "partsim/serving/serving_result.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <variant>

namespace partsim {

ReportStragglers stragglers_section(const Scenario& scenario, const Plan& plan, const RunResult& result) {
  PARTSIM_CHECK(scenario.cluster.stragglers.has_value()) << "a stragglers section without /cluster/stragglers";
  const StragglerSpec& spec = *scenario.cluster.stragglers;
  const ClusterSpec& cluster = scenario.cluster;
  const StragglerDraws draws(spec, scenario.run.seed, cluster.gpu_count());
  ReportStragglers s;
  s.method = "compute steps of GPU g in iteration i run amount / factor(g, i): the product of g's fixed factor and, "
             "with probability p, a random straggler's draw from (seed, g, i)";
  s.seed = scenario.run.seed;
  s.probability = spec.probability;
  s.slowdown = spec.probability > 0.0 ? spec.slowdown.describe() : "none";

  std::set<int> used;
  for (const RankProgram& p : plan.ranks) used.insert(p.gpu);
  s.gpus = static_cast<std::int64_t>(used.size());
  double fixed_min = 1.0;
  for (int gpu : used)
    if (draws.fixed_factor(gpu) < 1.0) {
      ++s.fixed_stragglers;
      fixed_min = std::min(fixed_min, draws.fixed_factor(gpu));
    }
  s.fixed_stretch = 1.0 / fixed_min;
  s.mean_stretch = spec.probability > 0.0 ? spec.slowdown.mean_stretch(s.fixed_stretch) : s.fixed_stretch;

  // The busiest rank's compute per iteration at nominal speed (its GPU's speed without stragglers).
  const double peak = cluster.gpu.peak(workload_data_type(scenario.workload));
  std::vector<double> program_amount(plan.ranks.size(), -1.0); // per program (ranks may share one)
  for (std::size_t r = 0; r < plan.ranks.size(); ++r) {
    const RankProgram& p = plan.ranks[r];
    double& amount = program_amount[static_cast<std::size_t>(plan.owner(static_cast<int>(r)))];
    if (amount < 0.0) {
      amount = 0.0;
      for (const Step& step : plan.steps_of(static_cast<int>(r)).unrelabeled())
        if (const auto* compute = std::get_if<ComputeStep>(&step)) amount += compute->amount;
    }
    const double speed = peak * cluster.node_speed_factor.at(static_cast<std::size_t>(p.gpu / cluster.gpus_per_node));
    s.compute_per_iteration = std::max(s.compute_per_iteration, amount / speed);
  }

  s.iterations = plan.iterations;
  std::vector<double> times;
  times.reserve(result.iteration_end.size());
  double previous = 0.0;
  double sum = 0.0;
  double estimate_sum = 0.0;
  double unslowed_sum = 0.0;
  for (std::size_t i = 0; i < result.iteration_end.size(); ++i) {
    const double t = result.iteration_end[i] - previous;
    previous = result.iteration_end[i];
    times.push_back(t);
    sum += t;
    // The iteration's largest stretch of compute: its slowest GPU's 1 / factor.
    double stretch = s.fixed_stretch;
    bool slowed = false;
    for (int gpu : used) {
      const auto [straggles, f] = draws.random_draw(gpu, static_cast<std::int64_t>(i));
      if (!straggles) continue;
      slowed = true;
      ++s.slowed_gpu_iterations;
      stretch = std::max(stretch, 1.0 / (draws.fixed_factor(gpu) * f));
    }
    if (slowed) {
      ++s.slowed_iterations;
    } else {
      ++s.nominal_iterations;
      unslowed_sum += t;
    }
    estimate_sum += t - s.compute_per_iteration * (stretch - s.fixed_stretch);
  }
  if (!times.empty()) {
    const double n = static_cast<double>(times.size());
    s.mean_iteration = sum / n;
    // Simulated where the run has iterations without a random straggler; else the first-order estimate.
    s.nominal_iteration =
        s.nominal_iterations > 0 ? unslowed_sum / static_cast<double>(s.nominal_iterations) : estimate_sum / n;
    std::sort(times.begin(), times.end());
    s.p50_iteration = quantile_of_sorted(times, 0.5);
    s.p99_iteration = quantile_of_sorted(times, 0.99);
    s.max_iteration = times.back();
    s.slowed_iteration_fraction = static_cast<double>(s.slowed_iterations) / n;
  }
  // The first-order model: an iteration with at least one straggler lasts compute_per_iteration x (stretch - the
  // fixed stretch) longer, at the mean stretch of one straggler (a second straggler in the same iteration is left out).
  const auto expected = [&](std::int64_t gpus) {
    ReportStragglerTail row;
    row.gpus = gpus;
    row.straggler_probability = 1.0 - std::pow(1.0 - spec.probability, static_cast<double>(gpus));
    row.expected_iteration =
        s.nominal_iteration + row.straggler_probability * s.compute_per_iteration * (s.mean_stretch - s.fixed_stretch);
    row.over_nominal = s.nominal_iteration > 0.0 ? row.expected_iteration / s.nominal_iteration : 0.0;
    return row;
  };
  const ReportStragglerTail own = expected(s.gpus);
  s.expected_slowed_iteration_fraction = own.straggler_probability;
  s.expected_iteration = own.expected_iteration;
  if (spec.probability > 0.0) {
    for (std::int64_t n = 1; n < s.gpus; n *= 2) s.tail.push_back(expected(n));
    s.tail.push_back(own);
  }
  s.tail_note = fmt::format(
      "closed form, not simulated: nominal_iteration_s + (1 - (1 - p)^N) x compute_per_iteration_s x (mean_stretch - "
      "fixed_stretch) for N GPUs, with this run's figures; the simulated figure is mean_iteration_s at N = {}",
      s.gpus);
  return s;
}

std::vector<std::pair<std::string, std::string>> stragglers_table_lines(const ReportStragglers& s) {
  std::vector<std::pair<std::string, std::string>> out;
  out.emplace_back("iteration mean / p50 / p99 / max",
                   fmt::format("{:.4g} / {:.4g} / {:.4g} / {:.4g} s (stragglers)", s.mean_iteration, s.p50_iteration,
                               s.p99_iteration, s.max_iteration));
  out.emplace_back("slowed iterations",
                   fmt::format("{} of {} ({:.3g}%; 1-(1-p)^N = {:.3g}%), {} GPU-iterations, p = {:g}, f = {}",
                               s.slowed_iterations, s.iterations, 100.0 * s.slowed_iteration_fraction,
                               100.0 * s.expected_slowed_iteration_fraction, s.slowed_gpu_iterations, s.probability,
                               s.slowdown));
  out.emplace_back("tail effect (closed form)", fmt::format("{:.4g} s nominal, {:.4g} s expected at N = {}",
                                                            s.nominal_iteration, s.expected_iteration, s.gpus));
  return out;
}

} // namespace partsim
