// Sweep manifests and merging shards: names, strict reading, and one refusal per way shards fail to make one sweep
// (another sweep's shard, a shard twice, one missing, a failed point, a report missing or left by another sweep).
#include "partsim/batch/sweep_manifest.hpp"
#include "partsim/common/error.hpp"
#include "partsim/common/output_file.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

namespace partsim {
namespace {

using nlohmann::json;
using test::input_error;
using test::temp_dir;

/** Shard `shard` of `shards` of a sweep of /cluster/nodes=1,2,5 (points 0, 1, 2). */
SweepManifest shard_manifest(std::size_t shard, std::size_t shards) {
  SweepManifest m;
  m.partsim_version = "0.1.0";
  m.scenario_path = "scenarios/default.json";
  m.scenario_document = {{"schema_version", 1}, {"name", "default"}};
  m.sets = {"/strategy/fidelity=analytic"};
  m.varies = {"/cluster/nodes=1,2,5"};
  m.shard = shard;
  m.shards = shards;
  for (std::size_t i = shard; i < 3; i += shards) m.points.push_back(i);
  return m;
}

/** Writes the manifest in `dir` under its own name, with an empty file for each point's report. */
std::filesystem::path write_shard(const std::filesystem::path& dir, const SweepManifest& m, bool reports = true) {
  create_output_dir(dir);
  const std::filesystem::path path = dir / sweep_manifest_name(m.shard, m.shards);
  write_file_atomically(path, sweep_manifest_text(m));
  if (reports)
    for (std::size_t i : m.points) write_file_atomically(dir / sweep_point_report_name(i), "{}");
  return path;
}

/** The InputError of merging the shards in `dirs`. */
InputError merge_error(const std::vector<std::filesystem::path>& dirs) {
  return input_error([&] { plan_sweep_merge(find_sweep_shards(dirs)); });
}

TEST(SweepManifest, NamesOfTheWholeSweepAndOfAShard) {
  EXPECT_EQ(sweep_manifest_name(0, 1), "sweep.json");
  EXPECT_EQ(sweep_manifest_name(1, 4), "sweep-shard-1-of-4.json");
  EXPECT_EQ(sweep_summary_name(0, 1), "summary.txt");
  EXPECT_EQ(sweep_summary_name(3, 4), "summary-shard-3-of-4.txt");
  EXPECT_EQ(sweep_file_name("sweep", "csv", 2, 3), "sweep-shard-2-of-3.csv");
  EXPECT_EQ(sweep_point_report_name(7), "point-0007.report.json");
  EXPECT_EQ(sweep_point_report_name(12345), "point-12345.report.json");
}

TEST(SweepManifest, ReadsWhatItWrites) {
  SweepManifest m = shard_manifest(1, 2);
  m.failed = {1};
  const SweepManifest back = sweep_manifest_from_json(json::parse(sweep_manifest_text(m)), "m.json");
  EXPECT_EQ(back.partsim_version, m.partsim_version);
  EXPECT_EQ(back.scenario_path, m.scenario_path);
  EXPECT_EQ(back.scenario_document, m.scenario_document);
  EXPECT_EQ(back.sets, m.sets);
  EXPECT_EQ(back.varies, m.varies);
  EXPECT_EQ(back.shard, 1U);
  EXPECT_EQ(back.shards, 2U);
  EXPECT_EQ(back.points, (std::vector<std::size_t>{1}));
  EXPECT_EQ(back.failed, (std::vector<std::size_t>{1}));
  EXPECT_EQ(sweep_manifest_text(back), sweep_manifest_text(m));
}

TEST(SweepManifest, BadManifestsNameTheirPointer) {
  const json good = sweep_manifest_to_json(shard_manifest(0, 2));
  auto pointer_of = [](json j) { return input_error([&] { sweep_manifest_from_json(j, "m.json"); }).pointer(); };
  json j = good;
  j["extra"] = 1;
  EXPECT_EQ(pointer_of(j), "/extra") << "unknown key";
  j = good;
  j["schema"] = "partsim.report";
  EXPECT_EQ(pointer_of(j), "/schema");
  j = good;
  j["scenario"]["document"] = "abc";
  EXPECT_EQ(pointer_of(j), "/scenario/document") << "a scenario is an object";
  j = good;
  j["shard"] = 2;
  EXPECT_EQ(pointer_of(j), "/shard") << "shard 2 of 2";
  j = good;
  j["points"] = {0, 1};
  EXPECT_EQ(pointer_of(j), "/points/1") << "point 1 is not of shard 0 of 2";
  j = good;
  j["points"] = {2, 0};
  EXPECT_EQ(pointer_of(j), "/points/1") << "not ascending";
  j = good;
  j["failed"] = {4};
  EXPECT_EQ(pointer_of(j), "/failed/0") << "not one of the shard's points";
  j = good;
  j["vary"] = json::array();
  EXPECT_EQ(pointer_of(j), "/vary");
  j = good;
  j.erase("set");
  EXPECT_EQ(pointer_of(j), "/set") << "missing key";
  const InputError e = input_error([&] { sweep_manifest_from_json(json::array(), "m.json"); });
  EXPECT_EQ(e.source(), "m.json");
}

TEST(SweepManifest, TwoShardsMakeTheWholeSweep) {
  const auto dir = temp_dir();
  write_shard(dir / "a", shard_manifest(0, 2));
  write_shard(dir / "b", shard_manifest(1, 2));
  const SweepMerge merge = plan_sweep_merge(find_sweep_shards({dir / "b", dir / "a"}));
  EXPECT_EQ(merge.manifest.shard, 0U);
  EXPECT_EQ(merge.manifest.shards, 1U);
  EXPECT_EQ(merge.manifest.points, (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_EQ(merge.manifest.varies, shard_manifest(0, 2).varies);
  ASSERT_EQ(merge.points.size(), 3U);
  EXPECT_EQ(merge.points[2].labels, (std::vector<std::string>{"5"}));
  ASSERT_EQ(merge.reports.size(), 3U);
  EXPECT_EQ(merge.reports[0], dir / "a" / "point-0000.report.json");
  EXPECT_EQ(merge.reports[1], dir / "b" / "point-0001.report.json");
  EXPECT_EQ(merge.reports[2], dir / "a" / "point-0002.report.json");
  // Both shards in one folder work as well.
  write_shard(dir / "both", shard_manifest(0, 2));
  write_shard(dir / "both", shard_manifest(1, 2));
  EXPECT_EQ(plan_sweep_merge(find_sweep_shards({dir / "both"})).reports.size(), 3U);
}

TEST(SweepManifest, ShardsOfAnotherSweepAreRefused) {
  struct Case {
    const char* what;
    void (*change)(SweepManifest&);
    const char* pointer;
  };
  const Case cases[] = {
      {"scenario content", [](SweepManifest& m) { m.scenario_document["name"] = "other"; }, "/scenario/document"},
      {"--set", [](SweepManifest& m) { m.sets = {"/strategy/fidelity=flows"}; }, "/set"},
      {"--vary", [](SweepManifest& m) { m.varies = {"/cluster/nodes=1,2,6"}; }, "/vary"},
      {"partsim version", [](SweepManifest& m) { m.partsim_version = "0.0.9"; }, "/partsim_version"},
  };
  for (const Case& c : cases) {
    const auto dir = temp_dir();
    write_shard(dir / "a", shard_manifest(0, 2));
    SweepManifest other = shard_manifest(1, 2);
    c.change(other);
    const std::filesystem::path path = write_shard(dir / "b", other);
    const InputError e = merge_error({dir / "a", dir / "b"});
    EXPECT_EQ(e.source(), path.string()) << c.what;
    EXPECT_EQ(e.pointer(), c.pointer) << c.what;
    EXPECT_NE(e.detail().find("the shards of one sweep"), std::string::npos) << c.what << ": " << e.what();
  }
  // Another shard count: shard 1 of 3 beside shard 0 of 2.
  const auto dir = temp_dir();
  write_shard(dir / "a", shard_manifest(0, 2));
  const std::filesystem::path path = write_shard(dir / "b", shard_manifest(1, 3));
  const InputError e = merge_error({dir / "a", dir / "b"});
  EXPECT_EQ(e.source(), path.string());
  EXPECT_EQ(e.pointer(), "/shards");
}

TEST(SweepManifest, AShardTwiceOrMissingIsRefused) {
  const auto dir = temp_dir();
  write_shard(dir / "a", shard_manifest(0, 2));
  const std::filesystem::path again = write_shard(dir / "a2", shard_manifest(0, 2));
  const InputError twice = merge_error({dir / "a", dir / "a2"});
  EXPECT_EQ(twice.source(), again.string());
  EXPECT_EQ(twice.pointer(), "/shard");
  EXPECT_NE(twice.detail().find("given twice"), std::string::npos) << twice.what();

  const InputError missing = merge_error({dir / "a"});
  EXPECT_EQ(missing.source(), (dir / "a" / "sweep-shard-0-of-2.json").string());
  EXPECT_EQ(missing.pointer(), "/shards");
  EXPECT_NE(missing.detail().find("sweep-shard-1-of-2.json (shard 1 is missing)"), std::string::npos) << missing.what();
}

TEST(SweepManifest, AFailedPointOrAMissingReportIsRefused) {
  const auto dir = temp_dir();
  write_shard(dir / "a", shard_manifest(0, 2));
  SweepManifest failed = shard_manifest(1, 2);
  failed.failed = {1};
  const std::filesystem::path path = write_shard(dir / "b", failed, false);
  const InputError e = merge_error({dir / "a", dir / "b"});
  EXPECT_EQ(e.source(), path.string());
  EXPECT_EQ(e.pointer(), "/failed/0");
  EXPECT_NE(e.detail().find("sweep point 1 failed"), std::string::npos) << e.what();

  write_shard(dir / "c", shard_manifest(1, 2), false);
  const InputError missing = merge_error({dir / "a", dir / "c"});
  EXPECT_EQ(missing.source(), (dir / "c" / "point-0001.report.json").string());
  EXPECT_NE(missing.detail().find("missing; expected the report of sweep point 1 (2)"), std::string::npos)
      << missing.what();
}

TEST(SweepManifest, AShardWhosePointsAreNotItsSliceOfTheAxesIsRefused) {
  const auto dir = temp_dir();
  SweepManifest short_of_one = shard_manifest(0, 2);
  short_of_one.points = {0}; // the axes make points 0, 1, 2: shard 0 of 2 holds 0 and 2
  const std::filesystem::path path = write_shard(dir / "a", short_of_one);
  write_shard(dir / "b", shard_manifest(1, 2));
  const InputError e = merge_error({dir / "a", dir / "b"});
  EXPECT_EQ(e.source(), path.string());
  EXPECT_EQ(e.pointer(), "/points");
  EXPECT_NE(e.detail().find("expected the points 0, 2 of shard 0 of 2"), std::string::npos) << e.what();
}

TEST(SweepManifest, FoldersWithoutAShardAreRefused) {
  const auto dir = temp_dir();
  EXPECT_EQ(merge_error({dir / "nowhere"}).source(), (dir / "nowhere").string());
  create_output_dir(dir / "empty");
  EXPECT_NE(merge_error({dir / "empty"}).detail().find("found none"), std::string::npos);
  write_shard(dir / "whole", shard_manifest(0, 1));
  EXPECT_NE(merge_error({dir / "whole"}).detail().find("unsharded sweep"), std::string::npos);
  // A manifest whose content is not the shard its name says.
  create_output_dir(dir / "renamed");
  write_file_atomically(dir / "renamed" / "sweep-shard-1-of-2.json", sweep_manifest_text(shard_manifest(0, 2)));
  const InputError renamed = merge_error({dir / "renamed"});
  EXPECT_EQ(renamed.source(), (dir / "renamed" / "sweep-shard-1-of-2.json").string());
  EXPECT_EQ(renamed.pointer(), "/shard");
}

TEST(SweepManifest, ReportsAreReadIntoRowsAndAReportOfAnotherSweepIsRefused) {
  // Real reports, written by `partsim run`: nodes 1 for point 0 and, wrongly, nodes 1 again for point 1.
  const std::string one = test::run_scenario_json("default.json", {"/cluster/nodes=1"}).dump(2);
  const std::string two = test::run_scenario_json("default.json", {"/cluster/nodes=2"}).dump(2);
  SweepManifest m = shard_manifest(0, 1);
  m.varies = {"/cluster/nodes=1,2"};
  m.points = {0, 1};
  const auto dir = temp_dir();
  write_shard(dir / "s", m, false);
  write_file_atomically(dir / "s" / "point-0000.report.json", one);
  write_file_atomically(dir / "s" / "point-0001.report.json", two);
  // find_sweep_shards refuses an unsharded folder, so build the shard by hand.
  const SweepShard shard{dir / "s", dir / "s" / "sweep.json", m};
  const std::vector<SweepRow> rows = read_sweep_rows(plan_sweep_merge({shard}));
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_EQ(rows[0].gpus * 2, rows[1].gpus);
  EXPECT_GT(rows[1].speedup, 1.0);

  write_file_atomically(dir / "s" / "point-0001.report.json", one);
  const InputError e = input_error([&] { read_sweep_rows(plan_sweep_merge({shard})); });
  EXPECT_EQ(e.source(), (dir / "s" / "point-0001.report.json").string());
  EXPECT_EQ(e.pointer(), "/scenario/input/cluster/nodes");
  EXPECT_NE(e.detail().find("expected 2 (sweep point 1: 2), got 1"), std::string::npos) << e.what();
}

} // namespace
} // namespace partsim
