// Energy and cost of a run: power x time per GPU state (compute, exposed communication, idle) from the simulated
// per-GPU intervals, plus node and switch power and the data centre's PUE; then prices (cloud or owned), figures per
// iteration, per token and for a token budget, and the time to train the budget. Pure arithmetic, no SimGrid.
#pragma once

#include "partsim/input/energy_cost.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace partsim {

struct PowerFigures;

/** GPU-seconds of a run by power state, summed over its GPUs. */
struct GpuStateTimes {
  double compute = 0.0;       ///< computing (overlapped communication included: the GPU is computing)
  double communication = 0.0; ///< exposed transfers moving
  double idle = 0.0;          ///< blocked on a peer or finished early (wait + tail idle)
};

/** What a run is, for energy and cost: its size, its time and its work. */
struct RunExtent {
  std::int64_t gpus = 0;
  std::int64_t nodes = 0;
  double makespan = 0.0; ///< s, all iterations
  std::int64_t iterations = 1;
  std::optional<double> tokens; ///< trained on in the run, all iterations (model training)
};

/** `/energy` of the report. Energies in J, powers in W. */
struct EnergyFigures {
  // The powers used.
  double gpu_compute_power = 0.0;       ///< per GPU
  double gpu_communication_power = 0.0; ///< per GPU
  double gpu_idle_power = 0.0;          ///< per GPU
  double node_power = 0.0;              ///< per node, GPUs excluded
  std::int64_t nodes = 0;
  double switch_power = 0.0; ///< per switch
  std::int64_t switches = 0;
  double pue = 1.0;
  GpuStateTimes times; ///< GPU-seconds by state
  // The run (all iterations).
  double gpu_compute = 0.0;
  double gpu_communication = 0.0;
  double gpu_idle = 0.0;
  double node_energy = 0.0;
  double switch_energy = 0.0;
  double it_energy = 0.0;       ///< the five above
  double facility_energy = 0.0; ///< it_energy x PUE
  double average_power = 0.0;   ///< facility W over the makespan
  double per_iteration = 0.0;   ///< facility J
  std::optional<double> per_token;
  std::optional<double> budget; ///< facility J to train the token budget
  double budget_tokens = 0.0;
  std::vector<std::string> assumed; ///< scenario pointers that took a default
};

/** `/cost` of the report, in the scenario's currency. */
struct CostFigures {
  PricingModel model = PricingModel::Cloud;
  std::string currency;
  double gpu_hour_rate = 0.0; ///< per GPU-hour: the price (cloud) or the amortised purchase (owned)
  double hardware = 0.0;      ///< of the run: GPU-hours x rate
  double electricity = 0.0;   ///< of the run: facility kWh x price (owned; 0 in the cloud, where it is in the price)
  double total = 0.0;         ///< hardware + electricity
  double per_iteration = 0.0;
  std::optional<double> per_million_tokens;
  std::optional<double> budget;           ///< to train the token budget
  std::optional<double> budget_time_days; ///< wall-clock days to train the budget on this cluster
  std::optional<double> budget_gpu_hours; ///< GPU-hours to train the budget
  double budget_tokens = 0.0;
  std::vector<std::string> assumed; ///< scenario pointers that took a default (example prices)
};

/** Energy of a run from its GPU-state times: each state's GPU-seconds x its power (compute and communication as
 * fractions of the TDP, idle the profile's idle power), nodes and switches at constant power over the makespan, all
 * x PUE. `budget_tokens` > 0 with `run.tokens`: the budget's energy at the run's energy per token. */
EnergyFigures energy_figures(const EnergySpec& spec, const PowerFigures& gpu, const GpuStateTimes& times,
                             const RunExtent& run, double budget_tokens);

/** Cost of a run with its energy: cloud, GPU-hours x price; owned, GPU-hours x purchase / lifetime hours plus facility
 * kWh x electricity price. Per token and budget figures when the run trains on tokens. */
CostFigures cost_figures(const CostSpec& spec, const EnergyFigures& energy, const RunExtent& run, double budget_tokens);

/** Megatron-LM's closed form for the time to train (Narayanan et al., SC'21, eq. 4): 8 x tokens x parameters /
 * (GPUs x achieved FLOP/s per GPU), in s; the 8 counts forward, backward and a full recomputation per parameter. */
double megatron_time_to_train(double tokens, double parameters, double gpus, double achieved_flops_per_gpu);

} // namespace partsim
