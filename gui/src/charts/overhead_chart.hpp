// OverheadChart: where the GPU time goes (compute, communication, wait, idle), current run against the pinned one.
#pragma once

#include "run_report.hpp"

#include <QWidget>

#include <optional>

class QChart;
class QChartView;
class QHorizontalPercentBarSeries;
class QLabel;

namespace partsim::gui {

class OverheadChart : public QWidget {
  Q_OBJECT
 public:
  explicit OverheadChart(QWidget* parent = nullptr);
  void set_report(const std::optional<RunReport>& report);
  void set_pinned(const std::optional<RunReport>& report);

  QChartView* view() const { return view_; }
  /** One bar set per kind; index 0 of each set is the current run, 1 the pinned one. */
  QHorizontalPercentBarSeries* bars() const { return bars_; }

 private:
  void rebuild();
  std::optional<RunReport> report_;
  std::optional<RunReport> pinned_;
  QChart* chart_ = nullptr;
  QChartView* view_ = nullptr;
  QLabel* caption_ = nullptr;
  QHorizontalPercentBarSeries* bars_ = nullptr;
};

} // namespace partsim::gui
