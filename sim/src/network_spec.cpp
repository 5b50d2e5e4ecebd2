// Network and link specs of a scenario's cluster: parsing and validation.
#include "partsim/network.hpp"

#include "partsim/error.hpp"
#include "partsim/json_reader.hpp"
#include "partsim/link_profile.hpp"

#include <fmt/format.h>

namespace partsim {

/** A link's bandwidth and latency: given directly, or from a profile in models/links (`"profile": "ib-ndr"`),
 * whose figures explicit keys override. `scope` is "intra_node" or "inter_node": a profile must match it and give
 * its bandwidth per GPU or per port (an NVSwitch's aggregate is not a per-GPU link). */
LinkSpec parse_link(JsonReader& reader, const std::filesystem::path& data_dir, const std::string& scope) {
  LinkSpec link;
  const Bounds bandwidth_bounds = Bounds::positive(1e15);
  const Bounds latency_bounds = Bounds::non_negative(10.0);
  if (reader.has("profile")) {
    const JsonReader name = reader.child("profile");
    const LinkProfile profile = load_link_profile(data_dir, name.as_string(), name.source(), name.pointer());
    if (profile.scope != scope || profile.bandwidth_per == "switch")
      throw name.error(fmt::format("\"{}\" is a {} link with bandwidth per {}; expected a {} link with bandwidth per "
                                   "GPU or port",
                                   profile.name, profile.scope, profile.bandwidth_per, scope));
    link.bandwidth = reader.quantity_or("bandwidth", profile.bandwidth.value, Dimension::Bandwidth, bandwidth_bounds);
    link.latency = reader.quantity_or("latency", profile.latency.value, Dimension::Time, latency_bounds);
    return link;
  }
  link.bandwidth = reader.quantity("bandwidth", Dimension::Bandwidth, bandwidth_bounds);
  link.latency = reader.quantity("latency", Dimension::Time, latency_bounds);
  return link;
}

NetworkSpec parse_network(JsonReader& reader, const std::filesystem::path& data_dir, int nodes, int gpus_per_node) {
  (void)nodes;
  (void)gpus_per_node;
  NetworkSpec network;
  network.topology = reader.choice_or("topology", "star", {"star"});
  network.nic = parse_link(reader, data_dir, "inter_node");
  reader.finish();
  return network;
}

} // namespace partsim
