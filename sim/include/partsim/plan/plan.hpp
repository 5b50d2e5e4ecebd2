// Plan: what every rank does in one iteration, as a program of steps, independent of SimGrid.
#pragma once

#include "partsim/input/scenario.hpp"
#include "partsim/model/collective_cost.hpp"
#include "partsim/model/expert_routing.hpp"
#include "partsim/model/training.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace partsim {

/** Run a kernel on the rank's GPU. `amount` is in flop at the GPU's nominal peak: the roofline time
 * max(flop / peak, bytes / memory bandwidth) times the peak, so a slower node simply runs it longer. */
struct ComputeStep {
  double amount = 0.0;
  std::uint64_t samples = 0; ///< samples this step processes (for throughput and the report)
  std::uint32_t label = 0;   ///< index into Plan::labels ("F mb3"), 0: none
  /** Runs beside the next step, a blocking collective (tensor-parallel communication overlapped with a GEMM, as
   * Transformer Engine's userbuffers do: the GEMM on the compute stream, the transfers on their own); the rank goes
   * on when both are done. Only the part of the collective that outlasts the compute is exposed. */
  bool beside_next = false;
  /** With beside_next: the collective's NCCL kernel holds SMs this compute lacks while it runs, as a collective of the
   * communication stream does (Plan::stream_compute_share): Megatron's asynchronous tensor-parallel backward, whose
   * collectives are launched on their own stream just before the GEMM beside them. Without, the compute runs at its
   * full rate (or the planner priced the SMs it lacks into it: Transformer Engine's userbuffers set an SM margin). */
  bool contended = false;
};
static_assert(sizeof(ComputeStep) <= 24);

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
  /** Broadcast: the root's position in the group. All-to-all: 0 when every destination gets the same share, else
   * 1 + the index of its per-member weights in Plan::all_to_all_skews (skewed expert routing). */
  int root = 0;
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

/** The rank waits `seconds` for its host, its GPU idle: the data loader handing over the next micro-batch
 * (Megatron-LM's `batch-generator` time, torchtitan's data-loading time). Not scaled by the GPU's speed or a
 * straggler's factor. */
struct HostStep {
  double seconds = 0.0;
};

using Step = std::variant<ComputeStep, CollectiveStep, StreamSyncStep, SendStep, RecvStep, HostStep>;

/** One rank: the GPU it runs on and its program for one iteration, its own or another rank's relabeled. Ranks of a
 * class (the same position in every data-parallel replica of a 3D split) run one shared program: building every
 * rank's copy was most of a production run's time and memory (issue 17). Read a rank's steps with Plan::steps_of. */
/** Whether `steps` queue a collective on the communication stream (CollectiveStep::stream 1). */
inline bool queues_on_stream(const std::vector<Step>& steps) {
  return std::any_of(steps.begin(), steps.end(), [](const Step& step) {
    const auto* c = std::get_if<CollectiveStep>(&step);
    return c != nullptr && c->stream != 0;
  });
}

struct RankProgram {
  int gpu = 0;                 ///< global GPU index: node * gpus_per_node + local index
  std::vector<Step> own_steps; ///< its program; empty when it runs rank `like`'s
  int like = -1;               ///< the rank whose program it runs (-1: its own), with:
  int peer_shift = 0;          ///< added to every SendStep / RecvStep peer
  /** (group in `like`'s program, this rank's group), sorted; a group not listed is the same for both. */
  std::vector<std::pair<int, int>> group_map;

  /** This rank's group for group `g` of the program it runs. */
  int group(int g) const {
    const auto it = std::lower_bound(group_map.begin(), group_map.end(), std::pair{g, std::numeric_limits<int>::min()});
    return it != group_map.end() && it->first == g ? it->second : g;
  }
  /** `step` of the program it runs, as this rank runs it (its peers and groups). */
  Step relabel(Step step) const {
    if (like < 0) return step;
    if (auto* c = std::get_if<CollectiveStep>(&step))
      c->group = group(c->group);
    else if (auto* s = std::get_if<SendStep>(&step))
      s->peer += peer_shift;
    else if (auto* r = std::get_if<RecvStep>(&step))
      r->peer += peer_shift;
    return step;
  }
};

/** A rank's steps, relabeled for it, by value: a random-access view of the program it runs. */
class StepsView {
 public:
  StepsView(const RankProgram& rank, const std::vector<Step>& steps) : rank_(&rank), steps_(&steps) {}
  std::size_t size() const { return steps_->size(); }
  bool empty() const { return steps_->empty(); }
  Step operator[](std::size_t k) const { return rank_->relabel((*steps_)[k]); }
  Step front() const { return (*this)[0]; }
  Step back() const { return (*this)[size() - 1]; }
  /** The program's steps before relabeling (kinds, amounts and bytes are the same; peers and groups are not). */
  const std::vector<Step>& unrelabeled() const { return *steps_; }

  class iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Step;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = Step;
    iterator() = default;
    iterator(const StepsView* view, std::size_t k) : view_(view), k_(k) {}
    Step operator*() const { return (*view_)[k_]; }
    iterator& operator++() {
      ++k_;
      return *this;
    }
    iterator operator++(int) {
      iterator old = *this;
      ++k_;
      return old;
    }
    bool operator==(const iterator& o) const { return k_ == o.k_; }

   private:
    const StepsView* view_ = nullptr;
    std::size_t k_ = 0;
  };
  iterator begin() const { return {this, 0}; }
  iterator end() const { return {this, size()}; }

 private:
  const RankProgram* rank_;
  const std::vector<Step>* steps_;
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

/** The per-member weights of a skewed all-to-all (the dispatch and combine of a mixture of experts whose routing is
 * not uniform): member p sends member q its chunk for q, (bytes / n), times weight[q] (`by_source` false: the
 * dispatch, tokens sent to the experts' ranks in proportion to their load) or times weight[p] (`by_source` true: the
 * combine, each expert rank returning what it received). Weights are relative to the uniform share (1: the
 * uniform all-to-all; LayerRouting::rank_load). */
struct AllToAllSkew {
  std::vector<double> weight; ///< by position in the group
  bool by_source = false;
  /** A two-hop all-to-all (CollectiveAlgorithm::TwoHop): by node index in the group, the share of what a source sends
   * a node's members that crosses the network, a token going once to a node that holds several of its experts
   * (node_token_share, expert_routing.hpp). Empty: 1 (every copy crosses). */
  std::vector<double> node_share;
};

/** A boundary inside the program of Plan::marked_rank: after its first `steps` steps, a pass begins (its activations
 * or gradients arrived) or one of its units ends (the embedding, a transformer layer, the head). The engine stamps the
 * clock there in the first iteration (RankTimeline::marks); the report times each transformer layer of a pass as the
 * gap from the boundary before its end (the pass's start or the previous unit's end), everything the rank did in it
 * included: compute, exposed tensor-parallel communication, waits for its group. */
struct UnitMark {
  std::uint32_t steps = 0;
  bool forward = true;
  bool layer_end = false; ///< a transformer layer ends here (else the pass begins, or another unit ends)
};

struct Plan {
  std::int64_t iterations = 1;
  std::vector<RankProgram> ranks;
  std::vector<std::vector<int>> groups; ///< rank lists, in ring order (a collective's group indexes this)
  /** The same work on one GPU at nominal speed, as one execution per iteration: the speedup reference. */
  double baseline_amount = 0.0;
  /** s per iteration the one GPU of the speedup reference waits for its host (every micro-batch's data loading). */
  double baseline_host = 0.0;
  std::uint64_t samples_per_iteration = 0;
  double sample_time = 0.0;             ///< s per sample on one nominal GPU (roofline)
  std::uint64_t planned_messages = 0;   ///< point-to-point messages the run will simulate
  std::uint64_t planned_executions = 0; ///< compute executions the run will simulate
  std::string summary;                  ///< one line: "data_parallel, 10 partitions (skewed 30%), no sync"
  /** Fraction of its rate a GPU computes at while a collective of its communication stream runs (the SMs the
   * collective's kernels hold: GradientSyncSpec::comm_sms); 1: no contention. */
  double stream_compute_share = 1.0;
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
  std::vector<AllToAllSkew> all_to_all_skews; ///< skewed all-to-alls' weights (CollectiveStep::root)
  std::vector<MemoryBreakdown> stage_memory;  ///< per pipeline stage
  /** The rank whose pass boundaries are marked (-1: none): rank 0, when it runs its own program and its passes keep
   * their layers apart (not fused into one compute per pass). */
  int marked_rank = -1;
  std::vector<UnitMark> unit_marks; ///< in the marked rank's program order

  /** The rank whose program `rank` runs (itself or RankProgram::like). */
  int owner(int rank) const {
    const int like = ranks[static_cast<std::size_t>(rank)].like;
    return like < 0 ? rank : like;
  }
  /** Rank `rank`'s steps, relabeled for it (see StepsView). */
  StepsView steps_of(int rank) const {
    return {ranks[static_cast<std::size_t>(rank)], ranks[static_cast<std::size_t>(owner(rank))].own_steps};
  }
  /** Steps held in the plan (shared programs once). */
  std::size_t stored_steps() const;

  /** The dispatched work, or nullptr when the ranks do not get their work at run time. */
  const DynamicWork* dynamic() const { return std::get_if<DynamicWork>(&mode); }
  /** The coordinator's work, or nullptr when no coordinator runs. */
  const CoordinatedWork* coordinated() const { return std::get_if<CoordinatedWork>(&mode); }
};

/** Ring positions: position_in_group(plan, g, rank), or -1. Kept here so strategies and tests share it. */
int position_in_group(const Plan& plan, int group, int rank);

/** The distinct collective steps of `steps` (equal in every field once), in a fixed order: what a pass over every
 * rank's groups needs from a program that ranks share. */
std::vector<CollectiveStep> distinct_collectives(const std::vector<Step>& steps);

/** A copy of rank `rank`'s steps, relabeled (for tests and reports; the engine reads Plan::steps_of). */
std::vector<Step> resolved_steps(const Plan& plan, int rank);

} // namespace partsim
