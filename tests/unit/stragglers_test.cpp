// Stragglers (/cluster/stragglers, docs/stragglers.md): the draws and slow-down laws, the parser's errors, and whole
// runs held to closed forms. Each TEST runs at most one simulation in its process (SimGrid 3.32 allows one engine per
// process); tests that compare runs run the CLI.
#include "partsim/common/random.hpp"
#include "partsim/input/json_reader.hpp"
#include "partsim/input/stragglers.hpp"
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

constexpr double kPeak = 100e12; // the base scenario's GPU

/** A data job on `nodes` one-GPU nodes: `samples` samples of 1 GFLOP per iteration (balanced), `iterations`
 * iterations; with `sync`, a 1 KB gradient all-reduce (analytic) after each iteration's compute. */
json job(int nodes, std::int64_t iterations, bool sync, std::int64_t samples = 1000) {
  json doc = test::base_scenario(nodes, 1);
  doc["workload"] = {
      {"kind", "data_job"}, {"samples", samples}, {"flop_per_sample", "1GFLOP"}, {"iterations", iterations}};
  if (sync) {
    doc["workload"]["gradient_bytes"] = "1KB";
    doc["strategy"]["gradient_sync"] = {{"algorithm", "ring"}, {"fidelity", "analytic"}};
  }
  return doc;
}

/** A folder for the runs of one test: report.json names the scenario's path, so runs to compare share it. */
const std::filesystem::path& run_dir() {
  static const std::filesystem::path dir = test::temp_dir();
  return dir;
}

/** report.json of `doc` run by the CLI, as text (empty on failure). */
std::string run_cli_text(const json& doc, const std::vector<std::string>& extra = {}) {
  const std::filesystem::path& dir = run_dir();
  {
    std::ofstream out(dir / "s.json");
    out << doc.dump(2);
  }
  std::vector<std::string> args{"run", (dir / "s.json").string(), "--json", "--no-files", "--no-progress"};
  args.insert(args.end(), extra.begin(), extra.end());
  const test::CliResult r = test::run_cli(args, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? r.out : std::string();
}

void show(const char* what, double measured, double expected) {
  std::printf("%s: simulated %.9g, closed form %.9g, error %+.3g\n", what, measured, expected,
              (measured - expected) / expected);
}

// ---- draws and laws (no simulation) ----------------------------------------------------------------

TEST(StragglerDraws, AreDeterministicIndependentOfOrderAndAsLikelyAsP) {
  StragglerSpec spec;
  spec.probability = 0.03;
  spec.slowdown = SlowdownLaw{SlowdownKind::Uniform, 1.0, 0.4, 0.9, 1.0, 0.0};
  const StragglerDraws a(spec, 7, 512);
  const StragglerDraws b(spec, 7, 512);
  const StragglerDraws other(spec, 8, 512);
  std::int64_t slowed = 0;
  std::int64_t differ = 0;
  constexpr std::int64_t kIterations = 400;
  for (std::int64_t it = kIterations - 1; it >= 0; --it) // asked in another order than b below
    for (int g = 0; g < 512; ++g) {
      const auto [straggles, f] = a.random_draw(g, it);
      slowed += straggles ? 1 : 0;
      if (straggles) {
        EXPECT_GE(f, 0.4);
        EXPECT_LE(f, 0.9);
      } else {
        EXPECT_EQ(f, 1.0);
      }
      differ += f != other.random_factor(g, it) ? 1 : 0;
    }
  for (std::int64_t it = 0; it < kIterations; ++it)
    for (int g = 0; g < 512; ++g) ASSERT_EQ(a.random_factor(g, it), b.random_factor(g, it));
  const double n = 512.0 * kIterations;
  const double fraction = static_cast<double>(slowed) / n;
  EXPECT_NEAR(fraction, 0.03, 4.0 * std::sqrt(0.03 * 0.97 / n)) << slowed << " of " << n;
  EXPECT_GT(differ, 0) << "another seed draws other stragglers";
}

TEST(StragglerDraws, FixedFactorsMultiplyTheRandomOnes) {
  StragglerSpec spec;
  spec.fixed = {{3, 0.5}};
  spec.probability = 1.0;
  spec.slowdown = SlowdownLaw{SlowdownKind::Fixed, 0.8, 1.0, 1.0, 1.0, 0.0};
  const StragglerDraws d(spec, 1, 8);
  EXPECT_DOUBLE_EQ(d.factor(3, 5), 0.4);
  EXPECT_DOUBLE_EQ(d.factor(2, 5), 0.8);
  EXPECT_TRUE(d.same_factors(1, 2, 100));
  EXPECT_FALSE(d.same_factors(1, 3, 100));
}

/** The mean stretch E[max(1/f, floor)] of `law` over many draws. */
double sampled_stretch(const SlowdownLaw& law, double floor) {
  Xoshiro256StarStar rng(42);
  double sum = 0.0;
  constexpr int kDraws = 2'000'000;
  for (int i = 0; i < kDraws; ++i) sum += std::max(1.0 / law.sample(rng), floor);
  return sum / kDraws;
}

TEST(SlowdownLaw, MeanStretchClosedFormsMatchTheDraws) {
  const SlowdownLaw fixed{SlowdownKind::Fixed, 0.7, 1.0, 1.0, 1.0, 0.0};
  EXPECT_DOUBLE_EQ(fixed.mean_stretch(), 1.0 / 0.7);
  EXPECT_DOUBLE_EQ(fixed.mean_stretch(2.0), 2.0);
  const SlowdownLaw uniform{SlowdownKind::Uniform, 1.0, 0.5, 0.9, 1.0, 0.0};
  EXPECT_NEAR(uniform.mean_stretch(), std::log(0.9 / 0.5) / 0.4, 1e-12);
  for (double floor : {1.0, 1.5, 3.0}) {
    EXPECT_NEAR(uniform.mean_stretch(floor), sampled_stretch(uniform, floor), 2e-3) << floor;
    // Mean 0.9, cv 0.2: a fifth of the draws are above 1 and capped.
    const SlowdownLaw lognormal{SlowdownKind::LogNormal, 1.0, 1.0, 1.0, 0.9, 0.2};
    EXPECT_NEAR(lognormal.mean_stretch(floor), sampled_stretch(lognormal, floor), 2e-3) << floor;
  }
}

// ---- parsing ---------------------------------------------------------------------------------------

InputError parse_error(const json& stragglers, json doc = job(4, 2, true)) {
  doc["cluster"]["stragglers"] = stragglers;
  return test::input_error([&] { test::parse(doc); });
}

TEST(StragglerInput, IsReadIntoTheCluster) {
  json doc = job(4, 2, true);
  doc["cluster"]["stragglers"] = {{"fixed", {{{"gpu", 2}, {"factor", 0.5}}, {{"gpu", 0}, {"factor", 0.9}}}},
                                  {"random", {{"probability", 0.01}, {"slowdown", 0.7}}}};
  const Scenario s = test::parse(doc);
  ASSERT_TRUE(s.cluster.stragglers);
  ASSERT_EQ(s.cluster.stragglers->fixed.size(), 2U);
  EXPECT_EQ(s.cluster.stragglers->fixed[0].gpu, 0); // sorted
  EXPECT_EQ(s.cluster.stragglers->fixed[1].factor, 0.5);
  EXPECT_EQ(s.cluster.stragglers->probability, 0.01);
  EXPECT_EQ(s.cluster.stragglers->slowdown.kind, SlowdownKind::Fixed);
  EXPECT_EQ(s.cluster.stragglers->slowdown.factor, 0.7);
  doc["cluster"]["stragglers"]["random"]["slowdown"] = {{"distribution", "lognormal"}, {"mean", 0.8}, {"cv", 0.3}};
  const Scenario l = test::parse(doc);
  EXPECT_EQ(l.cluster.stragglers->slowdown.kind, SlowdownKind::LogNormal);
  EXPECT_EQ(l.cluster.stragglers->slowdown.cv, 0.3);
  EXPECT_FALSE(test::parse(job(4, 2, true)).cluster.stragglers);
}

TEST(StragglerInput, BadValuesAreNamedAtTheirPointer) {
  const std::string st = "/cluster/stragglers";
  EXPECT_EQ(parse_error({{"fixed", {{{"gpu", 0}, {"factor", 0}}}}}).pointer(), st + "/fixed/0/factor");
  EXPECT_EQ(parse_error({{"fixed", {{{"gpu", 0}, {"factor", 1.5}}}}}).pointer(), st + "/fixed/0/factor");
  EXPECT_EQ(parse_error({{"fixed", {{{"gpu", 4}, {"factor", 0.5}}}}}).pointer(), st + "/fixed/0/gpu");
  EXPECT_EQ(parse_error({{"fixed", {{{"gpu", 1}, {"factor", 0.5}}, {{"gpu", 1}, {"factor", 0.6}}}}}).pointer(),
            st + "/fixed/1/gpu");
  EXPECT_EQ(parse_error({{"fixed", {{{"gpu", 1}, {"factor", 0.5}, {"factr", 0.5}}}}}).pointer(), st + "/fixed/0/factr");
  EXPECT_EQ(parse_error({{"random", {{"probability", 1.5}, {"slowdown", 0.7}}}}).pointer(), st + "/random/probability");
  EXPECT_EQ(parse_error({{"random", {{"probability", 0.1}}}}).pointer(), st + "/random/slowdown");
  EXPECT_EQ(parse_error({{"random", {{"probability", 0.1}, {"slowdown", -0.7}}}}).pointer(), st + "/random/slowdown");
  EXPECT_EQ(parse_error({{"random", {{"probability", 0.1}, {"slowdown", "slow"}}}}).pointer(), st + "/random/slowdown");
  EXPECT_EQ(parse_error({{"random", {{"probability", 0.1}, {"slowdown", {{"distribution", "weibull"}}}}}}).pointer(),
            st + "/random/slowdown/distribution");
  EXPECT_EQ(
      parse_error(
          {{"random", {{"probability", 0.1}, {"slowdown", {{"distribution", "uniform"}, {"min", 0.9}, {"max", 0.5}}}}}})
          .pointer(),
      st + "/random/slowdown/max");
  EXPECT_EQ(parse_error(
                {{"random",
                  {{"probability", 0.1}, {"slowdown", {{"distribution", "uniform"}, {"min", 0.5}, {"factor", 0.5}}}}}})
                .pointer(),
            st + "/random/slowdown/factor");
  EXPECT_EQ(
      parse_error({{"random", {{"probability", 0.1}, {"slowdown", {{"distribution", "lognormal"}, {"mean", 0.8}}}}}})
          .pointer(),
      st + "/random/slowdown/cv");
  EXPECT_EQ(parse_error({{"often", 1}}).pointer(), st + "/often");
  // Work handed out at run time has no iterations to slow.
  json balanced = job(4, 1, false);
  balanced["strategy"]["balancing"] = {{"policy", "work_queue"}, {"chunk_samples", 10}};
  EXPECT_EQ(parse_error({{"random", {{"probability", 0.1}, {"slowdown", 0.5}}}}, balanced).pointer(), st);
  const InputError e = parse_error({{"fixed", {{{"gpu", 9}, {"factor", 0.5}}}}});
  EXPECT_EQ(e.source(), "test.json");
  EXPECT_NE(std::string(e.what()).find("<= 3"), std::string::npos) << e.what();
}

// ---- whole runs ------------------------------------------------------------------------------------

TEST(StragglerRun, AFixedStragglerStretchesEveryIterationByOneOverItsFactor) {
  // 4 GPUs, 250 GFLOP each per iteration, no synchronisation: GPU 2 at 0.6 finishes each iteration 250e9 / (0.6 x
  // 1e14) s after the previous one, and the run's iterations end with it.
  json doc = job(4, 5, false);
  doc["cluster"]["stragglers"] = {{"fixed", {{{"gpu", 2}, {"factor", 0.6}}}}};
  const test::Outcome o = test::simulate_document(doc);
  ASSERT_TRUE(o.report.stragglers);
  const ReportStragglers& s = *o.report.stragglers;
  const double nominal = 250e9 / kPeak;
  show("iteration", s.mean_iteration, nominal / 0.6);
  EXPECT_NEAR(s.mean_iteration, nominal / 0.6, 1e-12 * nominal);
  EXPECT_NEAR(s.max_iteration, nominal / 0.6, 1e-12 * nominal);
  EXPECT_NEAR(o.report.makespan, 5 * nominal / 0.6, 1e-12 * nominal);
  EXPECT_NEAR(s.compute_per_iteration, nominal, 1e-15);
  EXPECT_NEAR(s.nominal_iteration, nominal / 0.6, 1e-12 * nominal); // the fixed straggler is part of it
  EXPECT_EQ(s.fixed_stragglers, 1);
  EXPECT_NEAR(s.fixed_stretch, 1.0 / 0.6, 1e-15);
  EXPECT_EQ(s.slowed_iterations, 0);
  EXPECT_TRUE(s.tail.empty());
  // The other ranks computed at full speed: their compute is the nominal figure.
  EXPECT_NEAR(o.report.ranks[0].compute, 5 * nominal, 1e-12);
  EXPECT_NEAR(o.report.ranks[2].compute, 5 * nominal / 0.6, 1e-12);
}

TEST(StragglerRun, AFixedStragglerInASynchronousJobAddsItsStretchToEachIteration) {
  // With an all-reduce after each iteration, the others wait: each iteration is nominal + A -> nominal / f + A.
  json plain = job(8, 6, true);
  plain["cluster"]["stragglers"] = json::object(); // the section, with nothing slowed
  json slowed = plain;
  slowed["cluster"]["stragglers"]["fixed"] = {{{"gpu", 5}, {"factor", 0.75}}};
  const json a = json::parse(run_cli_text(plain));
  const json b = json::parse(run_cli_text(slowed));
  const double nominal = 125e9 / kPeak;
  const double before = a["stragglers"]["mean_iteration_s"].get<double>();
  const double after = b["stragglers"]["mean_iteration_s"].get<double>();
  show("added per iteration", after - before, nominal * (1 / 0.75 - 1));
  EXPECT_NEAR(after - before, nominal * (1 / 0.75 - 1), 1e-9 * nominal);
  EXPECT_NEAR(b["summary"]["makespan_s"].get<double>() - a["summary"]["makespan_s"].get<double>(),
              6 * nominal * (1 / 0.75 - 1), 1e-9 * nominal);
  EXPECT_GT(before, nominal); // the all-reduce
}

TEST(StragglerRun, RandomStragglersMatchTheTailClosedForm) {
  // 16 GPUs in step (an all-reduce per iteration), 1 TFLOP each, p = 0.02 per GPU per iteration at half speed, 3000
  // iterations: an iteration has a straggler with probability q = 1 - 0.98^16 = 0.276 and then lasts T / 0.5 - T
  // longer, T the compute per iteration. Mean: T + A + T (1/f - 1) q, A the all-reduce.
  constexpr int kGpus = 16;
  constexpr std::int64_t kIterations = 3000;
  constexpr double kP = 0.02;
  constexpr double kF = 0.5;
  json doc = job(kGpus, kIterations, true, 16000);
  doc["cluster"]["stragglers"] = {{"random", {{"probability", kP}, {"slowdown", kF}}}};
  const test::Outcome o = test::simulate_document(doc);
  ASSERT_TRUE(o.report.stragglers);
  const ReportStragglers& s = *o.report.stragglers;
  const double t = 1000e9 / kPeak;
  EXPECT_NEAR(s.compute_per_iteration, t, 1e-15);
  const double q = 1.0 - std::pow(1.0 - kP, kGpus);
  // A from the report's nominal iteration (the mean of the iterations without a straggler: T + A).
  EXPECT_EQ(s.nominal_iterations, kIterations - s.slowed_iterations);
  const double a = s.nominal_iteration - t;
  EXPECT_GT(a, 0.0);
  EXPECT_LT(a, 0.05 * t);
  const double closed = t + a + (t / kF - t) * q;
  show("mean iteration", s.mean_iteration, closed);
  EXPECT_NEAR(s.mean_iteration, closed, 0.02 * closed);
  EXPECT_NEAR(s.expected_iteration, closed, 1e-12 * closed);
  show("slowed fraction", s.slowed_iteration_fraction, q);
  EXPECT_NEAR(s.slowed_iteration_fraction, q, 3.0 * std::sqrt(q * (1 - q) / kIterations));
  EXPECT_NEAR(s.expected_slowed_iteration_fraction, q, 1e-15);
  EXPECT_NEAR(static_cast<double>(s.slowed_gpu_iterations) / (kGpus * kIterations), kP, 0.002);
  // Every iteration is T + A or T / f + A: the median and the max are those two.
  EXPECT_NEAR(s.p50_iteration, t + a, 1e-9 * t);
  EXPECT_NEAR(s.max_iteration, t / kF + a, 1e-9 * t);
  // The tail: N = 1, 2, 4, 8, 16, the last this run's.
  ASSERT_EQ(s.tail.size(), 5U);
  EXPECT_EQ(s.tail.back().gpus, kGpus);
  EXPECT_NEAR(s.tail.back().expected_iteration, s.expected_iteration, 1e-15);
  EXPECT_NEAR(s.tail.front().straggler_probability, kP, 1e-15);
  for (std::size_t i = 1; i < s.tail.size(); ++i)
    EXPECT_GT(s.tail[i].expected_iteration, s.tail[i - 1].expected_iteration);
}

TEST(StragglerRun, TheSameSeedGivesTheSameReportAndAnotherSeedAnother) {
  json doc = job(8, 40, true);
  doc["cluster"]["stragglers"] = {
      {"random", {{"probability", 0.05}, {"slowdown", {{"distribution", "uniform"}, {"min", 0.5}, {"max", 0.9}}}}}};
  const std::string a = run_cli_text(doc);
  const std::string b = run_cli_text(doc);
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a, b);
  const std::string c = run_cli_text(doc, {"--set", "/run/seed=2"});
  ASSERT_FALSE(c.empty());
  const json ja = json::parse(a);
  const json jc = json::parse(c);
  EXPECT_NE(ja["stragglers"]["mean_iteration_s"], jc["stragglers"]["mean_iteration_s"]);
  EXPECT_NE(ja["summary"]["makespan_s"], jc["summary"]["makespan_s"]);
}

TEST(StragglerRun, WithoutStragglersTheReportHasNoSectionAndNothingElseMoves) {
  // An empty /cluster/stragglers runs the straggler code with every factor 1: everything but the section and the
  // echoed input is the report without it, byte for byte.
  const json plain = job(8, 6, true);
  json empty = plain;
  empty["cluster"]["stragglers"] = json::object();
  const std::string a = run_cli_text(plain);
  json b = json::parse(run_cli_text(empty));
  ASSERT_FALSE(a.empty());
  EXPECT_FALSE(json::parse(a).contains("stragglers"));
  ASSERT_TRUE(b.contains("stragglers"));
  b.erase("stragglers");
  b["scenario"]["input"]["cluster"].erase("stragglers");
  EXPECT_EQ(json::parse(a).dump(1), b.dump(1));
}

TEST(StragglerRun, TheReportReadsBackAndTheTableShowsTheSection) {
  json doc = job(4, 20, true);
  doc["cluster"]["stragglers"] = {{"random", {{"probability", 0.1}, {"slowdown", 0.8}}}};
  const std::string text = run_cli_text(doc);
  ASSERT_FALSE(text.empty());
  const ReportDocument read = report_document_from_json(json::parse(text), "report.json");
  ASSERT_TRUE(read.stragglers);
  EXPECT_EQ(read.stragglers->slowdown, "0.8");
  EXPECT_EQ(to_json(read), json::parse(text));
  const std::filesystem::path dir = test::temp_dir();
  {
    std::ofstream out(dir / "s.json");
    out << doc.dump(2);
  }
  const test::CliResult table = test::run_cli({"run", (dir / "s.json").string(), "--no-files", "--no-progress"}, dir);
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("slowed iterations"), std::string::npos) << table.out;
}

} // namespace
} // namespace partsim
