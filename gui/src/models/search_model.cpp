// SearchModel.
#include "models/search_model.hpp"

#include "run_report.hpp"

namespace partsim::gui {

namespace {

QVariant optional(const std::optional<double>& value) {
  return value ? QVariant(*value) : QVariant();
}

QString number(const std::optional<double>& value, int precision = 4) {
  return value ? QString::number(*value, 'g', precision) : QStringLiteral("-");
}

} // namespace

SearchModel::SearchModel(QObject* parent) : QAbstractTableModel(parent) {}

void SearchModel::set_outcome(const SearchOutcome& outcome) {
  beginResetModel();
  outcome_ = outcome;
  endResetModel();
}

int SearchModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(outcome_.candidates.size());
}

int SearchModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : NUM_COLUMNS;
}

QVariant SearchModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const SearchCandidate& c = outcome_.candidates[static_cast<std::size_t>(index.row())];
  if (role == Qt::ToolTipRole) return c.reason.isEmpty() ? QVariant() : QVariant(c.reason);
  if (role == Qt::UserRole) {
    switch (index.column()) {
    case Rank:
      return c.rank > 0 ? QVariant(c.rank) : QVariant();
    case Point:
      return static_cast<qulonglong>(c.point);
    case Settings:
      return c.settings;
    case Status:
      return c.status;
    case Gpus:
      return static_cast<qlonglong>(c.gpus);
    case RankValue:
      return optional(c.rank_value);
    case Fidelity:
      return c.fidelity;
    case Cost:
      return optional(c.cost);
    case Energy:
      return optional(c.energy);
    case Makespan:
      return optional(c.makespan);
    case TokensPerS:
      return optional(c.tokens_per_s);
    case Mfu:
      return optional(c.mfu);
    case Memory:
      return optional(c.memory_gib);
    default:
      return {};
    }
  }
  if (role == Qt::TextAlignmentRole)
    return index.column() == Settings || index.column() == Status || index.column() == Fidelity
               ? QVariant::fromValue(Qt::AlignLeft | Qt::AlignVCenter)
               : QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
  case Rank:
    return c.rank > 0 ? QString::number(c.rank) : QStringLiteral("-");
  case Point:
    return static_cast<qulonglong>(c.point);
  case Settings:
    return c.settings;
  case Status:
    return c.status;
  case Gpus:
    return static_cast<qlonglong>(c.gpus);
  case RankValue:
    return number(c.rank_value, 6);
  case Fidelity:
    return c.fidelity;
  case Cost:
    return number(c.cost);
  case Energy:
    return number(c.energy);
  case Makespan:
    return c.makespan ? format_seconds(*c.makespan) : QStringLiteral("-");
  case TokensPerS:
    return number(c.tokens_per_s, 6);
  case Mfu:
    return c.mfu ? QStringLiteral("%1%").arg(*c.mfu * 100.0, 0, 'f', 1) : QStringLiteral("-");
  case Memory:
    return c.memory_gib ? QString::number(*c.memory_gib, 'f', 1) : QStringLiteral("-");
  default:
    return {};
  }
}

QVariant SearchModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole || orientation != Qt::Horizontal) return {};
  switch (section) {
  case Rank:
    return tr("Rank");
  case Point:
    return tr("Point");
  case Settings:
    return tr("Settings");
  case Status:
    return tr("Status");
  case Gpus:
    return tr("GPUs");
  case RankValue:
    return outcome_.rank_title.isEmpty() ? tr("Ranking metric") : outcome_.rank_title;
  case Fidelity:
    return tr("Fidelity");
  case Cost:
    return outcome_.result.tokens > 0 ? tr("Cost to train") : tr("Cost / M tokens");
  case Energy:
    return outcome_.result.tokens > 0 ? tr("Energy to train (MWh)") : tr("Energy / token (J)");
  case Makespan:
    return tr("Makespan");
  case TokensPerS:
    return tr("Tokens/s");
  case Mfu:
    return tr("MFU");
  case Memory:
    return tr("Memory/GPU (GiB)");
  default:
    return {};
  }
}

SearchSortProxy::SearchSortProxy(QObject* parent) : QSortFilterProxyModel(parent) {
  setSortRole(Qt::UserRole);
}

bool SearchSortProxy::lessThan(const QModelIndex& left, const QModelIndex& right) const {
  const bool left_missing = !left.data(sortRole()).isValid();
  const bool right_missing = !right.data(sortRole()).isValid();
  if (left_missing == right_missing && !left_missing) return QSortFilterProxyModel::lessThan(left, right);
  if (left_missing == right_missing) return false;
  // Descending order asks lessThan(right, left): a missing figure is "less" there, so that it still comes last.
  return sortOrder() == Qt::AscendingOrder ? right_missing : left_missing;
}

} // namespace partsim::gui
