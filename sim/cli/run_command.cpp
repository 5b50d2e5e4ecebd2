// partsim run / validate / list: load a scenario, simulate it, write the report.
#include "commands.hpp"

#include "partsim/batch/expectations.hpp"
#include "partsim/common/error.hpp"
#include "partsim/common/event_stream.hpp"
#include "partsim/common/output_file.hpp"
#include "partsim/engine/engine.hpp"
#include "partsim/engine/ps_engine.hpp"
#include "partsim/engine/serving_engine.hpp"
#include "partsim/input/data_dir.hpp"
#include "partsim/input/hardware.hpp"
#include "partsim/input/json_file.hpp"
#include "partsim/input/scenario.hpp"
#include "partsim/plan/strategy.hpp"
#include "partsim/ps/ps_plan.hpp"
#include "partsim/ps/ps_report.hpp"
#include "partsim/report/metrics.hpp"
#include "partsim/report/reliability.hpp"
#include "partsim/report/report_document.hpp"
#include "partsim/report/report_writers.hpp"
#include "partsim/serving/serving_report.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

namespace partsim::cli {

namespace {

struct ScenarioOptions {
  std::string path; ///< empty: the built-in default
  std::vector<std::string> sets;
  std::vector<std::string> unsets; ///< fields taken out before the --set overrides, so that their defaults apply
};

void add_scenario_options(CLI::App* command, ScenarioOptions& options, bool optional_path) {
  auto* path = command->add_option("SCENARIO", options.path,
                                   optional_path ? "Scenario JSON file (default: the built-in default scenario)"
                                                 : "Scenario JSON file");
  if (!optional_path) path->required();
  command->add_option("--set", options.sets, "Override a field: /json/pointer=value (repeatable)")
      ->type_name("PATH=VALUE");
  command
      ->add_option("--unset", options.unsets,
                   "Take a field out so that its default applies, before any --set (repeatable)")
      ->type_name("PATH");
}

Scenario load(const ScenarioOptions& options) {
  std::vector<Override> overrides;
  for (const std::string& pointer : options.unsets) {
    if (pointer.empty() || pointer[0] != '/')
      throw InputError("--unset", pointer, "expected a JSON pointer such as /strategy/data");
    overrides.push_back({pointer, nullptr, true});
  }
  for (const std::string& text : options.sets) overrides.push_back(parse_override(text));
  return options.path.empty() ? default_scenario(overrides, data_dir())
                              : load_scenario(options.path, overrides, data_dir());
}

/** A folder name from the scenario's name: letters, digits, '-', '_' and '.', never starting with '.' (no "..", no
 * hidden folder), at most 100 bytes, so that outputs stay inside the output root. */
std::string safe_name(const std::string& name) {
  std::string out;
  for (char c : name) {
    if (out.size() >= 100) break;
    const bool plain = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    out += plain && !(c == '.' && out.empty()) ? c : '_';
  }
  return out;
}

struct RunOptions {
  ScenarioOptions scenario;
  std::string out_dir;
  bool json = false;
  bool no_files = false;
  std::string progress; ///< "": when stderr is a terminal; "text" or "json": always
  bool no_progress = false;
  bool no_expect = false; ///< skip the scenario's `/expect` (sweep and validation children)
};

/** Checks the scenario's expectations against its report: one line per failed one on stderr; `code` when all hold
 * (or there are none, or --no-expect), else kExitExpectationFailed. */
int check_expectations(const RunOptions& options, const Scenario& scenario, const nlohmann::json& report, int code) {
  if (options.no_expect || scenario.expectations.empty()) return code;
  // Expectations describe the scenario as written: a --set of anything but /expect makes another scenario (a what-if
  // such as `--set /cluster/nodes=8`), whose figures they do not bound. `partsim batch` checks them even then.
  for (const std::string& text : options.scenario.sets) {
    const std::string pointer = parse_override(text).pointer;
    if (pointer != "/expect" && pointer.rfind("/expect/", 0) != 0) {
      std::cerr << fmt::format("partsim: {} expectation(s) not checked: --set {} changed the scenario they describe\n",
                               scenario.expectations.size(), pointer);
      return code;
    }
  }
  const std::vector<ExpectationResult> results = check_expectations(scenario, report);
  int failed = 0;
  for (const ExpectationResult& r : results)
    if (!r.holds) {
      ++failed;
      std::cerr << fmt::format("partsim: expectation failed: {}: /expect: {}\n", scenario.source, describe_failure(r));
    }
  if (failed == 0) {
    std::cerr << fmt::format("partsim: {} expectation(s) hold\n", results.size());
    return code;
  }
  return kExitExpectationFailed;
}

std::filesystem::path output_dir(const RunOptions& options, const Scenario& scenario) {
  return options.out_dir.empty() ? std::filesystem::path("partsim-out") / safe_name(scenario.name)
                                 : std::filesystem::path(options.out_dir);
}

/** A plan that does not fit in GPU memory is reported, not simulated as if it fit: exit code 3. */
int report_out_of_memory(const RunOptions& options, const Scenario& scenario, const Plan& plan) {
  const Report report = make_out_of_memory_report(scenario, plan);
  const nlohmann::json document = report_to_json(report, scenario);
  const std::string text = document.dump(2) + '\n';
  write_stdout(options.json ? text : format_table(report));
  if (!options.no_files && scenario.run.outputs.report_json) {
    const std::filesystem::path dir = output_dir(options, scenario);
    create_output_dir(dir);
    write_file_atomically(dir / "report.json", text);
  }
  const double gib = 1024.0 * 1024.0 * 1024.0;
  std::cerr << fmt::format("partsim: {}: out of memory: needs {:.2f} GiB per GPU, the GPU has {:.1f} GiB\n",
                           scenario.name, plan.memory->total() / gib, plan.memory->capacity / gib);
  return check_expectations(options, scenario, document, kExitOutOfMemory);
}

/** The outputs of a report its own engine made (serving, parameter server): the JSON or `table` on standard output,
 * report.json when asked, the engine's `done` line on standard error, then the scenario's expectations. */
int emit_document(const RunOptions& options, const Scenario& scenario, const ReportDocument& document,
                  const std::string& table, const std::string& done, const std::string* trace = nullptr) {
  const std::string text = to_json(document).dump(2) + '\n';
  if (options.json)
    write_stdout(text);
  else if (scenario.run.outputs.table)
    write_stdout(table);
  if (!options.no_files && scenario.run.outputs.report_json) {
    const std::filesystem::path dir = output_dir(options, scenario);
    create_output_dir(dir);
    write_file_atomically(dir / "report.json", text);
    const bool traced = trace != nullptr && scenario.run.outputs.trace;
    if (traced) write_file_atomically(dir / "trace.json", *trace);
    if (!options.json)
      write_stdout(fmt::format("\n  wrote report.json{} in {}\n", traced ? ", trace.json" : "", dir.string()));
  }
  std::cerr << done;
  if (options.no_expect || scenario.expectations.empty()) return 0;
  return check_expectations(options, scenario, nlohmann::json::parse(text), 0);
}

/** A serving workload: its own engine and report (docs/serving.md); report.json and trace.json (no ranks). */
int run_serving(const RunOptions& options, const Scenario& scenario) {
  const auto wall_begin = std::chrono::steady_clock::now();
  const ServingRunResult result = simulate_serving(scenario);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_begin).count();
  const ReportDocument document = make_serving_report_document(scenario, result);
  const std::string trace =
      options.no_files || !scenario.run.outputs.trace
          ? std::string()
          : serving_chrome_trace(scenario.name, std::get<ServingWorkload>(scenario.workload), result);
  return emit_document(options, scenario, document, format_serving_table(document),
                       fmt::format("partsim: simulated {} requests ({} messages, {} sleeps) in {:.3f} s of wall time\n",
                                   result.sent, result.messages, result.sleeps, wall),
                       &trace);
}

/** A parameter-server strategy: its own engine and report (docs/stale-gradients.md); report.json only. */
int run_parameter_server(const RunOptions& options, const Scenario& scenario) {
  const PsPlan plan = build_ps_plan(scenario);
  const auto wall_begin = std::chrono::steady_clock::now();
  const PsRunResult result = simulate_parameter_server(scenario, plan);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_begin).count();
  const ReportDocument document = make_ps_report_document(scenario, plan, result);
  return emit_document(
      options, scenario, document, format_ps_table(document),
      fmt::format("partsim: simulated {} worker steps ({} messages, {} sleeps) in {:.3f} s of wall time\n",
                  plan.steps * plan.workers(), result.messages, result.sleeps, wall));
}

int run(const RunOptions& options) {
  const Scenario scenario = load(options.scenario);
  if (std::holds_alternative<ServingWorkload>(scenario.workload)) return run_serving(options, scenario);
  if (std::holds_alternative<ParameterServer>(scenario.strategy)) return run_parameter_server(options, scenario);
  const Plan plan = build_plan(scenario);
  if (plan.memory && !plan.memory->fits()) return report_out_of_memory(options, scenario, plan);

  EngineOptions engine_options;
  engine_options.record_all_intervals = scenario.run.outputs.trace && !options.no_files;
  const bool show_progress = !options.no_progress && (!options.progress.empty() || isatty(STDERR_FILENO) == 1);
  const bool json_progress = options.progress == "json";
  if (show_progress && json_progress)
    engine_options.progress = [](std::uint64_t done, std::uint64_t planned) {
      std::cerr << progress_line(done, planned) << std::flush;
    };
  else if (show_progress)
    engine_options.progress = [](std::uint64_t done, std::uint64_t planned) {
      std::cerr << fmt::format("\rpartsim: simulating {:5.1f}% ({} of {} events)", 100.0 * done / planned, done,
                               planned)
                << std::flush;
    };
  const auto wall_begin = std::chrono::steady_clock::now();
  const RunResult result = simulate(scenario, plan, engine_options);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_begin).count();
  if (show_progress && !json_progress) std::cerr << "\r" << std::string(70, ' ') << "\r";
  // The stream always ends with its last update: a reader sees the run complete, however short it was.
  if (show_progress && json_progress)
    std::cerr << progress_line(result.messages + result.executions, result.messages + result.executions) << std::flush;

  const Report report = make_report(scenario, plan, result);
  // report.json text, built once and only when printed or written.
  std::string report_text;
  auto report_json = [&]() -> const std::string& {
    if (report_text.empty()) report_text = report_to_json(report, scenario).dump(2) + '\n';
    return report_text;
  };
  if (options.json)
    write_stdout(report_json());
  else if (scenario.run.outputs.table)
    write_stdout(format_table(report));

  if (!options.no_files) {
    const OutputSelection& out = scenario.run.outputs;
    const std::filesystem::path dir = output_dir(options, scenario);
    create_output_dir(dir);
    std::vector<std::string> written;
    // Each file whole under its final name (atomic rename); report.json last, so that its presence means the set of
    // this run is complete.
    if (out.ranks_csv) {
      write_file_atomically(dir / "ranks.csv", [&](std::ostream& o) { write_ranks_csv(o, report); });
      written.push_back("ranks.csv");
    }
    if (out.trace) {
      write_file_atomically(dir / "trace.json",
                            [&](std::ostream& o) { write_chrome_trace(o, scenario, plan, result); });
      written.push_back("trace.json");
    }
    if (out.reliability_trace && report.reliability) {
      write_file_atomically(dir / "reliability_trace.json",
                            reliability_chrome_trace(scenario.name, *report.reliability));
      written.push_back("reliability_trace.json");
    }
    if (out.report_json) {
      write_file_atomically(dir / "report.json", report_json());
      written.insert(written.begin(), "report.json");
    }
    if (!written.empty() && !options.json)
      write_stdout(fmt::format("\n  wrote {} in {}\n", fmt::join(written, ", "), dir.string()));
  }
  std::cerr << fmt::format("partsim: simulated {} messages and {} executions in {:.3f} s of wall time{}\n",
                           result.messages, result.executions, wall,
                           result.folded()
                               ? fmt::format(" ({} ranks simulated for {})", result.simulated_ranks, plan.ranks.size())
                               : std::string());
  if (options.no_expect || scenario.expectations.empty()) return 0; // no need to parse the report back
  return check_expectations(options, scenario, nlohmann::json::parse(report_json()), 0);
}

} // namespace

Action add_run_command(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* command = app.add_subcommand("run", "Simulate a scenario and write its report");
  add_scenario_options(command, options->scenario, true);
  command->add_option("--out", options->out_dir, "Output folder (default: partsim-out/<scenario name>)");
  command->add_flag("--json", options->json, "Print report.json to stdout instead of the table");
  command->add_flag("--no-files", options->no_files, "Write no files (report to stdout only)");
  command
      ->add_flag("--progress{text}", options->progress,
                 "Show progress on stderr even when it is not a terminal; --progress=json: one JSON line per update")
      ->check(CLI::IsMember({"text", "json"}));
  command->add_flag("--no-progress", options->no_progress, "Never show progress");
  command->add_flag("--no-expect", options->no_expect, "Do not check the scenario's /expect bounds");
  return [options] { return run(*options); };
}

Action add_validate_command(CLI::App& app) {
  auto options = std::make_shared<ScenarioOptions>();
  CLI::App* command = app.add_subcommand("validate", "Check a scenario and print what it would simulate");
  add_scenario_options(command, *options, false);
  return [options] {
    const Scenario scenario = load(*options);
    const Plan plan = build_plan(scenario);
    write_stdout(fmt::format("ok: {}: {}; {} iteration(s), {} messages and {} executions planned\n", scenario.name,
                             plan.summary, plan.iterations, plan.planned_messages, plan.planned_executions));
    return 0;
  };
}

Action add_list_command(CLI::App& app) {
  auto what = std::make_shared<std::string>();
  CLI::App* command =
      app.add_subcommand("list", "List the shipped workloads, GPU profiles, link profiles or scenarios");
  command->add_option("WHAT", *what, "workloads, hardware, links or scenarios")
      ->required()
      ->check(CLI::IsMember({"workloads", "hardware", "links", "scenarios"}));
  return [what] {
    const std::filesystem::path dir = data_dir();
    const std::filesystem::path folder = *what == "scenarios"  ? dir / "scenarios"
                                         : *what == "hardware" ? dir / "models" / "hardware"
                                                               : dir / "models" / *what;
    std::vector<std::filesystem::path> files;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(folder, ec))
      if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    if (files.empty()) std::cout << fmt::format("(no {} in {})\n", *what, folder.string());
    for (const auto& file : files) {
      std::string description;
      try {
        const nlohmann::json doc = read_json_file(file);
        if (doc.is_object() && doc.contains("description") && doc["description"].is_string())
          description = doc["description"].get<std::string>();
      } catch (const InputError& e) {
        description = std::string("(unreadable: ") + e.what() + ")";
      }
      std::cout << fmt::format("{:<36} {}\n", file.stem().string(), description);
    }
    return 0;
  };
}

} // namespace partsim::cli
