// TimelineView.
#include "charts/timeline_view.hpp"

#include "charts/imbalance_chart.hpp"
#include "run_report.hpp"

#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPolygon>
#include <QPushButton>
#include <QScrollArea>
#include <QVBoxLayout>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace partsim::gui {

TimelineCanvas::TimelineCanvas(QWidget* parent) : QWidget(parent) {
  setMouseTracking(false);
  setFocusPolicy(Qt::WheelFocus);
  setMinimumHeight(kHeaderHeight + kRowHeight);
  setToolTip(tr("Wheel or +/-: zoom about the cursor. Drag or arrows: pan. Double-click or Home: show all."));
}

void TimelineCanvas::set_trace(std::shared_ptr<const Trace> trace) {
  trace_ = std::move(trace);
  const int rows = trace_ ? static_cast<int>(trace_->tracks.size()) : 0;
  setMinimumHeight(kHeaderHeight + std::max(1, rows) * kRowHeight + 4);
  reset_view();
}

void TimelineCanvas::set_failure(std::optional<FailureMark> mark) {
  failure_ = std::move(mark);
  update();
}

void TimelineCanvas::reset_view() {
  set_view(0, trace_ && trace_->end > 0 ? trace_->end : 1);
}

void TimelineCanvas::set_view(double begin, double end) {
  const double total = trace_ && trace_->end > 0 ? trace_->end : 1;
  double span = std::clamp(end - begin, total * 1e-9, total);
  begin = std::clamp(begin, 0.0, total - span);
  begin_ = begin;
  end_ = begin + span;
  update();
  emit view_changed(begin_, end_);
}

void TimelineCanvas::zoom(double factor, int x) {
  const double anchor = x < 0 ? (begin_ + end_) / 2 : time_at(x);
  const double span = (end_ - begin_) / factor;
  const double share = (anchor - begin_) / (end_ - begin_);
  set_view(anchor - share * span, anchor - share * span + span);
}

void TimelineCanvas::pan(double fraction) {
  const double shift = (end_ - begin_) * fraction;
  set_view(begin_ + shift, end_ + shift);
}

double TimelineCanvas::time_at(double x) const {
  const double w = std::max(1, width() - kLabelWidth);
  return begin_ + (x - kLabelWidth) / w * (end_ - begin_);
}

double TimelineCanvas::x_at(double t) const {
  const double w = std::max(1, width() - kLabelWidth);
  return kLabelWidth + (t - begin_) / (end_ - begin_) * w;
}

void TimelineCanvas::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  painted_ = 0;
  painted_marks_ = 0;
  painted_instants_ = 0;
  if (!trace_ || trace_->tracks.empty()) {
    p.drawText(rect(), Qt::AlignCenter, tr("No timeline: run a scenario"));
    return;
  }
  const int plot_w = std::max(1, width() - kLabelWidth);
  // Time axis: about one tick per 100 px at a 1-2-5 step.
  const double span = end_ - begin_;
  // In the unit the labels use (format_duration): seconds, hours from 2 h, days from 2 days.
  const double unit = span >= 2 * 86400.0 ? 86400.0 : span >= 2 * 3600.0 ? 3600.0 : 1.0;
  const double raw = span / unit / std::max(1.0, plot_w / 100.0);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double step = unit * (raw / magnitude < 2   ? 2 * magnitude
                              : raw / magnitude < 5 ? 5 * magnitude
                                                    : 10 * magnitude);
  p.setPen(palette().text().color());
  for (double t = std::ceil(begin_ / step) * step; t <= end_; t += step) {
    const int x = static_cast<int>(x_at(t));
    p.drawLine(x, kHeaderHeight - 6, x, kHeaderHeight);
    p.drawText(QRect(x - 50, 2, 100, kHeaderHeight - 8), Qt::AlignCenter,
               unit == 86400.0  ? QStringLiteral("%1 days").arg(t / unit, 0, 'g', 4)
               : unit == 3600.0 ? QStringLiteral("%1 h").arg(t / unit, 0, 'g', 4)
                                : format_seconds(t));
  }
  p.drawLine(kLabelWidth, kHeaderHeight, width(), kHeaderHeight);

  std::vector<QColor> colors;
  for (const QString& kind : trace_->kinds) colors.push_back(kind_color(kind));
  const QRect visible = visibleRegion().boundingRect();
  const double px_time = span / plot_w; // seconds per pixel
  for (std::size_t row = 0; row < trace_->tracks.size(); ++row) {
    const int y = kHeaderHeight + 2 + static_cast<int>(row) * kRowHeight;
    if (y + kRowHeight < visible.top() || y > visible.bottom()) continue;
    const TraceTrack& track = trace_->tracks[row];
    const bool failed = failure_ && std::find(failure_->failed_ranks.begin(), failure_->failed_ranks.end(),
                                              static_cast<int>(row)) != failure_->failed_ranks.end();
    p.setPen(failed ? QColor(Qt::red) : palette().text().color());
    p.drawText(QRect(4, y, kLabelWidth - 8, kRowHeight), Qt::AlignVCenter | Qt::AlignLeft, track.name);
    const auto& iv = track.intervals;
    // First interval ending after the view's start (intervals are sorted and do not overlap).
    auto it =
        std::lower_bound(iv.begin(), iv.end(), begin_, [](const TraceInterval& i, double t) { return i.end < t; });
    while (it != iv.end() && it->begin <= end_) {
      const double x0 = std::max(x_at(it->begin), static_cast<double>(kLabelWidth));
      const double x1 = std::min(x_at(it->end), static_cast<double>(width()));
      const double w = std::max(1.0, x1 - x0);
      p.fillRect(QRectF(x0, y + 1, w, kRowHeight - 3), colors[std::min<std::size_t>(it->kind, colors.size() - 1)]);
      ++painted_;
      // Skip the intervals that would land in the pixel column just painted.
      const double next_t = begin_ + (std::floor(x0 + w) - kLabelWidth + 1) * px_time;
      auto next = it + 1;
      if (next != iv.end() && next->end < next_t)
        next = std::lower_bound(next, iv.end(), next_t, [](const TraceInterval& i, double t) { return i.end < t; });
      it = next;
    }
    // Instant events (a replayed run's failures): a red tick across the row under a triangle, one per pixel column.
    const auto& instants = track.instants;
    int last_x = -1;
    for (auto m = std::lower_bound(instants.begin(), instants.end(), begin_); m != instants.end() && *m <= end_; ++m) {
      const int x = static_cast<int>(x_at(*m));
      if (x == last_x) continue;
      last_x = x;
      p.setPen(QPen(QColor(Qt::red), 2));
      p.drawLine(x, y + 1, x, y + kRowHeight - 2);
      p.setBrush(QColor(Qt::red));
      p.drawPolygon(QPolygon({QPoint(x - 4, y + 1), QPoint(x + 4, y + 1), QPoint(x, y + 7)}));
      p.setBrush(Qt::NoBrush);
      ++painted_instants_;
    }
  }
  // The injected failure: a red line over every row at its time, and what failed in the header.
  if (failure_ && failure_->at >= begin_ && failure_->at <= end_) {
    const int x = static_cast<int>(x_at(failure_->at));
    p.setPen(QPen(Qt::red, 2));
    p.drawLine(x, kHeaderHeight, x, height());
    p.drawText(QRect(x + 3, kHeaderHeight + 1, width() - x - 3, kRowHeight), Qt::AlignLeft | Qt::AlignTop,
               tr("%1 fails").arg(failure_->what));
    ++painted_marks_;
  }
}

void TimelineCanvas::wheelEvent(QWheelEvent* event) {
  const double steps = event->angleDelta().y() / 120.0;
  if (steps == 0) return;
  zoom(std::pow(1.25, steps), static_cast<int>(event->position().x()));
  event->accept();
}

void TimelineCanvas::keyPressEvent(QKeyEvent* event) {
  switch (event->key()) {
  case Qt::Key_Plus:
  case Qt::Key_Equal:
    zoom(2);
    break;
  case Qt::Key_Minus:
    zoom(0.5);
    break;
  case Qt::Key_Left:
    pan(-0.1);
    break;
  case Qt::Key_Right:
    pan(0.1);
    break;
  case Qt::Key_Home:
    reset_view();
    break;
  default:
    QWidget::keyPressEvent(event);
    return;
  }
  event->accept();
}

void TimelineCanvas::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return;
  drag_x_ = static_cast<int>(event->position().x());
  drag_begin_ = begin_;
  setCursor(Qt::ClosedHandCursor);
}

void TimelineCanvas::mouseMoveEvent(QMouseEvent* event) {
  if (drag_x_ < 0) return;
  const double per_px = (end_ - begin_) / std::max(1, width() - kLabelWidth);
  const double span = end_ - begin_;
  const double b = drag_begin_ - (event->position().x() - drag_x_) * per_px;
  set_view(b, b + span);
}

void TimelineCanvas::mouseReleaseEvent(QMouseEvent*) {
  drag_x_ = -1;
  unsetCursor();
}

void TimelineCanvas::mouseDoubleClickEvent(QMouseEvent*) {
  reset_view();
}

TimelineView::TimelineView(QWidget* parent) : QWidget(parent) {
  canvas_ = new TimelineCanvas;
  scroll_ = new QScrollArea(this);
  scroll_->setWidget(canvas_);
  scroll_->setWidgetResizable(true);
  caption_ = new QLabel(this);
  legend_ = new QLabel(this);
  auto* zoom_in = new QPushButton(tr("Zoom in"), this);
  auto* zoom_out = new QPushButton(tr("Zoom out"), this);
  auto* left = new QPushButton(QStringLiteral("◀"), this);
  auto* right = new QPushButton(QStringLiteral("▶"), this);
  auto* all = new QPushButton(tr("Show all"), this);
  connect(zoom_in, &QPushButton::clicked, canvas_, [this] { canvas_->zoom(2); });
  connect(zoom_out, &QPushButton::clicked, canvas_, [this] { canvas_->zoom(0.5); });
  connect(left, &QPushButton::clicked, canvas_, [this] { canvas_->pan(-0.25); });
  connect(right, &QPushButton::clicked, canvas_, [this] { canvas_->pan(0.25); });
  connect(all, &QPushButton::clicked, canvas_, &TimelineCanvas::reset_view);
  connect(canvas_, &TimelineCanvas::view_changed, this, &TimelineView::update_caption);
  auto* bar = new QHBoxLayout;
  for (QWidget* w : std::initializer_list<QWidget*>{zoom_in, zoom_out, left, right, all}) bar->addWidget(w);
  bar->addWidget(legend_);
  bar->addStretch(1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(bar);
  layout->addWidget(caption_);
  layout->addWidget(scroll_, 1);
  set_trace(nullptr);
}

void TimelineView::set_trace(std::shared_ptr<const Trace> trace, const QString& why_none) {
  why_none_ = why_none;
  QString legend;
  if (trace)
    for (const QString& kind : trace->kinds)
      legend += QStringLiteral("<span style='color:%1'>&#9632;</span> %2 &nbsp;").arg(kind_color(kind).name(), kind);
  legend_->setText(legend);
  canvas_->set_trace(std::move(trace));
  update_caption();
}

void TimelineView::set_failure(std::optional<FailureMark> mark) {
  canvas_->set_failure(std::move(mark));
  update_caption();
}

void TimelineView::set_note(const QString& note) {
  note_ = note;
  update_caption();
}

void TimelineView::update_caption() {
  const Trace* t = canvas_->trace();
  if (t == nullptr) {
    caption_->setText(why_none_);
    return;
  }
  QString text =
      tr("%1 to %2 of %3; %4 intervals on %5 tracks")
          .arg(format_duration(canvas_->view_begin()), format_duration(canvas_->view_end()), format_duration(t->end))
          .arg(t->interval_count())
          .arg(t->tracks.size());
  if (const std::size_t instants = t->instant_count(); instants > 0)
    text += tr("; %1 instants (red marks)").arg(instants);
  if (const auto& f = canvas_->failure())
    text += tr("; injected: %1 fails at %2 (red line; the clean iteration is shown), the job stops at %3")
                .arg(f->what, format_seconds(f->at), format_seconds(f->stopped));
  if (!note_.isEmpty()) text += QStringLiteral("; ") + note_;
  caption_->setText(text);
}

} // namespace partsim::gui
