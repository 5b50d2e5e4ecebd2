// RunReport: a value snapshot of one report.json, read tolerantly (a missing field is simply not shown).
#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace partsim::gui {

/** One rank's row of report.json `ranks`. The optional figures come from newer reports. */
struct RankRow {
  int rank = 0;
  int node = 0;
  int local_gpu = 0;
  double samples = 0;
  double compute = 0;
  double communication = 0;
  double wait = 0;
  double tail_idle = 0;
  double finish = 0;
  std::optional<double> exposed_communication; ///< communication not hidden behind compute
  std::optional<double> memory_peak;           ///< bytes per GPU
  bool out_of_memory = false;

  double busy() const { return compute + communication; }
  double idle() const { return wait + tail_idle; }
};

/** A headline figure of `summary`, in the order report.json gives them, with how to show it. */
struct Figure {
  std::string key;
  double value = 0;
};

/** Share of all GPU time (gpus x makespan) by kind, for the communication-overhead chart. */
struct TimeShare {
  QString kind;
  double share = 0; ///< 0..1
};

struct RunReport {
  QByteArray json_text; ///< the report exactly as partsim printed it (for export)
  QString scenario_name;
  QString strategy;
  std::vector<Figure> figures; ///< every numeric field of `summary`
  std::vector<RankRow> ranks;
  QStringList warnings;                   ///< report `warnings`, out-of-memory ranks, starved partitions
  std::optional<double> coordinator_busy; ///< s the coordinator spent (serial part, coordination, set-up)

  bool empty() const { return ranks.empty(); }
  std::optional<double> figure(const std::string& key) const;
  double makespan() const { return figure("makespan_s").value_or(0.0); }
  /** Index in `ranks` of the rank that finishes last (the slowest), or -1. */
  int slowest_rank() const;
  /** Shares of GPU time: compute, communication (exposed when the report splits it), wait, idle. */
  std::vector<TimeShare> time_shares() const;
};

/** Parses report.json text. @returns nullopt with `error` set when it is not a partsim report. */
std::optional<RunReport> parse_report(const QByteArray& text, QString* error = nullptr);

/** A readable label and formatted value for a summary key ("makespan_s" -> "Makespan", "39.42 s"). */
QString figure_label(const std::string& key);
QString format_figure(const std::string& key, double value);
/** Formats a number of seconds with a fitting unit. */
QString format_seconds(double s);

/** ranks.csv text as partsim writes it, from a snapshot. */
QByteArray ranks_csv(const RunReport& report);

} // namespace partsim::gui
