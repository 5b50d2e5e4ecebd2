// SummaryModel: the headline figures of the current run and, when one is pinned, the pinned run and the delta.
#pragma once

#include "run_report.hpp"

#include <QAbstractTableModel>

#include <optional>
#include <string>
#include <vector>

namespace partsim::gui {

class SummaryModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Name, Current, Pinned, Delta, NUM_COLUMNS };

  explicit SummaryModel(QObject* parent = nullptr);
  void set_current(const std::optional<RunReport>& report);
  void set_pinned(const std::optional<RunReport>& report);
  /** The summary key of a row ("makespan_s"). */
  std::string key(int row) const { return keys_.at(static_cast<std::size_t>(row)); }
  int row_of(const std::string& key) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  void rebuild();
  std::optional<RunReport> current_;
  std::optional<RunReport> pinned_;
  std::vector<std::string> keys_;
};

/** Summary keys in display order: the headline figures first, then any the GUI does not know yet. */
std::vector<std::string> ordered_summary_keys(const std::vector<Figure>& a, const std::vector<Figure>& b);

} // namespace partsim::gui
