// Energy and cost arithmetic of a run (report/energy_cost.hpp).
#include "partsim/report/energy_cost.hpp"

#include "partsim/common/error.hpp"
#include "partsim/input/hardware.hpp"

namespace partsim {

namespace {
constexpr double kSecondsPerHour = 3600.0;
constexpr double kSecondsPerDay = 86400.0;
constexpr double kJoulesPerKwh = 3.6e6;
constexpr double kHoursPerYear = 365.25 * 24.0;
} // namespace

EnergyFigures energy_figures(const EnergySpec& spec, const PowerFigures& gpu, const GpuStateTimes& times,
                             const RunExtent& run, double budget_tokens) {
  PARTSIM_CHECK(run.iterations > 0) << "iterations " << run.iterations;
  EnergyFigures e;
  e.gpu_compute_power = spec.compute_power_fraction * gpu.tdp.value;
  e.gpu_communication_power = spec.communication_power_fraction * gpu.tdp.value;
  e.gpu_idle_power = gpu.idle.value;
  e.node_power = spec.node_power;
  e.nodes = run.nodes;
  e.switch_power = spec.switch_power;
  e.switches = spec.switches;
  e.pue = spec.pue;
  e.times = times;
  e.budget_tokens = budget_tokens;

  e.gpu_compute = times.compute * e.gpu_compute_power;
  e.gpu_communication = times.communication * e.gpu_communication_power;
  e.gpu_idle = times.idle * e.gpu_idle_power;
  e.node_energy = e.node_power * static_cast<double>(e.nodes) * run.makespan;
  e.switch_energy = e.switch_power * static_cast<double>(e.switches) * run.makespan;
  e.it_energy = e.gpu_compute + e.gpu_communication + e.gpu_idle + e.node_energy + e.switch_energy;
  e.facility_energy = e.it_energy * e.pue;
  e.average_power = run.makespan > 0.0 ? e.facility_energy / run.makespan : 0.0;
  e.per_iteration = e.facility_energy / static_cast<double>(run.iterations);
  if (run.tokens && *run.tokens > 0.0) {
    e.per_token = e.facility_energy / *run.tokens;
    if (budget_tokens > 0.0) e.budget = *e.per_token * budget_tokens;
  }
  e.assumed = spec.defaulted;
  return e;
}

CostFigures cost_figures(const CostSpec& spec, const EnergyFigures& energy, const RunExtent& run,
                         double budget_tokens) {
  PARTSIM_CHECK(run.iterations > 0) << "iterations " << run.iterations;
  CostFigures c;
  c.model = spec.model;
  c.currency = spec.currency;
  c.budget_tokens = budget_tokens;
  const double gpu_hours = static_cast<double>(run.gpus) * run.makespan / kSecondsPerHour;
  if (spec.model == PricingModel::Cloud) {
    c.gpu_hour_rate = spec.gpu_hour_price;
  } else {
    PARTSIM_CHECK(spec.lifetime_years > 0.0) << "lifetime " << spec.lifetime_years;
    c.gpu_hour_rate = spec.gpu_purchase_price / (spec.lifetime_years * kHoursPerYear);
    c.electricity = energy.facility_energy / kJoulesPerKwh * spec.electricity_price;
  }
  c.hardware = gpu_hours * c.gpu_hour_rate;
  c.total = c.hardware + c.electricity;
  c.per_iteration = c.total / static_cast<double>(run.iterations);
  if (run.tokens && *run.tokens > 0.0) {
    c.per_million_tokens = c.total / *run.tokens * 1e6;
    if (budget_tokens > 0.0) {
      const double scale = budget_tokens / *run.tokens;
      c.budget = c.total * scale;
      c.budget_time_days = run.makespan * scale / kSecondsPerDay;
      c.budget_gpu_hours = gpu_hours * scale;
    }
  }
  c.assumed = spec.defaulted;
  return c;
}

double megatron_time_to_train(double tokens, double parameters, double gpus, double achieved_flops_per_gpu) {
  PARTSIM_CHECK(gpus > 0.0 && achieved_flops_per_gpu > 0.0) << gpus << " GPUs at " << achieved_flops_per_gpu;
  return 8.0 * tokens * parameters / (gpus * achieved_flops_per_gpu);
}

} // namespace partsim
