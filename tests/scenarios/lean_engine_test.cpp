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

/** Every figure of the two reports equal; times to 1e-12 relative: SimGrid's CPU model ends an execution after
 * subtracting what each solver step did from what remains, a sleep of amount / speed at once, which differ in the
 * last bits. */
void expect_same_report(const nlohmann::json& a, const nlohmann::json& b, const std::string& where = "") {
  if (a.is_object() && b.is_object()) {
    ASSERT_EQ(a.size(), b.size()) << where;
    for (auto it = a.begin(); it != a.end(); ++it) {
      if (where.empty() && it.key() == "engine") continue;
      if (where == "/scenario/input/run" && it.key() == "lean_engine") continue;
      ASSERT_TRUE(b.contains(it.key())) << where << "/" << it.key();
      expect_same_report(it.value(), b[it.key()], where + "/" + it.key());
    }
  } else if (a.is_array() && b.is_array()) {
    ASSERT_EQ(a.size(), b.size()) << where;
    for (std::size_t i = 0; i < a.size(); ++i) expect_same_report(a[i], b[i], where + "/" + std::to_string(i));
  } else if (a.is_number_float() && b.is_number_float()) {
    EXPECT_NEAR(a.get<double>(), b.get<double>(), 1e-12 * std::abs(b.get<double>())) << where;
  } else {
    EXPECT_EQ(a, b) << where;
  }
}

void expect_same_both_ways(const std::string& scenario, const std::vector<std::string>& sets) {
  const nlohmann::json driven = run_json(scenario, sets, true);
  const nlohmann::json members = run_json(scenario, sets, false);
  ASSERT_TRUE(driven.contains("summary")) << scenario;
  ASSERT_TRUE(members.contains("summary")) << scenario;
  std::string what = scenario;
  for (const std::string& s : sets) what += " " + s;
  SCOPED_TRACE(what);
  EXPECT_EQ(driven["engine"]["messages"], members["engine"]["messages"]);
  expect_same_report(driven, members);
}

TEST(LeanEngine, DataParallelTrainingReportsWhatMembersInActorsReport) {
  // 64 H200s on a fat-tree: gradient buckets overlapping the backward pass (passive streams) or after it (the
  // program's own actor, members driving), every algorithm, flows and analytic, folded or not.
  for (const char* algorithm : {"ring", "tree", "hierarchical"})
    for (const char* fidelity : {"flows", "analytic"})
      for (const char* overlap : {"true", "false"})
        expect_same_both_ways("llama3-8b-dp-64xh200-fat-tree.json",
                              {std::string("/strategy/gradient_sync/algorithm=") + algorithm,
                               std::string("/strategy/gradient_sync/fidelity=") + fidelity,
                               std::string("/strategy/gradient_sync/overlap=") + overlap, "/run/fold_replicas=false"});
  expect_same_both_ways("llama3-8b-dp-64xh200-fat-tree.json", {"/strategy/gradient_sync/fidelity=analytic"});
}

TEST(LeanEngine, ASlowNodeStillHoldsEveryBucketBack) {
  // Members arrive at different times: the collective begins at the last arrival in both engines.
  expect_same_both_ways("llama3-8b-dp-64xh200-fat-tree.json",
                        {"/strategy/gradient_sync/fidelity=flows",
                         R"(/cluster/speed_changes=[{"node": 3, "points": [["0s", 1], ["0.1s", 0.7]]}])"});
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
      expect_same_both_ways("allreduce-ring-vs-hierarchical.json",
                            {std::string("/workload/operation=\"") + op + "\"", std::string("/workload/bytes=") + bytes,
                             "/strategy/algorithm=\"auto\"", "/strategy/fidelity=\"flows\"", "/workload/iterations=3"});
}

} // namespace
} // namespace partsim::test
