// A sweep's manifest (what identifies the sweep, and which points a shard holds) and the merge of the shards of a
// sharded sweep into the rows of the whole sweep, as the unsharded sweep would have found them.
#pragma once

#include "partsim/batch/sweep.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace partsim {

/** Largest point report read back by `partsim merge`. */
inline constexpr std::size_t kMaxPointReportBytes = std::size_t{1} << 30;

/** What `partsim sweep` writes beside its CSV, last (a folder with a manifest holds a finished sweep or shard). */
struct SweepManifest {
  std::string partsim_version;
  std::string scenario_path;        ///< as given on the command line
  nlohmann::json scenario_document; ///< the scenario file as the sweep read it (shards compare it)
  std::vector<std::string> sets;    ///< the --set overrides as typed, in order
  std::vector<std::string> varies;  ///< the --vary axes as typed, in order
  std::size_t shard = 0;
  std::size_t shards = 1;
  std::vector<std::size_t> points; ///< indices of the shard's points, ascending
  std::vector<std::size_t> failed; ///< of those, the points whose run failed (no report written)
};

/** The name of a sweep's output `stem`.`extension` for shard I of N: `sweep.csv` unsharded (N = 1),
 * `sweep-shard-I-of-N.csv` for a shard. */
std::string sweep_file_name(const std::string& stem, const std::string& extension, std::size_t shard,
                            std::size_t shards);

/** The manifest's name: `sweep.json`, or `sweep-shard-I-of-N.json`. */
std::string sweep_manifest_name(std::size_t shard, std::size_t shards);

/** The summary table's name (format_sweep_table, what the sweep prints): `summary.txt`, or
 * `summary-shard-I-of-N.txt`. */
std::string sweep_summary_name(std::size_t shard, std::size_t shards);

/** A point's report in the sweep's folder: `point-NNNN.report.json`. */
std::string sweep_point_report_name(std::size_t index);

nlohmann::json sweep_manifest_to_json(const SweepManifest& manifest);
/** The manifest's text: its JSON, two-space indented, ending in a newline. */
std::string sweep_manifest_text(const SweepManifest& manifest);

/** Reads a manifest strictly (unknown keys, a shard outside 0..N-1, points that are not ascending or not of the
 * shard are errors). @throws InputError naming `source` and the JSON pointer */
SweepManifest sweep_manifest_from_json(const nlohmann::json& json, const std::string& source);
SweepManifest read_sweep_manifest(const std::filesystem::path& path);

/** One shard's manifest and the folder that holds it (and its point reports). */
struct SweepShard {
  std::filesystem::path dir;
  std::filesystem::path manifest_path;
  SweepManifest manifest;
};

/** The shard manifests (`sweep-shard-I-of-N.json`) in each folder, by folder then name; a folder may hold several
 * shards. @throws InputError for a folder that is missing or holds none */
std::vector<SweepShard> find_sweep_shards(const std::vector<std::filesystem::path>& dirs);

/** The whole sweep put back together: its manifest (shard 0 of 1, every point), axes, points and the report file
 * of each point. */
struct SweepMerge {
  SweepManifest manifest;
  std::vector<SweepAxis> axes;
  std::vector<SweepPoint> points;
  std::vector<std::filesystem::path> reports; ///< per point, in index order
};

/** Checks that the shards make one whole sweep: the same partsim version, scenario content, --set and --vary and
 * shard count in every manifest, each shard once, none missing, no failed point, every point's report present.
 * @throws InputError naming the manifest (or report) at fault, the JSON pointer and what was expected */
SweepMerge plan_sweep_merge(const std::vector<SweepShard>& shards);

/** The rows of the merged sweep, from the point reports (report_document_from_json + sweep_row), in index order.
 * @throws InputError for a report that does not read, or whose scenario input does not hold its point's --vary
 * values (a report left in the folder by another sweep) */
std::vector<SweepRow> read_sweep_rows(const SweepMerge& merge);

} // namespace partsim
