// OverheadChart: where the GPU time goes (compute, communication, wait, idle), current run against the pinned one,
// and the run's collectives.
#pragma once

#include "run_report.hpp"

#include <QWidget>

#include <optional>

class QChart;
class QChartView;
class QHorizontalPercentBarSeries;
class QLabel;
class QTableView;

namespace partsim::gui {

class CollectivesModel;

class OverheadChart : public QWidget {
  Q_OBJECT
 public:
  explicit OverheadChart(QWidget* parent = nullptr);
  void set_report(const std::optional<RunReport>& report);
  void set_pinned(const std::optional<RunReport>& report);

  QChartView* view() const { return view_; }
  /** One bar set per kind; index 0 of each set is the current run, 1 the pinned one. */
  QHorizontalPercentBarSeries* bars() const { return bars_; }
  /** The current run's collectives (empty when the report has none). */
  CollectivesModel* collectives() const { return collectives_; }

 private:
  void rebuild();
  std::optional<RunReport> report_;
  std::optional<RunReport> pinned_;
  QChart* chart_ = nullptr;
  QChartView* view_ = nullptr;
  QLabel* caption_ = nullptr;
  QHorizontalPercentBarSeries* bars_ = nullptr;
  CollectivesModel* collectives_ = nullptr;
  QTableView* collectives_view_ = nullptr;
};

} // namespace partsim::gui
