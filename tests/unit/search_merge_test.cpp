// A search's JSON read back (search_result_from_json), and the shards of a search merged into the unsharded search's
// result: the refined points, ranking and Pareto front of the whole space, and one-line refusals of mismatched shards.
#include "partsim/batch/search.hpp"
#include "partsim/batch/search_merge.hpp"
#include "partsim/common/error.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <sstream>

namespace partsim {
namespace {

using nlohmann::json;
using test::input_error;

SearchFigures figures(const std::string& fidelity, double tokens_per_s, double gpus) {
  SearchFigures f;
  f.fidelity = fidelity;
  f.collective_fidelity = fidelity == "fast" ? "analytic" : "flows+steps";
  f.rank_value = tokens_per_s;
  f.pareto_value = gpus;
  f.makespan = 1e6 / tokens_per_s;
  f.samples_per_s = tokens_per_s / 4096.0;
  f.tokens_per_s = tokens_per_s;
  f.mfu = 0.3;
  f.cost_per_million_tokens = 0.1 * gpus;
  f.breakdown.compute = 1.0;
  f.breakdown.communication = 0.25;
  f.breakdown.bubble = 0.125;
  return f;
}

/** Tensor 1, 2, 4, 8 x pipeline 1, 2, 4 over nodes 1, 2 (24 points): a few excluded, invalid, pruned and failed,
 * the rest simulated fast with a throughput that depends on the point; `refine` of them refined as the search
 * does (the shard's own best), the faithful figure 3% below the fast one. Shard `shard` of `shards`. */
SearchResult made_search(std::size_t shard, std::size_t shards, std::size_t refine) {
  SearchResult r;
  r.scenario = "scenarios/llama.json";
  r.scenario_document = {{"name", "llama"}, {"cluster", {{"nodes", 1}}}};
  r.space.axes = {parse_vary("/cluster/nodes=1,2"), parse_vary("/strategy/tensor=1,2,4,8"),
                  parse_vary("/strategy/pipeline=1,2,4.0")};
  r.space.sets.push_back({"/workload/global_batch", 512});
  r.space.derived.push_back(parse_derived("/strategy/data=default", "--derive", ""));
  r.space.constraints.push_back(parse_constraint("/strategy/tensor <= 4", "--constraint", ""));
  r.space.notes.push_back("a note");
  r.rank_by = parse_search_metric("throughput", "--rank-by");
  r.pareto = parse_search_metric("gpus", "--pareto");
  r.refine = refine;
  r.top = 7;
  r.shard = shard;
  r.shards = shards;
  for (const SweepPoint& p : select_shard(expand_sweep(r.space.axes), shard, shards)) {
    SearchRow row;
    row.point = p;
    row.overrides = p.overrides;
    const double nodes = p.overrides[0].value.get<double>();
    const double tensor = p.overrides[1].value.get<double>();
    const double pipeline = p.overrides[2].value.get<double>();
    row.gpus = static_cast<std::int64_t>(8 * nodes);
    if (tensor > 4) {
      row.status = PointStatus::Excluded;
      row.reason = "/strategy/tensor <= 4";
    } else if (tensor == 1 && pipeline == 1) {
      row.status = PointStatus::OutOfMemory;
      row.memory = MemoryBreakdown{};
      row.memory->parameters = 9e10;
      row.memory->capacity = 8e10;
    } else if (tensor == 4 && pipeline == 4) {
      row.status = PointStatus::Invalid;
      row.reason = "/strategy: N layers do not divide into N stages";
      row.detail = "llama.json: /strategy: 80 layers do not divide into 16 stages";
    } else if (p.index == 13) {
      row.status = PointStatus::Failed;
      row.reason = "exit code 1: crashed";
    } else {
      row.memory = MemoryBreakdown{};
      row.memory->parameters = 5e10 / tensor / pipeline;
      row.memory->capacity = 8e10;
      // Point 20 ties point 4 (the ranking's ties go to the lower index); point 9 runs as written.
      const double tokens = p.index == 20 ? 1000.0 + 7.0 * 4 : 1000.0 + 7.0 * static_cast<double>(p.index);
      row.fast = figures(p.index == 9 ? "faithful" : "fast", tokens, static_cast<double>(row.gpus));
      if (p.index == 9) row.faithful = row.fast;
    }
    r.rows.push_back(std::move(row));
  }
  for (std::size_t i : refine_candidates(r.rows, r.rank_by, refine)) {
    SearchRow& row = r.rows[i];
    if (row.faithful) continue;
    if (row.point.index == 17) { // its faithful run failed
      row.reason = "faithful run failed (exit code 1): crashed";
      continue;
    }
    row.faithful = figures("faithful", row.fast->rank_value * 0.97, static_cast<double>(row.gpus));
  }
  return r;
}

SearchShard shard_of(const SearchResult& result, const std::string& path) {
  const json j = json::parse(search_json(result).dump(2));
  return {path, j, search_result_from_json(j, path)};
}

TEST(SearchJson, ReadsBackWhatItWrote) {
  const SearchResult r = made_search(0, 1, 3);
  const json written = json::parse(search_json(r).dump(2));
  const SearchResult back = search_result_from_json(written, "s.json");
  EXPECT_EQ(search_json(back).dump(2), search_json(r).dump(2));
  std::ostringstream a, b;
  write_search_csv(a, r);
  write_search_csv(b, back);
  EXPECT_EQ(a.str(), b.str());
  EXPECT_EQ(format_search_table(back), format_search_table(r));
  ASSERT_EQ(back.rows.size(), 24U);
  EXPECT_EQ(back.rows[5].point.labels, (std::vector<std::string>{"1", "2", "4.0"})) << "the labels as typed";
  EXPECT_EQ(back.rows[5].overrides[2].value, json(4.0));
  EXPECT_EQ(back.space.derived[0].pointer, "/strategy/data");
  EXPECT_FALSE(back.space.derived[0].product.has_value());
  EXPECT_EQ(back.rows[3].fast->cost_per_million_tokens, 0.8);
  EXPECT_FALSE(back.rows[3].fast->energy_per_token.has_value());
}

TEST(SearchJson, InfiniteFiguresReadBackAsInfinite) {
  SearchResult r = made_search(0, 1, 0);
  r.rows[3].fast->rank_value = std::numeric_limits<double>::infinity(); // time to train at 0 tokens/s
  const json written = json::parse(search_json(r).dump());
  EXPECT_TRUE(written["points"][3]["fast"]["rank_value"].is_null());
  const SearchResult back = search_result_from_json(written, "s.json");
  EXPECT_TRUE(std::isinf(back.rows[3].fast->rank_value));
  EXPECT_EQ(search_json(back).dump(), written.dump());
}

TEST(SearchJson, WhatDoesNotReadBackAsWrittenNamesItsPointer) {
  const json good = json::parse(search_json(made_search(0, 1, 2)).dump());
  const auto error = [](const json& j) { return input_error([&] { search_result_from_json(j, "s.json"); }); };
  json j = good;
  j["extra"] = 1;
  EXPECT_EQ(error(j).pointer(), "/extra");
  j = good;
  j["counts"]["simulated_fast"] = 99;
  EXPECT_EQ(error(j).pointer(), "/counts/simulated_fast");
  j = good;
  j["schema_version"] = 1;
  EXPECT_EQ(error(j).pointer(), "/schema_version");
  j = good;
  j["points"][4]["values"]["/strategy/tensor"] = 8;
  EXPECT_EQ(error(j).pointer(), "/points/4/values");
  j = good;
  j["points"].erase(j["points"].begin() + 2);
  EXPECT_EQ(error(j).pointer(), "/points");
  j = good;
  j["winner"] = 0;
  EXPECT_EQ(error(j).pointer(), "/winner");
  j = good;
  j["points"][3]["fast"]["breakdown_per_rank"]["bubble"] = 1;
  EXPECT_EQ(error(j).pointer(), "/points/3/fast/breakdown_per_rank/bubble");
  j = good;
  j["rank_by"]["name"] = "speed";
  EXPECT_EQ(error(j).pointer(), "/rank_by/name");
  j = good;
  j.erase("top");
  EXPECT_EQ(error(j).pointer(), "/top");
}

TEST(SearchMerge, ShardsMergeIntoTheUnshardedSearch) {
  for (std::size_t refine : {0U, 1U, 3U, 6U, 40U}) {
    const SearchResult whole = made_search(0, 1, refine);
    for (std::size_t shards : {2U, 3U, 5U}) {
      std::vector<SearchShard> parts;
      for (std::size_t s = shards; s-- > 0;) // in any order
        parts.push_back(shard_of(made_search(s, shards, refine), "shard" + std::to_string(s) + ".json"));
      const SearchResult merged = merge_search_shards(parts);
      EXPECT_EQ(search_json(merged).dump(2), search_json(whole).dump(2)) << refine << " " << shards;
      std::ostringstream a, b;
      write_search_csv(a, whole);
      write_search_csv(b, merged);
      EXPECT_EQ(a.str(), b.str()) << refine << " " << shards;
      EXPECT_EQ(format_search_table(merged), format_search_table(whole)) << refine << " " << shards;
    }
  }
}

TEST(SearchMerge, TheShardsRefineMoreThanTheWholeSearchKeeps) {
  std::size_t refined = 0;
  for (std::size_t s = 0; s < 3; ++s)
    for (const SearchRow& row : made_search(s, 3, 2).rows)
      refined += row.faithful && row.fast->fidelity == "fast" ? 1 : 0;
  std::size_t kept = 0;
  for (const SearchRow& row : made_search(0, 1, 2).rows) kept += row.faithful && row.fast->fidelity == "fast" ? 1 : 0;
  EXPECT_EQ(kept, 2U);
  EXPECT_GT(refined, kept) << "else the test does not show the merge dropping a shard's extra refinements";
}

TEST(SearchMerge, MismatchedMissingAndTwiceGivenShardsAreRefused) {
  const auto shard = [](std::size_t s, std::size_t n, const std::string& path) {
    return shard_of(made_search(s, n, 2), path);
  };
  const auto error = [](const std::vector<SearchShard>& parts) {
    return input_error([&] { merge_search_shards(parts); });
  };
  // Another space.
  json changed = json::parse(search_json(made_search(1, 2, 2)).dump());
  changed["space"]["axes"][1]["values"][3] = 16;
  changed["space"]["axes"][1]["labels"][3] = "16";
  InputError e =
      error({shard(0, 2, "a/search-shard-0-of-2.json"), {"b/search-shard-1-of-2.json", changed, made_search(1, 2, 2)}});
  EXPECT_EQ(e.source(), "b/search-shard-1-of-2.json");
  EXPECT_EQ(e.pointer(), "/space/axes/1/labels/3");
  EXPECT_NE(std::string(e.what()).find("expected \"8\" as in a/search-shard-0-of-2.json"), std::string::npos)
      << e.what();
  // Another scenario.
  SearchResult moved = made_search(1, 2, 2);
  moved.scenario_document["cluster"]["nodes"] = 2;
  e = error({shard(0, 2, "a.json"), shard_of(moved, "b.json")});
  EXPECT_EQ(e.pointer(), "/scenario_document/cluster/nodes");
  EXPECT_NE(std::string(e.what()).find("the scenario content of scenarios/llama.json"), std::string::npos);
  // Another --refine, another shard count.
  e = error({shard(0, 2, "a.json"), shard_of(made_search(1, 2, 3), "b.json")});
  EXPECT_EQ(e.pointer(), "/refine");
  e = error({shard(0, 2, "a.json"), shard(1, 3, "b.json")});
  EXPECT_EQ(e.pointer(), "/shard/count");
  // A missing shard, a shard twice.
  e = error({shard(0, 3, "a.json"), shard(2, 3, "c.json")});
  EXPECT_EQ(e.source(), "a.json");
  EXPECT_NE(std::string(e.what()).find("shard 1 (search-shard-1-of-3.json): it is missing"), std::string::npos)
      << e.what();
  e = error({shard(0, 2, "a.json"), shard(1, 2, "b.json"), shard(1, 2, "c.json")});
  EXPECT_EQ(e.source(), "c.json");
  EXPECT_NE(std::string(e.what()).find("given twice: also b.json"), std::string::npos) << e.what();
}

TEST(SearchMerge, FilesAndFoldersAreFoundAndFoldersHoldShardsOnly) {
  const auto dir = test::temp_dir();
  const SearchResult s0 = made_search(0, 2, 2);
  const SearchResult s1 = made_search(1, 2, 2);
  write_search_folder(dir / "a", s0, format_search_table(s0));
  write_search_folder(dir / "b", s1, format_search_table(s1));
  EXPECT_TRUE(std::filesystem::exists(dir / "a" / "search-shard-0-of-2.csv"));
  EXPECT_TRUE(std::filesystem::exists(dir / "a" / "search-shard-0-of-2.txt"));
  EXPECT_TRUE(is_search_shard_path(dir / "a"));
  EXPECT_TRUE(is_search_shard_path(dir / "b" / "search-shard-1-of-2.json"));
  EXPECT_FALSE(is_search_shard_path(dir / "nothing"));
  EXPECT_FALSE(is_search_shard_path(dir));
  std::vector<SearchShard> found = find_search_shards({dir / "b", dir / "a" / "search-shard-0-of-2.json"});
  ASSERT_EQ(found.size(), 2U);
  EXPECT_EQ(search_json(merge_search_shards(found)), search_json(made_search(0, 1, 2)));
  // A shard renamed as another.
  std::filesystem::rename(dir / "b" / "search-shard-1-of-2.json", dir / "b" / "search-shard-0-of-2.json");
  InputError e = input_error([&] { find_search_shards({dir / "b"}); });
  EXPECT_EQ(e.pointer(), "/shard");
  const SearchResult whole = made_search(0, 1, 2);
  write_search_folder(dir / "c", whole, format_search_table(whole));
  e = input_error([&] { find_search_shards({dir / "c"}); });
  EXPECT_NE(std::string(e.what()).find("search.json is an unsharded search"), std::string::npos) << e.what();
  e = input_error([&] { find_search_shards({dir / "missing"}); });
  EXPECT_EQ(e.source(), (dir / "missing").string());
}

} // namespace
} // namespace partsim
