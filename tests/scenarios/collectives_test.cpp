// Collectives on the simulated platform: every algorithm against its alpha-beta closed form, hierarchical against a
// flat ring on a slow network, the three fidelity levels against each other (uncontended and contended), groups that
// share ranks, and the bytes invariant. Plans are built by hand: one collective per rank, no compute.
// Each TEST runs in its own process (gtest_discover_tests): SimGrid allows one simulation per process.
#include "test_support.hpp"

#include "partsim/model/collective_cost.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <string>

namespace partsim::test {
namespace {

constexpr LinkCost kNet{2e-6, 25e9};     // base_scenario(): network
constexpr LinkCost kNvlink{1e-6, 300e9}; // base_scenario(): intra-node link
constexpr std::uint64_t kBytes = 1'000'000'000;

Plan plan_for(int ranks, std::vector<std::vector<int>> groups) {
  Plan plan;
  plan.ranks.resize(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) plan.ranks[static_cast<std::size_t>(r)].gpu = r;
  plan.groups = std::move(groups);
  return plan;
}

CollectiveStep collective(int group, CollectiveOp op, CollectiveAlgorithm algorithm, Fidelity fidelity,
                          std::uint64_t bytes = kBytes) {
  CollectiveStep step;
  step.group = group;
  step.op = op;
  step.algorithm = algorithm;
  step.fidelity = fidelity;
  step.bytes = bytes;
  return step;
}

/** Bytes sent by all ranks (and their communication streams) equal the bytes received. */
void expect_bytes_balance(const RunResult& result) {
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
  for (const auto* timelines : {&result.ranks, &result.streams})
    for (const RankTimeline& t : *timelines) {
      sent += t.bytes_sent;
      received += t.bytes_received;
    }
  EXPECT_EQ(sent, received);
  EXPECT_GT(sent, 0u);
}

/** When the last member of `group` finished. */
double group_finish(const RunResult& result, const std::vector<int>& group) {
  double finish = 0.0;
  for (int r : group) finish = std::max(finish, result.ranks[static_cast<std::size_t>(r)].finish);
  return finish;
}

std::vector<int> iota(int from, int count, int stride = 1) {
  std::vector<int> v;
  for (int i = 0; i < count; ++i) v.push_back(from + i * stride);
  return v;
}

struct Algo {
  CollectiveOp op;
  CollectiveAlgorithm algorithm;
};

std::string name_of(const Algo& a) {
  return to_string(a.op) + "_" + to_string(a.algorithm);
}

const Algo kAlgorithms[] = {
    {CollectiveOp::AllReduce, CollectiveAlgorithm::Ring},
    {CollectiveOp::AllReduce, CollectiveAlgorithm::Tree},
    {CollectiveOp::AllReduce, CollectiveAlgorithm::Hierarchical},
    {CollectiveOp::ReduceScatter, CollectiveAlgorithm::Ring},
    {CollectiveOp::AllGather, CollectiveAlgorithm::Ring},
    {CollectiveOp::AllToAll, CollectiveAlgorithm::Direct},
    {CollectiveOp::Broadcast, CollectiveAlgorithm::Ring},
};

// ---- Each algorithm at step level against its closed form: n nodes of one GPU, uniform links ----

class ClosedForm : public ::testing::TestWithParam<std::tuple<Algo, int>> {};

TEST_P(ClosedForm, StepsMatchAlphaBetaWithin5Percent) {
  const auto [algo, n] = GetParam();
  const Scenario scenario = parse(base_scenario(n, 1));
  Plan plan = plan_for(n, {iota(0, n)});
  CollectiveStep step = collective(0, algo.op, algo.algorithm, Fidelity::Steps);
  if (algo.op == CollectiveOp::Broadcast) step.root = n / 2; // an all-to-all's root names its skew (none here)
  for (auto& rank : plan.ranks) rank.own_steps.emplace_back(step);
  const RunResult result = simulate(scenario, plan);
  const double expected = collective_time(algo.op, algo.algorithm, static_cast<double>(kBytes), n, kNet);
  std::printf("%s n=%d: simulated %.6f s, closed form %.6f s (%+.2f%%)\n", name_of(algo).c_str(), n, result.makespan,
              expected, 100 * (result.makespan / expected - 1));
  EXPECT_NEAR(result.makespan, expected, 0.05 * expected);
  EXPECT_EQ(result.messages, planned_messages(step, n, n, kNet));
  expect_bytes_balance(result);
}

INSTANTIATE_TEST_SUITE_P(Uniform, ClosedForm,
                         ::testing::Combine(::testing::ValuesIn(kAlgorithms), ::testing::Values(2, 3, 8, 13)),
                         [](const auto& info) {
                           return name_of(std::get<0>(info.param)) + "_n" + std::to_string(std::get<1>(info.param));
                         });

// ---- Two levels: hierarchical against a flat ring, both against their two-level closed forms ----

TEST(Collectives, HierarchicalBeatsFlatRingWhenTheNetworkIsMuchSlower) {
  // 8 nodes x 4 GPUs, network 5 GB/s vs 300 GB/s NVLink (ratio 60 > 4 nodes per group). Nodes 0-3 run a flat ring,
  // nodes 4-7 the hierarchical all-reduce, at once: the groups share no link.
  auto doc = base_scenario(8, 4);
  doc["cluster"]["network"]["bandwidth"] = "5GBps";
  const Scenario scenario = parse(doc);
  Plan plan = plan_for(32, {iota(0, 16), iota(16, 16)});
  for (int r = 0; r < 32; ++r)
    plan.ranks[static_cast<std::size_t>(r)].own_steps.emplace_back(
        collective(r < 16 ? 0 : 1, CollectiveOp::AllReduce,
                   r < 16 ? CollectiveAlgorithm::Ring : CollectiveAlgorithm::Hierarchical, Fidelity::Steps));
  const RunResult result = simulate(scenario, plan);
  const TwoLevelCost links{kNvlink, {2e-6, 5e9}, 1};
  const double ring = group_finish(result, plan.groups[0]);
  const double hier = group_finish(result, plan.groups[1]);
  const double ring_expected = collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, 1e9, 4, 4, links);
  const double hier_expected =
      collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Hierarchical, 1e9, 4, 4, links);
  std::printf("flat ring %.6f s (closed form %.6f), hierarchical %.6f s (closed form %.6f)\n", ring, ring_expected,
              hier, hier_expected);
  EXPECT_NEAR(ring, ring_expected, 0.05 * ring_expected);
  EXPECT_NEAR(hier, hier_expected, 0.05 * hier_expected);
  EXPECT_LT(hier, 0.9 * ring);
  expect_bytes_balance(result);
}

// ---- Channels: a ring that crosses nodes runs one ring per NIC, rail-aligned ----

/** 2 nodes x 8 GPUs, each node with 8 NICs of 25 GB/s (GPU i on NIC i) on a star: ring_channels gives 8 rings, each
 * entering and leaving a node through its own NIC, each carrying 1/8 of the data, so the network hop of a ring step
 * moves c/8 per NIC. Every fidelity level against the closed form with 8 ports, which is 8x faster (less latency)
 * than the same ring through one NIC per node. */
class Channels : public ::testing::TestWithParam<std::tuple<CollectiveOp, Fidelity>> {};

TEST_P(Channels, RingOverEightRailNicsIsEightTimesFasterThanOverOne) {
  const auto [op, fidelity] = GetParam();
  auto doc = base_scenario(2, 8);
  doc["cluster"]["network"]["nics_per_node"] = 8;
  const Scenario scenario = parse(doc);
  Plan plan = plan_for(16, {iota(0, 16)});
  const CollectiveStep step = collective(0, op, CollectiveAlgorithm::Ring, fidelity);
  for (auto& rank : plan.ranks) rank.own_steps.emplace_back(step);
  const RunResult result = simulate(scenario, plan);
  EXPECT_EQ(ring_channels(op, CollectiveAlgorithm::Ring, 8, 2, 8), 8);
  const double eight = collective_time(op, CollectiveAlgorithm::Ring, 1e9, 8, 2, TwoLevelCost{kNvlink, kNet, 8});
  const double one = collective_time(op, CollectiveAlgorithm::Ring, 1e9, 8, 2, TwoLevelCost{kNvlink, kNet, 1});
  std::printf("%s %s 2 x 8, 8 NICs: simulated %.6f s, closed form %.6f s (%+.2f%%); one NIC %.6f s (%.2fx)\n",
              to_string(op).c_str(), to_string(fidelity).c_str(), result.makespan, eight,
              100 * (result.makespan / eight - 1), one, one / eight);
  EXPECT_NEAR(result.makespan, eight, 0.05 * eight);
  EXPECT_GT(one / eight, 7.5);
  EXPECT_EQ(result.messages, planned_messages(step, 16, 2, slowest_link({kNvlink, kNet, 8}, 8, 2), 8));
  expect_bytes_balance(result);
}

TEST(Channels, FewerChannelsThanNicsLeaveNicsIdle) {
  // The scenario's `channels` (NCCL_MAX_NCHANNELS = 2) on 2 x 8 GPUs with 8 NICs each: two rings, each on 1/2 of
  // the data, through 2 of each node's 8 NICs: the closed form with C = 2, 4x slower on the network than 8.
  auto doc = base_scenario(2, 8);
  doc["cluster"]["network"]["nics_per_node"] = 8;
  const Scenario scenario = parse(doc);
  Plan plan = plan_for(16, {iota(0, 16)});
  CollectiveStep step = collective(0, CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, Fidelity::Steps);
  step.channels = 2;
  for (auto& rank : plan.ranks) rank.own_steps.emplace_back(step);
  const RunResult result = simulate(scenario, plan);
  TwoLevelCost links{kNvlink, kNet, 8};
  links.channels = 2;
  const double two = collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, 1e9, 8, 2, links);
  std::printf("2 channels over 8 NICs: simulated %.6f s, closed form %.6f s\n", result.makespan, two);
  EXPECT_NEAR(result.makespan, two, 0.05 * two);
  EXPECT_EQ(result.messages, planned_messages(step, 16, 2, kNet, 2));
  expect_bytes_balance(result);
}

TEST(Channels, RingsStayOnTheirRailsOfARailNetwork) {
  // 2 nodes x 8 GPUs on a rail network whose spine is 1000x oversubscribed: a ring edge between nodes that changed
  // rails would cross the spine and crawl. Every channel's ring leaves and enters each node on one rail, so the
  // all-reduce takes the closed form of 8 NICs (each rail's switch adds its uplinks nothing).
  auto doc = base_scenario(2, 8);
  doc["cluster"]["network"]["topology"] = "rail";
  doc["cluster"]["network"]["rail"] = {{"spine_oversubscription", 1000}};
  const Scenario scenario = parse(doc);
  Plan plan = plan_for(16, {iota(0, 16)});
  for (auto& rank : plan.ranks)
    rank.own_steps.emplace_back(collective(0, CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, Fidelity::Steps));
  const RunResult result = simulate(scenario, plan);
  const double eight =
      collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, 1e9, 8, 2, TwoLevelCost{kNvlink, kNet, 8});
  std::printf("rail network 2 x 8: simulated %.6f s, closed form %.6f s\n", result.makespan, eight);
  EXPECT_NEAR(result.makespan, eight, 0.05 * eight);
}

INSTANTIATE_TEST_SUITE_P(
    RailNics, Channels,
    ::testing::Combine(::testing::Values(CollectiveOp::AllReduce, CollectiveOp::ReduceScatter, CollectiveOp::AllGather),
                       ::testing::Values(Fidelity::Steps, Fidelity::Flows, Fidelity::Analytic)),
    [](const auto& info) { return to_string(std::get<0>(info.param)) + "_" + to_string(std::get<1>(info.param)); });

// ---- NVLink SHARP: the switch reduces and multicasts ----

/** One node of 8 GPUs whose switch has NVLS (efficiency 0.85, latency 25 us): every fidelity level against
 * nvls_time, and the bytes each member's port carries (bytes (1 + 1/n) each way). */
class Nvls : public ::testing::TestWithParam<Fidelity> {};

TEST_P(Nvls, MatchesItsClosedFormAtEveryFidelity) {
  const Fidelity fidelity = GetParam();
  auto doc = base_scenario(1, 8);
  doc["cluster"]["intra_node_link"]["nvls_efficiency"] = 0.85;
  doc["cluster"]["intra_node_link"]["nvls_latency"] = "25us";
  const Scenario scenario = parse(doc);
  Plan plan = plan_for(8, {iota(0, 8)});
  const CollectiveStep step = collective(0, CollectiveOp::AllReduce, CollectiveAlgorithm::Nvls, fidelity);
  for (auto& rank : plan.ranks) rank.own_steps.emplace_back(step);
  const RunResult result = simulate(scenario, plan);
  TwoLevelCost links{kNvlink, kNet, 1};
  links.nvls_efficiency = 0.85;
  links.nvls_latency = 25e-6;
  const double expected = nvls_time(1e9, 8, links);
  std::printf("nvls %s 8 GPUs: simulated %.6f s, closed form %.6f s (%+.3f%%)\n", to_string(fidelity).c_str(),
              result.makespan, expected, 100 * (result.makespan / expected - 1));
  EXPECT_NEAR(result.makespan, expected, 1e-3 * expected);
  EXPECT_EQ(result.messages, planned_messages(step, 8, 1, kNvlink));
  for (const RankTimeline& t : result.ranks) {
    EXPECT_NEAR(static_cast<double>(t.bytes_sent), 1e9 * 9.0 / 8.0, 8.0);
    EXPECT_NEAR(static_cast<double>(t.bytes_received), 1e9 * 9.0 / 8.0, 8.0);
  }
  expect_bytes_balance(result);
}

INSTANTIATE_TEST_SUITE_P(OneNode, Nvls, ::testing::Values(Fidelity::Steps, Fidelity::Flows, Fidelity::Analytic),
                         [](const auto& info) { return to_string(info.param); });

// ---- NVLS-tree: NVLS inside each node, a tree between the nodes on each rail ----

/** A 1 GB all-reduce with `algorithm` at `fidelity` over every GPU of m nodes of 8 with 8 NICs each (`doc` may add
 * to base_scenario(m, 8)): the run, the step, and the cluster's two levels as the closed forms see them; checks the
 * planned messages (with `channels`) and bytes balance, and prints the makespan against `expected`. */
struct NodesAllReduce {
  RunResult result;
  CollectiveStep step;
  TwoLevelCost links;
};
NodesAllReduce all_reduce_over_nodes(int m, CollectiveAlgorithm algorithm, Fidelity fidelity, nlohmann::json doc) {
  doc["cluster"]["network"]["nics_per_node"] = 8;
  const Scenario scenario = parse(doc);
  const int n = 8 * m;
  Plan plan = plan_for(n, {iota(0, n)});
  NodesAllReduce r{{}, collective(0, CollectiveOp::AllReduce, algorithm, fidelity), two_level_cost(scenario.cluster)};
  for (auto& rank : plan.ranks) rank.own_steps.emplace_back(r.step);
  r.result = simulate(scenario, plan);
  expect_bytes_balance(r.result);
  return r;
}

/** The run's makespan against the closed form `expected` (within 3%), printed. */
void expect_closed_form(const NodesAllReduce& r, int m, double expected) {
  std::printf("%s %s %d x 8: simulated %.6f s, closed form %.6f s (%+.3f%%)\n", to_string(r.step.algorithm).c_str(),
              to_string(r.step.fidelity).c_str(), m, r.result.makespan, expected,
              100 * (r.result.makespan / expected - 1));
  EXPECT_NEAR(r.result.makespan, expected, 0.03 * expected);
}

/** m nodes x 8 GPUs with 8 fast NICs each (100 GB/s, GPU i on NIC i): NVLink (300 GB/s) paces the ring. Each of the
 * 8 rings enters a node at one member from its NIC and leaves at another to its NIC, so every member's NVLink port
 * carries 7/8 of a step's chunk each way, not all of it: the closed form counts that share, and steps, flows and
 * analytic agree with it. */
class RingPortShare : public ::testing::TestWithParam<std::tuple<int, Fidelity>> {};

TEST_P(RingPortShare, RailRingsSpareEachMembersPortOneChunkInEight) {
  const auto [m, fidelity] = GetParam();
  auto doc = base_scenario(m, 8);
  doc["cluster"]["network"]["bandwidth"] = "100GBps";
  const NodesAllReduce r = all_reduce_over_nodes(m, CollectiveAlgorithm::Ring, fidelity, doc);
  const int n = 8 * m;
  // By hand: 2(n-1) steps of the NVLink hop on 7/8 of a chunk of 1e9 / n (the NICs' 1e9 / (8 n) per step at 100 GB/s
  // are faster), plus the protocol's latency (Simple, NCCL's tuner figures).
  const double chunk = 1e9 / n;
  EXPECT_NEAR(collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, 1e9, 8, m, r.links),
              2.0 * (n - 1) * (kNvlink.latency + chunk * 7.0 / 8.0 / kNvlink.bandwidth), 1e-12);
  const double expected = collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring,
                                          CollectiveProtocol::Simple, 1e9, n, 8, m, r.links);
  // Steps and analytic to the closed form exactly; flows within 3% (its one flow per ring edge and phase: 1% here).
  if (fidelity == Fidelity::Flows)
    expect_closed_form(r, m, expected);
  else
    EXPECT_NEAR(r.result.makespan, expected, 1e-6 * expected);
}

INSTANTIATE_TEST_SUITE_P(Nodes, RingPortShare,
                         ::testing::Combine(::testing::Values(2, 4),
                                            ::testing::Values(Fidelity::Steps, Fidelity::Flows, Fidelity::Analytic)),
                         [](const auto& info) {
                           return std::to_string(std::get<0>(info.param)) + "_nodes_" +
                                  to_string(std::get<1>(info.param));
                         });

/** m nodes of 8 GPUs with 8 NICs each and NVLS (0.85, 25 us): every fidelity level against the closed form with its
 * protocol latency (nvls_tree_time plus NCCL's per-network-step figures), the planned messages, and bytes balance. */
class NvlsTree : public ::testing::TestWithParam<std::tuple<int, Fidelity>> {};

TEST_P(NvlsTree, MatchesItsClosedFormAtEveryFidelity) {
  const auto [m, fidelity] = GetParam();
  auto doc = base_scenario(m, 8);
  doc["cluster"]["intra_node_link"]["nvls_efficiency"] = 0.85;
  doc["cluster"]["intra_node_link"]["nvls_latency"] = "25us";
  const NodesAllReduce r = all_reduce_over_nodes(m, CollectiveAlgorithm::NvlsTree, fidelity, doc);
  TwoLevelCost links{kNvlink, kNet, 8};
  links.nvls_efficiency = 0.85;
  links.nvls_latency = 25e-6;
  const int n = 8 * m;
  // The closed form by hand: the rail trees (a member's 1/8 over its own NIC) are slower than the switch here.
  const double intra = 1e9 * 9.0 / 8.0 / (0.85 * kNvlink.bandwidth);
  const double rails = tree_time(double_binary_tree(m), 1e9 / 8, kNet);
  EXPECT_GT(rails, intra);
  EXPECT_NEAR(nvls_tree_time(1e9, 8, m, links), 25e-6 + rails, 1e-12);
  expect_closed_form(r, m,
                     collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::NvlsTree, CollectiveProtocol::Simple,
                                     1e9, n, 8, m, links));
  EXPECT_EQ(r.result.messages, planned_messages(r.step, n, m, slowest_link(links, 8, m)));
}

/** Two nodes of 8 H100s on the nvlink4 profile (NVLS 0.85, NCCL's per-head cap of 57.7 GB/s of bus bandwidth on two
 * nodes) with 8 fast NICs each (100 GB/s): the cap, not the switch or the rails, paces NVLS-tree, at every fidelity. */
class NvlsTreeHeadCap : public ::testing::TestWithParam<Fidelity> {};

TEST_P(NvlsTreeHeadCap, PacesTwoNodesAtEveryFidelity) {
  auto doc = base_scenario(2, 8);
  doc["cluster"]["intra_node_link"] = {{"profile", "nvlink4"}};
  doc["cluster"]["network"]["bandwidth"] = "100GBps";
  const NodesAllReduce r = all_reduce_over_nodes(2, CollectiveAlgorithm::NvlsTree, GetParam(), doc);
  ASSERT_DOUBLE_EQ(r.links.nvls_tree_head_two_nodes, 57.7e9);
  // e' = (g+1) n P / (2 (n-1) B1) = 9 x 16 x 57.7 / (30 x 360) = 0.769, below the switch's 0.85.
  const double capped = nvls_tree_efficiency(8, 2, r.links);
  EXPECT_NEAR(capped, 9.0 * 16 * 57.7e9 / (30.0 * r.links.intra.bandwidth), 1e-12);
  EXPECT_LT(capped, 0.85);
  // The switch part at e' takes exactly the cap's time: bytes 2(n-1) / (n g P), bus bandwidth 8 x 57.7 GB/s.
  const double intra = 1e9 * 9.0 / 8.0 / (capped * r.links.intra.bandwidth);
  EXPECT_NEAR(intra, 1e9 * 30.0 / (16.0 * 8 * 57.7e9), 1e-12);
  EXPECT_GT(intra, tree_time(double_binary_tree(2), 1e9 / 8, r.links.inter));
  EXPECT_NEAR(bus_bandwidth(CollectiveOp::AllReduce, 16, 1e9 / intra), 8 * 57.7e9, 1e-3);
  expect_closed_form(r, 2,
                     collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::NvlsTree, CollectiveProtocol::Simple,
                                     1e9, 16, 8, 2, r.links));
  EXPECT_EQ(r.result.messages, planned_messages(r.step, 16, 2, slowest_link(r.links, 8, 2)));
}

INSTANTIATE_TEST_SUITE_P(TwoNodes, NvlsTreeHeadCap,
                         ::testing::Values(Fidelity::Steps, Fidelity::Flows, Fidelity::Analytic),
                         [](const auto& info) { return to_string(info.param); });

INSTANTIATE_TEST_SUITE_P(Nodes, NvlsTree,
                         ::testing::Combine(::testing::Values(2, 4),
                                            ::testing::Values(Fidelity::Steps, Fidelity::Flows, Fidelity::Analytic)),
                         [](const auto& info) {
                           return std::to_string(std::get<0>(info.param)) + "_nodes_" +
                                  to_string(std::get<1>(info.param));
                         });

// ---- NCCL's tree across nodes: chains inside the nodes, a double binary tree between them on each rail ----

/** m nodes of 8 GPUs with 8 NICs each: a 1 GB tree all-reduce at every fidelity level against its closed form with
 * the protocol latency (node_tree_time plus NCCL's 2((g-1) intra + log2(m) inter) per-step figures), the planned
 * messages (8 channels), and bytes balance. */
class NodeTree : public ::testing::TestWithParam<std::tuple<int, Fidelity>> {};

TEST_P(NodeTree, MatchesItsClosedFormAtEveryFidelity) {
  const auto [m, fidelity] = GetParam();
  const NodesAllReduce r = all_reduce_over_nodes(m, CollectiveAlgorithm::Tree, fidelity, base_scenario(m, 8));
  const int n = 8 * m;
  const double expected = collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Tree,
                                          CollectiveProtocol::Simple, 1e9, n, 8, m, r.links);
  EXPECT_NEAR(expected - protocol_latency(CollectiveOp::AllReduce, CollectiveAlgorithm::Tree,
                                          CollectiveProtocol::Simple, n, 8, m, r.links),
              node_tree_time(double_binary_tree(m), 1e9, 8, 8, r.links), 1e-12);
  expect_closed_form(r, m, expected);
  EXPECT_EQ(r.result.messages, planned_messages(r.step, n, m, slowest_link(r.links, 8, m), 8));
}

INSTANTIATE_TEST_SUITE_P(Nodes, NodeTree,
                         ::testing::Combine(::testing::Values(2, 4),
                                            ::testing::Values(Fidelity::Steps, Fidelity::Flows, Fidelity::Analytic)),
                         [](const auto& info) {
                           return std::to_string(std::get<0>(info.param)) + "_nodes_" +
                                  to_string(std::get<1>(info.param));
                         });

// ---- NCCL's protocols: latency and bytes on the wire ----

/** One node of 8 GPUs on NVLink (transport nvlink): a 4 MB ring all-reduce with each protocol, at every fidelity,
 * against the closed form with the protocol (its latency plus the closed form of its wire bytes); the report's bytes
 * are the data's, whatever the wire carries. */
class Protocols : public ::testing::TestWithParam<std::tuple<CollectiveProtocol, Fidelity>> {};

TEST_P(Protocols, RingMatchesItsClosedFormWithTheProtocol) {
  const auto [protocol, fidelity] = GetParam();
  auto doc = base_scenario(1, 8);
  doc["cluster"]["intra_node_link"]["transport"] = "nvlink";
  const Scenario scenario = parse(doc);
  Plan plan = plan_for(8, {iota(0, 8)});
  CollectiveStep step = collective(0, CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, fidelity, 4'000'000);
  step.protocol = protocol;
  for (auto& rank : plan.ranks) rank.own_steps.emplace_back(step);
  const RunResult result = simulate(scenario, plan);
  TwoLevelCost links{kNvlink, kNet, 1};
  links.intra_nvlink = true;
  const double expected =
      collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, protocol, 4e6, 8, 8, 1, links);
  std::printf("ring all-reduce 4 MB, %s, %s: simulated %.3f us, closed form %.3f us (latency %.3f us)\n",
              to_string(protocol).c_str(), to_string(fidelity).c_str(), result.makespan * 1e6, expected * 1e6,
              protocol_latency(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, protocol, 8, 8, 1, links) * 1e6);
  EXPECT_NEAR(result.makespan, expected, 0.01 * expected);
  for (const RankTimeline& t : result.ranks) EXPECT_EQ(t.bytes_sent, 2u * 4'000'000 * 7 / 8);
  expect_bytes_balance(result);
}

INSTANTIATE_TEST_SUITE_P(
    OneNode, Protocols,
    ::testing::Combine(::testing::Values(CollectiveProtocol::Simple, CollectiveProtocol::LL128, CollectiveProtocol::LL),
                       ::testing::Values(Fidelity::Steps, Fidelity::Flows, Fidelity::Analytic)),
    [](const auto& info) { return to_string(std::get<0>(info.param)) + "_" + to_string(std::get<1>(info.param)); });

/** The same with LL's bus bandwidth limited to 50 GB/s (`ll_max_bandwidth`, below half of the 300 GB/s link): every
 * message occupies the links 300 / 50 = 6 times its data, at every fidelity, as the closed form says. */
class LlLimit : public ::testing::TestWithParam<Fidelity> {};

TEST_P(LlLimit, RingMatchesItsClosedFormWithTheLimit) {
  const Fidelity fidelity = GetParam();
  auto doc = base_scenario(1, 8);
  doc["cluster"]["intra_node_link"]["transport"] = "nvlink";
  doc["cluster"]["intra_node_link"]["ll_max_bandwidth"] = "50GBps";
  const Scenario scenario = parse(doc);
  Plan plan = plan_for(8, {iota(0, 8)});
  CollectiveStep step = collective(0, CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, fidelity, 4'000'000);
  step.protocol = CollectiveProtocol::LL;
  for (auto& rank : plan.ranks) rank.own_steps.emplace_back(step);
  const RunResult result = simulate(scenario, plan);
  TwoLevelCost links{kNvlink, kNet, 1};
  links.intra_nvlink = true;
  links.ll_max_intra = 50e9;
  const double expected =
      collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, CollectiveProtocol::LL, 4e6, 8, 8, 1, links);
  links.ll_max_intra = 0.0;
  const double unlimited =
      collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, CollectiveProtocol::LL, 4e6, 8, 8, 1, links);
  std::printf("ring all-reduce 4 MB, ll limited to 50 GB/s, %s: simulated %.3f us, closed form %.3f us "
              "(unlimited %.3f us)\n",
              to_string(fidelity).c_str(), result.makespan * 1e6, expected * 1e6, unlimited * 1e6);
  EXPECT_NEAR(result.makespan, expected, 0.01 * expected);
  EXPECT_GT(result.makespan, 2.0 * unlimited); // 14 x 0.5 MB x 6 / 300 GB/s against x 2: 140 us against 47 us
  for (const RankTimeline& t : result.ranks) EXPECT_EQ(t.bytes_sent, 2u * 4'000'000 * 7 / 8);
  expect_bytes_balance(result);
}

INSTANTIATE_TEST_SUITE_P(OneNode, LlLimit, ::testing::Values(Fidelity::Steps, Fidelity::Flows, Fidelity::Analytic),
                         [](const auto& info) { return to_string(info.param); });

// ---- Fidelity levels against each other, uncontended: three disjoint groups, one per fidelity, at once ----

class Fidelities : public ::testing::TestWithParam<std::tuple<Algo, int>> {};

TEST_P(Fidelities, FlowsAndAnalyticWithin10PercentOfSteps) {
  const auto [algo, gpus_per_node] = GetParam();
  const int nodes_per_group = gpus_per_node == 1 ? 8 : 3;
  const int size = nodes_per_group * gpus_per_node;
  const Scenario scenario = parse(base_scenario(3 * nodes_per_group, gpus_per_node));
  Plan plan = plan_for(3 * size, {iota(0, size), iota(size, size), iota(2 * size, size)});
  const Fidelity levels[] = {Fidelity::Steps, Fidelity::Flows, Fidelity::Analytic};
  for (int g = 0; g < 3; ++g)
    for (int r : plan.groups[static_cast<std::size_t>(g)])
      plan.ranks[static_cast<std::size_t>(r)].own_steps.emplace_back(collective(g, algo.op, algo.algorithm, levels[g]));
  const RunResult result = simulate(scenario, plan);
  const double steps = group_finish(result, plan.groups[0]);
  const double flows = group_finish(result, plan.groups[1]);
  const double analytic = group_finish(result, plan.groups[2]);
  std::printf("%s %d x %d: steps %.6f s, flows %.6f s (%+.2f%%), analytic %.6f s (%+.2f%%)\n", name_of(algo).c_str(),
              nodes_per_group, gpus_per_node, steps, flows, 100 * (flows / steps - 1), analytic,
              100 * (analytic / steps - 1));
  EXPECT_NEAR(flows, steps, 0.10 * steps);
  EXPECT_NEAR(analytic, steps, 0.10 * steps);
  expect_bytes_balance(result);
}

INSTANTIATE_TEST_SUITE_P(
    Uncontended, Fidelities,
    ::testing::Values(std::tuple{kAlgorithms[0], 1}, std::tuple{kAlgorithms[1], 1}, std::tuple{kAlgorithms[3], 1},
                      std::tuple{kAlgorithms[4], 1}, std::tuple{kAlgorithms[5], 1}, std::tuple{kAlgorithms[6], 1},
                      std::tuple{kAlgorithms[0], 4}, std::tuple{kAlgorithms[2], 4}, std::tuple{kAlgorithms[5], 4}),
    [](const auto& info) {
      return name_of(std::get<0>(info.param)) + "_" + std::to_string(std::get<1>(info.param)) + "gpus";
    });

// ---- Contended: two groups whose collectives share NICs, at each fidelity ----

/** 4 nodes x 2 GPUs. Case 0: two ring all-reduces, GPU 0s and GPU 1s of the 4 nodes: every NIC carries both rings.
 * Case 1: the GPU 0 ring over 4 nodes and a 2-rank ring of GPU 1s on nodes 0 and 1 only: half the NICs shared, for
 * part of the time. */
class Contended : public ::testing::TestWithParam<std::tuple<int, Fidelity>> {};

TEST_P(Contended, SharedNicsSlowBothGroups) {
  const auto [scenario_case, fidelity] = GetParam();
  const Scenario scenario = parse(base_scenario(4, 2));
  Plan plan = plan_for(8, {iota(0, 4, 2), scenario_case == 0 ? iota(1, 4, 2) : iota(1, 2, 2)});
  for (int g = 0; g < 2; ++g)
    for (int r : plan.groups[static_cast<std::size_t>(g)])
      plan.ranks[static_cast<std::size_t>(r)].own_steps.emplace_back(
          collective(g, CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, fidelity));
  const RunResult result = simulate(scenario, plan);
  const double a = group_finish(result, plan.groups[0]);
  const double b = group_finish(result, plan.groups[1]);
  const double alone = collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, CollectiveProtocol::Simple,
                                       1e9, 4, 1, 4, TwoLevelCost{kNet, kNet, 1});
  std::printf("case %d %s: group A %.6f s, group B %.6f s (A alone %.6f s)\n", scenario_case,
              to_string(fidelity).c_str(), a, b, alone);
  if (fidelity == Fidelity::Analytic) {
    EXPECT_NEAR(a, alone, 1e-9 * alone) << "analytic ignores contention";
  } else if (scenario_case == 0) {
    // Both rings share every NIC: each gets half its bandwidth.
    const double shared =
        collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, 1e9, 4, {kNet.latency, kNet.bandwidth / 2});
    EXPECT_NEAR(a, shared, 0.05 * shared);
    EXPECT_NEAR(b, shared, 0.05 * shared);
  } else {
    EXPECT_GT(a, 1.05 * alone);
  }
  expect_bytes_balance(result);
}

INSTANTIATE_TEST_SUITE_P(TwoGroups, Contended,
                         ::testing::Combine(::testing::Values(0, 1),
                                            ::testing::Values(Fidelity::Steps, Fidelity::Flows, Fidelity::Analytic)),
                         [](const auto& info) {
                           return "case" + std::to_string(std::get<0>(info.param)) + "_" +
                                  to_string(std::get<1>(info.param));
                         });

// ---- Groups sharing ranks: one collective on the communication stream, another on the program ----

class SharedRanks : public ::testing::TestWithParam<Fidelity> {};

TEST_P(SharedRanks, CollectivesOfDifferentGroupsOverlapWithoutMixingMessages) {
  const Fidelity fidelity = GetParam();
  const Scenario scenario = parse(base_scenario(4, 1));
  // Group 1 is group 0 in reverse ring order, so its messages run the other way round.
  Plan plan = plan_for(4, {{0, 1, 2, 3}, {3, 2, 1, 0}});
  for (auto& rank : plan.ranks) {
    CollectiveStep overlapped = collective(0, CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, fidelity);
    overlapped.stream = 1;
    rank.own_steps.emplace_back(overlapped);
    rank.own_steps.emplace_back(
        collective(1, CollectiveOp::AllReduce, CollectiveAlgorithm::Tree, fidelity, kBytes / 2));
    rank.own_steps.emplace_back(StreamSyncStep{});
    rank.own_steps.emplace_back(
        collective(1, CollectiveOp::AllToAll, CollectiveAlgorithm::Direct, fidelity, kBytes / 4));
  }
  plan.iterations = 2;
  const RunResult result = simulate(scenario, plan);
  expect_bytes_balance(result);
  const double ring = collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, 1e9, 4, kNet);
  EXPECT_GT(result.makespan, 2 * ring);
  EXPECT_LT(result.makespan, 2 * 3 * ring);
  if (fidelity == Fidelity::Steps) {
    std::uint64_t messages = 0;
    for (const auto* timelines : {&result.ranks, &result.streams})
      for (const RankTimeline& t : *timelines) messages += t.messages_sent;
    EXPECT_EQ(messages, result.messages);
    EXPECT_EQ(result.messages,
              2 * (planned_messages(std::get<CollectiveStep>(plan.ranks[0].own_steps[0]), 4, 4, kNet) +
                   planned_messages(std::get<CollectiveStep>(plan.ranks[0].own_steps[1]), 4, 4, kNet) +
                   planned_messages(std::get<CollectiveStep>(plan.ranks[0].own_steps[3]), 4, 4, kNet)));
  }
}

INSTANTIATE_TEST_SUITE_P(Each, SharedRanks, ::testing::Values(Fidelity::Steps, Fidelity::Flows, Fidelity::Analytic),
                         [](const auto& info) { return to_string(info.param); });

// ---- Stream contention: a collective of the communication stream holds SMs the compute beside it lacks ----

class StreamContention : public ::testing::TestWithParam<std::tuple<Fidelity, double>> {};

TEST_P(StreamContention, ComputeBesideAnOverlappedCollectiveRunsAtTheSharedRate) {
  // Two ranks: an all-reduce of 1 GB queued on the communication stream at t = 0, then 0.1 s of compute (1e13 flop at
  // 100 TFLOP/s) beside it, then a wait for the stream. With share s the compute advances at s x its speed until the
  // collective ends at T (its kernel holds its SMs from its launch), then at full speed: it ends at
  // T + (0.1 - s T) = 0.1 + (1 - s) T. Share 1: at 0.1.
  const auto [fidelity, share] = GetParam();
  const Scenario scenario = parse(base_scenario(2, 1));
  Plan plan = plan_for(2, {{0, 1}});
  plan.stream_compute_share = share;
  for (auto& rank : plan.ranks) {
    CollectiveStep overlapped = collective(0, CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, fidelity);
    overlapped.stream = 1;
    rank.own_steps.emplace_back(overlapped);
    rank.own_steps.emplace_back(ComputeStep{1e13, 0});
    rank.own_steps.emplace_back(StreamSyncStep{});
  }
  const RunResult result = simulate(scenario, plan);
  // The collective from t = 0 (both members arrive at once) to its end, on the stream's timeline.
  const double collective_end =
      result.streams[0].total(IntervalKind::Communication) + result.streams[0].total(IntervalKind::Wait);
  ASSERT_GT(collective_end, 0.01);
  ASSERT_LT(collective_end, 0.1);
  for (const RankTimeline& rank : result.ranks)
    EXPECT_NEAR(rank.total(IntervalKind::Compute), 0.1 + (1.0 - share) * collective_end, 1e-6);
  expect_bytes_balance(result);
}

INSTANTIATE_TEST_SUITE_P(Each, StreamContention,
                         ::testing::Combine(::testing::Values(Fidelity::Steps, Fidelity::Flows, Fidelity::Analytic),
                                            ::testing::Values(1.0, 0.5)),
                         [](const auto& info) {
                           return to_string(std::get<0>(info.param)) +
                                  (std::get<1>(info.param) < 1.0 ? "_half" : "_whole");
                         });

TEST_P(StreamContention, ComputeBesideAContendedBlockingCollectiveRunsAtTheSharedRateWhileItRuns) {
  // Two ranks: 1 s of compute (1e14 flop at 100 TFLOP/s) started beside a blocking all-reduce of 1 GB whose kernel
  // takes SMs from it (ComputeStep::contended, Megatron's asynchronous tensor-parallel backward). The collective takes
  // T (its recorded time); the compute advances at s x its speed until then, at full speed after: it ends at 1 + (1 -
  // s) T, and the collective is hidden. Share 1: at 1.
  const auto [fidelity, share] = GetParam();
  const Scenario scenario = parse(base_scenario(2, 1));
  Plan plan = plan_for(2, {{0, 1}});
  plan.stream_compute_share = share;
  for (auto& rank : plan.ranks) {
    rank.own_steps.emplace_back(ComputeStep{1e14, 0, 0, true, true});
    rank.own_steps.emplace_back(collective(0, CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, fidelity));
  }
  const RunResult result = simulate(scenario, plan);
  ASSERT_EQ(result.collectives.size(), 1U);
  const double collective = result.collectives[0].total_time / static_cast<double>(result.collectives[0].count);
  ASSERT_GT(collective, 0.01);
  ASSERT_LT(collective, share);
  const double end = 1.0 + (1.0 - share) * collective;
  EXPECT_GE(result.executions_as_sleeps, 1U); // alone on their GPUs: the lean engine's sleeps, the share folded in
  EXPECT_NEAR(result.makespan, end, 1e-6);
  for (const RankTimeline& rank : result.ranks) {
    EXPECT_NEAR(rank.total(IntervalKind::Compute), end, 1e-6);
    EXPECT_NEAR(rank.total(IntervalKind::Communication), 0.0, 1e-9);
    EXPECT_NEAR(rank.hidden, collective, 1e-6);
  }
  expect_bytes_balance(result);
}

TEST(StreamContentionExecutions, AContendedComputeAsAnExecutionEndsAsTheFoldedSleepDoes) {
  // The same run with every compute a SimGrid execution (lean engine off): the GPU's power state at share 0.5 while
  // the collective runs, full speed after; the compute ends at 1 + (1 - 0.5) T as the lean engine's sleep does.
  nlohmann::json doc = base_scenario(2, 1);
  doc["run"]["lean_engine"] = false;
  const Scenario scenario = parse(doc);
  Plan plan = plan_for(2, {{0, 1}});
  plan.stream_compute_share = 0.5;
  for (auto& rank : plan.ranks) {
    rank.own_steps.emplace_back(ComputeStep{1e14, 0, 0, true, true});
    rank.own_steps.emplace_back(collective(0, CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, Fidelity::Steps));
  }
  const RunResult result = simulate(scenario, plan);
  ASSERT_EQ(result.collectives.size(), 1U);
  const double collective = result.collectives[0].total_time / static_cast<double>(result.collectives[0].count);
  ASSERT_GT(collective, 0.01);
  EXPECT_EQ(result.executions_as_sleeps, 0U);
  EXPECT_NEAR(result.makespan, 1.0 + 0.5 * collective, 1e-6);
  for (const RankTimeline& rank : result.ranks) EXPECT_NEAR(rank.hidden, collective, 1e-6);
}

// ---- Wait versus communication ----

TEST(Collectives, LateMemberMakesTheOthersWait) {
  const Scenario scenario = parse(base_scenario(4, 1));
  Plan plan = plan_for(4, {{0, 1, 2, 3}});
  for (int r = 0; r < 4; ++r) {
    // Rank 3 computes 1 ms (1e11 flop at 100 TFLOP/s) before the all-reduce; the others go straight in.
    if (r == 3) plan.ranks[3].own_steps.emplace_back(ComputeStep{1e11, 0});
    plan.ranks[static_cast<std::size_t>(r)].own_steps.emplace_back(
        collective(0, CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, Fidelity::Flows));
  }
  const RunResult result = simulate(scenario, plan);
  // The closed form with the plan's protocol (Simple): its latency on top of the alpha-beta form.
  const double ring = collective_time(CollectiveOp::AllReduce, CollectiveAlgorithm::Ring, CollectiveProtocol::Simple,
                                      1e9, 4, 1, 4, TwoLevelCost{kNet, kNet, 1});
  EXPECT_NEAR(result.makespan, 1e-3 + ring, 1e-9);
  EXPECT_NEAR(result.ranks[0].total(IntervalKind::Wait), 1e-3, 1e-9);
  EXPECT_NEAR(result.ranks[0].total(IntervalKind::Communication), ring, 1e-9);
  EXPECT_NEAR(result.ranks[3].total(IntervalKind::Wait), 0.0, 1e-12);
  EXPECT_EQ(result.messages, 4u);
}

} // namespace
} // namespace partsim::test
