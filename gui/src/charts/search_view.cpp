// SearchView.
#include "charts/search_view.hpp"

#include "charts/chart_common.hpp"
#include "models/search_model.hpp"

#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLegend>
#include <QLineEdit>
#include <QLineSeries>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScatterSeries>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <limits>

namespace partsim::gui {

SearchView::SearchView(QWidget* parent) : QWidget(parent) {
  axes_ = new QPlainTextEdit(this);
  axes_->setPlaceholderText(QStringLiteral("/strategy/tensor=1,2,4,8\n/strategy/pipeline=1,2,4,8"));
  axes_->setToolTip(tr("One axis per line, as partsim search --vary reads it: /json/pointer=v1,v2,... The points are "
                       "their cartesian product; the form's edits are fixed values of every point"));
  axes_->setMaximumHeight(64);
  rank_by_ = new QComboBox(this);
  for (const SearchMetric& m : search_metrics()) {
    rank_by_->addItem(QString::fromStdString(m.name));
    rank_by_->setItemData(rank_by_->count() - 1, QString::fromStdString(m.meaning), Qt::ToolTipRole);
  }
  tokens_ = new QLineEdit(this);
  tokens_->setPlaceholderText(tr("none"));
  tokens_->setToolTip(tr("The token budget (--tokens): time, cost and energy to train it"));
  refine_ = new QSpinBox(this);
  refine_->setRange(0, 1000);
  refine_->setValue(3);
  refine_->setToolTip(tr("The best points run again at the faithful fidelity (--refine)"));
  second_ = new QComboBox(this);
  second_->addItem(tr("cost"));
  second_->addItem(tr("energy"));
  second_->setToolTip(tr("The scatter's vertical axis and the Pareto front's second metric"));
  run_ = new QPushButton(tr("Run search"), this);
  cancel_ = new QPushButton(tr("Cancel"), this);
  cancel_->setEnabled(false);
  progress_ = new QProgressBar(this);
  progress_->setMaximumWidth(160);
  progress_->setVisible(false);
  status_ = new QLabel(this);
  status_->setWordWrap(true);
  connect(run_, &QPushButton::clicked, this, &SearchView::search_requested);
  connect(cancel_, &QPushButton::clicked, this, &SearchView::cancel_requested);
  connect(second_, &QComboBox::currentIndexChanged, this, [this] { rebuild(); });

  // Two short rows, so that the tab stays as narrow as the others.
  rank_by_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  rank_by_->setMinimumContentsLength(14);
  tokens_->setMaximumWidth(110);
  auto* settings = new QFormLayout;
  settings->addRow(tr("Axes:"), axes_);
  auto* options = new QHBoxLayout;
  options->addWidget(new QLabel(tr("Rank by:"), this));
  options->addWidget(rank_by_);
  options->addWidget(new QLabel(tr("Tokens:"), this));
  options->addWidget(tokens_);
  options->addWidget(new QLabel(tr("Refine:"), this));
  options->addWidget(refine_);
  options->addStretch(1);
  settings->addRow(options);
  auto* actions = new QHBoxLayout;
  actions->addWidget(new QLabel(tr("Against:"), this));
  actions->addWidget(second_);
  actions->addStretch(1);
  actions->addWidget(run_);
  actions->addWidget(cancel_);
  actions->addWidget(progress_);
  settings->addRow(actions);

  view_ = new_chart_view(chart_, this);
  model_ = new SearchModel(this);
  proxy_ = new SearchSortProxy(this);
  proxy_->setSourceModel(model_);
  table_ = new QTableView(this);
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(SearchModel::Rank, Qt::AscendingOrder);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->setToolTip(tr("Click a row to load the candidate into the form"));
  connect(table_, &QTableView::clicked, this, [this](const QModelIndex& index) {
    if (index.isValid()) choose(static_cast<std::size_t>(proxy_->mapToSource(index).row()));
  });
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(view_);
  split->addWidget(table_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  split->setSizes({480, 280});
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(settings);
  layout->addWidget(status_);
  layout->addWidget(split, 1);
  rebuild();
}

QStringList SearchView::axes() const {
  QStringList out;
  for (const QString& line : axes_->toPlainText().split(QLatin1Char('\n'), Qt::SkipEmptyParts))
    if (!line.trimmed().isEmpty()) out << line.trimmed();
  return out;
}

void SearchView::set_axes(const QStringList& axes) {
  axes_->setPlainText(axes.join(QLatin1Char('\n')));
}

QString SearchView::rank_by() const {
  return rank_by_->currentText();
}

void SearchView::set_rank_by(const QString& metric) {
  rank_by_->setCurrentText(metric);
}

QString SearchView::tokens() const {
  return tokens_->text().trimmed();
}

void SearchView::set_tokens(const QString& tokens) {
  tokens_->setText(tokens);
}

int SearchView::refine() const {
  return refine_->value();
}

SearchSecondFigure SearchView::second_figure() const {
  return second_->currentIndex() == 1 ? SearchSecondFigure::Energy : SearchSecondFigure::Cost;
}

void SearchView::set_second_figure(SearchSecondFigure figure) {
  second_->setCurrentIndex(figure == SearchSecondFigure::Energy ? 1 : 0);
}

void SearchView::set_outcome(const std::optional<SearchOutcome>& outcome) {
  outcome_ = outcome;
  chosen_.reset();
  model_->set_outcome(outcome ? *outcome : SearchOutcome{});
  table_->sortByColumn(SearchModel::Rank, Qt::AscendingOrder);
  rebuild();
}

void SearchView::set_running(bool running, const QString& message) {
  run_->setEnabled(!running);
  cancel_->setEnabled(running);
  progress_->setVisible(running);
  if (running) progress_->setRange(0, 0);
  status_->setText(message);
}

void SearchView::set_progress(int done, int total) {
  progress_->setRange(0, std::max(0, total)); // 0 of 0: busy until the search knows its points
  progress_->setValue(done);
}

void SearchView::choose(std::size_t candidate) {
  if (!outcome_ || candidate >= outcome_->candidates.size()) return;
  mark(candidate);
  const QModelIndex row = proxy_->mapFromSource(model_->index(static_cast<int>(candidate), 0));
  if (row.isValid() && (!table_->currentIndex().isValid() || table_->currentIndex().row() != row.row())) {
    table_->selectRow(row.row());
    table_->scrollTo(row);
  }
  emit candidate_chosen(candidate);
}

void SearchView::mark(std::size_t candidate) {
  chosen_ = candidate;
  if (selected_ == nullptr || !outcome_) return;
  selected_->clear();
  const SearchCandidate& c = outcome_->candidates[candidate];
  const std::optional<double> y = outcome_->second(candidate, second_figure());
  if (c.rank_value && y) selected_->append(*c.rank_value, *y);
}

void SearchView::rebuild() {
  clear_chart(chart_);
  points_ = selected_ = nullptr;
  front_ = nullptr;
  plotted_.clear();
  if (!outcome_ || outcome_->ranking.empty()) {
    chart_->setTitle(outcome_ ? tr("Search: no point was simulated") : tr("Search: run a search of the scenario"));
    return;
  }
  const SearchSecondFigure figure = second_figure();
  const QString what = figure == SearchSecondFigure::Cost ? tr("cost") : tr("energy");
  points_ = new QScatterSeries;
  points_->setName(tr("candidates"));
  points_->setMarkerSize(9);
  points_->setColor(QColor(0x3b, 0x7d, 0xd8));
  double min_x = std::numeric_limits<double>::max(), max_x = std::numeric_limits<double>::lowest();
  double min_y = min_x, max_y = max_x;
  for (std::size_t i : outcome_->ranking) {
    const SearchCandidate& c = outcome_->candidates[i];
    const std::optional<double> y = outcome_->second(i, figure);
    if (!c.rank_value || !y || !std::isfinite(*c.rank_value) || !std::isfinite(*y)) continue;
    points_->append(*c.rank_value, *y);
    plotted_.push_back(i);
    min_x = std::min(min_x, *c.rank_value);
    max_x = std::max(max_x, *c.rank_value);
    min_y = std::min(min_y, *y);
    max_y = std::max(max_y, *y);
  }
  if (plotted_.empty()) {
    delete points_;
    points_ = nullptr;
    chart_->setTitle(tr("Search: no point has a %1 figure (the GPU profile has no power figures?)").arg(what));
    return;
  }
  front_ = new QLineSeries;
  front_->setName(tr("Pareto front"));
  QPen front_pen(QColor(0xc8, 0x3e, 0x4d));
  front_pen.setWidthF(2);
  front_->setPen(front_pen);
  front_->setPointsVisible(true);
  std::vector<std::size_t> front = search_front(*outcome_, figure);
  std::sort(front.begin(), front.end(), [&](std::size_t a, std::size_t b) {
    return *outcome_->candidates[a].rank_value < *outcome_->candidates[b].rank_value;
  });
  for (std::size_t i : front) front_->append(*outcome_->candidates[i].rank_value, *outcome_->second(i, figure));
  selected_ = new QScatterSeries;
  selected_->setName(tr("loaded into the form"));
  selected_->setMarkerSize(15);
  selected_->setColor(Qt::transparent);
  selected_->setBorderColor(QColor(20, 20, 20));
  QPen selected_pen(QColor(20, 20, 20));
  selected_pen.setWidthF(2);
  selected_->setPen(selected_pen);

  const auto pad = [](double lo, double hi) { return hi > lo ? (hi - lo) * 0.08 : std::max(std::abs(hi) * 0.1, 1.0); };
  auto* x = new QValueAxis;
  x->setTitleText(outcome_->rank_title);
  x->setRange(min_x - pad(min_x, max_x), max_x + pad(min_x, max_x));
  x->setLabelFormat(QStringLiteral("%.4g"));
  auto* y = new QValueAxis;
  y->setTitleText(outcome_->second_title(figure));
  y->setRange(min_y - pad(min_y, max_y), max_y + pad(min_y, max_y));
  y->setLabelFormat(QStringLiteral("%.4g"));
  chart_->addAxis(x, Qt::AlignBottom);
  chart_->addAxis(y, Qt::AlignLeft);
  for (QXYSeries* s : std::initializer_list<QXYSeries*>{points_, front_, selected_}) {
    chart_->addSeries(s);
    s->attachAxis(x);
    s->attachAxis(y);
  }
  connect(points_, &QScatterSeries::clicked, this, [this](const QPointF& p) {
    const QList<QPointF> all = points_->points();
    for (qsizetype k = 0; k < all.size(); ++k)
      if (all[k] == p) {
        choose(plotted_[static_cast<std::size_t>(k)]);
        return;
      }
  });
  const SearchCandidate& best = outcome_->candidates[outcome_->ranking.front()];
  chart_->setTitle(tr("%1 against %2: %3 candidates, %4 on the Pareto front; best: point %5 (%6)")
                       .arg(QString::fromStdString(outcome_->result.rank_by.name), what)
                       .arg(plotted_.size())
                       .arg(front.size())
                       .arg(best.point)
                       .arg(best.settings));
  if (chosen_) mark(*chosen_);
}

} // namespace partsim::gui
