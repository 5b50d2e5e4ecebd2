// partsim search: the valid points of a space that fit in memory, simulated at a fast fidelity in child processes,
// the best of them again at the faithful fidelity, ranked by a metric, with the Pareto front and the winner explained.
#include "child_process.hpp"
#include "commands.hpp"

#include "partsim/batch/search.hpp"
#include "partsim/batch/search_merge.hpp"
#include "partsim/common/error.hpp"
#include "partsim/common/event_stream.hpp"
#include "partsim/common/output_file.hpp"
#include "partsim/input/data_dir.hpp"
#include "partsim/input/json_file.hpp"
#include "partsim/input/scenario.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <memory>

namespace partsim::cli {

namespace {

struct SearchOptions {
  std::string scenario;
  std::string space_file;
  std::vector<std::string> sets, varies, derives, constraints;
  std::string rank_by = "throughput";
  std::string pareto = "gpus";
  double tokens = 0.0;
  std::size_t refine = 5;
  std::size_t top = 10;
  std::size_t jobs = 0;
  std::string shard = "0/1";
  std::string csv, json;
  std::string out_dir;
  std::string progress = "text"; ///< "text" (a line per phase) or "json" (a JSON line per child run done)
};

SearchSpace command_line_space(const SearchOptions& options) {
  SearchSpace space;
  for (const std::string& text : options.sets) space.sets.push_back(parse_override(text));
  for (const std::string& text : options.varies) space.axes.push_back(parse_vary(text));
  for (const std::string& text : options.derives) space.derived.push_back(parse_derived(text, "--derive", ""));
  for (const std::string& text : options.constraints)
    space.constraints.push_back(parse_constraint(text, "--constraint", ""));
  return space;
}

/** A child's command for a point: its removals as --unset, its values and `extra` as --set. */
std::vector<std::string> point_command(const std::string& scenario, const SearchRow& row,
                                       const std::vector<Override>& extra) {
  std::vector<std::string> sets;
  std::vector<std::string> unsets;
  for (const Override& o : row.overrides) {
    if (o.remove)
      unsets.push_back(o.pointer);
    else
      sets.push_back(o.pointer + "=" + o.value.dump());
  }
  for (const Override& o : extra) sets.push_back(o.pointer + "=" + o.value.dump());
  return child_run_command(scenario, sets, unsets);
}

/** The message of a child's error without its "source: pointer: " prefix. */
std::string child_detail(const ChildError& e) {
  const std::string prefix = e.source + ": " + (e.pointer.empty() ? "" : e.pointer + ": ");
  return e.message.rfind(prefix, 0) == 0 ? e.message.substr(prefix.size()) : e.message;
}

int search(const SearchOptions& options) {
  SearchSpace space = options.space_file.empty() ? SearchSpace{} : read_search_space(options.space_file);
  merge_search_space(space, command_line_space(options));
  if (space.axes.empty())
    throw InputError("--vary", "", "no axis to search; expected --vary /json/pointer=v1,v2,... or \"axes\" in --space");
  SearchResult result;
  result.scenario = options.scenario;
  result.rank_by = parse_search_metric(options.rank_by, "--rank-by");
  result.pareto = parse_search_metric(options.pareto, "--pareto");
  for (const SearchMetric* m : {&result.rank_by, &result.pareto})
    if (m->needs_tokens() && !(options.tokens > 0.0))
      throw InputError("--tokens", "",
                       fmt::format("{} needs the token budget; expected --tokens N with N above 0", m->name));
  result.tokens = options.tokens;
  result.refine = options.refine;
  result.top = options.top;
  std::tie(result.shard, result.shards) = parse_shard(options.shard);
  const nlohmann::json scenario = read_json_file(options.scenario);
  result.scenario_document = scenario;
  derive_data_degree(space, scenario);
  const std::vector<SweepPoint> points = select_shard(expand_sweep(space.axes), result.shard, result.shards);

  // Each point checked and pruned here, without planning or simulating it.
  const std::filesystem::path data = data_dir();
  for (const SweepPoint& point : points)
    result.rows.push_back(classify_point(scenario, options.scenario, space, point, data));
  result.space = space;

  const std::size_t jobs = job_count(options.jobs);
  const bool json_progress = options.progress == "json";
  std::size_t runs_done = 0;
  std::size_t runs_total = 0; // the fast runs, and the refined ones (at most --refine, known after the fast runs)
  CommandFailed failed;
  // Runs the rows `which` in children; `fast` adds the fast fidelity's overrides, except to a point the scenario
  // would refuse with them (then it runs as written, and its figures say faithful).
  const auto simulate = [&](const std::vector<std::size_t>& which, bool fast) {
    std::vector<std::vector<std::string>> commands;
    std::vector<bool> faster;
    for (std::size_t i : which) {
      nlohmann::json document = scenario;
      apply_overrides(document, result.rows[i].overrides);
      std::vector<Override> extra = fast ? fast_fidelity_overrides(document) : std::vector<Override>{};
      if (!extra.empty()) {
        try {
          apply_overrides(document, extra);
          parse_scenario(document, options.scenario, data);
        } catch (const InputError&) {
          extra.clear();
        }
      }
      faster.push_back(!extra.empty());
      commands.push_back(point_command(options.scenario, result.rows[i], extra));
    }
    if (json_progress)
      std::cerr << sweep_progress_line(runs_done, runs_total) << std::flush;
    else
      std::cerr << fmt::format("partsim: search: simulating {} point(s) at the {} fidelity, {} at once\n", which.size(),
                               fast ? "fast" : "faithful", jobs);
    const std::vector<ChildResult> results = run_children(commands, jobs, [&](std::size_t) {
      if (json_progress) std::cerr << sweep_progress_line(++runs_done, runs_total) << std::flush;
    });
    for (std::size_t k = 0; k < which.size(); ++k) {
      SearchRow& row = result.rows[which[k]];
      const ChildResult& r = results[k];
      const std::string source = fmt::format("search point {}", row.point.index);
      if (r.exit_code == kExitOk) {
        SearchFigures figures =
            search_figures(nlohmann::json::parse(r.out), source, result.rank_by, result.pareto, result.tokens);
        figures.fidelity = faster[k] ? "fast" : "faithful";
        if (fast) row.fast = figures;
        if (!faster[k]) row.faithful = std::move(figures);
        continue;
      }
      const ChildError e = child_error(r);
      if (!fast) { // the fast figures stand; say why the faithful run has none
        row.reason = fmt::format("faithful run failed (exit code {}): {}", r.exit_code, e.message);
        continue;
      }
      if (r.exit_code == kExitInputError) { // refused by the planner (an event budget, an uneven hierarchical group)
        row.status = PointStatus::Invalid;
        row.reason = invalid_reason(e.pointer, child_detail(e));
        row.detail = e.message;
      } else if (r.exit_code == kExitOutOfMemory) { // never with the same memory model; kept apart if it happens
        row.status = PointStatus::OutOfMemory;
        row.reason = "out of memory in the simulation (not pruned)";
      } else {
        row.status = PointStatus::Failed;
        row.reason = fmt::format("exit code {}: {}", r.exit_code, e.message);
        failed.errors.push_back({e.source, e.pointer,
                                 fmt::format("search point {} ({}) failed with exit code {}: {}", row.point.index,
                                             fmt::join(row.point.labels, ", "), r.exit_code, e.message)});
      }
    }
  };
  std::vector<std::size_t> candidates;
  for (std::size_t i = 0; i < result.rows.size(); ++i)
    if (result.rows[i].status == PointStatus::Simulated) candidates.push_back(i);
  runs_total = candidates.size() + std::min(candidates.size(), options.refine);
  simulate(candidates, true);
  std::vector<std::size_t> refine; // the best by their fast figures, less those already run as written
  for (std::size_t i : refine_candidates(result.rows, result.rank_by, options.refine))
    if (!result.rows[i].faithful) refine.push_back(i);
  runs_total = candidates.size() + refine.size();
  if (!refine.empty()) simulate(refine, false);
  if (json_progress && runs_done == runs_total) std::cerr << sweep_progress_line(runs_done, runs_total) << std::flush;

  const std::string table = format_search_table(result);
  if (!options.csv.empty())
    write_file_atomically(options.csv, [&](std::ostream& out) { write_search_csv(out, result); });
  if (!options.json.empty()) write_file_atomically(options.json, search_json(result).dump(2) + '\n');
  std::vector<std::string> written;
  if (!options.out_dir.empty()) written = write_search_folder(options.out_dir, result, table);
  write_stdout(table);
  if (!written.empty()) write_stdout(fmt::format("\n  wrote {} in {}\n", fmt::join(written, ", "), options.out_dir));
  if (failed.errors.empty()) return kExitOk;
  throw failed;
}

} // namespace

Action add_search_command(CLI::App& app) {
  auto options = std::make_shared<SearchOptions>();
  CLI::App* command = app.add_subcommand(
      "search", "Search a space of splits: valid points that fit, simulated fast, the best again faithfully, ranked");
  command->add_option("SCENARIO", options->scenario, "Scenario JSON file")->required();
  command->add_option("--space", options->space_file, "Space file: axes, fixed and derived values, constraints")
      ->type_name("FILE.json");
  command->add_option("--vary", options->varies, "An axis: /json/pointer=v1,v2,... (repeatable: cartesian product)")
      ->type_name("PATH=V1,V2,...");
  command->add_option("--set", options->sets, "A fixed value for every point: /json/pointer=value")
      ->type_name("PATH=VALUE");
  command
      ->add_option("--derive", options->derives,
                   "A value derived per point: /json/pointer=default (the scenario's default) or =/a * /b * 2")
      ->type_name("PATH=EXPR");
  command
      ->add_option("--constraint", options->constraints,
                   "Keep only points where LEFT OP RIGHT holds (OP: < <= > >= == != divides)")
      ->type_name("\"A OP B\"");
  command->add_option("--rank-by", options->rank_by,
                      "throughput, tokens_per_s, samples_per_s, time_to_train, makespan, mfu, gpus, memory, "
                      "cost_to_train, energy_to_train, cost_per_million_tokens, energy_per_token, or a report pointer "
                      "with :min or :max (default: throughput)");
  command->add_option("--pareto", options->pareto, "The second metric of the Pareto front (default: gpus)");
  command->add_option("--tokens", options->tokens, "Token budget of time_to_train");
  command->add_option("--refine", options->refine, "Best points run again at the faithful fidelity (default 5)");
  command->add_option("--top", options->top, "Points in the table (default 10)");
  command->add_option("--jobs,-j", options->jobs, "Points simulated at once (default: one per core)");
  command
      ->add_option("--shard", options->shard,
                   "Search only points with index mod N == I (partsim merge joins the shards' --out folders)")
      ->type_name("I/N");
  command->add_option("--csv", options->csv, "Write one CSV row per point to FILE")->type_name("FILE");
  command->add_option("--json", options->json, "Write the search as JSON (schema partsim.search) to FILE")
      ->type_name("FILE");
  command
      ->add_option("--out", options->out_dir,
                   "Also write search.csv, search.txt (the table) and search.json (last) in DIR; a shard's names "
                   "are search-shard-I-of-N.*")
      ->type_name("DIR");
  command
      ->add_option("--progress", options->progress,
                   "Progress on stderr: text, or json (one JSON line per simulation done)")
      ->check(CLI::IsMember({"text", "json"}));
  return [options] { return search(*options); };
}

} // namespace partsim::cli
