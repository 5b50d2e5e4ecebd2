// The lean engine (docs/engine.md): flows collectives started by a few driver actors with two-host executions,
// overlapped streams of analytic and flows collectives without an actor of their own, executions alone on a GPU as
// sleeps. It must report what the engine reports when every member runs its part in its own actor and every
// execution is a SimGrid execution (run.lean_engine = false). Each case runs the CLI twice (one SimGrid engine per
// process) and compares every figure.
#include "test_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace partsim::test {
namespace {

nlohmann::json run_json(const std::string& scenario, std::vector<std::string> sets, bool lean) {
  sets.push_back(std::string("/run/lean_engine=") + (lean ? "true" : "false"));
  return run_scenario_json(scenario, sets);
}

struct Both {
  nlohmann::json lean;
  nlohmann::json plain;
};

/** Runs `scenario` with the lean engine and the plain one and expects every figure equal; times to `tolerance`
 * relative (1e-12: SimGrid's CPU model ends an execution after subtracting what each solver step did from what
 * remains, a sleep of amount / speed at once, which differ in the last bits). The plain engine takes none of the
 * lean paths. */
Both expect_same_both_ways(const std::string& scenario, const std::vector<std::string>& sets,
                           double tolerance = 1e-12) {
  Both r{run_json(scenario, sets, true), run_json(scenario, sets, false)};
  std::string what = scenario;
  for (const std::string& s : sets) what += " " + s;
  SCOPED_TRACE(what);
  EXPECT_TRUE(r.lean.contains("summary"));
  EXPECT_TRUE(r.plain.contains("summary"));
  if (!r.lean.contains("engine") || !r.plain.contains("engine")) return r;
  EXPECT_EQ(r.lean["engine"]["messages"], r.plain["engine"]["messages"]);
  EXPECT_EQ(r.plain["engine"]["executions_as_sleeps"], 0);
  EXPECT_EQ(r.plain["engine"]["driven_flows"], 0);
  EXPECT_LE(r.lean["engine"]["actors"].get<int>(), r.plain["engine"]["actors"].get<int>());
  // With the looser tolerance, figures that are differences of nearly equal times (the slowest rank's excess, idle
  // GPU seconds and their energy) can be 0 in one engine and rounding (1e-15 to 1e-11) in the other.
  expect_same_report(
      r.lean, r.plain, {"/engine", "/scenario/input/run/lean_engine"},
      [tolerance](const std::string&) { return tolerance; }, tolerance > 1e-12 ? 1e-9 : 0.0);
  return r;
}

/** NVLS-tree at `flows` on these 8 H200 nodes is paced by its switch flows (NCCL's per-head cap): each is one
 * network action in both engines (a two-host execution driven, or a mailbox comm), but SimGrid's network solver
 * reaches their end through different steps, and the times differ at about 1e-10 relative. 1e-12 elsewhere. */
double nvls_tree_tolerance(const std::string& algorithm, const std::string& fidelity) {
  return algorithm == "nvls_tree" && fidelity == "flows" ? 1e-9 : 1e-12;
}

TEST(LeanEngine, DataParallelTrainingReportsWhatMembersInActorsReport) {
  // 64 H200s on a fat-tree: gradient buckets overlapping the backward pass (passive streams) or after it (the
  // program's own actor, members driving), every algorithm (NVLS-tree: one switch flow per member beside the rail
  // trees' edges), flows and analytic, folded or not.
  for (const char* algorithm : {"ring", "tree", "hierarchical", "nvls_tree"})
    for (const std::string fidelity : {"flows", "analytic"})
      for (const std::string overlap : {"true", "false"}) {
        const Both r = expect_same_both_ways("llama3-8b-dp-64xh200-fat-tree.json",
                                             {std::string("/strategy/gradient_sync/algorithm=") + algorithm,
                                              "/strategy/gradient_sync/fidelity=" + fidelity,
                                              "/strategy/gradient_sync/overlap=" + overlap, "/run/fold_replicas=false",
                                              "/strategy/gradient_sync/comm_sms=0"},
                                             nvls_tree_tolerance(algorithm, fidelity));
        const nlohmann::json& lean = r.lean["engine"];
        const nlohmann::json& plain = r.plain["engine"];
        // Every execution is alone on its GPU: all are sleeps; every flow is driven.
        EXPECT_EQ(lean["executions_as_sleeps"], lean["executions"]);
        EXPECT_EQ(lean["driven_flows"], lean["messages"]);
        if (fidelity == "flows") {
          EXPECT_GT(lean["driven_flows"].get<int>(), 0);
        }
        // Overlapped buckets: no stream actors (passive streams), flow drivers instead; after the backward pass the
        // programs' actors run the collectives, none are added.
        if (overlap == "true") {
          EXPECT_LT(lean["actors"].get<int>(), plain["actors"].get<int>() - 32) << "stream actors left";
        } else {
          EXPECT_EQ(lean["actors"], plain["actors"]);
        }
      }
  expect_same_both_ways("llama3-8b-dp-64xh200-fat-tree.json", {"/strategy/gradient_sync/fidelity=analytic"});
  // With SM contention (the H200 profile's sm_count, the default comm_sms) the streams' ranks change speed while
  // their collectives run: executions, not sleeps, and the same report both ways.
  const Both contended =
      expect_same_both_ways("llama3-8b-dp-64xh200-fat-tree.json", {"/strategy/gradient_sync/fidelity=flows"},
                            nvls_tree_tolerance("nvls_tree", "flows")); // auto takes NVLS-tree here
  EXPECT_EQ(contended.lean["engine"]["executions_as_sleeps"], 0);
  EXPECT_NE(contended.lean["strategy"].get<std::string>().find("overlapped collectives hold 16 of the GPU's 132 SMs"),
            std::string::npos);
}

TEST(LeanEngine, ASlowNodeStillHoldsEveryBucketBack) {
  // Members arrive at different times: the collective begins at the last arrival in both engines.
  const Both r =
      expect_same_both_ways("llama3-8b-dp-64xh200-fat-tree.json",
                            {"/strategy/gradient_sync/fidelity=flows", "/strategy/gradient_sync/comm_sms=0",
                             R"(/cluster/speed_changes=[{"node": 3, "points": [["0s", 1], ["0.1s", 0.7]]}])"},
                            nvls_tree_tolerance("nvls_tree", "flows")); // auto takes NVLS-tree here
  // The slow node's 8 GPUs change speed: their executions stay SimGrid executions, the others' are sleeps.
  const nlohmann::json& lean = r.lean["engine"];
  EXPECT_EQ(lean["executions_as_sleeps"].get<int>(), lean["executions"].get<int>() * 7 / 8);
}

TEST(LeanEngine, ModelParallelSplitsWithFlowsCollectives) {
  // Tensor collectives on the program's stream (members drive), data-parallel sync on the overlapped stream
  // (passive), pipeline transfers between them.
  expect_same_both_ways("llama3-70b-3d-64xh100.json",
                        {R"(/strategy/tensor_collectives={"fidelity": "flows"})",
                         R"(/strategy/gradient_sync={"fidelity": "flows"})", "/workload/iterations=2"});
  expect_same_both_ways("llama3-70b-3d-64xh100.json", {R"(/strategy/gradient_sync={"fidelity": "analytic"})"});
}

TEST(LeanEngine, CollectiveWorkloadsOfEveryOperation) {
  for (const char* op : {"all_reduce", "reduce_scatter", "all_gather", "all_to_all", "broadcast"})
    for (const char* bytes : {"\"64MiB\"", "1"}) // 1 byte: flows of no byte (tree halves, chunks), run by members
    {
      const Both r = expect_same_both_ways("allreduce-ring-vs-hierarchical.json",
                                           {std::string("/workload/operation=\"") + op + "\"",
                                            std::string("/workload/bytes=") + bytes, "/strategy/algorithm=\"auto\"",
                                            "/strategy/fidelity=\"flows\"", "/workload/iterations=3"});
      // 64 MiB: every flow carries bytes, so members drive them all; 1 byte: the tree halves and all-to-all chunks
      // carry none, so their members put and get them (a ring's edges still carry a byte).
      if (std::string(bytes) != "1") {
        EXPECT_EQ(r.lean["engine"]["driven_flows"], r.lean["engine"]["messages"]);
      }
    }
  // The two-hop all-to-all's two rounds as two phases of flows, driven (64 MiB) or put and got (1 byte: its chunks
  // carry none).
  for (const char* bytes : {"\"64MiB\"", "1"})
    expect_same_both_ways("allreduce-ring-vs-hierarchical.json",
                          {"/workload/operation=\"all_to_all\"", std::string("/workload/bytes=") + bytes,
                           "/strategy/algorithm=\"two_hop\"", "/strategy/fidelity=\"flows\"",
                           "/workload/iterations=3"});
}

} // namespace
} // namespace partsim::test
