// The typed report: to_json(from_json(j)) == j on every shipped scenario's report, strict reading (missing keys,
// wrong types, unknown keys named by their JSON pointer), the figures list, and the generated reference.
#include "partsim/common/exit_codes.hpp"
#include "partsim/report/report_document.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace partsim {
namespace {

using nlohmann::json;
using test::input_error;

/** A small simulated report, built as the writer builds one. */
json simulated_report() {
  ReportDocument doc;
  doc.partsim_version = "0.1.0";
  doc.scenario.name = "small";
  doc.scenario.input = {{"cluster", {{"nodes", 2}, {"gpus_per_node", 4}}}};
  ReportSummary& s = doc.summary.emplace();
  s.gpus = 8;
  s.makespan = 2.5;
  s.amdahl_limit = 12.0;
  doc.ranks.resize(2);
  doc.ranks[1].rank = 1;
  return to_json(doc);
}

InputError read_error(const json& report) {
  return input_error([&] { report_document_from_json(report, "point-0003.report.json"); });
}

TEST(ReportDocument, RoundTripsEveryShippedScenario) {
  std::vector<std::string> scenarios;
  for (const auto& entry : std::filesystem::directory_iterator(test::source_dir() / "scenarios"))
    if (entry.path().extension() == ".json") scenarios.push_back(entry.path().filename().string());
  std::sort(scenarios.begin(), scenarios.end());
  ASSERT_GE(scenarios.size(), 10U);
  std::vector<std::string> sections;
  for (const std::string& scenario : scenarios) {
    SCOPED_TRACE(scenario);
    const test::CliResult run = test::run_cli(
        {"run", (test::source_dir() / "scenarios" / scenario).string(), "--json", "--no-files", "--no-progress"});
    // Exit 3 is the out-of-memory verdict, with its report.
    ASSERT_TRUE(run.exit_code == kExitOk || run.exit_code == kExitOutOfMemory) << run.err;
    const json report = json::parse(run.out);
    const ReportDocument doc = report_document_from_json(report, scenario);
    EXPECT_EQ(to_json(doc).dump(2), report.dump(2));
    for (const auto& [key, _] : report.items()) sections.push_back(key);
    // Memory adds up: the model states (what stays between iterations) are the parameters, gradients and optimizer
    // states; the peak adds the activations and the workspace.
    std::vector<ReportMemory> memories;
    if (doc.memory_per_gpu) memories.push_back(*doc.memory_per_gpu);
    for (const ReportStage& stage : doc.pipeline_stages.value_or(std::vector<ReportStage>{}))
      if (stage.memory) memories.push_back(*stage.memory);
    for (const ReportMemory& m : memories) {
      EXPECT_NEAR(m.model_states, m.parameters + m.gradients + m.optimizer_states, 1e-6 * m.total);
      EXPECT_NEAR(m.total, m.model_states + m.activations + m.workspace, 1e-6 * m.total);
    }
  }
  // The shipped scenarios exercise every optional section.
  for (const char* section : {"summary", "memory_per_gpu", "collectives", "class_split", "coordinator", "balancing",
                              "pipeline_stages", "reliability"})
    EXPECT_NE(std::find(sections.begin(), sections.end(), section), sections.end()) << section;
}

TEST(ReportDocument, RoundTripsABuiltDocument) {
  const json report = simulated_report();
  EXPECT_EQ(to_json(report_document_from_json(report, "x")).dump(), report.dump());
}

TEST(ReportDocument, MissingKeyIsNamedByItsPointer) {
  json report = simulated_report();
  report["summary"].erase("makespan_s");
  const InputError e = read_error(report);
  EXPECT_EQ(e.source(), "point-0003.report.json");
  EXPECT_EQ(e.pointer(), "/summary/makespan_s");
  EXPECT_NE(e.detail().find("missing"), std::string::npos) << e.what();
}

TEST(ReportDocument, WrongTypeIsNamedByItsPointer) {
  json report = simulated_report();
  report["ranks"][1]["compute_s"] = "fast";
  const InputError e = read_error(report);
  EXPECT_EQ(e.pointer(), "/ranks/1/compute_s");
  EXPECT_NE(e.detail().find("expected a number"), std::string::npos) << e.what();
}

TEST(ReportDocument, IntegerFieldRejectsAFraction) {
  json report = simulated_report();
  report["summary"]["gpus"] = 8.5;
  EXPECT_EQ(read_error(report).pointer(), "/summary/gpus");
}

TEST(ReportDocument, UnknownKeyIsAnError) {
  json report = simulated_report();
  report["engine"]["simulater"] = "SimGrid";
  EXPECT_EQ(read_error(report).pointer(), "/engine/simulater");
}

TEST(ReportDocument, NamesAreReadByTheirEnumTables) {
  ReportCollective collective;
  collective.kind = CommKind::Tensor;
  ReportDocument doc = report_document_from_json(simulated_report(), "x");
  doc.collectives = std::vector<ReportCollective>{collective};
  json report = to_json(doc);
  EXPECT_EQ(report["collectives"][0]["kind"], "tensor");
  EXPECT_EQ(report_document_from_json(report, "x").collectives->at(0).kind, CommKind::Tensor);
  report["collectives"][0]["kind"] = "gradients";
  const InputError e = read_error(report);
  EXPECT_EQ(e.pointer(), "/collectives/0/kind");
  EXPECT_NE(e.detail().find("expected one of data, tensor, pipeline, expert"), std::string::npos) << e.what();
  report = to_json(doc);
  report["verdict"] = "maybe";
  EXPECT_EQ(read_error(report).pointer(), "/verdict");
}

TEST(ReportDocument, NullableFigureAcceptsNullOnly) {
  json report = simulated_report();
  report["summary"]["amdahl_limit"] = nullptr;
  EXPECT_FALSE(report_document_from_json(report, "x").summary->amdahl_limit.has_value());
  report["summary"]["amdahl_limit"] = "unbounded";
  EXPECT_EQ(read_error(report).pointer(), "/summary/amdahl_limit");
}

TEST(ReportDocument, OtherSchemaOrVersionIsAnError) {
  json report = simulated_report();
  report["schema_version"] = 2;
  EXPECT_EQ(read_error(report).pointer(), "/schema_version");
  report = simulated_report();
  report["schema"] = "other";
  EXPECT_EQ(read_error(report).pointer(), "/schema");
}

TEST(ReportDocument, SimulatedVerdictNeedsASummary) {
  json report = simulated_report();
  report.erase("summary");
  EXPECT_EQ(read_error(report).pointer(), "/summary");
}

TEST(ReportDocument, OutOfMemoryTakesItsGpusFromTheCluster) {
  json report = simulated_report();
  report.erase("summary");
  report["verdict"] = "out_of_memory";
  EXPECT_EQ(report_document_from_json(report, "x").gpus(), 8);
  report["scenario"]["input"]["cluster"].erase("gpus_per_node");
  EXPECT_EQ(read_error(report).pointer(), "/scenario/input/cluster/gpus_per_node");
}

TEST(ReportDocument, FiguresAreTheNumericSummaryFieldsInReportOrder) {
  const json report = simulated_report();
  const std::vector<ReportFigure> figures = report_document_from_json(report, "x").summary->figures();
  std::vector<std::string> expected;
  for (const auto& [key, value] : report["summary"].items())
    if (value.is_number()) expected.push_back(key);
  std::vector<std::string> keys;
  for (const auto& [key, value] : figures) keys.push_back(key);
  EXPECT_EQ(keys, expected);
  EXPECT_EQ(std::count(keys.begin(), keys.end(), "mfu"), 0) << "absent: not model training";
  const auto makespan = std::find(keys.begin(), keys.end(), "makespan_s");
  ASSERT_NE(makespan, keys.end());
  EXPECT_EQ(figures[static_cast<std::size_t>(makespan - keys.begin())].second, 2.5);
}

TEST(ReportDocument, ReferenceIsCurrent) {
  const std::filesystem::path path = test::source_dir() / "docs" / "report-reference.md";
  EXPECT_EQ(test::read_file(path), report_reference_markdown())
      << path << " is not what the field tables in report_document.hpp generate; regenerate it with\n"
      << "  build/tests/partsim_report_reference > docs/report-reference.md";
}

TEST(ReportDocument, ReferenceNamesEveryKeyOfAReport) {
  const std::string reference = report_reference_markdown();
  for (const char* pointer : {"`/summary/makespan_s`", "`/ranks/*/compute_s`", "`/class_split/partitions/*/per_class`",
                              "`/pipeline_stages/*/memory_per_gpu/total_bytes`", "`/engine/seed`"})
    EXPECT_NE(reference.find(pointer), std::string::npos) << pointer;
}

} // namespace
} // namespace partsim
