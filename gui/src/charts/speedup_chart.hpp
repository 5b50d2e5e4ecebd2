// SpeedupChart: a sweep over GPU counts drawn against the ideal line and Amdahl's bound, with Karp-Flatt.
#pragma once

#include "sweep_result.hpp"

#include <QWidget>

#include <optional>

class QChart;
class QChartView;
class QLabel;
class QLineEdit;
class QLineSeries;
class QProgressBar;
class QPushButton;
class QTableView;

namespace partsim::gui {

class SweepModel;

class SpeedupChart : public QWidget {
  Q_OBJECT
 public:
  explicit SpeedupChart(QWidget* parent = nullptr);
  void set_result(const std::optional<SweepResult>& result);
  void set_pinned(const std::optional<SweepResult>& result);
  /** Shows a sweep in progress (done of total points), or idle with a message. */
  void set_running(bool running, const QString& message = {});
  void set_progress(int done, int total);
  /** The node counts to sweep, as typed ("1,2,4,8"). */
  QString node_counts() const;
  void set_node_counts(const QString& counts);

  QChartView* view() const { return view_; }
  QLineSeries* measured() const { return measured_; }
  QLineSeries* ideal() const { return ideal_; }
  QLineSeries* amdahl() const { return amdahl_; }
  QLineSeries* pinned_series() const { return pinned_line_; }
  SweepModel* model() const { return model_; }

 signals:
  void sweep_requested();
  void cancel_requested();

 private:
  void rebuild();
  std::optional<SweepResult> result_;
  std::optional<SweepResult> pinned_;
  QChart* chart_ = nullptr;
  QChartView* view_ = nullptr;
  QLineEdit* counts_ = nullptr;
  QPushButton* run_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* status_ = nullptr;
  QTableView* table_ = nullptr;
  SweepModel* model_ = nullptr;
  QLineSeries* measured_ = nullptr;
  QLineSeries* ideal_ = nullptr;
  QLineSeries* amdahl_ = nullptr;
  QLineSeries* pinned_line_ = nullptr;
};

} // namespace partsim::gui
