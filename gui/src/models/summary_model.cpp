// SummaryModel.
#include "models/summary_model.hpp"

#include <QBrush>
#include <QColor>

#include <algorithm>
#include <cmath>
#include <limits>

namespace partsim::gui {

namespace {
/** Headline order, after a serving run's figures ("serving/...", in report order: throughput, end-to-end latency,
 * drops, then each LLM stage's TTFT, TPOT and goodput); keys not listed follow in report order. */
const char* const kOrder[] = {"makespan_s",
                              "speedup",
                              "parallel_efficiency",
                              "load_imbalance_max_over_mean",
                              "load_imbalance_cv",
                              "communication_overhead",
                              "exposed_communication_gpu_s",
                              "overlapped_communication_gpu_s",
                              "idle_share",
                              "slowest_rank_excess_s",
                              "time_lost_waiting_gpu_s",
                              "parallel_fraction",
                              "amdahl_speedup_bound",
                              "amdahl_limit",
                              "karp_flatt_serial_fraction",
                              "reliability/goodput",
                              "reliability/time_to_finish_days",
                              "stragglers/mean_iteration_s",
                              "stragglers/slowed_iteration_fraction",
                              "mfu",
                              "hfu",
                              "tokens_per_s",
                              "memory_per_gpu/total_bytes",
                              "memory_per_gpu/capacity_bytes",
                              "memory_per_gpu/parameters_bytes",
                              "memory_per_gpu/gradients_bytes",
                              "memory_per_gpu/optimizer_states_bytes",
                              "memory_per_gpu/model_states_bytes",
                              "memory_per_gpu/activations_bytes",
                              "memory_per_gpu/workspace_bytes",
                              "throughput_samples_per_s",
                              "single_gpu_time_s",
                              "gpus",
                              "iterations"};

/** For these a larger value is worse: a positive delta is shown red. */
bool lower_is_better(const std::string& key) {
  return key == "makespan_s" || key.starts_with("load_imbalance") || key == "communication_overhead" ||
         key == "exposed_communication_gpu_s" || key == "idle_share" || key == "slowest_rank_excess_s" ||
         key == "time_lost_waiting_gpu_s" || key == "karp_flatt_serial_fraction" || key == "single_gpu_time_s" ||
         key == "memory_per_gpu/total_bytes" || key == "reliability/time_to_finish_days" ||
         key == "reliability/failures" || key.starts_with("reliability/lost") || key.ends_with("_iteration_s") ||
         key == "stragglers/slowed_iteration_fraction" || (key.starts_with("serving/") && key.ends_with("_s")) ||
         key == "serving/drop_rate";
}
} // namespace

std::vector<std::string> ordered_summary_keys(const std::vector<Figure>& a, const std::vector<Figure>& b) {
  std::vector<std::string> present;
  for (const auto* list : {&a, &b})
    for (const Figure& f : *list)
      if (std::find(present.begin(), present.end(), f.key) == present.end()) present.push_back(f.key);
  std::vector<std::string> out;
  for (const std::string& key : present)
    if (key.starts_with("serving/")) out.push_back(key);
  for (const char* key : kOrder)
    if (std::find(present.begin(), present.end(), key) != present.end()) out.emplace_back(key);
  for (const std::string& key : present)
    if (std::find(out.begin(), out.end(), key) == out.end()) out.push_back(key);
  return out;
}

SummaryModel::SummaryModel(QObject* parent) : QAbstractTableModel(parent) {}

void SummaryModel::set_current(const std::optional<RunReport>& report) {
  current_ = report;
  rebuild();
}

void SummaryModel::set_pinned(const std::optional<RunReport>& report) {
  pinned_ = report;
  rebuild();
}

void SummaryModel::rebuild() {
  beginResetModel();
  keys_ = ordered_summary_keys(current_ ? current_->figures : std::vector<Figure>{},
                               pinned_ ? pinned_->figures : std::vector<Figure>{});
  endResetModel();
}

int SummaryModel::row_of(const std::string& key) const {
  const auto it = std::find(keys_.begin(), keys_.end(), key);
  return it == keys_.end() ? -1 : static_cast<int>(it - keys_.begin());
}

int SummaryModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(keys_.size());
}

int SummaryModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : NUM_COLUMNS;
}

QVariant SummaryModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const std::string& key = keys_[static_cast<std::size_t>(index.row())];
  // NaN for a figure a run does not have (std::optional here trips GCC 12's -Wmaybe-uninitialized).
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double now = current_ ? current_->figure(key).value_or(nan) : nan;
  const double then = pinned_ ? pinned_->figure(key).value_or(nan) : nan;
  const double delta = now - then;
  const bool has_now = !std::isnan(now), has_then = !std::isnan(then), has_delta = !std::isnan(delta);
  if (role == Qt::UserRole) {
    switch (index.column()) {
    case Current:
      return has_now ? QVariant(now) : QVariant();
    case Pinned:
      return has_then ? QVariant(then) : QVariant();
    case Delta:
      return has_delta ? QVariant(delta) : QVariant();
    default:
      return QString::fromStdString(key);
    }
  }
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
    case Name:
      return figure_label(key);
    case Current:
      return has_now ? format_figure(key, now) : QString();
    case Pinned:
      return has_then ? format_figure(key, then) : QString();
    case Delta: {
      if (!has_delta) return QString();
      return (delta > 0 ? QStringLiteral("+") : QString()) + format_figure(key, delta);
    }
    default:
      return {};
    }
  }
  if (role == Qt::ToolTipRole && index.column() == Name) return QString::fromStdString(key);
  if (role == Qt::ToolTipRole && index.column() == Delta && has_delta && then != 0)
    return tr("%1%2% against the pinned run")
        .arg(delta > 0 ? QStringLiteral("+") : QString())
        .arg(100.0 * delta / std::fabs(then), 0, 'f', 1);
  if (role == Qt::TextAlignmentRole && index.column() != Name)
    return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ForegroundRole && index.column() == Delta && has_delta && std::fabs(delta) > 1e-12) {
    const bool worse = lower_is_better(key) ? delta > 0 : delta < 0;
    const bool neutral = key == "gpus" || key == "iterations" || key.starts_with("bytes_");
    if (!neutral) return QBrush(worse ? QColor(190, 30, 30) : QColor(20, 130, 40));
  }
  return {};
}

QVariant SummaryModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole || orientation != Qt::Horizontal) return {};
  switch (section) {
  case Name:
    return tr("Figure");
  case Current:
    return tr("Current");
  case Pinned:
    return tr("Pinned");
  case Delta:
    return tr("Delta");
  default:
    return {};
  }
}

} // namespace partsim::gui
