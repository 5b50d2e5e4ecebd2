// SearchModel: the points of a search as a table (rank, settings, status, the ranking figure, cost, energy, ...),
// sortable through a QSortFilterProxyModel on Qt::UserRole.
#pragma once

#include "search_result.hpp"

#include <QAbstractTableModel>
#include <QSortFilterProxyModel>

namespace partsim::gui {

class SearchModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    Rank,
    Point,
    Settings,
    Status,
    Gpus,
    RankValue,
    Fidelity,
    Cost,
    Energy,
    Makespan,
    TokensPerS,
    Mfu,
    Memory,
    NUM_COLUMNS
  };

  explicit SearchModel(QObject* parent = nullptr);
  void set_outcome(const SearchOutcome& outcome);
  const SearchOutcome& outcome() const { return outcome_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  /** Qt::DisplayRole: text; Qt::UserRole: the number (or text) to sort by, none for a figure a point lacks (those sort
   * last); Qt::ToolTipRole: why a point was left out. */
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  SearchOutcome outcome_;
};

/** Sorts a SearchModel by Qt::UserRole, points without the figure last in either order (unranked points last by
 * rank, whether best or worst first). */
class SearchSortProxy : public QSortFilterProxyModel {
  Q_OBJECT
 public:
  explicit SearchSortProxy(QObject* parent = nullptr);

 protected:
  bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;
};

} // namespace partsim::gui
