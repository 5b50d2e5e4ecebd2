// The parameter-server strategy (stale gradients): the parser's errors, the statistical-efficiency model, and whole
// runs held to closed forms and to the policies' bounds. Each TEST runs at most one simulation in its process
// (SimGrid 3.32 allows one engine per process); tests that compare two runs run the CLI.
#include "partsim/engine/ps_engine.hpp"
#include "partsim/ps/ps_plan.hpp"
#include "partsim/ps/ps_report.hpp"
#include "partsim/report/report_document.hpp"
#include "test_support.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>

namespace partsim {
namespace {

using nlohmann::json;

constexpr double kBandwidth = 25e9; // the base scenario's NIC, each direction
constexpr double kLatency = 2e-6;   // node to node
constexpr double kPeak = 100e12;    // the base scenario's GPU

/** `workers` + `shards` nodes of one GPU each; a data job of `samples` samples of 1 GFLOP per global step,
 * `gradient_bytes` of gradients (and parameters), `steps` steps, a 1 ms update. */
json ps_scenario(int workers, int shards, const json& strategy, std::int64_t steps = 10, std::int64_t samples = 1000,
                 const std::string& gradient_bytes = "100MB") {
  json doc = test::base_scenario(workers + shards, 1);
  doc["workload"] = {{"kind", "data_job"},
                     {"samples", samples},
                     {"flop_per_sample", "1GFLOP"},
                     {"gradient_bytes", gradient_bytes},
                     {"iterations", steps}};
  doc["strategy"] = strategy;
  doc["strategy"]["kind"] = "parameter_server";
  doc["strategy"]["server_shards"] = shards;
  if (!doc["strategy"].contains("update_time")) doc["strategy"]["update_time"] = "1ms";
  return doc;
}

ReportParameterServer run(const json& doc) {
  const Scenario scenario = test::parse(doc);
  const PsPlan plan = build_ps_plan(scenario);
  const PsRunResult result = simulate_parameter_server(scenario, plan);
  return make_ps_section(scenario, plan, result);
}

/** The same through the CLI (for tests that compare runs): report.json's `parameter_server`. */
json run_cli(const json& doc, const std::vector<std::string>& extra = {}, std::filesystem::path dir = {}) {
  if (dir.empty()) dir = test::temp_dir();
  {
    std::ofstream out(dir / "ps.json");
    out << doc.dump(2);
  }
  std::vector<std::string> args{"run", (dir / "ps.json").string(), "--json", "--no-files", "--no-progress"};
  args.insert(args.end(), extra.begin(), extra.end());
  const test::CliResult r = test::run_cli(args, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (r.exit_code != 0) return json::object();
  return json::parse(r.out);
}

void show(const char* what, double measured, double expected) {
  std::printf("%s: simulated %.9g, closed form %.9g, error %+.3g\n", what, measured, expected,
              (measured - expected) / expected);
}

/** Sync with W identical workers and one shard, no jitter: every step is the same sequence of phases, none
 * overlapping: W pull requests share the shard's inbound link, W parameter replies its outbound link, the compute,
 * W gradients its inbound link, then the shard applies W gradients one after the other. */
double sync_step_closed_form(int workers, double compute) {
  const double w = workers;
  const double request = kLatency + w * 64.0 / kBandwidth;
  const double pull = kLatency + w * 100e6 / kBandwidth;
  const double push = kLatency + w * 100e6 / kBandwidth;
  return request + pull + compute + push + w * 1e-3;
}

// --- parsing -----------------------------------------------------------------------------------------------------

TEST(ParameterServer, ParsesDefaultsAndPlacement) {
  const Scenario s = test::parse(ps_scenario(3, 2, {{"policy", "ssp"}}));
  const auto& ps = std::get<ParameterServer>(s.strategy);
  EXPECT_EQ(ps.policy, PsPolicy::Ssp);
  EXPECT_EQ(ps.staleness_bound, 2);
  EXPECT_EQ(ps.workers, 3);
  EXPECT_EQ(ps.worker_speeds, std::vector<double>(3, 1.0));
  const PsPlan plan = build_ps_plan(s);
  EXPECT_EQ(plan.worker_gpu, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(plan.shard_gpu, (std::vector<int>{3, 4}));
  EXPECT_DOUBLE_EQ(plan.nominal_step_time, 1000.0 / 3.0 * 1e9 / kPeak);
  EXPECT_DOUBLE_EQ(plan.shard_gradient_bytes(), 50e6);
  EXPECT_DOUBLE_EQ(plan.shard_update_time(), 0.5e-3);
}

TEST(ParameterServer, LocalSgdPushesEveryHStepsAndAtTheEnd) {
  json doc = ps_scenario(2, 1, {{"policy", "local_sgd"}, {"local_steps", 4}}, 10);
  const PsPlan plan = build_ps_plan(test::parse(doc));
  EXPECT_EQ(plan.pushes_per_worker(), 3);                       // after steps 3, 7 and 9
  EXPECT_DOUBLE_EQ(ps_planned_messages(plan), 2 * (3 * 2 + 3)); // 3 pulls of 2 messages, 3 pushes, per worker
  EXPECT_DOUBLE_EQ(ps_planned_sleeps(plan), 2 * (10 + 3));      // 10 computes, 3 updates, per worker
  EXPECT_TRUE(plan.pulls_at(0));
  EXPECT_TRUE(plan.pulls_at(8));
  EXPECT_FALSE(plan.pulls_at(9));
  EXPECT_TRUE(plan.pushes_at(9));
}

TEST(ParameterServer, RejectsBadInputWithItsPointer) {
  struct Case {
    json strategy;
    std::string pointer;
  };
  const std::vector<Case> cases{
      {{{"policy", "hogwild"}}, "/strategy/policy"},
      {{{"policy", "ssp"}, {"staleness_bound", -1}}, "/strategy/staleness_bound"},
      {{{"local_steps", 0}}, "/strategy/local_steps"},
      {{{"workers", 4}}, "/strategy/workers"},
      {{{"worker_speeds", {1, 2}}}, "/strategy/worker_speeds"},
      {{{"worker_speeds", {1, 0, 1}}}, "/strategy/worker_speeds/1"},
      {{{"jitter", {{"distribution", "lognormal"}}}}, "/strategy/jitter/cv"},
      {{{"jitter", {{"distribution", "fixed"}, {"cv", 0.2}}}}, "/strategy/jitter/cv"},
      {{{"update_time", "-1s"}}, "/strategy/update_time"},
      {{{"typo", 1}}, "/strategy/typo"},
      {{{"statistical_efficiency", {{"points", {{{"mean_staleness", 0}, {"steps", 10}}}}}}},
       "/strategy/statistical_efficiency/source"},
      {{{"statistical_efficiency", {{"source", ""}, {"points", json::array()}}}},
       "/strategy/statistical_efficiency/source"},
      {{{"statistical_efficiency", {{"source", "x"}, {"points", {{{"mean_staleness", 0}, {"steps", 10}}}}}}},
       "/strategy/statistical_efficiency/points"},
      {{{"statistical_efficiency",
         {{"source", "x"},
          {"points", {{{"mean_staleness", 2}, {"steps", 10}}, {{"mean_staleness", 1}, {"steps", 20}}}}}}},
       "/strategy/statistical_efficiency/points/1/mean_staleness"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.strategy.dump());
    const InputError e = test::input_error([&] { test::parse(ps_scenario(3, 1, c.strategy)); });
    EXPECT_EQ(e.pointer(), c.pointer) << e.what();
  }
  json no_gradients = ps_scenario(3, 1, json::object());
  no_gradients["workload"].erase("gradient_bytes");
  EXPECT_EQ(test::input_error([&] { test::parse(no_gradients); }).pointer(), "/workload/gradient_bytes");
  json collective = ps_scenario(3, 1, json::object());
  collective["workload"] = {{"kind", "collective"}, {"operation", "all_reduce"}, {"bytes", "1MB"}};
  EXPECT_EQ(test::input_error([&] { test::parse(collective); }).pointer(), "/strategy/kind");
  for (const int shards : {0, 4}) { // none, or every node a shard
    json doc = ps_scenario(3, 1, json::object());
    doc["strategy"]["server_shards"] = shards;
    EXPECT_EQ(test::input_error([&] { test::parse(doc); }).pointer(), "/strategy/server_shards") << shards;
  }
  json speed_changes = ps_scenario(3, 1, json::object());
  speed_changes["cluster"]["speed_changes"] = {{{"node", 0}, {"points", {{0, 1.0}, {1, 0.5}}}}};
  EXPECT_EQ(test::input_error([&] { test::parse(speed_changes); }).pointer(), "/cluster/speed_changes");
}

TEST(ParameterServer, StatisticalEfficiencyIsLinearBetweenPoints) {
  StatisticalEfficiency m{"test", "", {{0.0, 100.0}, {4.0, 200.0}, {8.0, 600.0}}};
  EXPECT_DOUBLE_EQ(*m.steps_needed(0.0), 100.0);
  EXPECT_DOUBLE_EQ(*m.steps_needed(2.0), 150.0);
  EXPECT_DOUBLE_EQ(*m.steps_needed(6.0), 400.0);
  EXPECT_DOUBLE_EQ(*m.steps_needed(8.0), 600.0);
  EXPECT_FALSE(m.steps_needed(8.5));
  EXPECT_FALSE(m.steps_needed(-0.1));
}

// --- whole runs --------------------------------------------------------------------------------------------------

TEST(ParameterServer, SyncOneWorkerMatchesItsClosedForm) {
  const ReportParameterServer r = run(ps_scenario(1, 1, {{"policy", "sync"}}, 10));
  const double expected = 10 * sync_step_closed_form(1, 1000 * 1e9 / kPeak);
  show("sync, 1 worker: makespan", r.makespan, expected);
  EXPECT_NEAR(r.makespan, expected, expected * 1e-9);
  EXPECT_EQ(r.staleness_max, 0);
  // Alone, the worker still waits at the barrier for its own gradient to be applied before each later step.
  EXPECT_NEAR(r.blocked, 9 * 1e-3, 1e-12);
}

TEST(ParameterServer, SyncFourWorkersMatchesItsClosedForm) {
  const ReportParameterServer r = run(ps_scenario(4, 1, {{"policy", "sync"}}, 10));
  const double expected = 10 * sync_step_closed_form(4, 250 * 1e9 / kPeak);
  show("sync, 4 workers: makespan", r.makespan, expected);
  EXPECT_NEAR(r.makespan, expected, expected * 1e-9);
  EXPECT_NEAR(r.steps_per_s, 10 / expected, 10 / expected * 1e-9);
  EXPECT_NEAR(r.samples_per_s, 10 * 1000 / expected, 10 * 1000 / expected * 1e-9);
  EXPECT_EQ(r.staleness_max, 0);
  EXPECT_EQ(r.max_lead, 0);
  EXPECT_EQ(r.shard_figures.at(0).version, 10);
  // Inbound: 10 steps of 4 gradients and 4 requests.
  EXPECT_DOUBLE_EQ(r.shard_figures.at(0).bytes_received, 10 * 4 * (100e6 + 64));
}

TEST(ParameterServer, SspWithBoundZeroTimesExactlyAsSync) {
  // Heterogeneous workers with jitter: the barrier matters. Two runs, so through the CLI.
  json strategy = {{"worker_speeds", {1.0, 0.7, 1.3, 0.5}},
                   {"jitter", {{"distribution", "lognormal"}, {"cv", 0.3}}},
                   {"staleness_bound", 0}};
  json sync = ps_scenario(4, 2, strategy, 12);
  sync["strategy"]["policy"] = "sync";
  json ssp = sync;
  ssp["strategy"]["policy"] = "ssp";
  const json a = run_cli(sync).value("parameter_server", json::object());
  const json b = run_cli(ssp).value("parameter_server", json::object());
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  for (const char* key : {"makespan_s", "steps_per_s", "samples_per_s", "blocked_s", "max_lead_steps"})
    EXPECT_EQ(a.at(key), b.at(key)) << key;
  EXPECT_GT(a.at("blocked_s").get<double>(), 0.0);
  for (std::size_t w = 0; w < 4; ++w)
    for (const char* key : {"compute_s", "pull_s", "push_s", "blocked_s", "finish_s"})
      EXPECT_EQ(a.at("workers_detail").at(w).at(key), b.at("workers_detail").at(w).at(key)) << key << " " << w;
  for (std::size_t k = 0; k < 2; ++k)
    for (const char* key : {"bytes_received", "bytes_sent", "gradients"})
      EXPECT_EQ(a.at("shards_detail").at(k).at(key), b.at("shards_detail").at(k).at(key)) << key << " " << k;
  // The same timing; the versions differ only in how they are counted: sync aggregates a step's 4 gradients into one
  // version (staleness 0), ssp counts each, so a gradient sees the others of its step: at most workers - 1 = 3.
  EXPECT_EQ(a.at("staleness_max"), 0);
  EXPECT_LE(b.at("staleness_max").get<int>(), 3);
}

TEST(ParameterServer, SspNeverExceedsItsBound) {
  constexpr int kBound = 2;
  constexpr int kWorkers = 6;
  json strategy = {{"policy", "ssp"},
                   {"staleness_bound", kBound},
                   {"worker_speeds", {1.0, 1.0, 1.0, 1.0, 1.0, 0.4}},
                   {"jitter", {{"distribution", "gamma"}, {"cv", 0.5}}}};
  // Compute-bound (1 MB of gradients): the slow worker's pace is what holds the others.
  const ReportParameterServer r = run(ps_scenario(kWorkers, 2, strategy, 40, 600, "1MB"));
  // The bound is binding (a slow worker holds the others), and never passed: no worker starts a step more than s
  // steps ahead of the slowest worker's completed steps, and no gradient is more than (W - 1)(2s + 1) updates stale.
  EXPECT_EQ(r.max_lead, kBound);
  EXPECT_GT(r.blocked, 0.0);
  for (const ReportPsWorker& w : r.worker_figures) {
    EXPECT_LE(w.max_lead, kBound) << "worker " << w.worker;
    EXPECT_LE(w.staleness_max, (kWorkers - 1) * (2 * kBound + 1)) << "worker " << w.worker;
  }
  EXPECT_GT(r.staleness_max, kWorkers - 1); // staler than ssp with s = 0 can be
  std::printf("ssp s=%d: max lead %lld, staleness mean %.4g max %lld, blocked %.4g worker-s\n", kBound,
              static_cast<long long>(r.max_lead), r.staleness_mean, static_cast<long long>(r.staleness_max), r.blocked);
}

TEST(ParameterServer, SspBoundHoldsOverSeeds) {
  // Bound 1, a persistent straggler and heavy jitter, five seeds: one run each, so through the CLI.
  constexpr int kWorkers = 5;
  json doc = ps_scenario(kWorkers, 1,
                         {{"policy", "ssp"},
                          {"staleness_bound", 1},
                          {"worker_speeds", {1.0, 1.0, 0.9, 1.1, 0.6}},
                          {"jitter", {{"distribution", "gamma"}, {"cv", 0.8}}}},
                         30, 500, "2MB");
  const std::filesystem::path dir = test::temp_dir();
  for (int seed = 1; seed <= 5; ++seed) {
    SCOPED_TRACE(seed);
    const json r = run_cli(doc, {"--set", fmt::format("/run/seed={}", seed)}, dir).value("parameter_server", json());
    ASSERT_TRUE(r.is_object());
    EXPECT_EQ(r.at("max_lead_steps"), 1);
    EXPECT_LE(r.at("staleness_max").get<int>(), (kWorkers - 1) * 3);
    std::int64_t steps = 0;
    for (const json& w : r.at("workers_detail")) {
      EXPECT_LE(w.at("max_lead_steps").get<int>(), 1);
      steps += w.at("steps").get<std::int64_t>();
    }
    EXPECT_EQ(steps, 30 * kWorkers) << "the shared budget, all taken";
  }
}

TEST(ParameterServer, AsyncHomogeneousStalenessAveragesWorkersMinusOne) {
  constexpr int kWorkers = 8;
  // Compute-bound (1 MB of gradients) with 10% compute jitter, so that the workers drift out of phase: each
  // worker's gradient then finds the other workers' gradients of one cycle applied since its pull. (Workers that
  // stay in lock step, all pushing at once, see 0 to W - 1: half as much.)
  json strategy = {{"policy", "async"}, {"jitter", {{"distribution", "lognormal"}, {"cv", 0.1}}}};
  const ReportParameterServer r = run(ps_scenario(kWorkers, 2, strategy, 400, 8000, "1MB"));
  show("async, 8 homogeneous workers: mean staleness", r.staleness_mean, kWorkers - 1);
  EXPECT_NEAR(r.staleness_mean, kWorkers - 1, 0.1 * (kWorkers - 1));
  EXPECT_DOUBLE_EQ(r.blocked, 0.0);
}

TEST(ParameterServer, SameSeedSameReportOtherSeedOtherReport) {
  json doc = ps_scenario(4, 2,
                         {{"policy", "ssp"},
                          {"staleness_bound", 1},
                          {"worker_speeds", {1.0, 0.8, 1.2, 1.0}},
                          {"jitter", {{"distribution", "lognormal"}, {"cv", 0.3}}}},
                         20);
  // The same file (the report names it), run twice.
  const std::filesystem::path dir = test::temp_dir();
  const json a = run_cli(doc, {}, dir);
  const json b = run_cli(doc, {}, dir);
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a.dump(2), b.dump(2));
  const json c = run_cli(doc, {"--set", "/run/seed=2"}, dir);
  ASSERT_FALSE(c.empty());
  EXPECT_NE(a.at("parameter_server").at("makespan_s"), c.at("parameter_server").at("makespan_s"));
}

TEST(ParameterServer, ReportRoundTripsAndSaysItHasNoEfficiencyModel) {
  const Scenario scenario = test::parse(ps_scenario(2, 1, {{"policy", "async"}}, 5));
  const PsPlan plan = build_ps_plan(scenario);
  const ReportDocument doc = make_ps_report_document(scenario, plan, simulate_parameter_server(scenario, plan));
  const json j = to_json(doc);
  EXPECT_EQ(to_json(report_document_from_json(j, "test")), j);
  const json& ps = j.at("parameter_server");
  EXPECT_FALSE(ps.contains("statistical_efficiency"));
  EXPECT_NE(ps.at("statistical_efficiency_note").get<std::string>().find("no statistical-efficiency model"),
            std::string::npos);
  EXPECT_EQ(j.at("summary").at("gpus"), 3);
}

TEST(ParameterServer, EfficiencyModelGivesTheTimeToTarget) {
  json strategy = {{"policy", "async"},
                   {"statistical_efficiency",
                    {{"source", "test points"},
                     {"target", "a loss"},
                     {"points", {{{"mean_staleness", 0}, {"steps", 100}}, {{"mean_staleness", 10}, {"steps", 300}}}}}}};
  const ReportParameterServer r = run(ps_scenario(3, 1, strategy, 20));
  ASSERT_TRUE(r.statistical_efficiency);
  const ReportPsEfficiency& e = *r.statistical_efficiency;
  ASSERT_TRUE(e.steps_needed);
  EXPECT_DOUBLE_EQ(*e.steps_needed, 100 + 20 * r.staleness_mean);
  EXPECT_DOUBLE_EQ(*e.time_to_target, *e.steps_needed / r.steps_per_s);
  EXPECT_NE(r.statistical_efficiency_note.find("test points"), std::string::npos);
}

TEST(ParameterServer, LocalSgdWithOneLocalStepTimesExactlyAsSync) {
  json strategy = {{"worker_speeds", {1.0, 0.6, 1.4}}, {"local_steps", 1}};
  json sync = ps_scenario(3, 1, strategy, 8);
  sync["strategy"]["policy"] = "sync";
  json local = sync;
  local["strategy"]["policy"] = "local_sgd";
  const json a = run_cli(sync).value("parameter_server", json::object());
  const json b = run_cli(local).value("parameter_server", json::object());
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  for (const char* key : {"makespan_s", "blocked_s", "staleness_mean", "updates_per_s"})
    EXPECT_EQ(a.at(key), b.at(key)) << key;
}

} // namespace
} // namespace partsim
