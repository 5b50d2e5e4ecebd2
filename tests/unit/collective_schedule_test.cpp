// One description per collective algorithm (collective_schedule.hpp), checked without SimGrid: every send has its
// receive in the same round, the bytes add up to the operation's, the message count is planned_messages', the flows
// level's edges are the schedule summed, and the schedule timed round by round is the closed form.
#include "partsim/model/collective_schedule.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace partsim {
namespace {

constexpr LinkCost kNvlink{1e-6, 300e9};
constexpr LinkCost kNet{5e-6, 25e9};

TwoLevelCost two_level(int ports) {
  TwoLevelCost links{kNvlink, kNet, ports};
  links.nvls_efficiency = 0.8;
  links.nvls_latency = 12e-6;
  links.intra_nvlink = true;
  return links;
}

/** A group of `per_node` members on each of `nodes` nodes, with `ports` NICs per node and the rings, trees and rail
 * trees the algorithms need. */
GroupShape shape(int per_node, int nodes, int ports, int requested_channels = 0) {
  GroupShape g;
  std::vector<int> node_key;
  for (int pos = 0; pos < per_node * nodes; ++pos) node_key.push_back(pos / per_node);
  place_members(g, node_key);
  g.links = two_level(ports);
  g.links.channels = requested_channels;
  g.slowest = slowest_link(g.links, per_node, nodes);
  g.channels =
      ring_channels(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, per_node, nodes, ports, requested_channels);
  make_rings(g);
  g.tree = double_binary_tree(g.size);
  g.rail_tree = double_binary_tree(nodes);
  return g;
}

CollectiveStep step_of(CollectiveOp op, CollectiveAlgorithm algorithm, std::uint64_t bytes) {
  CollectiveStep s;
  s.op = op;
  s.algorithm = algorithm;
  s.bytes = bytes;
  return s;
}

/** Every post of every member, by round (background posts in round -1). */
class Recorder final : public ScheduleSink {
 public:
  struct Entry {
    int round = 0;
    int member = 0;
    Post post;
  };
  void start(int member) {
    member_ = member;
    round_ = 0;
  }
  void post(const Post& p) override { entries.push_back({p.background ? -1 : round_, member_, p}); }
  void end_round() override { ++round_; }
  void wait_background() override { ++background_waits; }
  void hold(double seconds) override { held = std::max(held, seconds); }

  std::vector<Entry> entries;
  int background_waits = 0;
  double held = 0.0;

 private:
  int member_ = 0;
  int round_ = 0;
};

Recorder record(const GroupShape& g, const CollectiveStep& step) {
  Recorder r;
  for (int pos = 0; pos < g.size; ++pos) {
    r.start(pos);
    member_schedule(g, step, pos, r);
  }
  return r;
}

struct Case {
  std::string name;
  GroupShape group;
  CollectiveStep step;
};

/** Every algorithm on the shapes it runs on: inside one node, across nodes with one NIC and with a NIC per member. */
std::vector<Case> cases() {
  std::vector<Case> all;
  const std::uint64_t bytes = 3 * 1024 * 1024 + 7; // not a multiple of anything: the chunks' rounding shows
  for (auto [per_node, nodes, ports] : {std::tuple{8, 1, 1}, {4, 2, 1}, {4, 4, 4}, {8, 2, 8}, {1, 6, 1}}) {
    const GroupShape g = shape(per_node, nodes, ports);
    const std::string where = std::to_string(per_node) + "x" + std::to_string(nodes) + "/" + std::to_string(ports);
    for (CollectiveOp op : {CollectiveOp::AllReduce, CollectiveOp::ReduceScatter, CollectiveOp::AllGather})
      all.push_back({"ring " + to_string(op) + " " + where, g, step_of(op, CollectiveAlgorithm::Ring, bytes)});
    CollectiveStep broadcast = step_of(CollectiveOp::Broadcast, CollectiveAlgorithm::Ring, bytes);
    broadcast.root = g.size / 2;
    all.push_back({"broadcast " + where, g, broadcast});
    all.push_back({"tree " + where, g, step_of(CollectiveOp::AllReduce, CollectiveAlgorithm::Tree, bytes)});
    all.push_back({"all_to_all " + where, g, step_of(CollectiveOp::AllToAll, CollectiveAlgorithm::Direct, bytes)});
    if (nodes > 1)
      all.push_back({"two_hop " + where, g, step_of(CollectiveOp::AllToAll, CollectiveAlgorithm::TwoHop, bytes)});
    if (per_node > 1 && nodes > 1) {
      all.push_back(
          {"hierarchical " + where, g, step_of(CollectiveOp::AllReduce, CollectiveAlgorithm::Hierarchical, bytes)});
      all.push_back({"nvls_tree " + where, g, step_of(CollectiveOp::AllReduce, CollectiveAlgorithm::NvlsTree, bytes)});
    }
    if (nodes == 1)
      all.push_back({"nvls " + where, g, step_of(CollectiveOp::AllReduce, CollectiveAlgorithm::Nvls, bytes)});
  }
  return all;
}

TEST(CollectiveSchedule, EverySendHasItsReceiveInTheSameRound) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const Recorder r = record(c.group, c.step);
    std::multiset<std::tuple<int, int, int, int, int>> sends; // round, lane, index, from, to
    std::multiset<std::tuple<int, int, int, int, int>> receives;
    for (const auto& e : r.entries) {
      const auto lane = static_cast<int>(e.post.lane);
      if (e.post.send)
        sends.insert({e.round, lane, e.post.index, e.member, e.post.peer});
      else
        receives.insert({e.round, lane, e.post.index, e.post.peer, e.member});
      EXPECT_NE(e.post.peer, e.member);
    }
    EXPECT_FALSE(sends.empty());
    EXPECT_EQ(sends, receives);
  }
}

TEST(CollectiveSchedule, TheBytesAreTheOperations) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const Recorder r = record(c.group, c.step);
    std::uint64_t total = 0;
    for (const auto& e : r.entries) total += e.post.send ? e.post.bytes : 0;
    const auto n = static_cast<std::uint64_t>(c.group.size);
    const auto g = static_cast<std::uint64_t>(c.group.per_node);
    const auto m = static_cast<std::uint64_t>(c.group.members.size());
    const std::uint64_t s = c.step.bytes;
    switch (c.step.algorithm) {
    case CollectiveAlgorithm::Ring:
      // Every round moves each channel's whole share once; a broadcast chain moves the buffer n-1 times.
      if (c.step.op == CollectiveOp::Broadcast)
        EXPECT_EQ(total, (n - 1) * s);
      else
        EXPECT_EQ(total, (c.step.op == CollectiveOp::AllReduce ? 2 : 1) * (n - 1) * s);
      break;
    case CollectiveAlgorithm::Tree: // each half, up and down every edge of its tree
      EXPECT_EQ(total, 2 * (n - 1) * s);
      break;
    case CollectiveAlgorithm::Direct: // every chunk but the member's own
      EXPECT_EQ(total, (n - 1) * s);
      break;
    case CollectiveAlgorithm::TwoHop: // every chunk but the member's own, and the other nodes' forwarded in each node
      EXPECT_EQ(total, (n - 1) * s + (m - 1) * (g - 1) * s);
      break;
    case CollectiveAlgorithm::Hierarchical: { // two intra rings on s per node, the rails' rings on the owned parts
      const std::uint64_t intra = g > 1 ? 2 * (g - 1) * s * m : 0;
      EXPECT_EQ(total, intra + 2 * (m - 1) * s);
      break;
    }
    case CollectiveAlgorithm::Nvls: // s (1 + 1/n) through each member's port
      EXPECT_EQ(total, n * (s + s / n));
      break;
    case CollectiveAlgorithm::NvlsTree: // each node's switch traffic, and each rail's tree on its share
      EXPECT_EQ(total, n * (s + s / g) + 2 * (m - 1) * s);
      break;
    }
  }
}

TEST(CollectiveSchedule, ItsMessagesAreThePlannedMessages) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const GroupShape& g = c.group;
    const int m = static_cast<int>(g.members.size());
    const auto channels =
        c.step.algorithm == CollectiveAlgorithm::Tree ? tree_channels(g.per_node, m, g.links.ports_per_node)
        : c.step.algorithm == CollectiveAlgorithm::Ring && c.step.op != CollectiveOp::Broadcast ? g.channels
                                                                                                : 1;
    EXPECT_EQ(schedule_messages(g, c.step), planned_messages(c.step, g.size, static_cast<int>(g.members.size()),
                                                             g.slowest, channels, wire_factor(g, c.step)));
  }
}

/** The flows level's edges are the schedule summed per connection and peer (a member's switch traffic as one edge),
 * to the chunks' rounding: a member skips a different chunk than its peer, one byte per round at most. */
TEST(CollectiveSchedule, TheEdgesAreTheScheduleSummed) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const GroupShape& g = c.group;
    const Recorder r = record(g, c.step);
    const std::vector<FlowPhase> phases = flow_phases(g, c.step);
    for (int pos = 0; pos < g.size; ++pos) {
      // The schedule's sends of `pos` by phase: hierarchical's phases are its lanes in turn.
      std::vector<std::map<std::tuple<int, int, int>, std::uint64_t>> summed(phases.size());
      std::vector<int> rounds(phases.size(), 0);
      std::size_t phase = 0;
      Lane last = Lane::Ring;
      bool any = false;
      int last_round = -2;
      for (const auto& e : r.entries) {
        if (e.member != pos || !e.post.send) continue;
        if (any && c.step.algorithm == CollectiveAlgorithm::Hierarchical &&
            (e.post.lane != last || (e.post.lane == Lane::Intra && e.round > last_round + 1)))
          ++phase;
        if (c.step.algorithm == CollectiveAlgorithm::TwoHop) phase = static_cast<std::size_t>(e.round); // by round
        any = true;
        last = e.post.lane;
        if (e.round != last_round) ++rounds[phase];
        last_round = e.round;
        // The switch traffic is one edge, to the next member of the node.
        int to = e.post.peer;
        if (e.post.lane == Lane::Switch) {
          const auto& mine = g.members[static_cast<std::size_t>(g.node[static_cast<std::size_t>(pos)])];
          to = mine[static_cast<std::size_t>((g.local[static_cast<std::size_t>(pos)] + 1) % mine.size())];
        }
        summed.at(phase)[{static_cast<int>(e.post.lane), e.post.index, to}] += e.post.bytes;
      }
      for (std::size_t ph = 0; ph < phases.size(); ++ph) {
        std::multiset<std::pair<int, std::uint64_t>> from_schedule;
        for (const auto& [key, bytes] : summed[ph]) from_schedule.insert({std::get<2>(key), bytes});
        const auto edges = member_edges(g, c.step, phases[ph], pos);
        ASSERT_EQ(edges.size(), from_schedule.size()) << "member " << pos << " phase " << ph;
        auto it = from_schedule.begin();
        std::multiset<std::pair<int, std::uint64_t>> from_edges;
        for (const auto& e : edges) from_edges.insert({e.to, e.bytes});
        for (const auto& [to, bytes] : from_edges) {
          EXPECT_EQ(it->first, to) << "member " << pos << " phase " << ph;
          EXPECT_NEAR(static_cast<double>(it->second), static_cast<double>(bytes), 2.0 * rounds[ph] + 1)
              << "member " << pos << " to " << to << " phase " << ph;
          ++it;
        }
      }
    }
  }
}

double closed_form(const GroupShape& g, const CollectiveStep& step) {
  return collective_time(step.op, step.algorithm, step.protocol, static_cast<double>(step.bytes), g.size, g.per_node,
                         static_cast<int>(g.members.size()), g.links);
}

/** The schedule timed round by round on the links is the algorithm's closed form (collective_cost.hpp), for the
 * algorithms whose closed form is exact: the rings (with their channels over the NICs), the broadcast chain,
 * hierarchical, the direct all-to-all and NVLS. Sizes divisible by every chunk count, so no rounding. */
TEST(CollectiveSchedule, TimedRoundByRoundItIsTheClosedForm) {
  const std::uint64_t bytes = 256ULL * 1024 * 1024 * 9 * 5 * 7;
  struct Where {
    int per_node, nodes, ports;
  };
  for (Where w : {Where{8, 1, 1}, Where{4, 2, 1}, Where{8, 2, 8}, Where{4, 4, 4}, Where{8, 4, 2}, Where{1, 6, 1}}) {
    const GroupShape g = shape(w.per_node, w.nodes, w.ports);
    SCOPED_TRACE(std::to_string(w.per_node) + "x" + std::to_string(w.nodes) + "/" + std::to_string(w.ports));
    for (CollectiveOp op : {CollectiveOp::AllReduce, CollectiveOp::ReduceScatter, CollectiveOp::AllGather}) {
      const CollectiveStep s = step_of(op, CollectiveAlgorithm::Ring, bytes);
      EXPECT_NEAR(schedule_time(g, s), closed_form(g, s), 1e-9 * closed_form(g, s)) << to_string(op);
    }
    const CollectiveStep a2a = step_of(CollectiveOp::AllToAll, CollectiveAlgorithm::Direct, bytes);
    EXPECT_NEAR(schedule_time(g, a2a), closed_form(g, a2a), 1e-9 * closed_form(g, a2a));
    if (w.per_node > 1 && w.nodes > 1) {
      const CollectiveStep h = step_of(CollectiveOp::AllReduce, CollectiveAlgorithm::Hierarchical, bytes);
      EXPECT_NEAR(schedule_time(g, h), closed_form(g, h), 1e-9 * closed_form(g, h));
    }
    if (w.nodes > 1) {
      const CollectiveStep two = step_of(CollectiveOp::AllToAll, CollectiveAlgorithm::TwoHop, bytes);
      EXPECT_NEAR(schedule_time(g, two), closed_form(g, two), 1e-9 * closed_form(g, two));
    }
    if (w.nodes == 1) {
      const CollectiveStep nvls = step_of(CollectiveOp::AllReduce, CollectiveAlgorithm::Nvls, bytes);
      EXPECT_NEAR(schedule_time(g, nvls), closed_form(g, nvls), 1e-6 * closed_form(g, nvls));
    }
  }
  // The broadcast chain on one level (its chunks divide the size: k is a power of two at most 128).
  const GroupShape one = shape(1, 8, 1);
  CollectiveStep b = step_of(CollectiveOp::Broadcast, CollectiveAlgorithm::Ring, bytes);
  b.root = 3;
  EXPECT_NEAR(schedule_time(one, b), closed_form(one, b), 1e-6 * closed_form(one, b));
}

/** The tree's closed form assumes every round carries the busiest member's degree of chunks; the schedule's fill and
 * drain rounds carry fewer, so it is at most the closed form and tends to it as the chunks grow. */
TEST(CollectiveSchedule, TheTreeIsWithinItsClosedForm) {
  const GroupShape g = shape(1, 16, 1);
  const CollectiveStep s = step_of(CollectiveOp::AllReduce, CollectiveAlgorithm::Tree, 1ULL << 30);
  const double closed = closed_form(g, s);
  EXPECT_LE(schedule_time(g, s), closed * (1 + 1e-9));
  EXPECT_GE(schedule_time(g, s), 0.9 * closed);
}

/** NCCL's tree across nodes (node_tree): per channel a chain through each node's members and a double binary tree
 * between the chains' heads on their NIC. Every member heads one channel when there are as many as members; the
 * chains' NVLink traffic per port is chain_fraction of the buffer; the rail trees stay on their rail; the schedule
 * timed round by round is the closed form (node_tree_time) to the pipeline's fill, on every shape. */
TEST(CollectiveSchedule, TheTreeAcrossNodesIsChainsAndRailTrees) {
  const std::uint64_t bytes = 1ULL << 30;
  const CollectiveStep s = step_of(CollectiveOp::AllReduce, CollectiveAlgorithm::Tree, bytes);
  const GroupShape g = shape(8, 2, 8);
  ASSERT_TRUE(runs_node_tree(g));
  ASSERT_EQ(node_tree_channels(g), 8);
  EXPECT_DOUBLE_EQ(chain_fraction(8, 8), 14.0 / 8.0); // head of one channel (no up), tail of one (no down)
  EXPECT_DOUBLE_EQ(chain_fraction(8, 1), 2.0);        // a middle member sends both ways
  EXPECT_DOUBLE_EQ(chain_fraction(2, 2), 1.0);
  const Recorder r = record(g, s);
  std::map<int, std::uint64_t> chain_out;
  std::set<int> rail_senders;
  for (const auto& e : r.entries) {
    if (!e.post.send) continue;
    const auto from = static_cast<std::size_t>(e.member);
    const auto to = static_cast<std::size_t>(e.post.peer);
    if (e.post.lane == Lane::Chain) {
      EXPECT_EQ(g.node[from], g.node[to]);
      EXPECT_TRUE(e.post.background);
      chain_out[e.member] += e.post.bytes;
    } else {
      EXPECT_TRUE(e.post.lane == Lane::RailUp || e.post.lane == Lane::RailDown);
      EXPECT_NE(g.node[from], g.node[to]);
      EXPECT_EQ(g.local[from], g.local[to]) << "a rail tree stays on its rail";
      rail_senders.insert(e.member);
    }
  }
  EXPECT_EQ(rail_senders.size(), 16U) << "every member heads one of the 8 channels";
  for (const auto& [member, sent] : chain_out) EXPECT_EQ(sent, 14 * (bytes / 8)) << "member " << member;
  // Timed round by round, against the closed form: the chains, or the rail trees on 1/C, whichever is slower.
  const std::uint64_t divisible = 256ULL * 1024 * 1024 * 9 * 5 * 7;
  struct Where {
    int per_node, nodes, ports;
  };
  for (Where w : {Where{8, 2, 8}, Where{4, 4, 4}, Where{8, 4, 2}, Where{4, 2, 1}, Where{2, 3, 2}, Where{8, 16, 8}}) {
    SCOPED_TRACE(std::to_string(w.per_node) + "x" + std::to_string(w.nodes) + "/" + std::to_string(w.ports));
    const GroupShape h = shape(w.per_node, w.nodes, w.ports);
    const CollectiveStep t = step_of(CollectiveOp::AllReduce, CollectiveAlgorithm::Tree, divisible);
    const double closed = closed_form(h, t);
    const int c = node_tree_channels(h);
    TwoLevelCost links = h.links;
    const double chains = links.intra.latency + chain_fraction(w.per_node, c) * divisible / links.intra.bandwidth;
    const LinkCost rail{links.inter.latency, links.inter.bandwidth * std::min(1.0, static_cast<double>(w.ports) / c)};
    EXPECT_NEAR(closed - protocol_latency(h, t),
                std::max(chains, tree_time(double_binary_tree(w.nodes), static_cast<double>(divisible) / c, rail)),
                1e-12);
    // The closed form's rail tree carries the busiest node's degree of chunks in every round; the schedule's fill and
    // drain rounds carry fewer (3.3% less on 16 nodes).
    EXPECT_NEAR(schedule_time(h, t), closed, 0.04 * closed);
  }
}

/** Two nodes of 8 with a NIC each per member: NCCL's tree moves 14/8 of the buffer through each NVLink port and 1/8
 * through each NIC (a two-node tree is one exchange), the ring 30/16 through each NIC's share: with NVLink ten times
 * the NIC, the tree is the faster, and `auto` takes it for a large all-reduce, as NCCL does on two such nodes. */
TEST(CollectiveSchedule, TheTreeBeatsTheRingOnTwoNodes) {
  GroupShape g = shape(8, 2, 8);
  g.links.nvls_efficiency = 0.0; // no NVLink SHARP: NVLS-tree would win
  const double bytes = 1ULL << 32;
  const double ring = collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, CollectiveProtocol::Simple,
                                      bytes, 16, 8, 2, g.links);
  const double tree = collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Tree, CollectiveProtocol::Simple,
                                      bytes, 16, 8, 2, g.links);
  EXPECT_NEAR(ring, 30.0 / 16.0 * bytes / (8 * kNet.bandwidth), 0.01 * ring);
  EXPECT_NEAR(tree, 14.0 / 8.0 * bytes / kNvlink.bandwidth, 0.01 * tree); // the chains pace it
  EXPECT_LT(tree, ring);
  EXPECT_EQ(choose_algorithm(CollectiveOp::AllReduce, 16, 2, bytes, g.links), CollectiveAlgorithm::Tree);
}

/** Across 8 nodes with NVLink SHARP the tree and NVLS-tree are both paced by the same rail trees (a channel's or a
 * member's eighth over its NIC): their times tie to 1% (and the ring's bytes per NIC are the same). NCCL's tuner
 * prices the tree at 0.92 of its bandwidth, and so does `auto`: it does not take the tree where it only ties. */
TEST(CollectiveSchedule, AutoPricesTheTreeAsNcclsTuner) {
  const GroupShape g = shape(8, 8, 8);
  const double bytes = 1ULL << 30;
  const auto time = [&](CollectiveAlgorithm a) {
    return collective_time(CollectiveOp::AllReduce, a, CollectiveProtocol::Simple, bytes, 64, 8, 8, g.links);
  };
  EXPECT_NEAR(time(CollectiveAlgorithm::Tree), time(CollectiveAlgorithm::NvlsTree),
              0.01 * time(CollectiveAlgorithm::NvlsTree));
  const CollectiveAlgorithm chosen = choose_algorithm(CollectiveOp::AllReduce, 64, 8, bytes, g.links);
  EXPECT_NE(chosen, CollectiveAlgorithm::Tree);
  EXPECT_LE(time(chosen), time(CollectiveAlgorithm::Tree) / 0.92);
  // Asked for, the tree runs at the links' time (the 0.92 is the choice's only).
  EXPECT_EQ(choose_method(CollectiveOp::AllReduce, 64, 8, bytes, g.links, CollectiveAlgorithm::Tree).algorithm,
            CollectiveAlgorithm::Tree);
}

/** Channels: C rings, each with 1/C of the data, leaving each node through C different members (rail-aligned NICs),
 * so a two-node ring over eight NICs is nearly 8x faster than over one when the network paces it. */
TEST(CollectiveSchedule, ChannelsSplitTheDataOverDisjointNics) {
  const GroupShape eight = shape(8, 2, 8);
  ASSERT_EQ(eight.channels, 8);
  const std::uint64_t bytes = 1ULL << 30;
  const CollectiveStep s = step_of(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, bytes);
  const Recorder r = record(eight, s);
  // Per channel: its bytes; in each round, the node-crossing sends leave from distinct members of each node.
  std::map<int, std::uint64_t> per_channel;
  std::map<std::pair<int, int>, std::set<int>> leaving; // (round, node) -> members sending across
  std::map<std::pair<int, int>, int> crossings;
  for (const auto& e : r.entries) {
    if (!e.post.send) continue;
    per_channel[e.post.index] += e.post.bytes;
    const auto from = static_cast<std::size_t>(e.member);
    if (eight.node[from] != eight.node[static_cast<std::size_t>(e.post.peer)]) {
      leaving[{e.round, eight.node[from]}].insert(e.member);
      ++crossings[{e.round, eight.node[from]}];
    }
  }
  ASSERT_EQ(per_channel.size(), 8U);
  for (const auto& [channel, sent] : per_channel) EXPECT_EQ(sent, 2 * 15 * bytes / 8) << "channel " << channel;
  for (const auto& [key, members] : leaving)
    EXPECT_EQ(static_cast<int>(members.size()), crossings[key]) << "round " << key.first;
  const GroupShape one = shape(8, 2, 1, 1);
  ASSERT_EQ(one.channels, 1);
  // 8x less network time per round; the rounds' latencies and the protocol's are the same.
  const double ratio = schedule_time(one, s) / schedule_time(eight, s);
  EXPECT_GT(ratio, 7.7);
  EXPECT_LT(ratio, 8.0);
}

/** A mixture of experts' two-hop dispatch and combine (DeepEP's internode kernels) with skewed loads and node shares:
 * every byte sent is received, a source's network message to a node is the node's share of what it sends that node's
 * members, the rest crosses inside the nodes, and the schedule timed round by round is two_hop_all_to_all_time. */
TEST(CollectiveSchedule, TwoHopSendsANodeItsShareOnceAndForwardsTheRest) {
  const GroupShape base = shape(4, 3, 4);
  const std::vector<double> weight{1.6, 0.4, 1.0, 1.0, 0.7, 1.3, 1.2, 0.8, 2.0, 0.5, 0.25, 1.25};
  const std::vector<double> share{0.5, 0.75, 0.6};
  const std::vector<AllToAllSkew> skews{{weight, false, share}, {weight, true, share}};
  const std::uint64_t bytes = 12ULL * 1000 * 1000;
  for (const bool combine : {false, true}) {
    SCOPED_TRACE(combine ? "combine" : "dispatch");
    GroupShape g = base;
    g.skews = &skews;
    CollectiveStep step = step_of(CollectiveOp::AllToAll, CollectiveAlgorithm::TwoHop, bytes);
    step.root = combine ? 2 : 1;
    const Recorder r = record(g, step);
    std::map<int, std::uint64_t> sent;
    std::map<int, std::uint64_t> received;
    std::map<std::pair<int, int>, std::uint64_t> across; // (source, node) -> network bytes
    for (const auto& e : r.entries) {
      if (!e.post.send) continue;
      sent[e.member] += e.post.bytes;
      received[e.post.peer] += e.post.bytes;
      const int from_node = g.node[static_cast<std::size_t>(e.member)];
      const int to_node = g.node[static_cast<std::size_t>(e.post.peer)];
      if (from_node == to_node) continue;
      EXPECT_EQ(g.local[static_cast<std::size_t>(e.member)], g.local[static_cast<std::size_t>(e.post.peer)])
          << "a network message stays on its rail";
      // The token's source: the sender in the dispatch, the receiver in the combine.
      const int source = combine ? e.post.peer : e.member;
      across[{source, combine ? from_node : to_node}] += e.post.bytes;
    }
    const double c = static_cast<double>(bytes) / g.size;
    for (const auto& [key, b] : across) {
      const auto [source, node] = key;
      double direct = 0.0; // what the direct all-to-all would send between the source and the node's members
      for (const int j : g.members[static_cast<std::size_t>(node)])
        direct += c * weight[static_cast<std::size_t>(j)]; // by destination, or by the returning expert rank
      EXPECT_NEAR(static_cast<double>(b), share[static_cast<std::size_t>(node)] * direct, 2.0)
          << "source " << source << " node " << node;
    }
    EXPECT_EQ(across.size(), 12U * 2U); // each source with each other node
    std::uint64_t total_sent = 0;
    std::uint64_t total_received = 0;
    for (const auto& [member, b] : sent) total_sent += b;
    for (const auto& [member, b] : received) total_received += b;
    EXPECT_EQ(total_sent, total_received);
    EXPECT_NEAR(schedule_time(g, step),
                two_hop_all_to_all_time(static_cast<double>(bytes), g.members, weight, share, g.links),
                1e-6 * schedule_time(g, step));
    // The flows level receives what the schedule sends to each member.
    for (int pos = 0; pos < g.size; ++pos) {
      std::uint64_t in = 0;
      for (FlowPhase phase : flow_phases(g, step))
        for (const ScheduleEdge& e : incoming_edges(g, step, phase, pos)) in += e.bytes;
      EXPECT_EQ(in, received[pos]) << "member " << pos;
    }
  }
  // With every share 1 and no skew, the network carries what the direct all-to-all's does, and the two-hop one takes
  // longer by its forwards; with DeepSeek-V3's share (0.4536) it takes less on a network 8x slower than NVLink.
  const GroupShape g = shape(8, 8, 8);
  const CollectiveStep two = step_of(CollectiveOp::AllToAll, CollectiveAlgorithm::TwoHop, 64ULL << 20);
  const CollectiveStep direct = step_of(CollectiveOp::AllToAll, CollectiveAlgorithm::Direct, 64ULL << 20);
  EXPECT_GT(schedule_time(g, two), schedule_time(g, direct));
  const std::vector<AllToAllSkew> deepseek{{std::vector<double>(64, 1.0), false, std::vector<double>(8, 0.4536)}};
  GroupShape limited = g;
  limited.skews = &deepseek;
  CollectiveStep routed = two;
  routed.root = 1;
  EXPECT_LT(schedule_time(limited, routed), 0.7 * schedule_time(g, direct));
}

} // namespace
} // namespace partsim
