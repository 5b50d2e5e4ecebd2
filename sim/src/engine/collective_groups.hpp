// Per-group state of the collectives and the seams between their files (engine-internal): set-up and dispatch
// (collectives.cpp), message steps (step_collectives.cpp), flows and analytic (flow_collectives.cpp), passive groups
// (passive_collectives.cpp). See docs/collectives.md and docs/engine.md.
#pragma once

#include "partsim/model/collective_schedule.hpp"
#include "run_context.hpp"

#include <simgrid/s4u/Semaphore.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

namespace simgrid::s4u {
class Host;
class Mailbox;
} // namespace simgrid::s4u

namespace partsim::engine {

/** Per group: who is where, the mailboxes of the step-level algorithms it uses (each with one sender and one
 * receiver, except all-to-all's), the rendezvous of flows and analytic collectives, and the path figures. */
struct RunContext::CollectiveGroups {
  /** One flows or analytic collective: members wait until the last one arrives (and, for flows, after each phase).
   * Two slots per group suffice: no member can start rendezvous r+2 before every member has left rendezvous r. Actors
   * run one at a time between simcalls, so the count needs no mutex; waiting members block on the semaphore and the
   * last one releases it once per waiter, O(1) per member. Not Actor::suspend(): a suspended actor's activities (its
   * detached pipeline sends) are suspended with it, which would stall them while it waits. */
  struct Rendezvous {
    int waiting = 0;
    simgrid::s4u::SemaphorePtr released = simgrid::s4u::Semaphore::create(0);
    int arrived = 0;         ///< driven flows: members arrived
    int drivers_waiting = 0; ///< driven flows: drivers blocked on `driving`
    /** Driven flows: the drivers, at the start and between phases. */
    simgrid::s4u::SemaphorePtr driving = simgrid::s4u::Semaphore::create(0);
    double begin = 0.0; ///< when the last member arrived
    double end = 0.0;   ///< when every member is done
  };

  /** The group's shape (GroupShape: members, rings, trees, links), and what its collectives need on SimGrid. */
  struct Group : GroupShape {
    std::vector<simgrid::s4u::Host*> hosts;      ///< by position
    std::vector<std::uint64_t> a2a_begun;        ///< by position: all-to-alls begun (mailbox parity)
    std::vector<std::uint64_t> rendezvous_begun; ///< by position
    /** By channel x size + position: from its left neighbour in that channel's ring (channel 0: also the broadcast
     * chain). */
    std::vector<simgrid::s4u::Mailbox*> ring_in;
    std::array<std::vector<simgrid::s4u::Mailbox*>, 2> tree_up;   ///< by tree and child position: child to parent
    std::array<std::vector<simgrid::s4u::Mailbox*>, 2> tree_down; ///< by tree and child position: parent to child
    std::vector<simgrid::s4u::Mailbox*> intra_in;                 ///< hierarchical: from the left neighbour in the node
    std::vector<simgrid::s4u::Mailbox*> inter_in; ///< hierarchical: from the same local index, previous node
    std::array<std::vector<simgrid::s4u::Mailbox*>, 2> a2a_in; ///< by parity and position: from every peer
    /** Two-hop all-to-all's second round: by the parity its first round took (a2a_in's), and position. */
    std::array<std::vector<simgrid::s4u::Mailbox*>, 2> hop_in;
    /** Two-hop all-to-alls' flow_share by (bytes, skew, position), worked out once from the schedule: sent, received,
     * flows. */
    mutable std::map<std::tuple<std::uint64_t, int, int>, std::array<std::uint64_t, 3>> two_hop_shares;
    /** Two-hop all-to-alls by (bytes, skew): whether every flow carries a byte. */
    mutable std::map<std::pair<std::uint64_t, int>, bool> two_hop_carries;
    std::vector<simgrid::s4u::Mailbox*> flow_in; ///< by position: the flows of a flows collective (any sender)
    /** NVLS-tree: the rail trees' mailboxes by tree and child position (child to parent, parent to child). */
    std::array<std::vector<simgrid::s4u::Mailbox*>, 2> rail_up;
    std::array<std::vector<simgrid::s4u::Mailbox*>, 2> rail_down;
    std::array<Rendezvous, 2> slots;
    /** A passive group (prepare_passive_streams): its members' passive streams arrive here, no actor waits. */
    struct Passive {
      bool on = false;
      int arrived = 0;
      std::vector<double> arrival;          ///< by position: when it arrived at the running instance
      std::vector<int> live;                ///< positions of the simulated members
      const CollectiveStep* step = nullptr; ///< the running instance, once every simulated member arrived
      double begin = 0.0;
      int per_driver = 1;    ///< flows: members whose flows one driver actor starts
      int drivers = 0;       ///< flows: driver actors (none when the group has no flows collective)
      int phase_waiting = 0; ///< flows: drivers waiting for the current phase to end
      simgrid::s4u::SemaphorePtr start =
          simgrid::s4u::Semaphore::create(0); ///< flows: drivers, until an instance begins
      simgrid::s4u::SemaphorePtr phase =
          simgrid::s4u::Semaphore::create(0); ///< flows: drivers, until the phase's last flow is done
    } passive;
    /** Analytic all-to-all: seconds per byte (of a member's buffer) on the busiest switch uplink, 0 when no uplink
     * is on the members' routes (collectives.cpp, all_to_all_uplink). */
    double all_to_all_uplink = 0.0;
  };

  std::vector<Group> groups;
};

using CollectiveGroup = RunContext::CollectiveGroups::Group;

// ---- step_collectives.cpp ----

/** Runs a `steps` collective for member `pos`: every message of the algorithm. */
void run_steps(RunContext& ctx, RankTimeline& timeline, const CollectiveStep& step, CollectiveGroup& g, int pos);

// ---- flow_collectives.cpp ----

/** What one member sends and receives in a flows or analytic collective, and how many flows it starts. */
struct FlowShare {
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
  std::uint64_t flows = 0;
};

FlowShare flow_share(const CollectiveGroup& g, const CollectiveStep& step, int pos);

/** The closed-form time of an analytic collective on the group's path figures. */
double analytic_time(const CollectiveGroup& g, const CollectiveStep& step);

/** A flows or analytic collective with every member in its own actor (rendezvous; flows driven by a few members). */
void rendezvous(RunContext& ctx, RankTimeline& timeline, const CollectiveStep& step, CollectiveGroup& g, int pos);

/** Whether every flow of a flows collective carries a byte at least (a two-host execution needs one). */
bool every_flow_carries_bytes(const CollectiveGroup& g, const CollectiveStep& step);

/** Members whose flows one driver starts. */
int members_per_driver(const CollectiveGroup& g, const CollectiveStep& step);

/** Drives the flows of members [first, last) through every phase of `step` with the group's other drivers: after
 * each phase they meet (`met` counts those waiting on `phase_done`, released by the last); the last one to get there
 * sleeps the phase's extra time and, after the last phase, runs `ended` before it releases the others. */
void drive_phases(RunContext& ctx, const CollectiveGroup& g, const CollectiveStep& step, int first, int last,
                  int drivers, int& met, simgrid::s4u::Semaphore& phase_done, const std::function<void()>& ended);

/** Records member `pos`'s part of a flows or analytic collective that began at `begin` and ends now: waiting since it
 * arrived, communicating since the collective began, the bytes its edges carry, and its flows as messages. */
void account(RunContext& ctx, RankTimeline& timeline, const CollectiveStep& step, const CollectiveGroup& g, int pos,
             double arrived, double begin);

} // namespace partsim::engine
