// One description per collective algorithm (collective_schedule.hpp): each member's transfers round by round, their
// sums per edge, their count and their time on the two-level links.
#include "partsim/model/collective_schedule.hpp"

#include "partsim/common/error.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <tuple>
#include <utility>

namespace partsim {

void place_members(GroupShape& g, const std::vector<int>& node_key) {
  g.size = static_cast<int>(node_key.size());
  g.node.clear();
  g.local.clear();
  g.members.clear();
  std::map<int, int> index_of;
  for (int pos = 0; pos < g.size; ++pos) {
    const auto [at, added] =
        index_of.emplace(node_key[static_cast<std::size_t>(pos)], static_cast<int>(g.members.size()));
    if (added) g.members.emplace_back();
    const int index = at->second;
    g.node.push_back(index);
    g.local.push_back(static_cast<int>(g.members[static_cast<std::size_t>(index)].size()));
    g.members[static_cast<std::size_t>(index)].push_back(pos);
  }
  g.per_node = 1;
  g.even = true;
  for (const auto& mine : g.members) {
    g.per_node = std::max(g.per_node, static_cast<int>(mine.size()));
    g.even = g.even && mine.size() == g.members.front().size();
  }
}

void make_rings(GroupShape& g) {
  g.ring_at.clear();
  g.ring_index.clear();
  if (g.channels <= 1) return;
  const auto channels = static_cast<std::size_t>(g.channels);
  g.ring_at.assign(channels, {});
  g.ring_index.assign(channels, std::vector<int>(static_cast<std::size_t>(g.size), 0));
  for (std::size_t c = 0; c < channels; ++c) {
    auto& at = g.ring_at[c];
    for (std::size_t k = 0; k < g.members.size(); ++k) {
      const auto& mine = g.members[k];
      const auto size = static_cast<int>(mine.size());
      const int entry = static_cast<int>(c) * size / g.channels;
      // Even nodes from `entry` up (leaving at entry - 1), odd nodes from entry - 1 down (leaving at entry).
      for (int j = 0; j < size; ++j)
        at.push_back(mine[static_cast<std::size_t>(k % 2 == 0 ? mod(entry + j, size) : mod(entry - 1 - j, size))]);
    }
    for (std::size_t i = 0; i < at.size(); ++i) g.ring_index[c][static_cast<std::size_t>(at[i])] = static_cast<int>(i);
  }
}

namespace {

using Group = GroupShape;

void send(ScheduleSink& sink, Lane lane, int index, int to, std::uint64_t bytes, double wire = -1.0,
          bool background = false) {
  sink.post({lane, static_cast<std::uint8_t>(index), true, background, to, bytes, wire});
}

void receive(ScheduleSink& sink, Lane lane, int index, int from, bool background = false) {
  sink.post({lane, static_cast<std::uint8_t>(index), false, background, from, 0, -1.0});
}

/** `rounds` ring rounds on every channel at once: in round s the member at ring index i of channel c sends chunk
 * (i + shift - s) of the channel's bytes cut in n to its next member and receives its previous member's.
 * Reduce-scatter: shift 0; the all-gather that follows it: shift 1; a lone all-gather: shift 0. */
void ring_rounds(const Group& g, const CollectiveStep& step, int pos, int shift, int rounds, ScheduleSink& sink) {
  const int n = g.size;
  for (int s = 0; s < rounds; ++s) {
    for (int c = 0; c < g.channels; ++c) {
      send(sink, Lane::Ring, c, ring_next(g, c, pos),
           chunk(chunk(step.bytes, g.channels, c), n, mod(ring_index(g, c, pos) + shift - s, n)));
      receive(sink, Lane::Ring, c, ring_previous(g, c, pos));
    }
    sink.end_round();
  }
}

/** A ring of n over `ring[i]` (positions) on `lane`, the member at index i, on `bytes`. */
void lane_ring_rounds(const std::vector<int>& ring, Lane lane, int i, std::uint64_t bytes, int shift, int rounds,
                      ScheduleSink& sink) {
  const auto n = static_cast<int>(ring.size());
  const int next = ring[static_cast<std::size_t>((i + 1) % n)];
  const int previous = ring[static_cast<std::size_t>((i + n - 1) % n)];
  for (int s = 0; s < rounds; ++s) {
    send(sink, lane, 0, next, chunk(bytes, n, mod(i + shift - s, n)));
    receive(sink, lane, 0, previous);
    sink.end_round();
  }
}

void ring_schedule(const Group& g, const CollectiveStep& step, int pos, ScheduleSink& sink) {
  const int n = g.size;
  switch (step.op) {
  case CollectiveOp::AllReduce:
    ring_rounds(g, step, pos, 0, n - 1, sink);
    ring_rounds(g, step, pos, 1, n - 1, sink);
    break;
  case CollectiveOp::ReduceScatter:
  case CollectiveOp::AllGather:
    ring_rounds(g, step, pos, 0, n - 1, sink);
    break;
  default:
    PARTSIM_CHECK(false) << to_string(step.op) << " has no ring schedule";
  }
}

void broadcast_schedule(const Group& g, const CollectiveStep& step, int pos, ScheduleSink& sink) {
  const int n = g.size;
  const int d = mod(pos - step.root, n);
  const auto k = static_cast<int>(
      pipeline_chunks(step.op, step.algorithm, n, wire_bytes(g, step, static_cast<double>(step.bytes)), g.slowest));
  for (int s = 0; s < n + k - 2; ++s) {
    if (d > 0 && s - d + 1 >= 0 && s - d + 1 < k) receive(sink, Lane::Ring, 0, (pos + n - 1) % n);
    if (d < n - 1 && s - d >= 0 && s - d < k) send(sink, Lane::Ring, 0, (pos + 1) % n, chunk(step.bytes, k, s - d));
    sink.end_round();
  }
}

/** Both trees of `tree` at once for the member at tree index i, each tree t on half[t] in k chunks (see
 * member_schedule); `at(j)` is tree index j's position. */
template <typename At>
void tree_rounds(const DoubleBinaryTree& tree, int i, int k, const std::array<std::uint64_t, 2>& half, Lane up,
                 Lane down, const At& at, ScheduleSink& sink) {
  const int depth = tree.max_depth;
  const auto p = static_cast<std::size_t>(i);
  auto in_range = [k](int j) { return j >= 0 && j < k; };
  for (int s = 0; s < k + 2 * depth - 1; ++s) {
    for (std::size_t t = 0; t < 2; ++t) {
      const auto ti = static_cast<int>(t);
      const int d = tree.depth[t][p];
      const int parent = tree.parent[t][p];
      for (int c : tree.children[t][p])
        if (c >= 0 && in_range(s - (depth - d - 1))) receive(sink, up, ti, at(c));
      if (parent >= 0 && in_range(s - (depth - d))) send(sink, up, ti, at(parent), chunk(half[t], k, s - (depth - d)));
      if (parent >= 0 && in_range(s - (depth + d - 1))) receive(sink, down, ti, at(parent));
      for (int c : tree.children[t][p])
        if (c >= 0 && in_range(s - (depth + d))) send(sink, down, ti, at(c), chunk(half[t], k, s - (depth + d)));
    }
    sink.end_round();
  }
}

/** A node tree member's chain messages (member_schedule): what it sends its chain parent (local - 1) and child
 * (local + 1), one message to the other member when g = 2, the neighbours it receives from, and the channel it heads.
 */
struct ChainMessages {
  std::vector<ScheduleEdge> sends;
  std::vector<int> from;
  int head = -1;
};

ChainMessages chain_messages(const Group& g, const CollectiveStep& step, int pos) {
  const auto p = static_cast<std::size_t>(pos);
  const auto& mine = g.members[static_cast<std::size_t>(g.node[p])];
  const int local = g.local[p];
  const int per_node = g.per_node;
  const int channels = node_tree_channels(g);
  const auto member = [&](int l) { return mine[static_cast<std::size_t>(mod(l, per_node))]; };
  const ChainShare own = chain_share(step.bytes, per_node, channels, local);
  const ChainShare after = chain_share(step.bytes, per_node, channels, mod(local + 1, per_node));
  const ChainShare before = chain_share(step.bytes, per_node, channels, mod(local - 1, per_node));
  ChainMessages m;
  m.head = own.head;
  if (per_node == 2) { // both neighbours are the other member
    if (own.up + own.down > 0) m.sends.push_back({member(local + 1), own.up + own.down});
    if (after.up + after.down > 0) m.from.push_back(member(local + 1));
    return m;
  }
  if (own.up > 0) m.sends.push_back({member(local - 1), own.up});
  if (own.down > 0) m.sends.push_back({member(local + 1), own.down});
  if (after.up > 0) m.from.push_back(member(local + 1));
  if (before.down > 0) m.from.push_back(member(local - 1));
  return m;
}

/** NCCL's tree across nodes (member_schedule): the chains' messages in the background and the rail tree of the channel
 * the member heads. */
void node_tree_schedule(const Group& g, const CollectiveStep& step, int pos, ScheduleSink& sink) {
  PARTSIM_CHECK(g.rail_tree) << "node tree schedule without the group's rail tree";
  const ChainMessages chain = chain_messages(g, step, pos);
  for (const ScheduleEdge& e : chain.sends) send(sink, Lane::Chain, 0, e.to, e.bytes, -1.0, true);
  for (const int from : chain.from) receive(sink, Lane::Chain, 0, from, true);
  if (chain.head >= 0) { // the rail's tree over the nodes: tree index = node index
    const int channels = node_tree_channels(g);
    const std::uint64_t share = chunk(step.bytes, channels, chain.head);
    // node_tree_chunks on the group's own rail tree (building one per member and step would be O(m) each).
    const auto k = static_cast<int>(tree_chunks(
        *g.rail_tree, std::floor(wire_bytes(g, step, static_cast<double>(step.bytes)) / channels), g.slowest));
    tree_rounds(
        *g.rail_tree, g.node[static_cast<std::size_t>(pos)], k, {share / 2, share - share / 2}, Lane::RailUp,
        Lane::RailDown, [&](int j) { return rail_member(g, j, pos); }, sink);
  }
  sink.wait_background();
}

void tree_schedule(const Group& g, const CollectiveStep& step, int pos, ScheduleSink& sink) {
  if (runs_node_tree(g)) {
    node_tree_schedule(g, step, pos, sink);
    return;
  }
  PARTSIM_CHECK(g.tree) << "tree schedule without the group's tree";
  const auto k =
      static_cast<int>(tree_chunks(*g.tree, wire_bytes(g, step, static_cast<double>(step.bytes)), g.slowest));
  tree_rounds(
      *g.tree, pos, k, {step.bytes / 2, step.bytes - step.bytes / 2}, Lane::TreeUp, Lane::TreeDown,
      [](int j) { return j; }, sink);
}

/** Where member `pos` of g is: its node's index, its index there, the members per node, the nodes and its node's
 * members. */
struct MemberAt {
  int node;
  int local;
  int per_node;
  int m;
  const std::vector<int>& mine;
};

MemberAt member_at(const Group& g, int pos) {
  const auto p = static_cast<std::size_t>(pos);
  return {g.node[p], g.local[p], g.per_node, static_cast<int>(g.members.size()),
          g.members[static_cast<std::size_t>(g.node[p])]};
}

void hierarchical_schedule(const Group& g, const CollectiveStep& step, int pos, ScheduleSink& sink) {
  const auto [node, local, per_node, m, mine] = member_at(g, pos);
  if (per_node > 1) lane_ring_rounds(mine, Lane::Intra, local, step.bytes, 0, per_node - 1, sink);
  const std::uint64_t part = per_node > 1 ? chunk(step.bytes, per_node, (local + 1) % per_node) : step.bytes;
  if (m > 1) {
    std::vector<int> rail;
    for (const auto& other : g.members) rail.push_back(other[static_cast<std::size_t>(local)]);
    lane_ring_rounds(rail, Lane::Inter, node, part, 0, m - 1, sink);
    lane_ring_rounds(rail, Lane::Inter, node, part, 1, m - 1, sink);
  }
  if (per_node > 1) lane_ring_rounds(mine, Lane::Intra, local, step.bytes, 1, per_node - 1, sink);
}

void all_to_all_schedule(const Group& g, const CollectiveStep& step, int pos, ScheduleSink& sink) {
  for (int i = 1; i < g.size; ++i) {
    const int q = (pos + i) % g.size; // staggered, so no member is everyone's first target
    send(sink, Lane::Peer, 0, q, a2a_bytes(g, step, pos, q));
    receive(sink, Lane::Peer, 0, (pos + g.size - i) % g.size);
  }
  sink.end_round();
}

bool two_hop_combine(const Group& g, const CollectiveStep& step) {
  const AllToAllSkew* skew = a2a_skew(g, step);
  return skew != nullptr && skew->by_source;
}

/** Whether a two-hop all-to-all over g has its NVLink round of forwards. */
bool two_hop_forwards(const Group& g) {
  return g.per_node > 1 && g.members.size() > 1;
}

void two_hop_schedule(const Group& g, const CollectiveStep& step, int pos, ScheduleSink& sink) {
  PARTSIM_CHECK(g.even) << "two_hop all-to-all over a group uneven over its nodes";
  // Not a structured binding: clang 14 (the fuzz target's) cannot capture one in a lambda.
  const MemberAt w = member_at(g, pos);
  const auto member = [&](int b, int l) { return g.members[static_cast<std::size_t>(b)][static_cast<std::size_t>(l)]; };
  const auto in_node = [&](int i) { return w.mine[static_cast<std::size_t>(mod(w.local + i, w.per_node))]; };
  const bool combine = two_hop_combine(g, step);
  Lane lane = Lane::Peer; // the first round's; the second's Hop
  const auto network_and_directs = [&] {
    for (int i = 1; i < w.m; ++i) {
      const int b = (w.node + i) % w.m;
      const int to = member(b, w.local);
      send(sink, lane, 0, to,
           combine ? two_hop_network_bytes(g, step, w.node, to) : two_hop_network_bytes(g, step, b, pos));
      receive(sink, lane, 0, member(mod(w.node - i, w.m), w.local));
    }
    for (int i = 1; i < w.per_node; ++i) {
      send(sink, lane, 0, in_node(i), a2a_bytes(g, step, pos, in_node(i)));
      receive(sink, lane, 0, in_node(-i));
    }
    sink.end_round();
    lane = Lane::Hop;
  };
  const auto forwards = [&] {
    if (!two_hop_forwards(g)) return;
    for (int i = 1; i < w.per_node; ++i) {
      const int to = in_node(i);
      std::uint64_t bytes = 0; // dispatch: what my rail's other sources sent `to`; combine: what I return to its rail
      for (int b = 0; b < w.m; ++b)
        if (b != w.node)
          bytes += combine ? a2a_bytes(g, step, pos, member(b, g.local[static_cast<std::size_t>(to)]))
                           : a2a_bytes(g, step, member(b, w.local), to);
      send(sink, lane, 0, to, bytes);
      receive(sink, lane, 0, in_node(-i));
    }
    sink.end_round();
    lane = Lane::Hop;
  };
  if (combine) {
    forwards();
    network_and_directs();
  } else {
    network_and_directs();
    forwards();
  }
}

void nvls_schedule(const Group& g, const CollectiveStep& step, int pos, ScheduleSink& sink) {
  for (int round = 0; round < 2; ++round) {
    for (int i = 1; i < g.size; ++i) {
      const std::uint64_t bytes = chunk(nvls_peer_bytes(g, step.bytes, i), 2, round);
      send(sink, Lane::Switch, 0, (pos + i) % g.size, bytes, static_cast<double>(bytes) / g.links.nvls_efficiency);
      receive(sink, Lane::Switch, 0, (pos + g.size - i) % g.size);
    }
    sink.end_round();
  }
  sink.hold(g.links.nvls_latency - 2 * g.links.intra.latency);
}

void nvls_tree_schedule(const Group& g, const CollectiveStep& step, int pos, ScheduleSink& sink) {
  const auto p = static_cast<std::size_t>(pos);
  const auto& mine = g.members[static_cast<std::size_t>(g.node[p])];
  const int local = g.local[p];
  const int per_node = g.per_node;
  const double efficiency = nvls_tree_efficiency(per_node, static_cast<int>(g.members.size()), g.links);
  if (per_node > 1)
    for (int i = 1; i < per_node; ++i) {
      const std::uint64_t bytes = nvls_node_peer_bytes(g, step.bytes, i);
      send(sink, Lane::Switch, 0, mine[static_cast<std::size_t>((local + i) % per_node)], bytes,
           static_cast<double>(bytes) / efficiency, true);
      receive(sink, Lane::Switch, 0, mine[static_cast<std::size_t>((local + per_node - i) % per_node)], true);
    }
  const auto m = static_cast<int>(g.members.size());
  if (m > 1) { // the rail's tree over the nodes: tree index = node index
    PARTSIM_CHECK(g.rail_tree) << "nvls_tree schedule without the group's rail tree";
    const std::uint64_t share = rail_share(g, step.bytes, pos);
    // nvls_tree_chunks on the group's own rail tree (building one per member and step would be O(m) each).
    const auto k = static_cast<int>(tree_chunks(
        *g.rail_tree, std::floor(wire_bytes(g, step, static_cast<double>(step.bytes)) / per_node), g.slowest));
    tree_rounds(
        *g.rail_tree, g.node[p], k, {share / 2, share - share / 2}, Lane::RailUp, Lane::RailDown,
        [&](int j) { return rail_member(g, j, pos); }, sink);
  }
  sink.wait_background();
  sink.hold(g.links.nvls_latency - (per_node > 1 ? g.links.intra.latency : 0.0));
}

} // namespace

void member_schedule(const GroupShape& g, const CollectiveStep& step, int pos, ScheduleSink& sink) {
  if (g.size < 2) return;
  switch (step.algorithm) {
  case CollectiveAlgorithm::Ring:
    step.op == CollectiveOp::Broadcast ? broadcast_schedule(g, step, pos, sink) : ring_schedule(g, step, pos, sink);
    break;
  case CollectiveAlgorithm::Tree:
    tree_schedule(g, step, pos, sink);
    break;
  case CollectiveAlgorithm::Hierarchical:
    hierarchical_schedule(g, step, pos, sink);
    break;
  case CollectiveAlgorithm::Direct:
    all_to_all_schedule(g, step, pos, sink);
    break;
  case CollectiveAlgorithm::TwoHop:
    two_hop_schedule(g, step, pos, sink);
    break;
  case CollectiveAlgorithm::Nvls:
    nvls_schedule(g, step, pos, sink);
    break;
  case CollectiveAlgorithm::NvlsTree:
    nvls_tree_schedule(g, step, pos, sink);
    break;
  }
  // The protocol's latency (its base and per-step figures beyond the links'), after the transfers: in a ring or a
  // tree every round waits for the one before, so where it is paid does not change the end.
  sink.hold(protocol_latency(g, step));
}

namespace {

class CountingSink final : public ScheduleSink {
 public:
  void post(const Post& p) override { sends += p.send ? 1 : 0; }
  void end_round() override {}
  void wait_background() override {}
  void hold(double) override {}
  std::uint64_t sends = 0;
};

/** Every member's schedule, kept by round: the sends of each round (background ones apart), the longest hold in
 * each, and where the background transfers began and were waited for. */
class RecordingSink final : public ScheduleSink {
 public:
  struct Send {
    int from = 0;
    int to = 0;
    double wire = 0.0;
  };
  struct Round {
    std::vector<Send> sends;
    double hold = 0.0;
  };

  RecordingSink(const GroupShape& g, const CollectiveStep& step) : factor_(wire_factor(g, step)) {}

  void start(int member) {
    member_ = member;
    round_ = 0;
    hold_ = 0.0;
  }
  void post(const Post& p) override {
    if (!p.send) return;
    const double wire = p.wire < 0 ? std::ceil(static_cast<double>(p.bytes) * factor_) : p.wire;
    if (p.background) {
      if (background.empty()) background_from = round_;
      background.push_back({member_, p.peer, wire});
    } else {
      at(round_).sends.push_back({member_, p.peer, wire});
    }
  }
  void end_round() override {
    at(round_).hold = std::max(at(round_).hold, hold_);
    hold_ = 0.0;
    ++round_;
  }
  void wait_background() override { background_until = std::max(background_until, round_); }
  void hold(double seconds) override {
    hold_ += std::max(0.0, seconds);
    at(round_).hold = std::max(at(round_).hold, hold_);
  }

  std::vector<Round> rounds;
  std::vector<Send> background;
  int background_from = 0;
  int background_until = 0;

 private:
  Round& at(int r) {
    if (rounds.size() <= static_cast<std::size_t>(r)) rounds.resize(static_cast<std::size_t>(r) + 1);
    return rounds[static_cast<std::size_t>(r)];
  }

  double factor_ = 1.0;
  int member_ = 0;
  int round_ = 0;
  double hold_ = 0.0;
};

/** Time of transfers moving at once (see schedule_time). */
double concurrent_time(const GroupShape& g, const std::vector<RecordingSink::Send>& sends) {
  if (sends.empty()) return 0.0;
  const int ports = std::max(1, g.links.ports_per_node);
  std::map<std::tuple<bool, bool, int>, double> load; // (inter, out, port) -> wire bytes
  const auto port = [&](bool inter, int member) {
    const auto m = static_cast<std::size_t>(member);
    return inter ? g.node[m] * ports + g.local[m] * ports / g.per_node : member;
  };
  for (const auto& s : sends) {
    const bool inter = g.node[static_cast<std::size_t>(s.from)] != g.node[static_cast<std::size_t>(s.to)];
    load[{inter, true, port(inter, s.from)}] += s.wire;
    load[{inter, false, port(inter, s.to)}] += s.wire;
  }
  double longest = 0.0;
  for (const auto& s : sends) {
    const bool inter = g.node[static_cast<std::size_t>(s.from)] != g.node[static_cast<std::size_t>(s.to)];
    const LinkCost& link = inter ? g.links.inter : g.links.intra;
    const double busiest = std::max(load[{inter, true, port(inter, s.from)}], load[{inter, false, port(inter, s.to)}]);
    longest = std::max(longest, link.latency + busiest / link.bandwidth);
  }
  return longest;
}

} // namespace

std::uint64_t schedule_messages(const GroupShape& g, const CollectiveStep& step) {
  CountingSink sink;
  for (int pos = 0; pos < g.size; ++pos) member_schedule(g, step, pos, sink);
  return sink.sends;
}

double schedule_time(const GroupShape& g, const CollectiveStep& step) {
  RecordingSink sink(g, step);
  for (int pos = 0; pos < g.size; ++pos) {
    sink.start(pos);
    member_schedule(g, step, pos, sink);
  }
  double t = 0.0;
  double since_background = 0.0;
  for (std::size_t r = 0; r < sink.rounds.size(); ++r) {
    if (!sink.background.empty() && static_cast<int>(r) == sink.background_until) {
      t += std::max(0.0, concurrent_time(g, sink.background) - since_background);
      since_background = 0.0;
    }
    const double round = concurrent_time(g, sink.rounds[r].sends) + sink.rounds[r].hold;
    t += round;
    if (static_cast<int>(r) >= sink.background_from) since_background += round;
  }
  return t;
}

// ---- Edges ----

namespace {

/** Bytes a ring edge carries over a whole ring collective: 2(n-1)/n S for all-reduce, (n-1)/n S otherwise. */
std::uint64_t ring_edge_bytes(CollectiveOp op, std::uint64_t bytes, int n) {
  const std::uint64_t once = bytes - bytes / static_cast<std::uint64_t>(n);
  return op == CollectiveOp::AllReduce ? 2 * once : once;
}

std::uint64_t tree_half(std::uint64_t bytes, std::size_t tree) {
  return tree == 0 ? bytes / 2 : bytes - bytes / 2;
}

/** Member `pos`'s edges in its rail's tree over the nodes (NVLS-tree, a node tree), each tree on half of `share`. */
void rail_tree_edges(const GroupShape& g, int pos, std::uint64_t share, std::vector<ScheduleEdge>& edges) {
  const auto node = static_cast<std::size_t>(g.node[static_cast<std::size_t>(pos)]);
  for (std::size_t t = 0; t < 2; ++t) {
    if (g.rail_tree->parent[t][node] >= 0)
      edges.push_back({rail_member(g, g.rail_tree->parent[t][node], pos), tree_half(share, t)});
    for (int c : g.rail_tree->children[t][node])
      if (c >= 0) edges.push_back({rail_member(g, c, pos), tree_half(share, t)});
  }
}

/** A transfer through the switch at NVLink SHARP's `efficiency` (nvls_efficiency, or nvls_tree_efficiency). */
ScheduleEdge switch_edge(std::uint64_t bytes, int to, double efficiency) {
  return {to, bytes, static_cast<double>(bytes) / efficiency};
}

/** Collects one round's transfers of a member's schedule: its sends (as edges) and the peers it receives from. */
class RoundSink final : public ScheduleSink {
 public:
  explicit RoundSink(int round) : round_(round) {}
  void post(const Post& p) override {
    if (round_at_ != round_) return;
    if (p.send)
      sends.push_back({p.peer, p.bytes, p.wire});
    else
      from.push_back(p.peer);
  }
  void end_round() override { ++round_at_; }
  void wait_background() override {}
  void hold(double) override {}

  std::vector<ScheduleEdge> sends;
  std::vector<int> from;

 private:
  int round_ = 0;
  int round_at_ = 0;
};

/** The round of a two-hop all-to-all that `phase` runs (its index in flow_phases). */
int two_hop_round(const GroupShape& g, const CollectiveStep& step, FlowPhase phase) {
  const std::vector<FlowPhase> phases = flow_phases(g, step);
  const auto at = std::find(phases.begin(), phases.end(), phase);
  PARTSIM_CHECK(at != phases.end()) << "two_hop has no phase " << static_cast<int>(phase);
  return static_cast<int>(at - phases.begin());
}

RoundSink two_hop_round_of(const GroupShape& g, const CollectiveStep& step, FlowPhase phase, int pos) {
  RoundSink sink(two_hop_round(g, step, phase));
  member_schedule(g, step, pos, sink);
  return sink;
}

} // namespace

std::vector<ScheduleEdge> incoming_edges(const GroupShape& g, const CollectiveStep& step, FlowPhase phase, int pos) {
  PARTSIM_CHECK(step.algorithm == CollectiveAlgorithm::TwoHop) << "incoming_edges of " << to_string(step.algorithm);
  std::vector<ScheduleEdge> edges;
  for (const int q : two_hop_round_of(g, step, phase, pos).from)
    for (const ScheduleEdge& e : member_edges(g, step, phase, q))
      if (e.to == pos) edges.push_back({q, e.bytes, e.wire});
  return edges;
}

std::vector<FlowPhase> flow_phases(const GroupShape& g, const CollectiveStep& step) {
  if (step.algorithm == CollectiveAlgorithm::TwoHop) {
    if (!two_hop_forwards(g)) return {FlowPhase::InterNode};
    if (two_hop_combine(g, step)) return {FlowPhase::IntraNode, FlowPhase::InterNode};
    return {FlowPhase::InterNode, FlowPhase::IntraNode};
  }
  if (step.algorithm != CollectiveAlgorithm::Hierarchical) return {FlowPhase::Whole};
  std::vector<FlowPhase> phases;
  if (g.per_node > 1) phases.push_back(FlowPhase::IntraNode);
  if (g.members.size() > 1) phases.push_back(FlowPhase::InterNode);
  if (g.per_node > 1) phases.push_back(FlowPhase::IntraNode);
  return phases;
}

std::vector<ScheduleEdge> member_edges(const GroupShape& g, const CollectiveStep& step, FlowPhase phase, int pos) {
  const int n = g.size;
  const auto p = static_cast<std::size_t>(pos);
  std::vector<ScheduleEdge> edges;
  switch (step.algorithm) {
  case CollectiveAlgorithm::Ring:
    if (step.op != CollectiveOp::Broadcast)
      for (int c = 0; c < g.channels; ++c)
        edges.push_back({ring_next(g, c, pos), ring_edge_bytes(step.op, chunk(step.bytes, g.channels, c), n)});
    else if (mod(pos - step.root, n) < n - 1)
      edges.push_back({(pos + 1) % n, step.bytes});
    break;
  case CollectiveAlgorithm::Tree:
    if (runs_node_tree(g)) { // the chains' edges to the neighbours, and the rail tree's of the channel it heads
      const ChainMessages chain = chain_messages(g, step, pos);
      edges = chain.sends;
      if (chain.head >= 0) rail_tree_edges(g, pos, chunk(step.bytes, node_tree_channels(g), chain.head), edges);
      break;
    }
    for (std::size_t t = 0; t < 2; ++t) {
      if (g.tree->parent[t][p] >= 0) edges.push_back({g.tree->parent[t][p], tree_half(step.bytes, t)});
      for (int c : g.tree->children[t][p])
        if (c >= 0) edges.push_back({c, tree_half(step.bytes, t)});
    }
    break;
  case CollectiveAlgorithm::Hierarchical: {
    const auto node = static_cast<std::size_t>(g.node[p]);
    const auto local = static_cast<std::size_t>(g.local[p]);
    if (phase == FlowPhase::IntraNode) {
      const auto& mine = g.members[node];
      edges.push_back(
          {mine[(local + 1) % mine.size()], ring_edge_bytes(CollectiveOp::ReduceScatter, step.bytes, g.per_node)});
    } else {
      const std::uint64_t part = step.bytes / static_cast<std::uint64_t>(g.per_node);
      edges.push_back({g.members[(node + 1) % g.members.size()][local],
                       ring_edge_bytes(CollectiveOp::AllReduce, part, static_cast<int>(g.members.size()))});
    }
    break;
  }
  case CollectiveAlgorithm::Direct:
    for (int i = 1; i < n; ++i) edges.push_back({(pos + i) % n, a2a_bytes(g, step, pos, (pos + i) % n)});
    break;
  case CollectiveAlgorithm::TwoHop: // one edge per transfer of the phase's round
    edges = two_hop_round_of(g, step, phase, pos).sends;
    break;
  case CollectiveAlgorithm::Nvls:
    if (n > 1)
      edges.push_back(
          switch_edge(step.bytes + step.bytes / static_cast<std::uint64_t>(n), (pos + 1) % n, g.links.nvls_efficiency));
    break;
  case CollectiveAlgorithm::NvlsTree: { // both parts at once
    const auto& mine = g.members[static_cast<std::size_t>(g.node[p])];
    const int local = g.local[p];
    if (g.per_node > 1)
      edges.push_back(switch_edge(step.bytes + step.bytes / static_cast<std::uint64_t>(g.per_node),
                                  mine[static_cast<std::size_t>((local + 1) % g.per_node)],
                                  nvls_tree_efficiency(g.per_node, static_cast<int>(g.members.size()), g.links)));
    if (g.rail_tree) rail_tree_edges(g, pos, rail_share(g, step.bytes, pos), edges);
    break;
  }
  }
  const double factor = wire_factor(g, step);
  if (factor != 1.0)
    for (ScheduleEdge& e : edges)
      if (e.wire < 0) e.wire = std::ceil(static_cast<double>(e.bytes) * factor);
  return edges;
}

} // namespace partsim
