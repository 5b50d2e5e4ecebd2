// One description per collective algorithm: the transfers each member of a group posts, round by round, in pure code
// (no SimGrid). The engine's `steps` level runs it message by message (step_collectives.cpp); its `flows` level runs
// member_edges, the schedule's transfers summed per edge (tested equal to the schedule); schedule_time times it
// round by round on the two-level links, which the tests check against the closed forms of collective_cost.hpp, and
// schedule_messages counts it, which they check against planned_messages. See docs/collectives.md.
#pragma once

#include "partsim/model/collective_cost.hpp"
#include "partsim/plan/plan.hpp"

#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

namespace partsim {

/** A group as its collectives see it: where its members are, its rings and trees, and its links. Positions are the
 * members' indices in the group (Plan::groups' order). */
struct GroupShape {
  int size = 0;
  std::vector<int> ranks;                ///< by position
  std::vector<int> node;                 ///< by position: index of its node among the nodes the group spans
  std::vector<int> local;                ///< by position: index among its node's members
  std::vector<std::vector<int>> members; ///< by node index: positions, in position order
  int per_node = 1;                      ///< most members on one node
  bool even = true;                      ///< every node has per_node members
  /** Rings of a ring reduce-scatter, all-gather or all-reduce (ring_channels): with one, the ring is the position
   * order; with C > 1 (make_rings), channel c enters even nodes at local index e = c g / C and visits them upwards
   * (leaving at e - 1), odd nodes downwards from e - 1 (leaving at e), so that it leaves node k and enters node k+1
   * through members of the same local index (the same rail), back to the first node too when the node count is
   * even, and each node-to-node edge of the C rings starts at a different member. */
  int channels = 1;
  std::vector<std::vector<int>> ring_at;    ///< by channel and ring index: the position (C > 1 only)
  std::vector<std::vector<int>> ring_index; ///< by channel and position: its ring index (C > 1 only)
  std::optional<DoubleBinaryTree> tree;     ///< NCCL's double binary tree over the positions
  /** NVLS-tree and a node tree (node_tree): the double binary tree over the group's nodes that the members of one
   * local index (a rail) run. */
  std::optional<DoubleBinaryTree> rail_tree;
  /** The plan's skewed all-to-alls (Plan::all_to_all_skews), which a step names by CollectiveStep::root. */
  const std::vector<AllToAllSkew>* skews = nullptr;
  TwoLevelCost links; ///< slowest intra-node and inter-node paths between members, network ports per node
  LinkCost slowest;   ///< the slower of the two (pipeline chunks, flow latencies)
};

/** Places the members: `node_key[pos]` names member pos's node (any integer, e.g. its GPU / GPUs per node); fills
 * size, node, local, members, per_node and even. */
void place_members(GroupShape& g, const std::vector<int>& node_key);

/** Builds the rings of g.channels channels (GroupShape::channels); nothing when there is one. */
void make_rings(GroupShape& g);

/** Member `pos`'s index in channel `c`'s ring of group `g`. */
inline int ring_index(const GroupShape& g, int c, int pos) {
  return g.channels == 1 ? pos : g.ring_index[static_cast<std::size_t>(c)][static_cast<std::size_t>(pos)];
}

/** The member after `pos` in channel `c`'s ring of group `g`. */
inline int ring_next(const GroupShape& g, int c, int pos) {
  if (g.channels == 1) return (pos + 1) % g.size;
  const auto& at = g.ring_at[static_cast<std::size_t>(c)];
  return at[static_cast<std::size_t>((ring_index(g, c, pos) + 1) % g.size)];
}

/** The member before `pos` in channel `c`'s ring of group `g`. */
inline int ring_previous(const GroupShape& g, int c, int pos) {
  if (g.channels == 1) return (pos + g.size - 1) % g.size;
  const auto& at = g.ring_at[static_cast<std::size_t>(c)];
  return at[static_cast<std::size_t>((ring_index(g, c, pos) + g.size - 1) % g.size)];
}

/** The weights of a skewed all-to-all step (CollectiveStep::root), or none: every destination gets the same share. */
inline const AllToAllSkew* a2a_skew(const GroupShape& g, const CollectiveStep& step) {
  if (step.op != CollectiveOp::AllToAll || step.root <= 0 || g.skews == nullptr) return nullptr;
  return &g.skews->at(static_cast<std::size_t>(step.root - 1));
}

/** What member `from` sends member `to` in a direct all-to-all: its chunk for `to`, times the destination's weight
 * (dispatch) or its own (combine) when the step is skewed. The schedule, the edges and the accounting all use it, so
 * the bytes sent are the bytes received. */
inline std::uint64_t a2a_bytes(const GroupShape& g, const CollectiveStep& step, int from, int to) {
  const std::uint64_t c = chunk(step.bytes, g.size, to);
  const AllToAllSkew* skew = a2a_skew(g, step);
  if (skew == nullptr) return c;
  const double w = skew->weight.at(static_cast<std::size_t>(skew->by_source ? from : to));
  return static_cast<std::uint64_t>(std::llround(static_cast<double>(c) * w));
}

/** A two-hop all-to-all's share of node `node`'s bytes that crosses the network (AllToAllSkew::node_share; 1 when the
 * step has none). */
inline double two_hop_node_share(const GroupShape& g, const CollectiveStep& step, int node) {
  const AllToAllSkew* skew = a2a_skew(g, step);
  if (skew == nullptr || skew->node_share.empty()) return 1.0;
  return skew->node_share.at(static_cast<std::size_t>(node));
}

/** A two-hop all-to-all's network message between member `source` (a token's sender) and the member of its rail on
 * node `node` (dispatch: from the source; combine: to it): node_share times what the source sends node's members
 * (dispatch) or they return to it (combine), whole bytes. */
inline std::uint64_t two_hop_network_bytes(const GroupShape& g, const CollectiveStep& step, int node, int source) {
  const AllToAllSkew* skew = a2a_skew(g, step);
  const bool combine = skew != nullptr && skew->by_source;
  std::uint64_t sum = 0;
  for (const int j : g.members[static_cast<std::size_t>(node)])
    sum += combine ? a2a_bytes(g, step, j, source) : a2a_bytes(g, step, source, j);
  return static_cast<std::uint64_t>(std::llround(static_cast<double>(sum) * two_hop_node_share(g, step, node)));
}

/** NVLS as per-pair traffic: what a member sends to its i-th peer (i = 1 .. n-1) of its bytes (1 + 1/n) per port,
 * cut into n-1 near-equal pieces. */
inline std::uint64_t nvls_peer_bytes(const GroupShape& g, std::uint64_t bytes, int i) {
  return chunk(bytes + bytes / static_cast<std::uint64_t>(g.size), g.size - 1, i - 1);
}

/** NVLS-tree's NVLS part as per-pair traffic inside a node of g = per_node members: nvls_peer_bytes over the node. */
inline std::uint64_t nvls_node_peer_bytes(const GroupShape& g, std::uint64_t bytes, int i) {
  return chunk(bytes + bytes / static_cast<std::uint64_t>(g.per_node), g.per_node - 1, i - 1);
}

/** NVLS-tree: member `pos`'s rail-tree neighbour at node index `node` (-1: none), as a position. */
inline int rail_member(const GroupShape& g, int node, int pos) {
  return node < 0 ? -1
                  : g.members[static_cast<std::size_t>(node)]
                             [static_cast<std::size_t>(g.local[static_cast<std::size_t>(pos)])];
}

/** Whether g's tree all-reduce runs as NCCL's tree across nodes (node_tree: several nodes, several members on each,
 * the same number on every node). */
inline bool runs_node_tree(const GroupShape& g) {
  return node_tree(g.size, g.per_node, static_cast<int>(g.members.size()));
}

/** A node tree's channels over g: one per NIC (tree_channels). */
inline int node_tree_channels(const GroupShape& g) {
  return tree_channels(g.per_node, static_cast<int>(g.members.size()), g.links.ports_per_node);
}

/** NVLS-tree: member `pos`'s share of `bytes`, the part its rail's tree all-reduces. */
inline std::uint64_t rail_share(const GroupShape& g, std::uint64_t bytes, int pos) {
  return chunk(bytes, g.per_node, g.local[static_cast<std::size_t>(pos)]);
}

/** The latency `step`'s protocol adds over group g (protocol_latency): paid once, at the end, at every fidelity. */
inline double protocol_latency(const GroupShape& g, const CollectiveStep& step) {
  return protocol_latency(step.op, step.algorithm, step.protocol, g.size, g.per_node,
                          static_cast<int>(g.members.size()), g.links);
}

/** Bytes on the links per byte of data of `step` over group g (protocol_wire_factor: the protocol's, LL's at most its
 * bandwidth limit). */
inline double wire_factor(const GroupShape& g, const CollectiveStep& step) {
  return protocol_wire_factor(step.op, step.algorithm, step.protocol, g.per_node, static_cast<int>(g.members.size()),
                              g.links);
}

/** Bytes on the links of a message of `bytes` of data of `step` over group g, whole (LL128's 128/120). */
inline double wire_bytes(const GroupShape& g, const CollectiveStep& step, double bytes) {
  return std::ceil(bytes * wire_factor(g, step));
}

// ---- The schedule: what each member posts, round by round ----

/** The connection a transfer takes, which the engine maps to a mailbox (each has one sender and one receiver per
 * transfer, so that transfers between two members arrive in order): `Ring` channel `index`'s ring (and the broadcast
 * chain, on channel 0); `TreeUp` / `TreeDown` tree `index`'s child-to-parent and parent-to-child edges; `Intra` /
 * `Inter` hierarchical's ring inside the node and between the nodes; `Peer` every pair of a direct all-to-all;
 * `Switch` NVLink SHARP's traffic through the NVSwitch; `RailUp` / `RailDown` the rail trees of NVLS-tree and of a
 * node tree; `Chain` a node tree's chains inside the node; `Peer` the first round of a two-hop all-to-all and `Hop`
 * its second (every pair). */
enum class Lane : std::uint8_t { Ring, TreeUp, TreeDown, Intra, Inter, Peer, Switch, RailUp, RailDown, Hop, Chain };

/** One transfer a member posts: a send of `bytes` (what the receiver counts) to `peer`, occupying the links for
 * `wire` bytes (< 0: bytes x the collective's wire_factor), or a receive from `peer`. A `background` transfer moves
 * beside the rounds that follow until the schedule's wait_background. */
struct Post {
  Lane lane = Lane::Ring;
  std::uint8_t index = 0; ///< the ring's channel or the tree
  bool send = true;
  bool background = false;
  int peer = 0;
  std::uint64_t bytes = 0; ///< sends only
  double wire = -1.0;      ///< sends only
};

/** Receives a member's schedule: its posts, the end of each round (wait for every non-background post of it), the
 * wait for the background posts, and time the member stays in the collective beyond its transfers (latencies the
 * messages do not pay). */
class ScheduleSink {
 public:
  virtual ~ScheduleSink() = default;
  virtual void post(const Post& p) = 0;
  virtual void end_round() = 0;
  virtual void wait_background() = 0;
  virtual void hold(double seconds) = 0;
};

/** Runs member `pos`'s schedule of `step` over group g into `sink`: every transfer of the algorithm, round by round,
 * then the protocol's latency (protocol_latency). g needs its rings for ring channels (make_rings), its tree for
 * `Tree` and its rail tree for `NvlsTree`. The algorithms:
 * - ring reduce-scatter / all-gather: n-1 rounds in which the member at ring index i of each channel sends chunk
 *   (i - s) of the channel's 1/C of the bytes cut in n to its ring's next member; all-reduce: a reduce-scatter, then
 *   an all-gather shifted by one (the member then owns chunk i + 1);
 * - broadcast (ring): a chain from the root in k = pipeline_chunks chunks: the member d after the root receives chunk
 *   s-d+1 and forwards chunk s-d in round s, n+k-2 rounds;
 * - tree: NCCL's double binary tree, both trees at once, each on half of the bytes in k = tree_chunks chunks: with D
 *   the deeper tree's depth and d the member's depth in a tree, in round s it receives chunk s-(D-d-1) from each
 *   child and sends chunk s-(D-d) to its parent (reduce), receives chunk s-(D+d-1) from its parent and sends chunk
 *   s-(D+d) to its children (broadcast), k+2D-1 rounds; across nodes with several members on each (node_tree),
 *   NCCL's tree: each member sends its chain share (chain_share) to its neighbours in the node in the background, and
 *   the head of channel c runs the double binary tree over the nodes on the channel's share in k = node_tree_chunks
 *   chunks with the heads of c on the other nodes (its rail); NCCL pipelines the two (the chain's fill and drain are
 *   left out, as its per-step latencies are protocol_latency's);
 * - hierarchical: the ring reduce-scatter inside the node (g-1 rounds), the ring all-reduce of the owned 1/g between
 *   the members of the same local index on the m nodes (2(m-1) rounds), the ring all-gather inside the node;
 * - direct all-to-all: one round, a2a_bytes to every peer, staggered (peer pos+i);
 * - two-hop all-to-all (DeepEP's internode kernels; even groups): dispatch, a first round in which the member sends
 *   each other node's member of its local index (its rail) two_hop_network_bytes and, beside them, each member of its
 *   node its a2a_bytes (the directs), then a second in which it forwards to each member of its node the a2a_bytes
 *   that the other nodes' members of its rail sent for it; combine (a skew by source), the forwards first (each member
 *   sends a member of its node what it returns to that member's rail on the other nodes), then the network messages
 *   and the directs (two_hop_all_to_all_time);
 * - NVLS: the traffic of each GPU's switch port, pipelined, the multimem load-reduce and the multicast store put
 *   bytes (1 + 1/n) on each port each way (nvls_time), which on a crossbar is what every member sending bytes
 *   (n+1) / (n (n-1)) to every other member puts there: two rounds of half of it (each paying a traversal), every
 *   transfer on the links for 1 / nvls_efficiency of its bytes, then the rest of the NVLS latency;
 * - NVLS-tree: NVLS's port traffic over the node's members in the background (each transfer for 1 /
 *   nvls_tree_efficiency of its bytes, NCCL's per-head cap included), and member i of each node runs the
 *   double binary tree over the nodes on its share (rail_share) in k = nvls_tree_chunks chunks; NCCL pipelines the
 *   parts chunk by chunk (the pipeline's fill and drain of the NVLS part are left out), then the rest of the NVLS
 *   latency. */
void member_schedule(const GroupShape& g, const CollectiveStep& step, int pos, ScheduleSink& sink);

/** Messages (sends) of every member's schedule of `step` over g. */
std::uint64_t schedule_messages(const GroupShape& g, const CollectiveStep& step);

/** The schedule timed round by round on g's links, all members in lockstep: a round lasts as long as its slowest
 * transfer, which takes its hop's latency plus the load of the busiest port it crosses over that port's bandwidth
 * (a member's GPU port, each direction, for transfers inside a node; its node's NIC local x ports_per_node / per_node
 * (the platform's rail blocks), each direction, for transfers between nodes); background transfers move beside the
 * rounds until the wait for them, and holds add their time (the longest member's). Transfers occupy the links for their
 * wire bytes. A synchronous alpha-beta model of the schedule, with no other traffic: the closed forms' model, derived
 * from the transfers. */
double schedule_time(const GroupShape& g, const CollectiveStep& step);

// ---- The schedule summed per edge: the flows level ----

/** Phases of a flows collective, run one after the other: hierarchical has three (intra-node reduce-scatter,
 * inter-node all-reduce, intra-node all-gather; those of a level with one member left out); two-hop two, its rounds
 * (InterNode: the network messages with the directs beside them; IntraNode: the forwards), the others one. */
enum class FlowPhase : std::uint8_t { Whole, IntraNode, InterNode };

std::vector<FlowPhase> flow_phases(const GroupShape& g, const CollectiveStep& step);

/** One edge of the schedule over a phase: what member_schedule sends from one member to `to` (a position) over it,
 * summed (`bytes`), and the bytes it occupies the links for when not bytes x wire_factor (`wire`, < 0: that). A
 * member's `Switch` transfers make one edge, through the switch to the next member of its node: each GPU's NVLink
 * port then carries the same load in each direction as the per-pair transfers put on it, with n - 1 times fewer
 * edges, and the collective counts as one max-min flow under sharing with other traffic, as NCCL's NVLS kernel is
 * one stream of work per channel, not one per peer. */
struct ScheduleEdge {
  int to = 0;
  std::uint64_t bytes = 0;
  double wire = -1.0;
  double on_wire() const { return wire < 0 ? static_cast<double>(bytes) : wire; }
};

/** Member `pos`'s edges in `phase`, with their wire bytes set when the collective's wire factor is not 1. Equal to the
 * schedule's sends summed per connection and peer (to the rounding of the chunks), tested so. */
std::vector<ScheduleEdge> member_edges(const GroupShape& g, const CollectiveStep& step, FlowPhase phase, int pos);

/** The edges that end at member `pos` in `phase`, each with its sender in `to`: what the members it receives from
 * send it there (two-hop only, whose edges differ per member; the others' are known by formula). */
std::vector<ScheduleEdge> incoming_edges(const GroupShape& g, const CollectiveStep& step, FlowPhase phase, int pos);

} // namespace partsim
