// Collectives: operations, algorithms and fidelity levels, with their alpha-beta closed forms and the bandwidth
// figures nccl-tests reports. Pure arithmetic, no SimGrid: the engine's implementations are checked against these.
#pragma once

#include <cstdint>
#include <string>

namespace partsim {

/** What a collective computes. Sizes follow nccl-tests: `bytes` is the buffer each rank holds (all-reduce,
 * broadcast), the input of each rank (reduce-scatter, all-to-all) or the output of each rank (all-gather). */
enum class CollectiveOp { AllReduce, ReduceScatter, AllGather, AllToAll, Broadcast };

/** How it is computed. `Ring`: n-1 (or 2(n-1)) neighbour steps; `Tree`: NCCL's double binary tree, pipelined;
 * `Hierarchical`: intra-node reduce-scatter, inter-node all-reduce on 1/g of the data, intra-node all-gather;
 * `Direct`: every rank sends to every other rank at once (all-to-all). */
enum class CollectiveAlgorithm { Ring, Tree, Hierarchical, Direct };

/** How faithfully the engine simulates it. `Steps`: every message of the algorithm; `Flows`: one flow per edge of the
 * algorithm for its whole duration plus the latency terms; `Analytic`: alpha-beta time, no network simulation. */
enum class Fidelity { Steps, Flows, Analytic };

/** What a collective belongs to, for the report's exposed communication by kind. */
enum class CommKind { Data, Tensor, Pipeline, Expert };

std::string to_string(CollectiveOp op);
std::string to_string(CollectiveAlgorithm algorithm);
std::string to_string(Fidelity fidelity);
std::string to_string(CommKind kind);

} // namespace partsim
