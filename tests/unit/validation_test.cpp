// The validation suite's pieces without running it: cases found in name order, report figures by pointer (with
// errors naming /published/figure), errors, the summary and both tables.
#include "partsim/batch/validation.hpp"
#include "partsim/common/error.hpp"

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
    EXPECT_EQ(s.name, path.stem().string()) << "a case is named after its file";
  }
}

} // namespace
} // namespace partsim
