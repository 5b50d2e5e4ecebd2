// partsim sweep: run a scenario over parameter axes, one child process per point, in parallel.
#include "child_process.hpp"
#include "commands.hpp"

#include "partsim/batch/sweep.hpp"
#include "partsim/batch/sweep_manifest.hpp"
#include "partsim/common/error.hpp"
#include "partsim/common/event_stream.hpp"
#include "partsim/common/output_file.hpp"
#include "partsim/common/text.hpp"
#include "partsim/input/data_dir.hpp"
#include "partsim/input/json_file.hpp"
#include "partsim/input/scenario.hpp"
#include "partsim/plan/strategy.hpp"
#include "partsim/report/report_writers.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

namespace partsim::cli {

namespace {

struct SweepOptions {
  std::string scenario;
  std::vector<std::string> sets;
  std::vector<std::string> varies;
  std::size_t jobs = 0;
  std::string shard = "0/1";
  std::string out_dir;
  std::string progress = "text"; ///< "text" (a line rewritten in place) or "json" (one JSON line per point)
};

int sweep(const SweepOptions& options) {
  std::vector<Override> base;
  for (const std::string& text : options.sets) base.push_back(parse_override(text));
  std::vector<SweepAxis> axes;
  for (const std::string& text : options.varies) axes.push_back(parse_vary(text));
  const auto [shard, shards] = parse_shard(options.shard);
  const std::vector<SweepPoint> points = select_shard(expand_sweep(axes), shard, shards);

  // Validate every point here first: a bad value fails fast with its own message, before any simulation runs.
  for (const SweepPoint& point : points) {
    std::vector<Override> all = base;
    all.insert(all.end(), point.overrides.begin(), point.overrides.end());
    try {
      build_plan(load_scenario(options.scenario, all, data_dir()));
    } catch (const InputError& e) {
      throw InputError(e.source(), e.pointer(),
                       fmt::format("{} (sweep point {}: {})", e.detail(), point.index, fmt::join(point.labels, ", ")));
    }
  }

  // What identifies the sweep, for `partsim merge`: the scenario's content as read here (each point reads it again).
  SweepManifest manifest;
  manifest.partsim_version = partsim_version();
  manifest.scenario_path = options.scenario;
  manifest.scenario_document = read_json_file(options.scenario);
  manifest.sets = options.sets;
  manifest.varies = options.varies;
  manifest.shard = shard;
  manifest.shards = shards;
  for (const SweepPoint& point : points) manifest.points.push_back(point.index);

  std::vector<std::vector<std::string>> commands;
  for (const SweepPoint& point : points) {
    std::vector<std::string> sets = options.sets;
    for (const Override& o : point.overrides) sets.push_back(o.pointer + "=" + o.value.dump());
    commands.push_back(child_run_command(options.scenario, sets));
  }
  const std::size_t jobs = job_count(options.jobs);
  std::size_t finished = 0;
  const bool json_progress = options.progress == "json";
  const auto results = run_children(commands, jobs, [&](std::size_t) {
    if (json_progress)
      std::cerr << sweep_progress_line(++finished, points.size()) << std::flush;
    else
      std::cerr << fmt::format("\rpartsim: sweep {} of {} points done", ++finished, points.size()) << std::flush;
  });
  if (!json_progress) std::cerr << '\n';

  const std::filesystem::path dir =
      options.out_dir.empty() ? std::filesystem::path("partsim-out") / "sweep" : std::filesystem::path(options.out_dir);
  create_output_dir(dir);
  // A manifest left by an earlier sweep in this folder would vouch for reports being replaced now.
  std::error_code ec;
  std::filesystem::remove(dir / sweep_manifest_name(shard, shards), ec);
  if (ec) throw OutputError(dir / sweep_manifest_name(shard, shards), ec.message());
  std::vector<SweepRow> rows;
  CommandFailed failed;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const ChildResult& r = results[i];
    // Exit 3 is a verdict, not a failure: the point's report says it does not fit, and its row says so.
    if (r.exit_code != kExitOk && r.exit_code != kExitOutOfMemory) {
      // The child's own error (its file and pointer) from its machine-readable stream.
      const ChildError child = child_error(r);
      CommandError error{child.source, child.pointer, child.message};
      error.message = fmt::format("sweep point {} ({}) failed with exit code {}: {}", points[i].index,
                                  fmt::join(points[i].labels, ", "), r.exit_code, error.message);
      failed.errors.push_back(std::move(error));
      manifest.failed.push_back(points[i].index);
      continue;
    }
    const std::string name = sweep_point_report_name(points[i].index);
    write_file_atomically(dir / name, r.out);
    rows.push_back(
        sweep_row(points[i], report_document_from_json(nlohmann::json::parse(r.out), (dir / name).string())));
  }
  const std::string csv_name = sweep_file_name("sweep", "csv", shard, shards);
  write_file_atomically(dir / csv_name, [&](std::ostream& out) { write_sweep_csv(out, axes, rows); });
  const std::string table = format_sweep_table(axes, rows);
  write_file_atomically(dir / sweep_summary_name(shard, shards), table);
  // The manifest last: a folder that holds one holds the whole sweep (or shard).
  write_file_atomically(dir / sweep_manifest_name(shard, shards), sweep_manifest_text(manifest));
  write_stdout(table);
  write_stdout(fmt::format("\n  wrote {}, {}, {} and {} point reports in {}\n", csv_name,
                           sweep_summary_name(shard, shards), sweep_manifest_name(shard, shards), rows.size(),
                           dir.string()));
  if (failed.errors.empty()) return kExitOk;
  throw failed;
}

} // namespace

Action add_sweep_command(CLI::App& app) {
  auto options = std::make_shared<SweepOptions>();
  CLI::App* command = app.add_subcommand("sweep", "Run a scenario over parameter values; speedup and Karp-Flatt");
  command->add_option("SCENARIO", options->scenario, "Scenario JSON file")->required();
  command->add_option("--vary", options->varies, "An axis: /json/pointer=v1,v2,... (repeatable: cartesian product)")
      ->type_name("PATH=V1,V2,...")
      ->required();
  command->add_option("--set", options->sets, "Override a field for every point: /json/pointer=value")
      ->type_name("PATH=VALUE");
  command->add_option("--jobs,-j", options->jobs, "Points simulated at once (default: one per core)");
  command
      ->add_option("--shard", options->shard,
                   "Run only points with index mod N == I (batch arrays; partsim merge joins the shards)")
      ->type_name("I/N");
  command->add_option("--out", options->out_dir, "Output folder (default: partsim-out/sweep)");
  command
      ->add_option("--progress", options->progress, "Progress on stderr: text, or json (one JSON line per point done)")
      ->check(CLI::IsMember({"text", "json"}));
  return [options] { return sweep(*options); };
}

} // namespace partsim::cli
