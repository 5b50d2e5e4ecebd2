// SweepModel.
#include "models/sweep_model.hpp"

#include "run_report.hpp"

namespace partsim::gui {

SweepModel::SweepModel(QObject* parent) : QAbstractTableModel(parent) {}

void SweepModel::set_result(const SweepResult& result) {
  beginResetModel();
  result_ = result;
  endResetModel();
}

int SweepModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(result_.rows.size());
}

int SweepModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : NUM_COLUMNS;
}

QVariant SweepModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const SweepPointRow& r = result_.rows[static_cast<std::size_t>(index.row())];
  double value = 0;
  switch (index.column()) {
  case Gpus:
    value = r.gpus;
    break;
  case Makespan:
    value = r.makespan;
    break;
  case Speedup:
    value = r.speedup;
    break;
  case Efficiency:
    value = r.efficiency;
    break;
  case AmdahlBound:
    value = r.amdahl_bound;
    break;
  case KarpFlatt:
    value = r.karp_flatt;
    break;
  case CommunicationOverhead:
    value = r.communication_overhead;
    break;
  case Imbalance:
    value = r.imbalance;
    break;
  default:
    return {};
  }
  if (role == Qt::UserRole) return value;
  if (role == Qt::TextAlignmentRole) return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
  case Gpus:
    return r.gpus;
  case Makespan:
    return format_seconds(r.makespan);
  case Speedup:
  case AmdahlBound:
    return QStringLiteral("%1x").arg(value, 0, 'f', 3);
  case Efficiency:
  case CommunicationOverhead:
    return QStringLiteral("%1%").arg(value * 100.0, 0, 'f', 1);
  case KarpFlatt:
    return r.gpus > 1 ? QString::number(value, 'f', 4) : QStringLiteral("-");
  default:
    return QString::number(value, 'f', 3);
  }
}

QVariant SweepModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole || orientation != Qt::Horizontal) return {};
  switch (section) {
  case Gpus:
    return tr("GPUs");
  case Makespan:
    return tr("Makespan");
  case Speedup:
    return tr("Speedup");
  case Efficiency:
    return tr("Efficiency");
  case AmdahlBound:
    return tr("Amdahl bound");
  case KarpFlatt:
    return tr("Karp-Flatt e");
  case CommunicationOverhead:
    return tr("Comm. overhead");
  case Imbalance:
    return tr("Imbalance");
  default:
    return {};
  }
}

} // namespace partsim::gui
