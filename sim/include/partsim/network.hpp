// The links of a cluster: GPU to GPU inside a node, and the network between nodes (topology, NICs).
#pragma once

#include <filesystem>
#include <string>

namespace partsim {

class JsonReader;

/** A point-to-point link: bandwidth per direction and one-way latency. */
struct LinkSpec {
  double bandwidth = 0.0; ///< bytes/s, each direction
  double latency = 0.0;   ///< s, one way, GPU to GPU
};

/** Network between nodes. `star`: every node has one NIC link to a non-blocking core switch. */
struct NetworkSpec {
  std::string topology = "star";
  LinkSpec nic; ///< per NIC: bandwidth each direction, one-way latency node to node
};

/** A link's bandwidth and latency: given directly, or from a profile in models/links (`"profile": "ib-ndr"`), whose
 * figures explicit keys override. `scope` is "intra_node" or "inter_node". Reads only its own keys. */
LinkSpec parse_link(JsonReader& reader, const std::filesystem::path& data_dir, const std::string& scope);

/** Parses and validates `/cluster/network` (every key; `finish`es the reader) for a cluster of `nodes` nodes of
 * `gpus_per_node` GPUs. */
NetworkSpec parse_network(JsonReader& reader, const std::filesystem::path& data_dir, int nodes, int gpus_per_node);

} // namespace partsim
