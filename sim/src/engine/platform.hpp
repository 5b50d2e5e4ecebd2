// Builds the SimGrid platform of a cluster: one host per GPU, intra-node links, NICs and the network between nodes
// (star, fat-tree or rail; see docs/topologies.md).
#pragma once

#include "partsim/input/scenario.hpp"
#include "partsim/report/run_result.hpp"

#include <array>
#include <cstddef>
#include <unordered_set>
#include <vector>

namespace simgrid::s4u {
class Engine;
class Host;
class Link;
} // namespace simgrid::s4u

namespace partsim::engine {

/** Uplink levels above a GPU's first switch: leaf and pod uplinks of a 3-level fat-tree at most. */
constexpr int kMaxUplinkLevels = 2;

/** Where a GPU hangs in the network: at each uplink level, which switch (leaf, pod or rail) and that switch's uplink
 * bandwidth (each direction). No levels in a star or a single node. */
struct Attachment {
  int levels = 0;
  std::array<int, kMaxUplinkLevels> group{};
  std::array<double, kMaxUplinkLevels> uplink_bandwidth{};
};

struct Platform {
  std::vector<Attachment> attachments;          ///< by global GPU index
  std::vector<const SpeedChange*> speed_change; ///< by node: its speed change over time (at most one), or null
  std::vector<simgrid::s4u::Host*> gpus;        ///< indexed by global GPU index (node * gpus_per_node + local)
  simgrid::s4u::Host* baseline = nullptr;       ///< isolated nominal GPU for the single-GPU reference run
  simgrid::s4u::Host* coordinator = nullptr;    ///< dispatcher host (run-time balancing only)
  simgrid::s4u::Host* storage = nullptr;        ///< the checkpoints' storage pool (its own simulation only)
  int gpus_per_node = 1;
  int nics_per_node = 1;
  /** Links no traffic can saturate: a non-blocking uplink (leaf, pod or rail, each direction), whose bandwidth is at
   * least the sum of the NIC links below it. Every flow through it also crosses one of those NIC links, in the same
   * direction and with the same share, so the flows' rates fit in it whatever they are: it adds latency but never
   * limits a rate (max-min sharing gives the same rates with or without it). Folding lets replicas share them. */
  std::unordered_set<const simgrid::s4u::Link*> never_saturated;

  /** The node of global GPU `gpu`. */
  int node_of(int gpu) const { return gpu / gpus_per_node; }
  /** The global NIC index (node * nics_per_node + local NIC) that global GPU `gpu` sends through; in a rail network
   * also its rail is `nic_of(gpu) % nics_per_node`. */
  int nic_of(int gpu) const {
    return node_of(gpu) * nics_per_node + (gpu % gpus_per_node) * nics_per_node / gpus_per_node;
  }
};

/** Sets SimGrid's network model as the scenario asks (CM02 without cross-traffic or TCP window, for RDMA fabrics; or
 * SimGrid's TCP-calibrated LV08) and says which, for the report. Call before the platform is built; the training
 * and the serving engines share it. */
NetworkConfig configure_network(NetworkModel model);

/** A new SimGrid engine, never freed (each engine's caller explains why): built with AddressSanitizer, its actors
 * run on threads (see configure_contexts), which only the engine's command line can choose. */
simgrid::s4u::Engine& new_engine(const char* name);

/** Keeps `object` reachable until the process exits: a run's state left on the heap on purpose because daemon actors
 * still hold it when the run ends (SimGrid tears them down at exit), as SimGrid keeps its engine, so that
 * LeakSanitizer does not count it as lost. One run per process (one engine per process). */
void keep_until_exit(const void* object);

/** SimGrid's actor contexts for a run of `actors` actors: stacks of 128 KiB (the actors run flat loops; small stacks
 * keep thousands of them cache-friendly), without guard pages above 8,192 actors (a guard page costs a second memory
 * mapping, and 16,384 ranks with their communication streams would pass Linux's default vm.max_map_count of 65,536,
 * where SimGrid aborts). Built with AddressSanitizer, the actors run on threads with their default stacks instead:
 * ASan cannot follow SimGrid's swapped stacks and reports a false stack-buffer-overflow when an exception leaves an
 * actor (google/sanitizers issue 189); new_engine starts such an engine. Call before the platform is built. */
void configure_contexts(std::size_t actors);

/** Creates zones, hosts, links and routes under the engine's root. Call once, before actors exist. */
/** `stream_compute_share` < 1: each GPU host gets a second power state at that fraction of its speed, the one it runs
 * at while a collective of its communication stream holds some of its SMs (Plan::stream_compute_share). */
/** `storage_bandwidth` > 0: a storage pool host on the top switch whose one link (each direction) has that bandwidth,
 * all writers sharing it (a checkpoint's writes, checkpoint_write.hpp). */
Platform build_platform(const ClusterSpec& cluster, const std::string& data_type, bool with_coordinator,
                        double stream_compute_share = 1.0, double storage_bandwidth = 0.0);

} // namespace partsim::engine
