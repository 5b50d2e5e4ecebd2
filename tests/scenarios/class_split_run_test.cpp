// Class-aware splitting in whole runs (seed situation 4): preprocessing on the coordinator, oversampled partitions
// training longer, labels from a CSV file next to the scenario. One simulation per TEST (one process each).
#include "test_support.hpp"

#include "partsim/plan/strategy.hpp"

#include <gtest/gtest.h>

#include <fstream>

namespace partsim::test {
namespace {

constexpr double kPeak = 100e12;  // base_scenario(): inline GPU, flop/s
constexpr double kLatency = 2e-6; // network latency, s

nlohmann::json labelled(const std::string& method) {
  auto doc = base_scenario(4, 1);
  doc["workload"]["samples"] = 4000;
  doc["workload"]["labels"] = {{"generate", {{"positive_rate", 0.01}, {"seed", 3}}}};
  doc["strategy"]["class_split"] = {{"method", method},
                                    {"starved_threshold", 5},
                                    {"oversample_target", 20},
                                    {"scan_per_sample", "1ms"},
                                    {"replicate_per_sample", "10ms"}};
  return doc;
}

TEST(ClassSplitRun, StratifiedOversamplePaysScanAndReplicasThenTrainsOnTheLargerPartitions) {
  const Outcome o = simulate_document(labelled("stratified_oversample"));
  ASSERT_TRUE(o.report.class_split.has_value());
  const ClassSplit& split = *o.report.class_split;
  EXPECT_EQ(split.starved_partitions, 0);
  std::uint64_t replicas = 0;
  std::uint64_t largest = 0;
  for (const PartitionClasses& p : split.partitions) {
    EXPECT_EQ(p.per_class[split.minority_class], 20U) << "brought up to the target";
    replicas += p.replicas;
    largest = std::max(largest, p.size);
  }
  EXPECT_EQ(replicas, split.work.samples_replicated);
  const double setup = 4000 * 1e-3 + static_cast<double>(replicas) * 10e-3;
  EXPECT_NEAR(o.report.coordinator_setup, setup, 1e-9);
  // Preprocessing, the start message, the largest partition's compute, the result message.
  const double expected = setup + kLatency + static_cast<double>(largest) * 1e9 / kPeak + kLatency;
  EXPECT_NEAR(o.report.makespan, expected, 1e-9);
  EXPECT_NEAR(o.report.oversampling_compute, static_cast<double>(replicas) * 1e9 / kPeak, 1e-12);
  for (const RankMetrics& m : o.report.ranks)
    EXPECT_NEAR(m.busy() + m.idle(), o.report.makespan, 1e-9 * o.report.makespan);
}

TEST(ClassSplitRun, RandomSplitNeedsNoPassOverTheLabels) {
  const Outcome o = simulate_document(labelled("random"));
  ASSERT_TRUE(o.report.class_split.has_value());
  EXPECT_EQ(o.report.coordinator_setup, 0.0);
  EXPECT_EQ(o.report.class_split->work.samples_replicated, 0U);
  std::uint64_t total = 0;
  for (const RankMetrics& m : o.report.ranks) total += m.samples;
  EXPECT_EQ(total, 4000U);
}

TEST(ClassSplitRun, LabelsFromACsvBesideTheScenario) {
  const auto dir = temp_dir();
  {
    std::ofstream csv(dir / "labels.csv");
    csv << "id,amount,is_fraud\n";
    for (int i = 0; i < 1000; ++i) csv << i << "," << i * 1.5 << "," << (i % 50 == 0 ? "yes" : "no") << "\n";
  }
  auto doc = base_scenario(4, 1);
  doc["workload"].erase("samples");
  doc["workload"]["labels"] = {{"csv", "labels.csv"}, {"column", "is_fraud"}};
  doc["strategy"]["class_split"] = {{"method", "stratified"}, {"minority_class", "yes"}};
  std::ofstream(dir / "scenario.json") << doc.dump();
  const Scenario scenario = load_scenario(dir / "scenario.json", {}, source_dir());
  const Plan plan = build_plan(scenario);
  const RunResult result = simulate(scenario, plan);
  const Report report = make_report(scenario, plan, result);
  ASSERT_TRUE(report.class_split.has_value());
  EXPECT_EQ(std::get<DataJob>(scenario.workload).samples, 1000U);
  for (const PartitionClasses& p : report.class_split->partitions) {
    EXPECT_EQ(p.per_class[report.class_split->minority_class], 5U) << "20 frauds dealt evenly over 4 partitions";
    EXPECT_EQ(p.size, 250U);
  }
}

nlohmann::json run_seed4(const std::string& method) {
  const CliResult r = run_cli({"run", (source_dir() / "scenarios" / "seed-4-fraud-stratified.json").string(), "--set",
                               "/strategy/class_split/method=" + method, "--json", "--no-files"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

TEST(SeedSituation4, StratifiedOversamplingCostsSecondsAndAvoidsStarvedPartitions) {
  const auto random = run_seed4("random");
  const auto stratified = run_seed4("stratified");
  const auto oversampled = run_seed4("stratified_oversample");
  EXPECT_GE(random["class_split"]["starved_partitions"].get<int>(), 1) << "this seed's random split starves one";
  EXPECT_GT(random["class_split"]["random_split_risk"]["any_starved_at_least"].get<double>(), 0.5);
  EXPECT_EQ(stratified["class_split"]["starved_partitions"], 0);
  EXPECT_EQ(oversampled["class_split"]["starved_partitions"], 0);
  const double preprocessing = oversampled["class_split"]["preprocessing_s"].get<double>();
  EXPECT_GE(preprocessing, 5.0);
  EXPECT_LE(preprocessing, 8.0);
  const double added =
      oversampled["summary"]["makespan_s"].get<double>() - random["summary"]["makespan_s"].get<double>();
  EXPECT_GE(added, preprocessing) << "preprocessing plus the replicas' training";
  EXPECT_GT(oversampled["class_split"]["oversampling_compute_gpu_s"].get<double>(), 0.0);
  // Every report compares the three methods on the same labels, side by side.
  const auto& methods = oversampled["class_split"]["methods_compared"];
  ASSERT_EQ(methods.size(), 3U);
  EXPECT_EQ(methods[0]["method"], "random");
  EXPECT_EQ(methods[0]["starved_partitions"], random["class_split"]["starved_partitions"]);
  EXPECT_LE(methods[1]["max_minority"].get<int>() - methods[1]["min_minority"].get<int>(), 1) << "stratified: +-1";
  EXPECT_EQ(methods[2]["min_minority"], 150) << "oversampled to the target";
  EXPECT_DOUBLE_EQ(methods[2]["preprocessing_s"].get<double>(), preprocessing);
}

} // namespace
} // namespace partsim::test
