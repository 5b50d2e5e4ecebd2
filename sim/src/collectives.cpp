// Collectives on SimGrid (engine-internal): ring, double binary tree, hierarchical, all-to-all and broadcast as
// point-to-point messages (steps), as one flow per edge of the algorithm (flows), or as an alpha-beta sleep after a
// rendezvous (analytic). See docs/collectives.md.
#include "collectives.hpp"

#include "partsim/error.hpp"
#include "platform.hpp"
#include "program.hpp"

#include <simgrid/kernel/Timer.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <simgrid/s4u/Semaphore.hpp>
#include <simgrid/simix.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <utility>

namespace sg4 = simgrid::s4u;

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
    sg4::SemaphorePtr released = sg4::Semaphore::create(0);
    int arrived = 0;                                       ///< driven flows: members arrived
    int drivers_waiting = 0;                               ///< driven flows: drivers blocked on `driving`
    sg4::SemaphorePtr driving = sg4::Semaphore::create(0); ///< driven flows: drivers, at the start and between phases
    double begin = 0.0;                                    ///< when the last member arrived
    double end = 0.0;                                      ///< when every member is done
  };

  struct Group {
    int size = 0;
    std::vector<int> ranks;                      ///< by position
    std::vector<sg4::Host*> hosts;               ///< by position
    std::vector<int> node;                       ///< by position: index of its node among the nodes the group spans
    std::vector<int> local;                      ///< by position: index among its node's members
    std::vector<std::vector<int>> members;       ///< by node index: positions, in position order
    int per_node = 1;                            ///< most members on one node
    bool even = true;                            ///< every node has per_node members
    std::vector<std::uint64_t> a2a_begun;        ///< by position: all-to-alls begun (mailbox parity)
    std::vector<std::uint64_t> rendezvous_begun; ///< by position
    std::vector<sg4::Mailbox*> ring_in;          ///< by position: from its left neighbour (ring, broadcast chain)
    std::array<std::vector<sg4::Mailbox*>, 2> tree_up;   ///< by tree and child position: child to parent
    std::array<std::vector<sg4::Mailbox*>, 2> tree_down; ///< by tree and child position: parent to child
    std::vector<sg4::Mailbox*> intra_in;                 ///< hierarchical: from the left neighbour in the node
    std::vector<sg4::Mailbox*> inter_in;                 ///< hierarchical: from the same local index, previous node
    std::array<std::vector<sg4::Mailbox*>, 2> a2a_in;    ///< by parity and position: from every peer
    std::vector<sg4::Mailbox*> flow_in;                  ///< by position: the flows of a flows collective (any sender)
    std::optional<DoubleBinaryTree> tree;
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
      sg4::SemaphorePtr start = sg4::Semaphore::create(0); ///< flows: drivers, until an instance begins
      sg4::SemaphorePtr phase = sg4::Semaphore::create(0); ///< flows: drivers, until the phase's last flow is done
    } passive;
    TwoLevelCost links; ///< slowest intra-node and inter-node paths between members, network ports per node
    LinkCost slowest;   ///< the slower of the two (pipeline chunks, flow latencies)
  };

  std::vector<Group> groups;
};

namespace {

using Group = RunContext::CollectiveGroups::Group;

int mod(int a, int n) {
  return ((a % n) + n) % n;
}

/** Chunk i of `bytes` cut into n near-equal integer pieces that add up to `bytes`. */
std::uint64_t chunk(std::uint64_t bytes, int n, int i) {
  const auto un = static_cast<std::uint64_t>(n);
  return bytes / un + (static_cast<std::uint64_t>(i) < bytes % un ? 1 : 0);
}

/** The transfers a rank posts in one step of an algorithm, waited for together. Each message carries its size, so
 * the receiver counts what arrived. Wait is the time with none of them moving; a transfer moves from its start
 * (both sides posted: SimGrid's start time of a rendezvous comm) to its finish. */
class StepTransfers {
 public:
  StepTransfers(RunContext& ctx, RankTimeline& timeline) : ctx_(ctx), timeline_(timeline) {}

  /** Not detached (which would save the sender's wait): SimGrid 3.32 finds a finished detached comm in one list of
   * all of them, quadratic in the messages in flight (30% slower at 1024 ranks). */
  void send(sg4::Mailbox* to, std::uint64_t bytes) {
    mark_posted();
    comms_.push_back(to->put_async(std::make_unique<std::uint64_t>(bytes).release(), bytes));
    timeline_.bytes_sent += bytes;
    ++timeline_.messages_sent;
    ++ctx_.result.messages;
    ctx_.event_done();
  }

  void receive(sg4::Mailbox* from) {
    mark_posted();
    received_.push_back(nullptr); // a deque: the address SimGrid writes to stays valid
    comms_.push_back(from->get_async<std::uint64_t>(&received_.back()));
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
  std::vector<sg4::CommPtr> comms_;
  std::deque<std::uint64_t*> received_;
  std::vector<std::pair<double, double>> spans_;
  double posted_ = -1.0;
};

// ---- Steps: every message of the algorithm ----

/** `steps` ring steps over a ring of n: in step s the rank at ring index `pos` sends chunk (pos + shift - s) of
 * `bytes` cut in n to `out` and receives its left neighbour's from `in`. Reduce-scatter: shift 0; the all-gather
 * that follows it: shift 1 (the rank then owns chunk pos + 1); a lone all-gather: shift 0. */
void ring_phase(StepTransfers& x, sg4::Mailbox* out, sg4::Mailbox* in, int pos, int n, std::uint64_t bytes, int shift,
                int steps) {
  for (int s = 0; s < steps; ++s) {
    x.send(out, chunk(bytes, n, mod(pos + shift - s, n)));
    x.receive(in);
    x.wait();
  }
}

void ring_steps(StepTransfers& x, const Group& g, const CollectiveStep& step, int pos) {
  const int n = g.size;
  sg4::Mailbox* out = g.ring_in[static_cast<std::size_t>((pos + 1) % n)];
  sg4::Mailbox* in = g.ring_in[static_cast<std::size_t>(pos)];
  switch (step.op) {
  case CollectiveOp::AllReduce:
    ring_phase(x, out, in, pos, n, step.bytes, 0, n - 1);
    ring_phase(x, out, in, pos, n, step.bytes, 1, n - 1);
    break;
  case CollectiveOp::ReduceScatter:
  case CollectiveOp::AllGather:
    ring_phase(x, out, in, pos, n, step.bytes, 0, n - 1);
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
  const auto k =
      static_cast<int>(pipeline_chunks(step.op, step.algorithm, n, static_cast<double>(step.bytes), g.slowest));
  sg4::Mailbox* out = g.ring_in[static_cast<std::size_t>((pos + 1) % n)];
  sg4::Mailbox* in = g.ring_in[static_cast<std::size_t>(pos)];
  for (int s = 0; s < n + k - 2; ++s) {
    if (d > 0 && s - d + 1 >= 0 && s - d + 1 < k) x.receive(in);
    if (d < n - 1 && s - d >= 0 && s - d < k) x.send(out, chunk(step.bytes, k, s - d));
    x.wait();
  }
}

/** Double binary tree, both trees at once, each on half the data in k chunks. With D the deeper tree's depth and d
 * the rank's depth in a tree, in step s it receives chunk s-(D-d-1) from each child and sends chunk s-(D-d) to its
 * parent (reduce), receives chunk s-(D+d-1) from its parent and sends chunk s-(D+d) to its children (broadcast):
 * the root broadcasts a chunk in the step after it has reduced it, and all four streams overlap. */
void tree_steps(StepTransfers& x, const Group& g, const CollectiveStep& step, int pos) {
  const DoubleBinaryTree& tree = *g.tree;
  const int n = g.size;
  const auto k =
      static_cast<int>(pipeline_chunks(step.op, step.algorithm, n, static_cast<double>(step.bytes), g.slowest));
  const int depth = tree.max_depth;
  const std::array<std::uint64_t, 2> half{step.bytes / 2, step.bytes - step.bytes / 2};
  const auto p = static_cast<std::size_t>(pos);
  auto in_range = [k](int j) { return j >= 0 && j < k; };
  for (int s = 0; s < k + 2 * depth - 1; ++s) {
    for (std::size_t t = 0; t < 2; ++t) {
      const int d = tree.depth[t][p];
      const int parent = tree.parent[t][p];
      for (int c : tree.children[t][p])
        if (c >= 0 && in_range(s - (depth - d - 1))) x.receive(g.tree_up[t][static_cast<std::size_t>(c)]);
      if (parent >= 0 && in_range(s - (depth - d))) x.send(g.tree_up[t][p], chunk(half[t], k, s - (depth - d)));
      if (parent >= 0 && in_range(s - (depth + d - 1))) x.receive(g.tree_down[t][p]);
      for (int c : tree.children[t][p])
        if (c >= 0 && in_range(s - (depth + d)))
          x.send(g.tree_down[t][static_cast<std::size_t>(c)], chunk(half[t], k, s - (depth + d)));
    }
    x.wait();
  }
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
    x.send(g.a2a_in[parity][static_cast<std::size_t>(q)], chunk(step.bytes, g.size, q));
    x.receive(g.a2a_in[parity][p]);
  }
  x.wait();
}

// ---- Flows: one flow per edge of the algorithm; Analytic: the closed form ----

/** One flow of a flows collective: from the member that starts it to `to` (positions). */
struct Flow {
  int to = 0;
  std::uint64_t bytes = 0;
};

/** What one member sends and receives in a flows or analytic collective, and how many flows it starts. */
struct Share {
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
  std::uint64_t flows = 0;
};

/** Bytes a ring edge carries over a whole ring collective: 2(n-1)/n S for all-reduce, (n-1)/n S otherwise. */
std::uint64_t ring_edge_bytes(CollectiveOp op, std::uint64_t bytes, int n) {
  const std::uint64_t once = bytes - bytes / static_cast<std::uint64_t>(n);
  return op == CollectiveOp::AllReduce ? 2 * once : once;
}

std::uint64_t tree_half(std::uint64_t bytes, std::size_t tree) {
  return tree == 0 ? bytes / 2 : bytes - bytes / 2;
}

/** Phases of a flows collective, run one after the other: hierarchical has three (intra-node reduce-scatter,
 * inter-node all-reduce, intra-node all-gather; those of a level with one member left out), the others one. */
enum class FlowPhase { Whole, IntraNode, InterNode };

std::vector<FlowPhase> flow_phases(const Group& g, const CollectiveStep& step) {
  if (step.algorithm != CollectiveAlgorithm::Hierarchical) return {FlowPhase::Whole};
  std::vector<FlowPhase> phases;
  if (g.per_node > 1) phases.push_back(FlowPhase::IntraNode);
  if (g.members.size() > 1) phases.push_back(FlowPhase::InterNode);
  if (g.per_node > 1) phases.push_back(FlowPhase::IntraNode);
  return phases;
}

/** The flows member `pos` starts in `phase`: one per edge of the algorithm leaving it, carrying what the algorithm
 * sends over that edge in the whole phase. */
std::vector<Flow> member_flows(const Group& g, const CollectiveStep& step, FlowPhase phase, int pos) {
  const int n = g.size;
  const auto p = static_cast<std::size_t>(pos);
  std::vector<Flow> flows;
  switch (step.algorithm) {
  case CollectiveAlgorithm::Ring:
    if (step.op != CollectiveOp::Broadcast)
      flows.push_back({(pos + 1) % n, ring_edge_bytes(step.op, step.bytes, n)});
    else if (mod(pos - step.root, n) < n - 1)
      flows.push_back({(pos + 1) % n, step.bytes});
    break;
  case CollectiveAlgorithm::Tree:
    for (std::size_t t = 0; t < 2; ++t) {
      if (g.tree->parent[t][p] >= 0) flows.push_back({g.tree->parent[t][p], tree_half(step.bytes, t)});
      for (int c : g.tree->children[t][p])
        if (c >= 0) flows.push_back({c, tree_half(step.bytes, t)});
    }
    break;
  case CollectiveAlgorithm::Hierarchical: {
    const auto node = static_cast<std::size_t>(g.node[p]);
    const auto local = static_cast<std::size_t>(g.local[p]);
    if (phase == FlowPhase::IntraNode) {
      const auto& mine = g.members[node];
      flows.push_back(
          {mine[(local + 1) % mine.size()], ring_edge_bytes(CollectiveOp::ReduceScatter, step.bytes, g.per_node)});
    } else {
      const std::uint64_t part = step.bytes / static_cast<std::uint64_t>(g.per_node);
      flows.push_back({g.members[(node + 1) % g.members.size()][local],
                       ring_edge_bytes(CollectiveOp::AllReduce, part, static_cast<int>(g.members.size()))});
    }
    break;
  }
  case CollectiveAlgorithm::Direct:
    for (int i = 1; i < n; ++i) flows.push_back({(pos + i) % n, chunk(step.bytes, n, (pos + i) % n)});
    break;
  }
  return flows;
}

/** Time a phase takes beyond its flows: the latencies of the algorithm's steps after the first (a flow pays one)
 * and the pipeline's fill and drain, from the closed form on the group's slowest paths. */
double phase_extra(const Group& g, const CollectiveStep& step, FlowPhase phase) {
  const int n = g.size;
  const double alpha = g.slowest.latency;
  const double beta = g.slowest.bandwidth;
  const auto bytes = static_cast<double>(step.bytes);
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
    const auto k = static_cast<double>(pipeline_chunks(step.op, step.algorithm, n, bytes, g.slowest));
    const double depth = g.tree->max_depth;
    return (k + 2 * depth - 2) * alpha + (2 * depth - 1) * g.tree->max_degree * bytes / (2 * k) / beta;
  }
  case CollectiveAlgorithm::Hierarchical:
    if (phase == FlowPhase::IntraNode) return (g.per_node - 2) * g.links.intra.latency;
    return (2 * (static_cast<double>(g.members.size()) - 1) - 1) * g.links.inter.latency;
  case CollectiveAlgorithm::Direct:
    return 0.0;
  }
  return 0.0;
}

Share flow_share(const Group& g, const CollectiveStep& step, int pos) {
  Share s;
  for (FlowPhase phase : flow_phases(g, step))
    for (const Flow& f : member_flows(g, step, phase, pos)) {
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
    s.received = static_cast<std::uint64_t>(g.size - 1) * chunk(step.bytes, g.size, pos);
    break;
  default:
    s.received = s.sent; // every tree and hierarchical edge is matched by one of the same size coming back
  }
  return s;
}

/** Flows member `pos` receives in `phase` (the edges of member_flows that end at it). */
int incoming_flows(const Group& g, const CollectiveStep& step, FlowPhase phase, int pos) {
  switch (step.algorithm) {
  case CollectiveAlgorithm::Ring:
    return step.op != CollectiveOp::Broadcast || mod(pos - step.root, g.size) > 0 ? 1 : 0;
  case CollectiveAlgorithm::Tree:
    return static_cast<int>(member_flows(g, step, phase, pos).size()); // every tree edge runs both ways
  case CollectiveAlgorithm::Hierarchical:
    return 1;
  case CollectiveAlgorithm::Direct:
    return g.size - 1;
  }
  return 0;
}

double analytic_time(const Group& g, const CollectiveStep& step) {
  return collective_time(step.op, step.algorithm, static_cast<double>(step.bytes), g.size, g.per_node,
                         static_cast<int>(g.members.size()), g.links);
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

/** Whether every flow of a flows collective carries a byte at least: a two-host execution needs one (a message of
 * none still pays its latency, so such collectives go member by member, see rendezvous()). */
bool every_flow_carries_bytes(const Group& g, const CollectiveStep& step) {
  switch (step.algorithm) {
  case CollectiveAlgorithm::Ring:
    return step.bytes >= 1; // an edge carries bytes - bytes/n, or the whole message for a broadcast
  case CollectiveAlgorithm::Tree:
    return step.bytes >= 2; // each tree carries half
  case CollectiveAlgorithm::Hierarchical:
    // the inter-node ring carries bytes / per_node; the intra-node one bytes - bytes / per_node
    return step.bytes >= (g.members.size() > 1 ? static_cast<std::uint64_t>(g.per_node) : 1);
  case CollectiveAlgorithm::Direct:
    return step.bytes >= static_cast<std::uint64_t>(g.size); // every peer gets a chunk
  }
  return false;
}

/** Members whose flows one driver starts: as many as keep it near kFlowsPerDriver flows in flight. SimGrid 3.32
 * removes a finished activity from its actor's list by a scan of that list, so an actor with k flows in flight pays
 * O(k) per flow; a few drivers per group instead of one actor per member save most context switches. */
constexpr int kFlowsPerDriver = 32;

int members_per_driver(const Group& g, const CollectiveStep& step) {
  int flows = 1;                                              // ring, hierarchical: one edge leaves each member
  if (step.algorithm == CollectiveAlgorithm::Tree) flows = 6; // a parent and two children in each of two trees
  if (step.algorithm == CollectiveAlgorithm::Direct) flows = g.size - 1;
  return std::max(1, kFlowsPerDriver / flows);
}

/** Starts the flows that members [first, last) send in `phase`, as two-host executions without computation (the
 * default host model turns one into a single network action from the first host to the second, as a message), and
 * waits for them. The executions are created in this actor (which owns them: their finish is O(flows it drives)) and
 * set up and started in the kernel by one simcall. */
void drive_flows(const Group& g, const CollectiveStep& step, FlowPhase phase, int first, int last) {
  struct Pending {
    sg4::ExecPtr exec;
    sg4::Host* from;
    sg4::Host* to;
    double bytes;
  };
  std::vector<Pending> pending;
  for (int pos = first; pos < last; ++pos)
    for (const Flow& f : member_flows(g, step, phase, pos))
      pending.push_back({sg4::Exec::init(), g.hosts[static_cast<std::size_t>(pos)],
                         g.hosts[static_cast<std::size_t>(f.to)], static_cast<double>(f.bytes)});
  simgrid::kernel::actor::simcall_answered([&pending] {
    for (Pending& p : pending)
      p.exec->set_hosts({p.from, p.to})
          ->set_flops_amounts({0.0, 0.0})
          ->set_bytes_amounts({0.0, p.bytes, 0.0, 0.0})
          ->start();
  });
  for (const Pending& p : pending) p.exec->wait(); // not wait_all: see StepTransfers::wait
}

/** Drives the flows of members [first, last) through every phase of `step` with the group's other drivers: after
 * each phase they meet (`met` counts those waiting on `phase_done`, released by the last); the last one to get there
 * sleeps the phase's extra time and, after the last phase, runs `ended` before it releases the others. */
template <typename Ended>
void drive_phases(const Group& g, const CollectiveStep& step, int first, int last, int drivers, int& met,
                  sg4::Semaphore& phase_done, Ended&& ended) {
  const std::vector<FlowPhase> phases = flow_phases(g, step);
  for (std::size_t i = 0; i < phases.size(); ++i) {
    drive_flows(g, step, phases[i], first, last);
    barrier(drivers, met, phase_done, [&] {
      const double extra = phase_extra(g, step, phases[i]);
      if (extra > 0) sg4::this_actor::sleep_for(extra);
      if (i + 1 == phases.size()) ended();
    });
  }
}

/** A flows collective driven by a few of its members (positions that are multiples of members_per_driver): the
 * others only wait for the end. Same schedule as member by member: every flow of a phase starts when the last member
 * has arrived (or the previous phase ended), the phase ends with its last flow, and the last driver to finish sleeps
 * the phase's extra time. Returns the simulated time the flows began. */
double driven_flows(const CollectiveStep& step, Group& g, RunContext::CollectiveGroups::Rendezvous& slot, int pos) {
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
  drive_phases(g, step, pos, std::min(pos + per_driver, g.size), drivers, slot.drivers_waiting, *slot.driving, [&] {
    for (int k = g.size - drivers; k > 0; --k) slot.released->release();
  });
  return slot.begin;
}

/** Records member `pos`'s part of a flows or analytic collective that began at `begin` and ends now: waiting since it
 * arrived, communicating since the collective began, the bytes its edges carry, and its flows as messages. */
void account(RunContext& ctx, RankTimeline& timeline, const CollectiveStep& step, const Group& g, int pos,
             double arrived, double begin) {
  timeline.record(IntervalKind::Wait, arrived, begin);
  timeline.record(IntervalKind::Communication, begin, sg4::Engine::get_clock());
  const Share share = flow_share(g, step, pos);
  timeline.bytes_sent += share.sent;
  timeline.bytes_received += share.received;
  if (step.fidelity == Fidelity::Flows) {
    timeline.messages_sent += share.flows;
    ctx.result.messages += share.flows;
    for (std::uint64_t i = 0; i < share.flows; ++i) ctx.event_done();
  }
}

/** Flows and analytic: every member waits for the last one (Wait). Analytic: everyone then sleeps the closed form.
 * Flows: driven by a few members (driven_flows) when every flow carries bytes; otherwise every member puts its
 * outgoing flows and gets its incoming ones on the group's flow mailboxes (all at the same instant, so they move at
 * once; which put meets which get does not matter, the transfer runs from the put's host to the get's), and after
 * each phase a barrier, where the last member to finish sleeps the phase's extra time. Not Comm::sendto_async: SimGrid
 * 3.32 detaches every host-to-host comm and removes each finished one from one list of all of them (quadratic).
 * Everyone is done when all flows are (Communication). */
void rendezvous(RunContext& ctx, RankTimeline& timeline, const CollectiveStep& step, Group& g, int pos) {
  const double arrived = sg4::Engine::get_clock();
  auto& slot = g.slots[g.rendezvous_begun[static_cast<std::size_t>(pos)]++ & 1];
  const int members = ctx.simulated_members[static_cast<std::size_t>(step.group)]; // the others are folded
  double begin = 0.0;
  const bool driven = ctx.lean_engine && every_flow_carries_bytes(g, step);
  if (step.fidelity == Fidelity::Flows && driven) {
    // A flows group is one replica (folding.hpp): all its members run or none does.
    PARTSIM_CHECK(members == g.size) << "flows collective on group " << step.group << " with " << members << " of "
                                     << g.size << " members simulated";
    begin = driven_flows(step, g, slot, pos);
  } else {
    // Analytic: the last member sleeps the closed form before it releases the others, so they wake up at the end
    // (one timer per collective instead of one per member).
    barrier(members, slot.waiting, *slot.released, [&] {
      slot.begin = sg4::Engine::get_clock();
      slot.end = slot.begin + (step.fidelity == Fidelity::Analytic ? analytic_time(g, step) : 0.0);
      if (slot.end > slot.begin) sg4::this_actor::sleep_until(slot.end);
    });
    begin = slot.begin;
  }
  if (step.fidelity == Fidelity::Flows && !driven) {
    for (FlowPhase phase : flow_phases(g, step)) {
      std::vector<sg4::CommPtr> comms;
      std::deque<std::uint64_t*> received;
      // Not detached puts: SimGrid 3.32 finds a finished detached comm in one list of all of them (quadratic).
      for (const Flow& f : member_flows(g, step, phase, pos))
        comms.push_back(g.flow_in[static_cast<std::size_t>(f.to)]->put_async(
            std::make_unique<std::uint64_t>(f.bytes).release(), f.bytes));
      for (int i = incoming_flows(g, step, phase, pos); i > 0; --i) {
        received.push_back(nullptr);
        comms.push_back(g.flow_in[static_cast<std::size_t>(pos)]->get_async<std::uint64_t>(&received.back()));
      }
      for (const sg4::CommPtr& c : comms) c->wait(); // not wait_all: see StepTransfers::wait
      for (std::uint64_t* r : received) std::unique_ptr<std::uint64_t>{r};
      barrier(members, slot.waiting, *slot.released, [&] {
        const double extra = phase_extra(g, step, phase);
        if (extra > 0) sg4::this_actor::sleep_for(extra);
      });
    }
  }
  account(ctx, timeline, step, g, pos, arrived, begin);
}

// ---- Passive groups: no member waits in an actor ----

Group& group_of(RunContext& ctx, const CollectiveStep& step) {
  return ctx.collectives->groups[static_cast<std::size_t>(step.group)];
}

/** The running instance of passive group `g` ends now (in the kernel): every simulated member records its part on
 * its stream's timeline, the instance its statistics, and each member's stream moves on (which may begin the next
 * instance of this group: its state is reset first). */
void end_passive(RunContext& ctx, Group& g) {
  auto& p = g.passive;
  const CollectiveStep& step = *p.step;
  for (int pos : p.live) {
    const auto rank = static_cast<std::size_t>(g.ranks[static_cast<std::size_t>(pos)]);
    account(ctx, ctx.result.streams[rank], step, g, pos, p.arrival[static_cast<std::size_t>(pos)], p.begin);
  }
  record_collective(ctx, step, sg4::Engine::get_clock() - p.begin);
  p.step = nullptr;
  for (int pos : p.live) passive_collective_done(ctx, g.ranks[static_cast<std::size_t>(pos)]);
}

/** Driver `d` of passive group `g` (a daemon actor): drives each flows instance's flows of its members with the
 * group's other drivers; the last one done ends the instance (in the kernel). Same schedule as member by member. */
void drive_passive(RunContext& ctx, Group& g, int d) {
  auto& p = g.passive;
  const int first = d * p.per_driver;
  const int last = std::min(first + p.per_driver, g.size);
  while (true) {
    p.start->acquire();
    drive_phases(g, *p.step, first, last, p.drivers, p.phase_waiting, *p.phase,
                 [&] { simgrid::kernel::actor::simcall_answered([&] { end_passive(ctx, g); }); });
  }
}

/** Whether `step` can run without its members waiting in an actor: analytic, or flows whose flows all carry bytes. */
bool passive_capable(const Group& g, const CollectiveStep& step) {
  return g.size >= 2 && step.stream != 0 &&
         (step.fidelity == Fidelity::Analytic ||
          (step.fidelity == Fidelity::Flows && every_flow_carries_bytes(g, step)));
}

// ---- Set-up ----

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
  };
  std::vector<Needs> needs(count);
  for (const RankProgram& program : ctx.plan.ranks)
    for (const Step& s : program.steps) {
      const auto* step = std::get_if<CollectiveStep>(&s);
      if (step == nullptr) continue;
      PARTSIM_CHECK(step->group >= 0 && static_cast<std::size_t>(step->group) < count)
          << "collective on group " << step->group << " of " << count;
      PARTSIM_CHECK(is_supported(step->op, step->algorithm))
          << to_string(step->op) << " has no " << to_string(step->algorithm) << " algorithm";
      Needs& n = needs[static_cast<std::size_t>(step->group)];
      n.used = true;
      n.tree |= step->algorithm == CollectiveAlgorithm::Tree;
      n.hierarchical |= step->algorithm == CollectiveAlgorithm::Hierarchical;
      n.flows |= step->fidelity == Fidelity::Flows;
      if (step->fidelity == Fidelity::Steps) {
        n.ring |= step->algorithm == CollectiveAlgorithm::Ring;
        n.a2a |= step->algorithm == CollectiveAlgorithm::Direct;
      }
    }

  state->groups.resize(count);
  for (std::size_t gi = 0; gi < count; ++gi) {
    if (!needs[gi].used) continue;
    Group& g = state->groups[gi];
    const auto& ranks = ctx.plan.groups[gi];
    g.size = static_cast<int>(ranks.size());
    g.ranks = ranks;
    std::vector<int> node_index(static_cast<std::size_t>(ctx.cluster.nodes), -1);
    for (int pos = 0; pos < g.size; ++pos) {
      const int gpu = ctx.plan.ranks[static_cast<std::size_t>(ranks[static_cast<std::size_t>(pos)])].gpu;
      g.hosts.push_back(ctx.platform.gpus.at(static_cast<std::size_t>(gpu)));
      int& index = node_index.at(static_cast<std::size_t>(gpu / ctx.cluster.gpus_per_node));
      if (index < 0) {
        index = static_cast<int>(g.members.size());
        g.members.emplace_back();
      }
      g.node.push_back(index);
      g.local.push_back(static_cast<int>(g.members[static_cast<std::size_t>(index)].size()));
      g.members[static_cast<std::size_t>(index)].push_back(pos);
    }
    for (const auto& mine : g.members) {
      g.per_node = std::max(g.per_node, static_cast<int>(mine.size()));
      g.even = g.even && mine.size() == g.members.front().size();
    }
    if (needs[gi].hierarchical && !g.even)
      throw InputError("plan", fmt::format("/groups/{}", gi),
                       fmt::format("a hierarchical all-reduce needs the same number of members on every node; group {} "
                                   "has between {} and {} per node on {} nodes: use ring or tree",
                                   gi,
                                   std::min_element(g.members.begin(), g.members.end(),
                                                    [](auto& a, auto& b) { return a.size() < b.size(); })
                                       ->size(),
                                   g.per_node, g.members.size()));
    measure_paths(g);
    if (needs[gi].tree) g.tree = double_binary_tree(g.size);
    const auto steps_needed = [&](bool flag) { return flag && g.size > 1; };
    if (steps_needed(needs[gi].ring)) g.ring_in = mailboxes(gi, "ring", g.size);
    if (steps_needed(needs[gi].tree))
      for (std::size_t t = 0; t < 2; ++t) {
        g.tree_up[t] = mailboxes(gi, t == 0 ? "up0" : "up1", g.size);
        g.tree_down[t] = mailboxes(gi, t == 0 ? "down0" : "down1", g.size);
      }
    if (steps_needed(needs[gi].hierarchical)) {
      g.intra_in = mailboxes(gi, "intra", g.size);
      g.inter_in = mailboxes(gi, "inter", g.size);
    }
    if (steps_needed(needs[gi].a2a)) {
      g.a2a_in[0] = mailboxes(gi, "a2a0", g.size);
      g.a2a_in[1] = mailboxes(gi, "a2a1", g.size);
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
  StepTransfers x(ctx, timeline);
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
  }
}

std::pair<std::uint64_t, std::uint64_t> analytic_bytes(const RunContext& ctx, const CollectiveStep& step, int rank) {
  const Group& g = ctx.collectives->groups.at(static_cast<std::size_t>(step.group));
  if (g.size < 2) return {0, 0};
  const Share share = flow_share(g, step, ctx.position(step.group, rank));
  return {share.sent, share.received};
}

bool same_closed_form(const RunContext& ctx, int a, int b) {
  const auto& ga = ctx.collectives->groups.at(static_cast<std::size_t>(a));
  const auto& gb = ctx.collectives->groups.at(static_cast<std::size_t>(b));
  const auto same = [](const LinkCost& x, const LinkCost& y) {
    return x.latency == y.latency && x.bandwidth == y.bandwidth;
  };
  return ga.size == gb.size && ga.per_node == gb.per_node && ga.members.size() == gb.members.size() &&
         ga.even == gb.even && same(ga.links.intra, gb.links.intra) && same(ga.links.inter, gb.links.inter) &&
         ga.links.ports_per_node == gb.links.ports_per_node;
}

void prepare_passive_streams(RunContext& ctx, const std::vector<char>& simulated) {
  if (!ctx.lean_engine) return;
  const auto& plan = ctx.plan;
  auto& groups = ctx.collectives->groups;
  std::vector<char> group_ok(groups.size(), 0);
  std::vector<char> used(groups.size(), 0);
  std::vector<char> stream_ok(plan.ranks.size(), 0);
  for (const RankProgram& program : plan.ranks)
    for (const Step& s : program.steps)
      if (const auto* step = std::get_if<CollectiveStep>(&s)) {
        const auto gi = static_cast<std::size_t>(step->group);
        if (!used[gi]) group_ok[gi] = 1;
        used[gi] = 1;
        group_ok[gi] = group_ok[gi] && passive_capable(groups[gi], *step);
      }
  // A stream is passive when it queues something and only on passive groups; a group when all its members' streams
  // are (an actor-run stream would wait in it): repeat until both agree.
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t r = 0; r < plan.ranks.size(); ++r) {
      bool queues = false;
      bool ok = true;
      for (const Step& s : plan.ranks[r].steps)
        if (const auto* step = std::get_if<CollectiveStep>(&s); step != nullptr && step->stream != 0) {
          queues = true;
          ok = ok && group_ok[static_cast<std::size_t>(step->group)];
        }
      stream_ok[r] = queues && ok;
    }
    for (std::size_t gi = 0; gi < groups.size(); ++gi)
      if (group_ok[gi])
        for (int rank : plan.groups[gi])
          if (!stream_ok[static_cast<std::size_t>(rank)]) {
            group_ok[gi] = 0;
            changed = true;
            break;
          }
  }
  for (std::size_t r = 0; r < plan.ranks.size(); ++r) {
    if (!stream_ok[r] || !simulated[r]) continue;
    CommStream& stream = ctx.streams[r];
    stream.passive = true;
    stream.idle = sg4::Semaphore::create(0);
    ctx.result.streams[r].keep_all = ctx.options.record_all_intervals;
  }
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    if (!group_ok[gi]) continue;
    Group& g = groups[gi];
    auto& p = g.passive;
    p.on = true;
    p.arrival.assign(static_cast<std::size_t>(g.size), 0.0);
    for (int pos = 0; pos < g.size; ++pos)
      if (simulated[static_cast<std::size_t>(g.ranks[static_cast<std::size_t>(pos)])]) p.live.push_back(pos);
    if (p.live.empty()) continue;
    bool flows = false;
    p.per_driver = std::numeric_limits<int>::max();
    for (const Step& s : plan.ranks[static_cast<std::size_t>(g.ranks.front())].steps)
      if (const auto* step = std::get_if<CollectiveStep>(&s);
          step != nullptr && step->group == static_cast<int>(gi) && step->fidelity == Fidelity::Flows) {
        flows = true;
        p.per_driver = std::min(p.per_driver, members_per_driver(g, *step));
      }
    if (!flows) continue;
    // A flows group is one replica (folding.hpp): all its members run or none does.
    PARTSIM_CHECK(p.live.size() == static_cast<std::size_t>(g.size))
        << "flows collectives on group " << gi << " with " << p.live.size() << " of " << g.size << " members simulated";
    p.drivers = (g.size + p.per_driver - 1) / p.per_driver;
    for (int d = 0; d < p.drivers; ++d)
      sg4::Actor::create(fmt::format("flows-{}-{}", gi, d), g.hosts[static_cast<std::size_t>(d * p.per_driver)],
                         [&ctx, &g, d] { drive_passive(ctx, g, d); })
          ->daemonize();
  }
}

void arrive_passively(RunContext& ctx, int rank, const CollectiveStep& step) {
  Group& g = group_of(ctx, step);
  auto& p = g.passive;
  PARTSIM_CHECK(p.on) << "rank " << rank << " arrives passively at a collective on active group " << step.group;
  const int pos = ctx.position(step.group, rank);
  p.arrival[static_cast<std::size_t>(pos)] = sg4::Engine::get_clock();
  if (++p.arrived < ctx.simulated_members[static_cast<std::size_t>(step.group)]) return;
  p.arrived = 0;
  p.step = &step;
  p.begin = sg4::Engine::get_clock();
  // One simcall from an actor (none from the kernel): an analytic instance ends by a kernel timer at its closed form,
  // a flows one when its drivers are done.
  simgrid::kernel::actor::simcall_answered([&ctx, &g] {
    auto& q = g.passive;
    if (q.step->fidelity == Fidelity::Analytic)
      simgrid::kernel::timer::Timer::set(q.begin + analytic_time(g, *q.step), [&ctx, &g] { end_passive(ctx, g); });
    else
      for (int d = 0; d < q.drivers; ++d) q.start->release();
  });
}

} // namespace partsim::engine
