// Link profiles: interconnect figures (NVLink, NVSwitch, PCIe, InfiniBand, RoCE) with their provenance, loaded by name
// from models/links.
#pragma once

#include "partsim/input/hardware.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace partsim {

class JsonReader;

/** One interconnect technology as the simulator sees it. */
struct LinkProfile {
  std::string name;
  std::string description;
  std::string scope;         ///< "intra_node" (GPU to GPU inside a node) or "inter_node" (node to node)
  std::string bandwidth_per; ///< what the bandwidth belongs to: "gpu" (all links of one GPU), "port", "switch"
  Figure bandwidth;          ///< bytes/s, per direction
  Figure latency;            ///< s, one way
  /** The fraction of `bandwidth` that transfers driven by the GPU's SMs (NCCL's kernels) carry as data: NVLink moves
   * 128-byte payloads in packets with headers, so it carries less than its line rate. Absent: 1. */
  std::optional<Figure> efficiency;
  /** NVLink SHARP (intra-node links to an NVSwitch that reduces and multicasts, Hopper and later): the fraction of the
   * effective bandwidth its all-reduce reaches, and the latency of one. Absent: the switch has none. */
  struct Nvls {
    Figure efficiency;
    Figure latency;
    /** NVLS-tree across nodes: the most bus bandwidth one head (a member on its NIC) reaches on two nodes and on
     * three or more (NCCL's perChMaxNVLSTreeBw). Absent: no limit beyond the links'. */
    std::optional<Figure> tree_head_two_nodes;
    std::optional<Figure> tree_head_more_nodes;
  };
  std::optional<Nvls> nvls;
  /** Intra-node links: the most bus bandwidth NCCL's LL protocol reaches between the GPUs of one node, a limit of its
   * kernels (8-byte stores polled by the receiving SMs) that depends on the GPU generation (NCCL's `llMaxBws`).
   * Absent: none beyond half the link's bandwidth. */
  std::optional<Figure> ll_max_bandwidth;
  /** Intra-node links: what carries the transfers, "nvlink" or "pcie" (NCCL's NVLink or PCI hardware class: its
   * per-step latencies, and LL128 only over NVLink). Empty on inter-node links. */
  std::string transport;
  /** A NIC's switch: the switch profile (bandwidth per switch) whose latency a fat-tree or rail network of these
   * NICs adds per switch crossed, unless the scenario gives its own. Empty: none. */
  std::string switch_profile;
};

/** Current version of the link profile format. */
inline constexpr int kLinkSchemaVersion = 1;

/** Reads a link profile file's root object. */
LinkProfile parse_link_profile(JsonReader& reader);

/** Loads `DIR/models/links/NAME.json`. @throws InputError naming `source`/`pointer` when absent, listing the names. */
LinkProfile load_link_profile(const std::filesystem::path& data_dir, const std::string& name, const std::string& source,
                              const std::string& pointer);

/** Names of the link profiles under `DIR/models/links`, sorted. */
std::vector<std::string> list_link_profiles(const std::filesystem::path& data_dir);

/** Serialises a link profile (for reports). */
nlohmann::json to_json(const LinkProfile& link);

} // namespace partsim
