// SweepResult: the rows of a `partsim sweep` sweep.csv, for the speedup chart.
#pragma once

#include <QByteArray>
#include <QString>

#include <optional>
#include <vector>

namespace partsim::gui {

struct SweepPointRow {
  QString label; ///< the varied value as typed (e.g. the node count)
  int gpus = 0;
  double makespan = 0;
  double single_gpu_time = 0;
  double speedup = 0;
  double efficiency = 0;
  double karp_flatt = 0;
  double parallel_fraction = 0;
  double amdahl_bound = 0;
  double communication_overhead = 0;
  double imbalance = 0;
};

struct SweepResult {
  QString axis;                    ///< the varied JSON pointer
  std::vector<SweepPointRow> rows; ///< sorted by GPU count
};

/** Parses sweep.csv (one varied axis). @returns nullopt with `error` set on a malformed file. */
std::optional<SweepResult> parse_sweep_csv(const QByteArray& text, QString* error = nullptr);

} // namespace partsim::gui
