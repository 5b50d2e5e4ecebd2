// CollectivesModel: the report's collectives (operation, algorithm, size, times, bus bandwidth) as a table.
#pragma once

#include "run_report.hpp"

#include <QAbstractTableModel>

namespace partsim::gui {

class CollectivesModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Operation, Algorithm, Kind, Ranks, Bytes, Count, MeanTime, MaxTime, BusBandwidth, NUM_COLUMNS };

  explicit CollectivesModel(QObject* parent = nullptr);
  void set_collectives(const std::vector<CollectiveRow>& rows);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  std::vector<CollectiveRow> rows_;
};

} // namespace partsim::gui
