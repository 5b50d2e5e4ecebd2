// SearchView: a `partsim search` of the current scenario: its space and ranking, a sortable table of the candidates,
// a scatter of the ranking metric against cost or energy with the Pareto front, and a click that loads a candidate.
#pragma once

#include "search_result.hpp"

#include <QWidget>

#include <optional>
#include <vector>

class QChart;
class QChartView;
class QComboBox;
class QLabel;
class QLineEdit;
class QLineSeries;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QScatterSeries;
class QSpinBox;
class QTableView;

namespace partsim::gui {

class SearchModel;
class SearchSortProxy;

class SearchView : public QWidget {
  Q_OBJECT
 public:
  explicit SearchView(QWidget* parent = nullptr);
  void set_outcome(const std::optional<SearchOutcome>& outcome);
  const std::optional<SearchOutcome>& outcome() const { return outcome_; }
  /** Shows a search in progress, or idle with a message. */
  void set_running(bool running, const QString& message = {});
  void set_progress(int done, int total);

  /** The space's axes, one `/pointer=v1,v2,...` per line. */
  QStringList axes() const;
  void set_axes(const QStringList& axes);
  QString rank_by() const;
  void set_rank_by(const QString& metric);
  /** The token budget as typed ("1e12"), empty for none. */
  QString tokens() const;
  void set_tokens(const QString& tokens);
  int refine() const;
  SearchSecondFigure second_figure() const;
  void set_second_figure(SearchSecondFigure figure);

  /** Selects a candidate (by its index in the outcome): marked in the chart and the table; emits candidate_chosen. */
  void choose(std::size_t candidate);

  QChartView* view() const { return view_; }
  QScatterSeries* candidates_series() const { return points_; }
  QLineSeries* front_series() const { return front_; }
  QScatterSeries* selected_series() const { return selected_; }
  SearchModel* model() const { return model_; }
  SearchSortProxy* proxy() const { return proxy_; }
  QTableView* table() const { return table_; }
  /** The candidate of each point of candidates_series(), in order. */
  const std::vector<std::size_t>& plotted() const { return plotted_; }

 signals:
  void search_requested();
  void cancel_requested();
  void candidate_chosen(std::size_t candidate);

 private:
  void rebuild();
  void mark(std::size_t candidate);
  std::optional<SearchOutcome> outcome_;
  std::optional<std::size_t> chosen_;
  std::vector<std::size_t> plotted_;
  QPlainTextEdit* axes_ = nullptr;
  QComboBox* rank_by_ = nullptr;
  QLineEdit* tokens_ = nullptr;
  QSpinBox* refine_ = nullptr;
  QComboBox* second_ = nullptr;
  QPushButton* run_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* status_ = nullptr;
  QChart* chart_ = nullptr;
  QChartView* view_ = nullptr;
  QScatterSeries* points_ = nullptr;
  QLineSeries* front_ = nullptr;
  QScatterSeries* selected_ = nullptr;
  SearchModel* model_ = nullptr;
  SearchSortProxy* proxy_ = nullptr;
  QTableView* table_ = nullptr;
};

} // namespace partsim::gui
