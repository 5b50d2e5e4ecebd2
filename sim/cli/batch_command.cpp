// partsim batch: run a folder of scenarios (one child process each), check their expectations, compare them with a
// previous batch, and write JUnit XML, a markdown summary and a JSON summary for CI.
#include "child_process.hpp"
#include "commands.hpp"

#include "partsim/batch/batch.hpp"
#include "partsim/common/error.hpp"
#include "partsim/common/output_file.hpp"
#include "partsim/common/text.hpp"
#include "partsim/input/data_dir.hpp"
#include "partsim/input/json_file.hpp"
#include "partsim/input/scenario.hpp"

#include <fmt/format.h>

#include <iostream>
#include <memory>

namespace partsim::cli {

namespace {

namespace fs = std::filesystem;

struct BatchOptions {
  std::vector<std::string> inputs;
  std::vector<std::string> sets;
  std::size_t jobs = 0;
  std::string out_dir;
  std::string baseline;
  std::vector<std::string> tolerances;
  bool progress = true;
};

fs::path baseline_report(const fs::path& baseline, const std::string& name) {
  return baseline / "reports" / (name + ".report.json");
}

int batch(const BatchOptions& options) {
  const std::vector<fs::path> files = batch_scenarios(options.inputs);
  std::vector<Override> overrides;
  for (const std::string& text : options.sets) overrides.push_back(parse_override(text));
  Tolerances tolerances;
  for (const std::string& text : options.tolerances) add_tolerance(tolerances, text);
  const fs::path baseline(options.baseline);
  if (!options.baseline.empty() && !fs::is_directory(baseline / "reports"))
    throw InputError(options.baseline, "",
                     "expected the output folder of an earlier partsim batch (with a reports/ folder) as --baseline");

  // Each case is read here too, for its expectations: a scenario that does not parse is that case's error, and the
  // others still run.
  std::vector<BatchCase> cases(files.size());
  std::vector<Scenario> scenarios(files.size());
  std::vector<std::size_t> to_run;
  std::vector<std::vector<std::string>> commands;
  for (std::size_t i = 0; i < files.size(); ++i) {
    BatchCase& c = cases[i];
    c.name = files[i].stem().string();
    c.path = files[i].string();
    try {
      scenarios[i] = load_scenario(files[i], overrides, data_dir());
    } catch (const InputError& e) {
      c.exit_code = kExitInputError;
      c.error_source = e.source();
      c.error_pointer = e.pointer();
      c.error = e.what();
      continue;
    }
    commands.push_back(child_run_command(c.path, options.sets));
    to_run.push_back(i);
  }
  const std::size_t jobs = job_count(options.jobs);
  std::size_t finished = 0;
  const auto results = run_children(commands, jobs, [&](std::size_t) {
    if (options.progress)
      std::cerr << fmt::format("\rpartsim: batch {} of {} scenarios done", ++finished, commands.size()) << std::flush;
  });
  if (options.progress) std::cerr << '\n';

  const fs::path dir = options.out_dir.empty() ? fs::path("partsim-out") / "batch" : fs::path(options.out_dir);
  create_output_dir(dir / "reports");
  for (std::size_t k = 0; k < to_run.size(); ++k) {
    BatchCase& c = cases[to_run[k]];
    const ChildResult& r = results[k];
    c.exit_code = r.exit_code;
    // Exit 3 is a verdict (the plan does not fit), with a report: expectations may ask for it.
    if (r.exit_code != kExitOk && r.exit_code != kExitOutOfMemory) {
      const ChildError e = child_error(r);
      c.error_source = e.source;
      c.error_pointer = e.pointer;
      c.error = e.message;
      continue;
    }
    const nlohmann::json report = nlohmann::json::parse(r.out);
    write_file_atomically(dir / "reports" / (c.name + ".report.json"), r.out);
    if (report.contains("verdict") && report["verdict"].is_string()) c.verdict = report["verdict"];
    const nlohmann::json::json_pointer makespan("/summary/makespan_s");
    if (report.contains(makespan) && report[makespan].is_number()) c.makespan = report[makespan].get<double>();
    c.expectations = check_expectations(scenarios[to_run[k]], report);
    if (!options.baseline.empty()) {
      const fs::path before = baseline_report(baseline, c.name);
      if (fs::exists(before)) {
        c.has_baseline = true;
        c.changes = compare_reports(read_json_file(before), report, tolerances);
      }
    }
  }
  cases = failures_last(std::move(cases));

  write_file_atomically(dir / "junit.xml", format_junit(cases));
  write_file_atomically(dir / "summary.md", format_batch_markdown(cases));
  write_file_atomically(dir / "summary.json", batch_summary_json(cases).dump(2) + "\n");
  write_stdout(format_batch_table(cases));
  write_stdout(
      fmt::format("  wrote junit.xml, summary.md, summary.json and {} reports in {}\n", to_run.size(), dir.string()));

  const int code = batch_exit_code(cases);
  if (code == kExitOk) return kExitOk;
  CommandFailed failed{code, {}};
  for (const BatchCase& c : cases) {
    if (c.outcome() == BatchCase::Outcome::Error) {
      failed.errors.push_back({c.error_source, c.error_pointer, fmt::format("case {}: {}", c.name, c.error)});
    } else if (c.outcome() == BatchCase::Outcome::Failed) {
      const std::size_t broken = c.failed_expectations();
      failed.errors.push_back(
          {c.path, "",
           fmt::format("case {}: {} expectation{} failed, {} figure{} moved past the baseline", c.name, broken,
                       broken == 1 ? "" : "s", c.changes.size(), c.changes.size() == 1 ? "" : "s")});
    }
  }
  throw failed;
}

} // namespace

Action add_batch_command(CLI::App& app) {
  auto options = std::make_shared<BatchOptions>();
  CLI::App* command = app.add_subcommand(
      "batch", "Run a folder of scenarios for CI: expectations, baseline regressions, JUnit XML and summaries");
  command->add_option("SCENARIOS", options->inputs, "Folders of scenarios (their *.json files) and scenario files")
      ->required();
  command->add_option("--set", options->sets, "Override a field of every scenario: /json/pointer=value")
      ->type_name("PATH=VALUE");
  command->add_option("--jobs,-j", options->jobs, "Scenarios simulated at once (default: one per core)");
  command->add_option("--out", options->out_dir,
                      "Output folder: junit.xml, summary.md, summary.json, reports/ (default: partsim-out/batch)");
  command->add_option("--baseline", options->baseline,
                      "An earlier batch's output folder: fail on every figure that moved past its tolerance");
  command
      ->add_option("--tolerance", options->tolerances,
                   "Relative tolerance against the baseline: REL for every figure (default 0.01), or "
                   "/json/pointer=REL for one (repeatable)")
      ->type_name("[PATH=]REL");
  command->add_flag("!--no-progress", options->progress, "No progress line on stderr");
  return [options] { return batch(*options); };
}

} // namespace partsim::cli
