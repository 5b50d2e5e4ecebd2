// Rank placement of a data x tensor x pipeline split, and the layers of each (virtual) stage.
#include "partsim/plan/placement.hpp"

namespace partsim {

namespace {

int degree(const ModelParallel& mp, ParallelAxis axis) {
  return axis == ParallelAxis::Tensor ? mp.tensor : axis == ParallelAxis::Data ? mp.data : mp.pipeline;
}

int& coordinate(ParallelCoordinates& at, ParallelAxis axis) {
  return axis == ParallelAxis::Tensor ? at.tensor : axis == ParallelAxis::Data ? at.data : at.pipeline;
}

} // namespace

int rank_of(const ModelParallel& mp, const ParallelCoordinates& at) {
  ParallelCoordinates copy = at;
  int rank = 0;
  int stride = 1;
  for (ParallelAxis axis : mp.placement) {
    rank += coordinate(copy, axis) * stride;
    stride *= degree(mp, axis);
    if (axis == ParallelAxis::Tensor) {
      rank += at.context * stride;
      stride *= mp.context;
    }
  }
  return rank;
}

ParallelCoordinates coordinates_of(const ModelParallel& mp, int rank) {
  ParallelCoordinates at;
  for (ParallelAxis axis : mp.placement) {
    coordinate(at, axis) = rank % degree(mp, axis);
    rank /= degree(mp, axis);
    if (axis == ParallelAxis::Tensor) {
      at.context = rank % mp.context;
      rank /= mp.context;
    }
  }
  return at;
}

std::vector<int> virtual_stage_layers(const ModelParallel& mp, std::int64_t layers) {
  if (!mp.stage_layers.empty()) return mp.stage_layers;
  const int chunks = mp.pipeline * mp.virtual_stages;
  return std::vector<int>(static_cast<std::size_t>(chunks), static_cast<int>(layers / chunks));
}

} // namespace partsim
