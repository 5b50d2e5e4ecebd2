// Batch runs for CI: scenario discovery, baseline comparison with tolerances, outcomes and exit codes, and the JUnit,
// markdown and JSON summaries.
#include "test_support.hpp"

#include "partsim/batch/batch.hpp"
#include "partsim/common/error.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

namespace partsim {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const json kBefore = {{"verdict", "simulated"},
                      {"summary", {{"makespan_s", 10.0}, {"mfu", 0.45}, {"gpus", 8}, {"bytes_sent", 0}}},
                      {"memory_per_gpu", {{"total_bytes", 4.0e10}}},
                      {"ranks", json::array({{{"compute_s", 1.0}}})}};

TEST(BatchBaseline, IdenticalReportsHaveNoChanges) {
  EXPECT_TRUE(compare_reports(kBefore, kBefore, Tolerances{}).empty());
}

TEST(BatchBaseline, AFigurePastItsToleranceIsReportedWithBeforeAfterAndChange) {
  json after = kBefore;
  after["summary"]["makespan_s"] = 10.5; // +5%: past the default 1%
  after["summary"]["mfu"] = 0.4504;      // +0.09%: within it
  after["ranks"][0]["compute_s"] = 9.0;  // not a compared figure: per-rank detail
  after["memory_per_gpu"]["total_bytes"] = 5.0e10;
  const auto changes = compare_reports(kBefore, after, Tolerances{});
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].figure, "/memory_per_gpu/total_bytes");
  EXPECT_EQ(changes[1].figure, "/summary/makespan_s");
  EXPECT_DOUBLE_EQ(changes[1].before.get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(changes[1].after.get<double>(), 10.5);
  ASSERT_TRUE(changes[1].relative.has_value());
  EXPECT_NEAR(*changes[1].relative, 0.05, 1e-12);
  EXPECT_DOUBLE_EQ(changes[1].tolerance, 0.01);
}

TEST(BatchBaseline, TolerancesPerFigureOverrideTheDefault) {
  json after = kBefore;
  after["summary"]["makespan_s"] = 10.5;
  after["summary"]["mfu"] = 0.46;
  Tolerances t;
  add_tolerance(t, "0.1");                // every figure: 10%
  add_tolerance(t, "/summary/mfu=0.001"); // but mfu: 0.1%
  const auto changes = compare_reports(kBefore, after, t);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].figure, "/summary/mfu");
  add_tolerance(t, "/summary/mfu=0.5"); // the last one given wins
  EXPECT_TRUE(compare_reports(kBefore, after, t).empty());
}

TEST(BatchBaseline, AVerdictChangeANewFigureAndAGoneFigureAreChanges) {
  json after = kBefore;
  after["verdict"] = "out_of_memory";
  after["summary"].erase("mfu");
  after["summary"]["tokens_per_s"] = 1000.0;
  after["summary"]["bytes_sent"] = 1; // from zero: any move is past a relative tolerance
  const auto changes = compare_reports(kBefore, after, Tolerances{});
  ASSERT_EQ(changes.size(), 4u);
  std::map<std::string, FigureChange> by;
  for (const auto& c : changes) by[c.figure] = c;
  EXPECT_EQ(by["/verdict"].after, "out_of_memory");
  EXPECT_TRUE(by["/summary/mfu"].after.is_null());
  EXPECT_TRUE(by["/summary/tokens_per_s"].before.is_null());
  EXPECT_FALSE(by["/summary/bytes_sent"].relative.has_value()) << "no relative change from zero";
  Tolerances loose;
  add_tolerance(loose, "/summary/bytes_sent=1");
  for (const auto& c : compare_reports(kBefore, after, loose))
    EXPECT_NE(c.figure, "/summary/bytes_sent") << "from zero, a move is 100%: a tolerance of 1 accepts it";
}

TEST(BatchBaseline, MalformedTolerancesAreInputErrors) {
  Tolerances t;
  for (const char* bad : {"", "x", "-0.1", "nan", "inf", "0.1x", "summary=0.1", "/summary/mfu=", "=0.1"})
    EXPECT_THROW(add_tolerance(t, bad), InputError) << bad;
}

BatchCase passed(const std::string& name) {
  BatchCase c;
  c.name = name;
  c.path = "scenarios/" + name + ".json";
  c.verdict = "simulated";
  c.makespan = 1.5;
  c.expectations.push_back({"/verdict", "\"simulated\"", "\"simulated\"", true});
  return c;
}

BatchCase failed_expectation(const std::string& name) {
  BatchCase c = passed(name);
  c.expectations.push_back({"/summary/makespan_s", "at most 1", "1.5", false});
  return c;
}

BatchCase input_error(const std::string& name) {
  BatchCase c;
  c.name = name;
  c.path = "scenarios/" + name + ".json";
  c.exit_code = 2;
  c.error = c.path + ": /cluster/nodes: expected an integer <with> \"quotes\" & more";
  return c;
}

TEST(BatchOutcome, ExitCodeIsZeroOneOrTwo) {
  EXPECT_EQ(batch_exit_code({passed("a"), passed("b")}), 0);
  EXPECT_EQ(batch_exit_code({passed("a"), failed_expectation("b")}), 1);
  EXPECT_EQ(batch_exit_code({failed_expectation("b"), input_error("c"), passed("a")}), 2);
  BatchCase crashed = input_error("d");
  crashed.exit_code = 139;
  EXPECT_EQ(batch_exit_code({passed("a"), crashed}), 1) << "a crash is not an input error";
  BatchCase regressed = passed("e");
  regressed.has_baseline = true;
  regressed.changes.push_back({"/summary/makespan_s", 1.0, 1.5, 0.5, 0.01});
  EXPECT_EQ(regressed.outcome(), BatchCase::Outcome::Failed);
  EXPECT_EQ(batch_exit_code({passed("a"), regressed}), 1);
}

TEST(BatchOutcome, FailuresAreListedLast) {
  const auto ordered = failures_last({input_error("a"), failed_expectation("b"), passed("z"), passed("c")});
  std::vector<std::string> names;
  for (const auto& c : ordered) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"c", "z", "b", "a"}));
}

TEST(BatchSummary, JUnitHasASuitePerScenarioAndACasePerRunExpectationAndBaseline) {
  BatchCase regressed = passed("e");
  regressed.has_baseline = true;
  regressed.changes.push_back({"/summary/makespan_s", 1.0, 1.5, 0.5, 0.01});
  const std::string xml =
      format_junit(failures_last({passed("a"), failed_expectation("b"), input_error("c"), regressed}));
  EXPECT_NE(xml.find(R"(<testsuites name="partsim batch" tests="9" failures="2" errors="1">)"), std::string::npos)
      << xml;
  EXPECT_NE(xml.find(R"(<testsuite name="b" tests="3" failures="1" errors="0" skipped="0">)"), std::string::npos);
  EXPECT_NE(xml.find(R"(<testcase classname="b" name="expect /summary/makespan_s">)"), std::string::npos);
  EXPECT_NE(xml.find(R"(<failure message="/summary/makespan_s: expected at most 1, got 1.5" type="expectation"/>)"),
            std::string::npos);
  EXPECT_NE(xml.find(R"(<testcase classname="e" name="baseline">)"), std::string::npos);
  EXPECT_NE(xml.find("/summary/makespan_s moved from 1 to 1.5 (+50.00%, tolerance 1%)"), std::string::npos);
  // Markup in an error message is escaped, not interpreted.
  EXPECT_NE(xml.find("expected an integer &lt;with&gt; &quot;quotes&quot; &amp; more"), std::string::npos);
  EXPECT_EQ(xml.find("<with>"), std::string::npos);
  // Failures come last: the suite of c (an error) after that of a (passed).
  EXPECT_LT(xml.find(R"(<testsuite name="a")"), xml.find(R"(<testsuite name="c")"));
}

TEST(BatchSummary, MarkdownHasCountsCasesFailuresAndTheRegressionTable) {
  BatchCase regressed = passed("e|f");
  regressed.has_baseline = true;
  regressed.changes.push_back({"/summary/makespan_s", 1.0, 1.5, 0.5, 0.01});
  const std::string md = format_batch_markdown(failures_last({passed("a"), failed_expectation("b"), regressed}));
  EXPECT_NE(md.find("3 scenarios: 1 passed, 2 failed, 0 errors."), std::string::npos) << md;
  EXPECT_NE(md.find("| a | passed | simulated | 1.5 s | 1 of 1 hold | - |"), std::string::npos) << md;
  EXPECT_NE(md.find("| b | failed | simulated | 1.5 s | 1 of 2 hold | - |"), std::string::npos) << md;
  EXPECT_NE(md.find("## Failures"), std::string::npos);
  EXPECT_NE(md.find("| e\\|f | `/summary/makespan_s` | 1 | 1.5 | +50.00% | 1% |"), std::string::npos) << md;
}

TEST(BatchSummary, JsonSummaryCountsAndCarriesEveryCase) {
  const json j = batch_summary_json(failures_last({passed("a"), failed_expectation("b"), input_error("c")}));
  EXPECT_EQ(j["schema"], "partsim.batch");
  EXPECT_EQ(j["exit_code"], 2);
  EXPECT_EQ(j["counts"]["passed"], 1);
  EXPECT_EQ(j["counts"]["failed"], 1);
  EXPECT_EQ(j["counts"]["errors"], 1);
  ASSERT_EQ(j["cases"].size(), 3u);
  EXPECT_EQ(j["cases"][1]["name"], "b");
  EXPECT_EQ(j["cases"][1]["expectations"][1]["holds"], false);
  EXPECT_EQ(j["cases"][2]["outcome"], "error");
}

TEST(BatchScenarios, FoldersGiveTheirJsonFilesInNameOrderAndFilesThemselves) {
  const fs::path dir = test::temp_dir();
  fs::create_directories(dir / "a");
  fs::create_directories(dir / "b");
  for (const char* f : {"a/z.json", "a/m.json", "a/notes.txt", "b/x.json"}) std::ofstream(dir / f) << "{}";
  const auto files = batch_scenarios({(dir / "a").string(), (dir / "b" / "x.json").string()});
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0].filename(), "m.json");
  EXPECT_EQ(files[1].filename(), "z.json");
  EXPECT_EQ(files[2].filename(), "x.json");
  EXPECT_THROW(batch_scenarios({(dir / "missing").string()}), InputError);
  EXPECT_THROW(batch_scenarios({(dir / "b").string(), (dir / "b" / "x.json").string()}), InputError)
      << "two cases named x";
  fs::create_directories(dir / "empty");
  EXPECT_THROW(batch_scenarios({(dir / "empty").string()}), InputError);
  EXPECT_THROW(batch_scenarios({}), InputError);
}

} // namespace
} // namespace partsim
