// Collectives at `flows` and `analytic` fidelity (engine-internal): one flow per edge of the algorithm, driven by a
// few actors as two-host executions, or the closed form after a rendezvous. See docs/collectives.md and docs/engine.md
// ("Lean engine").
#include "collective_groups.hpp"

#include "partsim/common/error.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <simgrid/simix.hpp>

#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace partsim::engine {

namespace {

using Group = CollectiveGroup;

// ---- Flows: one flow per edge of the algorithm; Analytic: the closed form ----

/** One flow of a flows collective: an edge of the algorithm's schedule over a phase (member_edges,
 * collective_schedule.hpp), from the member that starts it. */
using Flow = ScheduleEdge;

/** Time a phase takes beyond its flows: the latencies of the algorithm's steps after the first (a flow pays one)
 * and the pipeline's fill and drain, from the closed form on the group's slowest paths. */
double links_extra(const Group& g, const CollectiveStep& step, FlowPhase phase) {
  const int n = g.size;
  const double alpha = g.slowest.latency;
  const double beta = g.slowest.bandwidth;
  const double bytes = wire_bytes(g, step, static_cast<double>(step.bytes));
  switch (step.algorithm) {
  case CollectiveAlgorithm::Ring: {
    if (step.op == CollectiveOp::Broadcast) {
      const auto k = static_cast<double>(pipeline_chunks(step.op, step.algorithm, n, bytes, g.slowest));
      return (n + k - 3) * alpha + (n - 2) * bytes / k / beta;
    }
    const int steps = step.op == CollectiveOp::AllReduce ? 2 * (n - 1) : n - 1;
    return (steps - 1) * alpha;
  }
  case CollectiveAlgorithm::Tree: {
    if (runs_node_tree(g)) {
      // The flows move the chains' bytes and the rail trees' at once (each flow paying one latency); what the closed
      // form adds beyond the slower of the two is the rail trees' fill and drain, when they pace it.
      const int channels = node_tree_channels(g);
      const double share = bytes / channels;
      const double rail_bandwidth =
          g.links.inter.bandwidth * std::min(1.0, std::max(g.links.ports_per_node, 1) / static_cast<double>(channels));
      const double chains =
          g.links.intra.latency + bytes * chain_fraction(g.per_node, channels) / g.links.intra.bandwidth;
      const double rails = g.links.inter.latency + g.rail_tree->max_degree * share / 2 / rail_bandwidth;
      return std::max(0.0,
                      node_tree_time(*g.rail_tree, bytes, g.per_node, channels, g.links) - std::max(chains, rails));
    }
    const auto k = static_cast<double>(tree_chunks(*g.tree, bytes, g.slowest));
    const double depth = g.tree->max_depth;
    return (k + 2 * depth - 2) * alpha + (2 * depth - 1) * g.tree->max_degree * bytes / (2 * k) / beta;
  }
  case CollectiveAlgorithm::Hierarchical:
    if (phase == FlowPhase::IntraNode) return (g.per_node - 2) * g.links.intra.latency;
    return (2 * (static_cast<double>(g.members.size()) - 1) - 1) * g.links.inter.latency;
  case CollectiveAlgorithm::Direct:
  case CollectiveAlgorithm::TwoHop: // each phase is one hop
    return 0.0;
  case CollectiveAlgorithm::Nvls:
    return std::max(0.0, g.links.nvls_latency - alpha); // the flows pay one traversal
  case CollectiveAlgorithm::NvlsTree: {
    // The rest of the NVLS latency, and the rail trees' fill and drain (as the tree's, on a member's share).
    double extra = std::max(0.0, g.links.nvls_latency - (g.per_node > 1 ? g.links.intra.latency : 0.0));
    if (g.rail_tree) {
      const auto k = static_cast<double>(tree_chunks(*g.rail_tree, std::floor(bytes / g.per_node), g.slowest));
      const double depth = g.rail_tree->max_depth;
      const double share = bytes / g.per_node;
      extra += (k + 2 * depth - 2) * alpha + (2 * depth - 1) * g.rail_tree->max_degree * share / (2 * k) / beta;
    }
    return extra;
  }
  }
  return 0.0;
}

/** links_extra, and after the last phase the protocol's latency. */
double phase_extra(const Group& g, const CollectiveStep& step, FlowPhase phase, bool last) {
  return links_extra(g, step, phase) + (last ? protocol_latency(g, step) : 0.0);
}

/** Flows member `pos` receives in `phase` (the edges of member_flows that end at it). */
int incoming_flows(const Group& g, const CollectiveStep& step, FlowPhase phase, int pos) {
  switch (step.algorithm) {
  case CollectiveAlgorithm::Ring:
    if (step.op != CollectiveOp::Broadcast) return g.channels;
    return mod(pos - step.root, g.size) > 0 ? 1 : 0;
  case CollectiveAlgorithm::Tree:
    return static_cast<int>(member_edges(g, step, phase, pos).size()); // every tree edge runs both ways
  case CollectiveAlgorithm::Hierarchical:
    return 1;
  case CollectiveAlgorithm::Direct:
    return g.size - 1;
  case CollectiveAlgorithm::TwoHop: // from the peers of the phase's round
    return static_cast<int>(incoming_edges(g, step, phase, pos).size());
  case CollectiveAlgorithm::Nvls: // one flow through the switch from a neighbour (nvls_switch_flow)
    return g.size > 1 ? 1 : 0;
  case CollectiveAlgorithm::NvlsTree: // the switch flow, and every rail-tree edge runs both ways
    return static_cast<int>(member_edges(g, step, phase, pos).size());
  }
  return 0;
}

/** Blocks until every member has called it for this slot; the last one runs `last` first. Returns when it released
 * the others (the same simulated time for all). */
template <typename Last>
void barrier(int members, int& waiting, sg4::Semaphore& released, Last&& last) {
  if (waiting + 1 < members) {
    ++waiting;
    released.acquire();
    return;
  }
  last();
  for (; waiting > 0; --waiting) released.release();
}

// ---- Driven flows ----

/** Members whose flows one driver starts: as many as keep it near kFlowsPerDriver flows in flight. SimGrid 3.32
 * removes a finished activity from its actor's list by a scan of that list, so an actor with k flows in flight pays
 * O(k) per flow; a few drivers per group instead of one actor per member save most context switches. */
constexpr int kFlowsPerDriver = 32;

/** Starts the flows that members [first, last) send in `phase`, as two-host executions without computation (the
 * default host model turns one into a single network action from the first host to the second, as a message), and
 * waits for them. The executions are created in this actor (which owns them: their finish is O(flows it drives)) and
 * set up and started in the kernel by one simcall. */
void drive_flows(RunContext& ctx, const Group& g, const CollectiveStep& step, FlowPhase phase, int first, int last) {
  struct Pending {
    sg4::ExecPtr exec;
    sg4::Host* from;
    sg4::Host* to;
    double bytes;
  };
  std::vector<Pending> pending;
  for (int pos = first; pos < last; ++pos)
    for (const Flow& f : member_edges(g, step, phase, pos))
      pending.push_back({sg4::Exec::init(), g.hosts[static_cast<std::size_t>(pos)],
                         g.hosts[static_cast<std::size_t>(f.to)], f.on_wire()});
  simgrid::kernel::actor::simcall_answered([&pending] {
    for (Pending& p : pending)
      p.exec->set_hosts({p.from, p.to})
          ->set_flops_amounts({0.0, 0.0})
          ->set_bytes_amounts({0.0, p.bytes, 0.0, 0.0})
          ->start();
  });
  ctx.result.driven_flows += pending.size();
  for (const Pending& p : pending) p.exec->wait(); // not wait_all: see StepTransfers::wait
}

/** A flows collective driven by a few of its members (positions that are multiples of members_per_driver): the
 * others only wait for the end. Same schedule as member by member: every flow of a phase starts when the last member
 * has arrived (or the previous phase ended), the phase ends with its last flow, and the last driver to finish sleeps
 * the phase's extra time. Returns the simulated time the flows began. */
double driven_flows(RunContext& ctx, const CollectiveStep& step, Group& g,
                    RunContext::CollectiveGroups::Rendezvous& slot, int pos) {
  const int per_driver = members_per_driver(g, step);
  const int drivers = (g.size + per_driver - 1) / per_driver;
  const bool driver = pos % per_driver == 0;
  if (++slot.arrived < g.size) {
    if (!driver) {
      slot.released->acquire(); // released at the end
      return slot.begin;
    }
    ++slot.drivers_waiting;
    slot.driving->acquire();
  } else {
    slot.arrived = 0;
    slot.begin = sg4::Engine::get_clock();
    for (; slot.drivers_waiting > 0; --slot.drivers_waiting) slot.driving->release();
    if (!driver) {
      slot.released->acquire();
      return slot.begin;
    }
  }
  drive_phases(ctx, g, step, pos, std::min(pos + per_driver, g.size), drivers, slot.drivers_waiting, *slot.driving,
               [&] {
                 for (int k = g.size - drivers; k > 0; --k) slot.released->release();
               });
  return slot.begin;
}

/** A flows collective member by member (flows of no byte, or the plain engine): after the rendezvous every member
 * puts its outgoing flows and gets its incoming ones on the group's flow mailboxes (all at the same instant, so they
 * move at once; which put meets which get does not matter, the transfer runs from the put's host to the get's), and
 * after each phase a barrier, where the last member to finish sleeps the phase's extra time. Not Comm::sendto_async:
 * SimGrid 3.32 detaches every host-to-host comm and removes each finished one from one list of all of them. */
void put_and_get_flows(const CollectiveStep& step, Group& g, RunContext::CollectiveGroups::Rendezvous& slot,
                       int members, int pos) {
  const std::vector<FlowPhase> phases = flow_phases(g, step);
  for (std::size_t i = 0; i < phases.size(); ++i) {
    const FlowPhase phase = phases[i];
    std::vector<sg4::CommPtr> comms;
    std::deque<std::uint64_t*> received;
    // Not detached puts: SimGrid 3.32 finds a finished detached comm in one list of all of them (quadratic).
    for (const Flow& f : member_edges(g, step, phase, pos))
      comms.push_back(g.flow_in[static_cast<std::size_t>(f.to)]->put_async(
          std::make_unique<std::uint64_t>(f.bytes).release(), f.on_wire()));
    for (int i = incoming_flows(g, step, phase, pos); i > 0; --i) {
      received.push_back(nullptr);
      comms.push_back(g.flow_in[static_cast<std::size_t>(pos)]->get_async<std::uint64_t>(&received.back()));
    }
    for (const sg4::CommPtr& c : comms) c->wait(); // not wait_all: see StepTransfers::wait
    for (std::uint64_t* r : received) std::unique_ptr<std::uint64_t>{r};
    barrier(members, slot.waiting, *slot.released, [&] {
      const double extra = phase_extra(g, step, phase, i + 1 == phases.size());
      if (extra > 0) sg4::this_actor::sleep_for(extra);
    });
  }
}

} // namespace

FlowShare flow_share(const Group& g, const CollectiveStep& step, int pos) {
  // A two-hop all-to-all's edges differ per member and come from its schedule: worked out once per size and skew.
  std::array<std::uint64_t, 3>* cached = nullptr;
  if (step.algorithm == CollectiveAlgorithm::TwoHop) {
    const auto [at, fresh] = g.two_hop_shares.try_emplace({step.bytes, step.root, pos});
    if (!fresh) return {at->second[0], at->second[1], at->second[2]};
    cached = &at->second;
  }
  FlowShare s;
  for (FlowPhase phase : flow_phases(g, step))
    for (const Flow& f : member_edges(g, step, phase, pos)) {
      s.sent += f.bytes;
      ++s.flows;
    }
  switch (step.algorithm) {
  case CollectiveAlgorithm::Ring:
    if (step.op == CollectiveOp::Broadcast)
      s.received = mod(pos - step.root, g.size) > 0 ? step.bytes : 0;
    else
      s.received = s.sent;
    break;
  case CollectiveAlgorithm::Direct:
    if (a2a_skew(g, step) == nullptr) {
      s.received = static_cast<std::uint64_t>(g.size - 1) * chunk(step.bytes, g.size, pos);
    } else {
      for (int from = 0; from < g.size; ++from)
        if (from != pos) s.received += a2a_bytes(g, step, from, pos);
    }
    break;
  case CollectiveAlgorithm::TwoHop:
    for (FlowPhase phase : flow_phases(g, step))
      for (const Flow& f : incoming_edges(g, step, phase, pos)) s.received += f.bytes;
    *cached = {s.sent, s.received, s.flows};
    break;
  default:
    s.received = s.sent; // every tree and hierarchical edge is matched by one of the same size coming back
  }
  return s;
}

double analytic_time(const Group& g, const CollectiveStep& step) {
  const AllToAllSkew* skew = a2a_skew(g, step);
  double time = 0.0;
  double uplink_scale = 1.0; // the busiest node's mean weight (times its network share, two-hop)
  if (step.algorithm == CollectiveAlgorithm::TwoHop) {
    // Two-hop: its closed form with the step's weights and network shares (two_hop_all_to_all_time).
    static const std::vector<double> none;
    time = two_hop_all_to_all_time(wire_bytes(g, step, static_cast<double>(step.bytes)), g.members,
                                   skew != nullptr ? skew->weight : none, skew != nullptr ? skew->node_share : none,
                                   g.links);
    for (std::size_t k = 0; k < g.members.size(); ++k) {
      double w = 0.0;
      for (const int p : g.members[k]) w += skew != nullptr ? skew->weight.at(static_cast<std::size_t>(p)) : 1.0;
      uplink_scale = std::max(uplink_scale, w / static_cast<double>(g.members[k].size()));
    }
    double share = 0.0;
    for (std::size_t k = 0; k < g.members.size(); ++k)
      share = std::max(share, two_hop_node_share(g, step, static_cast<int>(k)));
    uplink_scale *= share;
  } else if (step.algorithm != CollectiveAlgorithm::Direct) {
    // A tree's closed form on the group's own tree (building one is O(n)); the others from the group's figures.
    if (step.algorithm == CollectiveAlgorithm::Tree && runs_node_tree(g))
      return node_tree_time(*g.rail_tree, wire_bytes(g, step, static_cast<double>(step.bytes)), g.per_node,
                            node_tree_channels(g), g.links) +
             protocol_latency(g, step);
    return step.algorithm == CollectiveAlgorithm::Tree
               ? tree_time(*g.tree, wire_bytes(g, step, static_cast<double>(step.bytes)), g.slowest) +
                     protocol_latency(g, step)
               : collective_time(step.op, step.algorithm, step.protocol, static_cast<double>(step.bytes), g.size,
                                 g.per_node, static_cast<int>(g.members.size()), g.links);
  } else if (skew == nullptr) {
    time = collective_time(step.op, step.algorithm, step.protocol, static_cast<double>(step.bytes), g.size, g.per_node,
                           static_cast<int>(g.members.size()), g.links);
  } else {
    // A skewed all-to-all: its busiest port or node (skewed_all_to_all_time); a switch uplink then carries up to the
    // busiest node's mean weight times what it carries uniformly (an upper bound: the uplink's nodes are not all the
    // busiest).
    time = skewed_all_to_all_time(wire_bytes(g, step, static_cast<double>(step.bytes)), skew->weight, g.node, g.links) +
           protocol_latency(g, step);
    for (const auto& mine : g.members) {
      double w = 0.0;
      for (const int p : mine) w += skew->weight.at(static_cast<std::size_t>(p));
      uplink_scale = std::max(uplink_scale, w / static_cast<double>(mine.size()));
    }
  }
  if (g.all_to_all_uplink <= 0.0) return time;
  // An all-to-all also takes as long as its busiest switch uplink needs (all_to_all_uplink), after one crossing.
  return std::max(time, g.links.inter.latency + g.all_to_all_uplink * uplink_scale * static_cast<double>(step.bytes));
}

/** Whether every flow of a flows collective carries a byte at least: a two-host execution needs one (a message of
 * none still pays its latency, so such collectives go member by member, see rendezvous()). */
bool every_flow_carries_bytes(const Group& g, const CollectiveStep& step) {
  switch (step.algorithm) {
  case CollectiveAlgorithm::Ring: // an edge carries a channel's bytes - bytes/n, or the whole message for a broadcast
    return step.bytes >= static_cast<std::uint64_t>(step.op == CollectiveOp::Broadcast ? 1 : g.channels);
  case CollectiveAlgorithm::Tree: // each tree carries half (of a channel's share, across nodes)
    return step.bytes >= 2 * static_cast<std::uint64_t>(runs_node_tree(g) ? node_tree_channels(g) : 1);
  case CollectiveAlgorithm::Hierarchical:
    // the inter-node ring carries bytes / per_node; the intra-node one bytes - bytes / per_node
    return step.bytes >= (g.members.size() > 1 ? static_cast<std::uint64_t>(g.per_node) : 1);
  case CollectiveAlgorithm::Direct: { // every peer gets a chunk (of a skewed one: a byte at its weight)
    if (step.bytes < static_cast<std::uint64_t>(g.size)) return false;
    const AllToAllSkew* skew = a2a_skew(g, step);
    if (skew == nullptr) return true;
    const double least = *std::min_element(skew->weight.begin(), skew->weight.end());
    return std::llround(static_cast<double>(step.bytes / static_cast<std::uint64_t>(g.size)) * least) >= 1;
  }
  case CollectiveAlgorithm::TwoHop: { // every edge of the schedule, looked at once per size and skew
    const auto [at, fresh] = g.two_hop_carries.try_emplace({step.bytes, step.root}, true);
    if (fresh)
      for (FlowPhase phase : flow_phases(g, step))
        for (int pos = 0; pos < g.size; ++pos)
          for (const Flow& f : member_edges(g, step, phase, pos)) at->second = at->second && f.bytes >= 1;
    return at->second;
  }
  case CollectiveAlgorithm::Nvls: // the switch flow carries bytes (1 + 1/n)
    return step.bytes >= 1;
  case CollectiveAlgorithm::NvlsTree: // each tree carries half of a member's share
    return step.bytes >= 2 * static_cast<std::uint64_t>(g.per_node);
  }
  return false;
}

int members_per_driver(const Group& g, const CollectiveStep& step) {
  int flows = 1; // hierarchical, broadcast: one edge leaves each member
  if (step.algorithm == CollectiveAlgorithm::Ring && step.op != CollectiveOp::Broadcast) flows = g.channels;
  if (step.algorithm == CollectiveAlgorithm::Tree)
    flows = 6 + 2; // a parent and two children in each of two trees
                   // (and two chain neighbours across nodes)
  if (step.algorithm == CollectiveAlgorithm::Direct) flows = g.size - 1;
  if (step.algorithm == CollectiveAlgorithm::TwoHop) flows = static_cast<int>(g.members.size()) - 1 + g.per_node - 1;
  if (step.algorithm == CollectiveAlgorithm::NvlsTree) flows = 1 + 6; // the switch flow and the rail trees' edges
  return std::max(1, kFlowsPerDriver / flows);
}

/** Records member `pos`'s part of a flows or analytic collective that began at `begin` and ends now: waiting since it
 * arrived, communicating since the collective began, the bytes its edges carry, and its flows as messages. */
void account(RunContext& ctx, RankTimeline& timeline, const CollectiveStep& step, const Group& g, int pos,
             double arrived, double begin) {
  timeline.record(IntervalKind::Wait, arrived, begin);
  timeline.record(IntervalKind::Communication, begin, sg4::Engine::get_clock());
  const FlowShare share = flow_share(g, step, pos);
  timeline.bytes_sent += share.sent;
  timeline.bytes_received += share.received;
  if (step.fidelity == Fidelity::Flows) {
    timeline.messages_sent += share.flows;
    ctx.result.messages += share.flows;
    for (std::uint64_t i = 0; i < share.flows; ++i) ctx.event_done();
  }
}

void drive_phases(RunContext& ctx, const CollectiveGroup& g, const CollectiveStep& step, int first, int last,
                  int drivers, int& met, sg4::Semaphore& phase_done, const std::function<void()>& ended) {
  const std::vector<FlowPhase> phases = flow_phases(g, step);
  for (std::size_t i = 0; i < phases.size(); ++i) {
    drive_flows(ctx, g, step, phases[i], first, last);
    barrier(drivers, met, phase_done, [&] {
      const double extra = phase_extra(g, step, phases[i], i + 1 == phases.size());
      if (extra > 0) sg4::this_actor::sleep_for(extra);
      if (i + 1 == phases.size()) ended();
    });
  }
}

/** Flows and analytic with every member in its own actor: every member waits for the last one (Wait). Flows: driven
 * by a few members (driven_flows) when every flow carries bytes, else put_and_get_flows. Analytic: the last member
 * sleeps the closed form before it releases the others, so they wake up at the end (one timer per collective).
 * Everyone is done when all flows are (Communication). */
void rendezvous(RunContext& ctx, RankTimeline& timeline, const CollectiveStep& step, Group& g, int pos) {
  const double arrived = sg4::Engine::get_clock();
  auto& slot = g.slots[g.rendezvous_begun[static_cast<std::size_t>(pos)]++ & 1];
  const int members = ctx.simulated_members[static_cast<std::size_t>(step.group)]; // the others are folded
  double begin = 0.0;
  if (step.fidelity == Fidelity::Flows && ctx.lean_engine && every_flow_carries_bytes(g, step)) {
    // A flows group is one replica (folding.hpp): all its members run or none does.
    PARTSIM_CHECK(members == g.size) << "flows collective on group " << step.group << " with " << members << " of "
                                     << g.size << " members simulated";
    begin = driven_flows(ctx, step, g, slot, pos);
  } else {
    barrier(members, slot.waiting, *slot.released, [&] {
      slot.begin = sg4::Engine::get_clock();
      slot.end = slot.begin + (step.fidelity == Fidelity::Analytic ? analytic_time(g, step) : 0.0);
      if (slot.end > slot.begin) sg4::this_actor::sleep_until(slot.end);
    });
    begin = slot.begin;
    if (step.fidelity == Fidelity::Flows) put_and_get_flows(step, g, slot, members, pos);
  }
  account(ctx, timeline, step, g, pos, arrived, begin);
}

} // namespace partsim::engine
