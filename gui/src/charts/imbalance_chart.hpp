// ImbalanceChart: per-GPU stacked bars of compute / communication / wait / idle, the slowest rank marked.
#pragma once

#include "run_report.hpp"

#include <QWidget>

#include <optional>
#include <vector>

class QBarSet;
class QChart;
class QChartView;
class QComboBox;
class QLabel;
class QLineSeries;
class QStackedBarSeries;

namespace partsim::gui {

class ImbalanceChart : public QWidget {
  Q_OBJECT
 public:
  enum class Order { Rank, Busiest };
  /** At most this many bars: with more ranks, the busiest and the idlest half each (as the CLI's table does). */
  static constexpr int kMaxBars = 128;

  explicit ImbalanceChart(QWidget* parent = nullptr);
  void set_report(const std::optional<RunReport>& report);
  void set_pinned(const std::optional<RunReport>& report);
  void set_order(Order order);

  QChartView* view() const { return view_; }
  QStackedBarSeries* bars() const { return bars_; }
  /** The ranks shown, left to right (indices into the report's ranks). */
  const std::vector<int>& shown_ranks() const { return shown_; }
  /** The pinned run's busy time per shown bar, or null when nothing is pinned. */
  QLineSeries* pinned_series() const { return pinned_line_; }

 private:
  void rebuild();
  std::optional<RunReport> report_;
  std::optional<RunReport> pinned_;
  Order order_ = Order::Rank;
  QChart* chart_ = nullptr;
  QChartView* view_ = nullptr;
  QComboBox* order_box_ = nullptr;
  QLabel* caption_ = nullptr;
  QStackedBarSeries* bars_ = nullptr;
  QLineSeries* pinned_line_ = nullptr;
  std::vector<int> shown_;
};

/** The colours of the time kinds, shared by the charts and the timeline. */
QColor kind_color(const QString& kind);

} // namespace partsim::gui
