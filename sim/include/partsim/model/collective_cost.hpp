// Collectives: operations, algorithms and fidelity levels, with their alpha-beta closed forms and the bandwidth
// figures nccl-tests reports. Pure arithmetic, no SimGrid: the engine's implementations are checked against these.
#pragma once

#include "partsim/common/enum_names.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace partsim {

struct ClusterSpec;
struct CollectiveStep;

/** a mod n in [0, n) for n > 0, also for negative a. */
inline int mod(int a, int n) {
  return ((a % n) + n) % n;
}

/** Chunk i of `bytes` cut into n near-equal integer pieces that add up to `bytes`. */
inline std::uint64_t chunk(std::uint64_t bytes, int n, int i) {
  const auto un = static_cast<std::uint64_t>(n);
  return bytes / un + (static_cast<std::uint64_t>(i) < bytes % un ? 1 : 0);
}

/** What a collective computes. Sizes follow nccl-tests: `bytes` is the buffer each rank holds (all-reduce,
 * broadcast), the input of each rank (reduce-scatter, all-to-all) or the output of each rank (all-gather). */
enum class CollectiveOp : std::uint8_t { AllReduce, ReduceScatter, AllGather, AllToAll, Broadcast };

/** How it is computed. `Ring`: n-1 (or 2(n-1)) neighbour steps; `Tree`: NCCL's double binary tree, pipelined;
 * `Hierarchical`: intra-node reduce-scatter, inter-node all-reduce on 1/g of the data, intra-node all-gather;
 * `Direct`: every rank sends to every other rank at once (all-to-all); `Nvls`: NVLink SHARP, the NVSwitch reduces
 * and multicasts (all-reduce inside one node whose switch has it); `NvlsTree`: NCCL's NVLS_TREE across nodes, NVLS
 * inside each node and a double binary tree between the nodes on each rail, pipelined (nvls_tree_time). */
enum class CollectiveAlgorithm : std::uint8_t { Ring, Tree, Hierarchical, Direct, Nvls, NvlsTree, TwoHop };

/** How NCCL's kernels move the data (NCCL's protocols, src/graph/tuning.cc and src/device/prims_*.h):
 * `Simple`: bulk copies with a fence and a flag per chunk (full bandwidth, the largest per-step latency);
 * `LL128`: 128-byte lines of 120 bytes of data and an 8-byte flag (NVLink only; 120/128 of the bandwidth);
 * `LL` (low latency): 8-byte stores of 4 bytes of data and a 4-byte flag (half the bandwidth, the smallest latency). */
enum class CollectiveProtocol : std::uint8_t { Simple, LL128, LL };

/** How faithfully the engine simulates it. `Steps`: every message of the algorithm; `Flows`: one flow per edge of the
 * algorithm for its whole duration plus the latency terms; `Analytic`: alpha-beta time, no network simulation. */
enum class Fidelity : std::uint8_t { Steps, Flows, Analytic };

/** What a collective belongs to, for the report's exposed communication by kind. */
enum class CommKind : std::uint8_t { Data, Tensor, Pipeline, Expert, Context };

template <>
struct EnumNames<CollectiveOp> {
  static constexpr std::array<EnumEntry<CollectiveOp>, 5> entries{{{CollectiveOp::AllReduce, "all_reduce"},
                                                                   {CollectiveOp::ReduceScatter, "reduce_scatter"},
                                                                   {CollectiveOp::AllGather, "all_gather"},
                                                                   {CollectiveOp::AllToAll, "all_to_all"},
                                                                   {CollectiveOp::Broadcast, "broadcast"}}};
};
template <>
struct EnumNames<CollectiveAlgorithm> {
  static constexpr std::array<EnumEntry<CollectiveAlgorithm>, 7> entries{
      {{CollectiveAlgorithm::Ring, "ring"},
       {CollectiveAlgorithm::Tree, "tree"},
       {CollectiveAlgorithm::Hierarchical, "hierarchical"},
       {CollectiveAlgorithm::Direct, "direct"},
       {CollectiveAlgorithm::Nvls, "nvls"},
       {CollectiveAlgorithm::NvlsTree, "nvls_tree"},
       {CollectiveAlgorithm::TwoHop, "two_hop"}}};
};
template <>
struct EnumNames<CollectiveProtocol> {
  static constexpr std::array<EnumEntry<CollectiveProtocol>, 3> entries{
      {{CollectiveProtocol::Simple, "simple"}, {CollectiveProtocol::LL128, "ll128"}, {CollectiveProtocol::LL, "ll"}}};
};
template <>
struct EnumNames<Fidelity> {
  static constexpr std::array<EnumEntry<Fidelity>, 3> entries{
      {{Fidelity::Steps, "steps"}, {Fidelity::Flows, "flows"}, {Fidelity::Analytic, "analytic"}}};
};
template <>
struct EnumNames<CommKind> {
  static constexpr std::array<EnumEntry<CommKind>, 5> entries{{{CommKind::Data, "data"},
                                                               {CommKind::Tensor, "tensor"},
                                                               {CommKind::Pipeline, "pipeline"},
                                                               {CommKind::Expert, "expert"},
                                                               {CommKind::Context, "context"}}};
};

inline std::string to_string(CollectiveOp op) {
  return std::string(enum_name(op));
}
inline std::string to_string(CollectiveAlgorithm algorithm) {
  return std::string(enum_name(algorithm));
}
inline std::string to_string(CollectiveProtocol protocol) {
  return std::string(enum_name(protocol));
}
inline std::string to_string(Fidelity fidelity) {
  return std::string(enum_name(fidelity));
}
inline std::string to_string(CommKind kind) {
  return std::string(enum_name(kind));
}

/** Which algorithms compute which operation: all-reduce {ring, tree, hierarchical, nvls}, reduce-scatter and
 * all-gather {ring}, all-to-all {direct}, broadcast {ring: a pipelined chain from the root}. */
bool is_supported(CollectiveOp op, CollectiveAlgorithm algorithm);

/** One hop: alpha (s, one way) and beta's inverse (bytes/s, each direction). */
struct LinkCost {
  double latency = 0.0;
  double bandwidth = 0.0;
};

/** A two-level cluster: GPUs inside a node on `intra` links (each GPU its own full-duplex port to an NVSwitch-like
 * crossbar), nodes joined by `inter` links: `ports_per_node` network ports per node (1: one NIC shared by the node's
 * GPUs; g: one NIC per GPU, rail-style), each of `inter.bandwidth`. A uniform setting is a two-level one with one GPU
 * per node. */
struct TwoLevelCost {
  LinkCost intra;
  LinkCost inter;
  int ports_per_node = 1;
  int channels = 0; ///< rings a ring across nodes runs as the scenario asks (0: ring_channels' default)
  /** NVLink SHARP of the intra-node switch: the fraction of `intra.bandwidth` its reductions and multicasts reach,
   * 0 where the switch has none; and the latency of one NVLS all-reduce. */
  double nvls_efficiency = 0.0;
  double nvls_latency = 0.0;
  /** NVLS-tree's most bus bandwidth per head (one head per member, each on its NIC) on two nodes and on three or more
   * (bytes/s; NCCL's perChMaxNVLSTreeBw, the intra-node link's `nvls.tree_head_bandwidth`), 0 for no limit. */
  double nvls_tree_head_two_nodes = 0.0;
  double nvls_tree_head_more_nodes = 0.0;
  /** The intra-node links are NVLink (NCCL's NCCL_HW_NVLINK latencies, LL128 allowed); else PCIe (NCCL_HW_PCI, no
   * LL128). */
  bool intra_nvlink = false;
  /** The most bus bandwidth NCCL's LL protocol reaches inside one node (bytes/s; the intra-node link's
   * `ll_max_bandwidth`), 0 for no limit. */
  double ll_max_intra = 0.0;
};

/** Time of a direct all-to-all of `bytes` per member over the members of `node_of` (each member's node index), in
 * which member p sends member q (bytes / n) times weight[q] (`by_source` false: a mixture of experts' dispatch, the
 * tokens going to each expert rank in proportion to its load) or times weight[p] (`by_source` true: the combine).
 * Inside a node a member's port carries max((g_k - 1) w_p, W_k - w_p) chunks one way or the other (W_k: the node's
 * weight, g_k its members); between nodes a node's NICs carry max(g_k (W - W_k), (n - g_k) W_k) chunks (W: the
 * group's), over min(ports_per_node, g_k) ports. The busiest port or node sets the time, after one latency: with
 * every weight 1 it is the uniform direct all-to-all's closed form. The form is the same both ways: the dispatch's
 * busiest receiver is the combine's busiest sender. */
double skewed_all_to_all_time(double bytes, const std::vector<double>& weight, const std::vector<int>& node_of,
                              const TwoLevelCost& links);

/** Time of a two-hop all-to-all (DeepEP's internode dispatch and combine, `two_hop`) of `bytes` per member over an
 * even group: `members[b][l]` is the position of the member at local index l of node b (every node has as many).
 * Member p sends member q (bytes / n) times weight[q] (dispatch) or weight[p] (combine); none given: 1. Dispatch: in a
 * first round each member sends, for each other node b, one message over the network to the member of its own local
 * index there (its rail), of node_share[b] (none given: 1) times what it sends b's members, and beside it its own
 * node's members their part over NVLink (the directs); in a second round each member forwards over NVLink to its
 * node's members what it received for them from the network (each copy whole: node_share is the network's saving, a
 * token sent once to a node where several of its experts are). Combine: the same reversed, the forwards first (each
 * expert rank sends a rail member what that rail's sources on other nodes need), then the network messages with the
 * directs beside them. Each round takes its busiest port's load over that port's bandwidth after one latency: a
 * member's GPU port each way inside a node, its node's NIC local x ports_per_node / per_node each way between nodes
 * (the rail blocks of the platform), as schedule_time times the schedule (collective_schedule.hpp); the tests check
 * them equal. Both directions carry the same loads, out and in swapped, so one form serves both. */
double two_hop_all_to_all_time(double bytes, const std::vector<std::vector<int>>& members,
                               const std::vector<double>& weight, const std::vector<double>& node_share,
                               const TwoLevelCost& links);

/** Time of an NVLS all-reduce of `bytes` over n members of one node: each member sends its whole buffer into the
 * switch, which reduces it, and gets back the reduced 1/n it owns (multimem load-reduce); it then writes that 1/n
 * once and the switch multicasts it to every member (multimem store). Pipelined, each GPU port carries
 * bytes (1 + 1/n) each way: nvls_latency + bytes (n+1)/n / (nvls_efficiency B1). 0 when n < 2. */
double nvls_time(double bytes, int n, const TwoLevelCost& links);

/** NVLS-tree all-reduce of `bytes` over g members on each of m >= 2 nodes (NCCL's NVLS_TREE, src/device/
 * all_reduce.h): inside each node the switch reduces each member's 1/g share onto it and multicasts the result back
 * (nvls_time's port traffic, bytes (1 + 1/g) each way per port); between the nodes member i of every node runs a
 * double binary tree all-reduce of its share over its own NIC (rail i; the m-node tree's tree_time on the inter-node
 * link, its bandwidth shared when the node has fewer ports than members). NCCL pipelines the three parts chunk by
 * chunk, so the time is the NVLS latency plus the slower of the two: nvls_latency + max(bytes (g+1) / (g e B_intra),
 * tree_time(m, bytes / g, inter)), e = nvls_tree_efficiency (NCCL's per-head cap included). The tree's per-step
 * latencies of NCCL's tuner are protocol_latency's. */
double nvls_tree_time(double bytes, int g, int m, const TwoLevelCost& links);

/** The fraction of the intra-node bandwidth NVLS-tree's switch traffic reaches over g members on each of m nodes: the
 * switch's nvls_efficiency e, or less where NCCL's per-head cap binds. NCCL's tuner (src/graph/tuning.cc) gives each
 * of the g heads at most P bus bandwidth (P: nvls_tree_head_two_nodes for m = 2, nvls_tree_head_more_nodes for
 * m >= 3), so the all-reduce of `bytes` over n = g m ranks takes at least bytes 2(n-1) / (n g P); the switch part,
 * bytes (g+1) / (g e' B_intra), reaches it at e' = (g+1) n P / (2 (n-1) B_intra). Returns min(e, e'); e for m < 2 or
 * no cap. */
double nvls_tree_efficiency(int g, int m, const TwoLevelCost& links);

/** The cluster's two levels of links as the collectives' closed forms see them: its intra-node links, its NICs and
 * their number per node (at least 1). */
TwoLevelCost two_level_cost(const ClusterSpec& cluster);

/** Channels of a ring reduce-scatter, all-gather or all-reduce over a group of `per_node` members on each of `nodes`
 * nodes whose members on one node reach the network through `ports` distinct NICs: NCCL runs one ring per channel,
 * each entering and leaving a node through its own NIC (rail-aligned), so that every NIC carries 1/C of the data.
 * C = min(per_node, ports) when the group spans several nodes with several members on each, else 1 (inside a node
 * every channel shares the GPU's one NVLink port, so more rings move the data no faster). Other operations and
 * algorithms: 1. `requested` > 0 (the scenario's `channels`) replaces min(per_node, ports), at most per_node. */
int ring_channels(CollectiveOp op, CollectiveAlgorithm algorithm, int per_node, int nodes, int ports,
                  int requested = 0);

/** NCCL's double binary tree over n ranks (ncclGetDtree): tree 0 is a binary tree in which odd ranks are leaves and
 * rank 0 the root; tree 1 mirrors it (n even) or shifts it by one (n odd), so every rank is an inner node of at
 * most one tree. Each tree carries half of the data. */
struct DoubleBinaryTree {
  std::array<std::vector<int>, 2> parent;                  ///< per tree, per rank; -1 for the root
  std::array<std::vector<std::array<int, 2>>, 2> children; ///< per tree, per rank; -1 where absent
  std::array<std::vector<int>, 2> depth;                   ///< per tree, per rank; 0 for the root
  int max_depth = 0;                                       ///< over both trees
  /** Most chunks one rank sends (= receives) per pipeline step when both trees reduce up and broadcast down at once:
   * its degree summed over the two trees (4 for n >= 4). */
  int max_degree = 0;
};
DoubleBinaryTree double_binary_tree(int n);

/** Whether a tree all-reduce over n members, g on each of m nodes, runs as NCCL's tree across nodes (node_tree_time):
 * several nodes, several members on each, the same number on every node (n = g m). Otherwise (one node, one member
 * per node, an uneven group) partsim runs the double binary tree over the members themselves. */
bool node_tree(int n, int g, int m);

/** Channels of NCCL's tree across nodes over g members on each of m nodes whose members reach the network through
 * `ports` NICs: one per NIC, as its rings (ring_channels' rule: min(g, ports), or `requested` > 0, at most g); 1 when
 * the group is not a node_tree. The collectives pass no request: a scenario's `channels` sets its rings only. */
int tree_channels(int per_node, int nodes, int ports, int requested = 0);

/** NCCL's tree across nodes, channel c of C: inside every node a chain from the member of local index
 * e_c = c g / C (the chain's head, on that channel's NIC) up the local indices, e_c, e_c + 1, ..., e_c - 1 (mod g);
 * the heads of the nodes join a double binary tree over the nodes on their NIC (the rail tree). A member sends its
 * chain parent (local - 1) the chunks of every channel it is not the head of, and its chain child (local + 1) those of
 * every channel it is not the tail of. `up` and `down`: what member `local` sends each way of `bytes`, the channels
 * cut by chunk(); `head`: the channel it heads (-1: none). */
struct ChainShare {
  std::uint64_t up = 0;
  std::uint64_t down = 0;
  int head = -1;
};
ChainShare chain_share(std::uint64_t bytes, int g, int channels, int local);

/** The most any member of a node_tree's node sends over its NVLink port, per byte of the collective: max over the
 * local indices of (channels it does not head + channels it does not end) / C. (2C - 2) / C when C = g. */
double chain_fraction(int g, int channels);

/** Chunks of each rail tree of a node tree all-reduce of `bytes` (on the links) over m nodes and C channels:
 * tree_chunks of the m-node tree on a channel's share, bytes / C. */
std::uint64_t node_tree_chunks(int m, int channels, double bytes, const LinkCost& link);

/** NCCL's tree all-reduce across nodes (NCCL_ALGO_TREE; src/graph/connect.cc connectTrees, src/graph/trees.cc
 * ncclGetDtree over the nodes): C channels, each on 1/C of the data, each a chain through every node's members
 * (chain_share) whose heads run the double binary tree over the m nodes on their own NIC. NCCL pipelines the chain
 * and the rail tree chunk by chunk, so the time is the slower of the two: the busiest NVLink port, alpha1 +
 * chain_fraction(g, C) bytes / B1, and the rail tree's tree_time(m, bytes / C) on a NIC (its bandwidth shared when
 * the node has fewer ports than channels). Its per-step latencies (NCCL's 2((g-1) intra + log2(m) inter)) are
 * protocol_latency's. `rail_tree`: double_binary_tree(m). */
double node_tree_time(const DoubleBinaryTree& rail_tree, double bytes, int g, int channels, const TwoLevelCost& links);

/** Most pipeline chunks a tree or broadcast uses (bounds the messages of a step-level run). */
inline constexpr std::uint64_t kMaxPipelineChunks = 128;

/** Chunks k of a pipelined collective (tree all-reduce, ring broadcast) over n ranks on links `link`: the k that
 * minimises its closed form (see collective_time), rounded, within [1, kMaxPipelineChunks] and at most one chunk per
 * byte. 1 for the other algorithms. */
std::uint64_t pipeline_chunks(CollectiveOp op, CollectiveAlgorithm algorithm, int n, double bytes,
                              const LinkCost& link);

/** pipeline_chunks and the closed form of a tree all-reduce over `tree` (built once by a caller that keeps it: the
 * tree's construction is O(n), these are O(1)). */
std::uint64_t tree_chunks(const DoubleBinaryTree& tree, double bytes, const LinkCost& link);
double tree_time(const DoubleBinaryTree& tree, double bytes, const LinkCost& link);

/** Chunks of each rail tree of an NVLS-tree all-reduce of `bytes` (on the links) over g members on each of m nodes:
 * tree_chunks of the m-node tree on a member's share, bytes / g. */
std::uint64_t nvls_tree_chunks(int m, int g, double bytes, const LinkCost& link);

/** Alpha-beta time of a collective of `bytes` (nccl-tests sizes) over n ranks, each with its own port of `link`
 * (a non-blocking switch). With c = bytes / n, alpha = latency, B = bandwidth:
 * - all-reduce ring: 2(n-1)(alpha + c/B); reduce-scatter and all-gather ring: (n-1)(alpha + c/B);
 * - all-to-all direct: alpha + (n-1) c/B (n-1 concurrent flows share each port);
 * - broadcast ring (a chain from the root, k chunks): (n+k-2)(alpha + bytes/(k B));
 * - all-reduce tree (k chunks per tree, depth D, degree L of double_binary_tree): both trees reduce up and broadcast
 *   down at once, one chunk of bytes/(2k) per tree edge and step: (k+2D-1)(alpha + L bytes/(2k B)), which tends to
 *   2 bytes/B (L = 4) as k grows;
 * - all-reduce hierarchical: the ring (one GPU per node);
 * - all-reduce nvls: not on a uniform link (0 for n < 2, else an error).
 * 0 when n < 2. */
double collective_time(CollectiveOp op, CollectiveAlgorithm algorithm, double bytes, int n, const LinkCost& link);

/** The same on a two-level cluster: `nodes` nodes of `gpus_per_node` members each (the group in node-major order):
 * - ring (every op): each step is paced by the slower of an intra-node hop (alpha1 + c/B1) and a network hop
 *   (alpha2 + c/(min(C, P) B2)) with C = ring_channels: each channel's ring enters and leaves every node once,
 *   carrying c/C, the C rings spread over the P ports (a broadcast chain is one channel);
 * - hierarchical all-reduce: intra-node ring reduce-scatter (g-1)(alpha1 + bytes/(g B1)), then g inter-node ring
 *   all-reduces of bytes/g sharing the node's ports, 2(m-1)(alpha2 + bytes/(m P B2)) with P = min(ports, g), then
 *   the intra-node all-gather (g-1)(alpha1 + bytes/(g B1));
 * - all-to-all direct: the later of the intra-node part alpha1 + (g-1) c/B1 and the network part
 *   alpha2 + g (N-g) c/(P B2), c = bytes/N;
 * - tree: across nodes with several members on each (node_tree), node_tree_time; else (one node, one member per
 *   node, uneven groups) the uniform form on the slower level;
 * - nvls (one node, a switch with NVLink SHARP): nvls_time;
 * - nvls_tree (several nodes, the same count on each): nvls_tree_time.
 * Requires gpus_per_node >= 1, nodes >= 1. */
double collective_time(CollectiveOp op, CollectiveAlgorithm algorithm, double bytes, int gpus_per_node, int nodes,
                       const TwoLevelCost& links);

/** The same for a group of n members with at most `gpus_per_node` on each of `nodes` nodes (uneven groups). */
double collective_time(CollectiveOp op, CollectiveAlgorithm algorithm, double bytes, int n, int gpus_per_node,
                       int nodes, const TwoLevelCost& links);

/** The slower hop of a two-level setting with `nodes` nodes: the network when nodes > 1 and g == 1 or the network is
 * slower, per figure (largest latency, smallest bandwidth). */
LinkCost slowest_link(const TwoLevelCost& links, int gpus_per_node, int nodes);

/** nccl-tests' algorithm bandwidth: bytes / time (bytes/s); 0 when time <= 0. */
double algorithm_bandwidth(CollectiveOp op, double bytes, double time);

/** nccl-tests' bus bandwidth: algbw x 2(n-1)/n (all-reduce), (n-1)/n (reduce-scatter, all-gather, all-to-all),
 * 1 (broadcast). */
double bus_bandwidth(CollectiveOp op, int n, double algbw);

/** Messages the engine simulates for one collective `step` over n ranks on `nodes` nodes (n/nodes per node), with
 * `link` the slowest hop (it sets the pipeline chunks) and `channels` its rings (ring_channels) or a node tree's
 * channels (tree_channels); a node tree: its chains' sends (2 per member, 2(g-1) per node with one channel or g = 2)
 * and its C rail trees' 4(m-1)k (flows: 4(m-1) each); otherwise steps: every
 * point-to-point message (ring all-reduce 2(n-1)n C, ring reduce-scatter / all-gather (n-1)n C, broadcast (n-1)k,
 * tree 4(n-1)k, hierarchical 2m g(g-1) + 2g m(m-1), all-to-all n(n-1), nvls 2n(n-1)); flows: one per edge (ring
 * n C, broadcast n-1, tree 4(n-1), hierarchical 2n + n when both levels exist, all-to-all and nvls n(n-1));
 * analytic: 0. `wire_factor`: the collective's (protocol_wire_factor with its group), 0 for the protocol's. */
std::uint64_t planned_messages(const CollectiveStep& step, int n, int nodes, const LinkCost& link, int channels = 1,
                               double wire_factor = 0.0);

/** `auto` algorithm, NCCL-like: choose_method's algorithm: the supported algorithm with the smallest two-level closed
 * form with its best protocol. Hierarchical only when
 * the group spans several nodes with the same number of members on each (n divisible by nodes) and more than one per
 * node; nvls only inside one node whose switch has NVLink SHARP (nvls_available). */
CollectiveAlgorithm choose_algorithm(CollectiveOp op, int n, int nodes, double bytes, const TwoLevelCost& links);

/** Whether an NVLS all-reduce can run over a group on `nodes` nodes: one node, whose switch has NVLink SHARP. */
bool nvls_available(int nodes, const TwoLevelCost& links);

/** Whether `auto` may take NVLS-tree for an all-reduce over n members on `nodes` nodes: at least 2 nodes, the same
 * number g >= 2 on each, a switch with NVLink SHARP, and a NIC per member (ports_per_node >= g: NCCL runs one NVLS
 * head per NIC). A scenario may still ask for it with fewer NICs (the rails then share them). */
bool nvls_tree_available(int n, int nodes, const TwoLevelCost& links);

/** Bytes a protocol puts on the links per byte of data: Simple 1, LL128 128/120, LL 2. */
double protocol_wire_factor(CollectiveProtocol protocol);

/** NCCL's limit on LL's bus bandwidth over a group on `nodes` nodes (its tuner's `llMaxBws`, src/graph/tuning.cc at
 * 5067397c): inside one node the GPU generation's figure (links.ll_max_intra, 0 for none); across nodes a figure of
 * the hosts, which NCCL takes from the CPU vendor: 39 GB/s on 2 nodes and 20.4 GB/s on more for x86 Intel hosts
 * (assumed, as for the network post overhead of protocol_latency). */
double ll_bandwidth_limit(int nodes, const TwoLevelCost& links);

/** Bus bandwidth of `algorithm`'s data term with Simple over g members per node on m nodes (bytes/s): ring the slower
 * of an intra-node hop and a network hop over its channels' NICs (min(B1, min(C, P) B2)); tree the slowest link;
 * hierarchical min(B1, min(P, g) B2); a level with one member or node drops out. */
double simple_bus_bandwidth(CollectiveOp op, CollectiveAlgorithm algorithm, int gpus_per_node, int nodes,
                            const TwoLevelCost& links);

/** Bytes on the links per byte of data of a collective: protocol_wire_factor, except that LL's bus bandwidth is at
 * most ll_bandwidth_limit, as in NCCL's tuner (ring: min(llMaxBw, busBw / 2)): LL's factor is
 * max(2, simple_bus_bandwidth / limit), every message of the collective occupying the links that much longer. */
double protocol_wire_factor(CollectiveOp op, CollectiveAlgorithm algorithm, CollectiveProtocol protocol,
                            int gpus_per_node, int nodes, const TwoLevelCost& links);

/** Whether `algorithm` runs with `protocol` on these links: NVLS and all-to-all (point-to-point sends) run Simple only;
 * LL128 needs NVLink inside the node (NCCL enables it only when the intra-node path is NVLink). */
bool protocol_available(CollectiveAlgorithm algorithm, CollectiveProtocol protocol, const TwoLevelCost& links);

/** Latency a protocol adds to a collective over n members, g per node on m nodes, as NCCL's tuner models it
 * (ncclTopoTuneModel, src/graph/tuning.cc at 5067397c): a base latency per collective (ring: LL 6.6, LL128 14,
 * Simple 8.4 us; tree: 6.8, 14, 8.4 us) plus a latency per step, for each hop the larger of NCCL's figure for its
 * hardware (NVLink ring: 0.6, 1.9, 3.4 us; PCIe ring: 1.0, 2.5, 5.7 us; network ring: 2.7, 4.0, 14 us; trees their
 * own) less what the link's latency already pays (intra-node: NCCL's figure includes the wire; network: NCCL adds the
 * network's latency to its figure, and once more for Simple's flush), and, across nodes, NCCL's network post overhead
 * (1 us, x3 for Simple). Ring: (steps - s2) intra-node steps and s2 = 2(m-1) (all-reduce) or m-1 network steps;
 * tree: 2 D steps on the slowest hop (D the tree's depth); hierarchical: 2(g-1) intra-node and 2(m-1) network steps;
 * NVLS and all-to-all: 0 (NVLS pays its own latency, nvls_time); NVLS-tree: 2 floor(log2 m) network steps of NCCL's
 * NVLSTree figure (20.9 us) plus the network's latency for Simple's flush (its NVLS part is nvls_tree_time's). 0 when
 * n < 2. */
double protocol_latency(CollectiveOp op, CollectiveAlgorithm algorithm, CollectiveProtocol protocol, int n,
                        int gpus_per_node, int nodes, const TwoLevelCost& links);

/** The two-level closed form with a protocol: protocol_latency plus the closed form of the bytes the protocol puts on
 * the links (bytes x protocol_wire_factor). */
double collective_time(CollectiveOp op, CollectiveAlgorithm algorithm, CollectiveProtocol protocol, double bytes, int n,
                       int gpus_per_node, int nodes, const TwoLevelCost& links);

/** An algorithm and the protocol it runs with. */
struct CollectiveMethod {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::Ring;
  CollectiveProtocol protocol = CollectiveProtocol::Simple;
};

/** `auto`, as NCCL's tuner picks: among the supported algorithms (or `algorithm` when given) and the protocols they run
 * with on these links (or `protocol` when given), the pair with the smallest closed form with its protocol (the
 * availability rules of choose_algorithm). A tree all-reduce is priced as its tuner prices it, at 0.92 of its
 * bandwidth (busBw * .92 in src/graph/tuning.cc), when the algorithm is not given: it wins only by more than that. */
CollectiveMethod choose_method(CollectiveOp op, int n, int nodes, double bytes, const TwoLevelCost& links,
                               std::optional<CollectiveAlgorithm> algorithm = std::nullopt,
                               std::optional<CollectiveProtocol> protocol = std::nullopt);

/** Message budgets of `auto` fidelity (see docs/collectives.md for the measurements behind them). */
inline constexpr std::uint64_t kMaxStepMessages = 1'000'000; ///< ~3 us each: a few seconds of wall time
inline constexpr std::uint64_t kMaxFlowMessages = 200'000;   ///< concurrent flows of the whole run

/** `auto` fidelity from a run's totals over all its collectives and iterations: steps while the step-level messages
 * stay within kMaxStepMessages, else flows while the flows stay within kMaxFlowMessages, else analytic. */
Fidelity choose_fidelity(std::uint64_t step_messages, std::uint64_t flow_messages);

} // namespace partsim
