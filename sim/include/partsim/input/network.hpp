// The links of a cluster: GPU to GPU inside a node, and the network between nodes (topology, NICs).
#pragma once

#include <filesystem>
#include <string>

namespace partsim {

class JsonReader;

/** A point-to-point link: bandwidth per direction and one-way latency. */
struct LinkSpec {
  /** bytes/s, each direction, that data moves at: the line rate x the efficiency. What the platform and the closed
   * forms use. */
  double bandwidth = 0.0;
  double line_rate = 0.0;  ///< bytes/s, each direction: the link's signalling rate (the profile's or the scenario's)
  double efficiency = 1.0; ///< fraction of the line rate that carries data (the profile's, or the scenario's)
  double latency = 0.0;    ///< s, one way, GPU to GPU
  /** Intra-node only: NVLink SHARP's fraction of `bandwidth` (0: the switch has none) and the latency of one NVLS
   * all-reduce (the profile's `nvls`, or the scenario's). */
  double nvls_efficiency = 0.0;
  double nvls_latency = 0.0;
  /** Intra-node only: NVLS-tree's most bus bandwidth per head on two nodes and on three or more (bytes/s; the
   * profile's `nvls.tree_head_bandwidth`); 0: no limit. */
  double nvls_tree_head_two_nodes = 0.0;
  double nvls_tree_head_more_nodes = 0.0;
  /** Intra-node only: the most bus bandwidth NCCL's LL protocol reaches inside a node (bytes/s; the profile's
   * `ll_max_bandwidth`, or the scenario's); 0: no limit beyond half of `bandwidth`. */
  double ll_max_bandwidth = 0.0;
  /** Intra-node only: the links are NVLink (the profile's `transport`, or the scenario's): NCCL's NVLink latencies
   * and its LL128 protocol; else PCIe. */
  bool nvlink = false;
  /** Inter-node only: the profile's switch (LinkProfile::switch_profile), empty when none or no profile. */
  std::string switch_profile;
};

/** A two- or three-level fat-tree: nodes on leaf switches, leaves joined by a spine (2 levels), or leaves grouped in
 * pods whose switches are joined by a core (3 levels). A leaf's (pod's) uplinks carry its downlink bandwidth divided
 * by the oversubscription ratio; the spine (core) itself is non-blocking. */
struct FatTreeSpec {
  int levels = 2;
  int nodes_per_leaf = 1;             ///< the last leaf may be partial; uplinks are sized for a full leaf
  int leaves_per_pod = 1;             ///< 3 levels only; the last pod may be partial
  double leaf_oversubscription = 1.0; ///< >= 1: leaf downlink bandwidth / leaf uplink bandwidth
  double pod_oversubscription = 1.0;  ///< >= 1, 3 levels only: pod downlink / pod uplink bandwidth
  double switch_latency = 0.0;        ///< s, one way, added by each uplink crossed (each switch past the first)
};

/** A rail-optimised network (DGX SuperPOD): NIC k of every node attaches to rail switch k, so GPUs of the same local
 * index talk without leaving their rail; rails are joined by a spine for cross-rail traffic. */
struct RailSpec {
  double spine_oversubscription = 1.0; ///< >= 1: a rail's downlink bandwidth / its uplink bandwidth to the spine
  double switch_latency = 0.0;         ///< s, one way, added by each rail uplink crossed
};

/** Network between nodes. `topology` is "star" (every NIC on one non-blocking core switch), "fat_tree" or "rail". */
struct NetworkSpec {
  std::string topology = "star";
  LinkSpec nic;          ///< per NIC: bandwidth each direction, one-way latency node to node through one switch
  int nics_per_node = 1; ///< divides gpus_per_node; GPU i of a node uses NIC i * nics_per_node / gpus_per_node
  FatTreeSpec fat_tree;  ///< topology "fat_tree"
  RailSpec rail;         ///< topology "rail" (then nics_per_node == gpus_per_node: one rail per local GPU index)

  /** The NIC (0 .. nics_per_node - 1) that local GPU `local_gpu` of a node of `gpus_per_node` GPUs sends through. */
  int nic_of(int local_gpu, int gpus_per_node) const { return local_gpu * nics_per_node / gpus_per_node; }
  /** fat_tree: the leaf switch of `node`. */
  int leaf_of(int node) const { return node / fat_tree.nodes_per_leaf; }
  /** fat_tree with 3 levels: the pod of `node`. */
  int pod_of(int node) const { return leaf_of(node) / fat_tree.leaves_per_pod; }
};

/** A link's bandwidth and latency: given directly, or from a profile in models/links (`"profile": "ib-ndr"`), whose
 * figures explicit keys override. `scope` is "intra_node" or "inter_node". Reads only its own keys. */
LinkSpec parse_link(JsonReader& reader, const std::filesystem::path& data_dir, const std::string& scope);

/** Parses and validates `/cluster/network` (every key; `finish`es the reader) for a cluster of `nodes` nodes of
 * `gpus_per_node` GPUs. */
NetworkSpec parse_network(JsonReader& reader, const std::filesystem::path& data_dir, int nodes, int gpus_per_node);

} // namespace partsim
