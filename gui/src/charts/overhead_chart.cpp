// OverheadChart.
#include "charts/overhead_chart.hpp"

#include "charts/chart_common.hpp"
#include "charts/imbalance_chart.hpp"
#include "models/collectives_model.hpp"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QHeaderView>
#include <QHorizontalPercentBarSeries>
#include <QLabel>
#include <QLegend>
#include <QTableView>
#include <QVBoxLayout>
#include <QValueAxis>

namespace partsim::gui {

OverheadChart::OverheadChart(QWidget* parent) : QWidget(parent) {
  view_ = new_chart_view(chart_, this);
  caption_ = new QLabel(this);
  caption_->setWordWrap(true);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(caption_);
  layout->addWidget(view_, 2);
  collectives_ = new CollectivesModel(this);
  collectives_view_ = new QTableView(this);
  collectives_view_->setModel(collectives_);
  collectives_view_->verticalHeader()->hide();
  collectives_view_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  layout->addWidget(collectives_view_, 1);
  rebuild();
}

void OverheadChart::set_report(const std::optional<RunReport>& report) {
  report_ = report;
  rebuild();
}

void OverheadChart::set_pinned(const std::optional<RunReport>& report) {
  pinned_ = report;
  rebuild();
}

void OverheadChart::rebuild() {
  clear_chart(chart_);
  bars_ = nullptr;
  collectives_->set_collectives(report_ ? report_->collectives : std::vector<CollectiveRow>{});
  collectives_view_->setVisible(collectives_->rowCount() > 0);
  if (!report_ || report_->empty()) {
    chart_->setTitle(tr("Communication overhead: run a scenario"));
    caption_->clear();
    return;
  }
  std::vector<const RunReport*> runs{&*report_};
  QStringList categories{tr("current")};
  if (pinned_ && !pinned_->empty()) {
    runs.push_back(&*pinned_);
    categories << tr("pinned");
  }
  // Kinds in the order of the current run, then any only the pinned run has.
  QStringList kinds;
  for (const RunReport* r : runs)
    for (const TimeShare& s : r->time_shares())
      if (!kinds.contains(s.kind)) kinds << s.kind;
  bars_ = new QHorizontalPercentBarSeries;
  for (const QString& kind : kinds) {
    auto* set = new QBarSet(kind);
    for (const RunReport* r : runs) {
      double share = 0;
      for (const TimeShare& s : r->time_shares())
        if (s.kind == kind) share = s.share;
      *set << share * 100.0;
    }
    set->setColor(kind_color(kind));
    set->setBorderColor(set->color().darker(120));
    bars_->append(set);
  }
  bars_->setLabelsVisible(true);
  bars_->setLabelsFormat(QStringLiteral("@value%"));
  bars_->setLabelsPrecision(3);
  chart_->addSeries(bars_);
  auto* y = new QBarCategoryAxis;
  y->append(categories);
  auto* x = new QValueAxis;
  x->setRange(0, 100);
  x->setTitleText(tr("share of GPU time (GPUs x makespan), %"));
  chart_->addAxis(y, Qt::AlignLeft);
  chart_->addAxis(x, Qt::AlignBottom);
  bars_->attachAxis(y);
  bars_->attachAxis(x);
  chart_->setTitle(tr("Where the GPU time goes"));
  QString text =
      tr("Communication overhead %1 of GPU time, idle %2.")
          .arg(format_figure("communication_overhead", report_->figure("communication_overhead").value_or(0)),
               format_figure("idle_share", report_->figure("idle_share").value_or(0)));
  if (report_->overlapped_total() > 0)
    text += tr(" %1 GPU-seconds of communication overlapped with compute (hidden, not a share).")
                .arg(report_->overlapped_total(), 0, 'g', 4);
  if (report_->coordinator_busy && *report_->coordinator_busy > 0)
    text += tr(" The coordinator was busy %1 (serial part, coordination, set-up).")
                .arg(format_seconds(*report_->coordinator_busy));
  caption_->setText(text);
}

} // namespace partsim::gui
