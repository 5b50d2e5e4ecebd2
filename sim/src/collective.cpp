// Names of collective operations, algorithms, fidelity levels and communication kinds.
#include "partsim/collective.hpp"

namespace partsim {

std::string to_string(CollectiveOp op) {
  switch (op) {
  case CollectiveOp::AllReduce:
    return "all_reduce";
  case CollectiveOp::ReduceScatter:
    return "reduce_scatter";
  case CollectiveOp::AllGather:
    return "all_gather";
  case CollectiveOp::AllToAll:
    return "all_to_all";
  case CollectiveOp::Broadcast:
    return "broadcast";
  }
  return "?";
}

std::string to_string(CollectiveAlgorithm algorithm) {
  switch (algorithm) {
  case CollectiveAlgorithm::Ring:
    return "ring";
  case CollectiveAlgorithm::Tree:
    return "tree";
  case CollectiveAlgorithm::Hierarchical:
    return "hierarchical";
  case CollectiveAlgorithm::Direct:
    return "direct";
  }
  return "?";
}

std::string to_string(Fidelity fidelity) {
  switch (fidelity) {
  case Fidelity::Steps:
    return "steps";
  case Fidelity::Flows:
    return "flows";
  case Fidelity::Analytic:
    return "analytic";
  }
  return "?";
}

std::string to_string(CommKind kind) {
  switch (kind) {
  case CommKind::Data:
    return "data";
  case CommKind::Tensor:
    return "tensor";
  case CommKind::Pipeline:
    return "pipeline";
  case CommKind::Expert:
    return "expert";
  }
  return "?";
}

} // namespace partsim
