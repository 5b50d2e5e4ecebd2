// State shared by the actors of one simulation (engine-internal): the plan, the result being filled, mailboxes.
#pragma once

#include "partsim/engine/engine.hpp"
#include "partsim/input/stragglers.hpp"

#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

namespace simgrid::s4u {
class Mailbox;
}

namespace partsim::engine {

struct Platform;

/** A rank's communication stream: collectives queued by the rank's program run in order on their own actor while the
 * program goes on (NCCL on its own CUDA stream). Actors run one at a time between simcalls, so the fields need no
 * mutex: two semaphores carry the wake-ups (one simcall each, against about three for a mutex and a condition). */
struct CommStream {
  std::deque<const CollectiveStep*> queue; ///< not begun yet
  std::uint64_t pending = 0;               ///< queued or running
  /** The program is blocked until at most this many collectives are pending; -1 when it is not blocked. */
  std::int64_t program_waits = -1;
  /** Passive: every collective it queues is analytic or flows on a passive group (prepare_passive_streams), so it
   * needs no actor: the rank arrives at the head of its queue, and the collective's end (a kernel timer, or the
   * group's flow drivers) records its part and moves it on. Saves an actor and several simcalls per collective. */
  bool passive = false;
  simgrid::s4u::SemaphorePtr work; ///< one token per queued collective, and one to close: a token with nothing queued
  simgrid::s4u::SemaphorePtr idle; ///< released when the stream drains to what the program waits for

  /** One more collective finished: whether the program waiting on the stream may go on (it then no longer waits). */
  bool finished_one() {
    --pending;
    if (program_waits < 0 || pending > static_cast<std::uint64_t>(program_waits)) return false;
    program_waits = -1;
    return true;
  }
};

/** Passed explicitly to every actor; never global. */
struct RunContext {
  RunContext(const Plan& p, RunResult& r, const EngineOptions& o, const ClusterSpec& c, const Platform& pf)
      : plan(p), result(r), options(o), cluster(c), platform(pf) {}

  const Plan& plan;
  RunResult& result;
  const EngineOptions& options;
  const ClusterSpec& cluster;
  const Platform& platform;
  std::vector<CommStream> streams; ///< per rank; used by ranks whose program queues collectives on stream 1
  /** Collective instances not yet finished by every member, per group, by instance number. */
  struct CollectiveInstance {
    double last_arrival = 0.0;
    double last_end = 0.0;
    int done = 0;
  };
  std::vector<std::map<std::uint64_t, CollectiveInstance>> open_collectives; ///< per group
  std::vector<std::vector<std::uint64_t>> collectives_begun;                 ///< per group, per position
  std::vector<simgrid::s4u::Mailbox*> mailboxes;                             ///< one per rank
  /** Per rank: (group, position in it) for every group it belongs to, sorted by group. O(ranks x groups per rank). */
  std::vector<std::vector<std::pair<int, int>>> memberships;
  /** Folding (folding.hpp), per group: how many members have an actor (a collective's rendezvous waits for those),
   * and how many instances of the unfolded run one of its instances stands for (collective statistics). */
  std::vector<int> simulated_members;
  /** Per rank: the program it runs, relabeled, for simulated ranks that share another's (the engine keeps pointers
   * to collective steps while they run, so they need a home); empty otherwise. */
  std::vector<std::vector<Step>> relabeled;
  /** The steps rank `rank` runs: its own, or its relabeled copy (simulated ranks only). */
  const std::vector<Step>& steps(int rank) const {
    const auto r = static_cast<std::size_t>(rank);
    return plan.ranks[r].like < 0 ? plan.ranks[r].own_steps : relabeled.at(r);
  }
  std::vector<int> group_weight;
  /** run.lean_engine: flows started by driver actors, passive streams (collectives.hpp), executions alone on their
   * GPU as sleeps (compute_alone); off, every member runs its part in its own actor and every execution is one. */
  bool lean_engine = true;
  /** Per rank: its GPU runs nothing but this rank's executions, at a constant speed (no speed changes), so an
   * execution takes amount / speed exactly as SimGrid's CPU model would compute it: a sleep of that time (one simcall
   * and no CPU action instead of two simcalls and an action; a third of a 4,096-GPU data-parallel run). */
  std::vector<char> compute_alone;
  /** Per GPU, collectives of its ranks' communication streams running now (stream contention on: its host runs at
   * power state 1 while any does); empty when the plan has no contention. */
  std::vector<int> stream_kernels;
  /** `/cluster/stragglers` (nullptr without): rank r's compute steps in iteration i run amount / factor(its GPU, i). */
  const StragglerDraws* stragglers = nullptr;
  std::vector<double> straggle; ///< per rank, with stragglers: the factor of its current iteration
  /** A compute step started beside the collective that follows it (ComputeStep::beside_next), per rank. */
  struct BesideCompute {
    simgrid::s4u::ExecPtr exec; ///< null when the rank computes alone: it ends at `end`
    double begin = 0.0;
    double end = 0.0;
    double amount = 0.0; ///< its flop, for a contended compute of a rank that computes alone (run_beside)
    std::uint32_t label = 0;
    bool active = false;
    bool contended = false; ///< the collective beside holds SMs of the GPU while it runs (ComputeStep::contended)
  };
  std::vector<BesideCompute> beside; ///< per rank, sized with compute_alone
  /** An injected failure (failure_injection.hpp): per rank, the step it runs and where it stands; empty otherwise. */
  std::vector<const Step*> running;
  enum FailureState : char { kRunning, kFinished, kFailed, kNoticed };
  std::vector<char> failure_state;
  /** This engine runs an injected failure: SimGrid's failures of activities are expected, caught and recorded. */
  bool injecting() const { return !running.empty(); }

  /** Rank `rank` starts iteration `iteration`: its factor for the iteration's compute (with stragglers). */
  void begin_iteration(int rank, std::int64_t iteration) {
    if (stragglers == nullptr) return;
    straggle[static_cast<std::size_t>(rank)] =
        stragglers->factor(plan.ranks[static_cast<std::size_t>(rank)].gpu, iteration);
  }
  /** A rank finished iteration `iteration`'s steps at `now`: the iteration ends with the last (with stragglers). */
  void end_iteration(std::int64_t iteration, double now) {
    if (stragglers == nullptr) return;
    double& end = result.iteration_end[static_cast<std::size_t>(iteration)];
    end = std::max(end, now);
  }

  /** The position of `rank` in `group`, or -1. */
  int position(int group, int rank) const {
    const auto& mine = memberships[static_cast<std::size_t>(rank)];
    const auto it = std::lower_bound(mine.begin(), mine.end(), std::pair{group, -1});
    return it != mine.end() && it->first == group ? it->second : -1;
  }
  /** Pipeline mailboxes by (sender, receiver, channel), looked up by name once each (program.cpp). */
  std::map<std::tuple<int, int, int>, simgrid::s4u::Mailbox*> p2p_mailboxes;
  std::uint64_t events_done = 0;
  std::uint64_t events_planned = 0;
  std::chrono::steady_clock::time_point last_progress = std::chrono::steady_clock::now();

  /** Counts a simulated message or execution and reports progress now and then. */
  void event_done() {
    ++events_done;
    if (!options.progress || (events_done & 1023) != 0) return;
    const auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - last_progress).count() >= options.progress_interval_s) {
      last_progress = now;
      options.progress(events_done, events_planned);
    }
  }

  // ---- Collectives (owned by sim/src/collectives.cpp) ----
  /** Per-group mailboxes, rendezvous and path figures, built once by prepare_collectives(); defined in
   * collectives.cpp (a shared_ptr, so the type may stay incomplete here). */
  struct CollectiveGroups;
  std::shared_ptr<CollectiveGroups> collectives;
};

} // namespace partsim::engine
