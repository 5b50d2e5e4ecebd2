// Plan: what every rank does in one iteration, as a program of steps, independent of SimGrid.
#pragma once

#include "partsim/input/scenario.hpp"
#include "partsim/model/collective_cost.hpp"
#include "partsim/model/expert_routing.hpp"
#include "partsim/model/training.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace partsim {

/** Run a kernel on the rank's GPU. `amount` is in flop at the GPU's nominal peak: the roofline time
 * max(flop / peak, bytes / memory bandwidth) times the peak, so a slower node simply runs it longer. */
struct ComputeStep {
  double amount = 0.0;
  std::uint64_t samples = 0; ///< samples this step processes (for throughput and the report)
  std::uint32_t label = 0;   ///< index into Plan::labels ("F mb3"), 0: none
};

/** A collective over the ranks of `group` (see collective.hpp for sizes and algorithms). On stream 0 the rank
 * blocks until it is done; on stream 1 it is queued on the rank's communication stream and overlaps what follows
 * (as NCCL runs on its own CUDA stream) until a StreamSyncStep. Collectives of one stream run in order. */
struct CollectiveStep {
  int group = 0;
  CollectiveOp op = CollectiveOp::AllReduce;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Ring;
  Fidelity fidelity = Fidelity::Steps;
  CommKind kind = CommKind::Data;
  std::uint64_t bytes = 0;
  int root = 0;                                             ///< broadcast: the root's position in the group
  std::int8_t stream = 0;                                   ///< 0: blocking; 1: the communication stream
  CollectiveProtocol protocol = CollectiveProtocol::Simple; ///< NCCL's protocol (the choice's, or `auto`'s)
  /** Rings of a ring across nodes as the scenario asks (0: one per NIC, ring_channels); at most 64. */
  std::int16_t channels = 0;
};
// A production run holds millions of steps (a 3072-GPU Megatron 1T plan: ~15,000 per rank): keep them small.
static_assert(sizeof(CollectiveStep) <= 24);

/** Blocks until the rank's communication stream has at most `pending` collectives queued or running (0: it has
 * finished every one queued on it): the exposed part of the overlapped communication. */
struct StreamSyncStep {
  std::uint32_t pending = 0;
};

/** Sends `bytes` to rank `peer` on `channel` without waiting for the transfer (an activation or a gradient between
 * pipeline stages). Transfers on one (sender, receiver, channel) arrive in the order they were sent. */
struct SendStep {
  int peer = 0;
  std::uint64_t bytes = 0;
  int channel = 0; ///< 0: forward activations, 1: backward gradients
  CommKind kind = CommKind::Pipeline;
};

/** Blocks until the next transfer from rank `peer` on `channel` has arrived: waiting for the peer to send is Wait
 * (the pipeline bubble), the transfer itself Communication. */
struct RecvStep {
  int peer = 0;
  int channel = 0;
  CommKind kind = CommKind::Pipeline;
};

using Step = std::variant<ComputeStep, CollectiveStep, StreamSyncStep, SendStep, RecvStep>;

/** One rank: the GPU it runs on and its program for one iteration. */
struct RankProgram {
  int gpu = 0; ///< global GPU index: node * gpus_per_node + local index
  std::vector<Step> steps;
};

/** Work handed out at run time by a dispatcher (see Balancing): ranks have no fixed program. */
struct DynamicWork {
  Balancing balancing;
  double amount_per_sample = 0.0; ///< flop at nominal peak, as ComputeStep::amount
  std::uint64_t total_samples = 0;
  std::vector<std::uint64_t> static_samples; ///< per rank: its partitions (static and work_stealing start)
  std::vector<double> nominal_rate;          ///< per rank: samples/s the planner expects (before any measurement)
};

/** A coordinator host around each iteration: it runs the serial part, hands each rank its partitions (one start
 * message carrying their input), and collects one result message per rank. Ranks exchange partition boundaries
 * (halos) after computing. */
struct CoordinatedWork {
  double setup_time = 0.0;                 ///< s on the coordinator before the first iteration (class-aware split)
  double serial_amount = 0.0;              ///< flop at nominal peak per iteration, on the coordinator
  double per_partition = 0.0;              ///< s of coordinator time per partition per iteration
  std::vector<int> partitions_of_rank;     ///< per rank
  std::vector<std::uint64_t> start_bytes;  ///< per rank per iteration
  std::vector<std::uint64_t> result_bytes; ///< per rank per iteration
  /** Per rank: (peer rank, bytes each way) per iteration, for neighbouring partitions on different ranks. */
  std::vector<std::vector<std::pair<int, std::uint64_t>>> halo;
};

/** Every rank runs its own program (RankProgram::steps), iteration after iteration. */
struct ProgramRun {};

/** How the ranks get their work: their programs; samples handed out at run time by a dispatcher; or a coordinator
 * around each iteration (the ranks' programs compute, the coordinator starts and collects them). */
using RunMode = std::variant<ProgramRun, DynamicWork, CoordinatedWork>;

/** One class-aware split method's outcome on the scenario's labels, for side-by-side comparison. */
struct SplitSummary {
  SplitMethod method = SplitMethod::Random;
  int starved_partitions = 0;
  std::uint64_t min_minority = 0; ///< fewest minority samples in a partition
  std::uint64_t max_minority = 0;
  std::uint64_t samples_replicated = 0;
  double preprocessing = 0.0; ///< s on the coordinator
};

struct Plan {
  std::int64_t iterations = 1;
  std::vector<RankProgram> ranks;
  std::vector<std::vector<int>> groups; ///< rank lists, in ring order (a collective's group indexes this)
  /** The same work on one GPU at nominal speed, as one execution per iteration: the speedup reference. */
  double baseline_amount = 0.0;
  std::uint64_t samples_per_iteration = 0;
  double sample_time = 0.0;                      ///< s per sample on one nominal GPU (roofline)
  std::uint64_t planned_messages = 0;            ///< point-to-point messages the run will simulate
  std::uint64_t planned_executions = 0;          ///< compute executions the run will simulate
  std::string summary;                           ///< one line: "data_parallel, 10 partitions (skewed 30%), no sync"
  RunMode mode;                                  ///< programs, dispatched at run time, or coordinated
  std::optional<ClassSplit> class_split;         ///< the class-aware split, when the strategy asked for one
  std::vector<SplitSummary> class_split_methods; ///< all three methods on the same labels
  // Model training.
  std::optional<MemoryBreakdown> memory;     ///< what one GPU needs
  double model_flops_per_iteration = 0.0;    ///< forward + backward without recomputation, all replicas (MFU)
  double hardware_flops_per_iteration = 0.0; ///< including recomputation (HFU)
  double tokens_per_iteration = 0.0;         ///< sequences x sequence length (images for a CNN)
  std::size_t gradient_buckets = 0;          ///< all-reduces per iteration per replica
  // Model parallelism.
  std::vector<std::string> labels; ///< names of compute steps (ComputeStep::label), [0] = ""
  std::vector<int> stage_of_rank;  ///< pipeline stage per rank; empty without model parallelism
  int pipeline_stages = 0;         ///< 0 without model parallelism
  bool expert_parallel = false;    ///< experts exchange tokens by all-to-alls (CommKind::Expert)
  bool context_parallel = false;   ///< context groups exchange keys and values (CommKind::Context)
  /** A mixture of experts with expert parallelism: each layer's routing over the expert-parallel group (its ranks'
   * loads, the dropped share), as the planner priced the experts' compute. */
  std::vector<LayerRouting> expert_routing;
  std::vector<MemoryBreakdown> stage_memory; ///< per pipeline stage

  /** The dispatched work, or nullptr when the ranks do not get their work at run time. */
  const DynamicWork* dynamic() const { return std::get_if<DynamicWork>(&mode); }
  /** The coordinator's work, or nullptr when no coordinator runs. */
  const CoordinatedWork* coordinated() const { return std::get_if<CoordinatedWork>(&mode); }
};

/** Ring positions: position_in_group(plan, g, rank), or -1. Kept here so strategies and tests share it. */
int position_in_group(const Plan& plan, int group, int rank);

} // namespace partsim
