// Sweeps: parameter axes, their cartesian product, sharding, and the per-point summary table and CSV.
#pragma once

#include "partsim/input/scenario.hpp"
#include "partsim/report/report_document.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace partsim {

/** One `--vary /pointer=v1,v2,...` axis. Values are JSON when they parse as JSON, else strings; commas inside
 * brackets, braces or quotes do not split (`--vary /strategy/shares=[0.5,0.5],"balanced"`). */
struct SweepAxis {
  std::string pointer;
  std::vector<nlohmann::json> values;
  std::vector<std::string> labels; ///< the values as typed
};

SweepAxis parse_vary(const std::string& text);

/** One point of the sweep: its index in the full product, and the overrides that make it. */
struct SweepPoint {
  std::size_t index = 0;
  std::vector<Override> overrides;
  std::vector<std::string> labels;
};

/** Most points a sweep expands (each is a simulation of its own). */
inline constexpr std::size_t kMaxSweepPoints = 1'000'000;

/** Points in the cartesian product of the axes, or kMaxSweepPoints + 1 when there are more. */
std::size_t sweep_size(const std::vector<SweepAxis>& axes);

/** The cartesian product of the axes, first axis slowest. @throws InputError past kMaxSweepPoints points (counted
 * before anything is expanded). */
std::vector<SweepPoint> expand_sweep(const std::vector<SweepAxis>& axes);

/** Parses "I/N" (0 <= I < N). */
std::pair<std::size_t, std::size_t> parse_shard(const std::string& text);

/** Keeps the points of shard I of N (index mod N == I), so batch systems can spread one sweep. */
std::vector<SweepPoint> select_shard(const std::vector<SweepPoint>& points, std::size_t shard, std::size_t shards);

/** The figures a sweep reports per point, read from the point's report.json. */
struct SweepRow {
  SweepPoint point;
  bool out_of_memory = false; ///< the verdict: the point does not fit in GPU memory; no figures but gpus
  int gpus = 0;
  double makespan = 0.0;
  double single_gpu_time = 0.0;
  double speedup = 0.0;
  double efficiency = 0.0;
  double karp_flatt = 0.0;
  double parallel_fraction = 0.0;
  double amdahl_bound = 0.0;
  double communication_overhead = 0.0;
  double imbalance = 0.0;
  double throughput = 0.0; ///< samples of all iterations per second
  double samples = 0.0;    ///< samples of all iterations: the work the point does (throughput x makespan)
};

/** The row of a point from its report (read with report_document_from_json). */
SweepRow sweep_row(const SweepPoint& point, const ReportDocument& report);

/** How a sweep picks its best point: the smallest makespan when every simulated point does the same work, else the
 * highest throughput (a sweep over the global batch: a smaller batch is not "faster" for finishing sooner). */
enum class SweepRanking { Makespan, Throughput };

SweepRanking sweep_ranking(const std::vector<SweepRow>& rows);

/** Index in `rows` of the best simulated point by sweep_ranking (the first one on ties), or rows.size() when no point
 * was simulated (all out of memory). */
std::size_t best_row(const std::vector<SweepRow>& rows);

void write_sweep_csv(std::ostream& out, const std::vector<SweepAxis>& axes, const std::vector<SweepRow>& rows);
std::string format_sweep_table(const std::vector<SweepAxis>& axes, const std::vector<SweepRow>& rows);

} // namespace partsim
