// What a simulation returns: per-rank timelines and streams, the makespan and baseline, the collectives' instances,
// the coordinator's and the balancer's figures, and what the engine did (folding, actors). Filled by the engine,
// read by the metrics and the writers; no SimGrid.
#pragma once

#include "partsim/model/collective_cost.hpp"
#include "partsim/plan/plan.hpp"
#include "partsim/report/timeline.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace partsim {

/** How the network was configured, for the report. */
struct NetworkConfig {
  std::string model; ///< SimGrid network model
  bool cross_traffic = false;
  std::string note;            ///< why
  std::string simgrid_version; ///< of the library that ran the simulation
};

/** What the coordinator (dispatcher) did in a run with run-time balancing. */
struct BalancingStats {
  std::string policy;
  std::uint64_t dispatches = 0;     ///< chunks handed out by the coordinator
  std::uint64_t steals = 0;         ///< work-stealing transfers between GPUs
  double coordinator_busy = 0.0;    ///< s of dispatch overhead spent by the coordinator
  std::uint64_t bytes_sent = 0;     ///< by the coordinator
  std::uint64_t bytes_received = 0; ///< by the coordinator
};

/** What the coordinator did in a coordinated run (serial part, per-partition coordination). */
struct CoordinatorStats {
  double setup = 0.0;               ///< s before the first iteration (the class-aware split)
  double serial_compute = 0.0;      ///< s executing the serial part
  double coordination = 0.0;        ///< s of per-partition coordination
  std::uint64_t bytes_sent = 0;     ///< partition inputs
  std::uint64_t bytes_received = 0; ///< partition results
  RankTimeline timeline;            ///< its compute (the serial part) and waits, for the parallel fraction and trace
};

/** The instances of one kind of collective in a run (same op, algorithm, protocol, fidelity, group size and bytes):
 * each instance timed from the last member's arrival to the last member's completion, as nccl-tests times it. */
struct CollectiveStats {
  CollectiveOp op = CollectiveOp::AllReduce;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Ring;
  CollectiveProtocol protocol = CollectiveProtocol::Simple;
  Fidelity fidelity = Fidelity::Steps;
  CommKind kind = CommKind::Data;
  int ranks = 0;
  std::uint64_t bytes = 0;
  std::uint64_t count = 0;
  double total_time = 0.0; ///< s, summed over instances
  double min_time = 0.0;   ///< s
  double max_time = 0.0;   ///< s
};

/** A rank whose running activity failed when the injected failure turned its peer's GPU off. */
struct InjectedFailureNotice {
  int rank = 0;
  double at = 0.0;  ///< simulated s
  std::string step; ///< what it was running: "all_reduce (data, 64 ranks)", "recv", "stream: reduce_scatter ..."
};

/** What one failure injected into the simulated iteration did (`/reliability/inject`, docs/failures.md). Simulated
 * on an engine of its own (a child process: one SimGrid engine per process). */
struct InjectedFailureOutcome {
  bool fired = false;   ///< false: every rank had finished before the failure time
  double at = 0.0;      ///< when SimGrid turned the GPUs off, s into the run
  double stopped = 0.0; ///< at + detection time: the job stops every rank still running
  std::int64_t ranks = 0;
  std::vector<int> failed_ranks;              ///< ranks on the failed GPUs: their actors ended with their hosts
  std::vector<InjectedFailureNotice> noticed; ///< in order of time, the first 64
  std::int64_t noticed_count = 0;             ///< every rank that saw an activity fail
  std::int64_t finished = 0;                  ///< ranks that finished their program before the stop
  std::int64_t hung = 0; ///< ranks neither failed, nor noticing, nor finished: blocked until the stop
  /** What the ranks were running at the failure time: (activity, ranks), most ranks first. */
  std::vector<std::pair<std::string, std::int64_t>> running_at_failure;
};

struct RunResult {
  std::vector<RankTimeline> ranks; ///< indexed by rank
  /** Per rank: its communication stream (collectives overlapping the program), empty for ranks without one. The
   * main timeline holds the exposed part: time blocked waiting for the stream. */
  std::vector<RankTimeline> streams;
  double makespan = 0.0;        ///< last rank's finish time, s
  double baseline_time = 0.0;   ///< the same work on one nominal GPU, simulated in the same engine, s
  std::uint64_t messages = 0;   ///< point-to-point messages simulated
  std::uint64_t executions = 0; ///< executions simulated (baseline excluded)
  NetworkConfig network;
  std::optional<BalancingStats> balancing;     ///< set when work was dispatched at run time
  std::optional<CoordinatorStats> coordinator; ///< set in coordinated runs
  std::vector<CollectiveStats> collectives;    ///< in order of first completion
  std::string folding;                         ///< what folding did, or why it did not (report: engine)
  std::size_t simulated_ranks = 0;             ///< ranks with an actor; the others took a representative's figures
  bool folded() const { return simulated_ranks < ranks.size(); }
  /** Per rank, when folded: the simulated rank whose timeline it took (itself when simulated); empty otherwise. A
   * folded rank's timelines carry its own totals and counts but no intervals: they are its representative's (the
   * same times), read through intervals_of, so that a 16,384-GPU run does not copy them 16,384 times. */
  std::vector<int> representative;
  /** The intervals of rank `rank`'s main timeline (`stream` false) or communication stream. */
  const std::vector<Interval>& intervals_of(std::size_t rank, bool stream = false) const {
    const std::size_t r = representative.empty() ? rank : static_cast<std::size_t>(representative[rank]);
    return stream ? streams[r].intervals : ranks[r].intervals;
  }
  std::size_t actors = 0;                 ///< SimGrid actors the run created (programs, streams, flow drivers)
  std::uint64_t executions_as_sleeps = 0; ///< of `executions`: alone on a GPU of constant speed (lean engine)
  std::uint64_t driven_flows = 0;         ///< of `messages`: flows started by driver actors (lean engine)
  /** With stragglers: per iteration, when the last rank finished its program's steps of it (s); empty otherwise. */
  std::vector<double> iteration_end;
  std::optional<InjectedFailureOutcome> injected; ///< with /reliability/inject
  /** With /reliability: s to write a checkpoint, every writer's part sent at once to the storage pool on SimGrid. */
  std::optional<double> checkpoint_write;
};

} // namespace partsim
