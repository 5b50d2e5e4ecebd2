// Platform layout (see docs/topologies.md): one zone, "cluster", holding every host and link, whose routes are
// computed from each host's attachment instead of being stored, so building it is O(GPUs) in time and memory.
//   GPU a -> GPU b, same node:   [intra-a UP, intra-b DOWN]            latency split half/half: one hop = latency
//   GPU a -> GPU b, other node:  [nic(a) UP, uplinks.., ..downlinks, nic(b) DOWN]
//     star: no uplinks; fat_tree: the leaf (and pod) uplinks up to the first switch the two share;
//     rail: the two rails' uplinks to the spine when the NICs are on different rails, none on the same rail.
//   GPUDirect RDMA: a GPU reaches its NIC without crossing its intra-node link.
//   coordinator (run-time balancing, coordinated runs): a host with its own NIC on the top switch (core or spine).
//   baseline: a host with no links, never communicating.
// SimGrid's own zones do not fit: a star zone gives a host one way out for every destination (an intra-node link
// could not be left out of cross-node routes), a node zone has one gateway (a rail network needs one per GPU), and
// the fat-tree zone has one bandwidth and latency for every level and static per-destination uplinks.
#include "platform.hpp"

#include "partsim/common/error.hpp"

#include <simgrid/kernel/ProfileBuilder.hpp>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>

namespace sg4 = simgrid::s4u;
namespace sgr = simgrid::kernel::routing;

namespace partsim::engine {

namespace {

/** Both directions of a split-duplex link: up leaves the host (towards the core), down comes back. */
struct Duplex {
  sg4::Link* up = nullptr;
  sg4::Link* down = nullptr;
};

/** How a host is attached: its own links, and per level above its first switch, which switch and that switch's
 * uplink. Two hosts' routes climb until the first level whose switch they share. */
struct Endpoint {
  int node = -1;  ///< -1: not in a node (coordinator, baseline)
  Duplex intra;   ///< to the node's NVSwitch: set when the node has several GPUs
  Duplex nic;     ///< to the first switch: unset without a network
  int levels = 0; ///< uplink levels; 0 at the top switch (coordinator) or in a star
  std::array<int, kMaxUplinkLevels> group{};
  std::array<Duplex, kMaxUplinkLevels> uplink{};
};

/** The cluster's zone: routes computed on demand from the endpoints (SimGrid calls get_local_route per message). */
class FabricZone : public sgr::NetZoneImpl {
 public:
  explicit FabricZone(const std::string& name) : NetZoneImpl(name) {}

  /** Call once the endpoint's links are created: their kernel objects and latencies are looked up here once
   * (s4u::Link::get_impl is a dynamic_cast: half the cost of a route when done per message). */
  void set_endpoint(const sg4::Host* host, const Endpoint& e) {
    const auto id = static_cast<std::size_t>(host->get_netpoint()->id());
    if (endpoints_.size() <= id) endpoints_.resize(id + 1);
    Attached& a = endpoints_[id];
    a.node = e.node;
    a.intra = {hop(e.intra.up), hop(e.intra.down)};
    a.nic = {hop(e.nic.up), hop(e.nic.down)};
    a.levels = e.levels;
    a.group = e.group;
    for (std::size_t l = 0; l < kMaxUplinkLevels; ++l) a.uplink[l] = {hop(e.uplink[l].up), hop(e.uplink[l].down)};
  }
  void set_loopback(const sg4::Link* link) { loopback_ = hop(link); }

  void get_local_route(const sgr::NetPoint* src, const sgr::NetPoint* dst, sgr::Route* route,
                       double* latency) override {
    const auto add = [route, latency](const Hop& h) {
      route->link_list_.push_back(h.impl);
      if (latency != nullptr) *latency += h.latency;
    };
    if (src == dst) {
      add(loopback_);
      return;
    }
    const Attached& a = endpoints_.at(static_cast<std::size_t>(src->id()));
    const Attached& b = endpoints_.at(static_cast<std::size_t>(dst->id()));
    if (a.node >= 0 && a.node == b.node) {
      PARTSIM_CHECK(a.intra.up.impl != nullptr && b.intra.down.impl != nullptr)
          << "no intra-node link in " << get_name();
      add(a.intra.up);
      add(b.intra.down);
      return;
    }
    PARTSIM_CHECK(a.nic.up.impl != nullptr && b.nic.down.impl != nullptr)
        << "no network path from " << src->get_name() << " to " << dst->get_name();
    add(a.nic.up);
    std::array<const Hop*, kMaxUplinkLevels> down{};
    int downs = 0;
    for (int level = 0; level < std::max(a.levels, b.levels); ++level) {
      const auto l = static_cast<std::size_t>(level);
      if (level < a.levels && level < b.levels && a.group[l] == b.group[l]) break; // their common switch
      if (level < a.levels) add(a.uplink[l].up);
      if (level < b.levels) down[static_cast<std::size_t>(downs++)] = &b.uplink[l].down;
    }
    while (downs > 0) add(*down[static_cast<std::size_t>(--downs)]);
    add(b.nic.down);
  }

 private:
  /** One link of a route as SimGrid's route wants it. */
  struct Hop {
    simgrid::kernel::resource::StandardLinkImpl* impl = nullptr;
    double latency = 0.0;
  };
  struct HopPair {
    Hop up;
    Hop down;
  };
  /** An Endpoint with its links' kernel objects. */
  struct Attached {
    int node = -1;
    HopPair intra;
    HopPair nic;
    int levels = 0;
    std::array<int, kMaxUplinkLevels> group{};
    std::array<HopPair, kMaxUplinkLevels> uplink{};
  };
  static Hop hop(const sg4::Link* link) { return link == nullptr ? Hop{} : Hop{link->get_impl(), link->get_latency()}; }

  std::vector<Attached> endpoints_; ///< by netpoint id
  Hop loopback_;
};

/** A split-duplex link: each direction has `bandwidth`; `latency` is each direction's one-way latency. */
Duplex make_duplex(sg4::NetZone* zone, const std::string& name, double bandwidth, double latency) {
  auto* link = zone->create_split_duplex_link(name, bandwidth);
  link->set_latency(latency);
  link->seal();
  return {link->get_link_up(), link->get_link_down()};
}

/** A host's link to a switch: the one-way latency of a hop is shared by the two links of the path. */
Duplex make_hop_link(sg4::NetZone* zone, const std::string& name, const LinkSpec& spec) {
  return make_duplex(zone, name, spec.bandwidth, spec.latency / 2.0);
}

/** SimGrid speed profile of a speed change: "time factor" lines, repeating with its period. */
simgrid::kernel::profile::Profile* make_speed_profile(const std::string& name, const SpeedChange& change) {
  std::string text;
  for (const auto& [at, factor] : change.points) text += fmt::format("{} {}\n", at, factor);
  return simgrid::kernel::profile::ProfileBuilder::from_string(name, text, change.period);
}

/** The uplinks above the first switches: per level, one aggregated link per switch (leaf, pod or rail). Sizes are
 * those of a full switch, so a partial last leaf or pod has its full uplink bandwidth. */
struct Uplinks {
  int levels = 0;
  std::array<std::vector<Duplex>, kMaxUplinkLevels> links;
  std::array<bool, kMaxUplinkLevels> non_blocking{}; ///< per level: as much uplink as NIC bandwidth below it
};

Uplinks make_uplinks(sg4::NetZone* zone, const ClusterSpec& cluster) {
  const NetworkSpec& net = cluster.network;
  const double node_bandwidth = net.nics_per_node * net.nic.bandwidth; // into a node's first switches
  Uplinks up;
  if (net.topology == "fat_tree") {
    const FatTreeSpec& tree = net.fat_tree;
    const int leaves = (cluster.nodes + tree.nodes_per_leaf - 1) / tree.nodes_per_leaf;
    const double leaf_bandwidth = tree.nodes_per_leaf * node_bandwidth / tree.leaf_oversubscription;
    for (int leaf = 0; leaf < leaves; ++leaf)
      up.links[0].push_back(
          make_duplex(zone, "leaf-" + std::to_string(leaf) + "-up", leaf_bandwidth, tree.switch_latency));
    up.levels = 1;
    up.non_blocking[0] = tree.leaf_oversubscription <= 1.0;
    if (tree.levels == 3) {
      const int pods = (leaves + tree.leaves_per_pod - 1) / tree.leaves_per_pod;
      const double pod_bandwidth = tree.leaves_per_pod * leaf_bandwidth / tree.pod_oversubscription;
      for (int pod = 0; pod < pods; ++pod)
        up.links[1].push_back(
            make_duplex(zone, "pod-" + std::to_string(pod) + "-up", pod_bandwidth, tree.switch_latency));
      up.levels = 2;
      up.non_blocking[1] = tree.leaf_oversubscription * tree.pod_oversubscription <= 1.0;
    }
  } else if (net.topology == "rail") {
    // Rail k joins NIC k of every node; its uplink to the spine carries its downlink bandwidth / the ratio.
    const double rail_bandwidth = cluster.nodes * net.nic.bandwidth / net.rail.spine_oversubscription;
    for (int rail = 0; rail < net.nics_per_node; ++rail)
      up.links[0].push_back(
          make_duplex(zone, "rail-" + std::to_string(rail) + "-up", rail_bandwidth, net.rail.switch_latency));
    up.levels = 1;
    up.non_blocking[0] = net.rail.spine_oversubscription <= 1.0;
  }
  return up;
}

/** Which switch of each level GPU `local` of `node` hangs from. */
void attach(Endpoint& endpoint, const Uplinks& uplinks, const NetworkSpec& net, int node, int local_nic) {
  endpoint.levels = uplinks.levels;
  for (int level = 0; level < uplinks.levels; ++level) {
    int group = 0;
    if (net.topology == "rail")
      group = local_nic;
    else
      group = level == 0 ? net.leaf_of(node) : net.pod_of(node);
    endpoint.group[static_cast<std::size_t>(level)] = group;
    endpoint.uplink[static_cast<std::size_t>(level)] =
        uplinks.links[static_cast<std::size_t>(level)][static_cast<std::size_t>(group)];
  }
}

} // namespace

Platform build_platform(const ClusterSpec& cluster, const std::string& data_type, bool with_coordinator,
                        double stream_compute_share, double storage_bandwidth) {
  const NetworkSpec& net = cluster.network;
  const double peak = cluster.gpu.peak(data_type);
  const int g = cluster.gpus_per_node;
  Platform platform;
  platform.gpus_per_node = g;
  platform.nics_per_node = net.nics_per_node;
  platform.gpus.reserve(static_cast<std::size_t>(cluster.gpu_count()));

  // SimGrid owns its zones (the engine deletes the root): the first zone created is the root.
  auto* fabric = new FabricZone("cluster");
  sg4::NetZone* zone = fabric->get_iface();
  // A GPU sending to itself copies within its own memory.
  auto* loopback = zone->create_link("loopback", cluster.gpu.memory_bandwidth.value);
  loopback->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE);
  loopback->seal();
  fabric->set_loopback(loopback);

  // Nodes need NICs when there is more than one node, or a coordinator or a storage pool to talk to.
  const bool nics = cluster.nodes > 1 || with_coordinator || storage_bandwidth > 0.0;
  const Uplinks uplinks = nics ? make_uplinks(zone, cluster) : Uplinks{};
  for (std::size_t level = 0; level < static_cast<std::size_t>(uplinks.levels); ++level)
    if (uplinks.non_blocking[level])
      for (const Duplex& link : uplinks.links[level]) platform.never_saturated.insert({link.up, link.down});

  platform.speed_change.assign(static_cast<std::size_t>(cluster.nodes), nullptr);
  for (const SpeedChange& c : cluster.speed_changes) platform.speed_change.at(static_cast<std::size_t>(c.node)) = &c;
  std::vector<Duplex> node_nics(static_cast<std::size_t>(net.nics_per_node));
  for (int node = 0; node < cluster.nodes; ++node) {
    if (nics)
      for (int k = 0; k < net.nics_per_node; ++k)
        node_nics[static_cast<std::size_t>(k)] = make_hop_link(zone, fmt::format("nic-{}-{}", node, k), net.nic);
    const SpeedChange* change = platform.speed_change[static_cast<std::size_t>(node)];
    const double speed = peak * cluster.node_speed_factor[static_cast<std::size_t>(node)];
    for (int local = 0; local < g; ++local) {
      const std::string name = "gpu-" + std::to_string(node * g + local);
      auto* host = stream_compute_share < 1.0
                       ? zone->create_host(name, std::vector<double>{speed, speed * stream_compute_share})
                       : zone->create_host(name, speed);
      if (change != nullptr) // before seal(): SimGrid 3.32 ignores later profiles
        host->set_speed_profile(make_speed_profile("speed-" + name, *change));
      host->seal();
      Endpoint endpoint;
      endpoint.node = node;
      if (g > 1) endpoint.intra = make_hop_link(zone, "intra-" + name, cluster.intra_node);
      if (nics) {
        const int nic = net.nic_of(local, g);
        endpoint.nic = node_nics[static_cast<std::size_t>(nic)];
        attach(endpoint, uplinks, net, node, nic);
      }
      fabric->set_endpoint(host, endpoint);
      platform.gpus.push_back(host);
      Attachment attached;
      attached.levels = endpoint.levels;
      for (std::size_t l = 0; l < static_cast<std::size_t>(endpoint.levels); ++l) {
        attached.group[l] = endpoint.group[l];
        attached.uplink_bandwidth[l] = endpoint.uplink[l].up->get_bandwidth();
      }
      platform.attachments.push_back(attached);
    }
  }
  if (with_coordinator) {
    // The coordinator executes the serial part as one nominal GPU would (the same unit as the single-GPU
    // reference, so Amdahl's law holds exactly with free communication). Its NIC is on the top switch.
    platform.coordinator = zone->create_host("coordinator", peak);
    platform.coordinator->seal();
    Endpoint endpoint;
    endpoint.nic = make_hop_link(zone, "nic-coordinator", net.nic);
    fabric->set_endpoint(platform.coordinator, endpoint);
  }
  if (storage_bandwidth > 0.0) {
    // The storage pool (a parallel file system's servers, all writers sharing its bandwidth) on the top switch, like
    // the coordinator: its link has the storage bandwidth each way and a NIC's latency.
    platform.storage = zone->create_host("storage", peak);
    platform.storage->seal();
    Endpoint endpoint;
    LinkSpec link;
    link.bandwidth = storage_bandwidth;
    link.latency = net.nic.latency;
    endpoint.nic = make_hop_link(zone, "storage", link);
    fabric->set_endpoint(platform.storage, endpoint);
  }
  platform.baseline = zone->create_host("baseline-gpu", peak);
  platform.baseline->seal();
  fabric->set_endpoint(platform.baseline, Endpoint{});
  zone->seal();
  return platform;
}

} // namespace partsim::engine
