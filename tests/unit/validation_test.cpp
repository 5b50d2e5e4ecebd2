// The validation suite's pieces without running it: cases found in name order, report figures by pointer (with
// errors naming /published/figure), errors, the summary and both tables.
#include "partsim/batch/validation.hpp"
#include "partsim/common/error.hpp"
#include "partsim/report/report_document.hpp"

#include "test_support.hpp"

#include <fstream>

namespace partsim {
namespace {

using nlohmann::json;

ValidationRow row(std::string name, double published, std::optional<double> simulated) {
  ValidationRow r;
  r.name = std::move(name);
  r.published.figure = "/summary/makespan_s";
  r.published.value = published;
  r.published.unit = "s";
  r.published.source = "a paper";
  r.published.url = "https://example.org/paper";
  r.simulated = simulated;
  return r;
}

TEST(Validation, ErrorsAndSummary) {
  const std::vector<ValidationRow> rows{row("a", 10.0, 9.0), row("b", 2.0, 2.5), row("c", 1.0, std::nullopt)};
  EXPECT_DOUBLE_EQ(*rows[0].error(), -0.1);
  EXPECT_DOUBLE_EQ(*rows[1].error(), 0.25);
  EXPECT_FALSE(rows[2].error());
  const ValidationSummary s = summarise(rows);
  EXPECT_EQ(s.cases, 3u);
  EXPECT_EQ(s.failed, 1u);
  EXPECT_DOUBLE_EQ(s.mean_abs_error, 0.175);
  EXPECT_DOUBLE_EQ(s.worst_abs_error, 0.25);
  EXPECT_EQ(s.worst_case, "b");
  const std::string table = format_validation_table(rows);
  EXPECT_NE(table.find("-10.0%"), std::string::npos) << table;
  EXPECT_NE(table.find("+25.0%"), std::string::npos) << table;
  EXPECT_NE(table.find("mean |error| 17.5%, worst 25.0% (b) over 2 case(s); 1 did not run"), std::string::npos)
      << table;
  const std::string markdown = format_validation_markdown(rows);
  EXPECT_NE(
      markdown.find("| `a` | `/summary/makespan_s` | 9 s | 10 s | -10.0% | [a paper](https://example.org/paper) |"),
      std::string::npos)
      << markdown;
}

TEST(Validation, GroupsSummariseTheirOwnCases) {
  std::vector<ValidationRow> rows{row("a", 10.0, 9.0), row("b", 2.0, 2.5), row("c", 1.0, std::nullopt),
                                  row("d", 4.0, 4.2), row("e", 1.0, 1.5)};
  EXPECT_TRUE(summarise_groups(rows).empty()) << "no case names a group";
  EXPECT_EQ(format_validation_table(rows).find("group"), std::string::npos);
  EXPECT_EQ(format_validation_markdown(rows).find("| group |"), std::string::npos);

  rows[0].published.group = "A100";
  rows[1].published.group = "A100";
  rows[2].published.group = "H100";
  rows[4].published.group = "A100"; // d names none
  const std::vector<ValidationGroup> groups = summarise_groups(rows);
  ASSERT_EQ(groups.size(), 3u);
  // In the order the groups first appear: A100 (a), H100 (c), none (d).
  EXPECT_EQ(groups[0].name, "A100");
  EXPECT_EQ(groups[0].summary.cases, 3u);
  EXPECT_EQ(groups[0].summary.failed, 0u);
  EXPECT_DOUBLE_EQ(groups[0].summary.mean_abs_error, (0.1 + 0.25 + 0.5) / 3);
  EXPECT_DOUBLE_EQ(groups[0].summary.worst_abs_error, 0.5);
  EXPECT_EQ(groups[0].summary.worst_case, "e");
  EXPECT_DOUBLE_EQ(groups[0].lowest_error, -0.1);
  EXPECT_DOUBLE_EQ(groups[0].highest_error, 0.5);
  EXPECT_EQ(groups[1].name, "H100");
  EXPECT_EQ(groups[1].summary.cases, 1u);
  EXPECT_EQ(groups[1].summary.failed, 1u);
  EXPECT_EQ(groups[2].name, "");
  EXPECT_NEAR(groups[2].lowest_error, 0.05, 1e-12);
  EXPECT_NEAR(groups[2].highest_error, 0.05, 1e-12);
  // The overall summary does not change with the groups.
  EXPECT_DOUBLE_EQ(summarise(rows).mean_abs_error, (0.1 + 0.25 + 0.05 + 0.5) / 4);

  const std::string table = format_validation_table(rows);
  EXPECT_NE(table.find("-10.0% .. +50.0%"), std::string::npos) << table;
  EXPECT_NE(table.find("0 (1 did not run)"), std::string::npos) << table;
  EXPECT_NE(table.find("(no group)"), std::string::npos) << table;
  const std::string markdown = format_validation_markdown(rows);
  EXPECT_NE(markdown.find("| A100 | 3 | -10.0% .. +50.0% | 28.3% |"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| H100 | 0 (1 did not run) | - | - |"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| (no group) | 1 | +5.0% | 5.0% |"), std::string::npos) << markdown;
  EXPECT_LT(markdown.find("mean |error| 22.5%"), markdown.find("| group |")) << "the groups follow the summary";
}

TEST(Validation, GroupMustBeAString) {
  nlohmann::json doc = test::base_scenario();
  doc["published"] = {{"figure", "/summary/makespan_s"},
                      {"value", 1.0},
                      {"source", "a paper"},
                      {"url", "https://example.org"},
                      {"group", 3}};
  const InputError e = test::input_error([&] { test::parse(doc); });
  EXPECT_EQ(e.pointer(), "/published/group") << e.what();
  doc["published"]["group"] = "A100";
  EXPECT_EQ(test::parse(doc).published->group, "A100");
}

TEST(Validation, ReportFiguresByPointer) {
  const json report = {{"summary", {{"makespan_s", 1.5}, {"verdict", "x"}}},
                       {"collectives", json::array({{{"busbw_bytes_per_s", 2e11}}})}};
  EXPECT_DOUBLE_EQ(report_figure(report, "/summary/makespan_s", "case.json"), 1.5);
  EXPECT_DOUBLE_EQ(report_figure(report, "/collectives/0/busbw_bytes_per_s", "case.json"), 2e11);
  for (const char* bad : {"/summary/nothing", "/summary/verdict", "/collectives/7/busbw_bytes_per_s", "no-slash"}) {
    try {
      report_figure(report, bad, "case.json");
      ADD_FAILURE() << bad << " was accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.source(), "case.json");
      EXPECT_EQ(e.pointer(), "/published/figure");
    }
  }
}

TEST(Validation, TimeSharesAverageTheStagesOverTheMakespan) {
  // Two stages of 2 ranks, makespan 10 s: stage 0 busy the whole time (6 + 1 + 1 + 2), stage 1 for 9.5 s
  // (7 + 1 + 0.5 + 1) and idle 0.5 s. Each share: its rank-weighted sum over 4 ranks x 10 s.
  ReportDocument report;
  report.summary = ReportSummary{};
  report.summary->makespan = 10.0;
  ReportStage first;
  first.stage = 0;
  first.ranks = 2;
  first.compute = 6.0;
  first.tensor_exposed = 1.0;
  first.data_exposed = 1.0;
  first.pipeline_exposed = 2.0;
  ReportStage last;
  last.stage = 1;
  last.ranks = 2;
  last.compute = 7.0;
  last.expert_exposed = 1.0;
  last.context_exposed = 0.5;
  last.pipeline_exposed = 1.0;
  report.pipeline_stages = std::vector<ReportStage>{first, last};
  const std::optional<TimeShares> s = time_shares(report);
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(s->compute, 0.65);
  EXPECT_DOUBLE_EQ(s->tensor, 0.05);
  EXPECT_DOUBLE_EQ(s->data, 0.05);
  EXPECT_DOUBLE_EQ(s->expert, 0.05);
  EXPECT_DOUBLE_EQ(s->context, 0.025);
  EXPECT_DOUBLE_EQ(s->pipeline, 0.15);
  EXPECT_NEAR(s->idle, 0.025, 1e-15);
  EXPECT_NEAR(s->compute + s->tensor + s->context + s->expert + s->data + s->pipeline + s->idle, 1.0, 1e-15);

  std::vector<ValidationRow> rows{row("trained", 10.0, 10.0), row("bench", 1.0, 1.0)};
  rows[0].shares = s;
  const std::string table = format_time_shares_table(rows);
  EXPECT_NE(table.find("65.0%"), std::string::npos) << table;
  EXPECT_NE(table.find("bench"), std::string::npos) << table;
  EXPECT_NE(format_time_shares_markdown(rows).find("| `trained` | 65.0% | 5.0% | 2.5% | 5.0% | 5.0% | 15.0% | 2.5% |"),
            std::string::npos)
      << format_time_shares_markdown(rows);
  EXPECT_NE(format_time_shares_markdown(rows).find("| `bench` | - | - | - | - | - | - | - |"), std::string::npos);

  // No stages (a collective benchmark), no makespan, stages without times (out of memory): no shares.
  ReportDocument collective = report;
  collective.pipeline_stages.reset();
  EXPECT_FALSE(time_shares(collective));
  ReportDocument no_makespan = report;
  no_makespan.summary->makespan = 0.0;
  EXPECT_FALSE(time_shares(no_makespan));
  ReportDocument out_of_memory = report;
  out_of_memory.summary.reset();
  EXPECT_FALSE(time_shares(out_of_memory));
  ReportDocument no_times = report;
  (*no_times.pipeline_stages)[1].compute.reset();
  (*no_times.pipeline_stages)[1].ranks.reset();
  EXPECT_FALSE(time_shares(no_times));
}

TEST(Validation, CasesAreTheFolderJsonFilesInNameOrder) {
  const auto dir = test::temp_dir();
  EXPECT_THROW(validation_cases(dir), InputError) << "an empty folder";
  EXPECT_THROW(validation_cases(dir / "missing"), InputError);
  for (const char* name : {"b.json", "a.json", "notes.md"}) std::ofstream(dir / name) << "{}";
  const auto cases = validation_cases(dir);
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].filename(), "a.json");
  EXPECT_EQ(cases[1].filename(), "b.json");
}

TEST(Validation, ShippedCasesParseAndNameTheirSource) {
  for (const auto& path : validation_cases(test::source_dir() / "validation")) {
    SCOPED_TRACE(path.string());
    const Scenario s = load_scenario(path, {}, test::source_dir());
    ASSERT_TRUE(s.published.has_value());
    EXPECT_TRUE(s.published->url.starts_with("https://"));
    EXPECT_FALSE(s.published->source.empty());
    EXPECT_FALSE(s.published->group.empty()) << "every shipped case names its group (README, By group)";
    EXPECT_EQ(s.name, path.stem().string()) << "a case is named after its file";
  }
}

} // namespace
} // namespace partsim
