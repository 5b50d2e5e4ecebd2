// SweepModel: the speedup sweep's points as a table (GPUs, speedup, Amdahl bound, Karp-Flatt...).
#pragma once

#include "sweep_result.hpp"

#include <QAbstractTableModel>

namespace partsim::gui {

class SweepModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    Gpus,
    Makespan,
    Speedup,
    Efficiency,
    AmdahlBound,
    KarpFlatt,
    CommunicationOverhead,
    Imbalance,
    NUM_COLUMNS
  };

  explicit SweepModel(QObject* parent = nullptr);
  void set_result(const SweepResult& result);
  const SweepResult& result() const { return result_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  SweepResult result_;
};

} // namespace partsim::gui
