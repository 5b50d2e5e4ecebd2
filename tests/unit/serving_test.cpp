// The serving workload: distributions, the parser's errors, and whole runs held to queueing theory (M/M/1, M/M/c,
// M/D/1, M/M/1/K, the interactive response-time law, a saturated pipeline). Each TEST runs at most one simulation in
// its process (SimGrid 3.32 allows one engine per process); tests that need two run the CLI.
#include "partsim/engine/serving_engine.hpp"
#include "partsim/input/workload_library.hpp"
#include "partsim/model/training.hpp"
#include "partsim/report/report_document.hpp"
#include "partsim/serving/serving_report.hpp"
#include "partsim/serving/serving_result.hpp"
#include "partsim/serving/serving_spec.hpp"
#include "test_support.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

namespace partsim {
namespace {

using nlohmann::json;

json stage(const std::string& name, int nodes, int replicas, json service) {
  return {{"name", name}, {"pool", {{"nodes", nodes}, {"replicas_per_node", replicas}}}, {"service", service}};
}

json exponential(const std::string& mean) {
  return {{"distribution", "exponential"}, {"mean", mean}};
}

json fixed(const std::string& mean) {
  return {{"distribution", "fixed"}, {"mean", mean}};
}

/** A serving scenario on `nodes` nodes of one GPU each (the test GPU, a 25 GB/s 2 us star network). */
json serving_scenario(int nodes, json stages, json arrivals, std::int64_t requests, double warmup) {
  json doc = test::base_scenario(nodes, 1);
  doc["workload"] = {
      {"kind", "serving"}, {"stages", stages}, {"arrivals", arrivals}, {"requests", requests}, {"warmup", warmup}};
  doc["strategy"] = {{"kind", "serving"}};
  return doc;
}

json poisson(double rate) {
  return {{"process", "poisson"}, {"rate", rate}};
}

ReportServing run(const json& doc) {
  const Scenario scenario = test::parse(doc);
  const ServingRunResult result = simulate_serving(scenario);
  return make_serving_section(std::get<ServingWorkload>(scenario.workload), result);
}

double relative_error(double value, double expected) {
  return std::abs(value - expected) / expected;
}

/** Prints a measured figure against its closed form (visible with ctest -V). */
void show(const char* what, double measured, double expected) {
  std::printf("%s: simulated %.6g, closed form %.6g, error %+.3f%%\n", what, measured, expected,
              100.0 * (measured - expected) / expected);
}

// --- distributions and closed forms (no simulation) ----------------------------------------------------------

TEST(ServingDistribution, MeanAndCvOfEveryShape) {
  for (DistributionKind kind : {DistributionKind::Exponential, DistributionKind::LogNormal, DistributionKind::Gamma}) {
    for (double cv : {0.5, 2.0}) {
      if (kind == DistributionKind::Exponential && cv != 0.5) continue;
      const TimeDistribution d{kind, 0.01, kind == DistributionKind::Exponential ? 1.0 : cv, nullptr};
      Xoshiro256StarStar rng(7);
      const int n = 2'000'000;
      double sum = 0, sum2 = 0;
      for (int i = 0; i < n; ++i) {
        const double x = sample(d, rng);
        ASSERT_GE(x, 0.0);
        sum += x;
        sum2 += x * x;
      }
      const double mean = sum / n;
      const double sd = std::sqrt(sum2 / n - mean * mean);
      EXPECT_NEAR(mean, d.mean, 0.01 * d.mean) << enum_name(kind) << " cv " << d.cv;
      EXPECT_NEAR(sd / mean, d.cv, 0.05 * d.cv) << enum_name(kind) << " cv " << d.cv;
    }
  }
  Xoshiro256StarStar rng(1);
  EXPECT_EQ(sample({DistributionKind::Fixed, 0.25, 0.0, nullptr}, rng), 0.25);
}

TEST(ServingClosedForms, AgreeWithEachOther) {
  // One server: Erlang C is rho, M/M/c is M/M/1.
  EXPECT_NEAR(queueing::erlang_c(1, 80, 100), 0.8, 1e-12);
  EXPECT_NEAR(queueing::mmc_time_in_system(1, 80, 100), queueing::mm1_time_in_system(80, 100), 1e-12);
  // A textbook value: c = 2, a = 1 erlang: C = 1/3.
  EXPECT_NEAR(queueing::erlang_c(2, 1, 1), 1.0 / 3.0, 1e-12);
  // M/D/1 waits half as long in queue as M/M/1.
  EXPECT_NEAR(queueing::md1_time_in_system(80, 100) - 0.01, (queueing::mm1_time_in_system(80, 100) - 0.01) / 2, 1e-12);
  EXPECT_NEAR(queueing::mm1k_loss(1, 1, 1), 0.5, 1e-12);
}

TEST(ServingClosedForms, GammaArrivalsWithCvOneAreMM1) {
  EXPECT_NEAR(queueing::gm1_gamma_time_in_system(80, 1.0, 100), queueing::mm1_time_in_system(80, 100), 1e-9);
  // Burstier arrivals wait longer, more regular ones less (D/M/1 as cv -> 0).
  EXPECT_GT(queueing::gm1_gamma_time_in_system(80, 2.0, 100), queueing::mm1_time_in_system(80, 100));
  EXPECT_LT(queueing::gm1_gamma_time_in_system(80, 0.5, 100), queueing::mm1_time_in_system(80, 100));
}

TEST(ServingStatistics, PercentQuantilesAreTheCdf) {
  std::vector<double> values;
  for (int i = 200; i >= 0; --i) values.push_back(i * 0.5); // 0, 0.5, .., 100 in reverse
  const std::vector<double> q = percent_quantiles(values);
  ASSERT_EQ(q.size(), 101u);
  for (std::size_t i = 0; i <= 100; ++i) EXPECT_DOUBLE_EQ(q[i], static_cast<double>(i)) << i;
  EXPECT_TRUE(percent_quantiles({}).empty());
}

TEST(ServingStatistics, PercentilesAndBatchMeans) {
  std::vector<double> v;
  for (int i = 0; i < 1000; ++i) v.push_back(i);
  const LatencySummary s = summarize_latency(v);
  EXPECT_EQ(s.count, 1000u);
  EXPECT_DOUBLE_EQ(s.mean, 499.5);
  EXPECT_DOUBLE_EQ(s.p50, 499.5);
  EXPECT_DOUBLE_EQ(s.p99, 989.01);
  EXPECT_DOUBLE_EQ(s.max, 999);
  EXPECT_GT(s.mean_ci, 0.0); // a trend: the batch means differ
}

// --- bad input -------------------------------------------------------------------------------------------

json one_stage_scenario() {
  return serving_scenario(1, json::array({stage("only", 1, 1, exponential("10ms"))}), poisson(50), 1000, 0);
}

TEST(ServingDistribution, EmpiricalTakesItsValuesAlike) {
  const std::filesystem::path path = test::temp_dir() / "times.csv";
  std::ofstream(path) << "t\n0.5\n1.5\n";
  json doc = one_stage_scenario();
  doc["workload"]["stages"][0]["service"] = {{"distribution", "empirical"}, {"csv", path.string()}, {"column", "t"}};
  const TimeDistribution d = std::get<ServingWorkload>(test::parse(doc).workload).stages[0].service;
  EXPECT_DOUBLE_EQ(d.mean, 1.0);
  EXPECT_DOUBLE_EQ(d.cv, 0.5);
  Xoshiro256StarStar rng(3);
  int high = 0;
  for (int i = 0; i < 100'000; ++i) {
    const double x = sample(d, rng);
    ASSERT_TRUE(x == 0.5 || x == 1.5);
    high += x == 1.5 ? 1 : 0;
  }
  EXPECT_NEAR(high / 1e5, 0.5, 0.01);
  // A value that is not a time is refused with its line.
  std::ofstream(path) << "t\n0.5\n-1\n";
  const InputError e = test::input_error([&] { test::parse(doc); });
  EXPECT_EQ(e.pointer(), "/workload/stages/0/service/csv");
  EXPECT_NE(std::string(e.what()).find("line 3"), std::string::npos) << e.what();
}

TEST(ServingInput, ErrorsNameTheField) {
  struct Case {
    std::string pointer;
    json value;
    std::string expected_pointer;
  };
  std::vector<Case> cases{
      {"/workload/stages/0/servce", json{{"distribution", "fixed"}, {"mean", 1}}, "/workload/stages/0/servce"},
      {"/workload/stages/0/pool/nodes", 2, "/workload/stages/0/pool/nodes"},
      {"/workload/stages/0/service", json{{"distribution", "gamma"}, {"mean", "1ms"}}, "/workload/stages/0/service/cv"},
      {"/workload/stages/0/service", json{{"distribution", "fixed"}, {"mean", "1ms"}, {"cv", 1}},
       "/workload/stages/0/service/cv"},
      {"/workload/stages/0/queue", json{{"when_full", "wait"}}, "/workload/stages/0/queue/when_full"},
      {"/workload/stages/0/pool", json{{"nodes", 1}, {"replicas_per_node", 4}, {"cores", 2}},
       "/workload/stages/0/pool/replicas_per_node"},
      {"/workload/stages/0/pool", json{{"nodes", 1}, {"replicas_per_node", 1}, {"speed", 0}},
       "/workload/stages/0/pool/speed"},
      {"/workload/arrivals", json{{"process", "poisson"}}, "/workload/arrivals/rate"},
      {"/workload/arrivals", json{{"process", "closed"}, {"clients", 2}, {"rate", 5}}, "/workload/arrivals/rate"},
      {"/workload/orchestration", json{{"preset", "slurm"}}, "/workload/orchestration/preset"},
      {"/strategy", json{{"kind", "data_parallel"}}, "/strategy/kind"},
  };
  const std::filesystem::path trace = test::temp_dir() / "trace.csv";
  std::ofstream(trace) << "arrival_s,prompt\n0,10\n1,20\n";
  const json trace_arrivals{{"process", "trace"}, {"trace", {{"csv", trace.string()}}}};
  cases.push_back({"/workload/arrivals", json{{"process", "gamma"}, {"rate", 5}}, "/workload/arrivals/cv"});
  cases.push_back(
      {"/workload/arrivals", json{{"process", "poisson"}, {"rate", 5}, {"cv", 2}}, "/workload/arrivals/cv"});
  cases.push_back({"/workload/arrivals", json{{"process", "trace"}}, "/workload/arrivals/trace"});
  json with_rate = trace_arrivals;
  with_rate["rate"] = 5;
  cases.push_back({"/workload/arrivals", with_rate, "/workload/arrivals/rate"});
  json other_column = trace_arrivals;
  other_column["trace"]["time_column"] = "time";
  cases.push_back({"/workload/arrivals", other_column, "/workload/arrivals/trace/time_column"});
  json bad_tokens = trace_arrivals;
  bad_tokens["trace"]["input_tokens_column"] = "arrival_s"; // 0 is not a token count
  cases.push_back({"/workload/arrivals", bad_tokens, "/workload/arrivals/trace/csv"});
  cases.push_back({"/workload/arrivals", json{{"process", "poisson"}, {"rate", 5}, {"trace", trace_arrivals["trace"]}},
                   "/workload/arrivals/trace"});
  cases.push_back({"/workload/requests", 3, "/workload/requests"}); // with the trace below: it has 2 rows
  cases.push_back({"/workload/stages/0/service",
                   json{{"distribution", "empirical"}, {"csv", trace.string()}, {"column", "prompt"}, {"mean", "1s"}},
                   "/workload/stages/0/service/mean"});
  cases.push_back({"/workload/stages/0/service", json{{"distribution", "empirical"}, {"csv", trace.string()}},
                   "/workload/stages/0/service/column"});
  cases.push_back({"/workload/stages/0/service",
                   json{{"distribution", "empirical"}, {"csv", trace.string()}, {"column", "missing"}},
                   "/workload/stages/0/service/column"}); // the key that names the column the file lacks
  cases.push_back({"/workload/stages/0/service",
                   json{{"distribution", "fixed"}, {"mean", "1ms"}, {"csv", trace.string()}},
                   "/workload/stages/0/service/csv"});
  for (const Case& c : cases) {
    json doc = one_stage_scenario();
    if (c.pointer == "/workload/requests") doc["workload"]["arrivals"] = trace_arrivals;
    doc[json::json_pointer(c.pointer)] = c.value;
    const InputError e = test::input_error([&] { test::parse(doc, "pipeline.json"); });
    EXPECT_EQ(e.source(), "pipeline.json") << c.pointer;
    EXPECT_EQ(e.pointer(), c.expected_pointer) << c.pointer << ": " << e.what();
  }
  json doc = one_stage_scenario();
  doc["workload"].erase("requests");
  EXPECT_EQ(test::input_error([&] { test::parse(doc); }).pointer(), "/workload/requests");
  doc = one_stage_scenario();
  doc["workload"]["stages"].push_back(stage("only", 1, 1, exponential("1ms")));
  EXPECT_EQ(test::input_error([&] { test::parse(doc); }).pointer(), "/workload/stages/1/pool/nodes");
  doc["cluster"]["nodes"] = 2;
  EXPECT_EQ(test::input_error([&] { test::parse(doc); }).pointer(), "/workload/stages/1/name");
  // A closed loop of requests that take no time would never reach its duration.
  doc = serving_scenario(1, json::array({stage("only", 1, 1, fixed("0s"))}), {{"process", "closed"}, {"clients", 2}}, 1,
                         0);
  doc["workload"].erase("requests");
  doc["workload"]["duration"] = "1s";
  EXPECT_EQ(test::input_error([&] { test::parse(doc); }).pointer(), "/workload/requests");
  doc["workload"]["stages"][0]["service"]["mean"] = "1ms";
  EXPECT_NO_THROW(test::parse(doc));
}

TEST(ServingInput, TraceErrorsNameTheFileAndLine) {
  const std::filesystem::path dir = test::temp_dir();
  struct Case {
    std::string csv;
    std::vector<std::string> expected;
    std::string key = "csv"; ///< the key the error points at
    json trace = json::object();
  };
  const std::vector<Case> cases{
      {"arrival_s\n0\n2\n1\n", {"line 4", "before the previous row's"}},
      {"arrival_s\n0\nsoon\n", {"line 3", "'soon'", "expected an arrival time"}},
      {"arrival_s\n2023-13-01 00:00:00\n", {"line 2", "expected an arrival time"}},
      {"arrival_s\n", {"no requests"}},
      // A column the header lacks: the key that names it.
      {"when\n1\n", {"line 1", "no column 'arrival_s'", "'when'"}, "time_column"},
      {"arrival_s,in\n1,5\n",
       {"line 1", "no column 'out'"},
       "output_tokens_column",
       {{"input_tokens_column", "in"}, {"output_tokens_column", "out"}}},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::filesystem::path path = dir / fmt::format("trace-{}.csv", i);
    std::ofstream(path) << cases[i].csv;
    json doc = one_stage_scenario();
    json trace = cases[i].trace;
    trace["csv"] = path.string();
    doc["workload"]["arrivals"] = {{"process", "trace"}, {"trace", trace}};
    doc["workload"].erase("requests");
    const InputError e = test::input_error([&] { test::parse(doc, "pipeline.json"); });
    EXPECT_EQ(e.pointer(), "/workload/arrivals/trace/" + cases[i].key) << e.what();
    const std::string what = e.what();
    for (const std::string& part : cases[i].expected) EXPECT_NE(what.find(part), std::string::npos) << what;
    EXPECT_NE(what.find(path.string()), std::string::npos) << what;
  }
  // Datetimes as Azure's traces write them, made relative to the first row.
  const ArrivalTrace t = read_arrival_trace(
      [&] {
        const std::filesystem::path path = dir / "azure.csv";
        std::ofstream(path) << "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                               "2023-11-16 18:15:46.6805900,374,44\n"
                               "2023-11-16 18:15:50.9951690,396,109\n"
                               "2023-11-17 00:00:00,879,1\n";
        return path;
      }(),
      "TIMESTAMP", "ContextTokens", "GeneratedTokens");
  ASSERT_EQ(t.times.size(), 3u);
  EXPECT_EQ(t.times[0], 0.0);
  EXPECT_NEAR(t.times[1], 4.314579, 1e-6);
  EXPECT_NEAR(t.times[2], 5 * 3600 + 44 * 60 + 13.31941, 1e-5);
  EXPECT_EQ(t.input_tokens, (std::vector<std::int64_t>{374, 396, 879}));
  EXPECT_EQ(t.output_tokens, (std::vector<std::int64_t>{44, 109, 1}));
}

TEST(ServingInput, TraceSpeedDividesTheArrivalTimes) {
  const std::filesystem::path path = test::temp_dir() / "trace.csv";
  std::ofstream(path) << "arrival_s\n10\n11\n14\n";
  json doc = one_stage_scenario();
  doc["workload"]["arrivals"] = {{"process", "trace"}, {"trace", {{"csv", path.string()}}}};
  doc["workload"].erase("requests");
  const auto trace_of = [](const json& d) {
    return *std::get<ServingWorkload>(test::parse(d).workload).arrivals.trace;
  };
  const ArrivalTrace normal = trace_of(doc);
  EXPECT_EQ(normal.speed, 1.0);
  EXPECT_EQ(normal.times, (std::vector<double>{0, 1, 4}));
  doc["workload"]["arrivals"]["trace"]["speed"] = 2;
  const ArrivalTrace doubled = trace_of(doc);
  EXPECT_EQ(doubled.speed, 2.0);
  EXPECT_EQ(doubled.times, (std::vector<double>{0, 0.5, 2}));
  EXPECT_NE(describe(std::get<ServingWorkload>(test::parse(doc).workload)).find("trace of 3 requests at 2x"),
            std::string::npos);
  for (const json& bad : {json(0), json(-1), json("fast"), json(1e7)}) {
    doc["workload"]["arrivals"]["trace"]["speed"] = bad;
    const InputError e = test::input_error([&] { test::parse(doc); });
    EXPECT_EQ(e.pointer(), "/workload/arrivals/trace/speed") << e.what();
  }
}

TEST(ServingInput, CliExitsTwoWithOneLine) {
  json doc = one_stage_scenario();
  doc["workload"]["stages"][0]["pool"]["replicas_per_node"] = 0;
  const std::filesystem::path dir = test::temp_dir();
  std::ofstream(dir / "bad.json") << doc.dump(2);
  const test::CliResult r = test::run_cli({"run", "bad.json", "--no-files", "--no-progress"}, dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("bad.json: /workload/stages/0/pool/replicas_per_node"), std::string::npos) << r.err;
}

// --- whole runs against queueing theory --------------------------------------------------------------------

TEST(ServingQueueing, MM1MeanTimeInSystem) {
  const double lambda = 80, mu = 100;
  json doc =
      serving_scenario(1, json::array({stage("only", 1, 1, exponential("10ms"))}), poisson(lambda), 400'000, 200);
  // The time in an M/M/1 is exponential at rate mu - lambda: half the requests within ln 2 / 20 = 34.66 ms.
  const double median = std::log(2.0) / (mu - lambda);
  doc["workload"]["latency_target"] = fmt::format("{}s", median);
  const ReportServing r = run(doc);
  ASSERT_TRUE(r.within_target.has_value());
  show("M/M/1 share within ln 2 / (mu - lambda)", *r.within_target, 0.5);
  EXPECT_NEAR(*r.within_target, 0.5, 0.01);
  EXPECT_NEAR(*r.within_target_per_s, 0.5 * lambda, 0.02 * lambda);
  // Its CDF: the q-quantile is -ln(1 - q) / (mu - lambda); the end points are the smallest and largest.
  ASSERT_EQ(r.latency_quantiles.size(), 101u);
  for (const int q : {10, 50, 90, 99}) {
    const double expected_q = -std::log(1.0 - q / 100.0) / (mu - lambda);
    EXPECT_LT(relative_error(r.latency_quantiles[static_cast<std::size_t>(q)], expected_q), 0.04) << q;
  }
  EXPECT_DOUBLE_EQ(r.latency_quantiles[50], r.latency.p50);
  EXPECT_DOUBLE_EQ(r.latency_quantiles[99], r.latency.p99);
  EXPECT_DOUBLE_EQ(r.latency_quantiles[100], r.latency.max);
  EXPECT_TRUE(std::is_sorted(r.latency_quantiles.begin(), r.latency_quantiles.end()));
  ASSERT_EQ(r.stages[0].latency_quantiles.size(), 101u);
  const double expected = queueing::mm1_time_in_system(lambda, mu);
  show("M/M/1 mean time in system", r.latency.mean, expected);
  EXPECT_LT(relative_error(r.latency.mean, expected), 0.03) << r.latency.mean << " vs " << expected;
  EXPECT_LT(std::abs(r.latency.mean - expected), 2 * r.latency.mean_ci + 0.01 * expected);
  EXPECT_LT(relative_error(r.stages[0].utilisation, lambda / mu), 0.02);
  EXPECT_LT(relative_error(r.stages[0].mean_queue, 0.8 * 0.8 / 0.2), 0.05); // Lq = rho^2 / (1 - rho)
  EXPECT_LT(relative_error(r.throughput, lambda), 0.02);
  // Over time: bins of equal width whose time-weighted means are the window's figures, steady at rho.
  const ReportServingOverTime& o = r.stages[0].over_time;
  ASSERT_GE(o.utilisation.size(), BinnedIntegral::kMaxBins / 2);
  ASSERT_LE(o.utilisation.size(), BinnedIntegral::kMaxBins + 1);
  ASSERT_EQ(o.queue_length.size(), o.utilisation.size());
  EXPECT_DOUBLE_EQ(o.begin, 200.0);
  double busy = 0.0, queued = 0.0;
  for (std::size_t b = 0; b < o.utilisation.size(); ++b) {
    const double covered = std::min(o.bin, r.window - o.bin * static_cast<double>(b));
    busy += o.utilisation[b] * covered;
    queued += o.queue_length[b] * covered;
    if (covered == o.bin) { // thousands of arrivals per full bin: near the mean
      EXPECT_NEAR(o.utilisation[b], lambda / mu, 0.08) << "bin " << b;
      EXPECT_GE(o.queue_length[b], 0.0);
    }
  }
  EXPECT_NEAR(busy / r.window, r.stages[0].utilisation, 1e-9);
  EXPECT_NEAR(queued / r.window, r.stages[0].mean_queue, 1e-9 * r.stages[0].mean_queue);
}

TEST(ServingOverTime, BinsIntegrateIntervalsAndDoubleTheirWidthExactly) {
  BinnedIntegral x(10.0, 1.0);
  x.add(5.0, 10.5, 2.0); // before the origin: only [10, 10.5)
  x.add(11.5, 13.25, 1.0);
  ASSERT_EQ(x.bins().size(), 4u);
  EXPECT_DOUBLE_EQ(x.bins()[0], 1.0);
  EXPECT_DOUBLE_EQ(x.bins()[1], 0.5);
  EXPECT_DOUBLE_EQ(x.bins()[2], 1.0);
  EXPECT_DOUBLE_EQ(x.bins()[3], 0.25);
  x.add(300.0, 301.0, 4.0); // beyond 128 bins: pairs merge twice, the width doubles to 4
  EXPECT_DOUBLE_EQ(x.width(), 4.0);
  EXPECT_DOUBLE_EQ(x.bins()[0], 2.75); // [10, 14)
  ASSERT_EQ(x.bins().size(), 73u);
  EXPECT_DOUBLE_EQ(x.bins()[72], 4.0); // [298, 302)
  x.coarsen_to(16.0);
  EXPECT_DOUBLE_EQ(x.bins()[0], 2.75);
  EXPECT_DOUBLE_EQ(x.bins()[18], 4.0);
  x.add(12.0, 12.0, 5.0); // empty: nothing
  EXPECT_DOUBLE_EQ(x.bins()[0], 2.75);
}

TEST(ServingQueueing, GammaArrivalsAgainstGIM1) {
  // Bursty arrivals (gaps of cv 2) at 80/s into one exponential server of 100/s: GI/M/1's mean time in system, about
  // 2.4 times M/M/1's 50 ms.
  const double lambda = 80, mu = 100, cv = 2;
  const ReportServing r = run(serving_scenario(1, json::array({stage("only", 1, 1, exponential("10ms"))}),
                                               {{"process", "gamma"}, {"rate", lambda}, {"cv", cv}}, 600'000, 200));
  const double expected = queueing::gm1_gamma_time_in_system(lambda, cv, mu);
  show("GI/M/1 (gamma gaps, cv 2) mean time in system", r.latency.mean, expected);
  EXPECT_LT(relative_error(r.latency.mean, expected), 0.05) << r.latency.mean << " vs " << expected;
  EXPECT_GT(r.latency.mean, 2 * queueing::mm1_time_in_system(lambda, mu));
  EXPECT_LT(relative_error(r.throughput, lambda), 0.02);
}

TEST(ServingQueueing, TraceIsReplayedAtItsTimes) {
  // Four requests at 0, 0.1, 5 and 5 s into one server of 0.5 s: they spend 0.5, 0.9 (waiting for the first), 0.5
  // and 1.0 s.
  const std::filesystem::path path = test::temp_dir() / "trace.csv";
  std::ofstream(path) << "id,arrival_s\n1,100\n2,100.1\n3,105\n4,105\n";
  json doc = serving_scenario(1, json::array({stage("only", 1, 1, fixed("0.5s"))}),
                              {{"process", "trace"}, {"trace", {{"csv", path.string()}}}}, 4, 0);
  doc["workload"].erase("requests");
  const ReportServing r = run(doc);
  EXPECT_EQ(r.sent, 4u);
  EXPECT_EQ(r.answered, 4u);
  EXPECT_NEAR(r.latency.mean, (0.5 + 0.9 + 0.5 + 1.0) / 4, 1e-12);
  EXPECT_NEAR(r.latency.max, 1.0, 1e-12);
  EXPECT_NE(r.arrivals.find("4 requests over 5 s"), std::string::npos) << r.arrivals;
}

TEST(ServingQueueing, EmpiricalServiceAgainstPollaczekKhinchine) {
  // Service times read from a CSV column (1, 2, 3, 4 and 10 ms, each as likely: mean 4 ms, E[S^2] = 26 ms^2) under
  // Poisson arrivals at 150/s: M/G/1's mean time in system E[S] + lambda E[S^2] / (2 (1 - rho)), rho 0.6.
  const std::filesystem::path path = test::temp_dir() / "service.csv";
  std::ofstream(path) << "request,service_s\na,0.001\nb,0.002\nc,0.003\nd,0.004\ne,0.010\n";
  const json service{{"distribution", "empirical"}, {"csv", path.string()}, {"column", "service_s"}};
  const double lambda = 150, mean = 0.004, second = 26e-6, rho = lambda * mean;
  const ReportServing r =
      run(serving_scenario(1, json::array({stage("only", 1, 1, service)}), poisson(lambda), 500'000, 100));
  const double expected = mean + lambda * second / (2 * (1 - rho));
  show("M/G/1 (empirical service) mean time in system", r.latency.mean, expected);
  EXPECT_LT(relative_error(r.latency.mean, expected), 0.03) << r.latency.mean << " vs " << expected;
  EXPECT_LT(relative_error(r.stages[0].utilisation, rho), 0.02);
}

TEST(ServingQueueing, MMcAgainstErlangC) {
  const int c = 4;
  const double lambda = 350, mu = 100;
  const ReportServing r =
      run(serving_scenario(1, json::array({stage("only", 1, c, exponential("10ms"))}), poisson(lambda), 500'000, 50));
  const double expected = queueing::mmc_time_in_system(c, lambda, mu);
  show("M/M/4 mean time in system", r.latency.mean, expected);
  EXPECT_LT(relative_error(r.latency.mean, expected), 0.03) << r.latency.mean << " vs " << expected;
  EXPECT_LT(relative_error(r.stages[0].utilisation, lambda / (c * mu)), 0.02);
}

TEST(ServingQueueing, MD1AgainstPollaczekKhinchine) {
  const double lambda = 80, mu = 100;
  const ReportServing r =
      run(serving_scenario(1, json::array({stage("only", 1, 1, fixed("10ms"))}), poisson(lambda), 400'000, 200));
  const double expected = queueing::md1_time_in_system(lambda, mu);
  show("M/D/1 mean time in system", r.latency.mean, expected);
  EXPECT_LT(relative_error(r.latency.mean, expected), 0.03) << r.latency.mean << " vs " << expected;
}

TEST(ServingQueueing, MM1KDropRate) {
  const int k = 5; // 1 in service + 4 waiting
  const double lambda = 90, mu = 100;
  json s = stage("only", 1, 1, exponential("10ms"));
  s["queue"] = {{"capacity", k - 1}, {"when_full", "drop"}};
  const ReportServing r = run(serving_scenario(1, json::array({s}), poisson(lambda), 1'000'000, 100));
  const double expected = queueing::mm1k_loss(k, lambda, mu);
  show("M/M/1/5 drop rate", r.drop_rate, expected);
  EXPECT_LT(relative_error(r.drop_rate, expected), 0.03) << r.drop_rate << " vs " << expected;
  EXPECT_EQ(r.dropped, r.stages[0].dropped);
  EXPECT_EQ(r.sent, r.answered + r.dropped);
}

TEST(ServingQueueing, ClosedLoopInteractiveResponseTimeLaw) {
  const int clients = 10;
  const double think = 0.05;
  json doc =
      serving_scenario(1, json::array({stage("only", 1, 1, exponential("10ms"))}),
                       {{"process", "closed"}, {"clients", clients}, {"think_time", exponential("50ms")}}, 300'000, 50);
  const ReportServing r = run(doc);
  const double expected = queueing::interactive_response_time(clients, r.throughput, think);
  show("closed loop mean response time (N/X - Z)", r.latency.mean, expected);
  EXPECT_LT(relative_error(r.latency.mean, expected), 0.02) << r.latency.mean << " vs " << expected;
  // 10 clients with a 50 ms think time offer more than 100/s: the server is nearly saturated.
  EXPECT_GT(r.stages[0].utilisation, 0.9);
}

TEST(ServingPipeline, SaturatedThroughputIsTheSlowestStagesCapacity) {
  // Capacities: tokenise 1000/s, infer 2 x 250/s = 500/s (the bottleneck), post 667/s.
  json stages = json::array({stage("tokenise", 1, 1, fixed("1ms")), stage("infer", 1, 2, exponential("4ms")),
                             stage("post", 1, 1, fixed("1.5ms"))});
  stages[0]["output_bytes"] = "4kB";
  stages[1]["output_bytes"] = "1kB";
  const ReportServing r = run(serving_scenario(3, stages, poisson(5000), 100'000, 0));
  show("saturated pipeline throughput", r.throughput, 500);
  EXPECT_LT(relative_error(r.throughput, 500), 0.02) << r.throughput;
  EXPECT_EQ(r.bottleneck, "infer");
  EXPECT_GT(r.stages[1].utilisation, 0.98);
  EXPECT_EQ(r.answered, 100'000u);
}

TEST(ServingPipeline, TransfersAndOrchestrationAddUp) {
  // One client, no think time: each request goes alone, so its latency is the sum of its parts: 1 ms of service,
  // 25 MB over 25 GB/s (1 ms) + 2 us of network latency, 0.5 ms of dispatch, 0.1 ms of per-item overhead + 1 ms.
  json stages = json::array({stage("a", 1, 1, fixed("1ms")), stage("b", 1, 1, fixed("1ms"))});
  stages[0]["output_bytes"] = "25MB";
  json doc = serving_scenario(2, stages, {{"process", "closed"}, {"clients", 1}}, 100, 0);
  doc["workload"]["orchestration"] = {{"dispatch_latency", "0.5ms"}, {"per_item_overhead", "0.1ms"}};
  const ReportServing r = run(doc);
  EXPECT_NEAR(r.latency.mean, 3.602e-3, 1e-9);
  EXPECT_NEAR(r.latency.max, 3.602e-3, 1e-9);
  EXPECT_NEAR(r.stages[1].latency.mean, 1.1e-3, 1e-9);
}

TEST(ServingPipeline, ANodeTypesSpeedScalesItsServiceNotTheOverhead) {
  // One client: a (1 ms measured elsewhere) on nodes twice as fast takes 0.5 ms; b (2 ms, batches of 1) on nodes half
  // as fast 4 ms plus its 0.1 ms per-item overhead, which is the runtime's and not scaled: 4.6 ms in all. The cores
  // bound the replicas per node and change nothing else.
  json stages = json::array({stage("a", 1, 2, fixed("1ms")), stage("b", 1, 1, fixed("2ms"))});
  stages[0]["pool"]["speed"] = 2.0;
  stages[0]["pool"]["cores"] = 2;
  stages[1]["pool"]["speed"] = 0.5;
  json doc = serving_scenario(2, stages, {{"process", "closed"}, {"clients", 1}}, 50, 0);
  doc["workload"]["orchestration"] = {{"per_item_overhead", "0.1ms"}};
  const ReportServing r = run(doc);
  EXPECT_NEAR(r.stages[0].latency.mean, 0.5e-3, 1e-12);
  EXPECT_NEAR(r.stages[1].latency.mean, 4.1e-3, 1e-12);
  EXPECT_NEAR(r.latency.max, 4.6e-3, 1e-12);
}

TEST(ServingPipeline, BatchingFillsBatchesUnderLoad) {
  json s = stage("infer", 1, 1, fixed("10ms"));
  s["batching"] = {{"max_size", 8}, {"max_wait", "5ms"}, {"extra_item_time", "1ms"}};
  // Batches of 8 take 17 ms: 470 items/s; at 400/s the batches are large but not always full.
  const ReportServing r = run(serving_scenario(1, json::array({s}), poisson(400), 100'000, 10));
  EXPECT_GT(r.stages[0].mean_batch, 4.0);
  EXPECT_LE(r.stages[0].mean_batch, 8.0);
  EXPECT_LT(relative_error(r.throughput, 400), 0.02);
}

// --- determinism (two runs: through the CLI) ----------------------------------------------------------------

TEST(ServingDeterminism, SameSeedSameReport) {
  json stages = json::array({stage("a", 1, 2, {{"distribution", "lognormal"}, {"mean", "2ms"}, {"cv", 1.5}}),
                             stage("b", 1, 1, {{"distribution", "gamma"}, {"mean", "1ms"}, {"cv", 0.5}})});
  stages[0]["output_bytes"] = "1MB";
  json doc = serving_scenario(2, stages, poisson(600), 20'000, 1);
  doc["workload"]["orchestration"] = {{"preset", "ray_actor_call"}};
  const std::filesystem::path dir = test::temp_dir();
  std::ofstream(dir / "s.json") << doc.dump(2);
  const std::vector<std::string> args{"run", "s.json", "--json", "--no-files", "--no-progress"};
  const test::CliResult a = test::run_cli(args, dir);
  const test::CliResult b = test::run_cli(args, dir);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  std::vector<std::string> other = args;
  other.insert(other.end(), {"--set", "/run/seed=2"});
  const test::CliResult c = test::run_cli(other, dir);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(a.out, c.out);
  // And the report reads back through the strict reader.
  const ReportDocument read = report_document_from_json(json::parse(a.out), "report.json");
  ASSERT_TRUE(read.serving.has_value());
  EXPECT_EQ(read.serving->stages.size(), 2u);
}

TEST(ServingModelService, EachBatchTakesTheModelsForwardPassAtItsSize) {
  // BERT-large at 128 tokens on the test GPU, batches of up to 8: each batch size's service is the training cost
  // model's forward at that micro-batch, to the last bit; batching is cheaper per item than serving alone.
  json st = stage("bert", 1, 1, json());
  st.erase("service");
  st["model_service"] = {{"model", "bert-large"}, {"sequence_length", 128}};
  st["batching"] = {{"max_size", 8}, {"max_wait", "1ms"}};
  json doc = serving_scenario(1, json::array({st}), {{"process", "closed"}, {"clients", 1}}, 20, 0);
  const Scenario scenario = test::parse(doc);
  const ServingStage& spec = std::get<ServingWorkload>(scenario.workload).stages.at(0);
  ASSERT_EQ(spec.batch_service.size(), 8u);
  ModelTraining t;
  t.model = load_workload(test::source_dir(), "bert-large", "test", "/model");
  std::get<TransformerConfig>(t.model.config).sequence_length = 128;
  for (int n = 1; n <= 8; ++n) {
    t.micro_batch = t.global_batch = n;
    EXPECT_EQ(spec.batch_service[static_cast<std::size_t>(n - 1)],
              training_cost(t, scenario.cluster.gpu).forward_time())
        << n;
  }
  EXPECT_LT(spec.batch_service[7], 8 * spec.batch_service[0]);
  EXPECT_GT(spec.batch_service[7], spec.batch_service[0]);
  EXPECT_NE(describe(std::get<ServingWorkload>(scenario.workload)).find("bert-large (128 tokens)"), std::string::npos);
  // One client: every request is alone, waits out max_wait for a second item that never comes, then takes the
  // forward pass at batch 1.
  const ServingRunResult result = simulate_serving(scenario);
  const ReportServing r = make_serving_section(std::get<ServingWorkload>(scenario.workload), result);
  EXPECT_NEAR(r.latency.mean, 1e-3 + spec.batch_service[0], 1e-12);
  EXPECT_NEAR(r.latency.max, 1e-3 + spec.batch_service[0], 1e-12);
}

TEST(ServingModelService, ErrorsNameTheKey) {
  json st = stage("bert", 1, 1, fixed("1ms"));
  st["model_service"] = {{"model", "bert-large"}};
  const auto pointer_of = [](const json& stage_doc) {
    const json doc = serving_scenario(1, json::array({stage_doc}), poisson(10), 10, 0);
    return test::input_error([&] { test::parse(doc); }).pointer();
  };
  EXPECT_EQ(pointer_of(st), "/workload/stages/0/service"); // both
  st.erase("service");
  st["batching"] = {{"max_size", 4}, {"max_wait", "1ms"}, {"extra_item_time", "1ms"}};
  EXPECT_EQ(pointer_of(st), "/workload/stages/0/batching/extra_item_time");
  st.erase("batching");
  st["pool"]["device"] = "cpu";
  EXPECT_EQ(pointer_of(st), "/workload/stages/0/pool/device");
  st["pool"]["device"] = "gpu";
  st["model_service"] = {{"model", "no-such-model"}};
  EXPECT_EQ(pointer_of(st), "/workload/stages/0/model_service/model");
  st["model_service"] = {{"model", "resnet50"}, {"sequence_length", 128}};
  EXPECT_EQ(pointer_of(st), "/workload/stages/0/model_service/sequence_length");
  st["model_service"] = {{"model", "resnet50"}, {"batch", 2}};
  EXPECT_EQ(pointer_of(st), "/workload/stages/0/model_service/batch");
}

TEST(ServingTrace, RequestsFlowThroughTheStagesInTraceJson) {
  // The lone-request pipeline above (one client): each request's events in trace.json are its parts, exactly: stage a
  // 1 ms, the hop to b 1.002 ms (25 MB at 25 GB/s + 2 us) + 0.5 ms of dispatch, stage b 1.1 ms with its per-item
  // overhead; 100 requests, all traced; stage b's replica track holds one event per request. Same run, same bytes.
  json stages = json::array({stage("a", 1, 1, fixed("1ms")), stage("b", 1, 1, fixed("1ms"))});
  stages[0]["output_bytes"] = "25MB";
  json doc = serving_scenario(2, stages, {{"process", "closed"}, {"clients", 1}}, 100, 0);
  doc["workload"]["orchestration"] = {{"dispatch_latency", "0.5ms"}, {"per_item_overhead", "0.1ms"}};
  const std::filesystem::path dir = test::temp_dir();
  std::ofstream(dir / "s.json") << doc.dump(2);
  const test::CliResult a = test::run_cli({"run", "s.json", "--out", "a", "--no-progress"}, dir);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const test::CliResult b = test::run_cli({"run", "s.json", "--out", "b", "--no-progress"}, dir);
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const std::string text = test::read_file(dir / "a" / "trace.json");
  EXPECT_EQ(text, test::read_file(dir / "b" / "trace.json"));
  const json trace = json::parse(text);
  std::map<std::string, std::vector<double>> durations; // per event name in the requests' process, in us
  std::map<std::int64_t, double> first_ts;
  int stage_b_events = 0;
  for (const json& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    if (e["pid"] == 0) {
      durations[e["name"].get<std::string>()].push_back(e["dur"].get<double>());
      const auto tid = e["tid"].get<std::int64_t>();
      if (!first_ts.contains(tid)) first_ts[tid] = e["ts"].get<double>();
    } else if (e["pid"] == 2) {
      ++stage_b_events;
      EXPECT_EQ(e["args"]["items"], 1);
    }
  }
  EXPECT_EQ(first_ts.size(), 100u);
  EXPECT_EQ(stage_b_events, 100);
  ASSERT_EQ(durations["a"].size(), 100u);
  ASSERT_EQ(durations["to b"].size(), 100u);
  ASSERT_EQ(durations["b"].size(), 100u);
  EXPECT_FALSE(durations.contains("queue a")) << "one client: nothing ever waits";
  for (std::size_t i = 0; i < 100; ++i) {
    EXPECT_NEAR(durations["a"][i], 1000.0, 1e-6);
    EXPECT_NEAR(durations["to b"][i], 1002.0 + 500.0, 1e-6);
    EXPECT_NEAR(durations["b"][i], 1100.0, 1e-6);
  }
  // Requests follow each other: request 1 starts when request 0 is answered (3.602 ms).
  EXPECT_NEAR(first_ts[1] - first_ts[0], 3602.0, 1e-6);
  // /run/outputs without `trace`: report.json only.
  doc["run"]["outputs"] = json::array({"table", "report_json"});
  std::ofstream(dir / "untraced.json") << doc.dump(2);
  const test::CliResult c = test::run_cli({"run", "untraced.json", "--out", "c", "--no-progress"}, dir);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_TRUE(std::filesystem::exists(dir / "c" / "report.json"));
  EXPECT_FALSE(std::filesystem::exists(dir / "c" / "trace.json"));
}

TEST(ServingPipeline, DoublingTheBottleneckRaisesThroughputUntilAnotherStageBinds) {
  json stages = json::array({stage("tokenise", 1, 1, fixed("1ms")), stage("infer", 1, 2, exponential("4ms")),
                             stage("post", 1, 1, fixed("1.5ms"))});
  const std::filesystem::path dir = test::temp_dir();
  std::ofstream(dir / "s.json") << serving_scenario(3, stages, poisson(5000), 50'000, 0).dump(2);
  auto throughput = [&](int replicas) {
    const test::CliResult r = test::run_cli({"run", "s.json", "--json", "--no-files", "--no-progress", "--set",
                                             fmt::format("/workload/stages/1/pool/replicas_per_node={}", replicas)},
                                            dir);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const json report = json::parse(r.out);
    return std::make_pair(report["serving"]["throughput_items_per_s"].get<double>(),
                          report["serving"]["bottleneck"].get<std::string>());
  };
  const auto [two, bottleneck_two] = throughput(2);
  const auto [four, bottleneck_four] = throughput(4);
  show("throughput, bottleneck x2", two, 500);
  show("throughput, bottleneck x4", four, 1000.0 / 1.5);
  EXPECT_LT(relative_error(two, 500), 0.02);
  EXPECT_EQ(bottleneck_two, "infer");
  EXPECT_LT(relative_error(four, 1000.0 / 1.5), 0.02) << four; // post binds at 667/s
  EXPECT_EQ(bottleneck_four, "post");
}

// --- graphs of stages (`after`) -------------------------------------------------------------------------------

/** a -> {b, c} -> d: a fan-out after a, a join at d; one node per stage. */
json diamond(json a, json b, json c, json d) {
  b["after"] = json::array({"a"});
  c["after"] = json::array({"a"});
  d["after"] = json::array({"b", "c"});
  return json::array({a, b, c, d});
}

TEST(ServingGraph, ParsedGraphHasItsRootsSinksAndParallelStages) {
  json stages = diamond(stage("a", 1, 1, fixed("1ms")), stage("b", 1, 1, fixed("1ms")), stage("c", 1, 1, fixed("1ms")),
                        stage("d", 1, 1, fixed("1ms")));
  stages.push_back(stage("e", 1, 1, fixed("1ms")));
  stages[4]["after"] = json::array(); // a second root, and a second sink
  const Scenario scenario = test::parse(serving_scenario(5, stages, poisson(10), 10, 0));
  const auto& w = std::get<ServingWorkload>(scenario.workload);
  EXPECT_TRUE(w.dag);
  EXPECT_EQ(w.roots, (std::vector<std::size_t>{0, 4}));
  EXPECT_EQ(w.sinks, (std::vector<std::size_t>{3, 4}));
  EXPECT_EQ(w.stages[0].next, (std::vector<std::size_t>{1, 2}));
  EXPECT_EQ(w.stages[3].after, (std::vector<std::size_t>{1, 2}));
  EXPECT_EQ(w.stages[1].next, (std::vector<std::size_t>{3}));
  // e is beside everything; b and c beside each other; a and d beside e only.
  for (std::size_t i = 0; i < 5; ++i) EXPECT_TRUE(w.stages[i].parallel) << i;
  stages.erase(4);
  const Scenario diamond_only = test::parse(serving_scenario(4, stages, poisson(10), 10, 0));
  const auto& d = std::get<ServingWorkload>(diamond_only.workload);
  EXPECT_FALSE(d.stages[0].parallel);
  EXPECT_TRUE(d.stages[1].parallel);
  EXPECT_TRUE(d.stages[2].parallel);
  EXPECT_FALSE(d.stages[3].parallel);
  EXPECT_NE(describe(d).find("d(1x1 gpu, after b + c)"), std::string::npos) << describe(d);
  // Without `after` the stages are a pipeline, as before the key existed.
  const Scenario pipeline = test::parse(serving_scenario(
      2, json::array({stage("x", 1, 1, fixed("1ms")), stage("y", 1, 1, fixed("1ms"))}), poisson(10), 10, 0));
  const auto& p = std::get<ServingWorkload>(pipeline.workload);
  EXPECT_FALSE(p.dag);
  EXPECT_EQ(p.stages[1].after, (std::vector<std::size_t>{0}));
  EXPECT_FALSE(p.stages[0].parallel || p.stages[1].parallel);
  EXPECT_EQ(describe(p).rfind("serving pipeline x(1x1 gpu) -> y(1x1 gpu)", 0), 0u) << describe(p);
}

TEST(ServingGraph, ErrorsNameTheKey) {
  const json base = serving_scenario(4,
                                     diamond(stage("a", 1, 1, fixed("1ms")), stage("b", 1, 1, fixed("1ms")),
                                             stage("c", 1, 1, fixed("1ms")), stage("d", 1, 1, fixed("1ms"))),
                                     poisson(10), 10, 0);
  struct Case {
    std::string pointer;
    json value;
    std::string expected_pointer;
    std::string words;
  };
  const std::vector<Case> cases{
      {"/workload/stages/3/after", json::array({"b", "x"}), "/workload/stages/3/after/1", "no earlier stage"},
      {"/workload/stages/1/after", json::array({"c"}), "/workload/stages/1/after/0", "listed before"},
      {"/workload/stages/1/after", json::array({"b"}), "/workload/stages/1/after/0", "no earlier stage"},
      {"/workload/stages/3/after", json::array({"b", "b"}), "/workload/stages/3/after/1", "named twice"},
      {"/workload/stages/0/after", json::array({"a"}), "/workload/stages/0/after/0", "no earlier stage"},
      {"/workload/stages/3/after", "b", "/workload/stages/3/after", "array"},
      {"/workload/stages/3/after", json::array({3}), "/workload/stages/3/after/0", "string"},
  };
  for (const Case& c : cases) {
    json doc = base;
    doc[json::json_pointer(c.pointer)] = c.value;
    const InputError e = test::input_error([&] { test::parse(doc, "graph.json"); });
    EXPECT_EQ(e.source(), "graph.json") << c.pointer;
    EXPECT_EQ(e.pointer(), c.expected_pointer) << c.pointer << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find(c.words), std::string::npos) << e.what();
  }
  // Two LLM stages side by side would share one request's tokens and KV cache.
  json doc = base;
  doc["cluster"]["gpu"] = "h100-sxm5-80gb";
  for (const int i : {1, 2}) {
    json& st = doc["workload"]["stages"][i];
    st.erase("service");
    st["llm"] = {{"model", "llama3-8b"},
                 {"input_tokens", {{"distribution", "fixed"}, {"mean", 100}}},
                 {"output_tokens", {{"distribution", "fixed"}, {"mean", 10}}}};
  }
  const InputError e = test::input_error([&] { test::parse(doc); });
  EXPECT_EQ(e.pointer(), "/workload/stages/2/after") << e.what();
  doc["workload"]["stages"][2]["after"] = json::array({"b"}); // one after the other: accepted
  doc["workload"]["stages"][3]["after"] = json::array({"c"});
  EXPECT_NO_THROW(test::parse(doc));
}

TEST(ServingGraph, LoneRequestWaitsForTheSlowerBranch) {
  // One client, no think time: each request goes alone. a (1 ms), then b (2 ms) and c (3 ms) side by side, then d
  // (1 ms) once both are done: 1 + max(2, 3) + 1 = 5 ms, plus the hop into b and c and the one into d (0.5 ms of
  // dispatch latency each, 0.1 ms of per-item overhead in each stage after a): 5 + 2 x 0.5 + 2 x 0.1 = 6.2 ms.
  // a sends 1 MB to b and to c (2 x 40 us on one 25 GB/s link, shared: 80 us, + 2 us); b sends nothing, c 1 MB
  // (40 us + 2 us) to d, which waits for the later of the two.
  json stages = diamond(stage("a", 1, 1, fixed("1ms")), stage("b", 1, 1, fixed("2ms")), stage("c", 1, 1, fixed("3ms")),
                        stage("d", 1, 1, fixed("1ms")));
  stages[0]["output_bytes"] = "1MB";
  stages[2]["output_bytes"] = "1MB";
  json doc = serving_scenario(4, stages, {{"process", "closed"}, {"clients", 1}}, 100, 0);
  doc["workload"]["orchestration"] = {{"dispatch_latency", "0.5ms"}, {"per_item_overhead", "0.1ms"}};
  const Scenario scenario = test::parse(doc);
  const ServingRunResult result = simulate_serving(scenario);
  const ReportServing r = make_serving_section(std::get<ServingWorkload>(scenario.workload), result);
  const double expected = 1e-3 + (82e-6 + 0.5e-3) + 3.1e-3 + (42e-6 + 0.5e-3) + 1.1e-3;
  show("fork-join lone request latency", r.latency.mean, expected);
  EXPECT_NEAR(r.latency.mean, expected, 1e-9);
  EXPECT_NEAR(r.latency.max, expected, 1e-9);
  EXPECT_EQ(r.answered, 100u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(r.stages[i].served, 100u) << i;
  EXPECT_NEAR(r.stages[1].latency.mean, 2.1e-3, 1e-9);
  EXPECT_NEAR(r.stages[3].latency.mean, 1.1e-3, 1e-9); // from the join, not from the first branch's arrival
  // Bytes: a's copy to each of b and c, c's to d; b's output (0 bytes) is no message.
  EXPECT_EQ(result.bytes_sent, 100u * 3'000'000u);
  EXPECT_EQ(result.messages, 300u);
}

TEST(ServingGraph, SaturatedThroughputIsTheSlowestBranchsCapacity) {
  // Every request visits every stage: a 1000/s, b 2 x 250/s = 500/s (the bottleneck), c 667/s, d 2000/s.
  const json stages = diamond(stage("a", 1, 1, fixed("1ms")), stage("b", 1, 2, exponential("4ms")),
                              stage("c", 1, 1, fixed("1.5ms")), stage("d", 1, 1, fixed("0.5ms")));
  const ReportServing r = run(serving_scenario(4, stages, poisson(5000), 100'000, 0));
  show("saturated fork-join throughput", r.throughput, 500);
  EXPECT_LT(relative_error(r.throughput, 500), 0.02) << r.throughput;
  EXPECT_EQ(r.bottleneck, "b");
  EXPECT_EQ(r.answered, 100'000u);
  EXPECT_EQ(r.stages[3].served, 100'000u);
}

TEST(ServingGraph, DropInOneBranchDropsTheRequestOnce) {
  // c's queue is an M/M/1/5 (90/s against 100/s) beside a branch b that never drops: the request's drop rate is c's
  // M/M/1/K loss, each dropped request is counted once, and d serves no dropped one. a's copy to b is queued before c
  // drops the request (b comes first among a's successors): b's replica serves it when it had already taken it (work
  // wasted, as an orchestrator's cancellation comes too late for it) and discards it unserved when it still waited.
  json c = stage("c", 1, 1, exponential("10ms"));
  c["queue"] = {{"capacity", 4}, {"when_full", "drop"}};
  const json stages =
      diamond(stage("a", 1, 1, fixed("0s")), stage("b", 1, 1, fixed("1ms")), c, stage("d", 1, 1, fixed("0s")));
  const ReportServing r = run(serving_scenario(4, stages, poisson(90), 400'000, 100));
  const double expected = queueing::mm1k_loss(5, 90, 100);
  show("M/M/1/5 drop rate in one branch", r.drop_rate, expected);
  EXPECT_LT(relative_error(r.drop_rate, expected), 0.03) << r.drop_rate << " vs " << expected;
  EXPECT_EQ(r.sent, r.answered + r.dropped);
  EXPECT_EQ(r.dropped, r.stages[2].dropped);
  EXPECT_EQ(r.stages[3].served, r.answered);
  EXPECT_GE(r.stages[1].served, r.answered);
  EXPECT_LT(r.stages[1].served, r.sent);
}

TEST(ServingGraph, TraceGivesParallelStagesRowsOfTheirOwn) {
  // The diamond with one client: b and c hold each request at the same time, so each has a row per request of its
  // own (tid 1000 x (1 + stage) + request); a and d stay on the request's row; the hop into d starts when c (the
  // later branch) ends.
  const json stages = diamond(stage("a", 1, 1, fixed("1ms")), stage("b", 1, 1, fixed("2ms")),
                              stage("c", 1, 1, fixed("3ms")), stage("d", 1, 1, fixed("1ms")));
  json doc = serving_scenario(4, stages, {{"process", "closed"}, {"clients", 1}}, 3, 0);
  doc["workload"]["orchestration"] = {{"dispatch_latency", "0.5ms"}};
  const std::filesystem::path dir = test::temp_dir();
  std::ofstream(dir / "g.json") << doc.dump(2);
  const test::CliResult a = test::run_cli({"run", "g.json", "--out", "a", "--no-progress"}, dir);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const json trace = json::parse(test::read_file(dir / "a" / "trace.json"));
  std::map<std::string, std::vector<std::pair<std::int64_t, double>>> events; // name -> (tid, ts)
  std::map<std::string, std::vector<double>> durations;
  for (const json& e : trace["traceEvents"])
    if (e["ph"] == "X" && e["pid"] == 0) {
      events[e["name"].get<std::string>()].emplace_back(e["tid"].get<std::int64_t>(), e["ts"].get<double>());
      durations[e["name"].get<std::string>()].push_back(e["dur"].get<double>());
    }
  ASSERT_EQ(events["b"].size(), 3u);
  for (std::int64_t q = 0; q < 3; ++q) {
    const auto i = static_cast<std::size_t>(q);
    EXPECT_EQ(events["a"][i].first, q);
    EXPECT_EQ(events["b"][i].first, 2000 + q);
    EXPECT_EQ(events["c"][i].first, 3000 + q);
    EXPECT_EQ(events["d"][i].first, q);
    EXPECT_EQ(events["to d"][i].first, q);
    EXPECT_NEAR(durations["to d"][i], 500.0, 1e-6); // from c's end, not b's
    EXPECT_NEAR(events["to d"][i].second, events["c"][i].second + 3000.0, 1e-6);
    EXPECT_NEAR(durations["to b"][i], 500.0, 1e-6);
  }
}

} // namespace
} // namespace partsim
