// Platform layout (see docs/engine.md):
//   root: star zone "cluster"; each node is a full zone with its GPU hosts and a switch router (gateway).
//   GPU a -> GPU b in one node:  [intra-a UP, intra-b DOWN]          latency split half/half, so one hop = latency
//   GPU a (node i) -> GPU b (node j): [nic-i UP, nic-j DOWN]          GPUDirect: the NIC is reached without NVLink
//   The NIC links live in the node zones (GPU -> gateway is [nic UP], gateway -> GPU is [nic DOWN]), so the
//   root star zone only joins gateways, with empty routes.
//   baseline: an extra host in its own zone, never communicating.
#include "platform.hpp"

#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

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
} // namespace

Platform build_platform(const ClusterSpec& cluster, const std::string& data_type) {
  Platform platform;
  const double peak = cluster.gpu.peak(data_type);
  auto* root = sg4::create_star_zone("cluster");
  platform.gpus.reserve(static_cast<std::size_t>(cluster.gpu_count()));

  for (int node = 0; node < cluster.nodes; ++node) {
    const std::string node_name = "node-" + std::to_string(node);
    auto* zone = sg4::create_full_zone(node_name);
    zone->set_parent(root);
    auto* router = zone->create_router(node_name + "-switch");
    const double speed = peak * cluster.node_speed_factor[static_cast<std::size_t>(node)];

    std::vector<sg4::Host*> hosts;
    std::vector<sg4::Link*> links;
    for (int local = 0; local < cluster.gpus_per_node; ++local) {
      const int index = node * cluster.gpus_per_node + local;
      auto* host = zone->create_host("gpu-" + std::to_string(index), speed);
      host->seal();
      hosts.push_back(host);
      platform.gpus.push_back(host);
      if (cluster.gpus_per_node > 1)
        links.push_back(make_link(zone, "intra-" + std::to_string(index), cluster.intra_node));
    }
    sg4::Link* nic = cluster.nodes > 1 ? make_link(zone, "nic-" + std::to_string(node), cluster.network.nic) : nullptr;
    for (std::size_t a = 0; a < hosts.size(); ++a) {
      if (nic != nullptr) {
        zone->add_route(hosts[a]->get_netpoint(), router, nullptr, nullptr, {{nic, sg4::LinkInRoute::Direction::UP}},
                        false);
        zone->add_route(router, hosts[a]->get_netpoint(), nullptr, nullptr, {{nic, sg4::LinkInRoute::Direction::DOWN}},
                        false);
      }
      for (std::size_t b = 0; b < hosts.size(); ++b)
        if (a != b)
          zone->add_route(hosts[a]->get_netpoint(), hosts[b]->get_netpoint(), nullptr, nullptr,
                          {{links[a], sg4::LinkInRoute::Direction::UP}, {links[b], sg4::LinkInRoute::Direction::DOWN}},
                          false);
    }
    zone->seal();
    if (nic != nullptr) {
      root->add_route(zone->get_netpoint(), nullptr, router, nullptr, {}, false);
      root->add_route(nullptr, zone->get_netpoint(), nullptr, router, {}, false);
    }
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
