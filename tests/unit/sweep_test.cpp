// Sweeps: --vary parsing, the cartesian product, sharding, and the CSV written per point.
#include "partsim/batch/sweep.hpp"
#include "partsim/common/error.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace partsim {
namespace {

using nlohmann::json;

using test::input_error;

SweepAxis axis(const std::string& pointer, const std::vector<std::string>& labels) {
  std::string text = pointer + "=";
  for (std::size_t i = 0; i < labels.size(); ++i) text += (i > 0 ? "," : "") + labels[i];
  return parse_vary(text);
}

// --- parse_vary --------------------------------------------------------------------------------------------------

TEST(Sweep, VarySplitsAtCommas) {
  const SweepAxis a = parse_vary("/cluster/nodes=1,2,4");
  EXPECT_EQ(a.pointer, "/cluster/nodes");
  EXPECT_EQ(a.values, (std::vector<json>{1, 2, 4}));
  EXPECT_EQ(a.labels, (std::vector<std::string>{"1", "2", "4"}));
}

TEST(Sweep, VaryValuesAreJsonOrPlainStrings) {
  const SweepAxis a = parse_vary("/cluster/network/bandwidth=25GBps,1e10,true");
  ASSERT_EQ(a.values.size(), 3u);
  EXPECT_EQ(a.values[0], json("25GBps"));
  EXPECT_EQ(a.values[1], json(1e10));
  EXPECT_EQ(a.values[2], json(true));
}

TEST(Sweep, VaryDoesNotSplitInsideBrackets) {
  const SweepAxis a = parse_vary("/strategy/shares=[0.5,0.5],[0.25,0.75]");
  ASSERT_EQ(a.values.size(), 2u);
  EXPECT_EQ(a.values[0], json::array({0.5, 0.5}));
  EXPECT_EQ(a.values[1], json::array({0.25, 0.75}));
  EXPECT_EQ(a.labels, (std::vector<std::string>{"[0.5,0.5]", "[0.25,0.75]"}));
}

TEST(Sweep, VaryDoesNotSplitInsideBracesOrNestedBrackets) {
  const SweepAxis a = parse_vary("/strategy/shares={\"skewed\":0.3,\"largest_partition\":1},[[1,2],[3]],\"balanced\"");
  ASSERT_EQ(a.values.size(), 3u);
  EXPECT_EQ(a.values[0], json::object({{"skewed", 0.3}, {"largest_partition", 1}}));
  EXPECT_EQ(a.values[1], json::parse("[[1,2],[3]]"));
  EXPECT_EQ(a.values[2], json("balanced"));
}

TEST(Sweep, VaryDoesNotSplitInsideQuotes) {
  const SweepAxis a = parse_vary(R"(/name="a,b","c\",d",e)");
  ASSERT_EQ(a.values.size(), 3u);
  EXPECT_EQ(a.values[0], json("a,b"));
  EXPECT_EQ(a.values[1], json("c\",d")); // an escaped quote does not end the string
  EXPECT_EQ(a.values[2], json("e"));
  EXPECT_EQ(a.labels[0], "\"a,b\"");
}

TEST(Sweep, VarySingleValue) {
  const SweepAxis a = parse_vary("/workload/samples=1000");
  EXPECT_EQ(a.values, std::vector<json>{json(1000)});
}

TEST(Sweep, VaryRejectsMalformedAxes) {
  for (const std::string text : {"cluster/nodes=1,2", "/cluster/nodes", "/cluster/nodes=", ""}) {
    const InputError e = input_error([&] { parse_vary(text); });
    EXPECT_EQ(e.source(), "--vary") << text;
    EXPECT_EQ(e.pointer(), "") << text;
    EXPECT_NE(e.detail().find("expected /json/pointer=v1,v2"), std::string::npos) << e.detail();
  }
}

TEST(Sweep, VaryRejectsEmptyValues) {
  for (const std::string text : {"/cluster/nodes=1,,2", "/cluster/nodes=1,", "/cluster/nodes=,1"}) {
    const InputError e = input_error([&] { parse_vary(text); });
    EXPECT_EQ(e.source(), "--vary") << text;
    EXPECT_EQ(e.pointer(), "/cluster/nodes") << text;
    EXPECT_NE(e.detail().find("empty value"), std::string::npos) << e.detail();
  }
}

// --- expand_sweep ------------------------------------------------------------------------------------------------

TEST(Sweep, ExpandIsCartesianWithTheFirstAxisSlowest) {
  const std::vector<SweepAxis> axes{axis("/a", {"1", "2"}), axis("/b", {"x", "y", "z"})};
  const std::vector<SweepPoint> points = expand_sweep(axes);
  const std::vector<std::string> a{"1", "2"};
  const std::vector<std::string> b{"x", "y", "z"};
  ASSERT_EQ(points.size(), a.size() * b.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(points[i].index, i);
    EXPECT_EQ(points[i].labels, (std::vector<std::string>{a[i / b.size()], b[i % b.size()]}));
    ASSERT_EQ(points[i].overrides.size(), 2u);
    EXPECT_EQ(points[i].overrides[0].pointer, "/a");
    EXPECT_EQ(points[i].overrides[0].value, json(std::stoi(a[i / b.size()])));
    EXPECT_EQ(points[i].overrides[1].pointer, "/b");
    EXPECT_EQ(points[i].overrides[1].value, json(b[i % b.size()]));
  }
}

TEST(Sweep, ExpandThreeAxes) {
  const std::vector<SweepAxis> axes{axis("/a", {"0", "1"}), axis("/b", {"0", "1", "2"}), axis("/c", {"0", "1"})};
  const std::vector<SweepPoint> points = expand_sweep(axes);
  ASSERT_EQ(points.size(), 12u);
  for (std::size_t i = 0; i < points.size(); ++i) {
    // Mixed-radix digits of i, most significant first: (2, 3, 2).
    const std::vector<std::string> expected{std::to_string(i / 6), std::to_string(i / 2 % 3), std::to_string(i % 2)};
    EXPECT_EQ(points[i].labels, expected) << i;
  }
}

TEST(Sweep, ExpandWithoutAxesIsOnePoint) {
  const std::vector<SweepPoint> points = expand_sweep({});
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].index, 0u);
  EXPECT_TRUE(points[0].overrides.empty());
}

// --- shards ------------------------------------------------------------------------------------------------------

TEST(Sweep, ParseShard) {
  EXPECT_EQ(parse_shard("0/1"), (std::pair<std::size_t, std::size_t>{0, 1}));
  EXPECT_EQ(parse_shard("2/3"), (std::pair<std::size_t, std::size_t>{2, 3}));
  EXPECT_EQ(parse_shard("15/100"), (std::pair<std::size_t, std::size_t>{15, 100}));
}

TEST(Sweep, ParseShardRejects) {
  for (const std::string text : {"1/0", "2/2", "3/2", "a/b", "1", "/2", "1/", "1/2x", "1x/2", "-1/2", ""}) {
    const InputError e = input_error([&] { parse_shard(text); });
    EXPECT_EQ(e.source(), "--shard") << text;
    EXPECT_NE(e.detail().find("expected I/N with 0 <= I < N, got \"" + text + "\""), std::string::npos) << e.detail();
  }
}

TEST(Sweep, SelectShardKeepsIndicesModuloN) {
  const std::vector<SweepPoint> points = expand_sweep({axis("/a", {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"})});
  std::vector<std::size_t> kept;
  for (const SweepPoint& p : select_shard(points, 1, 3)) kept.push_back(p.index);
  EXPECT_EQ(kept, (std::vector<std::size_t>{1, 4, 7}));
  EXPECT_EQ(select_shard(points, 0, 1).size(), points.size());
}

TEST(Sweep, ShardsPartitionThePoints) {
  const std::vector<SweepPoint> points = expand_sweep({axis("/a", {"1", "2", "3"}), axis("/b", {"1", "2", "3"})});
  std::vector<int> seen(points.size(), 0);
  constexpr std::size_t shards = 4;
  for (std::size_t s = 0; s < shards; ++s)
    for (const SweepPoint& p : select_shard(points, s, shards)) ++seen[p.index];
  EXPECT_EQ(seen, std::vector<int>(points.size(), 1));
}

// --- rows and CSV ------------------------------------------------------------------------------------------------

ReportDocument minimal_report() {
  ReportDocument doc;
  ReportSummary& s = doc.summary.emplace();
  s.gpus = 8;
  s.makespan = 2.5;
  s.throughput = 400.0;
  s.single_gpu_time = 16.0;
  s.speedup = 6.4;
  s.parallel_efficiency = 0.8;
  s.karp_flatt = 0.03;
  s.parallel_fraction = 0.97;
  s.amdahl_speedup_bound = 6.9;
  s.communication_overhead = 0.05;
  s.imbalance_max_over_mean = 1.25;
  return doc;
}

TEST(Sweep, RowFromReport) {
  const SweepPoint point = expand_sweep({axis("/cluster/nodes", {"8"})}).at(0);
  const SweepRow row = sweep_row(point, minimal_report());
  EXPECT_EQ(row.point.labels, std::vector<std::string>{"8"});
  EXPECT_EQ(row.gpus, 8);
  EXPECT_EQ(row.makespan, 2.5);
  EXPECT_EQ(row.single_gpu_time, 16.0);
  EXPECT_EQ(row.speedup, 6.4);
  EXPECT_EQ(row.efficiency, 0.8);
  EXPECT_EQ(row.karp_flatt, 0.03);
  EXPECT_EQ(row.parallel_fraction, 0.97);
  EXPECT_EQ(row.amdahl_bound, 6.9);
  EXPECT_EQ(row.communication_overhead, 0.05);
  EXPECT_EQ(row.imbalance, 1.25);
}

TEST(Sweep, CsvHeaderAndRows) {
  const std::vector<SweepAxis> axes{axis("/cluster/nodes", {"8"}), axis("/strategy/shares", {"[0.5,0.5]"})};
  const SweepPoint point = expand_sweep(axes).at(0);
  std::ostringstream out;
  write_sweep_csv(out, axes, {sweep_row(point, minimal_report())});
  const std::string expected =
      "point,/cluster/nodes,/strategy/shares,gpus,makespan_s,single_gpu_time_s,speedup,parallel_efficiency,"
      "karp_flatt_serial_fraction,parallel_fraction,amdahl_speedup_bound,communication_overhead,"
      "load_imbalance_max_over_mean,throughput_samples_per_s,verdict\n"
      "0,8,\"[0.5,0.5]\",8,2.5,16,6.4,0.8,0.03,0.97,6.9,0.05,1.25,400,simulated\n";
  EXPECT_EQ(out.str(), expected);
}

TEST(Sweep, CsvRowIsTheSameReadBackFromReportJson) {
  const std::vector<SweepAxis> axes{axis("/cluster/nodes", {"8"})};
  const SweepPoint point = expand_sweep(axes).at(0);
  std::ostringstream direct, read_back;
  write_sweep_csv(direct, axes, {sweep_row(point, minimal_report())});
  const json text = json::parse(to_json(minimal_report()).dump(2));
  write_sweep_csv(read_back, axes, {sweep_row(point, report_document_from_json(text, "point-0000.report.json"))});
  EXPECT_EQ(read_back.str(), direct.str());
}

TEST(Sweep, CsvQuotesCommasAndDoublesQuotes) {
  const std::vector<SweepAxis> axes{axis("/name", {R"("a,b")"})};
  const SweepPoint point = expand_sweep(axes).at(0);
  std::ostringstream out;
  write_sweep_csv(out, axes, {sweep_row(point, minimal_report())});
  const std::string text = out.str();
  const std::string second_line = text.substr(text.find('\n') + 1);
  EXPECT_EQ(second_line.substr(0, second_line.find(",8,")), R"(0,"""a,b""")");
}

TEST(Sweep, CsvWithoutRowsIsAHeader) {
  std::ostringstream out;
  write_sweep_csv(out, {}, {});
  EXPECT_EQ(out.str(), "point,gpus,makespan_s,single_gpu_time_s,speedup,parallel_efficiency,"
                       "karp_flatt_serial_fraction,parallel_fraction,amdahl_speedup_bound,communication_overhead,"
                       "load_imbalance_max_over_mean,throughput_samples_per_s,verdict\n");
}

TEST(Sweep, OutOfMemoryPointIsARowWithItsVerdict) {
  const std::vector<SweepAxis> axes{axis("/cluster/nodes", {"1", "8"})};
  const std::vector<SweepPoint> points = expand_sweep(axes);
  ReportDocument out_of_memory;
  out_of_memory.verdict = Verdict::OutOfMemory;
  out_of_memory.scenario.input = {{"cluster", {{"nodes", 1}, {"gpus_per_node", 4}}}};
  const std::vector<SweepRow> rows{sweep_row(points[0], out_of_memory), sweep_row(points[1], minimal_report())};
  EXPECT_TRUE(rows[0].out_of_memory);
  EXPECT_EQ(rows[0].gpus, 4);
  EXPECT_EQ(best_row(rows), 1U) << "a point that does not fit is never the fastest";
  EXPECT_EQ(best_row({rows[0]}), 1U) << "no simulated point: none is the fastest";
  std::ostringstream csv;
  write_sweep_csv(csv, axes, rows);
  EXPECT_NE(csv.str().find("\n0,1,4,,,,,,,,,,,out_of_memory\n"), std::string::npos) << csv.str();
  const std::string table = format_sweep_table(axes, rows);
  EXPECT_NE(table.find("out of memory"), std::string::npos) << table;
  EXPECT_NE(table.find("1 of 2 points do not fit"), std::string::npos) << table;
  EXPECT_NE(table.find("fastest (*): point 1"), std::string::npos) << table;
}

TEST(Sweep, PointsDoingDifferentWorkAreRankedByThroughputAndTheTableSaysSo) {
  const std::vector<SweepAxis> axes{axis("/workload/global_batch", {"64", "512"})};
  const std::vector<SweepPoint> points = expand_sweep(axes);
  // Batch 64 finishes first (1 s) but does 1/8 of the work: 64 samples/s against 512 / 4 s = 128.
  SweepRow small = sweep_row(points[0], minimal_report());
  small.makespan = 1.0;
  small.throughput = 64.0;
  small.samples = 64.0;
  SweepRow large = sweep_row(points[1], minimal_report());
  large.makespan = 4.0;
  large.throughput = 128.0;
  large.samples = 512.0;
  EXPECT_EQ(sweep_ranking({small, large}), SweepRanking::Throughput);
  EXPECT_EQ(best_row({small, large}), 1U);
  const std::string table = format_sweep_table(axes, {small, large});
  EXPECT_NE(table.find("best (*): point 1 (/workload/global_batch=512): 128 samples/s, makespan 4 s"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("ranked by throughput (samples/s): the points do different amounts of work"), std::string::npos);
  // The same work: the smallest makespan, and the table says that is the metric.
  large.samples = 64.0 * (1 + 1e-12); // equal up to rounding
  EXPECT_EQ(sweep_ranking({small, large}), SweepRanking::Makespan);
  EXPECT_EQ(best_row({small, large}), 0U);
  EXPECT_NE(format_sweep_table(axes, {small, large}).find("ranked by makespan: every point does the same work"),
            std::string::npos);
}

TEST(Sweep, ProductIsCountedBeforeItIsExpanded) {
  std::vector<SweepAxis> axes;
  for (int a = 0; a < 9; ++a)
    axes.push_back(axis("/a" + std::to_string(a), {"1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}));
  EXPECT_EQ(sweep_size(axes), kMaxSweepPoints + 1);
  EXPECT_THROW(expand_sweep(axes), InputError);
  axes.resize(6);
  EXPECT_EQ(sweep_size(axes), 1'000'000U);
  EXPECT_EQ(expand_sweep({axes[0], axes[1]}).size(), 100U);
}

} // namespace
} // namespace partsim
