// Builds the SimGrid platform of a cluster: one host per GPU, intra-node links, NICs to a star network.
#pragma once

#include "partsim/scenario.hpp"

#include <vector>

namespace simgrid::s4u {
class Host;
}

namespace partsim::engine {

struct Platform {
  std::vector<simgrid::s4u::Host*> gpus;     ///< indexed by global GPU index (node * gpus_per_node + local)
  simgrid::s4u::Host* baseline = nullptr;    ///< isolated nominal GPU for the single-GPU reference run
  simgrid::s4u::Host* coordinator = nullptr; ///< dispatcher host (run-time balancing only)
};

/** Creates zones, hosts, links and routes under the engine's root. Call once, before actors exist. */
Platform build_platform(const ClusterSpec& cluster, const std::string& data_type, bool with_coordinator);

} // namespace partsim::engine
