// A checkpoint's writes simulated on SimGrid (engine-internal, docs/failures.md#checkpoints): every writer sends its
// part at once to the storage pool on the top switch, through its NIC and the network's uplinks, all writers sharing
// the pool's bandwidth. Run on an engine of its own, in a child process.
#pragma once

#include "partsim/input/scenario.hpp"
#include "partsim/report/reliability.hpp"

#include <vector>

namespace partsim::engine {

/** Seconds until the last part of `writes` is in the storage pool of `storage_bandwidth` (bytes/s), simulated in a
 * forked child. Throws std::runtime_error when the child fails. */
double simulate_checkpoint_write_in_child(const Scenario& scenario, const std::vector<CheckpointWrite>& writes,
                                          double storage_bandwidth);

} // namespace partsim::engine
