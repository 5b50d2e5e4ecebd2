// CollectivesModel.
#include "models/collectives_model.hpp"

namespace partsim::gui {

CollectivesModel::CollectivesModel(QObject* parent) : QAbstractTableModel(parent) {}

void CollectivesModel::set_collectives(const std::vector<CollectiveRow>& rows) {
  beginResetModel();
  rows_ = rows;
  endResetModel();
}

int CollectivesModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int CollectivesModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : NUM_COLUMNS;
}

QVariant CollectivesModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const CollectiveRow& c = rows_[static_cast<std::size_t>(index.row())];
  if (role == Qt::TextAlignmentRole && index.column() >= Ranks)
    return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole && role != Qt::UserRole) return {};
  const bool raw = role == Qt::UserRole;
  switch (index.column()) {
  case Operation:
    return c.operation;
  case Algorithm:
    return c.algorithm;
  case Kind:
    return c.kind;
  case Ranks:
    return c.ranks;
  case Bytes:
    return raw ? QVariant(c.bytes) : QVariant(format_figure("bytes_sent", c.bytes));
  case Count:
    return raw ? QVariant(c.count) : QVariant(QString::number(c.count, 'f', 0));
  case MeanTime:
    return raw ? QVariant(c.mean_time) : QVariant(format_seconds(c.mean_time));
  case MaxTime:
    return raw ? QVariant(c.max_time) : QVariant(format_seconds(c.max_time));
  case BusBandwidth:
    if (!c.bus_bandwidth) return {};
    return raw ? QVariant(*c.bus_bandwidth)
               : QVariant(format_figure("bytes_sent", *c.bus_bandwidth) + QStringLiteral("/s"));
  default:
    return {};
  }
}

QVariant CollectivesModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole || orientation != Qt::Horizontal) return {};
  switch (section) {
  case Operation:
    return tr("Collective");
  case Algorithm:
    return tr("Algorithm");
  case Kind:
    return tr("Kind");
  case Ranks:
    return tr("Ranks");
  case Bytes:
    return tr("Bytes");
  case Count:
    return tr("Count");
  case MeanTime:
    return tr("Mean time");
  case MaxTime:
    return tr("Max time");
  case BusBandwidth:
    return tr("Bus bandwidth");
  default:
    return {};
  }
}

} // namespace partsim::gui
