// The scenario's energy and cost inputs: GPU power by state, node and switch power, the data centre's PUE, prices
// (cloud or owned) and the token budget. Parsed once with the scenario; read by report/energy_cost.hpp.
#pragma once

#include "partsim/common/enum_names.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace partsim {

/** How GPU time is paid for: rented by the GPU-hour, or bought, amortised over its lifetime and powered. */
enum class PricingModel : std::uint8_t { Cloud, Owned };

template <>
struct EnumNames<PricingModel> {
  static constexpr std::array<EnumEntry<PricingModel>, 2> entries{
      {{PricingModel::Cloud, "cloud"}, {PricingModel::Owned, "owned"}}};
};

/** `/energy`: the power of everything but the GPU profile's own figures (docs/energy-and-cost.md). */
struct EnergySpec {
  double compute_power_fraction = 1.0;       ///< of the GPU's TDP while it computes
  double communication_power_fraction = 0.5; ///< of the GPU's TDP while its exposed transfers move
  double node_power = 0.0;                   ///< W per node beyond its GPUs (CPUs, memory, NICs, fans), resolved
  std::int64_t switches = 0;                 ///< network switches, resolved (the topology's when not given)
  double switch_power = 0.0;                 ///< W per switch
  double pue = 1.0;                          ///< power usage effectiveness: facility power / IT power
  /** The pointers of the fields that took their default (example or assumption), for the report. */
  std::vector<std::string> defaulted;
};

/** `/cost`: prices given by the user; defaults are labelled examples. */
struct CostSpec {
  PricingModel model = PricingModel::Cloud;
  std::string currency = "USD";
  double gpu_hour_price = 0.0;        ///< cloud: per GPU-hour, energy included
  double gpu_purchase_price = 0.0;    ///< owned: per GPU, its share of the server and network included
  double lifetime_years = 0.0;        ///< owned: straight-line amortisation, used around the clock
  double electricity_price = 0.0;     ///< owned: per kWh of facility energy (PUE included)
  std::vector<std::string> defaulted; ///< as in EnergySpec
};

/** `/budget`: what training is for. */
struct BudgetSpec {
  double tokens = 0.0; ///< tokens to train on (model training)
  bool defaulted = true;
};

class JsonReader;
struct ClusterSpec;

/** The switches of the cluster's simulated network: none in one node; a star's core; a fat-tree's leaves plus its
 * pods (3 levels) plus one spine or core; a rail network's rails plus one spine. A non-blocking spine or core counts
 * as one switch (the simulation does not say how many boxes build it). */
std::int64_t topology_switches(const ClusterSpec& cluster);

/** Parses `/energy` (through the scenario schema; every key, `finish`es the reader), resolving the defaults that
 * depend on the cluster. */
EnergySpec parse_energy(JsonReader reader, const ClusterSpec& cluster);
/** Parses `/cost`. */
CostSpec parse_cost(JsonReader reader);
/** Parses `/budget`. */
BudgetSpec parse_budget(JsonReader reader);

} // namespace partsim
