// partsim merge: joins the folders of a sharded sweep's shards into the outputs of the whole sweep, or the outputs of
// a sharded search's shards into the whole search's.
#include "commands.hpp"

#include "partsim/batch/search_merge.hpp"
#include "partsim/batch/sweep.hpp"
#include "partsim/batch/sweep_manifest.hpp"
#include "partsim/common/output_file.hpp"
#include "partsim/input/json_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <memory>

namespace partsim::cli {

namespace {

struct MergeOptions {
  std::vector<std::string> dirs;
  std::string out_dir;
};

/** Whether `a` and `b` name the same existing file (merging into a shard's own folder). */
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b) {
  std::error_code ec;
  return std::filesystem::equivalent(a, b, ec) && !ec;
}

/** The shards of a search: the whole search's search.csv, search.txt and search.json in the output folder. */
int merge_search(const std::vector<std::filesystem::path>& paths, const std::string& out_dir) {
  const std::vector<SearchShard> shards = find_search_shards(paths);
  const SearchResult whole = merge_search_shards(shards);
  const std::filesystem::path dir =
      out_dir.empty() ? std::filesystem::path("partsim-out") / "search" : std::filesystem::path(out_dir);
  const std::string table = format_search_table(whole);
  const std::vector<std::string> written = write_search_folder(dir, whole, table);
  write_stdout(table);
  write_stdout(
      fmt::format("\n  merged {} shards: wrote {} in {}\n", shards.size(), fmt::join(written, ", "), dir.string()));
  // As the unsharded search: its outputs written, a point whose run failed makes the exit code 1.
  CommandFailed failed;
  for (const SearchRow& row : whole.rows)
    if (row.status == PointStatus::Failed)
      failed.errors.push_back({shards.front().path.string(), "",
                               fmt::format("search point {} ({}) failed: {}", row.point.index,
                                           fmt::join(row.point.labels, ", "), row.reason)});
  if (failed.errors.empty()) return kExitOk;
  throw failed;
}

int merge(const MergeOptions& options) {
  std::vector<std::filesystem::path> dirs(options.dirs.begin(), options.dirs.end());
  // A search's shards: a search's JSON file, or a folder with search-shard-I-of-N.json; else a sweep's.
  if (std::any_of(dirs.begin(), dirs.end(), [](const std::filesystem::path& p) { return is_search_shard_path(p); }))
    return merge_search(dirs, options.out_dir);
  const std::vector<SweepShard> shards = find_sweep_shards(dirs);
  const SweepMerge whole = plan_sweep_merge(shards);
  const std::vector<SweepRow> rows = read_sweep_rows(whole);

  const std::filesystem::path dir =
      options.out_dir.empty() ? std::filesystem::path("partsim-out") / "sweep" : std::filesystem::path(options.out_dir);
  create_output_dir(dir);
  const std::string manifest_name = sweep_manifest_name(0, 1);
  std::error_code ec;
  std::filesystem::remove(dir / manifest_name, ec);
  if (ec) throw OutputError(dir / manifest_name, ec.message());
  // The point reports too, so that the folder holds what the unsharded sweep writes.
  for (std::size_t i = 0; i < whole.points.size(); ++i) {
    const std::filesystem::path target = dir / sweep_point_report_name(whole.points[i].index);
    if (same_file(whole.reports[i], target)) continue;
    write_file_atomically(target,
                          read_text_file(whole.reports[i], kMaxPointReportBytes, "a sweep point's report.json"));
  }
  write_file_atomically(dir / sweep_file_name("sweep", "csv", 0, 1),
                        [&](std::ostream& out) { write_sweep_csv(out, whole.axes, rows); });
  const std::string table = format_sweep_table(whole.axes, rows);
  write_file_atomically(dir / sweep_summary_name(0, 1), table);
  write_file_atomically(dir / manifest_name, sweep_manifest_text(whole.manifest));
  write_stdout(table);
  write_stdout(fmt::format("\n  merged {} shards: wrote {}, {}, {} and {} point reports in {}\n", shards.size(),
                           sweep_file_name("sweep", "csv", 0, 1), sweep_summary_name(0, 1), manifest_name, rows.size(),
                           dir.string()));
  return kExitOk;
}

} // namespace

Action add_merge_command(CLI::App& app) {
  auto options = std::make_shared<MergeOptions>();
  CLI::App* command =
      app.add_subcommand("merge", "Join the shards of a sharded sweep or search (--shard I/N) into the whole one");
  command
      ->add_option("DIR", options->dirs,
                   "Folders holding the shards' outputs (sweep-shard-I-of-N.json, or search-shard-I-of-N.json from "
                   "search --out), or a search's --json files")
      ->required();
  command->add_option("--out", options->out_dir, "Output folder (default: partsim-out/sweep or partsim-out/search)");
  return [options] { return merge(*options); };
}

} // namespace partsim::cli
