// Folding interchangeable replicas (sim/src/folding.hpp): a folded run must report what the full run reports. Each
// case runs the CLI twice (one SimGrid engine per process), with and without folding, and compares the reports.
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace partsim::test {
namespace {

struct Runs {
  nlohmann::json folded;
  nlohmann::json full;
};

nlohmann::json run_json(const std::string& scenario, std::vector<std::string> sets, bool fold) {
  std::vector<std::string> args{"run",
                                (source_dir() / "scenarios" / scenario).string(),
                                "--json",
                                "--no-files",
                                "--no-progress",
                                "--set",
                                std::string("/run/fold_replicas=") + (fold ? "true" : "false")};
  for (std::string& s : sets) {
    args.emplace_back("--set");
    args.push_back(std::move(s));
  }
  const CliResult r = run_cli(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

Runs both(const std::string& scenario, const std::vector<std::string>& sets) {
  Runs r{run_json(scenario, sets, true), run_json(scenario, sets, false)};
  if (!r.folded.contains("engine")) r.folded["engine"] = {{"simulated_ranks", -1}, {"folding", "run failed"}};
  if (!r.full.contains("engine")) r.full["engine"] = {{"simulated_ranks", -1}, {"folding", "run failed"}};
  return r;
}

/** Every figure equal; the collectives' time sums may differ in the last bits (one weighted addition instead of one
 * addition per replica). */
void expect_same_report(nlohmann::json a, nlohmann::json b, const std::string& where = "") {
  if (a.is_object() && b.is_object()) {
    for (auto* doc : {&a, &b}) {
      doc->erase("engine");
      if (doc->contains("scenario")) (*doc)["scenario"]["input"]["run"].erase("fold_replicas");
    }
    ASSERT_EQ(a.size(), b.size()) << where;
    for (auto it = a.begin(); it != a.end(); ++it) {
      ASSERT_TRUE(b.contains(it.key())) << where << "/" << it.key();
      expect_same_report(it.value(), b[it.key()], where + "/" + it.key());
    }
  } else if (a.is_array() && b.is_array()) {
    ASSERT_EQ(a.size(), b.size()) << where;
    for (std::size_t i = 0; i < a.size(); ++i) expect_same_report(a[i], b[i], where + "/" + std::to_string(i));
  } else if (a.is_number_float() && b.is_number_float() && where.find("/collectives/") != std::string::npos) {
    EXPECT_NEAR(a.get<double>(), b.get<double>(), 1e-9 * std::abs(b.get<double>())) << where;
  } else {
    EXPECT_EQ(a, b) << where;
  }
}

TEST(Folding, DataParallelTrainingSimulatesOneRankAndReportsTheFullRun) {
  const Runs r = both("gpt3-1.3b-dp-8xa100.json", {"/strategy/gradient_sync/fidelity=analytic"});
  EXPECT_EQ(r.folded["engine"]["simulated_ranks"], 1);
  EXPECT_EQ(r.folded["engine"]["folding"], "8 replicas in 1 class: simulated 1 of 8 ranks");
  EXPECT_EQ(r.full["engine"]["simulated_ranks"], 8);
  EXPECT_EQ(r.full["engine"]["folding"], "off (run.fold_replicas = false)");
  EXPECT_LT(r.folded["engine"]["executions"].get<std::uint64_t>(), r.full["engine"]["executions"].get<std::uint64_t>());
  expect_same_report(r.folded, r.full);
}

TEST(Folding, MessageLevelDataParallelIsOneReplicaAndNotFolded) {
  const Runs r = both("gpt3-1.3b-dp-8xa100.json", {"/strategy/gradient_sync/fidelity=flows"});
  EXPECT_EQ(r.folded["engine"]["simulated_ranks"], 8);
  EXPECT_TRUE(r.folded["engine"]["folding"].get<std::string>().starts_with("not folded: all ranks form one replica"))
      << r.folded["engine"]["folding"];
  expect_same_report(r.folded, r.full);
}

TEST(Folding, ASlowNodeMakesTwoClassesAndTheSameStraggler) {
  // 64 GPUs on 8 nodes, node 3 at 70% speed: its 8 ranks are a second class; the all-reduces wait for them.
  const Runs r = both("resnet50-ddp-64gpus.json",
                      {"/strategy/gradient_sync/fidelity=analytic", "/cluster/node_speed_factors=[1,1,1,0.7,1,1,1,1]"});
  EXPECT_EQ(r.folded["engine"]["simulated_ranks"], 2);
  EXPECT_EQ(r.folded["engine"]["folding"], "64 replicas in 2 classes: simulated 2 of 64 ranks");
  expect_same_report(r.folded, r.full);
  EXPECT_GT(r.full["summary"]["time_lost_waiting_gpu_s"].get<double>(), 0.0);
}

TEST(Folding, ThreeDimensionalSplitFoldsTensorSlicesWithMessageLevelDataSync) {
  // Analytic tensor collectives touch no link: every tensor rank's pipeline-and-data chain is a replica of the
  // first, even though the data-parallel all-reduces and pipeline transfers run as flows and messages.
  const Runs r = both("llama3-70b-3d-64xh100.json", {R"(/strategy/tensor_collectives={"fidelity":"analytic"})",
                                                     R"(/strategy/gradient_sync={"fidelity":"flows"})"});
  EXPECT_EQ(r.folded["engine"]["folding"], "8 replicas in 1 class: simulated 8 of 64 ranks");
  expect_same_report(r.folded, r.full);
}

TEST(Folding, ThreeDimensionalSplitWithAnalyticCollectivesFoldsToOnePipeline) {
  const Runs r = both("llama3-70b-3d-64xh100.json", {R"(/strategy/tensor_collectives={"fidelity":"analytic"})",
                                                     R"(/strategy/gradient_sync={"fidelity":"analytic"})"});
  EXPECT_EQ(r.folded["engine"]["folding"], "16 replicas in 1 class: simulated 4 of 64 ranks");
  expect_same_report(r.folded, r.full);
}

TEST(Folding, ReplicasSharingALinkAreNotFolded) {
  // Two data-parallel replicas of a 2-stage pipeline whose stages sit on different nodes with one NIC each: both
  // replicas' pipeline transfers cross the same NICs, so their contention must be simulated.
  const Runs r =
      both("llama3-70b-3d-64xh100.json",
           {"/cluster/nodes=2", "/cluster/gpus_per_node=2", "/cluster/network/nics_per_node=1", "/strategy/tensor=1",
            "/strategy/data=2", "/strategy/pipeline=2", "/strategy/schedule=1f1b", "/strategy/virtual_stages=1",
            "/strategy/sequence_parallel=false", "/strategy/placement=[\"data\",\"tensor\",\"pipeline\"]",
            "/workload/model=gpt2-small", "/workload/global_batch=8",
            R"(/strategy/gradient_sync={"fidelity":"analytic"})", "/run/outputs=[\"table\"]"});
  EXPECT_EQ(r.folded["engine"]["simulated_ranks"], 4);
  EXPECT_TRUE(r.folded["engine"]["folding"].get<std::string>().find("share link") != std::string::npos)
      << r.folded["engine"]["folding"];
}

} // namespace
} // namespace partsim::test
