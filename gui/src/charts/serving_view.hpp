// ServingView: a serving workload's run (report.json `serving`): latency percentiles per stage and end to end, their
// CDFs with the latency target, an LLM
// stage's time to first token and per output token, and every stage's queue length and utilisation over the window,
// the bottleneck stage named.
#pragma once

#include "run_report.hpp"

#include <QWidget>

#include <optional>
#include <vector>

class QBarSeries;
class QChart;
class QChartView;
class QLabel;
class QLineSeries;

namespace partsim::gui {

class ServingView : public QWidget {
  Q_OBJECT
 public:
  explicit ServingView(QWidget* parent = nullptr);
  void set_report(const std::optional<RunReport>& report);

  QChartView* latency_view() const { return latency_view_; }
  QChartView* llm_view() const { return llm_view_; }
  QChartView* cdf_view() const { return cdf_view_; }
  /** The latency CDFs: one per stage in pipeline order, then end to end; x: latency in `latency_scale()` units, y: %
   * of the measured items (101 points: 0, 1, .., 100). */
  const std::vector<QLineSeries*>& cdf_series() const { return cdf_series_; }
  /** The end-to-end latency target, a vertical line at it from 0 to 100 %; null without one. */
  QLineSeries* target_line() const { return target_line_; }
  QChartView* over_time_view() const { return over_time_view_; }
  /** Four sets (p50, p90, p95, p99), one bar per stage in pipeline order then end to end, in `latency_scale()` units;
   * null without a serving section. */
  QBarSeries* latency_bars() const { return latency_bars_; }
  /** Four sets (p50, p90, p95, p99), a TTFT and a TPOT bar per LLM stage, in `llm_scale()` units; null without one. */
  QBarSeries* llm_bars() const { return llm_bars_; }
  /** Seconds to the latency charts' unit: 1e3 (ms) or 1 (s). */
  double latency_scale() const { return latency_scale_; }
  double llm_scale() const { return llm_scale_; }
  /** One per stage, in pipeline order: its queue length, and its utilisation in % (x: s since the warm-up's end). */
  const std::vector<QLineSeries*>& queue_series() const { return queue_series_; }
  const std::vector<QLineSeries*>& utilisation_series() const { return utilisation_series_; }
  QString over_time_title() const;
  QString caption() const;

 private:
  void rebuild();
  void build_latency(const ReportServing& s);
  void build_llm(const ReportServing& s);
  void build_cdf(const ReportServing& s);
  void build_over_time(const ReportServing& s);

  std::optional<RunReport> report_;
  QLabel* caption_ = nullptr;
  QChart* latency_chart_ = nullptr;
  QChartView* latency_view_ = nullptr;
  QChart* llm_chart_ = nullptr;
  QChartView* llm_view_ = nullptr;
  QChart* cdf_chart_ = nullptr;
  QChartView* cdf_view_ = nullptr;
  std::vector<QLineSeries*> cdf_series_;
  QLineSeries* target_line_ = nullptr;
  QChart* over_time_chart_ = nullptr;
  QChartView* over_time_view_ = nullptr;
  QBarSeries* latency_bars_ = nullptr;
  QBarSeries* llm_bars_ = nullptr;
  double latency_scale_ = 1e3;
  double llm_scale_ = 1e3;
  std::vector<QLineSeries*> queue_series_;
  std::vector<QLineSeries*> utilisation_series_;
};

} // namespace partsim::gui
