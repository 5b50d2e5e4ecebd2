// Parsing of the scenario's `/reliability` (input/reliability.hpp).
#include "partsim/input/reliability.hpp"

#include "partsim/input/energy_cost.hpp"
#include "partsim/input/json_reader.hpp"
#include "partsim/input/scenario.hpp"
#include "partsim/input/scenario_schema.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace partsim {

namespace {

constexpr double kSecondsPerHour = 3600.0;

/** Records `key` of this object as defaulted when the scenario does not give it. */
void note_default(JsonReader& reader, std::string_view key, std::vector<std::string>& defaulted) {
  if (!reader.has(key)) defaulted.push_back(reader.pointer() + "/" + std::string(key));
}

/** An empty object read as `pointer`, so that an absent sub-section takes every default from the schema. */
JsonReader section(JsonReader& parent, const char* key) {
  if (parent.has(key)) return parent.child(key);
  static const nlohmann::json kEmpty = nlohmann::json::object();
  JsonReader empty(kEmpty, parent.source(), parent.pointer() + "/" + key);
  empty.use_schema(scenario_schema());
  return empty;
}

void parse_failures(JsonReader reader, const ClusterSpec& cluster, ReliabilitySpec& r) {
  r.distribution = reader.enum_choice_or("distribution", FailureDistribution::Exponential);
  r.weibull_shape = reader.number("weibull_shape");
  if (r.distribution == FailureDistribution::Exponential && reader.has("weibull_shape") && r.weibull_shape != 1.0)
    throw InputError(reader.source(), reader.pointer() + "/weibull_shape",
                     "a Weibull shape other than 1 needs \"distribution\": \"weibull\"");
  const std::int64_t gpus = cluster.gpu_count();
  const std::int64_t nodes = cluster.nodes;
  const std::int64_t nics = cluster.nodes > 1 ? nodes * cluster.network.nics_per_node : 0;
  const std::pair<const char*, std::pair<FailureComponent, std::int64_t>> kinds[] = {
      {"gpu_mtbf_hours", {FailureComponent::Gpu, gpus}},
      {"nic_mtbf_hours", {FailureComponent::Nic, nics}},
      {"switch_mtbf_hours", {FailureComponent::Switch, topology_switches(cluster)}},
      {"host_mtbf_hours", {FailureComponent::Host, nodes}},
  };
  for (const auto& [key, kind] : kinds) {
    const double hours = reader.number(key);
    if (hours > 0.0 && kind.second > 0)
      r.components.push_back(ComponentFailures{kind.first, kind.second, hours * kSecondsPerHour});
  }
  if (auto times = reader.optional_child("times")) {
    double previous = -1.0;
    for (const JsonReader& item : times->elements(0, 1'000'000)) {
      const double t = item.as_quantity(Dimension::Time, Bounds::non_negative(1e9));
      if (t <= previous)
        throw item.error(fmt::format("expected failure times in increasing order; {:g} s follows {:g} s", t, previous));
      r.failure_times.push_back(t);
      previous = t;
    }
  }
  reader.finish();
}

void parse_recovery(JsonReader reader, ReliabilitySpec& r) {
  for (const char* key : {"detection_time", "restart_time"}) note_default(reader, key, r.defaulted);
  r.policy = reader.enum_choice_or("policy", RecoveryPolicy::Restart);
  note_default(reader, r.policy == RecoveryPolicy::Spare ? "spare_delay" : "repair_time", r.defaulted);
  r.detection_time = reader.quantity("detection_time");
  r.restart_time = reader.quantity("restart_time");
  r.repair_time = reader.quantity("repair_time");
  r.spare_delay = reader.quantity("spare_delay");
  r.min_replicas = reader.integer("min_replicas");
  reader.finish();
}

void parse_checkpoint(JsonReader reader, ReliabilitySpec& r) {
  if (reader.has("interval")) {
    const JsonReader interval = reader.child("interval");
    if (!(interval.value().is_string() && interval.as_string() == "auto"))
      r.interval = interval.as_quantity(Dimension::Time, Bounds::positive(1e9));
  }
  if (reader.has("interval_iterations")) {
    if (r.interval)
      throw InputError(reader.source(), reader.pointer() + "/interval_iterations",
                       "give interval or interval_iterations, not both");
    r.interval_iterations = reader.integer("interval_iterations");
  }
  if (reader.has("size")) r.checkpoint_bytes = reader.quantity("size");
  r.mode = reader.enum_choice_or("mode", CheckpointMode::Sync);
  note_default(reader, "storage_bandwidth", r.defaulted);
  r.write_bandwidth = reader.quantity("storage_bandwidth");
  r.read_bandwidth = reader.quantity_or("storage_read_bandwidth", r.write_bandwidth);
  r.bandwidth_source = reader.string("storage_source");
  if (r.mode == CheckpointMode::Async) note_default(reader, "host_copy_bandwidth", r.defaulted);
  r.host_copy_bandwidth = reader.quantity("host_copy_bandwidth");
  reader.finish();
}

int fat_tree_leaves(const ClusterSpec& cluster) {
  return (cluster.nodes + cluster.network.fat_tree.nodes_per_leaf - 1) / cluster.network.fat_tree.nodes_per_leaf;
}

/** The switches of `level` an injected failure can name: first, star 1, fat_tree its leaves, rail one per NIC of a
 * node; pod, a 3-level fat tree's pods; top, 1 above the first switches (a fat tree's core, a rail network's spine);
 * none in one node. */
std::int64_t injectable_switches(const ClusterSpec& cluster, SwitchLevel level) {
  const NetworkSpec& net = cluster.network;
  if (cluster.nodes <= 1) return 0;
  const bool fat_tree = net.topology == "fat_tree";
  switch (level) {
  case SwitchLevel::First:
    if (fat_tree) return fat_tree_leaves(cluster);
    return net.topology == "rail" ? net.nics_per_node : 1;
  case SwitchLevel::Pod:
    if (!fat_tree || net.fat_tree.levels != 3) return 0;
    return (fat_tree_leaves(cluster) + net.fat_tree.leaves_per_pod - 1) / net.fat_tree.leaves_per_pod;
  case SwitchLevel::Top:
    return fat_tree || net.topology == "rail" ? 1 : 0;
  }
  return 0;
}

/** A switch's failure: the NIC links below a first switch and its uplink, or the uplinks below a pod or top switch
 * (every GPU and NIC running; the engine turns the links off). */
void fail_switch(const ClusterSpec& cluster, int index, SwitchLevel level, FailureInjection& f) {
  const NetworkSpec& net = cluster.network;
  const bool fat_tree = net.topology == "fat_tree";
  if (level == SwitchLevel::Pod) { // a pod's aggregation: its leaves' uplinks and its own
    const int per_pod = net.fat_tree.leaves_per_pod;
    const int first = index * per_pod;
    const int last = std::min(fat_tree_leaves(cluster), first + per_pod) - 1;
    for (int leaf = first; leaf <= last; ++leaf) f.leaf_uplinks.push_back(leaf);
    f.pod_uplinks.push_back(index);
    f.what = fmt::format("pod switch {} (leaves {} to {}, nodes {} to {})", index, first, last,
                         first * net.fat_tree.nodes_per_leaf,
                         std::min(cluster.nodes, (last + 1) * net.fat_tree.nodes_per_leaf) - 1);
  } else if (level == SwitchLevel::Top) { // every uplink into it
    if (fat_tree && net.fat_tree.levels == 3) {
      const auto pods = static_cast<int>(injectable_switches(cluster, SwitchLevel::Pod));
      for (int pod = 0; pod < pods; ++pod) f.pod_uplinks.push_back(pod);
      f.what = fmt::format("the core switch (the uplinks of the {} pods)", pods);
    } else if (fat_tree) {
      for (int leaf = 0; leaf < fat_tree_leaves(cluster); ++leaf) f.leaf_uplinks.push_back(leaf);
      f.what = fmt::format("the core switch (the uplinks of the {} leaves)", fat_tree_leaves(cluster));
    } else {
      for (int rail = 0; rail < net.nics_per_node; ++rail) f.rail_uplinks.push_back(rail);
      f.what = fmt::format("the spine (the uplinks of the {} rails)", net.nics_per_node);
    }
  } else if (fat_tree) {
    const int first = index * net.fat_tree.nodes_per_leaf;
    const int last = std::min(cluster.nodes, first + net.fat_tree.nodes_per_leaf) - 1;
    for (int node = first; node <= last; ++node)
      for (int k = 0; k < net.nics_per_node; ++k) f.nics.emplace_back(node, k);
    f.leaf_uplinks.push_back(index);
    f.what = fmt::format("leaf switch {} (nodes {} to {})", index, first, last);
  } else if (net.topology == "rail") {
    for (int node = 0; node < cluster.nodes; ++node) f.nics.emplace_back(node, index);
    f.rail_uplinks.push_back(index);
    f.what = fmt::format("rail switch {} (NIC {} of every node)", index, index);
  } else {
    for (int node = 0; node < cluster.nodes; ++node)
      for (int k = 0; k < net.nics_per_node; ++k) f.nics.emplace_back(node, k);
    f.what = "the network switch (every NIC)";
  }
}

void parse_inject(JsonReader reader, const ClusterSpec& cluster, ReliabilitySpec& r) {
  FailureInjection f;
  // Each key's own range first (the schema's), then the choice between them.
  const std::int64_t gpu = reader.has("gpu") ? reader.integer("gpu") : -1;
  const std::int64_t node = reader.has("node") ? reader.integer("node") : -1;
  const std::int64_t nic = reader.has("nic") ? reader.integer("nic") : -1;
  const std::int64_t sw = reader.has("switch") ? reader.integer("switch") : -1;
  const SwitchLevel level = reader.enum_choice_or("level", SwitchLevel::First);
  f.at = reader.quantity("at");
  int given = 0;
  for (const char* key : {"gpu", "node", "nic", "switch"}) given += reader.has(key) ? 1 : 0;
  if (given != 1)
    throw InputError(reader.source(), reader.pointer(),
                     "expected one of \"gpu\", \"node\", \"nic\" or \"switch\": what fails");
  if (reader.has("level") && sw < 0)
    throw InputError(reader.source(), reader.pointer() + "/level", "a level names a switch's; expected it with switch");
  if (sw >= 0) {
    const std::int64_t switches = injectable_switches(cluster, level);
    if (switches == 0 && level != SwitchLevel::First)
      throw InputError(reader.source(), reader.pointer() + "/level",
                       fmt::format("a {} network of {} node(s) has no {} switch; expected {}", cluster.network.topology,
                                   cluster.nodes, level == SwitchLevel::Pod ? "pod" : "top",
                                   level == SwitchLevel::Pod ? "first, or top on a fat tree or rail network"
                                                             : "first (a star's one switch is its first)"));
    if (sw >= switches)
      throw InputError(reader.source(), reader.pointer() + "/switch",
                       fmt::format("expected a switch index below the {} {} switches a failure can name on this "
                                   "cluster (first: star 1, fat_tree its leaves, rail one per NIC of a node; pod: a "
                                   "3-level fat tree's pods; top: 1; none in one node), got {}",
                                   switches, to_string(level), sw));
    fail_switch(cluster, static_cast<int>(sw), level, f);
  } else if (nic >= 0) {
    const std::int64_t nics = cluster.nodes > 1 ? cluster.nodes * cluster.network.nics_per_node : 0;
    if (nic >= nics)
      throw InputError(reader.source(), reader.pointer() + "/nic",
                       fmt::format("expected a NIC index below the cluster's {} NICs (nodes x nics_per_node; none in "
                                   "one node), got {}",
                                   nics, nic));
    const auto per_node = static_cast<std::int64_t>(cluster.network.nics_per_node);
    f.nics.emplace_back(static_cast<int>(nic / per_node), static_cast<int>(nic % per_node));
    f.what = fmt::format("NIC {} of node {}", f.nics.front().second, f.nics.front().first);
  } else if (gpu >= 0) {
    if (gpu >= cluster.gpu_count())
      throw InputError(
          reader.source(), reader.pointer() + "/gpu",
          fmt::format("expected a GPU index below the cluster's {} GPUs, got {}", cluster.gpu_count(), gpu));
    f.gpus.push_back(static_cast<int>(gpu));
    f.what = fmt::format("GPU {}", gpu);
  } else {
    if (node >= cluster.nodes)
      throw InputError(reader.source(), reader.pointer() + "/node",
                       fmt::format("expected a node index below the cluster's {} nodes, got {}", cluster.nodes, node));
    const auto g = static_cast<int>(cluster.gpus_per_node);
    for (int i = 0; i < g; ++i) f.gpus.push_back(static_cast<int>(node) * g + i);
    f.what = fmt::format("node {} (GPUs {} to {})", node, f.gpus.front(), f.gpus.back());
  }
  r.inject = f;
  reader.finish();
}

} // namespace

ReliabilitySpec parse_reliability(JsonReader reader, const ClusterSpec& cluster) {
  ReliabilitySpec r;
  reader.expect_object();
  if (reader.has("iterations")) r.iterations = reader.integer("iterations");
  parse_failures(section(reader, "failures"), cluster, r);
  parse_recovery(section(reader, "recovery"), r);
  parse_checkpoint(section(reader, "checkpoint"), r);
  if (reader.has("inject")) parse_inject(reader.child("inject"), cluster, r);
  if (!r.interval && !r.interval_iterations && r.components.empty() && !r.failure_times.empty())
    throw InputError(reader.source(), reader.pointer() + "/checkpoint/interval",
                     "an \"auto\" interval needs failure rates (an MTBF); with listed failure times only, give "
                     "interval or interval_iterations");
  reader.finish();
  return r;
}

} // namespace partsim
