// A search's folder, finding the shards of a sharded search and joining them into the unsharded search's result.
#include "partsim/batch/search_merge.hpp"

#include "partsim/batch/sweep_manifest.hpp"
#include "partsim/common/error.hpp"
#include "partsim/common/output_file.hpp"
#include "partsim/input/json_file.hpp"
#include "partsim/input/json_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <regex>

namespace partsim {

namespace {

const std::regex& shard_name_pattern() {
  static const std::regex pattern(R"(search-shard-([0-9]+)-of-([0-9]+)\.json)");
  return pattern;
}

std::string shortened(const nlohmann::json& value) {
  const std::string text = value.dump();
  return text.size() <= 160 ? text : text.substr(0, 160) + "...";
}

SearchShard read_shard(const std::filesystem::path& path) {
  const std::string source = path.string();
  SearchShard shard;
  shard.path = path;
  shard.json = parse_json_text(read_text_file(path, kMaxSearchJsonBytes, "a search's JSON"), source);
  if (!shard.json.is_object() || !shard.json.contains("schema") || shard.json["schema"] != "partsim.search")
    throw InputError(source, "/schema",
                     "expected a search's JSON (schema partsim.search, written by partsim search --json or --out)");
  shard.result = search_result_from_json(shard.json, source);
  return shard;
}

std::vector<std::filesystem::path> shard_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> found;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::error_code type_error;
    if (std::regex_match(entry.path().filename().string(), shard_name_pattern()) && entry.is_regular_file(type_error))
      found.push_back(entry.path());
  }
  if (ec) throw InputError(dir.string(), "", fmt::format("cannot list the folder: {}", ec.message()));
  std::sort(found.begin(), found.end());
  return found;
}

} // namespace

std::string search_file_name(const std::string& extension, std::size_t shard, std::size_t shards) {
  return sweep_file_name("search", extension, shard, shards);
}

std::vector<std::string> write_search_folder(const std::filesystem::path& dir, const SearchResult& result,
                                             const std::string& table) {
  const std::string csv = search_file_name("csv", result.shard, result.shards);
  const std::string txt = search_file_name("txt", result.shard, result.shards);
  const std::string json = search_file_name("json", result.shard, result.shards);
  create_output_dir(dir);
  // An earlier search's JSON here would vouch for the CSV and table being replaced now.
  std::error_code ec;
  std::filesystem::remove(dir / json, ec);
  if (ec) throw OutputError(dir / json, ec.message());
  write_file_atomically(dir / csv, [&](std::ostream& out) { write_search_csv(out, result); });
  write_file_atomically(dir / txt, table);
  write_file_atomically(dir / json, search_json(result).dump(2) + '\n');
  return {csv, txt, json};
}

bool is_search_shard_path(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec)) return true;
  if (!std::filesystem::is_directory(path, ec)) return false;
  // An unsharded search's folder too, so that merging it says there is nothing to merge.
  if (std::filesystem::exists(path / search_file_name("json", 0, 1), ec)) return true;
  try {
    return !shard_files(path).empty();
  } catch (const InputError&) {
    return false;
  }
}

std::vector<SearchShard> find_search_shards(const std::vector<std::filesystem::path>& paths) {
  std::vector<SearchShard> shards;
  for (const std::filesystem::path& path : paths) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec)) {
      shards.push_back(read_shard(path));
      continue;
    }
    if (!std::filesystem::is_directory(path, ec))
      throw InputError(path.string(), "",
                       "no such file or folder; expected a search's JSON or a folder of a search's shard");
    const std::vector<std::filesystem::path> found = shard_files(path);
    if (found.empty()) {
      const bool whole = std::filesystem::exists(path / search_file_name("json", 0, 1), ec);
      throw InputError(path.string(), "",
                       fmt::format("expected a shard's search-shard-I-of-N.json (written by partsim search --shard I/N "
                                   "--out DIR), found none{}",
                                   whole ? " (search.json is an unsharded search: nothing to merge)" : ""));
    }
    for (const std::filesystem::path& file : found) {
      SearchShard shard = read_shard(file);
      const std::string expected = search_file_name("json", shard.result.shard, shard.result.shards);
      if (file.filename() != expected)
        throw InputError(file.string(), "/shard",
                         fmt::format("the search is shard {} of {} ({}), not the shard its name says",
                                     shard.result.shard, shard.result.shards, expected));
      shards.push_back(std::move(shard));
    }
  }
  return shards;
}

SearchResult merge_search_shards(const std::vector<SearchShard>& shards) {
  PARTSIM_CHECK(!shards.empty()) << "find_search_shards returns at least one shard";
  const SearchShard& first = shards.front();
  const std::string first_name = first.path.string();
  // Every shard must be of the same search as the first.
  for (const SearchShard& s : shards) {
    for (const char* key : {"scenario_document", "space", "rank_by", "pareto_against", "tokens", "refine", "top"}) {
      if (s.json[key] == first.json[key]) continue;
      const std::string at = json_first_difference(first.json[key], s.json[key], std::string("/") + key);
      const nlohmann::json::json_pointer p(at);
      const std::string expected = std::string(key) == "scenario_document"
                                       ? "the scenario content of " + first.result.scenario
                                       : shortened(first.json.contains(p) ? first.json.at(p) : nlohmann::json());
      const std::string got = std::string(key) == "scenario_document"
                                  ? "another content (another scenario, or its file changed between shards)"
                                  : shortened(s.json.contains(p) ? s.json.at(p) : nlohmann::json());
      throw InputError(
          s.path.string(), at,
          fmt::format("expected {} as in {} (the shards of one search), got {}", expected, first_name, got));
    }
    if (s.result.shards != first.result.shards)
      throw InputError(s.path.string(), "/shard/count",
                       fmt::format("expected {} shards as in {} (the shards of one search), got {}",
                                   first.result.shards, first_name, s.result.shards));
  }
  std::map<std::size_t, const SearchShard*> by_shard;
  for (const SearchShard& s : shards) {
    const auto [it, inserted] = by_shard.emplace(s.result.shard, &s);
    if (!inserted)
      throw InputError(s.path.string(), "/shard/index",
                       fmt::format("shard {} of {} given twice: also {}; expected each shard once", s.result.shard,
                                   s.result.shards, it->second->path.string()));
  }
  for (std::size_t shard = 0; shard < first.result.shards; ++shard)
    if (!by_shard.contains(shard))
      throw InputError(first_name, "/shard/count",
                       fmt::format("expected {} shards, but no path given holds shard {} ({}): it is missing",
                                   first.result.shards, shard, search_file_name("json", shard, first.result.shards)));

  SearchResult whole = first.result;
  whole.shard = 0;
  whole.shards = 1;
  whole.rows.clear();
  const std::size_t size = sweep_size(whole.space.axes);
  whole.rows.resize(size);
  for (const SearchShard& s : shards) // search_result_from_json checked each holds exactly its slice
    for (const SearchRow& row : s.result.rows) whole.rows[row.point.index] = row;

  // Each shard refined its own best points; the whole search refines the whole space's best only. Each of those is
  // among its own shard's best (the same order, ties to the lower index), so its faithful figures are at hand.
  const std::vector<std::size_t> best = refine_candidates(whole.rows, whole.rank_by, whole.refine);
  std::vector<bool> refined(size, false);
  for (std::size_t i : best) refined[i] = true;
  for (std::size_t i = 0; i < size; ++i) {
    SearchRow& row = whole.rows[i];
    if (!row.fast || row.fast->fidelity != "fast") continue; // not simulated, or its figures already faithful
    if (!refined[i]) {
      row.faithful.reset();
      row.reason.clear(); // a simulated point's reason says why its faithful run failed
      continue;
    }
    if (!row.faithful && row.reason.empty()) {
      const SearchShard& s = *by_shard.at(i % first.result.shards);
      throw InputError(s.path.string(), fmt::format("/points/{}/faithful", i / first.result.shards),
                       fmt::format("expected the faithful figures of point {}, one of the {} best of the whole search "
                                   "(so of its shard's best), got none",
                                   i, whole.refine));
    }
  }
  return whole;
}

std::string json_first_difference(const nlohmann::json& a, const nlohmann::json& b, const std::string& at) {
  if (a.type() == b.type() && a.is_object() && a.size() == b.size()) {
    for (const auto& [key, value] : a.items())
      if (!b.contains(key) || b[key] != value)
        return b.contains(key) ? json_first_difference(value, b[key], at + "/" + escape_pointer_token(key)) : at;
  } else if (a.type() == b.type() && a.is_array() && a.size() == b.size()) {
    for (std::size_t i = 0; i < a.size(); ++i)
      if (a[i] != b[i]) return json_first_difference(a[i], b[i], fmt::format("{}/{}", at, i));
  }
  return at;
}

} // namespace partsim
