// Collectives at `steps` fidelity (engine-internal): every message of ring, double binary tree, hierarchical,
// all-to-all and broadcast as a SimGrid rendezvous communication between the two GPU hosts. See docs/collectives.md.
#include "collective_groups.hpp"

#include "partsim/common/error.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Mailbox.hpp>

#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>
#include <utility>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace partsim::engine {

namespace {

using Group = CollectiveGroup;

/** The transfers a rank posts in one step of an algorithm, waited for together. Each message carries its size, so
 * the receiver counts what arrived. Wait is the time with none of them moving; a transfer moves from its start
 * (both sides posted: SimGrid's start time of a rendezvous comm) to its finish. */
class StepTransfers {
 public:
  /** `wire_factor`: bytes on the links per byte of data (the collective's, wire_factor). */
  StepTransfers(RunContext& ctx, RankTimeline& timeline, double wire_factor)
      : ctx_(ctx), timeline_(timeline), wire_factor_(wire_factor) {}

  /** Sends `bytes` (what the receiver counts) as a transfer of `wire` bytes on the links (default: bytes x the
   * protocol's wire factor). Not
   * detached (which would save the sender's wait): SimGrid 3.32 finds a finished detached comm in one list of all of
   * them, quadratic in the messages in flight (30% slower at 1024 ranks). */
  void send(sg4::Mailbox* to, std::uint64_t bytes, double wire = -1.0, bool background = false) {
    if (!background) mark_posted();
    (background ? background_ : comms_)
        .push_back(to->put_async(std::make_unique<std::uint64_t>(bytes).release(),
                                 wire < 0 ? std::ceil(static_cast<double>(bytes) * wire_factor_) : wire));
    timeline_.bytes_sent += bytes;
    ++timeline_.messages_sent;
    ++ctx_.result.messages;
    ctx_.event_done();
  }

  /** Holds the rank in the collective for `seconds` more (latency the messages do not pay), as communication. */
  void hold(double seconds) {
    if (seconds <= 0) return;
    const double from = sg4::Engine::get_clock();
    sg4::this_actor::sleep_for(seconds);
    timeline_.record(IntervalKind::Communication, from, sg4::Engine::get_clock());
  }

  void receive(sg4::Mailbox* from, bool background = false) {
    if (background) {
      background_received_.push_back(nullptr);
      background_.push_back(from->get_async<std::uint64_t>(&background_received_.back()));
      return;
    }
    mark_posted();
    received_.push_back(nullptr); // a deque: the address SimGrid writes to stays valid
    comms_.push_back(from->get_async<std::uint64_t>(&received_.back()));
  }

  /** Waits for the transfers posted with `background` (they moved beside the steps waited for since, which the
   * timeline already holds as communication or wait): the time it blocks here is communication. */
  void wait_background() {
    const double from = sg4::Engine::get_clock();
    for (const sg4::CommPtr& c : background_) c->wait();
    timeline_.record(IntervalKind::Communication, from, sg4::Engine::get_clock());
    for (std::uint64_t* p : background_received_) {
      const std::unique_ptr<std::uint64_t> arrived(p);
      timeline_.bytes_received += *arrived;
    }
    background_.clear();
    background_received_.clear();
  }

  void wait() {
    if (comms_.empty()) return;
    // One wait per comm: Comm::wait_all waits for any of them over and over, quadratic in their number.
    for (const sg4::CommPtr& c : comms_) c->wait();
    spans_.clear();
    for (const sg4::CommPtr& c : comms_) spans_.emplace_back(c->get_start_time(), c->get_finish_time());
    std::sort(spans_.begin(), spans_.end());
    double cursor = posted_;
    for (const auto& [begin, end] : spans_) {
      if (end <= cursor) continue;
      const double from = std::max(begin, cursor);
      timeline_.record(IntervalKind::Wait, cursor, from);
      timeline_.record(IntervalKind::Communication, from, end);
      cursor = end;
    }
    for (std::uint64_t* p : received_) {
      const std::unique_ptr<std::uint64_t> arrived(p);
      timeline_.bytes_received += *arrived;
    }
    comms_.clear();
    received_.clear();
    posted_ = -1.0;
  }

 private:
  void mark_posted() {
    if (posted_ < 0) posted_ = sg4::Engine::get_clock();
  }

  RunContext& ctx_;
  RankTimeline& timeline_;
  double wire_factor_ = 1.0;
  std::vector<sg4::CommPtr> comms_;
  std::deque<std::uint64_t*> received_;
  std::vector<sg4::CommPtr> background_;
  std::deque<std::uint64_t*> background_received_;
  std::vector<std::pair<double, double>> spans_;
  double posted_ = -1.0;
};

// ---- Steps: every message of the algorithm ----

/** One ring a rank takes part in: where it sends, where it receives, its index in the ring and the bytes the ring
 * carries. */
struct RingLane {
  sg4::Mailbox* out = nullptr;
  sg4::Mailbox* in = nullptr;
  int index = 0;
  std::uint64_t bytes = 0;
};

/** `steps` ring steps over rings of n, all at once: in step s the rank at ring index `i` of each lane sends chunk
 * (i + shift - s) of the lane's bytes cut in n to `out` and receives its left neighbour's from `in`. Reduce-scatter:
 * shift 0; the all-gather that follows it: shift 1 (the rank then owns chunk i + 1); a lone all-gather: shift 0. */
void ring_phase(StepTransfers& x, const std::vector<RingLane>& lanes, int n, int shift, int steps) {
  for (int s = 0; s < steps; ++s) {
    for (const RingLane& lane : lanes) {
      x.send(lane.out, chunk(lane.bytes, n, mod(lane.index + shift - s, n)));
      x.receive(lane.in);
    }
    x.wait();
  }
}

void ring_phase(StepTransfers& x, sg4::Mailbox* out, sg4::Mailbox* in, int pos, int n, std::uint64_t bytes, int shift,
                int steps) {
  ring_phase(x, {RingLane{out, in, pos, bytes}}, n, shift, steps);
}

/** The group's channels (collective_groups.hpp), each on its share of the bytes. */
void ring_steps(StepTransfers& x, const Group& g, const CollectiveStep& step, int pos) {
  const int n = g.size;
  std::vector<RingLane> lanes;
  for (int c = 0; c < g.channels; ++c) {
    const auto base = static_cast<std::size_t>(c) * static_cast<std::size_t>(n);
    lanes.push_back({g.ring_in[base + static_cast<std::size_t>(ring_next(g, c, pos))],
                     g.ring_in[base + static_cast<std::size_t>(pos)], ring_index(g, c, pos),
                     chunk(step.bytes, g.channels, c)});
  }
  switch (step.op) {
  case CollectiveOp::AllReduce:
    ring_phase(x, lanes, n, 0, n - 1);
    ring_phase(x, lanes, n, 1, n - 1);
    break;
  case CollectiveOp::ReduceScatter:
  case CollectiveOp::AllGather:
    ring_phase(x, lanes, n, 0, n - 1);
    break;
  default:
    PARTSIM_CHECK(false) << to_string(step.op) << " has no ring steps";
  }
}

/** Pipelined chain from the root: k chunks; the rank at chain index d receives chunk s-d+1 and forwards chunk s-d
 * in step s, so the last chunk reaches the end after n+k-2 steps. */
void broadcast_steps(StepTransfers& x, const Group& g, const CollectiveStep& step, int pos) {
  const int n = g.size;
  const int d = mod(pos - step.root, n);
  const auto k = static_cast<int>(
      pipeline_chunks(step.op, step.algorithm, n, wire_bytes(g, step, static_cast<double>(step.bytes)), g.slowest));
  sg4::Mailbox* out = g.ring_in[static_cast<std::size_t>((pos + 1) % n)];
  sg4::Mailbox* in = g.ring_in[static_cast<std::size_t>(pos)];
  for (int s = 0; s < n + k - 2; ++s) {
    if (d > 0 && s - d + 1 >= 0 && s - d + 1 < k) x.receive(in);
    if (d < n - 1 && s - d >= 0 && s - d < k) x.send(out, chunk(step.bytes, k, s - d));
    x.wait();
  }
}

/** Double binary tree, both trees at once, each on half the data in k chunks, for the member at index i of `tree`.
 * With D the deeper tree's depth and d the member's depth in a tree, in step s it receives chunk s-(D-d-1) from each
 * child and sends chunk s-(D-d) to its parent (reduce), receives chunk s-(D+d-1) from its parent and sends chunk
 * s-(D+d) to its children (broadcast): the root broadcasts a chunk in the step after it has reduced it, and all four
 * streams overlap. `up(t, j)`: the mailbox from tree index j to its parent in tree t; `down(t, j)`: to j from its
 * parent. */
template <typename Up, typename Down>
void tree_schedule(StepTransfers& x, const DoubleBinaryTree& tree, int i, int k,
                   const std::array<std::uint64_t, 2>& half, const Up& up, const Down& down) {
  const int depth = tree.max_depth;
  const auto p = static_cast<std::size_t>(i);
  auto in_range = [k](int j) { return j >= 0 && j < k; };
  for (int s = 0; s < k + 2 * depth - 1; ++s) {
    for (std::size_t t = 0; t < 2; ++t) {
      const int d = tree.depth[t][p];
      const int parent = tree.parent[t][p];
      for (int c : tree.children[t][p])
        if (c >= 0 && in_range(s - (depth - d - 1))) x.receive(up(t, c));
      if (parent >= 0 && in_range(s - (depth - d))) x.send(up(t, i), chunk(half[t], k, s - (depth - d)));
      if (parent >= 0 && in_range(s - (depth + d - 1))) x.receive(down(t, i));
      for (int c : tree.children[t][p])
        if (c >= 0 && in_range(s - (depth + d))) x.send(down(t, c), chunk(half[t], k, s - (depth + d)));
    }
    x.wait();
  }
}

/** NCCL's double binary tree over the group (tree_schedule), in tree_chunks chunks. */
void tree_steps(StepTransfers& x, const Group& g, const CollectiveStep& step, int pos) {
  const auto k =
      static_cast<int>(tree_chunks(*g.tree, wire_bytes(g, step, static_cast<double>(step.bytes)), g.slowest));
  tree_schedule(
      x, *g.tree, pos, k, {step.bytes / 2, step.bytes - step.bytes / 2},
      [&](std::size_t t, int j) { return g.tree_up[t][static_cast<std::size_t>(j)]; },
      [&](std::size_t t, int j) { return g.tree_down[t][static_cast<std::size_t>(j)]; });
}

/** Intra-node ring reduce-scatter (g-1 steps), ring all-reduce of the owned 1/g between the members of the same local
 * index on the m nodes (2(m-1) steps), intra-node ring all-gather (g-1 steps). */
void hierarchical_steps(StepTransfers& x, const Group& g, const CollectiveStep& step, int pos) {
  const auto p = static_cast<std::size_t>(pos);
  const int node = g.node[p];
  const int local = g.local[p];
  const int per_node = g.per_node;
  const auto m = static_cast<int>(g.members.size());
  const auto& mine = g.members[static_cast<std::size_t>(node)];
  sg4::Mailbox* intra_out =
      g.intra_in[static_cast<std::size_t>(mine[static_cast<std::size_t>((local + 1) % per_node)])];
  if (per_node > 1) ring_phase(x, intra_out, g.intra_in[p], local, per_node, step.bytes, 0, per_node - 1);
  const std::uint64_t part = per_node > 1 ? chunk(step.bytes, per_node, (local + 1) % per_node) : step.bytes;
  if (m > 1) {
    const int right = g.members[static_cast<std::size_t>((node + 1) % m)][static_cast<std::size_t>(local)];
    sg4::Mailbox* out = g.inter_in[static_cast<std::size_t>(right)];
    ring_phase(x, out, g.inter_in[p], node, m, part, 0, m - 1);
    ring_phase(x, out, g.inter_in[p], node, m, part, 1, m - 1);
  }
  if (per_node > 1) ring_phase(x, intra_out, g.intra_in[p], local, per_node, step.bytes, 1, per_node - 1);
}

/** Every rank sends chunk q of its input to rank q and receives its chunk from every peer, all at once. Peers are at
 * most one all-to-all apart, so a mailbox per receiver and parity keeps the rounds apart. */
void all_to_all_steps(StepTransfers& x, Group& g, const CollectiveStep& step, int pos) {
  const auto p = static_cast<std::size_t>(pos);
  const std::size_t parity = g.a2a_begun[p]++ & 1;
  for (int i = 1; i < g.size; ++i) {
    const int q = (pos + i) % g.size; // staggered, so no rank is everyone's first target
    x.send(g.a2a_in[parity][static_cast<std::size_t>(q)], a2a_bytes(g, step, pos, q));
    x.receive(g.a2a_in[parity][p]);
  }
  x.wait();
}

/** NVLink SHARP as the traffic of each GPU's switch port: pipelined, the multimem load-reduce and the multicast
 * store put bytes (1 + 1/n) on each port each way (nvls_time), which on a crossbar is what every member sending
 * bytes (n+1) / (n (n-1)) to every other member puts there. Two rounds of half of it (the reduce and the multicast,
 * each paying a traversal), every transfer occupying the links for 1 / nvls_efficiency of its bytes (the switch's
 * reductions run below the link rate), then the rest of the NVLS latency the messages have not paid. */
void nvls_steps(StepTransfers& x, Group& g, const CollectiveStep& step, int pos) {
  const auto p = static_cast<std::size_t>(pos);
  for (int round = 0; round < 2; ++round) {
    const std::size_t parity = g.a2a_begun[p]++ & 1;
    for (int i = 1; i < g.size; ++i) {
      const int q = (pos + i) % g.size;
      const std::uint64_t bytes = chunk(nvls_peer_bytes(g, step.bytes, i), 2, round);
      x.send(g.a2a_in[parity][static_cast<std::size_t>(q)], bytes,
             static_cast<double>(bytes) / g.links.nvls_efficiency);
      x.receive(g.a2a_in[parity][p]);
    }
    x.wait();
  }
  x.hold(g.links.nvls_latency - 2 * g.links.intra.latency);
}

/** NVLS-tree (NCCL's NVLS_TREE): inside the node, NVLS's port traffic over the node's members (nvls_steps' per-pair
 * form, in one round); between the nodes, member i of each node runs the double binary tree over the nodes on its
 * share (rail_share), as tree_steps does over a group. NCCL pipelines the parts chunk by chunk, so the NVLS traffic
 * moves beside the tree's steps (background transfers, waited for at the end) rather than before and after them: the
 * pipeline's fill and drain (one chunk of the NVLS part) are left out. Then the rest of the NVLS latency. */
void nvls_tree_steps(StepTransfers& x, Group& g, const CollectiveStep& step, int pos) {
  const auto p = static_cast<std::size_t>(pos);
  const auto& mine = g.members[static_cast<std::size_t>(g.node[p])];
  const int local = g.local[p];
  const int per_node = g.per_node;
  if (per_node > 1) {
    const std::size_t parity = g.a2a_begun[p]++ & 1;
    for (int i = 1; i < per_node; ++i) {
      const int q = mine[static_cast<std::size_t>((local + i) % per_node)];
      const std::uint64_t bytes = nvls_node_peer_bytes(g, step.bytes, i);
      x.send(g.a2a_in[parity][static_cast<std::size_t>(q)], bytes, static_cast<double>(bytes) / g.links.nvls_efficiency,
             true);
      x.receive(g.a2a_in[parity][p], true);
    }
  }
  const auto m = static_cast<int>(g.members.size());
  if (m > 1) { // the rail's tree over the nodes: tree index = node index, mailboxes by the member's position
    const std::uint64_t share = rail_share(g, step.bytes, pos);
    const auto k = static_cast<int>(
        nvls_tree_chunks(m, per_node, wire_bytes(g, step, static_cast<double>(step.bytes)), g.slowest));
    tree_schedule(
        x, *g.rail_tree, g.node[p], k, {share / 2, share - share / 2},
        [&](std::size_t t, int j) { return g.rail_up[t][static_cast<std::size_t>(rail_member(g, j, pos))]; },
        [&](std::size_t t, int j) { return g.rail_down[t][static_cast<std::size_t>(rail_member(g, j, pos))]; });
  }
  x.wait_background();
  x.hold(g.links.nvls_latency - (per_node > 1 ? g.links.intra.latency : 0.0));
}

} // namespace

void run_steps(RunContext& ctx, RankTimeline& timeline, const CollectiveStep& step, CollectiveGroup& g, int pos) {
  StepTransfers x(ctx, timeline, wire_factor(g, step));
  switch (step.algorithm) {
  case CollectiveAlgorithm::Ring:
    step.op == CollectiveOp::Broadcast ? broadcast_steps(x, g, step, pos) : ring_steps(x, g, step, pos);
    break;
  case CollectiveAlgorithm::Tree:
    tree_steps(x, g, step, pos);
    break;
  case CollectiveAlgorithm::Hierarchical:
    hierarchical_steps(x, g, step, pos);
    break;
  case CollectiveAlgorithm::Direct:
    all_to_all_steps(x, g, step, pos);
    break;
  case CollectiveAlgorithm::Nvls:
    nvls_steps(x, g, step, pos);
    break;
  case CollectiveAlgorithm::NvlsTree:
    nvls_tree_steps(x, g, step, pos);
    break;
  }
  // The protocol's latency (its base and per-step figures beyond the links'), after the messages: in a ring or a tree
  // every step waits for the one before, so where it is paid does not change the end.
  x.hold(protocol_latency(g, step));
}

} // namespace partsim::engine
