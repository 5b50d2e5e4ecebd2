// Per-group state of the collectives and the seams between their files (engine-internal): set-up and dispatch
// (collectives.cpp), message steps (step_collectives.cpp), flows and analytic (flow_collectives.cpp), passive groups
// (passive_collectives.cpp). See docs/collectives.md and docs/engine.md.
#pragma once

#include "partsim/model/collective_cost.hpp"
#include "run_context.hpp"

#include <simgrid/s4u/Semaphore.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
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

  struct Group {
    int size = 0;
    std::vector<int> ranks;                      ///< by position
    std::vector<simgrid::s4u::Host*> hosts;      ///< by position
    std::vector<int> node;                       ///< by position: index of its node among the nodes the group spans
    std::vector<int> local;                      ///< by position: index among its node's members
    std::vector<std::vector<int>> members;       ///< by node index: positions, in position order
    int per_node = 1;                            ///< most members on one node
    bool even = true;                            ///< every node has per_node members
    std::vector<std::uint64_t> a2a_begun;        ///< by position: all-to-alls begun (mailbox parity)
    std::vector<std::uint64_t> rendezvous_begun; ///< by position
    /** By channel x size + position: from its left neighbour in that channel's ring (channel 0: also the broadcast
     * chain). */
    std::vector<simgrid::s4u::Mailbox*> ring_in;
    /** Rings of a ring reduce-scatter, all-gather or all-reduce (ring_channels): with one, the ring is the position
     * order; with C > 1, channel c enters even nodes at local index e = c g / C and visits them upwards (leaving at
     * e - 1), odd nodes downwards from e - 1 (leaving at e), so that it leaves node k and enters node k+1 through
     * members of the same local index (the same rail), back to the first node too when the node count is even,
     * and each node-to-node edge of the C rings starts at a different member. */
    int channels = 1;
    std::vector<std::vector<int>> ring_at;    ///< by channel and ring index: the position (C > 1 only)
    std::vector<std::vector<int>> ring_index; ///< by channel and position: its ring index (C > 1 only)
    std::array<std::vector<simgrid::s4u::Mailbox*>, 2> tree_up;   ///< by tree and child position: child to parent
    std::array<std::vector<simgrid::s4u::Mailbox*>, 2> tree_down; ///< by tree and child position: parent to child
    std::vector<simgrid::s4u::Mailbox*> intra_in;                 ///< hierarchical: from the left neighbour in the node
    std::vector<simgrid::s4u::Mailbox*> inter_in; ///< hierarchical: from the same local index, previous node
    std::array<std::vector<simgrid::s4u::Mailbox*>, 2> a2a_in; ///< by parity and position: from every peer
    std::vector<simgrid::s4u::Mailbox*> flow_in; ///< by position: the flows of a flows collective (any sender)
    std::optional<DoubleBinaryTree> tree;
    /** NVLS-tree: the double binary tree over the group's nodes that the members of one local index (a rail) run,
     * and its mailboxes by tree and child position (child to parent, parent to child). */
    std::optional<DoubleBinaryTree> rail_tree;
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
    /** The plan's skewed all-to-alls (Plan::all_to_all_skews), which a step names by CollectiveStep::root. */
    const std::vector<AllToAllSkew>* skews = nullptr;
    TwoLevelCost links; ///< slowest intra-node and inter-node paths between members, network ports per node
    LinkCost slowest;   ///< the slower of the two (pipeline chunks, flow latencies)
  };

  std::vector<Group> groups;
};

using CollectiveGroup = RunContext::CollectiveGroups::Group;

inline int mod(int a, int n) {
  return ((a % n) + n) % n;
}

/** Member `pos`'s index in channel `c`'s ring of group `g`. */
inline int ring_index(const CollectiveGroup& g, int c, int pos) {
  return g.channels == 1 ? pos : g.ring_index[static_cast<std::size_t>(c)][static_cast<std::size_t>(pos)];
}

/** The member after `pos` in channel `c`'s ring of group `g`. */
inline int ring_next(const CollectiveGroup& g, int c, int pos) {
  if (g.channels == 1) return (pos + 1) % g.size;
  const auto& at = g.ring_at[static_cast<std::size_t>(c)];
  return at[static_cast<std::size_t>((ring_index(g, c, pos) + 1) % g.size)];
}

/** Chunk i of `bytes` cut into n near-equal integer pieces that add up to `bytes`. */
inline std::uint64_t chunk(std::uint64_t bytes, int n, int i) {
  const auto un = static_cast<std::uint64_t>(n);
  return bytes / un + (static_cast<std::uint64_t>(i) < bytes % un ? 1 : 0);
}

/** The weights of a skewed all-to-all step (CollectiveStep::root), or none: every destination gets the same share. */
inline const AllToAllSkew* a2a_skew(const CollectiveGroup& g, const CollectiveStep& step) {
  if (step.op != CollectiveOp::AllToAll || step.root <= 0 || g.skews == nullptr) return nullptr;
  return &g.skews->at(static_cast<std::size_t>(step.root - 1));
}

/** What member `from` sends member `to` in a direct all-to-all: its chunk for `to`, times the destination's weight
 * (dispatch) or its own (combine) when the step is skewed. The steps, the flows and the accounting all use it, so the
 * bytes sent are the bytes received. */
inline std::uint64_t a2a_bytes(const CollectiveGroup& g, const CollectiveStep& step, int from, int to) {
  const std::uint64_t c = chunk(step.bytes, g.size, to);
  const AllToAllSkew* skew = a2a_skew(g, step);
  if (skew == nullptr) return c;
  const double w = skew->weight.at(static_cast<std::size_t>(skew->by_source ? from : to));
  return static_cast<std::uint64_t>(std::llround(static_cast<double>(c) * w));
}

/** NVLS as per-pair traffic (nvls_steps): what a member sends to its i-th peer (i = 1 .. n-1) of its bytes
 * (1 + 1/n) per port, cut into n-1 near-equal pieces. */
inline std::uint64_t nvls_peer_bytes(const CollectiveGroup& g, std::uint64_t bytes, int i) {
  return chunk(bytes + bytes / static_cast<std::uint64_t>(g.size), g.size - 1, i - 1);
}

/** NVLS-tree's NVLS part as per-pair traffic inside a node of g = per_node members: nvls_peer_bytes over the node. */
inline std::uint64_t nvls_node_peer_bytes(const CollectiveGroup& g, std::uint64_t bytes, int i) {
  return chunk(bytes + bytes / static_cast<std::uint64_t>(g.per_node), g.per_node - 1, i - 1);
}

/** NVLS-tree: member `pos`'s rail-tree neighbour at node index `node` (-1: none), as a position. */
inline int rail_member(const CollectiveGroup& g, int node, int pos) {
  return node < 0 ? -1
                  : g.members[static_cast<std::size_t>(node)]
                             [static_cast<std::size_t>(g.local[static_cast<std::size_t>(pos)])];
}

/** NVLS-tree: member `pos`'s share of `bytes`, the part its rail's tree all-reduces. */
inline std::uint64_t rail_share(const CollectiveGroup& g, std::uint64_t bytes, int pos) {
  return chunk(bytes, g.per_node, g.local[static_cast<std::size_t>(pos)]);
}

/** The latency `step`'s protocol adds over group g (protocol_latency): paid once, at the end, at every fidelity. */
inline double protocol_latency(const CollectiveGroup& g, const CollectiveStep& step) {
  return protocol_latency(step.op, step.algorithm, step.protocol, g.size, g.per_node,
                          static_cast<int>(g.members.size()), g.links);
}

/** Bytes on the links per byte of data of `step` over group g (protocol_wire_factor: the protocol's, LL's at most its
 * bandwidth limit). */
inline double wire_factor(const CollectiveGroup& g, const CollectiveStep& step) {
  return protocol_wire_factor(step.op, step.algorithm, step.protocol, g.per_node, static_cast<int>(g.members.size()),
                              g.links);
}

/** Bytes on the links of a message of `bytes` of data of `step` over group g, whole (LL128's 128/120). */
inline double wire_bytes(const CollectiveGroup& g, const CollectiveStep& step, double bytes) {
  return std::ceil(bytes * wire_factor(g, step));
}

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
