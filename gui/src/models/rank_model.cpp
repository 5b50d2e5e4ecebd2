// RankModel.
#include "models/rank_model.hpp"

#include <QFont>

namespace partsim::gui {

RankModel::RankModel(QObject* parent) : QAbstractTableModel(parent) {}

void RankModel::set_report(const RunReport& report) {
  beginResetModel();
  report_ = report;
  slowest_ = report_.slowest_rank();
  endResetModel();
}

int RankModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(report_.ranks.size());
}

int RankModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : NUM_COLUMNS;
}

QVariant RankModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const RankRow& r = report_.ranks[static_cast<std::size_t>(index.row())];
  const double makespan = report_.makespan();
  if (role == Qt::UserRole) { // raw numbers, for sorting and tests
    switch (index.column()) {
    case Rank:
      return r.rank;
    case Node:
      return r.node;
    case Samples:
      return r.samples;
    case Compute:
      return r.compute;
    case Communication:
      return r.communication;
    case Wait:
      return r.wait;
    case Idle:
      return r.tail_idle;
    case Busy:
      return r.busy();
    case Finish:
      return r.finish;
    case OverlappedCommunication:
      return r.overlapped ? QVariant(*r.overlapped) : QVariant();
    default:
      return {};
    }
  }
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
    case Rank:
      return r.rank;
    case Node:
      return r.node;
    case Samples:
      return QString::number(r.samples, 'f', 0);
    case Compute:
      return format_seconds(r.compute);
    case Communication:
      return format_seconds(r.communication);
    case Wait:
      return format_seconds(r.wait);
    case Idle:
      return format_seconds(r.tail_idle);
    case Busy:
      return makespan > 0 ? QStringLiteral("%1%").arg(100.0 * r.busy() / makespan, 0, 'f', 1) : QString();
    case Finish:
      return format_seconds(r.finish);
    case OverlappedCommunication:
      return r.overlapped ? format_seconds(*r.overlapped) : QString();
    default:
      return {};
    }
  }
  if (role == Qt::TextAlignmentRole) return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::FontRole && index.row() == slowest_) {
    QFont bold;
    bold.setBold(true);
    return bold;
  }
  if (role == Qt::ToolTipRole && index.row() == slowest_) return tr("the slowest rank: it sets the makespan");
  return {};
}

QVariant RankModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Vertical) return section + 1;
  switch (section) {
  case Rank:
    return tr("Rank");
  case Node:
    return tr("Node");
  case Samples:
    return tr("Samples");
  case Compute:
    return tr("Compute");
  case Communication:
    return tr("Communication");
  case Wait:
    return tr("Wait");
  case Idle:
    return tr("Idle (finished early)");
  case Busy:
    return tr("Busy");
  case Finish:
    return tr("Finish");
  case OverlappedCommunication:
    return tr("Overlapped comm.");
  default:
    return {};
  }
}

} // namespace partsim::gui
