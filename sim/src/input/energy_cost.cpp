// Parsing of the scenario's `/energy`, `/cost` and `/budget`, and the switch count of a cluster's network.
#include "partsim/input/energy_cost.hpp"

#include "partsim/input/json_reader.hpp"
#include "partsim/input/scenario.hpp"

namespace partsim {

namespace {

/** Non-GPU power of a node per GPU when `/energy/node_power` is absent: NVIDIA DGX H100's maximum system power
 * (10.2 kW, datasheet 2023) less its eight 700 W GPUs, per GPU. An example, and a maximum. */
constexpr double kNodePowerPerGpu = (10'200.0 - 8 * 700.0) / 8;

/** Records `key` of this object as defaulted when the scenario does not give it. */
void note_default(JsonReader& reader, std::string_view key, std::vector<std::string>& defaulted) {
  if (!reader.has(key)) defaulted.push_back(reader.pointer() + "/" + std::string(key));
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

} // namespace

std::int64_t topology_switches(const ClusterSpec& cluster) {
  if (cluster.nodes <= 1) return 0;
  const NetworkSpec& net = cluster.network;
  if (net.topology == "fat_tree") {
    const std::int64_t leaves = ceil_div(cluster.nodes, net.fat_tree.nodes_per_leaf);
    if (leaves <= 1) return 1;
    const std::int64_t pods = net.fat_tree.levels == 3 ? ceil_div(leaves, net.fat_tree.leaves_per_pod) : 0;
    return leaves + pods + 1;
  }
  if (net.topology == "rail") return net.nics_per_node + 1;
  return 1; // star
}

EnergySpec parse_energy(JsonReader reader, const ClusterSpec& cluster) {
  EnergySpec e;
  for (const char* key :
       {"compute_power_fraction", "communication_power_fraction", "node_power", "switches", "switch_power", "pue"})
    note_default(reader, key, e.defaulted);
  e.compute_power_fraction = reader.number("compute_power_fraction");
  e.communication_power_fraction = reader.number("communication_power_fraction");
  e.node_power = reader.quantity_or("node_power", kNodePowerPerGpu * cluster.gpus_per_node);
  e.switches = reader.integer_or("switches", topology_switches(cluster));
  e.switch_power = reader.quantity("switch_power");
  e.pue = reader.number("pue");
  reader.finish();
  return e;
}

CostSpec parse_cost(JsonReader reader) {
  CostSpec c;
  c.model = reader.enum_choice_or("model", PricingModel::Cloud);
  c.currency = reader.string("currency");
  if (c.currency.empty())
    throw InputError(reader.source(), reader.pointer() + "/currency", "expected a non-empty currency name");
  const std::vector<std::string> prices =
      c.model == PricingModel::Cloud
          ? std::vector<std::string>{"gpu_hour_price"}
          : std::vector<std::string>{"gpu_purchase_price", "lifetime_years", "electricity_price"};
  for (const std::string& key : prices) note_default(reader, key, c.defaulted);
  c.gpu_hour_price = reader.number("gpu_hour_price");
  c.gpu_purchase_price = reader.number("gpu_purchase_price");
  c.lifetime_years = reader.number("lifetime_years");
  c.electricity_price = reader.number("electricity_price");
  reader.finish();
  return c;
}

BudgetSpec parse_budget(JsonReader reader) {
  BudgetSpec b;
  b.defaulted = !reader.has("tokens");
  b.tokens = reader.number("tokens");
  reader.finish();
  return b;
}

} // namespace partsim
