// TimelineView: a Gantt view of ranks over simulated time (the data of trace.json), with zoom and pan.
#pragma once

#include "trace.hpp"

#include <QWidget>

#include <memory>
#include <optional>

class QLabel;
class QScrollArea;

namespace partsim::gui {

/** The painted canvas: one row per track, intervals coloured by kind. Wheel zooms about the cursor, dragging
 * pans, double-click shows everything;
 * keys: + and - zoom, arrows pan, Home shows everything. Paints at most a few rectangles per pixel column, however many
 * intervals. */
class TimelineCanvas : public QWidget {
  Q_OBJECT
 public:
  static constexpr int kLabelWidth = 130;
  static constexpr int kHeaderHeight = 26;
  static constexpr int kRowHeight = 20;

  explicit TimelineCanvas(QWidget* parent = nullptr);
  void set_trace(std::shared_ptr<const Trace> trace);
  const Trace* trace() const { return trace_.get(); }
  /** Marks an injected failure: a red line at its time, its failed ranks' names in red (none: no mark). */
  void set_failure(std::optional<FailureMark> mark);
  const std::optional<FailureMark>& failure() const { return failure_; }

  double view_begin() const { return begin_; }
  double view_end() const { return end_; }
  /** Shows [begin, end] of simulated time (clamped to the trace). */
  void set_view(double begin, double end);
  /** Zooms by `factor` (> 1: in) around the time at pixel x (-1: the centre). */
  void zoom(double factor, int x = -1);
  /** Pans by a fraction of the visible span (negative: earlier). */
  void pan(double fraction);
  void reset_view();
  /** Rectangles painted by the last paint (for tests of the per-pixel culling). */
  int last_painted_rectangles() const { return painted_; }
  /** Failure lines painted by the last paint (0 or 1). */
  int last_painted_marks() const { return painted_marks_; }
  /** Instant events (a replayed run's failures) painted by the last paint, at most one per pixel column and row. */
  int last_painted_instants() const { return painted_instants_; }

 signals:
  void view_changed(double begin, double end);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;

 private:
  double time_at(double x) const;
  double x_at(double t) const;
  std::shared_ptr<const Trace> trace_;
  double begin_ = 0;
  double end_ = 1;
  int drag_x_ = -1;
  double drag_begin_ = 0;
  int painted_ = 0;
  std::optional<FailureMark> failure_;
  int painted_marks_ = 0;
  int painted_instants_ = 0;
};

/** The timeline tab: zoom buttons, a legend, and the canvas in a vertical scroll area. The same view shows a
 * replayed run (reliability_trace.json: training, checkpoints, recoveries, failures as red marks) over days. */
class TimelineView : public QWidget {
  Q_OBJECT
 public:
  explicit TimelineView(QWidget* parent = nullptr);
  /** Shows a trace, or a message saying why there is none. */
  void set_trace(std::shared_ptr<const Trace> trace, const QString& why_none = {});
  /** Marks the run's injected failure on the canvas and says it in the caption (none: no mark). */
  void set_failure(std::optional<FailureMark> mark);
  /** A sentence added to the caption (empty: none). */
  void set_note(const QString& note);
  TimelineCanvas* canvas() const { return canvas_; }

 private:
  void update_caption();
  TimelineCanvas* canvas_ = nullptr;
  QScrollArea* scroll_ = nullptr;
  QLabel* caption_ = nullptr;
  QLabel* legend_ = nullptr;
  QString why_none_;
  QString note_;
};

} // namespace partsim::gui
