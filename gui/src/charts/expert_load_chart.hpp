// ExpertLoadChart: a mixture of experts' routing per layer: the busiest expert-parallel rank's load over the uniform
// share (the layer's slow-down of the experts' compute), from report.json's expert_routing.
#pragma once

#include "run_report.hpp"

#include <QWidget>

#include <optional>

class QBarSeries;
class QChart;
class QChartView;
class QLabel;

namespace partsim::gui {

class ExpertLoadChart : public QWidget {
  Q_OBJECT
 public:
  explicit ExpertLoadChart(QWidget* parent = nullptr);
  void set_report(const std::optional<RunReport>& report);

  QChartView* view() const { return view_; }
  /** Two sets, one bar per layer: the busiest rank's load, and the mean over the group's ranks; null without one. */
  QBarSeries* bars() const { return bars_; }
  QString caption() const;

 private:
  void rebuild();
  std::optional<RunReport> report_;
  QChart* chart_ = nullptr;
  QChartView* view_ = nullptr;
  QLabel* caption_ = nullptr;
  QBarSeries* bars_ = nullptr;
};

} // namespace partsim::gui
