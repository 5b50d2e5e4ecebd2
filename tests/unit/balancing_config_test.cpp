// Scenario validation of run-time balancing, speed changes and by_speed shares.
#include "test_support.hpp"

#include "partsim/common/error.hpp"
#include "partsim/plan/strategy.hpp"

#include <gtest/gtest.h>

namespace partsim::test {
namespace {

InputError error_of(const nlohmann::json& doc) {
  return input_error([&] { build_plan(parse(doc)); });
}

TEST(BalancingConfig, ParsesPolicyAndQuantities) {
  auto doc = base_scenario(4, 1);
  doc["strategy"]["balancing"] = {
      {"policy", "measured_rate"}, {"chunk_samples", 50}, {"dispatch_overhead", "2ms"}, {"sample_bytes", "1kB"}};
  const Scenario s = parse(doc);
  const auto& b = std::get<DataParallel>(s.strategy).balancing;
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->policy, BalancingPolicy::MeasuredRate);
  EXPECT_EQ(b->chunk_samples, 50U);
  EXPECT_DOUBLE_EQ(b->dispatch_overhead, 2e-3);
  EXPECT_DOUBLE_EQ(b->sample_bytes, 1e3);
  EXPECT_DOUBLE_EQ(b->request_bytes, 64.0);
  const Plan plan = build_plan(s);
  ASSERT_NE(plan.dynamic(), nullptr);
  EXPECT_EQ(plan.dynamic()->static_samples, (std::vector<std::uint64_t>{250, 250, 250, 250}));
  EXPECT_DOUBLE_EQ(plan.dynamic()->amount_per_sample, 1e9);
  EXPECT_DOUBLE_EQ(plan.dynamic()->nominal_rate[0], 100e12 / 1e9);
}

TEST(BalancingConfig, UnknownPolicy) {
  auto doc = base_scenario(4, 1);
  doc["strategy"]["balancing"] = {{"policy", "round_robin"}};
  const InputError e = error_of(doc);
  EXPECT_EQ(e.pointer(), "/strategy/balancing/policy");
  EXPECT_NE(e.detail().find("work_stealing"), std::string::npos);
}

TEST(BalancingConfig, TrainingIsRefused) {
  auto doc = base_scenario(4, 1);
  doc["workload"]["gradient_bytes"] = "1GB";
  doc["strategy"]["balancing"] = {{"policy", "work_queue"}};
  EXPECT_EQ(error_of(doc).pointer(), "/strategy/balancing");
}

TEST(BalancingConfig, NeedsANetwork) {
  auto doc = base_scenario(1, 4);
  doc["cluster"].erase("network");
  doc["strategy"]["balancing"] = {{"policy", "work_queue"}};
  EXPECT_EQ(error_of(doc).pointer(), "/cluster/network");
}

TEST(BalancingConfig, ZeroChunkAndUnknownKey) {
  auto doc = base_scenario(4, 1);
  doc["strategy"]["balancing"] = {{"policy", "work_queue"}, {"chunk_samples", 0}};
  EXPECT_EQ(error_of(doc).pointer(), "/strategy/balancing/chunk_samples");
  doc["strategy"]["balancing"] = {{"policy", "work_queue"}, {"chunk", 10}};
  EXPECT_EQ(error_of(doc).pointer(), "/strategy/balancing/chunk");
}

TEST(SpeedChangesConfig, ParsesPointsAndPeriod) {
  auto doc = base_scenario(4, 1);
  doc["cluster"]["speed_changes"] =
      nlohmann::json::parse(R"([{"node": 2, "points": [["0s", 1], ["10s", 0.333]], "period": "1min"}])");
  EXPECT_EQ(error_of(doc).pointer(), "/cluster/speed_changes/0/period") << "no minutes unit";
  doc["cluster"]["speed_changes"][0]["period"] = "60s";
  const Scenario s = parse(doc);
  ASSERT_EQ(s.cluster.speed_changes.size(), 1U);
  EXPECT_EQ(s.cluster.speed_changes[0].node, 2);
  EXPECT_DOUBLE_EQ(s.cluster.speed_changes[0].points[1].first, 10.0);
  EXPECT_DOUBLE_EQ(s.cluster.speed_changes[0].points[1].second, 0.333);
  EXPECT_DOUBLE_EQ(s.cluster.speed_changes[0].period, 60.0);
}

TEST(SpeedChangesConfig, BadInputs) {
  auto doc = base_scenario(4, 1);
  doc["cluster"]["speed_changes"] = nlohmann::json::parse(R"([{"node": 4, "points": [["0s", 1]]}])");
  EXPECT_EQ(error_of(doc).pointer(), "/cluster/speed_changes/0/node");
  doc["cluster"]["speed_changes"] = nlohmann::json::parse(R"([{"node": 0, "points": [["1s", 1]]}])");
  EXPECT_EQ(error_of(doc).pointer(), "/cluster/speed_changes/0/points/0/0") << "must start at 0";
  doc["cluster"]["speed_changes"] = nlohmann::json::parse(R"([{"node": 0, "points": [["0s", 1], ["0s", 2]]}])");
  EXPECT_EQ(error_of(doc).pointer(), "/cluster/speed_changes/0/points/1/0") << "times must increase";
  doc["cluster"]["speed_changes"] = nlohmann::json::parse(R"([{"node": 0, "points": [["0s", -1]]}])");
  EXPECT_EQ(error_of(doc).pointer(), "/cluster/speed_changes/0/points/0/1");
  doc["cluster"]["speed_changes"] = nlohmann::json::parse(R"([{"node": 0, "points": [["0s", 1], ["5s", 0.5]],
                                                               "period": "5s"}])");
  EXPECT_EQ(error_of(doc).pointer(), "/cluster/speed_changes/0/period") << "period must exceed the last point";
  doc["cluster"]["speed_changes"] = nlohmann::json::parse(R"([{"node": 0, "points": [["0s", 1]]},
                                                              {"node": 0, "points": [["0s", 2]]}])");
  EXPECT_EQ(error_of(doc).pointer(), "/cluster/speed_changes/1/node") << "one profile per node";
}

TEST(SharesConfig, BySpeedFollowsNominalSpeedFactors) {
  auto doc = base_scenario(3, 1);
  doc["cluster"]["node_speed_factors"] = {1.0, 2.0, 1.0};
  doc["strategy"]["shares"] = "by_speed";
  const Scenario s = parse(doc);
  const auto& shares = std::get<DataParallel>(s.strategy).shares;
  ASSERT_EQ(shares.size(), 3U);
  EXPECT_DOUBLE_EQ(shares[0], 0.25);
  EXPECT_DOUBLE_EQ(shares[1], 0.5);
  EXPECT_DOUBLE_EQ(shares[2], 0.25);
}

TEST(ClassSplitConfig, NeedsLabels) {
  auto doc = base_scenario(4, 1);
  doc["strategy"]["class_split"] = {{"method", "stratified"}};
  EXPECT_EQ(error_of(doc).pointer(), "/strategy/class_split");
}

TEST(ClassSplitConfig, UnknownMethodAndMinorityClass) {
  auto doc = base_scenario(4, 1);
  doc["workload"]["labels"] = {{"generate", {{"positive_rate", 0.1}}}};
  doc["strategy"]["class_split"] = {{"method", "kmeans"}};
  EXPECT_EQ(error_of(doc).pointer(), "/strategy/class_split/method");
  doc["strategy"]["class_split"] = {{"method", "stratified"}, {"minority_class", "fraud"}};
  const InputError e = error_of(doc);
  EXPECT_EQ(e.pointer(), "/strategy/class_split/minority_class");
  EXPECT_NE(e.detail().find("0, 1"), std::string::npos) << e.detail();
}

TEST(ClassSplitConfig, SharesMustBeBalanced) {
  auto doc = base_scenario(4, 1);
  doc["workload"]["labels"] = {{"generate", {{"positive_rate", 0.1}}}};
  doc["strategy"]["shares"] = {{"skewed", 0.5}};
  doc["strategy"]["class_split"] = {{"method", "stratified"}};
  EXPECT_EQ(error_of(doc).pointer(), "/strategy/shares");
}

TEST(ClassSplitConfig, LabelSourceErrors) {
  auto doc = base_scenario(4, 1);
  doc["workload"]["labels"] = {{"generate", {{"positive_rate", 1.5}}}};
  EXPECT_EQ(error_of(doc).pointer(), "/workload/labels/generate/positive_rate");
  doc["workload"]["labels"] = {{"file", "x.csv"}};
  EXPECT_EQ(error_of(doc).pointer(), "/workload/labels");
  doc["workload"]["labels"] = {{"csv", "/nonexistent/labels.csv"}, {"column", "y"}};
  const InputError missing = error_of(doc);
  EXPECT_EQ(missing.pointer(), "/workload/labels/csv");
  EXPECT_NE(missing.detail().find("/nonexistent/labels.csv"), std::string::npos) << missing.detail();
  doc["workload"].erase("samples");
  doc["workload"]["labels"] = {{"generate", {{"positive_rate", 0.1}}}};
  EXPECT_EQ(error_of(doc).pointer(), "/workload/samples") << "generated labels need a count";
}

TEST(SpeedChangesConfig, AFactorOfZeroIsRefused) {
  auto doc = base_scenario(2, 1);
  doc["cluster"]["speed_changes"] =
      nlohmann::json::parse(R"([{"node": 1, "points": [["0s", 1], ["1s", 0]], "period": "2s"}])");
  const InputError e = error_of(doc);
  EXPECT_EQ(e.pointer(), "/cluster/speed_changes/0/points/1/1");
  EXPECT_NE(e.detail().find(">= 1e-06"), std::string::npos) << e.detail();
  doc["cluster"]["speed_changes"][0]["points"][1][1] = 1e-7; // below a millionth: durations past what SimGrid runs
  EXPECT_THROW(parse(doc), InputError);
  doc["cluster"]["speed_changes"][0]["points"][1][1] = 1e-6; // a stalled node is a small factor
  EXPECT_NO_THROW(build_plan(parse(doc)));
}

TEST(BalancingConfig, ByteCountsBeyondRangeAreRefused) {
  auto doc = base_scenario(4, 1);
  doc["workload"]["samples"] = 1000000000000LL;
  doc["strategy"]["balancing"] = {{"policy", "work_queue"}, {"sample_bytes", "1GB"}, {"chunk_samples", 1000000}};
  EXPECT_EQ(error_of(doc).pointer(), "/strategy/balancing/sample_bytes");
  auto coordinated = base_scenario(1, 1);
  coordinated["strategy"]["partitions"] = 100000;
  coordinated["strategy"]["coordination"] = {{"result_bytes", 1e15}};
  EXPECT_EQ(error_of(coordinated).pointer(), "/strategy/coordination/result_bytes");
}

TEST(BalancingConfig, StaticAndMeasuredRateAreNotCountedPerSample) {
  auto doc = base_scenario(4, 1);
  doc["workload"]["samples"] = 1000000000;
  for (const char* policy : {"static", "measured_rate"}) {
    doc["strategy"]["balancing"] = {{"policy", policy}};
    const Plan plan = build_plan(parse(doc));
    EXPECT_LT(plan.planned_executions, 1000U) << policy << ": chunk_samples 1 does not mean 1e9 chunks";
  }
  doc["strategy"]["balancing"] = {{"policy", "work_queue"}};
  EXPECT_EQ(error_of(doc).pointer(), "/run/max_events") << "1e9 one-sample chunks";
}

TEST(ClassSplitConfig, NoMorePartitionsThanSamples) {
  auto doc = base_scenario(4, 1);
  doc["workload"]["samples"] = 10;
  doc["workload"]["labels"] = {{"generate", {{"positive_rate", 0.1}}}};
  doc["strategy"]["partitions"] = 11;
  doc["strategy"]["class_split"] = {{"method", "stratified"}};
  EXPECT_EQ(error_of(doc).pointer(), "/strategy/partitions");
}

TEST(LinkProfileInScenario, NamedProfilesGiveBandwidthAndLatency) {
  auto doc = base_scenario(2, 8);
  doc["cluster"]["intra_node_link"] = {{"profile", "nvlink4"}};
  doc["cluster"]["network"] = {{"topology", "star"}, {"profile", "ib-ndr"}, {"latency", "3us"}};
  const Scenario s = parse(doc);
  EXPECT_DOUBLE_EQ(s.cluster.intra_node.line_rate, 450e9);
  EXPECT_DOUBLE_EQ(s.cluster.intra_node.efficiency, 0.8) << "NVLink's 128-byte payloads (the profile's figure)";
  EXPECT_DOUBLE_EQ(s.cluster.intra_node.bandwidth, 360e9);
  EXPECT_DOUBLE_EQ(s.cluster.network.nic.line_rate, 50e9);
  EXPECT_DOUBLE_EQ(s.cluster.network.nic.bandwidth, 48.5e9) << "NDR's efficiency 0.97";
  EXPECT_DOUBLE_EQ(s.cluster.network.nic.latency, 3e-6) << "explicit keys override the profile";
}

TEST(LinkProfileInScenario, WrongScopeOrAggregateOrUnknownIsRefused) {
  auto doc = base_scenario(2, 8);
  doc["cluster"]["network"] = {{"profile", "nvlink4"}};
  EXPECT_EQ(error_of(doc).pointer(), "/cluster/network/profile");
  doc["cluster"]["network"] = {{"profile", "ib-ndr"}};
  doc["cluster"]["intra_node_link"] = {{"profile", "nvswitch-gen3"}};
  EXPECT_EQ(error_of(doc).pointer(), "/cluster/intra_node_link/profile");
  doc["cluster"]["intra_node_link"] = {{"profile", "nvlink9"}};
  const InputError e = error_of(doc);
  EXPECT_EQ(e.pointer(), "/cluster/intra_node_link/profile");
  EXPECT_NE(e.detail().find("nvlink4"), std::string::npos) << "lists the shipped profiles: " << e.detail();
}

} // namespace
} // namespace partsim::test
