// RunReport: a value snapshot of one report.json for the views, filled from the core's typed ReportDocument
// (read strictly: a report that is not partsim's is an error, not a half-empty view).
#pragma once

#include "partsim/serving/serving_report.hpp"
#include "trace.hpp"

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace partsim::gui {

/** One rank's row of report.json `ranks`. */
struct RankRow {
  int rank = 0;
  int node = 0;
  int local_gpu = 0;
  double samples = 0;
  double compute = 0;
  double communication = 0;
  double wait = 0;
  double tail_idle = 0;
  double data_loading = 0; ///< idle while the host hands over input data (0 when the report has none)
  double finish = 0;
  /** Communication on a separate stream hidden behind compute; `communication` is the exposed part, on the rank's
   * critical path. */
  std::optional<double> overlapped;

  double busy() const { return compute + communication; }
  double idle() const { return wait + data_loading + tail_idle; }
};

/** A headline figure of `summary` (ReportSummary::figures()), in the order report.json gives them. */
struct Figure {
  std::string key;
  double value = 0;
};

/** Share of all GPU time (gpus x makespan) by kind, for the communication-overhead chart. */
struct TimeShare {
  QString kind;
  double share = 0; ///< 0..1
};

/** One layer of report.json `expert_routing`: the busiest and mean load of the expert group, over the uniform share. */
struct ExpertLayerRow {
  int layer = 0;
  double max_load = 0.0;
  double mean_load = 0.0;
  double dropped = 0.0;
};

/** One row of report.json `collectives`: a collective's size, algorithm and measured times. */
struct CollectiveRow {
  QString operation;
  QString algorithm;
  QString kind;
  int ranks = 0;
  double bytes = 0;
  double count = 0;
  double mean_time = 0;
  double min_time = 0;
  double max_time = 0;
  std::optional<double> bus_bandwidth; ///< bytes/s
};

/** Index in `serving.stages` of the bottleneck stage (report.json `serving/bottleneck`), or -1. */
int bottleneck_index(const ReportServing& serving);

struct RunReport {
  QByteArray json_text; ///< the report exactly as partsim printed it (for export)
  QString scenario_name;
  QString strategy;
  QString verdict;             ///< "simulated", "out_of_memory" (then there is no summary), or empty
  std::vector<Figure> figures; ///< every numeric field of `summary`, then of `memory_per_gpu` ("memory_per_gpu/...")
  std::vector<CollectiveRow> collectives;
  std::vector<ExpertLayerRow> expert_layers; ///< a mixture of experts with expert parallelism; empty otherwise
  std::vector<RankRow> ranks;
  QStringList warnings;                   ///< memory over the GPU's capacity, starved partitions
  std::optional<double> coordinator_busy; ///< s the coordinator spent (serial part, coordination, set-up)
  std::optional<ReportServing> serving;   ///< report.json `serving` (a serving workload's run); absent otherwise
  std::optional<FailureMark> failure;     ///< report.json `reliability/injected` when it fired

  bool empty() const { return ranks.empty(); }
  bool has_overlap() const;
  double overlapped_total() const; ///< GPU-seconds of communication hidden behind compute
  std::optional<double> figure(const std::string& key) const;
  double makespan() const { return figure("makespan_s").value_or(0.0); }
  /** Index in `ranks` of the rank that finishes last (the slowest), or -1. */
  int slowest_rank() const;
  /** Shares of GPU time: compute, communication (the exposed part when the report has overlapped
   * communication), wait, idle. Overlapped communication is hidden behind compute, so it is not a share. */
  std::vector<TimeShare> time_shares() const;
};

/** Parses report.json text. @returns nullopt with `error` set when it is not a partsim report. */
std::optional<RunReport> parse_report(const QByteArray& text, QString* error = nullptr);

/** A readable label and formatted value for a summary key ("makespan_s" -> "Makespan", "39.42 s"). */
QString figure_label(const std::string& key);
QString format_figure(const std::string& key, double value);
/** Formats a number of seconds with a fitting unit. */
QString format_seconds(double s);
/** The same, in hours from 2 h and in days from 2 days (a replayed run's time axis). */
QString format_duration(double s);

/** ranks.csv text as partsim writes it, from a snapshot. */
QByteArray ranks_csv(const RunReport& report);

} // namespace partsim::gui
