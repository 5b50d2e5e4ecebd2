// /cluster/network parsing: topologies (star, fat_tree, rail), NICs per node, and one bad-input test per rule, each
// naming the JSON pointer of the mistake.
#include "partsim/common/error.hpp"
#include "partsim/input/scenario.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>

#include <string>

namespace partsim {
namespace {

using nlohmann::json;
using test::base_scenario;
using test::input_error;

/** base_scenario(nodes, gpus_per_node) with /cluster/network replaced by `network` plus the base NIC figures. */
json with_network(json network, int nodes = 8, int gpus_per_node = 8) {
  json doc = base_scenario(nodes, gpus_per_node);
  if (!network.contains("profile")) {
    network["bandwidth"] = "25GBps";
    network["latency"] = "2us";
  }
  doc["cluster"]["network"] = network;
  doc["workload"]["samples"] = nodes * gpus_per_node;
  return doc;
}

NetworkSpec network_of(const json& doc) {
  return test::parse(doc).cluster.network;
}

::testing::AssertionResult contains(const std::string& text, const std::string& fragment) {
  if (text.find(fragment) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << fragment << "\"";
}

/** The InputError of parsing `doc`, checked to name test.json and `pointer`. */
InputError error_at(const json& doc, const std::string& pointer) {
  const InputError e = input_error([&] { test::parse(doc); });
  EXPECT_EQ(e.source(), "test.json");
  EXPECT_EQ(e.pointer(), pointer) << e.what();
  return e;
}

// --- valid networks ----------------------------------------------------------------------------------------------

TEST(NetworkSpec, StarDefaultsToOneSharedNic) {
  const NetworkSpec n = network_of(with_network({{"topology", "star"}}));
  EXPECT_EQ(n.topology, "star");
  EXPECT_EQ(n.nics_per_node, 1);
  EXPECT_DOUBLE_EQ(n.nic.bandwidth, 25e9);
  EXPECT_DOUBLE_EQ(n.nic.latency, 2e-6);
  for (int gpu = 0; gpu < 8; ++gpu) EXPECT_EQ(n.nic_of(gpu, 8), 0);
}

TEST(NetworkSpec, NicsPerNodeMapGpusToNicsInBlocks) {
  const NetworkSpec n = network_of(with_network({{"nics_per_node", 4}}));
  EXPECT_EQ(n.nics_per_node, 4);
  const int expected[] = {0, 0, 1, 1, 2, 2, 3, 3};
  for (int gpu = 0; gpu < 8; ++gpu) EXPECT_EQ(n.nic_of(gpu, 8), expected[gpu]) << gpu;
}

TEST(NetworkSpec, TwoLevelFatTree) {
  const NetworkSpec n = network_of(with_network(
      {{"topology", "fat_tree"},
       {"profile", "ib-ndr"},
       {"nics_per_node", 8},
       {"fat_tree",
        {{"levels", 2}, {"nodes_per_leaf", 3}, {"leaf_oversubscription", 2.5}, {"switch_latency", "0.3us"}}}}));
  EXPECT_EQ(n.topology, "fat_tree");
  EXPECT_DOUBLE_EQ(n.nic.line_rate, 50e9);   // 400 Gb/s
  EXPECT_DOUBLE_EQ(n.nic.bandwidth, 48.5e9); // what NCCL reaches per NDR port (the profile's efficiency 0.97)
  EXPECT_EQ(n.nics_per_node, 8);
  EXPECT_EQ(n.fat_tree.levels, 2);
  EXPECT_EQ(n.fat_tree.nodes_per_leaf, 3);
  EXPECT_DOUBLE_EQ(n.fat_tree.leaf_oversubscription, 2.5);
  EXPECT_DOUBLE_EQ(n.fat_tree.switch_latency, 0.3e-6);
  // 8 nodes on leaves of 3: the last leaf holds nodes 6 and 7 only.
  EXPECT_EQ(n.leaf_of(0), 0);
  EXPECT_EQ(n.leaf_of(5), 1);
  EXPECT_EQ(n.leaf_of(7), 2);
}

TEST(NetworkSpec, SwitchLatencyComesFromTheNicProfilesSwitch) {
  // Without switch_latency or switch_profile, a fat-tree or rail network of profiled NICs adds the latency of the
  // profile's switch per switch crossed: Quantum HDR's published sub-130 ns, the assumed 0.2 us of Quantum-2, the
  // 300 ns of a Spectrum-2 Ethernet switch.
  const json tree = {{"levels", 2}, {"nodes_per_leaf", 2}, {"leaf_oversubscription", 1}};
  const auto latency_of = [&](const char* profile) {
    return network_of(with_network({{"topology", "fat_tree"}, {"profile", profile}, {"fat_tree", tree}}))
        .fat_tree.switch_latency;
  };
  EXPECT_DOUBLE_EQ(latency_of("ib-hdr"), 0.13e-6);
  EXPECT_DOUBLE_EQ(latency_of("ib-ndr"), 0.2e-6);
  EXPECT_DOUBLE_EQ(latency_of("ib-xdr"), 0.2e-6);
  EXPECT_DOUBLE_EQ(latency_of("roce-400g"), 0.3e-6);
  const NetworkSpec rail = network_of(with_network({{"topology", "rail"}, {"profile", "ib-hdr"}}));
  EXPECT_DOUBLE_EQ(rail.rail.switch_latency, 0.13e-6);
  // An explicit figure or switch profile wins; links given by hand have no switch.
  json own = tree;
  own["switch_profile"] = "ib-ndr-switch";
  EXPECT_DOUBLE_EQ(network_of(with_network({{"topology", "fat_tree"}, {"profile", "ib-hdr"}, {"fat_tree", own}}))
                       .fat_tree.switch_latency,
                   0.2e-6);
  EXPECT_DOUBLE_EQ(network_of(with_network({{"topology", "fat_tree"}, {"fat_tree", tree}})).fat_tree.switch_latency,
                   0.0);
}

TEST(NetworkSpec, ThreeLevelFatTreeGroupsLeavesInPods) {
  const NetworkSpec n = network_of(with_network({{"topology", "fat_tree"},
                                                 {"fat_tree",
                                                  {{"levels", 3},
                                                   {"nodes_per_leaf", 2},
                                                   {"leaves_per_pod", 2},
                                                   {"leaf_oversubscription", 1},
                                                   {"pod_oversubscription", 4}}}}));
  EXPECT_EQ(n.fat_tree.levels, 3);
  EXPECT_EQ(n.fat_tree.leaves_per_pod, 2);
  EXPECT_DOUBLE_EQ(n.fat_tree.pod_oversubscription, 4.0);
  EXPECT_DOUBLE_EQ(n.fat_tree.switch_latency, 0.0); // the NIC latency covers one switch
  EXPECT_EQ(n.pod_of(3), 0);
  EXPECT_EQ(n.pod_of(4), 1);
  EXPECT_EQ(n.pod_of(7), 1);
}

TEST(NetworkSpec, SwitchLatencyFromASwitchProfile) {
  const NetworkSpec n = network_of(with_network(
      {{"topology", "fat_tree"}, {"fat_tree", {{"nodes_per_leaf", 4}, {"switch_profile", "ib-ndr-switch"}}}}));
  EXPECT_DOUBLE_EQ(n.fat_tree.switch_latency, 0.2e-6);
  const NetworkSpec overridden = network_of(with_network(
      {{"topology", "rail"}, {"rail", {{"switch_profile", "ib-ndr-switch"}, {"switch_latency", "0.1us"}}}}));
  EXPECT_DOUBLE_EQ(overridden.rail.switch_latency, 0.1e-6);
}

TEST(NetworkSpec, RailDefaultsToOneNicPerGpu) {
  const NetworkSpec n = network_of(with_network({{"topology", "rail"}, {"rail", {{"spine_oversubscription", 4}}}}));
  EXPECT_EQ(n.topology, "rail");
  EXPECT_EQ(n.nics_per_node, 8);
  EXPECT_DOUBLE_EQ(n.rail.spine_oversubscription, 4.0);
  for (int gpu = 0; gpu < 8; ++gpu) EXPECT_EQ(n.nic_of(gpu, 8), gpu);
}

TEST(NetworkSpec, RailObjectIsOptional) {
  const NetworkSpec n = network_of(with_network({{"topology", "rail"}}));
  EXPECT_DOUBLE_EQ(n.rail.spine_oversubscription, 1.0);
}

// --- bad input: one test per rule ----------------------------------------------------------------------------------

TEST(NetworkSpecErrors, UnknownTopology) {
  const InputError e = error_at(with_network({{"topology", "dragonfly"}}), "/cluster/network/topology");
  EXPECT_TRUE(contains(e.detail(), "expected one of star, fat_tree, rail"));
}

TEST(NetworkSpecErrors, FatTreeNeedsItsObject) {
  const InputError e = error_at(with_network({{"topology", "fat_tree"}}), "/cluster/network/fat_tree");
  EXPECT_TRUE(contains(e.detail(), "required key is missing"));
}

TEST(NetworkSpecErrors, FatTreeNeedsNodesPerLeaf) {
  const InputError e = error_at(with_network({{"topology", "fat_tree"}, {"fat_tree", {{"levels", 2}}}}),
                                "/cluster/network/fat_tree/nodes_per_leaf");
  EXPECT_TRUE(contains(e.detail(), "required key is missing"));
}

TEST(NetworkSpecErrors, NodesPerLeafAtLeastOne) {
  const InputError e = error_at(with_network({{"topology", "fat_tree"}, {"fat_tree", {{"nodes_per_leaf", 0}}}}),
                                "/cluster/network/fat_tree/nodes_per_leaf");
  EXPECT_TRUE(contains(e.detail(), "1"));
}

TEST(NetworkSpecErrors, FatTreeLevelsTwoOrThree) {
  error_at(with_network({{"topology", "fat_tree"}, {"fat_tree", {{"levels", 4}, {"nodes_per_leaf", 2}}}}),
           "/cluster/network/fat_tree/levels");
  error_at(with_network({{"topology", "fat_tree"}, {"fat_tree", {{"levels", 1}, {"nodes_per_leaf", 2}}}}),
           "/cluster/network/fat_tree/levels");
}

TEST(NetworkSpecErrors, LeafOversubscriptionAtLeastOne) {
  const InputError e = error_at(
      with_network({{"topology", "fat_tree"}, {"fat_tree", {{"nodes_per_leaf", 2}, {"leaf_oversubscription", 0.5}}}}),
      "/cluster/network/fat_tree/leaf_oversubscription");
  EXPECT_TRUE(contains(e.detail(), "1"));
}

TEST(NetworkSpecErrors, ThreeLevelsNeedLeavesPerPod) {
  const InputError e =
      error_at(with_network({{"topology", "fat_tree"}, {"fat_tree", {{"levels", 3}, {"nodes_per_leaf", 2}}}}),
               "/cluster/network/fat_tree/leaves_per_pod");
  EXPECT_TRUE(contains(e.detail(), "required key is missing"));
}

TEST(NetworkSpecErrors, PodOversubscriptionAtLeastOne) {
  error_at(with_network({{"topology", "fat_tree"},
                         {"fat_tree",
                          {{"levels", 3}, {"nodes_per_leaf", 2}, {"leaves_per_pod", 2}, {"pod_oversubscription", 0}}}}),
           "/cluster/network/fat_tree/pod_oversubscription");
}

TEST(NetworkSpecErrors, PodsOnlyWithThreeLevels) {
  const InputError e =
      error_at(with_network({{"topology", "fat_tree"}, {"fat_tree", {{"nodes_per_leaf", 2}, {"leaves_per_pod", 2}}}}),
               "/cluster/network/fat_tree/leaves_per_pod");
  EXPECT_TRUE(contains(e.detail(), "3-level"));
  error_at(with_network({{"topology", "fat_tree"},
                         {"fat_tree", {{"levels", 2}, {"nodes_per_leaf", 2}, {"pod_oversubscription", 2}}}}),
           "/cluster/network/fat_tree/pod_oversubscription");
}

TEST(NetworkSpecErrors, UnknownKeyInFatTree) {
  const InputError e =
      error_at(with_network({{"topology", "fat_tree"}, {"fat_tree", {{"nodes_per_leaf", 2}, {"oversubscription", 2}}}}),
               "/cluster/network/fat_tree/oversubscription");
  EXPECT_TRUE(contains(e.detail(), "unknown key"));
  EXPECT_TRUE(contains(e.detail(), "leaf_oversubscription"));
}

TEST(NetworkSpecErrors, SwitchLatencyNotNegative) {
  error_at(with_network({{"topology", "fat_tree"}, {"fat_tree", {{"nodes_per_leaf", 2}, {"switch_latency", -1e-6}}}}),
           "/cluster/network/fat_tree/switch_latency");
}

TEST(NetworkSpecErrors, SwitchProfileMustBeASwitch) {
  const InputError e = error_at(
      with_network({{"topology", "fat_tree"}, {"fat_tree", {{"nodes_per_leaf", 2}, {"switch_profile", "ib-ndr"}}}}),
      "/cluster/network/fat_tree/switch_profile");
  EXPECT_TRUE(contains(e.detail(), "switch profile"));
}

TEST(NetworkSpecErrors, SwitchProfileMustExist) {
  const InputError e = error_at(with_network({{"topology", "rail"}, {"rail", {{"switch_profile", "quantum9"}}}}),
                                "/cluster/network/rail/switch_profile");
  EXPECT_TRUE(contains(e.detail(), "unknown link profile"));
}

TEST(NetworkSpecErrors, SpineOversubscriptionAtLeastOne) {
  error_at(with_network({{"topology", "rail"}, {"rail", {{"spine_oversubscription", 0.9}}}}),
           "/cluster/network/rail/spine_oversubscription");
}

TEST(NetworkSpecErrors, RailNeedsANicPerGpu) {
  const InputError e =
      error_at(with_network({{"topology", "rail"}, {"nics_per_node", 1}}), "/cluster/network/nics_per_node");
  EXPECT_TRUE(contains(e.detail(), "nics_per_node = gpus_per_node (8)"));
}

TEST(NetworkSpecErrors, NicsPerNodeDivideGpusPerNode) {
  const InputError e = error_at(with_network({{"nics_per_node", 3}}), "/cluster/network/nics_per_node");
  EXPECT_TRUE(contains(e.detail(), "divisor of gpus_per_node (8)"));
}

TEST(NetworkSpecErrors, NicsPerNodeAtMostGpusPerNode) {
  error_at(with_network({{"nics_per_node", 16}}), "/cluster/network/nics_per_node");
  error_at(with_network({{"nics_per_node", 0}}), "/cluster/network/nics_per_node");
}

TEST(NetworkSpecErrors, TopologyObjectOfAnotherTopology) {
  const InputError e = error_at(with_network({{"topology", "star"}, {"fat_tree", {{"nodes_per_leaf", 2}}}}),
                                "/cluster/network/fat_tree");
  EXPECT_TRUE(contains(e.detail(), "topology is \"star\""));
  error_at(with_network({{"topology", "fat_tree"}, {"fat_tree", {{"nodes_per_leaf", 2}}}, {"rail", json::object()}}),
           "/cluster/network/rail");
}

} // namespace
} // namespace partsim
