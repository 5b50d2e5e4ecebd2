// The validation suite: scenarios that reproduce published measurements (validation/*.json, each with `published`),
// their simulated figures against the published values, and the table of errors (text and markdown).
#pragma once

#include "partsim/input/scenario.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace partsim {

struct ReportDocument;

/** Where a simulated training run's time goes, as shares of its makespan averaged over the GPUs (each pipeline stage
 * weighted by its ranks): the compute, and each kind of communication the compute did not hide (`pipeline` holds the
 * stage's wait for its neighbours, the bubble included); `idle` is the rest (the wait for a slower stage at the end).
 * A stage's compute and exposed times add up to its busy time, so the shares add up to 1. */
struct TimeShares {
  double compute = 0.0;
  double tensor = 0.0;
  double context = 0.0;
  double expert = 0.0;
  double data = 0.0;
  double pipeline = 0.0;
  double idle = 0.0;
};

/** The shares of a report (its pipeline stages and makespan); nullopt for a report without stages (a collective
 * benchmark), without their times (a run out of memory) or without a positive makespan. */
std::optional<TimeShares> time_shares(const ReportDocument& report);

/** One case: its published figure, and what the simulation gave (nullopt: it did not run; `failure` says why). */
struct ValidationRow {
  std::string name;
  PublishedFigure published;
  std::optional<double> simulated;
  std::string failure;
  std::optional<TimeShares> shares; ///< where the simulated time went (training cases that ran)

  /** (simulated - published) / published; nullopt without a simulated figure. */
  std::optional<double> error() const;
};

/** The validation cases of `dir`: its *.json files in name order. @throws InputError when there are none. */
std::vector<std::filesystem::path> validation_cases(const std::filesystem::path& dir);

/** The figure `pointer` of a report. @throws InputError (source `report`, the case's file) when the report has no
 * number there. */
double report_figure(const nlohmann::json& report, const std::string& pointer, const std::string& source);

struct ValidationSummary {
  std::size_t cases = 0;
  std::size_t failed = 0;      ///< cases that did not run
  double mean_abs_error = 0.0; ///< over the cases that ran
  double worst_abs_error = 0.0;
  std::string worst_case;
};

ValidationSummary summarise(const std::vector<ValidationRow>& rows);

/** The cases of one group (`published.group`; "" collects the cases that name none): their summary and the range of
 * their signed errors (0 and 0 when none ran). */
struct ValidationGroup {
  std::string name;
  ValidationSummary summary;
  double lowest_error = 0.0;
  double highest_error = 0.0;
};

/** One entry per group, in the order the groups first appear in `rows`; empty when no row names a group. */
std::vector<ValidationGroup> summarise_groups(const std::vector<ValidationRow>& rows);

/** The terminal table: case, figure, simulated, published, error; then the mean and worst; then, when the cases name
 * groups, one line per group (cases, the range of errors, the mean |error|). */
std::string format_validation_table(const std::vector<ValidationRow>& rows);

/** The same as a markdown table (for the README), with each case's source linked, and the groups' table. */
std::string format_validation_markdown(const std::vector<ValidationRow>& rows);

/** Each case's TimeShares as a terminal table (percent; "-" for a case without them), to see which mechanism a case
 * tests: its error can only come from the parts its time is spent in. */
std::string format_time_shares_table(const std::vector<ValidationRow>& rows);

/** The same as a markdown table. */
std::string format_time_shares_markdown(const std::vector<ValidationRow>& rows);

} // namespace partsim
