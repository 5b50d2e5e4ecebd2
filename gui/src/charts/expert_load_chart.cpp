// ExpertLoadChart.
#include "charts/expert_load_chart.hpp"

#include "charts/chart_common.hpp"
#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QLabel>
#include <QLegend>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>

namespace partsim::gui {

ExpertLoadChart::ExpertLoadChart(QWidget* parent) : QWidget(parent) {
  view_ = new_chart_view(chart_, this);
  caption_ = new QLabel(this);
  caption_->setWordWrap(true);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(caption_);
  layout->addWidget(view_, 1);
  rebuild();
}

void ExpertLoadChart::set_report(const std::optional<RunReport>& report) {
  report_ = report;
  rebuild();
}

QString ExpertLoadChart::caption() const {
  return caption_->text();
}

void ExpertLoadChart::rebuild() {
  clear_chart(chart_);
  bars_ = nullptr;
  if (!report_ || report_->expert_layers.empty()) {
    chart_->setTitle(tr("Expert load: a mixture of experts with expert parallelism shows its routing here"));
    caption_->clear();
    return;
  }
  const std::vector<ExpertLayerRow>& layers = report_->expert_layers;
  auto* busiest = new QBarSet(tr("busiest rank"));
  auto* mean = new QBarSet(tr("mean over the expert group"));
  QStringList categories;
  double top = 1.0;
  std::size_t worst = 0;
  double dropped = 0.0;
  for (std::size_t l = 0; l < layers.size(); ++l) {
    *busiest << layers[l].max_load;
    *mean << layers[l].mean_load;
    categories << QString::number(layers[l].layer);
    top = std::max(top, layers[l].max_load);
    if (layers[l].max_load > layers[worst].max_load) worst = l;
    dropped += layers[l].dropped / static_cast<double>(layers.size());
  }
  busiest->setColor(QColor(0xd6, 0x27, 0x28));
  mean->setColor(QColor(0x1f, 0x77, 0xb4));
  bars_ = new QBarSeries;
  bars_->append(busiest);
  bars_->append(mean);
  chart_->addSeries(bars_);
  auto* x = new QBarCategoryAxis;
  x->append(categories);
  x->setTitleText(tr("layer"));
  auto* y = new QValueAxis;
  y->setRange(0, top * 1.1);
  y->setTitleText(tr("token copies over the uniform share"));
  chart_->addAxis(x, Qt::AlignBottom);
  chart_->addAxis(y, Qt::AlignLeft);
  bars_->attachAxis(x);
  bars_->attachAxis(y);
  chart_->setTitle(tr("Expert load per layer"));
  double mean_busiest = 0.0;
  for (const ExpertLayerRow& l : layers) mean_busiest += l.max_load / static_cast<double>(layers.size());
  caption_->setText(tr("The busiest expert-parallel rank takes %1x the uniform share of a layer's token copies on "
                       "average, %2x in layer %3: its experts' compute, and the all-to-all that waits for it, "
                       "slow that layer by as much. %4% of the copies dropped by the capacity factor.")
                        .arg(mean_busiest, 0, 'f', 3)
                        .arg(layers[worst].max_load, 0, 'f', 3)
                        .arg(layers[worst].layer)
                        .arg(dropped * 100.0, 0, 'g', 3));
}

} // namespace partsim::gui
