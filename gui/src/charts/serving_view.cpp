// ServingView.
#include "charts/serving_view.hpp"

#include "charts/chart_common.hpp"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QCursor>
#include <QFont>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QPen>
#include <QToolTip>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace partsim::gui {

namespace {
/** The percentiles drawn, lightest (median) to darkest (the tail). */
struct Percentile {
  const char* name;
  double LatencySummary::*field;
  QRgb color;
};
constexpr Percentile kPercentiles[] = {{"p50", &LatencySummary::p50, 0x9ecae1},
                                       {"p90", &LatencySummary::p90, 0x4292c6},
                                       {"p95", &LatencySummary::p95, 0xfd8d3c},
                                       {"p99", &LatencySummary::p99, 0xd62728}};

/** A colour per stage, in pipeline order (matplotlib's tab10). */
QColor stage_color(std::size_t stage) {
  constexpr QRgb kTab10[] = {0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd,
                             0x8c564b, 0xe377c2, 0x7f7f7f, 0xbcbd22, 0x17becf};
  return QColor(kTab10[stage % std::size(kTab10)]);
}

/** Milliseconds unless the largest value is 10 s or more. */
double unit_scale(const std::vector<const LatencySummary*>& samples) {
  double top = 0;
  for (const LatencySummary* l : samples) top = std::max(top, l->p99);
  return top < 10.0 ? 1e3 : 1.0;
}

QString unit_name(double scale) {
  return scale == 1.0 ? QStringLiteral("s") : QStringLiteral("ms");
}

/** Four bar sets (p50..p99), one bar per sample, in `scale` units, on a category axis and a value axis from 0. */
QBarSeries* percentile_bars(QChart* chart, const QStringList& categories,
                            const std::vector<const LatencySummary*>& samples, double scale, const QString& y_title) {
  auto* series = new QBarSeries;
  double top = 0;
  for (const Percentile& p : kPercentiles) {
    auto* set = new QBarSet(QString::fromLatin1(p.name));
    for (const LatencySummary* l : samples) {
      *set << l->*p.field * scale;
      top = std::max(top, l->*p.field * scale);
    }
    set->setColor(QColor(p.color));
    set->setBorderColor(QColor(p.color).darker(130));
    series->append(set);
  }
  QObject::connect(series, &QBarSeries::hovered, series, [categories, scale](bool on, int index, QBarSet* set) {
    if (!on || index < 0 || index >= categories.size()) {
      QToolTip::hideText();
      return;
    }
    QToolTip::showText(
        QCursor::pos(),
        QStringLiteral("%1 %2: %3").arg(categories[index], set->label(), format_seconds(set->at(index) / scale)));
  });
  chart->addSeries(series);
  auto* x = new QBarCategoryAxis;
  x->append(categories);
  QFont small = x->labelsFont();
  small.setPointSizeF(small.pointSizeF() * 0.9); // stage names side by side
  x->setLabelsFont(small);
  auto* y = new QValueAxis;
  y->setRange(0, top > 0 ? top * 1.05 : 1.0);
  y->applyNiceNumbers();
  y->setLabelFormat(QStringLiteral("%.4g"));
  y->setTitleText(y_title);
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  series->attachAxis(x);
  series->attachAxis(y);
  return series;
}

/** A round tick interval (1, 2 or 5 x 10^k) giving about five ticks over [0, span]. */
double nice_interval(double span) {
  const double raw = span / 5.0;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / magnitude;
  return magnitude * (norm < 1.5 ? 1.0 : norm < 3.0 ? 2.0 : norm < 7.0 ? 5.0 : 10.0);
}

QString percent(double share) {
  return QStringLiteral("%1%").arg(share * 100.0, 0, 'f', 1);
}
} // namespace

ServingView::ServingView(QWidget* parent) : QWidget(parent) {
  latency_view_ = new_chart_view(latency_chart_, this);
  llm_view_ = new_chart_view(llm_chart_, this);
  cdf_view_ = new_chart_view(cdf_chart_, this);
  over_time_view_ = new_chart_view(over_time_chart_, this);
  caption_ = new QLabel(this);
  caption_->setWordWrap(true);
  auto* top = new QHBoxLayout;
  top->addWidget(latency_view_, 3);
  top->addWidget(cdf_view_, 3);
  top->addWidget(llm_view_, 2);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(caption_);
  layout->addLayout(top, 1);
  layout->addWidget(over_time_view_, 1);
  rebuild();
}

void ServingView::set_report(const std::optional<RunReport>& report) {
  report_ = report;
  rebuild();
}

QString ServingView::caption() const {
  return caption_->text();
}

QString ServingView::over_time_title() const {
  return over_time_chart_->title();
}

void ServingView::rebuild() {
  for (QChart* chart : {latency_chart_, llm_chart_, cdf_chart_, over_time_chart_}) clear_chart(chart);
  cdf_series_.clear();
  target_line_ = nullptr;
  latency_bars_ = nullptr;
  llm_bars_ = nullptr;
  queue_series_.clear();
  utilisation_series_.clear();
  if (!report_ || !report_->serving) {
    latency_chart_->setTitle(tr("Serving: a serving workload's run shows its latency here"));
    cdf_chart_->setTitle(QString());
    over_time_chart_->setTitle(tr("Serving: a serving workload's run shows its queues over time here"));
    llm_view_->setVisible(false);
    caption_->clear();
    return;
  }
  const ReportServing& s = *report_->serving;
  build_latency(s);
  build_llm(s);
  build_cdf(s);
  build_over_time(s);

  QString text = tr("%1: %2 requests sent, %3 answered, %4 dropped (%5 of those measured). Throughput %6 items/s "
                    "over a %7 window; end to end p50 %8, p99 %9.")
                     .arg(QString::fromStdString(s.arrivals))
                     .arg(s.sent)
                     .arg(s.answered)
                     .arg(s.dropped)
                     .arg(percent(s.drop_rate))
                     .arg(s.throughput, 0, 'f', 1)
                     .arg(format_seconds(s.window), format_seconds(s.latency.p50), format_seconds(s.latency.p99));
  if (s.within_target)
    text += tr(" %1 within the %2 latency target (%3 items/s).")
                .arg(percent(*s.within_target), format_seconds(s.latency_target.value_or(0.0)))
                .arg(s.within_target_per_s.value_or(0.0), 0, 'f', 1);
  if (const int b = bottleneck_index(s); b >= 0) {
    const ReportServingStage& st = s.stages[static_cast<std::size_t>(b)];
    text += tr(" Bottleneck: %1, %2 busy over %3 replicas, a mean queue of %4 (it sustains %5 items/s).")
                .arg(QString::fromStdString(st.name), percent(st.utilisation))
                .arg(st.replicas)
                .arg(st.mean_queue, 0, 'g', 3)
                .arg(st.capacity, 0, 'f', 1);
  }
  for (const ReportServingStage& st : s.stages) {
    if (!st.llm) continue;
    const ReportServingLlm& l = *st.llm;
    text += tr(" LLM stage %1 (%2): TTFT p99 %3")
                .arg(QString::fromStdString(st.name), QString::fromStdString(l.model), format_seconds(l.ttft.p99));
    if (l.ttft_target) text += tr(" (target %1)").arg(format_seconds(*l.ttft_target));
    text += tr(", TPOT p99 %1").arg(format_seconds(l.tpot.p99));
    if (l.tpot_target) text += tr(" (target %1)").arg(format_seconds(*l.tpot_target));
    if (l.goodput)
      text += tr(", goodput %1 (%2 requests/s)").arg(percent(*l.goodput)).arg(l.goodput_per_s.value_or(0.0), 0, 'f', 1);
    text += tr(", KV cache peak %1, %2 preemptions.").arg(percent(l.kv_peak_occupancy)).arg(l.preemptions);
  }
  caption_->setText(text);
}

void ServingView::build_latency(const ReportServing& s) {
  QStringList categories;
  std::vector<const LatencySummary*> samples;
  for (const ReportServingStage& st : s.stages) {
    categories << QString::fromStdString(st.name);
    samples.push_back(&st.latency);
  }
  categories << tr("end to end");
  samples.push_back(&s.latency);
  latency_scale_ = unit_scale(samples);
  latency_bars_ = percentile_bars(latency_chart_, categories, samples, latency_scale_,
                                  tr("latency (%1)").arg(unit_name(latency_scale_)));
  latency_chart_->setTitle(tr("Latency per stage and end to end"));
}

void ServingView::build_llm(const ReportServing& s) {
  QStringList categories;
  std::vector<const LatencySummary*> samples;
  const bool several = std::count_if(s.stages.begin(), s.stages.end(),
                                     [](const ReportServingStage& st) { return st.llm.has_value(); }) > 1;
  for (const ReportServingStage& st : s.stages) {
    if (!st.llm) continue;
    const QString name = QString::fromStdString(st.name);
    categories << (several ? tr("TTFT %1").arg(name) : tr("TTFT")) << (several ? tr("TPOT %1").arg(name) : tr("TPOT"));
    samples.push_back(&st.llm->ttft);
    samples.push_back(&st.llm->tpot);
  }
  llm_view_->setVisible(!samples.empty());
  if (samples.empty()) return;
  llm_scale_ = unit_scale(samples);
  llm_bars_ = percentile_bars(llm_chart_, categories, samples, llm_scale_, tr("time (%1)").arg(unit_name(llm_scale_)));
  llm_chart_->setTitle(tr("TTFT and TPOT"));
  llm_chart_->legend()->hide(); // the latency chart's legend names the same colours
}

void ServingView::build_cdf(const ReportServing& s) {
  auto* x = new QValueAxis;
  auto* y = new QValueAxis;
  cdf_chart_->addAxis(x, Qt::AlignBottom);
  cdf_chart_->addAxis(y, Qt::AlignLeft);
  // The x axis runs to the largest p99 (the tails beyond it, up to each maximum, run off the chart) or the target.
  double right = s.latency_target.value_or(0.0);
  auto add = [&](const std::vector<double>& quantiles, const QString& name, const QPen& pen) {
    auto* line = new QLineSeries;
    line->setName(name);
    line->setPen(pen);
    for (std::size_t i = 0; i < quantiles.size(); ++i)
      line->append(quantiles[i] * latency_scale_, static_cast<double>(i));
    if (quantiles.size() == 101) right = std::max(right, quantiles[99]);
    cdf_chart_->addSeries(line);
    line->attachAxis(x);
    line->attachAxis(y);
    cdf_series_.push_back(line);
  };
  for (std::size_t i = 0; i < s.stages.size(); ++i)
    add(s.stages[i].latency_quantiles, QString::fromStdString(s.stages[i].name), QPen(stage_color(i), 1.5));
  add(s.latency_quantiles, tr("end to end"), QPen(QColor(0x202020), 3.0));
  if (s.latency_target) {
    target_line_ = new QLineSeries;
    target_line_->setName(
        s.within_target ? tr("target %1: %2 within").arg(format_seconds(*s.latency_target), percent(*s.within_target))
                        : tr("target %1").arg(format_seconds(*s.latency_target)));
    target_line_->setPen(QPen(QColor(0xd62728), 2.0, Qt::DashLine));
    target_line_->append(*s.latency_target * latency_scale_, 0.0);
    target_line_->append(*s.latency_target * latency_scale_, 100.0);
    cdf_chart_->addSeries(target_line_);
    target_line_->attachAxis(x);
    target_line_->attachAxis(y);
  }
  x->setRange(0, right > 0 ? right * 1.1 * latency_scale_ : 1.0);
  x->applyNiceNumbers();
  x->setTickCount(3); // a narrow chart: 0, the middle and the end
  x->setLabelFormat(QStringLiteral("%.4g"));
  x->setTitleText(tr("latency (%1)").arg(unit_name(latency_scale_)));
  y->setRange(0, 100);
  y->setLabelFormat(QStringLiteral("%.0f"));
  y->setTitleText(tr("% of requests within"));
  cdf_chart_->setTitle(tr("Latency CDF per stage and end to end"));
  // Names beside the chart: below it, a line of stage names and the target's would not fit.
  cdf_chart_->legend()->setAlignment(Qt::AlignRight);
  QFont small = cdf_chart_->legend()->font();
  small.setPointSizeF(small.pointSizeF() * 0.85);
  cdf_chart_->legend()->setFont(small);
}

void ServingView::build_over_time(const ReportServing& s) {
  auto* x = new QValueAxis;
  auto* queue_axis = new QValueAxis;
  auto* util_axis = new QValueAxis;
  over_time_chart_->addAxis(x, Qt::AlignBottom);
  over_time_chart_->addAxis(queue_axis, Qt::AlignLeft);
  over_time_chart_->addAxis(util_axis, Qt::AlignRight);
  const int bottleneck = bottleneck_index(s);
  double span = 0;
  double top_queue = 0;
  for (std::size_t i = 0; i < s.stages.size(); ++i) {
    const ReportServingStage& st = s.stages[i];
    const bool hot = static_cast<int>(i) == bottleneck;
    const QColor color = stage_color(i);
    auto* queue = new QLineSeries;
    const QString name = QString::fromStdString(st.name);
    queue->setName(name);
    auto* util = new QLineSeries;
    util->setName(tr("%1 utilisation").arg(name));
    // Each bin's mean at the bin's middle.
    for (std::size_t b = 0; b < st.over_time.queue_length.size(); ++b) {
      const double t = (static_cast<double>(b) + 0.5) * st.over_time.bin;
      queue->append(t, st.over_time.queue_length[b]);
      top_queue = std::max(top_queue, st.over_time.queue_length[b]);
    }
    for (std::size_t b = 0; b < st.over_time.utilisation.size(); ++b)
      util->append((static_cast<double>(b) + 0.5) * st.over_time.bin, st.over_time.utilisation[b] * 100.0);
    span = std::max(span, st.over_time.bin * static_cast<double>(std::max(st.over_time.queue_length.size(),
                                                                          st.over_time.utilisation.size())));
    QPen queue_pen(color, hot ? 3.0 : 2.0);
    queue->setPen(queue_pen);
    QPen util_pen(color, hot ? 2.5 : 1.5, Qt::DashLine);
    util->setPen(util_pen);
    over_time_chart_->addSeries(queue);
    over_time_chart_->addSeries(util);
    queue->attachAxis(x);
    queue->attachAxis(queue_axis);
    util->attachAxis(x);
    util->attachAxis(util_axis);
    queue_series_.push_back(queue);
    utilisation_series_.push_back(util);
    // One legend entry per stage, its colour: the axes' titles say which line is which.
    for (QLegendMarker* marker : over_time_chart_->legend()->markers(util)) marker->setVisible(false);
  }
  // The window exactly, round ticks from 0.
  if (span <= 0) span = 1.0;
  x->setRange(0, span);
  x->setTickType(QValueAxis::TicksDynamic);
  x->setTickAnchor(0.0);
  x->setTickInterval(nice_interval(span));
  x->setLabelFormat(QStringLiteral("%.4g"));
  x->setTitleText(tr("time since the warm-up's end (s), bins of %1")
                      .arg(format_seconds(s.stages.empty() ? 0.0 : s.stages.front().over_time.bin)));
  queue_axis->setRange(0, std::max(1.0, top_queue * 1.05));
  queue_axis->applyNiceNumbers();
  queue_axis->setLabelFormat(QStringLiteral("%.3g"));
  queue_axis->setTitleText(tr("queue length (solid)"));
  util_axis->setRange(0, 100);
  util_axis->setLabelFormat(QStringLiteral("%.0f"));
  util_axis->setTitleText(tr("utilisation, % (dashed)"));
  if (bottleneck >= 0) {
    const ReportServingStage& st = s.stages[static_cast<std::size_t>(bottleneck)];
    over_time_chart_->setTitle(tr("Queue length and utilisation over time: the bottleneck is %1 (%2 busy)")
                                   .arg(QString::fromStdString(st.name), percent(st.utilisation)));
  } else {
    over_time_chart_->setTitle(tr("Queue length and utilisation over time"));
  }
}

} // namespace partsim::gui
