// partsim validation: run every case of the validation suite (scenarios reproducing published measurements, one child
// process each) and print the simulated figures against the published ones.
#include "child_process.hpp"
#include "commands.hpp"

#include "partsim/batch/validation.hpp"
#include "partsim/common/error.hpp"
#include "partsim/common/output_file.hpp"
#include "partsim/input/data_dir.hpp"
#include "partsim/input/scenario.hpp"
#include "partsim/report/report_document.hpp"

#include <fmt/format.h>

#include <iostream>
#include <memory>

namespace partsim::cli {

namespace {

struct ValidationOptions {
  std::string dir;
  std::size_t jobs = 0;
  std::string markdown;
  double max_mean_error = -1.0; ///< percent; < 0: no bound
  bool breakdown = false;       ///< also print (and write to the markdown) where each case's time goes
};

int validation(const ValidationOptions& options) {
  const std::filesystem::path dir =
      options.dir.empty() ? data_dir() / "validation" : std::filesystem::path(options.dir);
  const std::vector<std::filesystem::path> cases = validation_cases(dir);
  std::vector<ValidationRow> rows;
  std::vector<std::vector<std::string>> commands;
  for (const std::filesystem::path& path : cases) {
    const Scenario scenario = load_scenario(path, {}, data_dir());
    if (!scenario.published)
      throw InputError(path.string(), "/published", "a validation case needs the published figure it reproduces");
    rows.push_back({scenario.name, *scenario.published, std::nullopt, "", std::nullopt});
    commands.push_back(child_run_command(path.string()));
  }
  const std::size_t jobs = job_count(options.jobs);
  std::size_t finished = 0;
  const auto results = run_children(commands, jobs, [&](std::size_t) {
    std::cerr << fmt::format("\rpartsim: validation {} of {} cases done", ++finished, commands.size()) << std::flush;
  });
  std::cerr << '\n';
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ChildResult& r = results[i];
    if (r.exit_code != kExitOk) {
      rows[i].failure = child_error(r).message;
      continue;
    }
    const nlohmann::json report = nlohmann::json::parse(r.out);
    rows[i].simulated = report_figure(report, rows[i].published.figure, cases[i].string());
    // A memory figure (unit B) says nothing of where the time goes: its case shows no shares.
    if (rows[i].published.unit != "B")
      rows[i].shares = time_shares(report_document_from_json(report, cases[i].string()));
  }
  write_stdout(format_validation_table(rows) + (options.breakdown ? "\n" + format_time_shares_table(rows) : ""));
  if (!options.markdown.empty())
    write_file_atomically(options.markdown, format_validation_markdown(rows) +
                                                (options.breakdown ? "\n" + format_time_shares_markdown(rows) : ""));
  const ValidationSummary summary = summarise(rows);
  CommandFailed failed;
  for (const ValidationRow& row : rows)
    if (!row.failure.empty())
      failed.errors.push_back({"", "", fmt::format("case {} did not run: {}", row.name, row.failure)});
  if (options.max_mean_error >= 0 && 100 * summary.mean_abs_error > options.max_mean_error)
    failed.errors.push_back({"", "",
                             fmt::format("mean |error| {:.2f}% is above the bound of {:.2f}% (--max-mean-error)",
                                         100 * summary.mean_abs_error, options.max_mean_error)});
  if (failed.errors.empty()) return kExitOk;
  throw failed;
}

} // namespace

Action add_validation_command(CLI::App& app) {
  auto options = std::make_shared<ValidationOptions>();
  CLI::App* command = app.add_subcommand(
      "validation", "Run the validation suite: simulated figures against published measurements, with the errors");
  command->add_option("DIR", options->dir, "Folder of validation cases (default: the validation/ folder shipped)");
  command->add_option("--jobs,-j", options->jobs, "Cases simulated at once (default: one per core)");
  command->add_option("--markdown", options->markdown, "Also write the table as markdown to this file");
  command->add_option("--max-mean-error", options->max_mean_error,
                      "Fail (exit 1) when the mean |error| is above this many percent");
  command->add_flag("--breakdown", options->breakdown,
                    "Also show where each case's simulated time goes: compute, exposed communication by kind, "
                    "pipeline wait, idle (and write it to the --markdown file)");
  return [options] { return validation(*options); };
}

} // namespace partsim::cli
