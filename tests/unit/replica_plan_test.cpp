// Capacity planning of serving pipelines (`partsim plan-replicas`): the search's steps on figures given here, its
// input errors, and a whole plan found by the CLI for a two-stage pipeline, checked against M/M/c arithmetic.
#include "partsim/batch/replica_plan.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace partsim::test {
namespace {

using nlohmann::json;

ReplicaTrial trial(std::vector<int> nodes, std::vector<double> utilisation, double throughput = 100.0,
                   double p99 = 0.01) {
  ReplicaTrial t;
  t.nodes = std::move(nodes);
  t.utilisation = std::move(utilisation);
  t.throughput = throughput;
  t.p99 = p99;
  return t;
}

TEST(ReplicaPlan, GrowthAddsANodeToTheBusiestStageThatMayGrow) {
  ReplicaTargets targets;
  targets.max_nodes_per_stage = 3;
  EXPECT_EQ(grow(trial({1, 1, 1}, {0.2, 0.99, 0.5}), targets), (std::vector<int>{1, 2, 1}));
  // The busiest is at the limit: the next busiest grows; ties go to the earlier stage.
  EXPECT_EQ(grow(trial({1, 3, 1}, {0.2, 0.99, 0.5}), targets), (std::vector<int>{1, 3, 2}));
  EXPECT_EQ(grow(trial({2, 1, 2}, {0.5, 0.1, 0.5}), targets), (std::vector<int>{3, 1, 2}));
  EXPECT_FALSE(grow(trial({3, 3}, {0.9, 0.9}), targets).has_value());
}

TEST(ReplicaPlan, TrimTriesOneNodeFewerLeastBusyStageFirst) {
  const auto candidates = trim_candidates(trial({2, 1, 4}, {0.7, 0.1, 0.3}));
  ASSERT_EQ(candidates.size(), 2u); // the 1-node stage cannot shrink
  EXPECT_EQ(candidates[0], (std::vector<int>{2, 1, 3}));
  EXPECT_EQ(candidates[1], (std::vector<int>{1, 1, 4}));
}

TEST(ReplicaPlan, TargetsHoldWithinTheThroughputTolerance) {
  ReplicaTargets targets;
  targets.throughput = 1000.0;
  targets.p99 = 0.05;
  targets.tolerance = 0.02;
  EXPECT_TRUE(meets_targets(trial({1}, {0.5}, 981.0, 0.05), targets));
  EXPECT_FALSE(meets_targets(trial({1}, {0.5}, 979.0, 0.01), targets));
  EXPECT_FALSE(meets_targets(trial({1}, {0.5}, 1000.0, 0.0501), targets));
  ReplicaTrial dropping = trial({1}, {0.5}, 1000.0, 0.01);
  dropping.drop_rate = 0.001;
  EXPECT_FALSE(meets_targets(dropping, targets));
  targets.max_drop_rate = 0.01;
  EXPECT_TRUE(meets_targets(dropping, targets));
  targets.max_utilisation = 0.9;
  EXPECT_TRUE(meets_targets(trial({1, 1}, {0.5, 0.9}, 1000.0, 0.01), targets));
  EXPECT_FALSE(meets_targets(trial({1, 1}, {0.5, 0.91}, 1000.0, 0.01), targets));
}

TEST(ReplicaPlan, OverridesSetEachPoolTheClusterAndTheRate) {
  ReplicaLayout layout;
  layout.names = {"a", "b"};
  layout.replicas_per_node = {4, 2};
  layout.fixed_nodes = 3;
  const std::vector<Override> o = replica_overrides(layout, {2, 5}, 750.0);
  ASSERT_EQ(o.size(), 4u);
  EXPECT_EQ(o[0].pointer, "/workload/stages/0/pool/nodes");
  EXPECT_EQ(o[0].value, 2);
  EXPECT_EQ(o[1].pointer, "/workload/stages/1/pool/nodes");
  EXPECT_EQ(o[1].value, 5);
  EXPECT_EQ(o[2].pointer, "/cluster/nodes");
  EXPECT_EQ(o[2].value, 10);
  EXPECT_EQ(o[3].pointer, "/workload/arrivals/rate");
  EXPECT_EQ(o[3].value, 750.0);
}

TEST(ReplicaPlan, ATrialReadsItsFiguresOrNamesTheMissingOne) {
  json report = {{"serving",
                  {{"throughput_items_per_s", 990.0},
                   {"drop_rate", 0.0},
                   {"bottleneck", "b"},
                   {"latency", {{"p50_s", 0.01}, {"p99_s", 0.04}}},
                   {"stages", json::array({{{"utilisation", 0.3}}, {{"utilisation", 0.8}}})}}}};
  const ReplicaLayout layout;
  const ReplicaTrial t = read_trial(report, layout, {1, 4}, 1000.0);
  EXPECT_DOUBLE_EQ(t.throughput, 990.0);
  EXPECT_DOUBLE_EQ(t.p99, 0.04);
  EXPECT_EQ(t.utilisation, (std::vector<double>{0.3, 0.8}));
  EXPECT_EQ(t.bottleneck, "b");
  report["serving"]["latency"].erase("p99_s");
  EXPECT_EQ(input_error([&] { read_trial(report, layout, {1, 4}, 1000.0); }).pointer(), "/serving/latency/p99_s");
}

/** Two stages of CPU replicas: `tokenise`, 4 per node, fixed 2 ms; `infer`, 2 per node, exponential 10 ms. Poisson
 * arrivals (plan-replicas sets the rate). */
json two_stage_pipeline(const std::string& process = "poisson") {
  json doc = base_scenario(2, 1);
  json stages = json::array();
  stages.push_back({{"name", "tokenise"},
                    {"pool", {{"device", "cpu"}, {"nodes", 1}, {"replicas_per_node", 4}}},
                    {"service", {{"distribution", "fixed"}, {"mean", "2ms"}}},
                    {"output_bytes", "1kB"}});
  stages.push_back({{"name", "infer"},
                    {"pool", {{"device", "cpu"}, {"nodes", 1}, {"replicas_per_node", 2}}},
                    {"service", {{"distribution", "exponential"}, {"mean", "10ms"}}}});
  json arrivals = {{"process", process}};
  if (process == "closed")
    arrivals["clients"] = 4;
  else
    arrivals["rate"] = 100;
  doc["workload"] = {
      {"kind", "serving"}, {"stages", stages}, {"arrivals", arrivals}, {"requests", 30000}, {"warmup", "2s"}};
  doc["strategy"] = {{"kind", "serving"}};
  return doc;
}

TEST(ReplicaPlan, OnlyServingScenariosArePlanned) {
  EXPECT_EQ(input_error([] { replica_layout(parse(base_scenario())); }).pointer(), "/workload/kind");
  const ReplicaLayout layout = replica_layout(parse(two_stage_pipeline()));
  EXPECT_EQ(layout.names, (std::vector<std::string>{"tokenise", "infer"}));
  EXPECT_EQ(layout.replicas_per_node, (std::vector<int>{4, 2}));
  EXPECT_EQ(layout.closed.clients, 0);
}

TEST(ReplicaPlan, AClosedLoopKeepsItsClientsAndScalesThemOnTheCurve) {
  // 4 clients: every step runs them; the curve's loads scale them (rounded, at least one); the target must stay
  // below what they can ask, clients / mean think time.
  ReplicaLayout layout = replica_layout(parse(two_stage_pipeline("closed")));
  EXPECT_EQ(layout.closed.clients, 4);
  EXPECT_EQ(layout.rate_pointer, "/workload/arrivals/clients");
  layout.closed.target = 200.0;
  EXPECT_EQ(replica_overrides(layout, {1, 2}, 200.0).back().value, 4);
  EXPECT_EQ(replica_overrides(layout, {1, 2}, 100.0).back().value, 2);
  EXPECT_EQ(replica_overrides(layout, {1, 2}, 10.0).back().value, 1);
  EXPECT_EQ(replica_overrides(layout, {1, 2}, 250.0).back().value, 5);
  check_closed_loop_target(layout, 1e6, 0.02); // no think time: no bound
  layout.closed.think_mean = 0.1;              // 4 clients thinking 100 ms ask at most 40 items/s
  check_closed_loop_target(layout, 40.0, 0.05);
  EXPECT_EQ(input_error([&] { check_closed_loop_target(layout, 41.0, 0.02); }).source(), "--throughput");
}

/** two_stage_pipeline() replaying the arrivals of `csv` (a column arrival_s). */
json trace_pipeline(const std::filesystem::path& csv) {
  json doc = two_stage_pipeline();
  doc["workload"]["arrivals"] = {{"process", "trace"}, {"trace", {{"csv", csv.string()}}}};
  doc["workload"].erase("requests"); // every row
  return doc;
}

TEST(ReplicaPlan, ATraceIsReplayedAtTheSpeedOfTheTargetRate) {
  // 4 rows over 8 s: 3 gaps, its own rate 3/8 per s; 0.75 items/s asked is the trace at 2x.
  const std::filesystem::path csv = temp_dir() / "arrivals.csv";
  std::ofstream(csv) << "arrival_s\n10\n11\n14\n18\n";
  json doc = trace_pipeline(csv);
  ReplicaLayout layout = replica_layout(parse(doc));
  EXPECT_EQ(layout.rate_pointer, "/workload/arrivals/trace/speed");
  EXPECT_DOUBLE_EQ(layout.rate_scale, 8.0 / 3.0);
  const std::vector<Override> o = replica_overrides(layout, {1, 1}, 0.75);
  ASSERT_EQ(o.size(), 4u);
  EXPECT_EQ(o[3].pointer, "/workload/arrivals/trace/speed");
  EXPECT_NEAR(o[3].value.get<double>(), 2.0, 1e-12);
  // The scenario's own speed does not change the trace's rate; a run of 3 requests sends the first 3 rows (4 s).
  doc["workload"]["arrivals"]["trace"]["speed"] = 4;
  EXPECT_DOUBLE_EQ(replica_layout(parse(doc)).rate_scale, 8.0 / 3.0);
  doc["workload"]["requests"] = 3;
  EXPECT_DOUBLE_EQ(replica_layout(parse(doc)).rate_scale, 2.0);
  // Arrivals all at one time have no rate to scale.
  const std::filesystem::path burst = temp_dir() / "burst.csv";
  std::ofstream(burst) << "arrival_s\n5\n5\n5\n";
  EXPECT_EQ(input_error([&] { replica_layout(parse(trace_pipeline(burst))); }).pointer(), "/workload/arrivals/trace");
}

TEST(ReplicaPlan, APrefillPoolIsAPoolOfItsOwn) {
  // seed-5-llm-disaggregated: Llama 3 8B decoded on one node of 4 replicas, prefilled on another: two pools, each
  // with its own node count and its own utilisation in the report.
  std::ifstream in(source_dir() / "scenarios" / "seed-5-llm-disaggregated.json");
  const Scenario scenario = parse(json::parse(in));
  const ReplicaLayout layout = replica_layout(scenario);
  EXPECT_EQ(layout.names, (std::vector<std::string>{"llama", "llama-prefill"}));
  EXPECT_EQ(layout.replicas_per_node, (std::vector<int>{4, 4}));
  EXPECT_EQ(layout.fixed_nodes, 0);
  const std::vector<Override> o = replica_overrides(layout, {3, 2}, 100.0);
  ASSERT_EQ(o.size(), 4u);
  EXPECT_EQ(o[0].pointer, "/workload/stages/0/pool/nodes");
  EXPECT_EQ(o[1].pointer, "/workload/stages/0/llm/prefill_pool/nodes");
  EXPECT_EQ(o[1].value, 2);
  EXPECT_EQ(o[2].pointer, "/cluster/nodes");
  EXPECT_EQ(o[2].value, 5);
  json report = {
      {"serving",
       {{"throughput_items_per_s", 99.0},
        {"drop_rate", 0.0},
        {"latency", {{"p50_s", 1.0}, {"p99_s", 3.0}}},
        {"stages",
         json::array(
             {{{"utilisation", 0.5},
               {"llm", {{"disaggregation", {{"decode_utilisation", 0.3}, {"prefill_utilisation", 0.9}}}}}}})}}}};
  const ReplicaTrial t = read_trial(report, layout, {1, 1}, 100.0);
  EXPECT_EQ(t.utilisation, (std::vector<double>{0.3, 0.9}));
  ReplicaTargets targets;
  targets.throughput = 100.0;
  EXPECT_EQ(grow(t, targets), (std::vector<int>{1, 2})); // the busier prefill pool grows
}

std::vector<std::vector<std::string>> read_csv(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::stringstream s(line);
    for (std::string cell; std::getline(s, cell, ',');) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

/** Runs plan-replicas on dir/pipeline.json (two_stage_pipeline's stages) for 600 items/s with a p99 of 80 ms into
 * dir/plan; checks that it succeeds with tokenise on 1 node and infer on 4, and returns plan.json. */
json plan_for_600(const std::filesystem::path& dir, CliResult& r) {
  r = run_cli({"plan-replicas", (dir / "pipeline.json").string(), "--throughput", "600", "--p99", "80ms", "--out",
               (dir / "plan").string(), "--jobs", "2"},
              dir);
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  if (r.exit_code != 0) return json::object();
  const json plan = json::parse(read_file(dir / "plan" / "plan.json"));
  EXPECT_EQ(plan["workload"]["stages"][0]["pool"]["nodes"], 1) << r.out;
  EXPECT_EQ(plan["workload"]["stages"][1]["pool"]["nodes"], 4) << r.out;
  return plan;
}

TEST(ReplicaPlanCli, FindsTheFewestNodesThatMeetTheTargets) {
  // 600 items/s: tokenise (4 x 500/s per node) needs one node; infer (2 x 100/s per node) needs at least 4 nodes for
  // a utilisation below 1 (3 would be 100% busy). With 8 servers at 75%, M/M/8: Erlang C gives P(wait) 0.357, waits
  // exponential at rate 8·100 - 600 = 200/s, service at 100/s; the sojourn's p99 is 51 ms (its tail, integrated:
  // P(T > 50 ms) = 0.0115, P(T > 60 ms) = 0.0042), so a p99 of 80 ms end to end is met with 4 nodes, missed with 3.
  const std::filesystem::path dir = temp_dir();
  {
    std::ofstream out(dir / "pipeline.json");
    out << two_stage_pipeline().dump(2);
  }
  CliResult r;
  const json plan = plan_for_600(dir, r);
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(plan["cluster"]["nodes"], 5);
  EXPECT_EQ(plan["workload"]["arrivals"]["rate"], 600.0);
  // Every trial is in trials.csv; the growth reached 1/4 through the infer stage only, and 1/3 missed.
  const auto trials = read_csv(dir / "plan" / "trials.csv");
  ASSERT_GE(trials.size(), 5u);
  EXPECT_EQ(trials[0][0], "phase");
  bool three_missed = false;
  for (std::size_t i = 1; i < trials.size(); ++i) {
    EXPECT_EQ(trials[i][1], "1") << "tokenise never grows";
    if (trials[i][2] == "3") three_missed = trials[i].back() == "false";
  }
  EXPECT_TRUE(three_missed);
  // The curve: 7 loads, the answered rate follows the offered one below saturation, p99 grows with the load.
  const auto curve = read_csv(dir / "plan" / "curve.csv");
  ASSERT_EQ(curve.size(), 8u);
  EXPECT_NEAR(std::stod(curve[1][4]), 150.0, 15.0);
  EXPECT_LT(std::stod(curve[1][6]), std::stod(curve[7][6]));
  EXPECT_NE(r.out.find("plan: tokenise 1 node (4 replicas); infer 4 nodes (8 replicas); 5 nodes in all"),
            std::string::npos)
      << r.out;
}

TEST(ReplicaPlanCli, ATracePlanReplaysTheTraceAtTheTargetRate) {
  // The two-stage pipeline fed by a trace of 20,000 arrivals 10 ms apart (100/s of its own): 600 items/s asked
  // replays it 6x faster. Regular arrivals queue less than Poisson ones, so the M/M/8 plan (tokenise 1 node, infer
  // 4: 75% busy) meets the 80 ms p99 again, and 3 infer nodes (100% busy) cannot.
  const std::filesystem::path dir = temp_dir();
  {
    std::ofstream csv(dir / "arrivals.csv");
    csv << "arrival_s\n";
    for (int i = 0; i < 20000; ++i) csv << i * 0.01 << "\n";
    std::ofstream(dir / "pipeline.json") << trace_pipeline("arrivals.csv").dump(2);
  }
  CliResult r;
  const json plan = plan_for_600(dir, r);
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NEAR(plan["workload"]["arrivals"]["trace"]["speed"].get<double>(), 6.0, 1e-9);
  EXPECT_FALSE(plan["workload"]["arrivals"].contains("rate"));
  // The trace's path, relative to the scenario's folder, is rewritten to hold from plan.json's.
  EXPECT_EQ(plan["workload"]["arrivals"]["trace"]["csv"], "../arrivals.csv");
  // The curve's loads are the trace at their fractions of 6x: the answered rate follows the offered one.
  const auto curve = read_csv(dir / "plan" / "curve.csv");
  ASSERT_EQ(curve.size(), 8u);
  EXPECT_NEAR(std::stod(curve[1][4]), 150.0, 15.0);
}

TEST(ReplicaPlanCli, AClosedLoopIsPlannedWithItsClients) {
  // 80 clients thinking 100 ms ask at most 800 items/s; 600 answered with a p99 of 80 ms needs the infer stage's 8
  // servers at least 75% busy (4 nodes: the open-loop plan's M/M/8), and the clients, not a rate, are in plan.json.
  const std::filesystem::path dir = temp_dir();
  json doc = two_stage_pipeline("closed");
  doc["workload"]["arrivals"] = {
      {"process", "closed"}, {"clients", 80}, {"think_time", {{"distribution", "exponential"}, {"mean", "100ms"}}}};
  std::ofstream(dir / "pipeline.json") << doc.dump(2);
  const CliResult r = run_cli({"plan-replicas", (dir / "pipeline.json").string(), "--throughput", "600", "--p99",
                               "80ms", "--out", (dir / "plan").string(), "--jobs", "2"},
                              dir);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const json plan = json::parse(read_file(dir / "plan" / "plan.json"));
  EXPECT_EQ(plan["workload"]["arrivals"]["clients"], 80);
  EXPECT_FALSE(plan["workload"]["arrivals"].contains("rate"));
  EXPECT_GE(plan["workload"]["stages"][1]["pool"]["nodes"].get<int>(), 4) << r.out;
  // The curve scales the clients: at 25% load 20 clients answer about a quarter as much.
  const auto curve = read_csv(dir / "plan" / "curve.csv");
  ASSERT_EQ(curve.size(), 8u);
  EXPECT_LT(std::stod(curve[1][4]), 0.3 * std::stod(curve[5][4]));
  // More than 80 clients thinking 100 ms can ask: refused before any simulation.
  const CliResult bad = run_cli({"plan-replicas", (dir / "pipeline.json").string(), "--throughput", "900", "--p99",
                                 "80ms", "--out", (dir / "plan2").string()},
                                dir);
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.err.find("--throughput"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("below 800 items/s"), std::string::npos) << bad.err;
}

TEST(ReplicaPlanCli, UnreachableTargetsFailWithTheirReason) {
  const std::filesystem::path dir = temp_dir();
  {
    std::ofstream out(dir / "pipeline.json");
    out << two_stage_pipeline().dump(2);
  }
  // A p99 below the fixed 2 ms of tokenise plus the infer stage's service can never be met.
  const CliResult r = run_cli({"plan-replicas", (dir / "pipeline.json").string(), "--throughput", "100", "--p99", "1ms",
                               "--max-nodes", "2", "--out", (dir / "plan").string()},
                              dir);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.err.find("no plan of at most 2 nodes per stage meets"), std::string::npos) << r.err;
  const CliResult bad = run_cli({"plan-replicas", (dir / "pipeline.json").string(), "--throughput", "100", "--p99",
                                 "fast", "--out", (dir / "plan").string()},
                                dir);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--p99"), std::string::npos) << bad.err;
}

TEST(ReplicaPlan, PoolsOfReplicasTakeTheFewestNodesThatHoldThemEvenly) {
  EXPECT_EQ(pool_shape(3, 4), (std::pair<int, int>{1, 3}));
  EXPECT_EQ(pool_shape(16, 16), (std::pair<int, int>{1, 16}));
  EXPECT_EQ(pool_shape(18, 16), (std::pair<int, int>{2, 9}));
  EXPECT_FALSE(pool_shape(17, 16).has_value()); // 2 nodes cannot hold 8.5 each
  EXPECT_EQ(replica_counts(1, 20, 4), (std::vector<int>{1, 2, 3, 4, 6, 8, 9, 12, 16, 20}));
  EXPECT_EQ(replica_counts(5, 5, 4), (std::vector<int>{}));
  EXPECT_EQ(fewest_replicas(8, 0.75), 7); // 6 busy: at least 7 for a utilisation below 1
  EXPECT_EQ(fewest_replicas(4, 0.3), 2);
  EXPECT_EQ(fewest_replicas(4, 1.0), 4);
  EXPECT_EQ(fewest_replicas(1, 0.5), 1);
  ReplicaLayout layout;
  layout.names = {"a", "b"};
  layout.replicas_per_node = {4, 2};
  const std::vector<Override> o = replica_overrides(layout, {1, 3}, {3, 2}, 100.0);
  ASSERT_EQ(o.size(), 6u);
  EXPECT_EQ(o[0].pointer, "/workload/stages/0/pool/nodes");
  EXPECT_EQ(o[1].pointer, "/workload/stages/1/pool/nodes");
  EXPECT_EQ(o[2].pointer, "/workload/stages/0/pool/replicas_per_node");
  EXPECT_EQ(o[2].value, 3);
  EXPECT_EQ(o[3].pointer, "/workload/stages/1/pool/replicas_per_node");
  EXPECT_EQ(o[4].pointer, "/cluster/nodes");
  EXPECT_EQ(o[4].value, 4);
  EXPECT_EQ(o[5].pointer, "/workload/arrivals/rate");
}

TEST(ReplicaPlanCli, ReplicaGranularityKeepsTheFewestReplicas) {
  // The node plan of FindsTheFewestNodesThatMeetTheTargets (tokenise 1 node of 4, infer 4 nodes of 2), refined by
  // replicas: tokenise at 600/s is 30% busy on 4 replicas of 2 ms, so 2 replicas (60%) are the fewest that can serve
  // it, and they meet the 80 ms p99 (an M/D/2 at 0.6 waits about 1 ms). infer keeps 8: 7 (the fewest below 100%) does
  // not split evenly over 4 nodes of at most 2, and 6 would be 100% busy.
  const std::filesystem::path dir = temp_dir();
  std::ofstream(dir / "pipeline.json") << two_stage_pipeline().dump(2);
  const CliResult r = run_cli({"plan-replicas", (dir / "pipeline.json").string(), "--throughput", "600", "--p99",
                               "80ms", "--granularity", "replica", "--out", (dir / "plan").string(), "--jobs", "2"},
                              dir);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const json plan = json::parse(read_file(dir / "plan" / "plan.json"));
  EXPECT_EQ(plan["workload"]["stages"][0]["pool"]["nodes"], 1);
  EXPECT_EQ(plan["workload"]["stages"][0]["pool"]["replicas_per_node"], 2);
  EXPECT_EQ(plan["workload"]["stages"][1]["pool"]["nodes"], 4);
  EXPECT_EQ(plan["workload"]["stages"][1]["pool"]["replicas_per_node"], 2);
  EXPECT_NE(r.out.find("plan: tokenise 1 node (2 replicas); infer 4 nodes (8 replicas); 5 nodes in all"),
            std::string::npos)
      << r.out;
  // The refinement's trials: tokenise at 3 then 2 replicas (bisection over 2..3), both meeting; replicas per node in
  // the columns before `meets`.
  const auto trials = read_csv(dir / "plan" / "trials.csv");
  ASSERT_GE(trials.size(), 2u);
  EXPECT_EQ(trials[0][trials[0].size() - 3], "replicas_per_node_tokenise");
  std::vector<std::string> refined;
  for (std::size_t i = 1; i < trials.size(); ++i)
    if (trials[i][0] == "refine") {
      refined.push_back(trials[i][trials[i].size() - 3]);
      EXPECT_EQ(trials[i].back(), "true");
    }
  EXPECT_EQ(refined, (std::vector<std::string>{"3", "2"}));
  // The curve runs the refined plan: at 25% load tokenise's 2 replicas are 15% busy.
  const auto curve = read_csv(dir / "plan" / "curve.csv");
  ASSERT_EQ(curve.size(), 8u);
  EXPECT_NEAR(std::stod(curve[1][8]), 0.15, 0.02);
  // An unknown granularity is refused.
  const CliResult bad = run_cli({"plan-replicas", (dir / "pipeline.json").string(), "--throughput", "600", "--p99",
                                 "80ms", "--granularity", "gpu"},
                                dir);
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.err.find("--granularity"), std::string::npos) << bad.err;
}

} // namespace
} // namespace partsim::test
