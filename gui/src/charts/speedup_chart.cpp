// SpeedupChart.
#include "charts/speedup_chart.hpp"

#include "charts/chart_common.hpp"
#include "models/sweep_model.hpp"

#include <QChart>
#include <QChartView>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLegend>
#include <QLineEdit>
#include <QLineSeries>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>

namespace partsim::gui {

SpeedupChart::SpeedupChart(QWidget* parent) : QWidget(parent) {
  view_ = new_chart_view(chart_, this);
  counts_ = new QLineEdit(QStringLiteral("1,2,4,8,16"), this);
  counts_->setToolTip(
      tr("Values of /cluster/nodes to simulate (each a child partsim run); GPUs = nodes x GPUs per node"));
  run_ = new QPushButton(tr("Run sweep"), this);
  cancel_ = new QPushButton(tr("Cancel"), this);
  cancel_->setEnabled(false);
  progress_ = new QProgressBar(this);
  progress_->setMaximumWidth(160);
  progress_->setVisible(false);
  status_ = new QLabel(this);
  status_->setWordWrap(true);
  connect(run_, &QPushButton::clicked, this, &SpeedupChart::sweep_requested);
  connect(counts_, &QLineEdit::returnPressed, this, &SpeedupChart::sweep_requested);
  connect(cancel_, &QPushButton::clicked, this, &SpeedupChart::cancel_requested);
  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("Nodes:"), this));
  bar->addWidget(counts_, 1);
  bar->addWidget(run_);
  bar->addWidget(cancel_);
  bar->addWidget(progress_);
  model_ = new SweepModel(this);
  table_ = new QTableView(this);
  table_->setModel(model_);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(view_);
  split->addWidget(table_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  split->setSizes({560, 170});
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(bar);
  layout->addWidget(status_);
  layout->addWidget(split, 1);
  rebuild();
}

QString SpeedupChart::node_counts() const {
  return counts_->text();
}

void SpeedupChart::set_node_counts(const QString& counts) {
  counts_->setText(counts);
}

void SpeedupChart::set_result(const std::optional<SweepResult>& result) {
  result_ = result;
  model_->set_result(result ? *result : SweepResult{});
  rebuild();
}

void SpeedupChart::set_pinned(const std::optional<SweepResult>& result) {
  pinned_ = result;
  rebuild();
}

void SpeedupChart::set_running(bool running, const QString& message) {
  run_->setEnabled(!running);
  cancel_->setEnabled(running);
  progress_->setVisible(running);
  if (running) progress_->setRange(0, 0);
  status_->setText(message);
}

void SpeedupChart::set_progress(int done, int total) {
  progress_->setRange(0, std::max(1, total));
  progress_->setValue(done);
}

void SpeedupChart::rebuild() {
  clear_chart(chart_);
  measured_ = ideal_ = amdahl_ = pinned_line_ = nullptr;
  if (!result_ || result_->rows.empty()) {
    chart_->setTitle(tr("Speedup: run a sweep over the node count"));
    return;
  }
  const auto& rows = result_->rows;
  double max_gpus = 1, max_speedup = 1;
  measured_ = new QLineSeries;
  measured_->setName(tr("measured speedup"));
  amdahl_ = new QLineSeries;
  amdahl_->setName(tr("Amdahl bound (measured parallel fraction)"));
  ideal_ = new QLineSeries;
  ideal_->setName(tr("ideal (linear)"));
  for (const SweepPointRow& r : rows) {
    measured_->append(r.gpus, r.speedup);
    amdahl_->append(r.gpus, r.amdahl_bound);
    max_gpus = std::max(max_gpus, static_cast<double>(r.gpus));
    max_speedup = std::max({max_speedup, r.speedup, r.amdahl_bound});
  }
  ideal_->append(1, 1);
  ideal_->append(max_gpus, max_gpus);
  QPen measured_pen(QColor(0x3b, 0x7d, 0xd8));
  measured_pen.setWidthF(2.5);
  measured_->setPen(measured_pen);
  measured_->setPointsVisible(true);
  QPen amdahl_pen(QColor(0xc8, 0x3e, 0x4d));
  amdahl_pen.setStyle(Qt::DashLine);
  amdahl_pen.setWidthF(2);
  amdahl_->setPen(amdahl_pen);
  QPen ideal_pen(QColor(120, 120, 120));
  ideal_pen.setStyle(Qt::DotLine);
  ideal_pen.setWidthF(1.5);
  ideal_->setPen(ideal_pen);
  std::vector<QLineSeries*> all{measured_, amdahl_, ideal_};
  if (pinned_ && !pinned_->rows.empty()) {
    pinned_line_ = new QLineSeries;
    pinned_line_->setName(tr("pinned: measured speedup"));
    for (const SweepPointRow& r : pinned_->rows) {
      pinned_line_->append(r.gpus, r.speedup);
      max_gpus = std::max(max_gpus, static_cast<double>(r.gpus));
      max_speedup = std::max(max_speedup, r.speedup);
    }
    QPen pinned_pen(QColor(30, 30, 30));
    pinned_pen.setWidthF(2);
    pinned_line_->setPen(pinned_pen);
    pinned_line_->setPointsVisible(true);
    all.push_back(pinned_line_);
  }
  auto* x = new QValueAxis;
  x->setTitleText(tr("GPUs"));
  x->setRange(0, max_gpus * 1.05);
  x->setLabelFormat(QStringLiteral("%d"));
  auto* y = new QValueAxis;
  y->setTitleText(tr("speedup over one GPU"));
  y->setRange(0, std::min(max_gpus, max_speedup * 1.15) + 0.1);
  y->applyNiceNumbers();
  y->setLabelFormat(QStringLiteral("%.3g"));
  chart_->addAxis(x, Qt::AlignBottom);
  chart_->addAxis(y, Qt::AlignLeft);
  for (QLineSeries* s : all) {
    chart_->addSeries(s);
    s->attachAxis(x);
    s->attachAxis(y);
  }
  const SweepPointRow& last = rows.back();
  chart_->setTitle(last.gpus > 1 ? tr("Speedup: %1x on %2 GPUs; Karp-Flatt serial fraction e = %3")
                                       .arg(last.speedup, 0, 'f', 3)
                                       .arg(last.gpus)
                                       .arg(last.karp_flatt, 0, 'f', 4)
                                 : tr("Speedup"));
}

} // namespace partsim::gui
