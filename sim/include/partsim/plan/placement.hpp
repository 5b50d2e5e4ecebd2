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
  int context = 0; ///< position in the context-parallel group (0 without context parallelism)
};

/** Rank (= GPU) of a position under the strategy's placement (fastest axis first; the context axis right after the
 * tensor axis, as Megatron-Core and Llama 3 place it). */
int rank_of(const ModelParallel& mp, const ParallelCoordinates& at);
ParallelCoordinates coordinates_of(const ModelParallel& mp, int rank);

/** A rank's data-parallel rank counted over data x context (the ranks that hold the same weights: gradient
 * reduction, ZeRO shards and expert groups span them, as Megatron-Core cuts them). */
inline int data_rank(const ModelParallel& mp, const ParallelCoordinates& at) {
  return at.data * mp.context + at.context;
}

/** Layers of each virtual stage (pipeline x virtual_stages of them, virtual stage = chunk x pipeline + stage): the
 * explicit split, or an even one. */
std::vector<int> virtual_stage_layers(const ModelParallel& mp, std::int64_t layers);

} // namespace partsim
