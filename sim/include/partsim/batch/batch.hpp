// Batch runs for CI: every scenario of a folder run, its `/expect` checked, its figures compared with a previous
// batch (a baseline), and the outcome written as JUnit XML, markdown and JSON. Pure: the runs themselves are child
// processes of the CLI; this is what is made of their reports.
#pragma once

#include "partsim/batch/expectations.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace partsim {

/** The scenario files of the batch's arguments: a folder gives its *.json files in name order, a file itself.
 * @throws InputError for a path that does not exist, a folder without scenarios, or two scenarios with the same file
 * name (a case is named by its file's stem, and its baseline is found by that name). */
std::vector<std::filesystem::path> batch_scenarios(const std::vector<std::string>& arguments);

/** Relative tolerances of a baseline comparison: one for every figure, and some by pointer. */
struct Tolerances {
  double all = 0.01;
  std::vector<std::pair<std::string, double>> by_figure; ///< pointer, tolerance; the last one given wins

  double of(const std::string& figure) const;
};

/** Adds one `--tolerance` argument: `REL` (every figure) or `/json/pointer=REL`. @throws InputError */
void add_tolerance(Tolerances& tolerances, const std::string& text);

/** A figure that moved past its tolerance between the baseline's report and this one. */
struct FigureChange {
  std::string figure;             ///< JSON pointer into report.json
  nlohmann::json before;          ///< null: the figure is new
  nlohmann::json after;           ///< null: the figure is gone
  std::optional<double> relative; ///< (after - before) / |before| for two numbers with before != 0
  double tolerance = 0.0;
};

/** The figures of `after` that moved from `before`: every number under /summary and /memory_per_gpu past its
 * tolerance (relative to the baseline's value; from zero, relative to the new one), and /verdict when it changed. In
 * pointer order. */
std::vector<FigureChange> compare_reports(const nlohmann::json& before, const nlohmann::json& after,
                                          const Tolerances& tolerances);

/** One scenario of a batch. */
struct BatchCase {
  enum class Outcome { Passed, Failed, Error };

  std::string name; ///< the file's stem
  std::string path;
  int exit_code = 0;                              ///< the run's (3, out of memory, is a verdict and passes)
  std::string error_source, error_pointer, error; ///< Error: the run's one-line error
  std::string verdict;                            ///< from the report; empty without one
  std::optional<double> makespan;                 ///< /summary/makespan_s
  std::vector<ExpectationResult> expectations;
  bool has_baseline = false;         ///< a report of the same name was in the baseline
  std::vector<FigureChange> changes; ///< past their tolerance (each fails the case)

  std::size_t failed_expectations() const;
  /** Error with a run error; else Failed with a broken expectation or a figure moved past the baseline. */
  Outcome outcome() const;
};

/** The cases passed first, then failed, then errors, each group in name order: the failures are read last. */
std::vector<BatchCase> failures_last(std::vector<BatchCase> cases);

/** 0 when every case passed; 2 when any had an input error (the run's exit 2); else 1. */
int batch_exit_code(const std::vector<BatchCase>& cases);

/** JUnit XML: one <testsuite> per scenario, with a test case for the run, one per expectation and one for the
 * baseline comparison, so that CI test reporters (GitLab, Jenkins, GitHub) list each on its own. */
std::string format_junit(const std::vector<BatchCase>& cases);

/** A markdown summary for a CI job page: counts, a table of the cases, the failures, and the regression table
 * (figure, before, after, change). */
std::string format_batch_markdown(const std::vector<BatchCase>& cases);

/** The same as JSON (schema partsim.batch). */
nlohmann::json batch_summary_json(const std::vector<BatchCase>& cases);

/** The terminal table: one line per case, then the failures with their reasons. */
std::string format_batch_table(const std::vector<BatchCase>& cases);

} // namespace partsim
