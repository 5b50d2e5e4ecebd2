// Rank placement of a data x tensor x pipeline split: a rank's coordinates on each axis, and the layers of each
// (virtual) pipeline stage. Pure, no SimGrid.
#pragma once

#include "partsim/input/scenario.hpp"

#include <cstdint>
#include <vector>

namespace partsim {

/** A rank's position on each axis. */
struct ParallelCoordinates {
  int data = 0;
  int tensor = 0;
  int pipeline = 0;
};

/** Rank (= GPU) of a position under the strategy's placement (fastest axis first). */
int rank_of(const ModelParallel& mp, const ParallelCoordinates& at);
ParallelCoordinates coordinates_of(const ModelParallel& mp, int rank);

/** Layers of each virtual stage (pipeline x virtual_stages of them, virtual stage = chunk x pipeline + stage): the
 * explicit split, or an even one. */
std::vector<int> virtual_stage_layers(const ModelParallel& mp, std::int64_t layers);

} // namespace partsim
