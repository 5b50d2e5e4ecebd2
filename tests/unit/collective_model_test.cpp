// Collective model: nccl-tests bandwidths, NCCL's double binary tree, pipeline chunks, alpha-beta closed forms on
// uniform and two-level settings, message counts and the `auto` choices of algorithm and fidelity.
#include "partsim/model/collective_cost.hpp"
#include "partsim/plan/plan.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace partsim {
namespace {

constexpr LinkCost kNet{2e-6, 25e9};
constexpr LinkCost kNvlink{1e-6, 300e9};

TEST(CollectiveModel, BusBandwidthFollowsNcclTests) {
  EXPECT_DOUBLE_EQ(algorithm_bandwidth(CollectiveOp::AllReduce, 1e9, 0.1), 1e10);
  EXPECT_DOUBLE_EQ(algorithm_bandwidth(CollectiveOp::AllReduce, 1e9, 0.0), 0.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth(CollectiveOp::AllReduce, 8, 1e10), 1e10 * 2 * 7 / 8);
  EXPECT_DOUBLE_EQ(bus_bandwidth(CollectiveOp::ReduceScatter, 8, 1e10), 1e10 * 7 / 8);
  EXPECT_DOUBLE_EQ(bus_bandwidth(CollectiveOp::AllGather, 4, 1e10), 1e10 * 3 / 4);
  EXPECT_DOUBLE_EQ(bus_bandwidth(CollectiveOp::AllToAll, 2, 1e10), 1e10 / 2);
  EXPECT_DOUBLE_EQ(bus_bandwidth(CollectiveOp::Broadcast, 16, 1e10), 1e10);
}

TEST(CollectiveModel, RingBusBandwidthIsTheLinkBandwidthWithoutLatency) {
  // nccl-tests' point: busbw of a bandwidth-bound ring equals the link speed, whatever n.
  for (int n : {2, 4, 64}) {
    const LinkCost link{0.0, 25e9};
    const double t = collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, 1e9, n, link);
    EXPECT_NEAR(bus_bandwidth(CollectiveOp::AllReduce, n, algorithm_bandwidth(CollectiveOp::AllReduce, 1e9, t)), 25e9,
                1.0);
    const double rs = collective_time(CollectiveOp::ReduceScatter, CollectiveAlgorithm::Ring, 1e9, n, link);
    EXPECT_NEAR(
        bus_bandwidth(CollectiveOp::ReduceScatter, n, algorithm_bandwidth(CollectiveOp::ReduceScatter, 1e9, rs)), 25e9,
        1.0);
    const double a2a = collective_time(CollectiveOp::AllToAll, CollectiveAlgorithm::Direct, 1e9, n, link);
    EXPECT_NEAR(bus_bandwidth(CollectiveOp::AllToAll, n, algorithm_bandwidth(CollectiveOp::AllToAll, 1e9, a2a)), 25e9,
                1.0);
  }
}

TEST(CollectiveModel, SkewedAllToAllIsPacedByItsBusiestPortOrNode) {
  const TwoLevelCost links{kNvlink, kNet, 1};
  const double s = 1e9;
  // Every weight 1: the uniform direct all-to-all's closed form, on one node and on 4 nodes of 8.
  std::vector<int> one_node(8, 0);
  EXPECT_DOUBLE_EQ(skewed_all_to_all_time(s, std::vector<double>(8, 1.0), one_node, links),
                   collective_time(CollectiveOp::AllToAll, CollectiveAlgorithm::Direct, s, 8, 1, links));
  std::vector<int> four_nodes;
  for (int p = 0; p < 32; ++p) four_nodes.push_back(p / 8);
  EXPECT_DOUBLE_EQ(skewed_all_to_all_time(s, std::vector<double>(32, 1.0), four_nodes, links),
                   collective_time(CollectiveOp::AllToAll, CollectiveAlgorithm::Direct, s, 8, 4, links));
  // One node of 4, loads 2, 1, 0.5, 0.5: the busiest member receives 3 chunks at twice the share (the dispatch) or
  // sends them (the combine), more than any port's other direction (the others send W - w_p <= 3.5 chunks).
  const std::vector<double> w{2.0, 1.0, 0.5, 0.5};
  EXPECT_DOUBLE_EQ(skewed_all_to_all_time(s, w, {0, 0, 0, 0}, links),
                   kNvlink.latency + 3 * 2.0 * (s / 4) / kNvlink.bandwidth);
  // Two nodes of 2, the loaded pair on node 0 (W_0 = 3 of 4): its NIC takes (n - g) W_0 = 6 chunks in, and sends
  // g (W - W_0) = 2; node 1's takes 2 in and sends 6.
  EXPECT_DOUBLE_EQ(
      skewed_all_to_all_time(s, w, {0, 0, 1, 1}, links),
      std::max(kNvlink.latency + 2.0 * (s / 4) / kNvlink.bandwidth, kNet.latency + 6.0 * (s / 4) / kNet.bandwidth));
}

TEST(CollectiveModel, DoubleBinaryTreeMatchesNccl) {
  const DoubleBinaryTree t = double_binary_tree(8);
  // ncclGetBtree(8): 0 -> 4; 4 -> 2, 6; 2 -> 1, 3; 6 -> 5, 7.
  EXPECT_EQ(t.parent[0], (std::vector<int>{-1, 2, 4, 2, 0, 6, 4, 6}));
  EXPECT_EQ(t.children[0][4], (std::array<int, 2>{2, 6}));
  EXPECT_EQ(t.children[0][0], (std::array<int, 2>{-1, 4}));
  // Mirror: rank r plays 7 - r.
  for (int r = 0; r < 8; ++r) {
    const int mirrored = t.parent[0][static_cast<std::size_t>(7 - r)];
    EXPECT_EQ(t.parent[1][static_cast<std::size_t>(r)], mirrored < 0 ? -1 : 7 - mirrored);
  }
  EXPECT_EQ(t.max_depth, 3);
  EXPECT_EQ(t.max_degree, 4);
}

TEST(CollectiveModel, DoubleBinaryTreesAreTreesWithEachRankInnerAtMostOnce) {
  for (int n = 1; n <= 70; ++n) {
    const DoubleBinaryTree t = double_binary_tree(n);
    for (std::size_t tree = 0; tree < 2; ++tree) {
      int roots = 0;
      std::multiset<int> child_of;
      for (int r = 0; r < n; ++r) {
        const int p = t.parent[tree][static_cast<std::size_t>(r)];
        if (p < 0) {
          ++roots;
          continue;
        }
        const auto& c = t.children[tree][static_cast<std::size_t>(p)];
        EXPECT_TRUE(c[0] == r || c[1] == r) << "n " << n << " tree " << tree << " rank " << r;
        EXPECT_LE(t.depth[tree][static_cast<std::size_t>(r)], t.max_depth);
        child_of.insert(r);
      }
      EXPECT_EQ(roots, 1) << "n " << n;
      EXPECT_EQ(child_of.size(), static_cast<std::size_t>(n - 1));
    }
    for (int r = 0; r < n; ++r) {
      auto inner = [&](std::size_t tree) {
        const auto& c = t.children[tree][static_cast<std::size_t>(r)];
        return c[0] >= 0 || c[1] >= 0;
      };
      // As in NCCL, for odd n the shifted tree makes rank 0 (root of tree 0, one child) inner in both.
      if (n > 2 && !(n % 2 == 1 && r == 0)) {
        EXPECT_FALSE(inner(0) && inner(1)) << "n " << n << " rank " << r;
      }
    }
    EXPECT_LE(t.max_depth, static_cast<int>(std::ceil(std::log2(std::max(n, 2)))) + 1) << "n " << n;
    if (n >= 4) {
      EXPECT_EQ(t.max_degree, 4) << "n " << n;
    }
  }
}

TEST(CollectiveModel, PipelineChunksMinimiseTheClosedForm) {
  EXPECT_EQ(pipeline_chunks(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, 8, 1e9, kNet), 1u);
  EXPECT_EQ(pipeline_chunks(CollectiveOp::Broadcast, CollectiveAlgorithm::Ring, 2, 1e9, kNet), 1u);
  // (n-2) S / (alpha B) = 6e8 / 5e4: k = 110.
  EXPECT_EQ(pipeline_chunks(CollectiveOp::Broadcast, CollectiveAlgorithm::Ring, 8, 1e8, kNet), 110u);
  EXPECT_EQ(pipeline_chunks(CollectiveOp::Broadcast, CollectiveAlgorithm::Ring, 8, 1e9, kNet), kMaxPipelineChunks);
  EXPECT_EQ(pipeline_chunks(CollectiveOp::Broadcast, CollectiveAlgorithm::Ring, 8, 1e12, kNet), kMaxPipelineChunks);
  EXPECT_EQ(pipeline_chunks(CollectiveOp::Broadcast, CollectiveAlgorithm::Ring, 8, 10, kNet), 1u);
  // Below the cap, neighbours of the chosen k are no faster.
  const auto k = pipeline_chunks(CollectiveOp::AllReduce, CollectiveAlgorithm::Tree, 16, 1e7, kNet);
  const DoubleBinaryTree t = double_binary_tree(16);
  auto tree_time = [&](double chunks) {
    return (chunks + 2 * t.max_depth - 1) * (kNet.latency + t.max_degree * 1e7 / (2 * chunks * kNet.bandwidth));
  };
  const double chosen = collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Tree, 1e7, 16, kNet);
  EXPECT_NEAR(chosen, tree_time(static_cast<double>(k)), 1e-15);
  EXPECT_LE(chosen, tree_time(static_cast<double>(k) + 1) + 1e-15);
  EXPECT_LE(chosen, tree_time(static_cast<double>(k) - 1) + 1e-15);
}

TEST(CollectiveModel, UniformClosedForms) {
  const double s = 1e9;
  const double a = kNet.latency;
  const double b = kNet.bandwidth;
  EXPECT_DOUBLE_EQ(collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, s, 8, kNet),
                   14 * (a + s / 8 / b));
  EXPECT_DOUBLE_EQ(collective_time(CollectiveOp::ReduceScatter, CollectiveAlgorithm::Ring, s, 8, kNet),
                   7 * (a + s / 8 / b));
  EXPECT_DOUBLE_EQ(collective_time(CollectiveOp::AllGather, CollectiveAlgorithm::Ring, s, 8, kNet),
                   7 * (a + s / 8 / b));
  EXPECT_DOUBLE_EQ(collective_time(CollectiveOp::AllToAll, CollectiveAlgorithm::Direct, s, 8, kNet), a + 7 * s / 8 / b);
  EXPECT_DOUBLE_EQ(collective_time(CollectiveOp::Broadcast, CollectiveAlgorithm::Ring, s, 8, kNet),
                   (8 + 128 - 2) * (a + s / 128 / b));
  // Hierarchical with one GPU per node is the ring.
  EXPECT_DOUBLE_EQ(collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Hierarchical, s, 8, kNet),
                   collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, s, 8, kNet));
  // The tree tends to 2 S / B for large buffers: within 10% at 1 GB on 64 ranks.
  const double tree = collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Tree, s, 64, kNet);
  EXPECT_GT(tree, 2 * s / b);
  EXPECT_LT(tree, 1.1 * 2 * s / b);
  EXPECT_EQ(collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Tree, s, 1, kNet), 0.0);
}

TEST(CollectiveModel, TwoLevelClosedForms) {
  const TwoLevelCost links{kNvlink, kNet, 1};
  const double s = 1e9;
  // 4 nodes x 8 GPUs, node-major ring: every step paced by the network hop.
  EXPECT_DOUBLE_EQ(collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, s, 8, 4, links),
                   62 * (kNet.latency + s / 32 / kNet.bandwidth));
  // Hierarchical: 2(g-1) intra steps on S/g, 2(m-1) network steps on S/(g m) with g rings sharing one NIC.
  const double hier = 14 * (kNvlink.latency + s / 8 / kNvlink.bandwidth) + 6 * (kNet.latency + s / 4 / kNet.bandwidth);
  EXPECT_DOUBLE_EQ(collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Hierarchical, s, 8, 4, links), hier);
  // One NIC per GPU (rail): the 8 inter-node rings no longer share.
  const TwoLevelCost rails{kNvlink, kNet, 8};
  EXPECT_DOUBLE_EQ(collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Hierarchical, s, 8, 4, rails),
                   14 * (kNvlink.latency + s / 8 / kNvlink.bandwidth) + 6 * (kNet.latency + s / 32 / kNet.bandwidth));
  // One node: everything on NVLink.
  EXPECT_DOUBLE_EQ(collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, s, 8, 1, links),
                   collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, s, 8, kNvlink));
  // All-to-all: the NIC carries g (N - g) chunks.
  EXPECT_DOUBLE_EQ(collective_time(CollectiveOp::AllToAll, CollectiveAlgorithm::Direct, s, 8, 4, links),
                   kNet.latency + 8.0 * 24 * (s / 32) / kNet.bandwidth);
  // Uniform = two-level with one GPU per node.
  for (auto [op, algorithm] : {std::pair{CollectiveOp::AllReduce, CollectiveAlgorithm::Tree},
                               std::pair{CollectiveOp::Broadcast, CollectiveAlgorithm::Ring},
                               std::pair{CollectiveOp::AllGather, CollectiveAlgorithm::Ring}})
    EXPECT_DOUBLE_EQ(collective_time(op, algorithm, s, 1, 16, links), collective_time(op, algorithm, s, 16, kNet));
}

TEST(CollectiveModel, HierarchicalWinsWhenTheNetworkIsMuchSlowerThanNvlink) {
  // Bandwidth terms: flat 2(N-1)/N S/B2, hierarchical 2(g-1)/g S/B1 + 2(m-1)/m S/B2: it wins when B1/B2 > m.
  const TwoLevelCost slow{kNvlink, {2e-6, 5e9}, 1};
  EXPECT_LT(collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Hierarchical, 1e9, 8, 4, slow),
            collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, 1e9, 8, 4, slow));
  const TwoLevelCost fast{{1e-6, 50e9}, {2e-6, 50e9}, 1};
  EXPECT_GT(collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Hierarchical, 1e9, 8, 4, fast),
            collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, 1e9, 8, 4, fast));
}

TEST(CollectiveModel, SupportedAlgorithms) {
  EXPECT_TRUE(is_supported(CollectiveOp::AllReduce, CollectiveAlgorithm::Tree));
  EXPECT_TRUE(is_supported(CollectiveOp::AllReduce, CollectiveAlgorithm::Hierarchical));
  EXPECT_FALSE(is_supported(CollectiveOp::AllReduce, CollectiveAlgorithm::Direct));
  EXPECT_TRUE(is_supported(CollectiveOp::AllGather, CollectiveAlgorithm::Ring));
  EXPECT_FALSE(is_supported(CollectiveOp::AllGather, CollectiveAlgorithm::Tree));
  EXPECT_TRUE(is_supported(CollectiveOp::AllToAll, CollectiveAlgorithm::Direct));
  EXPECT_FALSE(is_supported(CollectiveOp::AllToAll, CollectiveAlgorithm::Ring));
  EXPECT_TRUE(is_supported(CollectiveOp::Broadcast, CollectiveAlgorithm::Ring));
}

TEST(CollectiveModel, AutoAlgorithmTakesTheFastestClosedForm) {
  const TwoLevelCost links{kNvlink, kNet, 1};
  // Large buffers on one level: the ring (bandwidth-optimal, no pipeline fill).
  EXPECT_EQ(choose_algorithm(CollectiveOp::AllReduce, 16, 16, 1e9, {kNet, kNet, 1}), CollectiveAlgorithm::Ring);
  // Small buffers over many ranks: the tree's log-depth latency wins over 2(n-1) ring latencies.
  EXPECT_EQ(choose_algorithm(CollectiveOp::AllReduce, 1024, 1024, 1e4, {kNet, kNet, 1}), CollectiveAlgorithm::Tree);
  // Several nodes of several GPUs on a slow network: hierarchical.
  const TwoLevelCost slow{kNvlink, {2e-6, 5e9}, 1};
  EXPECT_EQ(choose_algorithm(CollectiveOp::AllReduce, 32, 4, 1e9, slow), CollectiveAlgorithm::Hierarchical);
  // ... but never on uneven groups.
  EXPECT_NE(choose_algorithm(CollectiveOp::AllReduce, 30, 4, 1e9, slow), CollectiveAlgorithm::Hierarchical);
  EXPECT_EQ(choose_algorithm(CollectiveOp::AllToAll, 32, 4, 1e9, links), CollectiveAlgorithm::Direct);
  EXPECT_EQ(choose_algorithm(CollectiveOp::ReduceScatter, 32, 4, 1e9, links), CollectiveAlgorithm::Ring);
  EXPECT_EQ(choose_algorithm(CollectiveOp::Broadcast, 32, 4, 1e9, links), CollectiveAlgorithm::Ring);
}

TEST(CollectiveModel, NvlsReducesInTheSwitch) {
  // 8 H100s: 360 GB/s effective NVLink, NVLS efficiency 0.85 and latency 25 us (nvlink4's figures).
  TwoLevelCost h100{{1e-6, 360e9}, kNet, 1};
  h100.nvls_efficiency = 0.85;
  h100.nvls_latency = 25e-6;
  const double bytes = 8e9;
  // Each port carries bytes (1 + 1/n) each way at 0.85 of its rate.
  const double t = nvls_time(bytes, 8, h100);
  EXPECT_DOUBLE_EQ(t, 25e-6 + bytes * 9.0 / 8.0 / (0.85 * 360e9));
  EXPECT_DOUBLE_EQ(collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Nvls, bytes, 8, 1, h100), t);
  // Bus bandwidth 0.85 B 2(n-1)/(n+1): 476 GB/s against the ring's 360.
  EXPECT_NEAR(bus_bandwidth(CollectiveOp::AllReduce, 8, algorithm_bandwidth(CollectiveOp::AllReduce, bytes, t)),
              0.85 * 360e9 * 14.0 / 9.0, 0.5e9); // less the 25 us latency
  EXPECT_EQ(nvls_time(bytes, 1, h100), 0.0);
  // `auto`: NVLS for large all-reduces inside an H100 node; not for small ones (NVLS's 25 us against the ring's 14
  // latencies of 1 us, the tree's fewer), nor on A100 nodes (no NVLink SHARP), nor across nodes.
  EXPECT_TRUE(nvls_available(1, h100));
  EXPECT_FALSE(nvls_available(2, h100));
  EXPECT_EQ(choose_algorithm(CollectiveOp::AllReduce, 8, 1, 1e9, h100), CollectiveAlgorithm::Nvls);
  EXPECT_NE(choose_algorithm(CollectiveOp::AllReduce, 8, 1, 1e5, h100), CollectiveAlgorithm::Nvls);
  TwoLevelCost a100 = h100;
  a100.nvls_efficiency = 0.0;
  EXPECT_EQ(choose_algorithm(CollectiveOp::AllReduce, 8, 1, 1e9, a100), CollectiveAlgorithm::Ring);
  EXPECT_NE(choose_algorithm(CollectiveOp::AllReduce, 16, 2, 1e9, h100), CollectiveAlgorithm::Nvls);
  EXPECT_EQ(choose_algorithm(CollectiveOp::ReduceScatter, 8, 1, 1e9, h100), CollectiveAlgorithm::Ring);
  EXPECT_FALSE(is_supported(CollectiveOp::AllGather, CollectiveAlgorithm::Nvls));
  CollectiveStep step;
  step.algorithm = CollectiveAlgorithm::Nvls;
  EXPECT_EQ(planned_messages(step, 8, 1, kNvlink), 2u * 8 * 7);
  step.fidelity = Fidelity::Flows; // one flow through the switch per member (nvls_switch_flow)
  EXPECT_EQ(planned_messages(step, 8, 1, kNvlink), 8u);
}

TEST(CollectiveModel, NvlsTreeRunsTheSwitchAndTheRailTreesAtOnce) {
  // H100 nodes (360 GB/s effective NVLink, NVLS 0.85 and 25 us) with 8 NDR NICs each (47 GB/s, 5 us).
  const LinkCost ndr{5e-6, 47e9};
  TwoLevelCost h100{{1e-6, 360e9}, ndr, 8};
  h100.nvls_efficiency = 0.85;
  h100.nvls_latency = 25e-6;
  const double bytes = 8e9;
  const double intra = bytes * 9.0 / 8.0 / (0.85 * 360e9);
  // Two nodes: each rail's tree is one exchange of a member's 1/8 (S / B = 21 ms), faster than the switch's 29 ms:
  // the switch sets the pace, and the bus bandwidth is NVLS's algbw x 2(n-1)/n = 510 GB/s.
  const double two = nvls_tree_time(bytes, 8, 2, h100);
  EXPECT_DOUBLE_EQ(two, 25e-6 + intra);
  EXPECT_NEAR(bus_bandwidth(CollectiveOp::AllReduce, 16, bytes / two), 0.85 * 360e9 * 8.0 / 9.0 * 30.0 / 16.0, 1e9);
  // Four nodes: a tree's node sends and receives 2 S, so the rails set the pace: about 8 x 47 x 31/32 = 364 GB/s of
  // bus bandwidth less the trees' fill (350 GB/s; NVIDIA's GTC 2024 figure for NVLS-tree across H100 nodes: 370-380).
  const double four = nvls_tree_time(bytes, 8, 4, h100);
  EXPECT_DOUBLE_EQ(four, 25e-6 + tree_time(double_binary_tree(4), bytes / 8, ndr));
  EXPECT_GT(four, 25e-6 + intra);
  EXPECT_NEAR(bus_bandwidth(CollectiveOp::AllReduce, 32, bytes / four), 8 * 47e9 * 31.0 / 32.0, 0.05 * 364e9);
  EXPECT_DOUBLE_EQ(collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::NvlsTree, bytes, 8, 4, h100), four);
  // One NIC per node: the eight rails share it, 8x slower on the network.
  TwoLevelCost one_nic = h100;
  one_nic.ports_per_node = 1;
  EXPECT_DOUBLE_EQ(nvls_tree_time(bytes, 8, 4, one_nic),
                   25e-6 + tree_time(double_binary_tree(4), bytes / 8, LinkCost{ndr.latency, ndr.bandwidth / 8}));
  // NCCL's tuner latency: 2 floor(log2 m) network steps of 20.9 us, plus the network's latency for Simple's flush.
  EXPECT_NEAR(protocol_latency(CollectiveOp::AllReduce, CollectiveAlgorithm::NvlsTree, CollectiveProtocol::Simple, 32,
                               8, 4, h100),
              4 * (20.9e-6 + 5e-6), 1e-12);
  // `auto`: NVLS-tree for large all-reduces across H100 nodes with a NIC per GPU; not for small ones, not with fewer
  // NICs than members, not without NVLink SHARP, not inside one node (NVLS), not on uneven groups.
  EXPECT_TRUE(nvls_tree_available(16, 2, h100));
  EXPECT_EQ(choose_algorithm(CollectiveOp::AllReduce, 16, 2, 1e9, h100), CollectiveAlgorithm::NvlsTree);
  // (At 4 nodes the ring over 8 NICs is within 3% of it, paced by NVLink's 360 GB/s: either may win.)
  EXPECT_NE(choose_algorithm(CollectiveOp::AllReduce, 32, 4, 1e5, h100), CollectiveAlgorithm::NvlsTree);
  EXPECT_FALSE(nvls_tree_available(32, 4, one_nic));
  EXPECT_NE(choose_algorithm(CollectiveOp::AllReduce, 32, 4, 1e9, one_nic), CollectiveAlgorithm::NvlsTree);
  TwoLevelCost a100 = h100;
  a100.nvls_efficiency = 0.0;
  EXPECT_FALSE(nvls_tree_available(16, 2, a100));
  EXPECT_FALSE(nvls_tree_available(8, 1, h100));
  EXPECT_FALSE(nvls_tree_available(15, 2, h100));
  EXPECT_FALSE(nvls_tree_available(4, 4, h100)); // one member per node: nothing for the switch to reduce
  EXPECT_FALSE(is_supported(CollectiveOp::ReduceScatter, CollectiveAlgorithm::NvlsTree));
  EXPECT_FALSE(protocol_available(CollectiveAlgorithm::NvlsTree, CollectiveProtocol::LL128, h100));
  // Messages: each node's NVLS traffic (steps: its pairs; flows: one flow per member), and the 8 rail trees of 4
  // nodes (4 (m-1) per chunk).
  CollectiveStep step;
  step.algorithm = CollectiveAlgorithm::NvlsTree;
  step.bytes = 8'000'000'000;
  step.fidelity = Fidelity::Flows;
  EXPECT_EQ(planned_messages(step, 32, 4, ndr), 32u + 8u * 4 * 3);
  step.fidelity = Fidelity::Steps;
  EXPECT_EQ(planned_messages(step, 32, 4, ndr), 32u * 7 + 8u * 4 * 3 * nvls_tree_chunks(4, 8, 8e9, ndr));
}

TEST(CollectiveModel, NvlsTreeHeadsAreCappedAsNcclsTunerCapsThem) {
  // H100 nodes as above with NCCL's perChMaxNVLSTreeBw: 57.7 GB/s of bus bandwidth per head on two nodes, 45.5 on
  // three or more (src/graph/tuning.cc, Hopper). One head per member (a NIC each).
  const LinkCost ndr{5e-6, 47e9};
  TwoLevelCost h100{{1e-6, 360e9}, ndr, 8};
  h100.nvls_efficiency = 0.85;
  h100.nvls_latency = 25e-6;
  TwoLevelCost capped = h100;
  capped.nvls_tree_head_two_nodes = 57.7e9;
  capped.nvls_tree_head_more_nodes = 45.5e9;
  // No cap, or one node: the switch's own efficiency.
  EXPECT_DOUBLE_EQ(nvls_tree_efficiency(8, 2, h100), 0.85);
  EXPECT_DOUBLE_EQ(nvls_tree_efficiency(8, 1, capped), 0.85);
  // Two nodes: e' = 9 x 16 x 57.7 / (2 x 15 x 360) = 0.769 < 0.85; the time is the cap's, bytes 2(n-1) / (n g P),
  // a bus bandwidth of 8 x 57.7 = 461.6 GB/s (against 510 GB/s for the switch alone).
  const double bytes = 8e9;
  EXPECT_NEAR(nvls_tree_efficiency(8, 2, capped), 9.0 * 16 * 57.7e9 / (30.0 * 360e9), 1e-12);
  const double two = nvls_tree_time(bytes, 8, 2, capped);
  EXPECT_NEAR(two, 25e-6 + bytes * 30.0 / (16.0 * 8 * 57.7e9), 1e-12);
  EXPECT_NEAR(bus_bandwidth(CollectiveOp::AllReduce, 16, bytes / (two - 25e-6)), 8 * 57.7e9, 1e-3);
  EXPECT_GT(two, nvls_tree_time(bytes, 8, 2, h100));
  // Four nodes: the rails (about 364 GB/s less the trees' fill) and the cap (8 x 45.5 = 364 GB/s) are close; the
  // time is the slower of the two.
  EXPECT_NEAR(nvls_tree_efficiency(8, 4, capped), 9.0 * 32 * 45.5e9 / (62.0 * 360e9), 1e-12);
  EXPECT_NEAR(nvls_tree_time(bytes, 8, 4, capped),
              25e-6 + std::max(bytes * 62.0 / (32.0 * 8 * 45.5e9), tree_time(double_binary_tree(4), bytes / 8, ndr)),
              1e-12);
  // A cap above what the switch reaches changes nothing.
  TwoLevelCost loose = h100;
  loose.nvls_tree_head_two_nodes = 1e12;
  EXPECT_DOUBLE_EQ(nvls_tree_time(bytes, 8, 2, loose), nvls_tree_time(bytes, 8, 2, h100));
}

TEST(CollectiveModel, ProtocolsCostWhatNcclsTunerCharges) {
  // Wire bytes per byte of data: LL128 lines carry 120 of 128 bytes, LL 8-byte stores carry 4 bytes and a flag.
  EXPECT_DOUBLE_EQ(protocol_wire_factor(CollectiveProtocol::Simple), 1.0);
  EXPECT_DOUBLE_EQ(protocol_wire_factor(CollectiveProtocol::LL128), 128.0 / 120.0);
  EXPECT_DOUBLE_EQ(protocol_wire_factor(CollectiveProtocol::LL), 2.0);
  // One node of 8 on NVLink (1 us of wire latency): NCCL's base latency plus 14 ring steps of its NVLink figure less
  // the wire's 1 us (LL's 0.6 us is all wire).
  TwoLevelCost node{kNvlink, kNet, 1};
  node.intra_nvlink = true;
  const auto latency = [&](CollectiveProtocol p, const TwoLevelCost& links, int g, int m) {
    return protocol_latency(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, p, g * m, g, m, links);
  };
  EXPECT_NEAR(latency(CollectiveProtocol::Simple, node, 8, 1), 8.4e-6 + 14 * 2.4e-6, 1e-12);
  EXPECT_NEAR(latency(CollectiveProtocol::LL128, node, 8, 1), 14.0e-6 + 14 * 0.9e-6, 1e-12);
  EXPECT_NEAR(latency(CollectiveProtocol::LL, node, 8, 1), 6.6e-6, 1e-12);
  // Over PCIe: NCCL's PCI figures (Simple 5.7 us a step).
  EXPECT_NEAR(latency(CollectiveProtocol::Simple, {kNvlink, kNet, 1}, 8, 1), 8.4e-6 + 14 * 4.7e-6, 1e-12);
  // 2 nodes x 8: 30 steps, 2 of them across the network (NCCL's 14 us plus the network's 2 us again for Simple's
  // flush); the intra-node steps pay at least NCCL's network post overhead (3 us for Simple).
  EXPECT_NEAR(latency(CollectiveProtocol::Simple, node, 8, 2), 8.4e-6 + 28 * 3.0e-6 + 2 * 16e-6, 1e-12);
  EXPECT_NEAR(latency(CollectiveProtocol::LL, node, 8, 2), 6.6e-6 + 28 * 1.0e-6 + 2 * 2.7e-6, 1e-12);
  // One GPU per node: every step crosses the network, at NCCL's tree figure (5 us for LL).
  EXPECT_NEAR(latency(CollectiveProtocol::LL, node, 1, 4), 6.6e-6 + 6 * 5.0e-6, 1e-12);
  // Reduce-scatter: n-1 steps; tree: 2 (g-1) intra-node and 2 log2(m) network steps; NVLS and all-to-all: none.
  EXPECT_NEAR(protocol_latency(CollectiveOp::ReduceScatter, CollectiveAlgorithm::Ring, CollectiveProtocol::LL128, 8, 8,
                               1, node),
              14.0e-6 + 7 * 0.9e-6, 1e-12);
  EXPECT_NEAR(
      protocol_latency(CollectiveOp::AllReduce, CollectiveAlgorithm::Tree, CollectiveProtocol::Simple, 32, 8, 4, node),
      8.4e-6 + 2 * (7 * 3.0e-6 + 2 * 16e-6), 1e-12);
  EXPECT_EQ(
      protocol_latency(CollectiveOp::AllToAll, CollectiveAlgorithm::Direct, CollectiveProtocol::Simple, 8, 8, 1, node),
      0.0);
  EXPECT_EQ(latency(CollectiveProtocol::LL, node, 1, 1), 0.0);
  // The closed form with a protocol: its latency plus the closed form of the bytes it puts on the wire.
  for (CollectiveProtocol p : {CollectiveProtocol::Simple, CollectiveProtocol::LL128, CollectiveProtocol::LL})
    EXPECT_DOUBLE_EQ(collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, p, 1e6, 16, 8, 2, node),
                     latency(p, node, 8, 2) +
                         collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring,
                                         1e6 * protocol_wire_factor(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring,
                                                                    p, 8, 2, node),
                                         16, 8, 2, node));
  // Availability: LL128 only over NVLink; NVLS and all-to-all Simple only.
  EXPECT_TRUE(protocol_available(CollectiveAlgorithm::Ring, CollectiveProtocol::LL128, node));
  EXPECT_FALSE(protocol_available(CollectiveAlgorithm::Ring, CollectiveProtocol::LL128, {kNvlink, kNet, 1}));
  EXPECT_FALSE(protocol_available(CollectiveAlgorithm::Nvls, CollectiveProtocol::LL, node));
  EXPECT_FALSE(protocol_available(CollectiveAlgorithm::Direct, CollectiveProtocol::LL128, node));
}

TEST(CollectiveModel, LlsBusBandwidthIsLimitedAsInNcclsTuner) {
  // NCCL's tuner (src/graph/tuning.cc at 5067397c): ring LL reaches min(llMaxBw, busBw / 2). One H100 node: NVLink 4
  // at 450 GB/s x 0.8, llMaxBw 141 GB/s (Hopper, one node): LL's factor is 360 / 141 instead of 2.
  TwoLevelCost h100{{1e-6, 360e9}, {2e-6, 48.5e9}, 8};
  h100.intra_nvlink = true;
  h100.ll_max_intra = 141e9;
  const auto factor = [](CollectiveAlgorithm a, int g, int m, const TwoLevelCost& links) {
    return protocol_wire_factor(CollectiveOp::AllReduce, a, CollectiveProtocol::LL, g, m, links);
  };
  EXPECT_DOUBLE_EQ(factor(CollectiveAlgorithm::Ring, 8, 1, h100), 360.0 / 141.0);
  // The closed form's data term then runs at 141 GB/s of bus bandwidth: 2 (n-1)/n S / (T - latency) with no wire
  // latency.
  TwoLevelCost lean = h100;
  lean.intra.latency = 0.0;
  const double bytes = 1e9;
  const double t =
      collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, CollectiveProtocol::LL, bytes, 8, 8, 1,
                      lean) -
      protocol_latency(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, CollectiveProtocol::LL, 8, 8, 1, lean);
  EXPECT_NEAR(2.0 * 7 / 8 * bytes / t, 141e9, 1e3);
  // No limit (a PCIe link, or a profile without one): half the link, as before. Simple and LL128 are unchanged.
  TwoLevelCost pcie{{1e-6, 24e9}, {2e-6, 25e9}, 1};
  EXPECT_DOUBLE_EQ(factor(CollectiveAlgorithm::Ring, 8, 1, pcie), 2.0);
  EXPECT_DOUBLE_EQ(
      protocol_wire_factor(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, CollectiveProtocol::LL128, 8, 1, h100),
      128.0 / 120.0);
  // A limit above half the link does not bind.
  TwoLevelCost fast = h100;
  fast.ll_max_intra = 500e9;
  EXPECT_DOUBLE_EQ(factor(CollectiveAlgorithm::Ring, 8, 1, fast), 2.0);
  // Across nodes the limit is the hosts' (x86 Intel: 39 GB/s on 2 nodes, 20.4 GB/s on more), against the ring's
  // Simple bus bandwidth min(B1 / (7/8), C B2) = min(411, 8 x 48.5) GB/s: with a ring per NIC each member's port
  // carries 7/8 of a step's chunk (its ring's entry and exit use the NICs).
  EXPECT_DOUBLE_EQ(ll_bandwidth_limit(1, h100), 141e9);
  EXPECT_DOUBLE_EQ(ll_bandwidth_limit(2, h100), 39e9);
  EXPECT_DOUBLE_EQ(ll_bandwidth_limit(16, h100), 20.4e9);
  EXPECT_DOUBLE_EQ(simple_bus_bandwidth(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, 8, 4, h100), 388e9);
  EXPECT_DOUBLE_EQ(factor(CollectiveAlgorithm::Ring, 8, 2, h100), 388.0 / 39.0);
  EXPECT_DOUBLE_EQ(factor(CollectiveAlgorithm::Ring, 8, 4, h100), 388.0 / 20.4);
  // One NIC per node: the network hop binds (48.5 GB/s). NCCL's tree across nodes: its chains on NVLink and its
  // channels' rail trees on their NICs, as the ring; with one member per node its slowest link, the network.
  TwoLevelCost one_nic = h100;
  one_nic.ports_per_node = 1;
  EXPECT_DOUBLE_EQ(factor(CollectiveAlgorithm::Ring, 8, 4, one_nic), 48.5 / 20.4);
  EXPECT_DOUBLE_EQ(factor(CollectiveAlgorithm::Tree, 8, 4, h100), 360.0 / 20.4);
  EXPECT_DOUBLE_EQ(factor(CollectiveAlgorithm::Tree, 8, 4, one_nic), 48.5 / 20.4);
  EXPECT_DOUBLE_EQ(factor(CollectiveAlgorithm::Tree, 1, 4, h100), 48.5 / 20.4);
  EXPECT_DOUBLE_EQ(factor(CollectiveAlgorithm::Hierarchical, 8, 4, h100), 360.0 / 20.4);
  // What it changes: across 4 H100 nodes a 4 MB all-reduce no longer runs LL (at 20.4 GB/s it would take about
  // 0.34 ms of data alone), while a 1 KB one still does.
  EXPECT_EQ(choose_method(CollectiveOp::AllReduce, 32, 4, 1e3, h100, CollectiveAlgorithm::Ring).protocol,
            CollectiveProtocol::LL);
  EXPECT_NE(choose_method(CollectiveOp::AllReduce, 32, 4, 4e6, h100, CollectiveAlgorithm::Ring).protocol,
            CollectiveProtocol::LL);
  // Planned messages: a tree's chunks follow the wire bytes with the limit.
  CollectiveStep tree;
  tree.algorithm = CollectiveAlgorithm::Tree;
  tree.protocol = CollectiveProtocol::LL;
  tree.bytes = 1'000'000;
  EXPECT_GT(planned_messages(tree, 32, 4, {2e-6, 48.5e9}, 1, factor(CollectiveAlgorithm::Tree, 8, 4, h100)),
            planned_messages(tree, 32, 4, {2e-6, 48.5e9}, 1, 2.0));
}

TEST(CollectiveModel, AutoPicksTheProtocolAsNcclsTunerDoes) {
  TwoLevelCost node{kNvlink, kNet, 1};
  node.intra_nvlink = true;
  // Small all-reduces: LL's latency; large: Simple's bandwidth; in between LL128.
  EXPECT_EQ(choose_method(CollectiveOp::AllReduce, 8, 1, 1e3, node).protocol, CollectiveProtocol::LL);
  EXPECT_EQ(choose_method(CollectiveOp::AllReduce, 8, 1, 1e9, node).protocol, CollectiveProtocol::Simple);
  const CollectiveMethod mid = choose_method(CollectiveOp::AllReduce, 8, 1, 16e6, node);
  EXPECT_EQ(mid.protocol, CollectiveProtocol::LL128);
  EXPECT_EQ(mid.algorithm, CollectiveAlgorithm::Ring);
  // Each choice is the smallest closed form over the protocols.
  for (double bytes : {1e3, 1e5, 1e7, 1e9}) {
    const CollectiveMethod m = choose_method(CollectiveOp::AllReduce, 16, 2, bytes, node, CollectiveAlgorithm::Ring);
    const double chosen =
        collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, m.protocol, bytes, 16, 8, 2, node);
    for (CollectiveProtocol p : {CollectiveProtocol::Simple, CollectiveProtocol::LL128, CollectiveProtocol::LL})
      EXPECT_LE(chosen, collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, p, bytes, 16, 8, 2, node));
  }
  // Over PCIe never LL128; a given protocol is kept; all-to-all runs Simple.
  for (double bytes : {1e3, 1e5, 1e7, 1e9})
    EXPECT_NE(choose_method(CollectiveOp::AllReduce, 8, 1, bytes, {kNvlink, kNet, 1}).protocol,
              CollectiveProtocol::LL128);
  EXPECT_EQ(choose_method(CollectiveOp::AllReduce, 8, 1, 1e9, node, std::nullopt, CollectiveProtocol::LL).protocol,
            CollectiveProtocol::LL);
  EXPECT_EQ(choose_method(CollectiveOp::AllToAll, 8, 1, 1e3, node).protocol, CollectiveProtocol::Simple);
  // Planned messages: the tree's chunks follow the bytes on the wire.
  CollectiveStep step;
  step.algorithm = CollectiveAlgorithm::Tree;
  step.bytes = 1'000'000;
  CollectiveStep ll = step;
  ll.protocol = CollectiveProtocol::LL;
  EXPECT_GT(planned_messages(ll, 64, 64, kNet), planned_messages(step, 64, 64, kNet));
}

TEST(CollectiveModel, AutoFidelityByMessageBudget) {
  EXPECT_EQ(choose_fidelity(523'264, 512), Fidelity::Steps);     // ring all-reduce, 512 ranks
  EXPECT_EQ(choose_fidelity(33'529'856, 4096), Fidelity::Flows); // 4096 ranks
  EXPECT_EQ(choose_fidelity(kMaxStepMessages + 1, kMaxFlowMessages + 1), Fidelity::Analytic);
}

TEST(CollectiveModel, RingChannelsSpreadARingOverTheNodesNics) {
  // One ring per NIC a node's members use, when the group spans nodes with several members on each.
  EXPECT_EQ(ring_channels(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, 8, 2, 8), 8);
  EXPECT_EQ(ring_channels(CollectiveOp::ReduceScatter, CollectiveAlgorithm::Ring, 8, 4, 2), 2);
  EXPECT_EQ(ring_channels(CollectiveOp::AllGather, CollectiveAlgorithm::Ring, 4, 4, 8), 4);  // at most one per member
  EXPECT_EQ(ring_channels(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, 8, 1, 8), 1);  // inside one node
  EXPECT_EQ(ring_channels(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, 1, 64, 8), 1); // one member per node
  EXPECT_EQ(ring_channels(CollectiveOp::Broadcast, CollectiveAlgorithm::Ring, 8, 2, 8), 1);
  EXPECT_EQ(ring_channels(CollectiveOp::AllReduce, CollectiveAlgorithm::Tree, 8, 2, 8), 1);
  // The closed form: the network hop of a ring step carries c / C per NIC.
  const TwoLevelCost eight{kNvlink, kNet, 8};
  const double c = 1e9 / 16;
  const double step = std::max(kNvlink.latency + c / kNvlink.bandwidth, kNet.latency + c / (8 * kNet.bandwidth));
  EXPECT_DOUBLE_EQ(collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, 1e9, 8, 2, eight),
                   2 * 15 * step);
  EXPECT_DOUBLE_EQ(collective_time(CollectiveOp::AllGather, CollectiveAlgorithm::Ring, 1e9, 8, 2, eight), 15 * step);
  // Fewer channels than NICs (NCCL_MAX_NCHANNELS): the network hop carries c / C on each of C NICs; more than
  // NICs share them (no faster); never more than the members per node.
  EXPECT_EQ(ring_channels(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, 8, 2, 8, 2), 2);
  EXPECT_EQ(ring_channels(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, 8, 2, 2, 16), 8);
  EXPECT_EQ(ring_channels(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, 8, 1, 8, 4), 1);
  TwoLevelCost two = eight;
  two.channels = 2;
  const double two_step = std::max(kNvlink.latency + c / kNvlink.bandwidth, kNet.latency + c / (2 * kNet.bandwidth));
  EXPECT_DOUBLE_EQ(collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, 1e9, 8, 2, two),
                   2 * 15 * two_step);
  TwoLevelCost shared{kNvlink, kNet, 2};
  shared.channels = 8;
  EXPECT_DOUBLE_EQ(collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, 1e9, 8, 2, shared),
                   collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, 1e9, 8, 2, {kNvlink, kNet, 2}));
  CollectiveStep ring;
  ring.bytes = 1'000'000'000;
  EXPECT_EQ(planned_messages(ring, 16, 2, kNet, 8), 2u * 15 * 16 * 8);
  ring.fidelity = Fidelity::Flows;
  EXPECT_EQ(planned_messages(ring, 16, 2, kNet, 8), 16u * 8);
}

TEST(CollectiveModel, PlannedMessages) {
  CollectiveStep step;
  step.bytes = 1'000'000'000;
  EXPECT_EQ(planned_messages(step, 8, 8, kNet), 2u * 7 * 8);
  step.op = CollectiveOp::ReduceScatter;
  EXPECT_EQ(planned_messages(step, 8, 8, kNet), 7u * 8);
  step.op = CollectiveOp::Broadcast;
  EXPECT_EQ(planned_messages(step, 8, 8, kNet), 7u * kMaxPipelineChunks);
  step.op = CollectiveOp::AllToAll;
  step.algorithm = CollectiveAlgorithm::Direct;
  EXPECT_EQ(planned_messages(step, 8, 8, kNet), 56u);
  step.op = CollectiveOp::AllReduce;
  step.algorithm = CollectiveAlgorithm::Hierarchical;
  EXPECT_EQ(planned_messages(step, 32, 4, kNet), 2u * 4 * 8 * 7 + 2u * 8 * 4 * 3);
  step.algorithm = CollectiveAlgorithm::Tree;
  EXPECT_EQ(planned_messages(step, 8, 8, kNet),
            4u * 7 * pipeline_chunks(CollectiveOp::AllReduce, CollectiveAlgorithm::Tree, 8, 1e9, kNet));
  step.fidelity = Fidelity::Flows;
  EXPECT_EQ(planned_messages(step, 8, 8, kNet), 28u);
  step.algorithm = CollectiveAlgorithm::Ring;
  EXPECT_EQ(planned_messages(step, 8, 8, kNet), 8u);
  step.algorithm = CollectiveAlgorithm::Hierarchical;
  EXPECT_EQ(planned_messages(step, 32, 4, kNet), 96u);
  step.fidelity = Fidelity::Analytic;
  EXPECT_EQ(planned_messages(step, 32, 4, kNet), 0u);
  EXPECT_EQ(planned_messages(step, 1, 1, kNet), 0u);
}

} // namespace
} // namespace partsim
