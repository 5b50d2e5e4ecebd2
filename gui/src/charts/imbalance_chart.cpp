// ImbalanceChart.
#include "charts/imbalance_chart.hpp"

#include "charts/chart_common.hpp"
#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegend>
#include <QLineSeries>
#include <QStackedBarSeries>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <numeric>
#include <vector>

namespace partsim::gui {

QColor kind_color(const QString& kind) {
  if (kind == QLatin1String("compute")) return QColor(0x3b, 0x7d, 0xd8);
  if (kind.contains(QLatin1String("overlapped"))) return QColor(0xf2, 0xb7, 0x6b);
  if (kind.contains(QLatin1String("communication"))) return QColor(0xe8, 0x7d, 0x1e);
  if (kind == QLatin1String("wait")) return QColor(0xc8, 0x3e, 0x4d);
  if (kind == QLatin1String("idle")) return QColor(0xc9, 0xcc, 0xd1);
  if (kind == QLatin1String("coordination")) return QColor(0x6a, 0x4c, 0x93);
  if (kind == QLatin1String("data loading") || kind == QLatin1String("data_loading")) return QColor(0x2a, 0x9d, 0x8f);
  // A replayed run (reliability_trace.json): training, checkpoints (those a failure interrupted) and recoveries.
  if (kind == QLatin1String("checkpoint")) return QColor(0x3b, 0x7d, 0xd8);
  if (kind.startsWith(QLatin1String("checkpoint"))) return QColor(0x9a, 0xb8, 0xe6);
  if (kind == QLatin1String("recovery")) return QColor(0xe8, 0x7d, 0x1e);
  return QColor(0x4c, 0xa8, 0x6b);
}

ImbalanceChart::ImbalanceChart(QWidget* parent) : QWidget(parent) {
  view_ = new_chart_view(chart_, this);
  order_box_ = new QComboBox(this);
  order_box_->addItem(tr("Rank order"));
  order_box_->addItem(tr("Busiest first"));
  connect(order_box_, &QComboBox::currentIndexChanged, this,
          [this](int i) { set_order(i == 0 ? Order::Rank : Order::Busiest); });
  caption_ = new QLabel(this);
  caption_->setWordWrap(true);
  auto* top = new QHBoxLayout;
  top->addWidget(caption_, 1);
  top->addWidget(new QLabel(tr("Bars:"), this));
  top->addWidget(order_box_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(top);
  layout->addWidget(view_, 1);
  rebuild();
}

void ImbalanceChart::set_report(const std::optional<RunReport>& report) {
  report_ = report;
  rebuild();
}

void ImbalanceChart::set_pinned(const std::optional<RunReport>& report) {
  pinned_ = report;
  rebuild();
}

void ImbalanceChart::set_order(Order order) {
  order_ = order;
  {
    const QSignalBlocker block(order_box_);
    order_box_->setCurrentIndex(order == Order::Rank ? 0 : 1);
  }
  rebuild();
}

void ImbalanceChart::rebuild() {
  clear_chart(chart_);
  bars_ = nullptr;
  pinned_line_ = nullptr;
  shown_.clear();
  if (!report_ || report_->ranks.empty()) {
    chart_->setTitle(report_ && report_->verdict == QLatin1String("out_of_memory")
                         ? tr("Not simulated: out of memory (see the warnings and the memory figures)")
                         : tr("Load imbalance: run a scenario"));
    caption_->clear();
    return;
  }
  const std::vector<RankRow>& ranks = report_->ranks;
  std::vector<int> order(ranks.size());
  std::iota(order.begin(), order.end(), 0);
  auto busier = [&](int a, int b) {
    return ranks[static_cast<std::size_t>(a)].busy() > ranks[static_cast<std::size_t>(b)].busy();
  };
  if (static_cast<int>(order.size()) > kMaxBars) {
    std::stable_sort(order.begin(), order.end(), busier);
    std::vector<int> keep(order.begin(), order.begin() + kMaxBars / 2);
    keep.insert(keep.end(), order.end() - kMaxBars / 2, order.end());
    order = std::move(keep);
    if (order_ == Order::Rank) std::sort(order.begin(), order.end());
  } else if (order_ == Order::Busiest) {
    std::stable_sort(order.begin(), order.end(), busier);
  }
  shown_ = order;

  const int slowest = report_->slowest_rank();
  auto* compute = new QBarSet(tr("compute"));
  auto* comm = new QBarSet(report_->has_overlap() ? tr("exposed communication") : tr("communication"));
  auto* wait = new QBarSet(tr("wait"));
  // Shown only when the run has data loading (workload/data_loading): most runs have none.
  const bool loads = std::any_of(ranks.begin(), ranks.end(), [](const RankRow& r) { return r.data_loading > 0; });
  auto* loading = loads ? new QBarSet(tr("data loading")) : nullptr;
  auto* idle = new QBarSet(tr("idle"));
  QStringList categories;
  double max_busy = 0, sum_busy = 0;
  for (const RankRow& r : ranks) {
    max_busy = std::max(max_busy, r.busy());
    sum_busy += r.busy();
  }
  for (const int i : shown_) {
    const RankRow& r = ranks[static_cast<std::size_t>(i)];
    *compute << r.compute;
    *comm << r.communication;
    *wait << r.wait;
    if (loading != nullptr) *loading << r.data_loading;
    *idle << r.tail_idle;
    categories << (i == slowest ? QStringLiteral("▶%1").arg(r.rank) : QString::number(r.rank));
  }
  bars_ = new QStackedBarSeries;
  const auto slowest_bar = std::find(shown_.begin(), shown_.end(), slowest);
  std::vector<QBarSet*> sets{compute, comm, wait};
  if (loading != nullptr) sets.push_back(loading);
  sets.push_back(idle);
  for (QBarSet* set : sets) {
    set->setColor(kind_color(set->label()));
    set->setBorderColor(set->color().darker(120));
    // The slowest rank's bar is drawn darker: it sets the makespan.
    set->setSelectedColor(set->color().darker(150));
    if (slowest_bar != shown_.end()) set->selectBar(static_cast<int>(slowest_bar - shown_.begin()));
    bars_->append(set);
  }
  bars_->setBarWidth(0.85);
  chart_->addSeries(bars_);
  auto* x = new QBarCategoryAxis;
  x->append(categories);
  x->setTitleText(shown_.size() < ranks.size()
                      ? tr("rank (%1 busiest and %1 idlest of %2)").arg(kMaxBars / 2).arg(ranks.size())
                      : tr("rank (▶ the slowest)"));
  if (categories.size() > 40) x->setLabelsVisible(false);
  auto* y = new QValueAxis;
  y->setTitleText(tr("simulated time (s)"));
  y->setLabelFormat(QStringLiteral("%.3g"));
  chart_->addAxis(x, Qt::AlignBottom);
  chart_->addAxis(y, Qt::AlignLeft);
  bars_->attachAxis(x);
  bars_->attachAxis(y);

  double top = report_->makespan();
  // The mean busy time as a line: the bars' tops against it show max/mean.
  const double mean_busy = sum_busy / static_cast<double>(ranks.size());
  auto* mean = new QLineSeries;
  mean->setName(tr("mean busy"));
  mean->append(-0.5, mean_busy);
  mean->append(static_cast<double>(shown_.size()) - 0.5, mean_busy);
  QPen pen(QColor(40, 40, 40));
  pen.setStyle(Qt::DashLine);
  pen.setWidthF(1.5);
  mean->setPen(pen);
  chart_->addSeries(mean);
  mean->attachAxis(x);
  mean->attachAxis(y);
  if (pinned_ && !pinned_->ranks.empty()) {
    // The pinned run's busy time per rank, over the same bars (matched by rank number).
    pinned_line_ = new QLineSeries;
    pinned_line_->setName(tr("pinned: busy"));
    for (std::size_t k = 0; k < shown_.size(); ++k) {
      const int rank = ranks[static_cast<std::size_t>(shown_[k])].rank;
      for (const RankRow& p : pinned_->ranks)
        if (p.rank == rank) {
          pinned_line_->append(static_cast<double>(k), p.busy());
          top = std::max(top, p.busy());
        }
    }
    QPen pinned_pen(QColor(20, 20, 20));
    pinned_pen.setWidthF(2);
    pinned_line_->setPen(pinned_pen);
    pinned_line_->setPointsVisible(true);
    chart_->addSeries(pinned_line_);
    pinned_line_->attachAxis(x);
    pinned_line_->attachAxis(y);
  }
  y->setRange(0, top > 0 ? top * 1.05 : 1);
  y->applyNiceNumbers();

  const double ratio = mean_busy > 0 ? max_busy / mean_busy : 0;
  const RankRow& s = ranks[static_cast<std::size_t>(slowest)];
  chart_->setTitle(tr("Load imbalance: busy max/mean %1").arg(ratio, 0, 'f', 3));
  caption_->setText(tr("Slowest: rank %1 on node %2, finishes at %3 (makespan %4). Compute max/mean %5.")
                        .arg(s.rank)
                        .arg(s.node)
                        .arg(format_seconds(s.finish), format_seconds(report_->makespan()))
                        .arg(report_->figure("load_imbalance_max_over_mean").value_or(ratio), 0, 'f', 3) +
                    (report_->overlapped_total() > 0
                         ? tr(" Communication overlapped with compute (not in the bars): %1 GPU-s.")
                               .arg(report_->overlapped_total(), 0, 'g', 4)
                         : QString()));
}

} // namespace partsim::gui
