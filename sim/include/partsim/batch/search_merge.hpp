// A search's outputs in a folder (`partsim search --out DIR`), and the merge of the shards of a sharded search
// (`--shard I/N`) into the result the unsharded search of the same space gives: the same points, the same faithful
// re-runs, ranking and Pareto front.
#pragma once

#include "partsim/batch/search.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace partsim {

/** Largest search JSON read back by `partsim merge` and the GUI. */
inline constexpr std::size_t kMaxSearchJsonBytes = std::size_t{1} << 30;

/** The name of a search's output in its folder for shard I of N: `search.EXT` unsharded, `search-shard-I-of-N.EXT`
 * for a shard. EXT: `json` (the search as JSON, written last: it marks a whole search), `csv`, `txt` (the table). */
std::string search_file_name(const std::string& extension, std::size_t shard, std::size_t shards);

/** Writes the search's CSV, table (`table`, what the search prints) and JSON into `dir` under search_file_name,
 * each atomically, the JSON last (an earlier JSON there is removed first). @returns the three names.
 * @throws OutputError */
std::vector<std::string> write_search_folder(const std::filesystem::path& dir, const SearchResult& result,
                                             const std::string& table);

/** One shard of a search, read back from its JSON. */
struct SearchShard {
  std::filesystem::path path; ///< the JSON file
  nlohmann::json json;        ///< as read
  SearchResult result;        ///< search_result_from_json of it
};

/** Whether `path` is a search's output to merge: a file (a search's `--json`), or a folder holding a shard's
 * `search-shard-I-of-N.json` (or an unsharded search's `search.json`). */
bool is_search_shard_path(const std::filesystem::path& path);

/** The shards in `paths`: a file is read as a search's JSON (`--json FILE`), a folder gives its
 * `search-shard-I-of-N.json` files, by name. @throws InputError for a path that is missing, a folder without a
 * shard, a file that is not a search's JSON, or a shard file whose name is not its shard's */
std::vector<SearchShard> find_search_shards(const std::vector<std::filesystem::path>& paths);

/** The whole search from its shards, as the unsharded search would have found it: every shard of the same search
 * (partsim version, scenario content, space, metrics, token budget, --refine, --top and shard count as in the first
 * shard), each once, none missing. Each shard refined its own best --refine points; the whole search keeps the
 * faithful figures of the whole space's best --refine points only (each of them is among its shard's best) and drops
 * the others, so the ranking, the faithful re-runs and the Pareto front are the unsharded search's. The scenario's
 * path is the first shard's. @throws InputError naming the shard at fault, the JSON pointer and what was expected */
SearchResult merge_search_shards(const std::vector<SearchShard>& shards);

/** The JSON pointer (below `at`) of the first place where `a` and `b` differ, for messages; `at` when they differ
 * in type or size. */
std::string json_first_difference(const nlohmann::json& a, const nlohmann::json& b, const std::string& at);

} // namespace partsim
