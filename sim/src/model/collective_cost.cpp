// Collectives as arithmetic: names, NCCL's double binary tree, alpha-beta closed forms, nccl-tests bandwidths, message
// counts and the `auto` choices of algorithm and fidelity.
#include "partsim/model/collective_cost.hpp"

#include "partsim/common/error.hpp"
#include "partsim/plan/plan.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace partsim {

bool is_supported(CollectiveOp op, CollectiveAlgorithm algorithm) {
  switch (op) {
  case CollectiveOp::AllReduce:
    return algorithm == CollectiveAlgorithm::Ring || algorithm == CollectiveAlgorithm::Tree ||
           algorithm == CollectiveAlgorithm::Hierarchical || algorithm == CollectiveAlgorithm::Nvls ||
           algorithm == CollectiveAlgorithm::NvlsTree;
  case CollectiveOp::ReduceScatter:
  case CollectiveOp::AllGather:
  case CollectiveOp::Broadcast:
    return algorithm == CollectiveAlgorithm::Ring;
  case CollectiveOp::AllToAll:
    return algorithm == CollectiveAlgorithm::Direct || algorithm == CollectiveAlgorithm::TwoHop;
  }
  return false;
}

int ring_channels(CollectiveOp op, CollectiveAlgorithm algorithm, int per_node, int nodes, int ports, int requested) {
  if (algorithm != CollectiveAlgorithm::Ring || op == CollectiveOp::Broadcast || op == CollectiveOp::AllToAll) return 1;
  if (nodes < 2 || per_node < 2) return 1;
  return std::clamp(requested > 0 ? requested : ports, 1, per_node);
}

namespace {

/** NCCL's ncclGetBtree: rank 0 is the root with one child; odd ranks are leaves. */
void btree(int n, int rank, int& up, int& down0, int& down1) {
  int bit = 1;
  for (; bit < n; bit <<= 1)
    if ((bit & rank) != 0) break;
  if (rank == 0) {
    up = -1;
    down0 = -1;
    down1 = n > 1 ? bit >> 1 : -1;
    return;
  }
  up = (rank ^ bit) | (bit << 1);
  if (up >= n) up = rank ^ bit;
  int lowbit = bit >> 1;
  down0 = lowbit == 0 ? -1 : rank - lowbit;
  down1 = lowbit == 0 ? -1 : rank + lowbit;
  while (down1 >= n) {
    lowbit >>= 1;
    down1 = lowbit == 0 ? -1 : rank + lowbit;
  }
}

int depth_of(const std::vector<int>& parent, int rank) {
  int d = 0;
  for (int r = rank; parent[static_cast<std::size_t>(r)] >= 0; r = parent[static_cast<std::size_t>(r)]) ++d;
  return d;
}

/** The share of a ring step's chunk that the busiest member's intra-node port carries each way, over `rings` rings
 * laid out as make_rings lays them: across m >= 2 nodes ring c enters each node at one member (from its NIC) and
 * leaves at the member before it (to its NIC), the entry at c g / rings. With a ring per member (rings = g) each
 * member is one ring's entry and another's exit, so its port carries (g - 1) / g of the chunk each way; with fewer
 * rings some member is neither and carries all of it; inside one node, all of it. */
double ring_port_share(int g, int m, int rings) {
  return m > 1 && g > 1 && rings >= g ? (g - 1.0) / g : 1.0;
}

/** One ring step of `chunk` bytes per member, spread over `rings` rings that cross nodes on `ports` of the node's
 * ports (at most `rings`). */
double ring_chunk_step(double chunk, int g, int m, const TwoLevelCost& links, int rings = 1, int ports = 1) {
  double step = 0.0;
  if (g > 1) step = std::max(step, links.intra.latency + chunk * ring_port_share(g, m, rings) / links.intra.bandwidth);
  if (m > 1) step = std::max(step, links.inter.latency + chunk / (ports * links.inter.bandwidth));
  return step;
}

/** `best` chunks rounded, within [1, kMaxPipelineChunks] and at most `most`. */
std::uint64_t clamp_chunks(double best, double most) {
  if (!(best >= 1.0)) best = 1.0; // n <= 2 for broadcast, NaN for empty buffers
  best = std::min({std::round(best), static_cast<double>(kMaxPipelineChunks), std::max(1.0, most)});
  return static_cast<std::uint64_t>(best);
}

double tree_time(double bytes, int n, const LinkCost& link) {
  return n < 2 ? 0.0 : tree_time(double_binary_tree(n), bytes, link);
}

/** The closed forms with explicit group size n and layout (g per node on m nodes, n <= g m). */
double two_level_time(CollectiveOp op, CollectiveAlgorithm algorithm, double bytes, int n, int g, int m,
                      const TwoLevelCost& links) {
  PARTSIM_CHECK(is_supported(op, algorithm)) << to_string(op) << " has no " << to_string(algorithm) << " algorithm";
  if (n < 2) return 0.0;
  const double nd = n;
  switch (algorithm) {
  case CollectiveAlgorithm::Ring: {
    if (op == CollectiveOp::Broadcast) {
      const LinkCost slow = slowest_link(links, g, m);
      const auto k = static_cast<double>(pipeline_chunks(op, algorithm, n, bytes, slow));
      return (nd + k - 2.0) * ring_chunk_step(bytes / k, g, m, links);
    }
    const int channels = ring_channels(op, algorithm, g, m, links.ports_per_node, links.channels);
    const double steps = op == CollectiveOp::AllReduce ? 2.0 * (nd - 1) : nd - 1;
    return steps *
           ring_chunk_step(bytes / nd, g, m, links, channels, std::min(channels, std::max(links.ports_per_node, 1)));
  }
  case CollectiveAlgorithm::Tree:
    if (node_tree(n, g, m))
      return node_tree_time(double_binary_tree(m), bytes, g, tree_channels(g, m, links.ports_per_node), links);
    return tree_time(bytes, n, slowest_link(links, g, m));
  case CollectiveAlgorithm::Hierarchical: {
    double t = 0.0;
    if (g > 1) t += 2.0 * (g - 1) * (links.intra.latency + bytes / (g * links.intra.bandwidth));
    const double ports = std::clamp(links.ports_per_node, 1, g);
    if (m > 1) t += 2.0 * (m - 1) * (links.inter.latency + bytes / (m * ports * links.inter.bandwidth));
    return t;
  }
  case CollectiveAlgorithm::Nvls:
    PARTSIM_CHECK(m == 1 && links.nvls_efficiency > 0.0)
        << "nvls on " << m << " nodes, NVLS efficiency " << links.nvls_efficiency;
    return nvls_time(bytes, n, links);
  case CollectiveAlgorithm::NvlsTree:
    PARTSIM_CHECK(m >= 2 && n == g * m && links.nvls_efficiency > 0.0)
        << "nvls_tree over " << n << " members, " << g << " per node on " << m << " nodes, NVLS efficiency "
        << links.nvls_efficiency;
    return nvls_tree_time(bytes, g, m, links);
  case CollectiveAlgorithm::TwoHop: {
    PARTSIM_CHECK(n == g * m) << "two_hop over " << n << " members, " << g << " per node on " << m << " nodes";
    std::vector<std::vector<int>> members(static_cast<std::size_t>(m));
    for (int p = 0; p < n; ++p) members[static_cast<std::size_t>(p / g)].push_back(p);
    return two_hop_all_to_all_time(bytes, members, {}, {}, links);
  }
  case CollectiveAlgorithm::Direct: {
    const double c = bytes / nd;
    double t = 0.0;
    if (g > 1) t = std::max(t, links.intra.latency + (g - 1) * c / links.intra.bandwidth);
    const double ports = std::clamp(links.ports_per_node, 1, g);
    if (m > 1) t = std::max(t, links.inter.latency + g * (nd - g) * c / (ports * links.inter.bandwidth));
    return t;
  }
  }
  return 0.0;
}

} // namespace

double skewed_all_to_all_time(double bytes, const std::vector<double>& weight, const std::vector<int>& node_of,
                              const TwoLevelCost& links) {
  const std::size_t n = weight.size();
  PARTSIM_CHECK(node_of.size() == n) << "skewed all-to-all: " << n << " weights for " << node_of.size() << " members";
  if (n < 2) return 0.0;
  const double c = bytes / static_cast<double>(n);
  int nodes = 0;
  for (const int k : node_of) nodes = std::max(nodes, k + 1);
  std::vector<double> node_weight(static_cast<std::size_t>(nodes), 0.0);
  std::vector<int> node_members(static_cast<std::size_t>(nodes), 0);
  double total = 0.0;
  for (std::size_t p = 0; p < n; ++p) {
    node_weight[static_cast<std::size_t>(node_of[p])] += weight[p];
    ++node_members[static_cast<std::size_t>(node_of[p])];
    total += weight[p];
  }
  double t = 0.0;
  double port = 0.0; // chunks on the busiest member's intra-node port
  for (std::size_t p = 0; p < n; ++p) {
    const auto k = static_cast<std::size_t>(node_of[p]);
    if (node_members[k] > 1)
      port = std::max(port, std::max((node_members[k] - 1) * weight[p], node_weight[k] - weight[p]));
  }
  if (port > 0.0) t = links.intra.latency + port * c / links.intra.bandwidth;
  if (nodes > 1) {
    double node_time = 0.0;
    for (std::size_t k = 0; k < node_weight.size(); ++k) {
      const double g = node_members[k];
      const double chunks = std::max(g * (total - node_weight[k]), (static_cast<double>(n) - g) * node_weight[k]);
      const double ports = std::clamp(links.ports_per_node, 1, node_members[k]);
      node_time = std::max(node_time, chunks * c / (ports * links.inter.bandwidth));
    }
    t = std::max(t, links.inter.latency + node_time);
  }
  return t;
}

double two_hop_all_to_all_time(double bytes, const std::vector<std::vector<int>>& members,
                               const std::vector<double>& weight, const std::vector<double>& node_share,
                               const TwoLevelCost& links) {
  const auto m = static_cast<int>(members.size());
  const auto g = m > 0 ? static_cast<int>(members.front().size()) : 0;
  const int n = g * m;
  if (n < 2) return 0.0;
  const double c = bytes / n;
  const auto w = [&](int pos) { return weight.empty() ? 1.0 : weight.at(static_cast<std::size_t>(pos)); };
  const auto d = [&](int b) { return node_share.empty() ? 1.0 : node_share.at(static_cast<std::size_t>(b)); };
  std::vector<double> node_weight(static_cast<std::size_t>(m), 0.0); // W_b
  for (int b = 0; b < m; ++b)
    for (const int p : members[static_cast<std::size_t>(b)]) node_weight[static_cast<std::size_t>(b)] += w(p);
  const auto W = [&](int b) { return node_weight[static_cast<std::size_t>(b)]; };
  const auto at = [&](int b, int l) { return members[static_cast<std::size_t>(b)][static_cast<std::size_t>(l)]; };
  // The network round: member (a, l) sends d_b W_b c to (b, l) for every other node b (dispatch; the combine's is the
  // same from (b, l) to (a, l)), on its node's NIC of the rail block.
  double network = 0.0;
  if (m > 1) {
    const int ports = std::max(1, links.ports_per_node);
    std::vector<double> out(static_cast<std::size_t>(m * ports), 0.0);
    std::vector<double> in(static_cast<std::size_t>(m * ports), 0.0);
    double all = 0.0;
    for (int b = 0; b < m; ++b) all += d(b) * W(b);
    for (int a = 0; a < m; ++a)
      for (int l = 0; l < g; ++l) {
        const auto port = static_cast<std::size_t>(a * ports + l * ports / g);
        out[port] += (all - d(a) * W(a)) * c;  // to every other node, its share
        in[port] += (m - 1) * d(a) * W(a) * c; // what each other node's rail member sends for node a
      }
    double busiest = 0.0;
    for (std::size_t k = 0; k < out.size(); ++k) busiest = std::max({busiest, out[k], in[k]});
    network = links.inter.latency + busiest / links.inter.bandwidth;
  }
  // Inside a node (the combine's rounds are the dispatch's reversed, with the same loads out and in swapped): the
  // directs beside the network round, member j of node b getting c w_j from each other member, and the forwards, each
  // member getting (m - 1) c w_j from each other member, the copies of the other nodes' sources of that rail.
  double directs = 0.0;
  double forwards = 0.0;
  if (g > 1) {
    double direct_load = 0.0;
    double forward_load = 0.0;
    for (int b = 0; b < m; ++b)
      for (int l = 0; l < g; ++l) {
        const double wj = w(at(b, l));
        direct_load = std::max({direct_load, c * (W(b) - wj), (g - 1) * c * wj});
        forward_load = std::max({forward_load, (m - 1) * c * (W(b) - wj), (g - 1) * (m - 1) * c * wj});
      }
    directs = links.intra.latency + direct_load / links.intra.bandwidth;
    if (m > 1) forwards = links.intra.latency + forward_load / links.intra.bandwidth;
  }
  return std::max(network, directs) + forwards;
}

double nvls_time(double bytes, int n, const TwoLevelCost& links) {
  if (n < 2) return 0.0;
  const double nd = n;
  return links.nvls_latency + bytes * (nd + 1.0) / nd / (links.nvls_efficiency * links.intra.bandwidth);
}

bool nvls_available(int nodes, const TwoLevelCost& links) {
  return nodes <= 1 && links.nvls_efficiency > 0.0;
}

double nvls_tree_efficiency(int g, int m, const TwoLevelCost& links) {
  const double head = m == 2 ? links.nvls_tree_head_two_nodes : links.nvls_tree_head_more_nodes;
  if (m < 2 || head <= 0.0 || links.intra.bandwidth <= 0.0) return links.nvls_efficiency;
  const double n = static_cast<double>(g) * m;
  return std::min(links.nvls_efficiency, (g + 1.0) * n * head / (2.0 * (n - 1.0) * links.intra.bandwidth));
}

double nvls_tree_time(double bytes, int g, int m, const TwoLevelCost& links) {
  const double gd = g;
  const double intra =
      g > 1 ? bytes * (gd + 1.0) / gd / (nvls_tree_efficiency(g, m, links) * links.intra.bandwidth) : 0.0;
  const LinkCost rail{links.inter.latency,
                      links.inter.bandwidth * std::min(1.0, std::max(links.ports_per_node, 1) / gd)};
  const double inter = m > 1 ? tree_time(double_binary_tree(m), bytes / gd, rail) : 0.0;
  return links.nvls_latency + std::max(intra, inter);
}

bool nvls_tree_available(int n, int nodes, const TwoLevelCost& links) {
  if (nodes < 2 || n % nodes != 0) return false;
  const int g = n / nodes;
  return g >= 2 && links.nvls_efficiency > 0.0 && links.ports_per_node >= g;
}

DoubleBinaryTree double_binary_tree(int n) {
  PARTSIM_CHECK(n >= 1) << "a tree needs at least one rank, got " << n;
  DoubleBinaryTree tree;
  const auto size = static_cast<std::size_t>(n);
  for (auto& p : tree.parent) p.assign(size, -1);
  for (auto& c : tree.children) c.assign(size, {-1, -1});
  for (int r = 0; r < n; ++r) {
    int up = 0;
    int d0 = 0;
    int d1 = 0;
    btree(n, r, up, d0, d1);
    tree.parent[0][static_cast<std::size_t>(r)] = up;
    tree.children[0][static_cast<std::size_t>(r)] = {d0, d1};
    // Tree 1: mirror (n even) or shift by one (n odd), as ncclGetDtree.
    auto map = [n](int x) { return x < 0 ? -1 : (n % 2 == 1 ? (x + 1) % n : n - 1 - x); };
    const int source = n % 2 == 1 ? (r - 1 + n) % n : n - 1 - r;
    btree(n, source, up, d0, d1);
    tree.parent[1][static_cast<std::size_t>(r)] = map(up);
    tree.children[1][static_cast<std::size_t>(r)] = {map(d0), map(d1)};
  }
  for (int t = 0; t < 2; ++t) {
    tree.depth[static_cast<std::size_t>(t)].resize(size);
    for (int r = 0; r < n; ++r) {
      const int d = depth_of(tree.parent[static_cast<std::size_t>(t)], r);
      tree.depth[static_cast<std::size_t>(t)][static_cast<std::size_t>(r)] = d;
      tree.max_depth = std::max(tree.max_depth, d);
    }
  }
  for (std::size_t r = 0; r < size; ++r) {
    int degree = 0;
    for (std::size_t t = 0; t < 2; ++t) {
      degree += tree.parent[t][r] >= 0 ? 1 : 0;
      for (int c : tree.children[t][r]) degree += c >= 0 ? 1 : 0;
    }
    tree.max_degree = std::max(tree.max_degree, degree);
  }
  return tree;
}

/** Chunks of a tree all-reduce of `bytes` over `tree`: d/dk of (k+2D-1)(alpha + L S/(2kB)) = 0  =>
 * k = sqrt((2D-1) L S / (2 alpha B)), each tree carrying half of the bytes. */
std::uint64_t tree_chunks(const DoubleBinaryTree& tree, double bytes, const LinkCost& link) {
  return clamp_chunks(
      std::sqrt((2.0 * tree.max_depth - 1.0) * tree.max_degree * bytes / (2.0 * link.latency * link.bandwidth)),
      std::floor(bytes / 2.0));
}

double tree_time(const DoubleBinaryTree& tree, double bytes, const LinkCost& link) {
  const auto k = static_cast<double>(tree_chunks(tree, bytes, link));
  return (k + 2.0 * tree.max_depth - 1.0) * (link.latency + tree.max_degree * bytes / (2.0 * k * link.bandwidth));
}

bool node_tree(int n, int g, int m) {
  return g >= 2 && m >= 2 && n == g * m;
}

int tree_channels(int per_node, int nodes, int ports, int requested) {
  if (nodes < 2 || per_node < 2) return 1;
  return std::clamp(requested > 0 ? requested : ports, 1, per_node);
}

ChainShare chain_share(std::uint64_t bytes, int g, int channels, int local) {
  ChainShare s;
  for (int c = 0; c < channels; ++c) {
    const int position = mod(local - c * g / channels, g); // 0: the chain's head, g - 1: its tail
    const std::uint64_t part = chunk(bytes, channels, c);
    if (position > 0) s.up += part;
    if (position < g - 1) s.down += part;
    if (position == 0) s.head = c;
  }
  return s;
}

double chain_fraction(int g, int channels) {
  std::uint64_t most = 0; // one byte per channel: a member's sends up and down its chains
  for (int local = 0; local < g; ++local) {
    const ChainShare s = chain_share(static_cast<std::uint64_t>(channels), g, channels, local);
    most = std::max(most, s.up + s.down);
  }
  return static_cast<double>(most) / channels;
}

std::uint64_t node_tree_chunks(int m, int channels, double bytes, const LinkCost& link) {
  return m < 2 ? 1 : tree_chunks(double_binary_tree(m), std::floor(bytes / std::max(channels, 1)), link);
}

double node_tree_time(const DoubleBinaryTree& rail_tree, double bytes, int g, int channels, const TwoLevelCost& links) {
  const double c = std::max(channels, 1);
  const double intra = links.intra.latency + bytes * chain_fraction(g, channels) / links.intra.bandwidth;
  const LinkCost rail{links.inter.latency,
                      links.inter.bandwidth * std::min(1.0, std::max(links.ports_per_node, 1) / c)};
  return std::max(intra, tree_time(rail_tree, bytes / c, rail));
}

std::uint64_t nvls_tree_chunks(int m, int g, double bytes, const LinkCost& link) {
  return m < 2 ? 1 : tree_chunks(double_binary_tree(m), std::floor(bytes / std::max(g, 1)), link);
}

std::uint64_t pipeline_chunks(CollectiveOp op, CollectiveAlgorithm algorithm, int n, double bytes,
                              const LinkCost& link) {
  if (op == CollectiveOp::Broadcast && algorithm == CollectiveAlgorithm::Ring)
    // d/dk of (n+k-2)(alpha + S/(kB)) = 0  =>  k = sqrt((n-2) S / (alpha B))
    return clamp_chunks(std::sqrt((n - 2.0) * bytes / (link.latency * link.bandwidth)), bytes);
  if (op == CollectiveOp::AllReduce && algorithm == CollectiveAlgorithm::Tree)
    return tree_chunks(double_binary_tree(std::max(n, 1)), bytes, link);
  return 1;
}

double collective_time(CollectiveOp op, CollectiveAlgorithm algorithm, double bytes, int n, const LinkCost& link) {
  return two_level_time(op, algorithm, bytes, n, 1, n, TwoLevelCost{link, link, 1});
}

double collective_time(CollectiveOp op, CollectiveAlgorithm algorithm, double bytes, int gpus_per_node, int nodes,
                       const TwoLevelCost& links) {
  PARTSIM_CHECK(gpus_per_node >= 1 && nodes >= 1) << "layout " << gpus_per_node << " x " << nodes;
  return two_level_time(op, algorithm, bytes, gpus_per_node * nodes, gpus_per_node, nodes, links);
}

double collective_time(CollectiveOp op, CollectiveAlgorithm algorithm, double bytes, int n, int gpus_per_node,
                       int nodes, const TwoLevelCost& links) {
  PARTSIM_CHECK(gpus_per_node >= 1 && nodes >= 1) << "layout " << gpus_per_node << " x " << nodes;
  return two_level_time(op, algorithm, bytes, n, gpus_per_node, nodes, links);
}

TwoLevelCost two_level_cost(const ClusterSpec& cluster) {
  TwoLevelCost links;
  links.intra = {cluster.intra_node.latency, cluster.intra_node.bandwidth};
  links.inter = {cluster.network.nic.latency, cluster.network.nic.bandwidth};
  links.ports_per_node = std::max(1, cluster.network.nics_per_node);
  links.nvls_efficiency = cluster.intra_node.nvls_efficiency;
  links.nvls_latency = cluster.intra_node.nvls_latency;
  links.nvls_tree_head_two_nodes = cluster.intra_node.nvls_tree_head_two_nodes;
  links.nvls_tree_head_more_nodes = cluster.intra_node.nvls_tree_head_more_nodes;
  links.intra_nvlink = cluster.intra_node.nvlink;
  links.ll_max_intra = cluster.intra_node.ll_max_bandwidth;
  return links;
}

LinkCost slowest_link(const TwoLevelCost& links, int gpus_per_node, int nodes) {
  if (nodes <= 1) return links.intra;
  if (gpus_per_node <= 1) return links.inter;
  return {std::max(links.intra.latency, links.inter.latency), std::min(links.intra.bandwidth, links.inter.bandwidth)};
}

double algorithm_bandwidth(CollectiveOp /*op*/, double bytes, double time) {
  return time > 0.0 ? bytes / time : 0.0;
}

double bus_bandwidth(CollectiveOp op, int n, double algbw) {
  if (n < 1) return 0.0;
  const double nd = n;
  switch (op) {
  case CollectiveOp::AllReduce:
    return algbw * 2.0 * (nd - 1) / nd;
  case CollectiveOp::ReduceScatter:
  case CollectiveOp::AllGather:
  case CollectiveOp::AllToAll:
    return algbw * (nd - 1) / nd;
  case CollectiveOp::Broadcast:
    return algbw;
  }
  return 0.0;
}

std::uint64_t planned_messages(const CollectiveStep& step, int n, int nodes, const LinkCost& link, int channels,
                               double wire_factor) {
  if (n < 2 || step.fidelity == Fidelity::Analytic) return 0;
  const auto un = static_cast<std::uint64_t>(n);
  const bool steps = step.fidelity == Fidelity::Steps;
  if (wire_factor <= 0.0) wire_factor = protocol_wire_factor(step.protocol);
  const std::uint64_t k = steps ? pipeline_chunks(step.op, step.algorithm, n,
                                                  std::ceil(static_cast<double>(step.bytes) * wire_factor), link)
                                : 1;
  switch (step.algorithm) {
  case CollectiveAlgorithm::Ring: {
    if (step.op == CollectiveOp::Broadcast) return (un - 1) * k;
    const auto c = static_cast<std::uint64_t>(std::max(channels, 1));
    if (step.op == CollectiveOp::AllReduce) return (steps ? 2 * (un - 1) * un : un) * c;
    return (steps ? (un - 1) * un : un) * c;
  }
  case CollectiveAlgorithm::Tree: {
    const int m = std::max(nodes, 1);
    const int g = n / m;
    if (!node_tree(n, g, m)) return 4 * (un - 1) * k;
    // Each node's chains (a member's sends up and down, one message where its neighbours are one member: g = 2) and
    // one rail tree per channel over the m nodes.
    const int c = std::max(channels, 1);
    const auto um = static_cast<std::uint64_t>(m);
    const auto ug = static_cast<std::uint64_t>(g);
    const std::uint64_t chain = um * (c == 1 || g == 2 ? 2 * (ug - 1) : 2 * ug);
    const std::uint64_t rail_k =
        steps ? node_tree_chunks(m, c, std::ceil(static_cast<double>(step.bytes) * wire_factor), link) : 1;
    return chain + static_cast<std::uint64_t>(c) * 4 * (um - 1) * rail_k;
  }
  case CollectiveAlgorithm::Hierarchical: {
    const auto m = static_cast<std::uint64_t>(std::max(nodes, 1));
    const std::uint64_t g = un / m;
    if (steps) return 2 * m * g * (g - 1) + 2 * g * m * (m - 1);
    return (g > 1 ? 2 * un : 0) + (m > 1 ? un : 0);
  }
  case CollectiveAlgorithm::Direct:
    return un * (un - 1);
  case CollectiveAlgorithm::TwoHop: { // a network message to every other node; directs and forwards in the node
    const auto m = static_cast<std::uint64_t>(std::max(nodes, 1));
    const std::uint64_t g = un / m;
    return un * ((m - 1) + (g - 1) * (m > 1 ? 2 : 1));
  }
  case CollectiveAlgorithm::Nvls: // flows: one flow through the switch per member (member_edges)
    return steps ? 2 * un * (un - 1) : un;
  case CollectiveAlgorithm::NvlsTree: {
    // Each node's NVLS traffic (steps: g-1 per member, one round; flows: one per member) and g rail trees of m
    // nodes (the tree's 4(m-1)k).
    const auto m = static_cast<std::uint64_t>(std::max(nodes, 1));
    const std::uint64_t g = un / m;
    const std::uint64_t rail_k = steps
                                     ? nvls_tree_chunks(static_cast<int>(m), static_cast<int>(g),
                                                        std::ceil(static_cast<double>(step.bytes) * wire_factor), link)
                                     : 1;
    return (steps ? un * (g - 1) : (g > 1 ? un : 0)) + g * 4 * (m - 1) * rail_k;
  }
  }
  return 0;
}

CollectiveAlgorithm choose_algorithm(CollectiveOp op, int n, int nodes, double bytes, const TwoLevelCost& links) {
  return choose_method(op, n, nodes, bytes, links).algorithm;
}

namespace {

/** NCCL's tuner constants (src/graph/tuning.cc at 5067397c, ncclTunerConstantsDefaults), in us, per protocol in
 * NCCL's order LL, LL128, Simple: for the tree and for the ring. */
struct NcclLatencies {
  std::array<double, 3> tree;
  std::array<double, 3> ring;
};
constexpr NcclLatencies kNcclBase{{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}};  ///< baseLatencies
constexpr NcclLatencies kNcclNvlink{{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}}; ///< hwLatencies[NCCL_HW_NVLINK]
constexpr NcclLatencies kNcclPci{{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}};     ///< hwLatencies[NCCL_HW_PCI]
constexpr NcclLatencies kNcclNet{{5.0, 8.5, 14.0}, {2.7, 4.0, 14.0}};   ///< hwLatencies[NCCL_HW_NET]
/** hwLatencies[NCCL_HW_NET][NCCL_ALGO_NVLS_TREE][Simple], us: NVLS-tree's per network step. */
constexpr double kNcclNetNvlsTree = 20.9;
constexpr double kNcclNetOverhead = 1.0; ///< getNetOverhead on x86 Intel hosts (AMD: 2), x3 for Simple
/** NCCL's tuner's factor on a tree all-reduce's bus bandwidth (busBw * .92), which `auto` applies to its choice. */
constexpr double kNcclTreeBandwidthFactor = 0.92;
/** llMaxBws of NCCL's tuner for groups across nodes, which NCCL indexes by the CPU vendor: the Intel row, 2 nodes and
 * more than 2 (AMD: 22.5 and 19.0 GB/s), in GB/s. */
constexpr double kNcclLlMaxBwTwoNodes = 39.0;
constexpr double kNcclLlMaxBwManyNodes = 20.4;

double nccl_latency(const NcclLatencies& table, bool tree, CollectiveProtocol protocol) {
  const std::size_t i = protocol == CollectiveProtocol::LL ? 0 : protocol == CollectiveProtocol::LL128 ? 1 : 2;
  return 1e-6 * (tree ? table.tree : table.ring)[i];
}

int floor_log2(int x) {
  int l = 0;
  while (x > 1) {
    x >>= 1;
    ++l;
  }
  return l;
}

} // namespace

double protocol_wire_factor(CollectiveProtocol protocol) {
  switch (protocol) {
  case CollectiveProtocol::Simple:
    return 1.0;
  case CollectiveProtocol::LL128:
    return 128.0 / 120.0;
  case CollectiveProtocol::LL:
    return 2.0;
  }
  return 1.0;
}

double ll_bandwidth_limit(int nodes, const TwoLevelCost& links) {
  if (nodes <= 1) return links.ll_max_intra;
  return 1e9 * (nodes == 2 ? kNcclLlMaxBwTwoNodes : kNcclLlMaxBwManyNodes);
}

double simple_bus_bandwidth(CollectiveOp op, CollectiveAlgorithm algorithm, int gpus_per_node, int nodes,
                            const TwoLevelCost& links) {
  const int g = std::max(gpus_per_node, 1);
  const int m = std::max(nodes, 1);
  double bw = std::numeric_limits<double>::infinity();
  switch (algorithm) {
  case CollectiveAlgorithm::Ring: {
    const int rings =
        op == CollectiveOp::Broadcast ? 1 : ring_channels(op, algorithm, g, m, links.ports_per_node, links.channels);
    if (g > 1) bw = std::min(bw, links.intra.bandwidth / ring_port_share(g, m, rings));
    if (m > 1) bw = std::min(bw, std::min(rings, std::max(links.ports_per_node, 1)) * links.inter.bandwidth);
    break;
  }
  case CollectiveAlgorithm::Hierarchical:
    if (g > 1) bw = std::min(bw, links.intra.bandwidth);
    if (m > 1) bw = std::min(bw, std::clamp(links.ports_per_node, 1, g) * links.inter.bandwidth);
    break;
  case CollectiveAlgorithm::Tree:
    if (node_tree(g * m, g, m)) { // the chains on NVLink, the channels' rail trees on their NICs
      bw = std::min(links.intra.bandwidth,
                    std::min(tree_channels(g, m, links.ports_per_node), std::max(links.ports_per_node, 1)) *
                        links.inter.bandwidth);
      break;
    }
    bw = slowest_link(links, g, m).bandwidth;
    break;
  default:
    bw = slowest_link(links, g, m).bandwidth;
  }
  return std::isfinite(bw) ? bw : links.intra.bandwidth;
}

double protocol_wire_factor(CollectiveOp op, CollectiveAlgorithm algorithm, CollectiveProtocol protocol,
                            int gpus_per_node, int nodes, const TwoLevelCost& links) {
  const double factor = protocol_wire_factor(protocol);
  if (protocol != CollectiveProtocol::LL) return factor;
  const double limit = ll_bandwidth_limit(nodes, links);
  if (limit <= 0.0) return factor;
  return std::max(factor, simple_bus_bandwidth(op, algorithm, gpus_per_node, nodes, links) / limit);
}

bool protocol_available(CollectiveAlgorithm algorithm, CollectiveProtocol protocol, const TwoLevelCost& links) {
  if (algorithm == CollectiveAlgorithm::Nvls || algorithm == CollectiveAlgorithm::NvlsTree ||
      algorithm == CollectiveAlgorithm::Direct || algorithm == CollectiveAlgorithm::TwoHop)
    return protocol == CollectiveProtocol::Simple;
  return protocol != CollectiveProtocol::LL128 || links.intra_nvlink;
}

double protocol_latency(CollectiveOp op, CollectiveAlgorithm algorithm, CollectiveProtocol protocol, int n,
                        int gpus_per_node, int nodes, const TwoLevelCost& links) {
  if (n < 2 || algorithm == CollectiveAlgorithm::Nvls || algorithm == CollectiveAlgorithm::Direct ||
      algorithm == CollectiveAlgorithm::TwoHop)
    return 0.0;
  const int g = std::max(gpus_per_node, 1);
  const int m = std::max(nodes, 1);
  const bool tree = algorithm == CollectiveAlgorithm::Tree;
  const bool simple = protocol == CollectiveProtocol::Simple;
  // Per intra-node step: NCCL's figure includes the wire, which the link's latency already pays.
  double intra =
      std::max(0.0, nccl_latency(links.intra_nvlink ? kNcclNvlink : kNcclPci, tree, protocol) - links.intra.latency);
  double inter = 0.0;
  if (m > 1) {
    // Per network step: NCCL's figure on top of the network's latency (paid by the messages), once more for Simple's
    // flush; with one member per node every step is exposed, and NCCL takes the tree's figure.
    inter = nccl_latency(kNcclNet, tree || g == 1, protocol) + (simple ? links.inter.latency : 0.0);
    if (!tree) intra = std::max(intra, 1e-6 * kNcclNetOverhead * (simple ? 3.0 : 1.0));
  }
  if (algorithm == CollectiveAlgorithm::NvlsTree) // NCCL: intraLat + 2 log2i(nNodes) interLat, base 0
    return m > 1 ? 2.0 * floor_log2(m) * (1e-6 * kNcclNetNvlsTree + (simple ? links.inter.latency : 0.0)) : 0.0;
  const double base = nccl_latency(kNcclBase, tree, protocol);
  const double nd = n;
  switch (algorithm) {
  case CollectiveAlgorithm::Ring: {
    const bool all_reduce = op == CollectiveOp::AllReduce;
    const double steps = all_reduce ? 2.0 * (nd - 1) : nd - 1;
    const double network_steps = m > 1 ? (all_reduce ? 2.0 * (m - 1) : m - 1.0) : 0.0;
    return base + (steps - network_steps) * intra + network_steps * inter;
  }
  case CollectiveAlgorithm::Tree:
    return base + 2.0 * ((g - 1) * intra + floor_log2(m) * inter);
  case CollectiveAlgorithm::Hierarchical:
    return base + 2.0 * (g - 1) * intra + 2.0 * (m - 1) * inter;
  case CollectiveAlgorithm::Direct:
  case CollectiveAlgorithm::Nvls:
  case CollectiveAlgorithm::NvlsTree:
  case CollectiveAlgorithm::TwoHop:
    return 0.0;
  }
  return 0.0;
}

double collective_time(CollectiveOp op, CollectiveAlgorithm algorithm, CollectiveProtocol protocol, double bytes, int n,
                       int gpus_per_node, int nodes, const TwoLevelCost& links) {
  PARTSIM_CHECK(gpus_per_node >= 1 && nodes >= 1) << "layout " << gpus_per_node << " x " << nodes;
  if (n < 2) return 0.0;
  return protocol_latency(op, algorithm, protocol, n, gpus_per_node, nodes, links) +
         two_level_time(op, algorithm,
                        bytes * protocol_wire_factor(op, algorithm, protocol, gpus_per_node, nodes, links), n,
                        gpus_per_node, nodes, links);
}

CollectiveMethod choose_method(CollectiveOp op, int n, int nodes, double bytes, const TwoLevelCost& links,
                               std::optional<CollectiveAlgorithm> algorithm,
                               std::optional<CollectiveProtocol> protocol) {
  nodes = std::max(nodes, 1);
  const bool even = n % nodes == 0;
  const int g = (n + nodes - 1) / nodes;
  CollectiveMethod best{op == CollectiveOp::AllToAll ? CollectiveAlgorithm::Direct : CollectiveAlgorithm::Ring,
                        CollectiveProtocol::Simple};
  if (algorithm) best.algorithm = *algorithm;
  if (protocol && protocol_available(best.algorithm, *protocol, links)) best.protocol = *protocol;
  double best_time = std::numeric_limits<double>::infinity();
  for (CollectiveAlgorithm a : {CollectiveAlgorithm::Ring, CollectiveAlgorithm::Tree, CollectiveAlgorithm::Hierarchical,
                                CollectiveAlgorithm::Direct, CollectiveAlgorithm::Nvls, CollectiveAlgorithm::NvlsTree,
                                CollectiveAlgorithm::TwoHop}) {
    if (algorithm && a != *algorithm) continue;
    if (!is_supported(op, a)) continue;
    if (!algorithm) {
      if (a == CollectiveAlgorithm::Hierarchical && (!even || nodes < 2 || g < 2)) continue;
      // Two-hop saves network bytes only where tokens go to several experts of a node, which its closed form here
      // does not know: a mixture of experts asks for it by name (/strategy/expert_dispatch).
      if (a == CollectiveAlgorithm::TwoHop) continue;
      if (a == CollectiveAlgorithm::Nvls && !nvls_available(nodes, links)) continue;
      if (a == CollectiveAlgorithm::NvlsTree && !nvls_tree_available(n, nodes, links)) continue;
    }
    // NCCL's tuner prices its tree all-reduce at 0.92 of the bus bandwidth its links give (src/graph/tuning.cc at
    // 5067397c: busBw * .92), so it takes the tree only where the tree wins by more than that: the choice takes the
    // tuner's figure, the simulated time stays the links'.
    const double priced = a == CollectiveAlgorithm::Tree && op == CollectiveOp::AllReduce && !algorithm
                              ? bytes / kNcclTreeBandwidthFactor
                              : bytes;
    // The choice prices a ring with the whole chunk on every member's port, as partsim did before it counted the
    // ports a rail ring spares where it leaves and enters a node (ring_port_share); the simulated time counts them.
    // With the spared ports the ring would win from 3 H100 nodes on, where NVIDIA gives NVLS-tree as NCCL's default
    // (NCCL issue 1649); NCCL's tuner prices a ring by its channels' bandwidth, not by these ports.
    TwoLevelCost priced_links = links;
    if (a == CollectiveAlgorithm::Ring)
      priced_links.intra.bandwidth *=
          ring_port_share(g, nodes, ring_channels(op, a, g, nodes, links.ports_per_node, links.channels));
    // NCCL's order of protocols: LL, LL128, Simple; the first of equal times wins.
    for (CollectiveProtocol p : {CollectiveProtocol::LL, CollectiveProtocol::LL128, CollectiveProtocol::Simple}) {
      if (protocol && p != *protocol) continue;
      if (!protocol_available(a, p, links)) continue;
      const double t = collective_time(op, a, p, priced, n, g, nodes, priced_links);
      if (t < best_time) {
        best = {a, p};
        best_time = t;
      }
    }
  }
  return best;
}

Fidelity choose_fidelity(std::uint64_t step_messages, std::uint64_t flow_messages) {
  if (step_messages <= kMaxStepMessages) return Fidelity::Steps;
  if (flow_messages <= kMaxFlowMessages) return Fidelity::Flows;
  return Fidelity::Analytic;
}

} // namespace partsim
