// RankModel: the per-rank time breakdown of a run as a table (fed a report snapshot).
#pragma once

#include "run_report.hpp"

#include <QAbstractTableModel>

namespace partsim::gui {

class RankModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    Rank,
    Node,
    Samples,
    Compute,
    Communication,
    Wait,
    Idle,
    Busy,
    Finish,
    OverlappedCommunication,
    NUM_COLUMNS
  };

  explicit RankModel(QObject* parent = nullptr);
  void set_report(const RunReport& report);
  const RunReport& report() const { return report_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  RunReport report_;
  int slowest_ = -1;
};

} // namespace partsim::gui
