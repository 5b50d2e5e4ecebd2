// Folding interchangeable replicas (sim/src/folding.hpp): a folded run must report what the full run reports. Each
// case runs the CLI twice (one SimGrid engine per process), with and without folding, and compares the reports.
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

namespace partsim::test {
namespace {

struct Runs {
  nlohmann::json folded;
  nlohmann::json full;
};

nlohmann::json run_json(const std::string& scenario, std::vector<std::string> sets, bool fold) {
  sets.push_back(std::string("/run/fold_replicas=") + (fold ? "true" : "false"));
  return run_scenario_json(scenario, sets);
}

Runs both(const std::string& scenario, const std::vector<std::string>& sets) {
  return {run_json(scenario, sets, true), run_json(scenario, sets, false)};
}

/** Every figure equal; the collectives' time sums may differ in the last bits (one weighted addition instead of one
 * addition per replica). */
void expect_same_report(const nlohmann::json& a, const nlohmann::json& b) {
  test::expect_same_report(a, b, {"/engine", "/scenario/input/run/fold_replicas"}, [](const std::string& where) {
    return where.find("/collectives/") != std::string::npos ? 1e-9 : 0.0;
  });
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

TEST(Folding, AFixedStragglerIsAClassOfItsOwn) {
  // GPU 27 at 70% for the whole run (/cluster/stragglers): its replica differs from the others, which still fold.
  const Runs r = both("resnet50-ddp-64gpus.json", {"/strategy/gradient_sync/fidelity=analytic",
                                                   R"(/cluster/stragglers={"fixed":[{"gpu":27,"factor":0.7}]})"});
  EXPECT_EQ(r.folded["engine"]["folding"], "64 replicas in 2 classes: simulated 2 of 64 ranks");
  expect_same_report(r.folded, r.full);
  EXPECT_GT(r.full["stragglers"]["mean_iteration_s"].get<double>(),
            r.full["stragglers"]["compute_per_iteration_s"].get<double>() / 0.7);
}

TEST(Folding, RandomStragglersFoldOnlyReplicasSlowedAlike) {
  // p = 0.02 per GPU per iteration, 3 iterations: the few GPUs that straggle (each in its own iterations) are
  // classes of their own; the replicas never slowed are one class.
  const Runs r =
      both("resnet50-ddp-64gpus.json", {"/strategy/gradient_sync/fidelity=analytic",
                                        R"(/cluster/stragglers={"random":{"probability":0.02,"slowdown":0.6}})"});
  const int simulated = r.folded["engine"]["simulated_ranks"].get<int>();
  const int slowed = r.full["stragglers"]["slowed_gpu_iterations"].get<int>();
  EXPECT_GT(slowed, 0);
  EXPECT_GT(simulated, 1);
  EXPECT_LE(simulated, slowed + 1);
  expect_same_report(r.folded, r.full);
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

// ---- Adversarial cases: each compares the folded run with the full one, and checks what was folded, so that a
// comparison of two unfolded runs cannot pass for one.

/** The 3D scenario shrunk to GPT-2 small (tied embeddings) on 2 nodes of 4 GPUs with a NIC each: data 4 x pipeline
 * 2, 1F1B, analytic data-parallel sync; `extra` overrides follow. */
std::vector<std::string> small_3d(const std::vector<std::string>& extra) {
  std::vector<std::string> sets{"/cluster/nodes=2",
                                "/cluster/gpus_per_node=4",
                                "/cluster/network/nics_per_node=4",
                                "/strategy/data=4",
                                "/strategy/tensor=1",
                                "/strategy/pipeline=2",
                                "/strategy/schedule=1f1b",
                                "/strategy/virtual_stages=1",
                                "/strategy/sequence_parallel=false",
                                "/strategy/zero=0",
                                "/workload/model=gpt2-small",
                                "/workload/sequence_length=1024",
                                "/workload/global_batch=16",
                                R"(/strategy/gradient_sync={"fidelity":"analytic"})"};
  sets.insert(sets.end(), extra.begin(), extra.end());
  return sets;
}

/** GPT-2 small with untied embeddings, as an inline model: no embedding all-reduce joins the first and last stages,
 * whose closed form would otherwise already tell an intra-node pipeline from one across nodes. */
std::string untied_gpt2() {
  nlohmann::json model = nlohmann::json::parse(read_file(source_dir() / "models" / "workloads" / "gpt2-small.json"));
  model["name"] = "gpt2-small-untied";
  model["tied_embeddings"] = false;
  return "/workload/model=" + model.dump();
}

std::string note(const Runs& r) {
  return r.folded["engine"]["folding"].get<std::string>();
}

TEST(Folding, ModelParallelVariantsReportTheFullRun) {
  struct Case {
    const char* name;
    std::vector<std::string> sets;
    const char* folding;
  };
  const char* four = "4 replicas in 1 class: simulated 2 of 8 ranks";
  const char* two = "2 replicas in 1 class: simulated 4 of 8 ranks";
  const char* eight = "8 replicas in 1 class: simulated 1 of 8 ranks";
  const std::string tensor_analytic = R"(/strategy/tensor_collectives={"fidelity":"analytic"})";
  const std::vector<Case> cases{
      {"gpipe", {"/strategy/schedule=gpipe"}, four},
      {"1f1b, 3 iterations", {"/workload/iterations=3"}, four},
      {"interleaved", {"/strategy/schedule=interleaved", "/strategy/virtual_stages=2"}, four},
      {"sequence parallel, analytic tensor",
       {"/strategy/tensor=2", "/strategy/data=2", "/strategy/sequence_parallel=true", tensor_analytic},
       four},
      {"tensor at flows",
       {"/strategy/tensor=2", "/strategy/data=2", R"(/strategy/tensor_collectives={"fidelity":"flows"})"},
       two},
      {"tensor fused per pass",
       {"/strategy/tensor=2", "/strategy/data=2",
        R"(/strategy/tensor_collectives={"fidelity":"analytic","granularity":"pass"})"},
       four},
      {"tree algorithms",
       {"/strategy/tensor=2", "/strategy/data=2",
        R"(/strategy/tensor_collectives={"fidelity":"analytic","algorithm":"tree"})",
        R"(/strategy/gradient_sync={"fidelity":"analytic","algorithm":"tree"})"},
       four},
      {"zero 1", {"/strategy/zero=1"}, four},
      {"zero 2", {"/strategy/pipeline=1", "/strategy/data=8", "/strategy/zero=2"}, eight},
      {"zero 3", {"/strategy/pipeline=1", "/strategy/data=8", "/strategy/zero=3"}, eight},
      {"fsdp", {"/strategy/pipeline=1", "/strategy/data=8", R"(/strategy/zero="fsdp")"}, eight},
      {"zero 3, data sync at flows",
       {"/strategy/pipeline=1", "/strategy/tensor=2", "/strategy/zero=3", tensor_analytic,
        R"(/strategy/gradient_sync={"fidelity":"flows"})"},
       two},
      {"tied embeddings, data first", {R"(/strategy/placement=["data","tensor","pipeline"])"}, four},
      {"tied embeddings, pipeline first", {R"(/strategy/placement=["pipeline","tensor","data"])"}, four},
      {"untied, pipeline first", {R"(/strategy/placement=["pipeline","tensor","data"])", untied_gpt2()}, four},
      {"no overlap", {R"(/strategy/gradient_sync={"fidelity":"analytic","overlap":false})"}, four},
      {"data sync at steps",
       {"/strategy/tensor=2", "/strategy/data=2", tensor_analytic, R"(/strategy/gradient_sync={"fidelity":"steps"})"},
       two},
      {"data sync at flows, data first",
       {"/strategy/tensor=2", "/strategy/data=2", tensor_analytic, R"(/strategy/gradient_sync={"fidelity":"flows"})",
        R"(/strategy/placement=["data","tensor","pipeline"])"},
       two},
      {"LV08, data sync at flows",
       {"/run/network_model=LV08", "/strategy/tensor=2", "/strategy/data=2", tensor_analytic,
        R"(/strategy/gradient_sync={"fidelity":"flows"})"},
       two},
      {"slow second node", {"/cluster/node_speed_factors=[1,0.8]"}, four},
      {"second node slowing down now and then",
       {R"(/cluster/speed_changes=[{"node":1,"points":[["0s",1],["5ms",0.3]],"period":"10ms"}])",
        "/workload/iterations=2"},
       four},
      {"rail, data first",
       {R"(/cluster/network={"topology":"rail","profile":"ib-ndr","rail":{"switch_latency":"1us","spine_oversubscription":2}})",
        R"(/strategy/placement=["data","tensor","pipeline"])", untied_gpt2(), "/cluster/nodes=4", "/strategy/data=8",
        "/workload/global_batch=32"},
       "8 replicas in 1 class: simulated 2 of 16 ranks"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Runs r = both("llama3-70b-3d-64xh100.json", small_3d(c.sets));
    EXPECT_EQ(note(r), c.folding);
    expect_same_report(r.folded, r.full);
  }
}

TEST(Folding, TransfersOverDifferentLinksMakeDifferentClasses) {
  // 2 nodes of 3 GPUs, 3 pipelines of 2 stages on consecutive GPUs: pipelines 0 and 2 stay inside a node (NVLink),
  // pipeline 1 crosses from GPU 2 to GPU 3 over the network. Same programs, same GPUs, no shared link: only the
  // routes tell pipeline 1 apart.
  const Runs r = both(
      "llama3-70b-3d-64xh100.json",
      small_3d({"/cluster/gpus_per_node=3", "/cluster/network/nics_per_node=3", "/strategy/data=3",
                R"(/strategy/placement=["pipeline","data","tensor"])", "/workload/global_batch=12", untied_gpt2()}));
  EXPECT_EQ(note(r), "3 replicas in 2 classes: simulated 4 of 6 ranks");
  expect_same_report(r.folded, r.full);

  // Tensor 4 x pipeline 3 on 6 nodes of 2 GPUs, pipeline first: tensor rank t's pipeline is GPUs 3t to 3t+2, so
  // pipelines 0 and 2 cross a node boundary between stages 1 and 2, pipelines 1 and 3 between stages 0 and 1; node 0
  // is slow. Three classes: {0}, {1, 3}, {2}, met in analytic tensor collectives.
  const Runs r3d = both(
      "llama3-70b-3d-64xh100.json",
      small_3d({"/cluster/nodes=6", "/cluster/gpus_per_node=2", "/cluster/network/nics_per_node=2", "/strategy/data=1",
                "/strategy/tensor=4", "/strategy/pipeline=3", R"(/strategy/placement=["pipeline","tensor","data"])",
                "/strategy/sequence_parallel=true", R"(/strategy/tensor_collectives={"fidelity":"analytic"})",
                R"(/strategy/gradient_sync={"fidelity":"analytic","overlap":false})",
                "/cluster/node_speed_factors=[0.8,1,1,1,1,1]", "/workload/global_batch=6"}));
  EXPECT_EQ(note(r3d), "4 replicas in 3 classes: simulated 9 of 12 ranks");
  expect_same_report(r3d.folded, r3d.full);
}

TEST(Folding, FatTreeReplicasCrossingLeavesOrSharingUplinks) {
  const std::vector<std::string> one_gpu_nodes{
      "/cluster/nodes=4", "/cluster/gpus_per_node=1",
      "/strategy/data=2", "/workload/global_batch=8",
      untied_gpt2(),      R"(/strategy/placement=["pipeline","data","tensor"])"};
  const auto fat_tree = [](int nodes_per_leaf) {
    return R"(/cluster/network={"topology":"fat_tree","profile":"ib-ndr","nics_per_node":1,"fat_tree":{"levels":2,)"
           R"("nodes_per_leaf":)" +
           std::to_string(nodes_per_leaf) + R"(,"leaf_oversubscription":2,"switch_latency":"1us"}})";
  };
  const auto with = [&](std::vector<std::string> sets, const std::string& last) {
    sets.push_back(last);
    return small_3d(sets);
  };
  {
    SCOPED_TRACE("each pipeline on its own leaf");
    const Runs r = both("llama3-70b-3d-64xh100.json", with(one_gpu_nodes, fat_tree(2)));
    EXPECT_EQ(note(r), "2 replicas in 1 class: simulated 2 of 4 ranks");
    expect_same_report(r.folded, r.full);
  }
  {
    SCOPED_TRACE("leaves of 3 nodes: pipeline 1 crosses leaf uplinks, pipeline 0 does not");
    const Runs r = both("llama3-70b-3d-64xh100.json", with(one_gpu_nodes, fat_tree(3)));
    EXPECT_EQ(note(r), "not folded: no two of the 2 replicas are interchangeable");
    expect_same_report(r.folded, r.full);
  }
  {
    SCOPED_TRACE("stages on different leaves: both pipelines cross leaf 0's uplink");
    std::vector<std::string> sets = one_gpu_nodes;
    sets.back() = R"(/strategy/placement=["data","pipeline","tensor"])";
    const Runs r = both("llama3-70b-3d-64xh100.json", with(sets, fat_tree(2)));
    EXPECT_TRUE(note(r).starts_with("not folded: replicas 0 and 1 share link leaf-0-up")) << note(r);
    expect_same_report(r.folded, r.full);
  }
}

TEST(Folding, NonBlockingUplinksNeverLimitARateSoReplicasMayShareThem) {
  // Stages on different leaves (or pods): both pipelines cross the same uplinks. A non-blocking uplink has as much
  // bandwidth as the NICs below it and every flow through it crosses one of them, so it never limits a rate: the
  // replicas fold, and the report is the full run's. Oversubscribed, it can: no fold.
  const std::vector<std::string> sets{"/cluster/nodes=4", "/cluster/gpus_per_node=1",
                                      "/strategy/data=2", "/workload/global_batch=8",
                                      untied_gpt2(),      R"(/strategy/placement=["data","pipeline","tensor"])"};
  const auto with = [&](const std::string& network) {
    std::vector<std::string> all = sets;
    all.push_back(R"(/cluster/network={"profile":"ib-ndr","nics_per_node":1,)" + network + "}");
    return small_3d(all);
  };
  struct Case {
    const char* name;
    std::string network;
    std::string folding; ///< the note, or its start
  };
  const Case cases[] = {
      {"two levels, non-blocking leaves",
       R"("topology":"fat_tree","fat_tree":{"levels":2,"nodes_per_leaf":2,"switch_latency":"1us"})",
       "2 replicas in 1 class: simulated 2 of 4 ranks"},
      {"three levels, non-blocking: both cross pod 0's uplink",
       R"("topology":"fat_tree","fat_tree":{"levels":3,"nodes_per_leaf":1,"leaves_per_pod":2,"switch_latency":"1us"})",
       "2 replicas in 1 class: simulated 2 of 4 ranks"},
      {"three levels, oversubscribed pods",
       R"("topology":"fat_tree","fat_tree":{"levels":3,"nodes_per_leaf":1,"leaves_per_pod":2,)"
       R"("pod_oversubscription":2,"switch_latency":"1us"})",
       "not folded: replicas 0 and 1 share link pod-0-up"},
      {"two levels, oversubscribed leaves",
       R"("topology":"fat_tree","fat_tree":{"levels":2,"nodes_per_leaf":2,"leaf_oversubscription":1.5,)"
       R"("switch_latency":"1us"})",
       "not folded: replicas 0 and 1 share link leaf-0-up"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Runs r = both("llama3-70b-3d-64xh100.json", with(c.network));
    EXPECT_TRUE(note(r).starts_with(c.folding)) << note(r);
    expect_same_report(r.folded, r.full);
  }
}

TEST(Folding, AnalyticGroupsWaitForEveryMemberTheyGather) {
  // Tensor 2 x data 2 on 4 one-GPU nodes, all collectives analytic: each rank is a replica. Ranks 0 and 3 are fast,
  // 1 and 2 slow: data group {0, 2} holds the fast class's representative (rank 0) and a folded slow rank whose
  // representative (rank 1) is in the other data group. Folded, rank 0 would not wait for rank 2's late gradients.
  const std::vector<std::string> base{"/cluster/nodes=4",
                                      "/cluster/gpus_per_node=1",
                                      "/cluster/network/nics_per_node=1",
                                      "/strategy/pipeline=1",
                                      "/strategy/tensor=2",
                                      "/strategy/data=2",
                                      "/workload/global_batch=8",
                                      R"(/strategy/tensor_collectives={"fidelity":"analytic"})",
                                      R"(/strategy/gradient_sync={"fidelity":"analytic","overlap":false})"};
  {
    SCOPED_TRACE("checkerboard speeds");
    std::vector<std::string> sets = base;
    sets.emplace_back("/cluster/node_speed_factors=[1,0.5,0.5,1]");
    const Runs r = both("llama3-70b-3d-64xh100.json", small_3d(sets));
    EXPECT_TRUE(note(r).starts_with("not folded: group")) << note(r);
    expect_same_report(r.folded, r.full);
    EXPECT_GT(r.full["ranks"][0]["wait_s"].get<double>(), 0.0);
  }
  {
    SCOPED_TRACE("a slow data replica");
    std::vector<std::string> sets = base;
    sets.emplace_back("/cluster/node_speed_factors=[1,1,0.5,0.5]");
    const Runs r = both("llama3-70b-3d-64xh100.json", small_3d(sets));
    EXPECT_EQ(note(r), "4 replicas in 2 classes: simulated 2 of 4 ranks");
    expect_same_report(r.folded, r.full);
  }
}

TEST(Folding, SpeedChangesOverTimeMakeTheirOwnClasses) {
  // Nodes 2 and 5 slow down alike, node 7 once only: three classes, and the all-reduces wait for the slowed nodes.
  const Runs r = both(
      "resnet50-ddp-64gpus.json",
      {"/strategy/gradient_sync/fidelity=analytic",
       R"(/cluster/speed_changes=[{"node":2,"points":[["0s",1],["50ms",0.3]],"period":"100ms"},)"
       R"({"node":5,"points":[["0s",1],["50ms",0.3]],"period":"100ms"},{"node":7,"points":[["0s",1],["50ms",0.3]]}])"});
  EXPECT_EQ(note(r), "64 replicas in 3 classes: simulated 3 of 64 ranks");
  expect_same_report(r.folded, r.full);
  EXPECT_GT(r.full["summary"]["time_lost_waiting_gpu_s"].get<double>(), 0.0);
}

TEST(Folding, UnevenSplitsKeepEachRanksSamples) {
  {
    SCOPED_TRACE("1003 samples on 32 GPUs");
    const Runs r = both("dp-training-ring-allreduce.json",
                        {R"(/strategy/gradient_sync={"fidelity":"analytic"})", "/workload/samples=1003"});
    EXPECT_EQ(note(r), "32 replicas in 2 classes: simulated 2 of 32 ranks");
    expect_same_report(r.folded, r.full);
  }
  {
    SCOPED_TRACE("64 skewed partitions on 32 GPUs");
    const Runs r = both("dp-training-ring-allreduce.json",
                        {R"(/strategy/gradient_sync={"fidelity":"analytic"})", "/strategy/partitions=64",
                         R"(/strategy/shares={"skewed":0.1,"largest_partition":33})"});
    EXPECT_EQ(note(r), "32 replicas in 3 classes: simulated 3 of 32 ranks");
    expect_same_report(r.folded, r.full);
    EXPECT_NE(r.full["ranks"][0]["samples"], r.full["ranks"][1]["samples"]);
  }
}

TEST(Folding, CollectiveWorkloadsCountEachMembersBytes) {
  {
    SCOPED_TRACE("all-gather of an odd size with a slow node");
    const Runs r =
        both("allreduce-ring-vs-hierarchical.json",
             {"/strategy/fidelity=analytic", "/strategy/algorithm=ring", "/workload/operation=all_gather",
              "/workload/bytes=1000003", "/workload/iterations=3", "/cluster/node_speed_factors=[1,0.5,1,1,1,1,1,1]"});
    EXPECT_EQ(note(r), "64 replicas in 2 classes: simulated 2 of 64 ranks");
    expect_same_report(r.folded, r.full);
  }
  {
    SCOPED_TRACE("broadcast from rank 9");
    const Runs r = both("allreduce-ring-vs-hierarchical.json",
                        {"/strategy/fidelity=analytic", "/strategy/algorithm=ring", "/workload/operation=broadcast",
                         "/workload/bytes=1000003", "/workload/root=9", "/workload/iterations=2"});
    EXPECT_EQ(note(r), "64 replicas in 1 class: simulated 1 of 64 ranks");
    expect_same_report(r.folded, r.full);
    // The root receives nothing, the last of the chain (rank 8) sends nothing.
    EXPECT_EQ(r.full["ranks"][9]["bytes_received"], 0);
    EXPECT_EQ(r.full["ranks"][8]["bytes_sent"], 0);
    EXPECT_GT(r.full["ranks"][10]["bytes_sent"].get<std::uint64_t>(), 0U);
  }
}

TEST(Folding, TraceIsTheFullRunsTrace) {
  const auto run_out = [](bool fold) {
    const std::filesystem::path dir = temp_dir();
    std::vector<std::string> args{"run",
                                  (source_dir() / "scenarios" / "llama3-70b-3d-64xh100.json").string(),
                                  "--out",
                                  dir.string(),
                                  "--no-progress",
                                  "--set",
                                  std::string("/run/fold_replicas=") + (fold ? "true" : "false"),
                                  "--set",
                                  R"(/run/outputs=["trace","report_json"])"};
    for (const std::string& s : small_3d(
             {"/strategy/tensor=2", "/strategy/data=2", R"(/strategy/tensor_collectives={"fidelity":"analytic"})"})) {
      args.emplace_back("--set");
      args.push_back(s);
    }
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return dir;
  };
  const std::filesystem::path folded = run_out(true);
  const std::filesystem::path full = run_out(false);
  const std::string trace = read_file(folded / "trace.json");
  EXPECT_GT(trace.size(), 1000U);
  EXPECT_TRUE(trace == read_file(full / "trace.json")) << "trace.json differs";
  const nlohmann::json a = nlohmann::json::parse(read_file(folded / "report.json"));
  const nlohmann::json b = nlohmann::json::parse(read_file(full / "report.json"));
  EXPECT_EQ(a["engine"]["folding"], "4 replicas in 1 class: simulated 2 of 8 ranks");
  expect_same_report(a, b);
  std::filesystem::remove_all(folded);
  std::filesystem::remove_all(full);
}

} // namespace
} // namespace partsim::test
