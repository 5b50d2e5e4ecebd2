// Sweep manifests: writing, strict reading, finding the shards of a sweep and checking they make the whole sweep.
#include "partsim/batch/sweep_manifest.hpp"

#include "partsim/common/error.hpp"
#include "partsim/input/json_file.hpp"
#include "partsim/input/json_reader.hpp"
#include "partsim/report/report_document.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <regex>

namespace partsim {

namespace {

constexpr const char* kSchema = "partsim.sweep";
constexpr std::int64_t kSchemaVersion = 1;
/** Most --set or --vary texts a manifest may hold. */
constexpr std::size_t kMaxArguments = 10'000;

std::vector<std::string> read_strings(JsonReader& object, std::string_view key) {
  std::vector<std::string> out;
  for (const JsonReader& element : object.child(key).elements(0, kMaxArguments)) out.push_back(element.as_string());
  return out;
}

std::vector<std::size_t> read_indices(JsonReader& object, std::string_view key) {
  std::vector<std::size_t> out;
  for (const JsonReader& element : object.child(key).elements(0, kMaxSweepPoints)) {
    const auto index = static_cast<std::size_t>(element.as_integer(0, kMaxSweepPoints - 1));
    if (!out.empty() && index <= out.back())
      throw element.error(fmt::format("expected point indices in ascending order, got {} after {}", index, out.back()));
    out.push_back(index);
  }
  return out;
}

/** "1, 3, 5" or "1, 3, 5, ... (12 points)" for messages. */
std::string index_list(const std::vector<std::size_t>& indices) {
  constexpr std::size_t kShown = 8;
  if (indices.size() <= kShown) return fmt::format("{}", fmt::join(indices, ", "));
  return fmt::format("{}, ... ({} points)", fmt::join(indices.begin(), indices.begin() + kShown, ", "), indices.size());
}

std::string quoted_list(const std::vector<std::string>& texts) {
  nlohmann::json array = texts;
  return array.dump();
}

} // namespace

std::string sweep_file_name(const std::string& stem, const std::string& extension, std::size_t shard,
                            std::size_t shards) {
  if (shards <= 1) return fmt::format("{}.{}", stem, extension);
  return fmt::format("{}-shard-{}-of-{}.{}", stem, shard, shards, extension);
}

std::string sweep_manifest_name(std::size_t shard, std::size_t shards) {
  return sweep_file_name("sweep", "json", shard, shards);
}

std::string sweep_summary_name(std::size_t shard, std::size_t shards) {
  return sweep_file_name("summary", "txt", shard, shards);
}

std::string sweep_point_report_name(std::size_t index) {
  return fmt::format("point-{:04}.report.json", index);
}

nlohmann::json sweep_manifest_to_json(const SweepManifest& m) {
  return {{"schema", kSchema},
          {"schema_version", kSchemaVersion},
          {"partsim_version", m.partsim_version},
          {"scenario", {{"path", m.scenario_path}, {"document", m.scenario_document}}},
          {"set", m.sets},
          {"vary", m.varies},
          {"shard", m.shard},
          {"shards", m.shards},
          {"points", m.points},
          {"failed", m.failed}};
}

std::string sweep_manifest_text(const SweepManifest& manifest) {
  return sweep_manifest_to_json(manifest).dump(2) + "\n";
}

SweepManifest sweep_manifest_from_json(const nlohmann::json& json, const std::string& source) {
  JsonReader root(json, source);
  root.expect_object();
  root.choice("schema", {kSchema});
  root.integer("schema_version", kSchemaVersion, kSchemaVersion);
  SweepManifest m;
  m.partsim_version = root.string("partsim_version");
  JsonReader scenario = root.child("scenario");
  scenario.expect_object();
  m.scenario_path = scenario.string("path");
  JsonReader document = scenario.child("document");
  document.expect_object();
  m.scenario_document = document.value();
  scenario.finish();
  m.sets = read_strings(root, "set");
  m.varies = read_strings(root, "vary");
  if (m.varies.empty()) throw root.child("vary").error("expected at least one --vary axis, got none");
  m.shards = static_cast<std::size_t>(root.integer("shards", 1, kMaxSweepPoints));
  m.shard = static_cast<std::size_t>(root.integer("shard", 0, kMaxSweepPoints - 1));
  if (m.shard >= m.shards)
    throw root.child("shard").error(fmt::format("expected a shard below \"shards\" ({}), got {}", m.shards, m.shard));
  m.points = read_indices(root, "points");
  for (std::size_t i = 0; i < m.points.size(); ++i)
    if (m.points[i] % m.shards != m.shard)
      throw root.child("points").elements(0, kMaxSweepPoints)[i].error(
          fmt::format("expected a point of shard {} of {} (index mod {} == {}), got {}", m.shard, m.shards, m.shards,
                      m.shard, m.points[i]));
  m.failed = read_indices(root, "failed");
  for (std::size_t i = 0; i < m.failed.size(); ++i)
    if (!std::binary_search(m.points.begin(), m.points.end(), m.failed[i]))
      throw root.child("failed").elements(0, kMaxSweepPoints)[i].error(
          fmt::format("expected one of the shard's points (\"points\"), got {}", m.failed[i]));
  root.finish();
  return m;
}

SweepManifest read_sweep_manifest(const std::filesystem::path& path) {
  return sweep_manifest_from_json(read_json_file(path), path.string());
}

std::vector<SweepShard> find_sweep_shards(const std::vector<std::filesystem::path>& dirs) {
  static const std::regex kShardName(R"(sweep-shard-([0-9]+)-of-([0-9]+)\.json)");
  std::vector<SweepShard> shards;
  for (const std::filesystem::path& dir : dirs) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
      throw InputError(dir.string(), "",
                       std::filesystem::exists(dir, ec) ? "expected a folder of a sweep's shard, got a file"
                                                        : "no such folder; expected a folder of a sweep's shard");
    std::vector<std::filesystem::path> found;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      const std::string name = entry.path().filename().string();
      std::error_code type_error;
      if (std::regex_match(name, kShardName) && entry.is_regular_file(type_error)) found.push_back(entry.path());
    }
    if (ec) throw InputError(dir.string(), "", fmt::format("cannot list the folder: {}", ec.message()));
    if (found.empty()) {
      const bool whole = std::filesystem::exists(dir / sweep_manifest_name(0, 1), ec);
      throw InputError(dir.string(), "",
                       fmt::format("expected a shard's manifest sweep-shard-I-of-N.json (written by partsim sweep "
                                   "--shard I/N), found none{}",
                                   whole ? " (sweep.json is an unsharded sweep: nothing to merge)" : ""));
    }
    std::sort(found.begin(), found.end());
    for (const std::filesystem::path& path : found) {
      SweepShard shard{dir, path, read_sweep_manifest(path)};
      const std::string expected = sweep_manifest_name(shard.manifest.shard, shard.manifest.shards);
      if (path.filename() != expected)
        throw InputError(path.string(), "/shard",
                         fmt::format("the manifest is of shard {} of {} ({}), not of the shard its name says",
                                     shard.manifest.shard, shard.manifest.shards, expected));
      shards.push_back(std::move(shard));
    }
  }
  return shards;
}

SweepMerge plan_sweep_merge(const std::vector<SweepShard>& shards) {
  PARTSIM_CHECK(!shards.empty()) << "find_sweep_shards returns at least one shard";
  const SweepShard& first = shards.front();
  const SweepManifest& reference = first.manifest;
  const std::string first_name = first.manifest_path.string();
  // Every shard must be of the same sweep as the first.
  for (const SweepShard& s : shards) {
    const SweepManifest& m = s.manifest;
    const std::string source = s.manifest_path.string();
    auto differs = [&](const std::string& pointer, const std::string& expected, const std::string& got) {
      throw InputError(
          source, pointer,
          fmt::format("expected {} as in {} (the shards of one sweep), got {}", expected, first_name, got));
    };
    if (m.partsim_version != reference.partsim_version)
      differs("/partsim_version", reference.partsim_version, m.partsim_version);
    if (m.scenario_document != reference.scenario_document)
      differs("/scenario/document", "the scenario content of " + reference.scenario_path,
              "another content (another scenario, or the file changed between shards)");
    if (m.sets != reference.sets) differs("/set", "--set " + quoted_list(reference.sets), quoted_list(m.sets));
    if (m.varies != reference.varies)
      differs("/vary", "--vary " + quoted_list(reference.varies), quoted_list(m.varies));
    if (m.shards != reference.shards)
      differs("/shards", fmt::format("{} shards", reference.shards), std::to_string(m.shards));
    if (!m.failed.empty())
      throw InputError(source, "/failed/0",
                       fmt::format("sweep point {} failed in this shard (no report); expected every point simulated: "
                                   "rerun the shard",
                                   m.failed.front()));
  }

  SweepMerge merge;
  merge.manifest = reference;
  merge.manifest.shard = 0;
  merge.manifest.shards = 1;
  merge.manifest.failed.clear();
  for (std::size_t i = 0; i < reference.varies.size(); ++i) {
    try {
      merge.axes.push_back(parse_vary(reference.varies[i]));
    } catch (const InputError& e) {
      throw InputError(first_name, fmt::format("/vary/{}", i), e.detail());
    }
  }
  std::vector<SweepPoint> all;
  try {
    all = expand_sweep(merge.axes);
  } catch (const InputError& e) {
    throw InputError(first_name, "/vary", e.detail());
  }

  // Each shard once, none missing, and each holding exactly the points of its slice.
  std::map<std::size_t, const SweepShard*> by_shard;
  for (const SweepShard& s : shards) {
    const auto [it, inserted] = by_shard.emplace(s.manifest.shard, &s);
    if (!inserted)
      throw InputError(s.manifest_path.string(), "/shard",
                       fmt::format("shard {} of {} given twice: also {}; expected each shard once", s.manifest.shard,
                                   s.manifest.shards, it->second->manifest_path.string()));
    std::vector<std::size_t> expected;
    for (const SweepPoint& p : select_shard(all, s.manifest.shard, s.manifest.shards)) expected.push_back(p.index);
    if (s.manifest.points != expected)
      throw InputError(s.manifest_path.string(), "/points",
                       fmt::format("expected the points {} of shard {} of {} of the --vary axes, got {}",
                                   index_list(expected), s.manifest.shard, s.manifest.shards,
                                   index_list(s.manifest.points)));
  }
  for (std::size_t shard = 0; shard < reference.shards; ++shard)
    if (!by_shard.contains(shard))
      throw InputError(first_name, "/shards",
                       fmt::format("expected {} shards, but no folder given holds {} (shard {} is missing)",
                                   reference.shards, sweep_manifest_name(shard, reference.shards), shard));

  merge.points = all;
  merge.manifest.points.clear();
  for (const SweepPoint& p : all) {
    const SweepShard& s = *by_shard.at(p.index % reference.shards);
    const std::filesystem::path report = s.dir / sweep_point_report_name(p.index);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(report, ec)) {
      const auto at = std::lower_bound(s.manifest.points.begin(), s.manifest.points.end(), p.index);
      throw InputError(report.string(), "",
                       fmt::format("missing; expected the report of sweep point {} ({}), listed in {} at /points/{}",
                                   p.index, fmt::join(p.labels, ", "), s.manifest_path.string(),
                                   at - s.manifest.points.begin()));
    }
    merge.reports.push_back(report);
    merge.manifest.points.push_back(p.index);
  }
  return merge;
}

std::vector<SweepRow> read_sweep_rows(const SweepMerge& merge) {
  std::vector<SweepRow> rows;
  for (std::size_t i = 0; i < merge.points.size(); ++i) {
    const SweepPoint& point = merge.points[i];
    const std::string source = merge.reports[i].string();
    const std::string text = read_text_file(merge.reports[i], kMaxPointReportBytes, "a sweep point's report.json");
    const ReportDocument report = report_document_from_json(parse_json_text(text, source), source);
    // The report echoes its scenario with the overrides applied: a report left from another sweep shows here.
    for (const Override& o : point.overrides) {
      const nlohmann::json::json_pointer at(o.pointer);
      const bool same = report.scenario.input.contains(at) && report.scenario.input.at(at) == o.value;
      if (!same)
        throw InputError(source, "/scenario/input" + o.pointer,
                         fmt::format("expected {} (sweep point {}: {}), got {}; a report of another sweep?",
                                     o.value.dump(), point.index, fmt::join(point.labels, ", "),
                                     report.scenario.input.contains(at) ? report.scenario.input.at(at).dump()
                                                                        : std::string("nothing")));
    }
    rows.push_back(sweep_row(point, report));
  }
  return rows;
}

} // namespace partsim
