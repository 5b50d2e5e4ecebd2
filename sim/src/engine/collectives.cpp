// Collectives on SimGrid (engine-internal): per-group set-up (members, mailboxes, path figures) and the dispatch of
// each collective to its fidelity level: message steps (step_collectives.cpp), flows and analytic
// (flow_collectives.cpp), passive groups (passive_collectives.cpp). See docs/collectives.md.
#include "collectives.hpp"

#include "collective_groups.hpp"

#include "partsim/common/error.hpp"
#include "platform.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/Mailbox.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <utility>

namespace sg4 = simgrid::s4u;

namespace partsim::engine {

namespace {

using Group = CollectiveGroup;

LinkCost path(sg4::Host* from, sg4::Host* to) {
  std::vector<sg4::Link*> links;
  double latency = 0.0;
  from->route_to(to, links, &latency);
  double bandwidth = std::numeric_limits<double>::infinity();
  for (const sg4::Link* l : links) bandwidth = std::min(bandwidth, l->get_bandwidth());
  return {latency, bandwidth};
}

/** The slowest intra-node and inter-node paths over the edges the algorithms use (ring neighbours, neighbours in a
 * node, same local index on neighbouring nodes), and the network ports of the first node: the distinct first links of
 * its members' paths to the next node. */
void measure_paths(Group& g) {
  LinkCost intra{0.0, std::numeric_limits<double>::infinity()};
  LinkCost inter = intra;
  bool has_intra = false;
  bool has_inter = false;
  auto add = [&](int a, int b) {
    if (a == b) return;
    const LinkCost c = path(g.hosts[static_cast<std::size_t>(a)], g.hosts[static_cast<std::size_t>(b)]);
    const bool same = g.node[static_cast<std::size_t>(a)] == g.node[static_cast<std::size_t>(b)];
    LinkCost& into = same ? intra : inter;
    (same ? has_intra : has_inter) = true;
    into.latency = std::max(into.latency, c.latency);
    into.bandwidth = std::min(into.bandwidth, c.bandwidth);
  };
  for (int i = 0; i < g.size; ++i) add(i, (i + 1) % g.size);
  const auto m = g.members.size();
  for (std::size_t node = 0; node < m; ++node) {
    const auto& mine = g.members[node];
    for (std::size_t i = 0; i < mine.size(); ++i) {
      add(mine[i], mine[(i + 1) % mine.size()]);
      const auto& next = g.members[(node + 1) % m];
      if (i < next.size()) add(mine[i], next[i]);
    }
  }
  if (!has_intra) intra = inter;
  if (!has_inter) inter = intra;
  g.links.intra = intra;
  g.links.inter = inter;
  g.links.ports_per_node = 1;
  if (m > 1) {
    std::set<const sg4::Link*> first;
    const sg4::Host* target = g.hosts[static_cast<std::size_t>(g.members[1].front())];
    for (int member : g.members.front()) {
      std::vector<sg4::Link*> links;
      double latency = 0.0;
      g.hosts[static_cast<std::size_t>(member)]->route_to(target, links, &latency);
      if (!links.empty()) first.insert(links.front());
    }
    g.links.ports_per_node = std::max<int>(1, static_cast<int>(first.size()));
  }
  g.slowest = slowest_link(g.links, g.per_node, static_cast<int>(m));
}

/** Seconds per byte of a member's buffer that an all-to-all puts on the busiest switch uplink (fat-tree leaf and pod
 * uplinks, rail uplinks to the spine): every member sends bytes / n to every other, so a switch S with m_S members
 * under it sends out, for each of them, bytes / n to every member neither under S nor on its own node (those go
 * through the node's NVSwitch), over an uplink of bandwidth B_S each way (and receives as much). The closed forms
 * see only the members' paths, not what the members below one switch add up to on its uplink. */
double all_to_all_uplink(const Group& g, const std::vector<int>& gpus, const Platform& platform) {
  if (platform.attachments.empty()) return 0.0;
  const auto n = static_cast<std::size_t>(g.size);
  double worst = 0.0;
  for (int level = 0; level < kMaxUplinkLevels; ++level) {
    const auto l = static_cast<std::size_t>(level);
    std::map<int, std::vector<int>> under; // switch -> positions
    for (std::size_t pos = 0; pos < n; ++pos) {
      const Attachment& a = platform.attachments.at(static_cast<std::size_t>(gpus[pos]));
      if (level < a.levels) under[a.group[l]].push_back(static_cast<int>(pos));
    }
    for (const auto& [sw, positions] : under) {
      std::map<int, double> on_node; // group node index -> its members under this switch
      for (int pos : positions) on_node[g.node[static_cast<std::size_t>(pos)]] += 1.0;
      double peers_out = 0.0; // over the members under the switch: peers neither under it nor on their node
      for (int pos : positions) {
        const int node = g.node[static_cast<std::size_t>(pos)];
        const double node_members = static_cast<double>(g.members[static_cast<std::size_t>(node)].size());
        peers_out += static_cast<double>(n) - static_cast<double>(positions.size()) - (node_members - on_node[node]);
      }
      const double bandwidth =
          platform.attachments.at(static_cast<std::size_t>(gpus[static_cast<std::size_t>(positions.front())]))
              .uplink_bandwidth[l];
      worst = std::max(worst, peers_out / static_cast<double>(n) / bandwidth);
    }
  }
  return worst;
}

std::vector<sg4::Mailbox*> mailboxes(std::size_t group, const char* kind, int n) {
  std::vector<sg4::Mailbox*> boxes;
  boxes.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) boxes.push_back(sg4::Mailbox::by_name(fmt::format("coll-{}-{}-{}", group, kind, i)));
  return boxes;
}

} // namespace

void prepare_collectives(RunContext& ctx) {
  auto state = std::make_shared<RunContext::CollectiveGroups>();
  const std::size_t count = ctx.plan.groups.size();
  struct Needs {
    bool used = false, ring = false, tree = false, hierarchical = false, a2a = false, flows = false;
    bool analytic_a2a = false, channels = false, nvls = false, nvls_tree = false, two_hop = false, hop = false;
    int requested_channels = -1; ///< of its ring steps (-1: none yet)
  };
  std::vector<Needs> needs(count);
  const auto note = [count](Needs& n, const CollectiveStep* step) {
    PARTSIM_CHECK(step->group >= 0 && static_cast<std::size_t>(step->group) < count)
        << "collective on group " << step->group << " of " << count;
    PARTSIM_CHECK(is_supported(step->op, step->algorithm))
        << to_string(step->op) << " has no " << to_string(step->algorithm) << " algorithm";
    n.used = true;
    n.tree |= step->algorithm == CollectiveAlgorithm::Tree;
    n.hierarchical |= step->algorithm == CollectiveAlgorithm::Hierarchical;
    n.flows |= step->fidelity == Fidelity::Flows;
    n.analytic_a2a |= step->fidelity == Fidelity::Analytic && (step->algorithm == CollectiveAlgorithm::Direct ||
                                                               step->algorithm == CollectiveAlgorithm::TwoHop);
    n.two_hop |= step->algorithm == CollectiveAlgorithm::TwoHop;
    if (step->algorithm == CollectiveAlgorithm::Ring && step->op != CollectiveOp::Broadcast) {
      n.channels = true;
      // The rings are the group's: every ring collective on it asks for the same number (one choice per group).
      PARTSIM_CHECK(n.requested_channels < 0 || n.requested_channels == step->channels)
          << "ring collectives on group " << step->group << " ask for " << n.requested_channels << " and "
          << step->channels << " channels";
      n.requested_channels = step->channels;
    }
    if (step->fidelity == Fidelity::Steps) {
      n.ring |= step->algorithm == CollectiveAlgorithm::Ring;
      n.a2a |= step->algorithm == CollectiveAlgorithm::Direct || step->algorithm == CollectiveAlgorithm::Nvls ||
               step->algorithm == CollectiveAlgorithm::TwoHop;
      n.hop |= step->algorithm == CollectiveAlgorithm::TwoHop;
    }
    n.nvls |= step->algorithm == CollectiveAlgorithm::Nvls;
    n.nvls_tree |= step->algorithm == CollectiveAlgorithm::NvlsTree;
    // NVLS-tree's switch traffic and a node tree's chains take the all-to-all's mailboxes.
    if (step->fidelity == Fidelity::Steps)
      n.a2a |= step->algorithm == CollectiveAlgorithm::NvlsTree || step->algorithm == CollectiveAlgorithm::Tree;
  };
  // Each program once (ranks may share one, relabeled: Plan::steps_of), then its needs under each rank's groups.
  std::vector<std::vector<std::pair<int, Needs>>> by_program(ctx.plan.ranks.size());
  for (std::size_t q = 0; q < ctx.plan.ranks.size(); ++q) {
    if (ctx.plan.ranks[q].like >= 0) continue;
    std::map<int, Needs> local;
    for (const Step& s : ctx.plan.ranks[q].own_steps)
      if (const auto* step = std::get_if<CollectiveStep>(&s)) note(local[step->group], step);
    by_program[q].assign(local.begin(), local.end());
  }
  for (std::size_t r = 0; r < ctx.plan.ranks.size(); ++r)
    for (const auto& [g, from] : by_program[static_cast<std::size_t>(ctx.plan.owner(static_cast<int>(r)))]) {
      const int group = ctx.plan.ranks[r].group(g);
      Needs& n = needs.at(static_cast<std::size_t>(group));
      n.used = true;
      n.ring |= from.ring;
      n.tree |= from.tree;
      n.hierarchical |= from.hierarchical;
      n.a2a |= from.a2a;
      n.flows |= from.flows;
      n.analytic_a2a |= from.analytic_a2a;
      n.channels |= from.channels;
      n.nvls |= from.nvls;
      n.nvls_tree |= from.nvls_tree;
      n.two_hop |= from.two_hop;
      n.hop |= from.hop;
      if (from.requested_channels < 0) continue;
      PARTSIM_CHECK(n.requested_channels < 0 || n.requested_channels == from.requested_channels)
          << "ring collectives on group " << group << " ask for " << n.requested_channels << " and "
          << from.requested_channels << " channels";
      n.requested_channels = from.requested_channels;
    }

  state->groups.resize(count);
  for (std::size_t gi = 0; gi < count; ++gi) {
    if (!needs[gi].used) continue;
    Group& g = state->groups[gi];
    const auto& ranks = ctx.plan.groups[gi];
    g.ranks = ranks;
    std::vector<int> gpus;
    std::vector<int> node_of;
    for (const int rank : ranks) {
      const int gpu = ctx.plan.ranks[static_cast<std::size_t>(rank)].gpu;
      gpus.push_back(gpu);
      node_of.push_back(gpu / ctx.cluster.gpus_per_node);
      g.hosts.push_back(ctx.platform.gpus.at(static_cast<std::size_t>(gpu)));
    }
    place_members(g, node_of);
    // The planners refuse a hierarchical all-reduce on groups that straddle nodes unevenly, naming the key.
    PARTSIM_CHECK(!needs[gi].hierarchical || g.even) << "hierarchical all-reduce on uneven group " << gi;
    // ... and a two-hop all-to-all on groups uneven or inside one node.
    PARTSIM_CHECK(!needs[gi].two_hop || (g.even && g.members.size() > 1)) << "two_hop all-to-all on group " << gi;
    measure_paths(g);
    g.links.nvls_efficiency = ctx.cluster.intra_node.nvls_efficiency;
    g.links.nvls_latency = ctx.cluster.intra_node.nvls_latency;
    g.links.nvls_tree_head_two_nodes = ctx.cluster.intra_node.nvls_tree_head_two_nodes;
    g.links.nvls_tree_head_more_nodes = ctx.cluster.intra_node.nvls_tree_head_more_nodes;
    g.links.intra_nvlink = ctx.cluster.intra_node.nvlink;
    g.links.ll_max_intra = ctx.cluster.intra_node.ll_max_bandwidth;
    // The planners refuse NVLS on groups that span nodes or on switches without it, naming the key.
    PARTSIM_CHECK(!needs[gi].nvls || nvls_available(static_cast<int>(g.members.size()), g.links))
        << "nvls on group " << gi << " over " << g.members.size() << " nodes";
    // The planners refuse NVLS-tree on groups inside one node, uneven ones, or without NVLink SHARP, naming the key.
    PARTSIM_CHECK(!needs[gi].nvls_tree || (g.even && g.members.size() > 1 && g.links.nvls_efficiency > 0.0))
        << "nvls_tree on group " << gi << " over " << g.members.size() << " nodes";
    if (needs[gi].channels) {
      g.links.channels = needs[gi].requested_channels;
      g.channels = ring_channels(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, g.per_node,
                                 static_cast<int>(g.members.size()), g.links.ports_per_node, g.links.channels);
      if (g.channels > 1) make_rings(g);
    }
    if (needs[gi].analytic_a2a) g.all_to_all_uplink = all_to_all_uplink(g, gpus, ctx.platform);
    g.skews = &ctx.plan.all_to_all_skews;
    if (needs[gi].tree) g.tree = double_binary_tree(g.size);
    const auto steps_needed = [&](bool flag) { return flag && g.size > 1; };
    if (steps_needed(needs[gi].ring)) g.ring_in = mailboxes(gi, "ring", g.channels * g.size);
    if (steps_needed(needs[gi].tree))
      for (std::size_t t = 0; t < 2; ++t) {
        g.tree_up[t] = mailboxes(gi, t == 0 ? "up0" : "up1", g.size);
        g.tree_down[t] = mailboxes(gi, t == 0 ? "down0" : "down1", g.size);
      }
    if (needs[gi].nvls_tree || (needs[gi].tree && runs_node_tree(g))) {
      g.rail_tree = double_binary_tree(static_cast<int>(g.members.size()));
      for (std::size_t t = 0; t < 2; ++t) {
        g.rail_up[t] = mailboxes(gi, t == 0 ? "rail-up0" : "rail-up1", g.size);
        g.rail_down[t] = mailboxes(gi, t == 0 ? "rail-down0" : "rail-down1", g.size);
      }
    }
    if (steps_needed(needs[gi].hierarchical)) {
      g.intra_in = mailboxes(gi, "intra", g.size);
      g.inter_in = mailboxes(gi, "inter", g.size);
    }
    if (steps_needed(needs[gi].a2a)) {
      g.a2a_in[0] = mailboxes(gi, "a2a0", g.size);
      g.a2a_in[1] = mailboxes(gi, "a2a1", g.size);
    }
    if (steps_needed(needs[gi].hop)) {
      g.hop_in[0] = mailboxes(gi, "hop0", g.size);
      g.hop_in[1] = mailboxes(gi, "hop1", g.size);
    }
    if (steps_needed(needs[gi].flows)) g.flow_in = mailboxes(gi, "flow", g.size);
    g.a2a_begun.assign(static_cast<std::size_t>(g.size), 0);
    g.rendezvous_begun.assign(static_cast<std::size_t>(g.size), 0);
  }
  ctx.collectives = std::move(state);
}

void run_collective(RunContext& ctx, int pos, RankTimeline& timeline, const CollectiveStep& step) {
  PARTSIM_CHECK(ctx.collectives) << "prepare_collectives() was not called";
  Group& g = ctx.collectives->groups[static_cast<std::size_t>(step.group)];
  if (g.size < 2) return;
  if (step.fidelity != Fidelity::Steps) {
    rendezvous(ctx, timeline, step, g, pos);
    return;
  }
  run_steps(ctx, timeline, step, g, pos);
}

std::pair<std::uint64_t, std::uint64_t> analytic_bytes(const RunContext& ctx, const CollectiveStep& step, int rank) {
  const Group& g = ctx.collectives->groups.at(static_cast<std::size_t>(step.group));
  if (g.size < 2) return {0, 0};
  const FlowShare share = flow_share(g, step, ctx.position(step.group, rank));
  return {share.sent, share.received};
}

bool same_closed_form(const RunContext& ctx, int a, int b) {
  const auto& ga = ctx.collectives->groups.at(static_cast<std::size_t>(a));
  const auto& gb = ctx.collectives->groups.at(static_cast<std::size_t>(b));
  const auto same = [](const LinkCost& x, const LinkCost& y) {
    return x.latency == y.latency && x.bandwidth == y.bandwidth;
  };
  return ga.size == gb.size && ga.per_node == gb.per_node && ga.members.size() == gb.members.size() &&
         ga.channels == gb.channels && ga.links.channels == gb.links.channels && ga.even == gb.even &&
         same(ga.links.intra, gb.links.intra) && same(ga.links.inter, gb.links.inter) &&
         ga.links.ports_per_node == gb.links.ports_per_node && ga.all_to_all_uplink == gb.all_to_all_uplink &&
         ga.links.intra_nvlink == gb.links.intra_nvlink && ga.links.ll_max_intra == gb.links.ll_max_intra;
}

} // namespace partsim::engine
