// Network and link specs of a scenario's cluster: parsing and validation.
#include "partsim/input/network.hpp"

#include "partsim/common/error.hpp"
#include "partsim/input/json_reader.hpp"
#include "partsim/input/link_profile.hpp"

#include <fmt/format.h>

#include <cstdint>

namespace partsim {

namespace {

/** The latency of switch profile `name` (a file in models/links with bandwidth per switch). */
double switch_profile_latency(const std::filesystem::path& data_dir, const std::string& name, const JsonReader& at) {
  const LinkProfile profile = load_link_profile(data_dir, name, at.source(), at.pointer());
  if (profile.scope != "inter_node" || profile.bandwidth_per != "switch")
    throw at.error(fmt::format("\"{}\" is a {} link with bandwidth per {}; expected an inter_node switch profile "
                               "(bandwidth per switch)",
                               profile.name, profile.scope, profile.bandwidth_per));
  return profile.latency.value;
}

/** A switch's extra one-way latency: `switch_latency`, or the latency of a switch profile (`switch_profile`), which
 * an explicit `switch_latency` overrides; without either, `fallback` (the NIC profile's switch, else 0: the NIC
 * latency already covers the path through one switch). */
double parse_switch_latency(JsonReader& reader, const std::filesystem::path& data_dir, double fallback) {
  double latency = fallback;
  if (reader.has("switch_profile")) {
    const JsonReader name = reader.child("switch_profile");
    latency = switch_profile_latency(data_dir, name.as_string(), name);
  }
  return reader.quantity_or("switch_latency", latency);
}

FatTreeSpec parse_fat_tree(JsonReader reader, const std::filesystem::path& data_dir, double default_switch) {
  FatTreeSpec tree;
  tree.levels = static_cast<int>(reader.integer("levels"));
  tree.nodes_per_leaf = static_cast<int>(reader.integer("nodes_per_leaf"));
  tree.leaf_oversubscription = reader.number("leaf_oversubscription");
  if (tree.levels == 3) {
    tree.leaves_per_pod = static_cast<int>(reader.integer("leaves_per_pod"));
    tree.pod_oversubscription = reader.number("pod_oversubscription");
  } else {
    for (const char* key : {"leaves_per_pod", "pod_oversubscription"})
      if (reader.value().contains(key))
        throw InputError(reader.source(), reader.pointer() + "/" + key,
                         "only a 3-level fat-tree has pods; expected \"levels\": 3, or no pods");
  }
  tree.switch_latency = parse_switch_latency(reader, data_dir, default_switch);
  reader.finish();
  return tree;
}

RailSpec parse_rail(JsonReader reader, const std::filesystem::path& data_dir, double default_switch) {
  RailSpec rail;
  rail.spine_oversubscription = reader.number("spine_oversubscription");
  rail.switch_latency = parse_switch_latency(reader, data_dir, default_switch);
  reader.finish();
  return rail;
}

} // namespace

/** A link's bandwidth and latency: given directly, or from a profile in models/links (`"profile": "ib-ndr"`),
 * whose figures explicit keys override. `scope` is "intra_node" or "inter_node": a profile must match it and give
 * its bandwidth per GPU or per port (an NVSwitch's aggregate is not a per-GPU link). */
LinkSpec parse_link(JsonReader& reader, const std::filesystem::path& data_dir, const std::string& scope) {
  LinkSpec link;
  if (reader.has("profile")) {
    const JsonReader name = reader.child("profile");
    const LinkProfile profile = load_link_profile(data_dir, name.as_string(), name.source(), name.pointer());
    if (profile.scope != scope || profile.bandwidth_per == "switch")
      throw name.error(fmt::format("\"{}\" is a {} link with bandwidth per {}; expected a {} link with bandwidth per "
                                   "GPU or port",
                                   profile.name, profile.scope, profile.bandwidth_per, scope));
    link.line_rate = reader.quantity_or("bandwidth", profile.bandwidth.value);
    link.latency = reader.quantity_or("latency", profile.latency.value);
    link.efficiency = reader.number_or("efficiency", profile.efficiency ? profile.efficiency->value : 1.0);
    link.switch_profile = profile.switch_profile;
    link.nvlink = profile.transport == "nvlink";
    if (profile.nvls) {
      link.nvls_efficiency = profile.nvls->efficiency.value;
      link.nvls_latency = profile.nvls->latency.value;
      if (profile.nvls->tree_head_two_nodes) link.nvls_tree_head_two_nodes = profile.nvls->tree_head_two_nodes->value;
      if (profile.nvls->tree_head_more_nodes)
        link.nvls_tree_head_more_nodes = profile.nvls->tree_head_more_nodes->value;
    }
    if (profile.ll_max_bandwidth) link.ll_max_bandwidth = profile.ll_max_bandwidth->value;
  } else {
    link.line_rate = reader.quantity("bandwidth");
    link.latency = reader.quantity("latency");
    link.efficiency = reader.number_or("efficiency", 1.0);
  }
  if (scope == "intra_node") {
    link.nvls_efficiency = reader.number_or("nvls_efficiency", link.nvls_efficiency);
    link.nvls_latency = reader.quantity_or("nvls_latency", link.nvls_latency);
    link.ll_max_bandwidth = reader.quantity_or("ll_max_bandwidth", link.ll_max_bandwidth);
    if (reader.has("transport")) link.nvlink = reader.choice("transport", {"nvlink", "pcie"}) == "nvlink";
  }
  link.bandwidth = link.line_rate * link.efficiency;
  return link;
}

NetworkSpec parse_network(JsonReader& reader, const std::filesystem::path& data_dir, int nodes, int gpus_per_node) {
  (void)nodes; // every node count is valid: the last leaf (pod) may be partial
  NetworkSpec network;
  network.topology = reader.choice("topology");
  network.nic = parse_link(reader, data_dir, "inter_node");

  // A rail network has one rail per local GPU index, so one NIC per GPU; the others default to one shared NIC.
  const bool rail = network.topology == "rail";
  if (reader.has("nics_per_node")) {
    JsonReader nics = reader.child("nics_per_node");
    network.nics_per_node = static_cast<int>(nics.as_integer(1, gpus_per_node));
    if (gpus_per_node % network.nics_per_node != 0)
      throw nics.error(fmt::format("expected a divisor of gpus_per_node ({}), so that every NIC serves as many GPUs; "
                                   "got {}",
                                   gpus_per_node, network.nics_per_node));
    if (rail && network.nics_per_node != gpus_per_node)
      throw nics.error(fmt::format("a rail network gives each GPU its own NIC on its own rail; expected "
                                   "nics_per_node = gpus_per_node ({}), got {}",
                                   gpus_per_node, network.nics_per_node));
  } else {
    network.nics_per_node = rail ? gpus_per_node : 1;
  }

  // The NIC profile's switch: the latency each switch past the first adds, unless the topology's object gives one.
  double default_switch = 0.0;
  if (!network.nic.switch_profile.empty() && (network.topology == "fat_tree" || network.topology == "rail"))
    default_switch = switch_profile_latency(data_dir, network.nic.switch_profile, reader.child("profile"));
  network.rail.switch_latency = default_switch;

  // Each topology's own object: required with fat_tree, optional with rail, refused with the others.
  if (network.topology == "fat_tree")
    network.fat_tree = parse_fat_tree(reader.child("fat_tree"), data_dir, default_switch);
  if (network.topology == "rail" && reader.has("rail"))
    network.rail = parse_rail(reader.child("rail"), data_dir, default_switch);
  for (const char* key : {"fat_tree", "rail"}) {
    if (network.topology != key && reader.value().contains(key)) {
      throw InputError(
          reader.source(), reader.pointer() + "/" + key,
          fmt::format("belongs to topology \"{}\"; this network's topology is \"{}\"", key, network.topology));
    }
  }
  reader.finish();
  return network;
}

} // namespace partsim
