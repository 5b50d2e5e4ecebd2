// partsim search end to end: memory pruning against the simulated verdict, the optimum against an exhaustive run of
// every point, byte-identical outputs, and one-line errors with exit code 2.
#include "test_support.hpp"

#include "partsim/common/exit_codes.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>

namespace partsim::test {
namespace {

std::string llama70b() {
  return (source_dir() / "scenarios" / "llama3-70b-3d-64xh100.json").string();
}

/** Llama 3 70B on 64 H100s over tensor 2, 4, 8 x pipeline 2, 4, 8 (data derived): 5 points do not fit, 4 do. */
const std::vector<std::string> kSpace{"--vary", "/strategy/tensor=2,4,8", "--vary", "/strategy/pipeline=2,4,8"};

struct Search {
  CliResult cli;
  nlohmann::json json;
  std::string csv;
};

Search search(const std::vector<std::string>& extra, const std::filesystem::path& dir = temp_dir()) {
  std::vector<std::string> args{"search", llama70b()};
  args.insert(args.end(), kSpace.begin(), kSpace.end());
  args.insert(args.end(), {"--json", (dir / "search.json").string(), "--csv", (dir / "search.csv").string()});
  args.insert(args.end(), extra.begin(), extra.end());
  Search s;
  s.cli = run_cli(args, dir);
  EXPECT_EQ(s.cli.exit_code, 0) << s.cli.err;
  if (s.cli.exit_code != 0) return s;
  s.json = nlohmann::json::parse(read_file(dir / "search.json"));
  s.csv = read_file(dir / "search.csv");
  return s;
}

/** `partsim run` of one point of the search (its axis values, the data degree derived) at the faithful fidelity. */
CliResult run_point(const nlohmann::json& point) {
  std::vector<std::string> args{"run",           llama70b(),    "--json",  "--no-files",
                                "--no-progress", "--no-expect", "--unset", "/strategy/data"};
  for (const auto& [pointer, value] : point["values"].items())
    args.insert(args.end(), {"--set", pointer + "=" + value.dump()});
  return run_cli(args);
}

TEST(Search, MemoryPruningAgreesWithTheSimulatedOutOfMemoryVerdict) {
  const Search s = search({"--refine", "0"});
  ASSERT_TRUE(s.json.is_object());
  int pruned = 0;
  for (const auto& point : s.json["points"]) {
    if (point["status"] != "out_of_memory") continue;
    ++pruned;
    const CliResult r = run_point(point);
    EXPECT_EQ(r.exit_code, kExitOutOfMemory) << point.dump() << r.err;
    if (r.exit_code == kExitOutOfMemory) {
      EXPECT_EQ(nlohmann::json::parse(r.out)["verdict"], "out_of_memory") << point.dump();
    }
  }
  EXPECT_GT(pruned, 0) << "the test space must have points that do not fit";
  EXPECT_EQ(s.json["counts"]["pruned_out_of_memory"], pruned);
  EXPECT_GT(s.json["counts"]["simulated_fast"].get<int>(), 1);
  EXPECT_EQ(s.json["counts"]["failed"], 0);
}

TEST(Search, TheOptimumFoundIsTheExhaustiveOptimum) {
  const Search s = search({"--refine", "2"});
  ASSERT_TRUE(s.json.is_object());
  ASSERT_EQ(s.json["counts"]["refined_faithful"], 2);
  ASSERT_GT(s.json["counts"]["simulated_fast"].get<int>(), 2) << "refinement must leave points out";
  // Every point at the faithful fidelity, the best by tokens per second.
  double best = 0.0;
  nlohmann::json best_point;
  for (const auto& point : s.json["points"]) {
    const CliResult r = run_point(point);
    if (r.exit_code == kExitOutOfMemory) continue;
    ASSERT_EQ(r.exit_code, 0) << point.dump() << r.err;
    const double tokens = nlohmann::json::parse(r.out)["summary"]["tokens_per_s"].get<double>();
    if (tokens > best) {
      best = tokens;
      best_point = point;
    }
  }
  ASSERT_FALSE(best_point.is_null());
  EXPECT_EQ(s.json["winner"], best_point["point"]) << s.cli.out;
  const auto& winner = s.json["points"][s.json["winner"].get<std::size_t>()];
  EXPECT_EQ(winner["faithful"]["fidelity"], "faithful");
  EXPECT_EQ(winner["faithful"]["rank_value"].get<double>(), best) << "the same run, the same figure";
  EXPECT_NE(s.cli.out.find("why point"), std::string::npos) << s.cli.out;
  EXPECT_NE(s.cli.out.find("Pareto front"), std::string::npos) << s.cli.out;
}

TEST(Search, OutputsAreByteIdenticalWhateverTheJobs) {
  const auto a = temp_dir();
  const auto b = temp_dir();
  const Search one = search({"--refine", "1", "--jobs", "1"}, a);
  const Search two = search({"--refine", "1", "--jobs", "2"}, b);
  EXPECT_EQ(one.csv, two.csv);
  EXPECT_EQ(read_file(a / "search.json"), read_file(b / "search.json"));
  EXPECT_EQ(one.cli.out, two.cli.out);
  EXPECT_EQ(one.json["schema"], "partsim.search");
  EXPECT_EQ(one.json["schema_version"], 2);
  EXPECT_EQ(one.csv.rfind("point,/strategy/tensor,/strategy/pipeline,status,", 0), 0U) << one.csv;
  EXPECT_EQ(std::count(one.csv.begin(), one.csv.end(), '\n'), 10) << "a header and one row per point";
  EXPECT_EQ(one.json["space"]["derived"]["/strategy/data"], "default");
  EXPECT_NE(one.cli.out.find("note: /strategy/data"), std::string::npos) << one.cli.out;
}

TEST(Search, ShardsSplitThePointsByIndex) {
  std::vector<std::size_t> seen;
  for (const char* shard : {"0/2", "1/2"}) {
    const Search s = search({"--refine", "0", "--shard", shard});
    ASSERT_TRUE(s.json.is_object());
    EXPECT_EQ(s.json["shard"]["count"], 2);
    for (const auto& point : s.json["points"]) {
      EXPECT_EQ(point["point"].get<std::size_t>() % 2, std::size_t(shard[0] - '0')) << point.dump();
      seen.push_back(point["point"].get<std::size_t>());
    }
    EXPECT_NE(s.cli.out.find(std::string("(shard ") + shard[0] + " of 2)"), std::string::npos) << s.cli.out;
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
}

/** Asserts a one-line error on stderr with exit code 2 that contains `fragment`. */
void expect_input_error(const CliResult& r, const std::string& fragment) {
  EXPECT_EQ(r.exit_code, kExitInputError) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "expected exactly one line: " << r.err;
  EXPECT_NE(r.err.find(fragment), std::string::npos) << r.err;
}

TEST(Search, BadCommandLinesAndSpaceFilesAreOneLineWithExitCode2) {
  const auto dir = temp_dir();
  const std::string scenario = llama70b();
  expect_input_error(run_cli({"search", scenario, "--vary", "/strategy/tensor=2", "--rank-by", "speed"}),
                     "--rank-by: expected throughput");
  expect_input_error(run_cli({"search", scenario, "--vary", "/strategy/tensor=2", "--rank-by", "time_to_train"}),
                     "--tokens: time_to_train needs the token budget");
  expect_input_error(run_cli({"search", scenario, "--vary", "/strategy/tensor=2", "--constraint", "tensor < 8"}),
                     "--constraint: \"tensor\" in \"tensor < 8\" is neither");
  expect_input_error(run_cli({"search", scenario}), "--vary: no axis to search");
  expect_input_error(run_cli({"search", scenario, "--vary", "/strategy/nothing/x=1"}), "/strategy/nothing/x");
  { std::ofstream(dir / "space.json") << R"({"axes": {"/strategy/tensor": [2, 4]}, "constraint": []})"; }
  expect_input_error(run_cli({"search", scenario, "--space", (dir / "space.json").string()}),
                     (dir / "space.json").string() + ": /constraint: unknown key");
  { std::ofstream(dir / "bad.json") << R"({"axes": {"/strategy/tensor": 4}})"; }
  expect_input_error(run_cli({"search", scenario, "--space", (dir / "bad.json").string()}),
                     (dir / "bad.json").string() + ": /axes/~1strategy~1tensor: expected a non-empty array");
  expect_input_error(run_cli({"search", scenario, "--space", (dir / "missing.json").string()}), "missing.json");
  expect_input_error(run_cli({"search", scenario, "--vary", "/strategy/tensor=2", "--shard", "2/2"}), "--shard");
}

TEST(Search, ASpaceFileWithConstraintsAndTimeToTrain) {
  const auto dir = temp_dir();
  {
    std::ofstream(dir / "space.json") << R"({
      "description": "tensor inside a node, time to train 1e12 tokens",
      "axes": {"/strategy/tensor": [2, 4, 8, 16]},
      "set": {"/strategy/pipeline": 4},
      "constraints": ["/strategy/tensor <= /cluster/gpus_per_node"]
    })";
  }
  const CliResult r =
      run_cli({"search", llama70b(), "--space", (dir / "space.json").string(), "--rank-by", "time_to_train", "--tokens",
               "1e12", "--refine", "1", "--json", (dir / "s.json").string()},
              dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto s = nlohmann::json::parse(read_file(dir / "s.json"));
  EXPECT_EQ(s["counts"]["excluded"], 1) << "tensor 16";
  EXPECT_EQ(s["rank_by"]["name"], "time_to_train");
  const auto& winner = s["points"][s["winner"].get<std::size_t>()];
  const double tokens_per_s = winner["faithful"]["tokens_per_s"].get<double>();
  EXPECT_DOUBLE_EQ(winner["faithful"]["rank_value"].get<double>(), 1e12 / tokens_per_s);
}

/** `partsim search` of the test space with `extra` options; expects exit code 0. */
CliResult search_with(const std::vector<std::string>& extra, const std::vector<std::string>& space = kSpace) {
  std::vector<std::string> args{"search", llama70b()};
  args.insert(args.end(), space.begin(), space.end());
  args.insert(args.end(), extra.begin(), extra.end());
  CliResult r = run_cli(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r;
}

TEST(Search, MergedShardsAreByteForByteTheUnshardedSearch) {
  const auto dir = temp_dir();
  // Ranked by time, against cost, the 2 best refined: with 3 shards each refines its own best (4 refined in all), the
  // whole search only the 2 best of all.
  const std::vector<std::string> options{"--refine", "2",        "--rank-by",     "time_to_train", "--tokens",
                                         "1e12",     "--pareto", "cost_to_train", "--jobs",        "2"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), options.begin(), options.end());
    return more;
  };
  const CliResult whole = search_with(with({"--out", (dir / "whole").string()}));
  for (const char* shard : {"0/3", "1/3", "2/3"})
    search_with(with({"--shard", shard, "--out", (dir / "three").string()}));
  for (const char* shard : {"0", "1"})
    search_with(with({"--shard", std::string(shard) + "/2", "--out", (dir / ("two-" + std::string(shard))).string(),
                      "--json", (dir / ("two-" + std::string(shard) + ".json")).string()}));
  std::size_t refined_by_shards = 0;
  for (const char* name : {"search-shard-0-of-3.json", "search-shard-1-of-3.json", "search-shard-2-of-3.json"})
    refined_by_shards +=
        nlohmann::json::parse(read_file(dir / "three" / name))["counts"]["refined_faithful"].get<std::size_t>();
  EXPECT_GT(refined_by_shards, 2U) << "the shards refine more points than the whole search keeps";

  const std::vector<std::vector<std::string>> merges{
      {"merge", (dir / "three").string(), "--out", (dir / "m3").string()},
      {"merge", (dir / "two-1").string(), (dir / "two-0").string(), "--out", (dir / "m2").string()},
      {"merge", (dir / "two-0.json").string(), (dir / "two-1.json").string(), "--out", (dir / "mj").string()}};
  const std::string table = read_file(dir / "whole" / "search.txt");
  EXPECT_EQ(whole.out.rfind(table, 0), 0U) << "search.txt is the table the search prints";
  for (const auto& merge : merges) {
    const CliResult merged = run_cli(merge);
    ASSERT_EQ(merged.exit_code, 0) << merged.err;
    const std::filesystem::path out = merge[merge.size() - 1];
    for (const char* name : {"search.json", "search.csv", "search.txt"})
      EXPECT_EQ(read_file(out / name), read_file(dir / "whole" / name)) << out << " " << name;
    EXPECT_EQ(merged.out.rfind(table, 0), 0U) << merged.out;
    EXPECT_NE(merged.out.find("merged "), std::string::npos) << merged.out;
  }
  const auto json = nlohmann::json::parse(read_file(dir / "m3" / "search.json"));
  EXPECT_EQ(json["counts"]["refined_faithful"], 2);
  EXPECT_EQ(json["shard"]["count"], 1);
}

TEST(Search, MergeRefusesAnotherSearchsShardAMissingShardAndATwiceGivenOne) {
  const auto dir = temp_dir();
  for (const char* shard : {"0/2", "1/2"})
    search_with({"--refine", "1", "--shard", shard, "--out", (dir / "a").string()});
  search_with({"--refine", "1", "--shard", "1/2", "--out", (dir / "b").string()},
              {"--vary", "/strategy/tensor=2,4", "--vary", "/strategy/pipeline=2,4,8"});
  search_with({"--refine", "2", "--shard", "1/2", "--out", (dir / "c").string()});
  const std::string a0 = (dir / "a" / "search-shard-0-of-2.json").string();
  const std::string out = (dir / "merged").string();
  expect_input_error(run_cli({"merge", a0, (dir / "b").string(), "--out", out}),
                     (dir / "b" / "search-shard-1-of-2.json").string() +
                         ": /space/axes/0/labels: expected [\"2\",\"4\",\"8\"] as in " + a0);
  expect_input_error(run_cli({"merge", a0, (dir / "c").string(), "--out", out}),
                     (dir / "c" / "search-shard-1-of-2.json").string() + ": /refine: expected 1 as in " + a0);
  expect_input_error(run_cli({"merge", a0, "--out", out}),
                     a0 + ": /shard/count: expected 2 shards, but no path given holds shard 1 "
                          "(search-shard-1-of-2.json): it is missing");
  expect_input_error(run_cli({"merge", (dir / "a").string(), (dir / "a").string(), "--out", out}), "given twice");
  expect_input_error(run_cli({"merge", (dir / "missing").string(), "--out", out}), "missing");
  EXPECT_FALSE(std::filesystem::exists(dir / "merged")) << "a refused merge writes nothing";
}

TEST(Search, SearchesTheExpertAxis) {
  // Mixtral 8x7B on 64 H100s over expert 1, 2, 4, 8, 3 x pipeline 2, 4 (data derived): expert 3 divides neither the
  // 8 experts nor the data degree and is counted invalid; expert 1 does not fit; the best split has one expert per
  // GPU, and the breakdown names the experts' all-to-all time.
  const std::filesystem::path dir = temp_dir();
  const CliResult r = run_cli({"search", (source_dir() / "scenarios" / "mixtral-8x7b-ep-64xh100.json").string(),
                               "--vary", "/strategy/expert=1,2,4,8,3", "--vary", "/strategy/pipeline=2,4", "--json",
                               (dir / "search.json").string(), "--refine", "1"},
                              dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(read_file(dir / "search.json"));
  EXPECT_EQ(j["counts"]["invalid"], 2) << j["counts"].dump();
  EXPECT_GE(j["counts"]["pruned_out_of_memory"].get<int>(), 2) << j["counts"].dump();
  ASSERT_TRUE(j["winner"].is_number_integer()) << j.dump();
  const nlohmann::json& best = j["points"][j["winner"].get<std::size_t>()];
  EXPECT_EQ(best["values"]["/strategy/expert"], 8) << best.dump();
  EXPECT_GT(best["faithful"]["breakdown_per_rank"]["expert_exposed_s"].get<double>(), 0.0) << best.dump();
}

TEST(Search, SearchesTheContextAxis) {
  // Llama 3 405B's 131,072-token phase on 16,384 H100s (all-gather exchange) over context 8, 16, 32 x data 4, 8, 16,
  // 16 sequences per replica: the six products that do not fill the cluster are invalid; context 8 leaves too many
  // activations per GPU and is pruned; 16 and 32 are simulated, the breakdown names the exposed exchange, and memory
  // per GPU falls with the degree.
  const std::filesystem::path dir = temp_dir();
  const CliResult r =
      run_cli({"search", (source_dir() / "scenarios" / "llama3-405b-cp16-131k-16384xh100.json").string(), "--vary",
               "/strategy/context=8,16,32", "--vary", "/strategy/data=4,8,16", "--derive",
               "/workload/global_batch=/strategy/data * 16", "--json", (dir / "search.json").string(), "--refine", "0",
               "--rank-by", "mfu"},
              dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(read_file(dir / "search.json"));
  EXPECT_EQ(j["counts"]["invalid"], 6) << j["counts"].dump();
  EXPECT_EQ(j["counts"]["pruned_out_of_memory"], 1) << j["counts"].dump();
  std::map<int, double> memory;
  for (const nlohmann::json& p : j["points"]) {
    if (p["status"] != "simulated") continue;
    memory[p["values"]["/strategy/context"].get<int>()] = p["memory_per_gpu_bytes"].get<double>();
    EXPECT_GT(p["fast"]["breakdown_per_rank"]["context_exposed_s"].get<double>(), 0.0) << p.dump();
  }
  ASSERT_EQ(memory.size(), 2u) << j.dump();
  EXPECT_LT(memory[32], memory[16]);
}

} // namespace
} // namespace partsim::test
