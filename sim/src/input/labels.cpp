// Label columns of CSV files (read_csv_columns keeps one field a row) and generated labels.
#include "partsim/input/labels.hpp"

#include "partsim/common/error.hpp"
#include "partsim/common/random.hpp"
#include "partsim/input/csv.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <unordered_map>

namespace partsim {

std::vector<std::uint64_t> Labels::class_totals() const {
  std::vector<std::uint64_t> totals(class_names.size(), 0);
  for (const ClassIndex c : classes) {
    PARTSIM_CHECK(c < totals.size()) << "class index " << c << " of " << totals.size() << " classes";
    ++totals[c];
  }
  return totals;
}

std::optional<std::size_t> Labels::find_class(std::string_view name) const {
  const auto it = std::find(class_names.begin(), class_names.end(), name);
  if (it == class_names.end()) return std::nullopt;
  return static_cast<std::size_t>(it - class_names.begin());
}

namespace {

/** Class indices of labels, numbered in order of first appearance. */
class ClassNumbering {
 public:
  ClassIndex class_of(const std::string& label, const std::filesystem::path& path, std::uint64_t line,
                      std::string_view column) {
    if (has_last_ && label == last_label_) return last_index_;
    auto it = index_of_.find(label);
    if (it == index_of_.end()) {
      if (index_of_.size() == kMaxClasses)
        throw csv_error(
            path, line,
            fmt::format("more than {} distinct values in column '{}'; is it the label column?", kMaxClasses, column));
      it = index_of_.emplace(label, static_cast<ClassIndex>(index_of_.size())).first;
    }
    last_label_ = label;
    last_index_ = it->second;
    has_last_ = true;
    return it->second;
  }

  /** Renumbers the classes of `labels` in name order. */
  void sort_classes(Labels& labels) {
    std::vector<std::string> names(index_of_.size());
    for (auto& [name, index] : index_of_) names[index] = name;
    std::vector<std::size_t> order(names.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return names[a] < names[b]; });
    std::vector<ClassIndex> renumber(names.size());
    for (std::size_t rank = 0; rank < order.size(); ++rank) {
      renumber[order[rank]] = static_cast<ClassIndex>(rank);
      labels.class_names.push_back(std::move(names[order[rank]]));
    }
    for (ClassIndex& c : labels.classes) c = renumber[c];
  }

 private:
  std::unordered_map<std::string, ClassIndex> index_of_;
  std::string last_label_;
  ClassIndex last_index_ = 0;
  bool has_last_ = false;
};

} // namespace

Labels read_label_csv(const std::filesystem::path& path, std::string_view column, char delimiter) {
  Labels labels;
  ClassNumbering numbering;
  const std::vector<std::string> columns{std::string(column)};
  read_csv_columns(
      path, columns,
      [&](const CsvRow& row) {
        const std::string& label = row.fields[0];
        if (label.empty()) throw csv_error(path, row.line, fmt::format("the label column '{}' is empty", column));
        if (labels.classes.size() >= kMaxLabels)
          throw csv_error(path, row.line,
                          fmt::format("more than {} labelled rows (each label is kept in memory)", kMaxLabels));
        labels.classes.push_back(numbering.class_of(label, path, row.line, column));
      },
      "label file", delimiter);
  if (labels.classes.empty()) throw InputError(path.string(), "", "no data rows after the header");
  numbering.sort_classes(labels);
  labels.source = path.string();
  return labels;
}

Labels generate_labels(std::uint64_t samples, double positive_rate, std::uint64_t seed) {
  PARTSIM_CHECK(samples > 0) << "no samples";
  PARTSIM_CHECK(positive_rate >= 0 && positive_rate <= 1) << "positive rate " << positive_rate;
  Labels labels;
  labels.class_names = {"0", "1"};
  labels.classes.resize(samples);
  Xoshiro256StarStar rng(seed);
  for (ClassIndex& c : labels.classes) c = rng.uniform() < positive_rate ? 1 : 0;
  labels.source = fmt::format("generated: {} samples, positive rate {:g}, seed {}", samples, positive_rate, seed);
  return labels;
}

} // namespace partsim
