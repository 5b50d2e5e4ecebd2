// Platform layout (see docs/engine.md):
//   root: star zone "cluster"; each node is a full zone with its GPU hosts and a switch router (gateway).
//   GPU a -> GPU b in one node:  [intra-a UP, intra-b DOWN]          latency split half/half, so one hop = latency
//   GPU a (node i) -> GPU b (node j): [nic-i UP, nic-j DOWN]          GPUDirect: the NIC is reached without NVLink
//   The NIC links live in the node zones (GPU -> gateway is [nic UP], gateway -> GPU is [nic DOWN]), so the
//   root star zone only joins gateways, with empty routes.
//   coordinator (run-time balancing, coordinated runs): a node with one host of nominal GPU speed and its own NIC.
//   baseline: an extra host in its own zone, never communicating.
#include "platform.hpp"

#include <simgrid/kernel/ProfileBuilder.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <fmt/format.h>

#include <string>

namespace sg4 = simgrid::s4u;

namespace partsim::engine {

namespace {
sg4::Link* make_link(sg4::NetZone* zone, const std::string& name, const LinkSpec& spec) {
  // Split-duplex: each direction has the full bandwidth; the one-way latency is shared by the two halves of a path.
  auto* link = zone->create_split_duplex_link(name, spec.bandwidth);
  link->set_latency(spec.latency / 2.0);
  link->seal();
  return link;
}
/** One node: a full zone with its hosts, a switch router as gateway, one intra-node link per host (when there are
 * several) and, when `nic` is given, a NIC link that every host crosses to reach the gateway. */
std::vector<sg4::Host*> add_node(sg4::NetZone* root, const std::string& name, const std::vector<std::string>& hosts,
                                 const std::vector<simgrid::kernel::profile::Profile*>& speed_profiles, double speed,
                                 const LinkSpec& intra, const LinkSpec* nic_spec) {
  auto* zone = sg4::create_full_zone(name);
  zone->set_parent(root);
  auto* router = zone->create_router(name + "-switch");
  std::vector<sg4::Host*> created;
  std::vector<sg4::Link*> links;
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    auto* host = zone->create_host(hosts[i], speed);
    if (speed_profiles[i] != nullptr)
      host->set_speed_profile(speed_profiles[i]); // before seal(): SimGrid 3.32 ignores later profiles
    host->seal();
    created.push_back(host);
    if (hosts.size() > 1) links.push_back(make_link(zone, "intra-" + hosts[i], intra));
  }
  sg4::Link* nic = nic_spec != nullptr ? make_link(zone, "nic-" + name, *nic_spec) : nullptr;
  for (std::size_t a = 0; a < created.size(); ++a) {
    if (nic != nullptr) {
      zone->add_route(created[a]->get_netpoint(), router, nullptr, nullptr, {{nic, sg4::LinkInRoute::Direction::UP}},
                      false);
      zone->add_route(router, created[a]->get_netpoint(), nullptr, nullptr, {{nic, sg4::LinkInRoute::Direction::DOWN}},
                      false);
    }
    for (std::size_t b = 0; b < created.size(); ++b)
      if (a != b)
        zone->add_route(created[a]->get_netpoint(), created[b]->get_netpoint(), nullptr, nullptr,
                        {{links[a], sg4::LinkInRoute::Direction::UP}, {links[b], sg4::LinkInRoute::Direction::DOWN}},
                        false);
  }
  zone->seal();
  if (nic != nullptr) {
    root->add_route(zone->get_netpoint(), nullptr, router, nullptr, {}, false);
    root->add_route(nullptr, zone->get_netpoint(), nullptr, router, {}, false);
  }
  return created;
}

/** SimGrid speed profile of a speed change: "time factor" lines, repeating with its period. */
simgrid::kernel::profile::Profile* make_speed_profile(const std::string& name, const SpeedChange& change) {
  std::string text;
  for (const auto& [at, factor] : change.points) text += fmt::format("{} {}\n", at, factor);
  return simgrid::kernel::profile::ProfileBuilder::from_string(name, text, change.period);
}

} // namespace

Platform build_platform(const ClusterSpec& cluster, const std::string& data_type, bool with_coordinator) {
  Platform platform;
  const double peak = cluster.gpu.peak(data_type);
  auto* root = sg4::create_star_zone("cluster");
  platform.gpus.reserve(static_cast<std::size_t>(cluster.gpu_count()));
  // Nodes need NICs when there is more than one node, or a coordinator to talk to.
  const bool nics = cluster.nodes > 1 || with_coordinator;

  for (int node = 0; node < cluster.nodes; ++node) {
    std::vector<std::string> names;
    std::vector<simgrid::kernel::profile::Profile*> profiles;
    for (int local = 0; local < cluster.gpus_per_node; ++local) {
      const std::string name = "gpu-" + std::to_string(node * cluster.gpus_per_node + local);
      names.push_back(name);
      profiles.push_back(nullptr);
      for (const SpeedChange& change : cluster.speed_changes)
        if (change.node == node) profiles.back() = make_speed_profile("speed-" + name, change);
    }
    const auto hosts = add_node(root, "node-" + std::to_string(node), names, profiles,
                                peak * cluster.node_speed_factor[static_cast<std::size_t>(node)], cluster.intra_node,
                                nics ? &cluster.network.nic : nullptr);
    platform.gpus.insert(platform.gpus.end(), hosts.begin(), hosts.end());
  }
  if (with_coordinator) {
    // The coordinator executes the serial part as one nominal GPU would (the same unit as the single-GPU
    // reference, so Amdahl's law holds exactly with free communication).
    platform.coordinator =
        add_node(root, "coordinator", {"coordinator"}, {nullptr}, peak, cluster.intra_node, &cluster.network.nic)
            .front();
  }

  auto* baseline_zone = sg4::create_full_zone("baseline");
  baseline_zone->set_parent(root);
  platform.baseline = baseline_zone->create_host("baseline-gpu", peak);
  platform.baseline->seal();
  baseline_zone->seal();
  root->seal();
  return platform;
}

} // namespace partsim::engine
