// Label columns of CSV files (a streaming RFC 4180 reader that keeps one field a row) and generated labels.
#include "partsim/input/labels.hpp"

#include "partsim/common/error.hpp"
#include "partsim/common/random.hpp"
#include "partsim/common/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
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

/** A CSV state machine fed in chunks: keeps the header and the label field of each row, nothing else. */
constexpr std::size_t kMaxFieldBytes = std::size_t{64} << 10;
constexpr std::size_t kMaxColumns = 100'000;

class LabelCsvParser {
 public:
  LabelCsvParser(std::string source, std::string_view column, char delimiter)
      : source_(std::move(source)), column_(column), delimiter_(delimiter) {}

  void feed(const char* data, std::size_t size) {
    for (std::size_t i = 0; i < size; ++i) {
      const char c = data[i];
      if (skip_lf_) {
        skip_lf_ = false;
        if (c == '\n') continue; // second half of a CRLF
      }
      switch (state_) {
      case State::Quoted:
        if (c == '"') {
          state_ = State::QuoteInQuoted;
        } else {
          if (c == '\n') ++line_;
          append(c);
        }
        break;
      case State::QuoteInQuoted:
        if (c == '"') {
          append('"');
          state_ = State::Quoted;
        } else if (c == delimiter_) {
          end_field();
        } else if (c == '\n' || c == '\r') {
          end_line(c);
        } else {
          throw error(fmt::format("unexpected '{}' after the closing quote of field {}; inside a quoted field a "
                                  "quote is written as two quotes (\"\")",
                                  c, field_index_ + 1));
        }
        break;
      case State::FieldStart:
        if (c == '"') {
          state_ = State::Quoted;
          record_empty_ = false;
          break;
        }
        [[fallthrough]];
      case State::Unquoted:
        if (c == delimiter_) {
          record_empty_ = false;
          end_field();
        } else if (c == '\n' || c == '\r') {
          end_line(c);
        } else {
          record_empty_ = false;
          state_ = State::Unquoted;
          append(c);
        }
        break;
      }
    }
  }

  Labels finish() {
    if (state_ == State::Quoted)
      throw error("a quoted field that starts on this line is not closed before the end of the file");
    if (!record_empty_) {
      end_field();
      end_record();
    }
    if (!header_done_)
      throw InputError(source_, "",
                       fmt::format("the file is empty; expected a header row naming the label column '{}'", column_));
    if (labels_.classes.empty())
      throw InputError(source_, "", fmt::format("line {}: no data rows after the header", header_line_));
    sort_classes();
    labels_.source = source_;
    return std::move(labels_);
  }

 private:
  enum class State { FieldStart, Unquoted, Quoted, QuoteInQuoted };

  InputError error(const std::string& message) const {
    return InputError(source_, "", fmt::format("line {}: {}", record_line_, message));
  }

  void append(char c) {
    if (header_done_ && field_index_ != column_index_) return;
    // What is kept is bounded: a file without line ends (/dev/zero) is refused, not read into memory.
    if (field_.size() >= kMaxFieldBytes)
      throw error(fmt::format("a field longer than {} KiB; expected a CSV file of labels", kMaxFieldBytes >> 10));
    field_.push_back(c);
  }

  void end_line(char c) {
    if (c == '\r') skip_lf_ = true;
    ++line_;
    if (!record_empty_) {
      end_field();
      end_record();
    }
    state_ = State::FieldStart;
    record_empty_ = true;
    record_line_ = line_;
  }

  void end_field() {
    if (!header_done_ || field_index_ == column_index_)
      if (const auto at = invalid_utf8_at(field_))
        throw error(fmt::format("field {}: byte {} is not UTF-8; expected UTF-8 text", field_index_ + 1, *at + 1));
    if (!header_done_) {
      if (header_.size() >= kMaxColumns) throw error(fmt::format("more than {} columns in the header", kMaxColumns));
      header_.push_back(std::move(field_));
    } else if (field_index_ == column_index_) {
      label_.swap(field_);
    }
    field_.clear();
    ++field_index_;
    state_ = State::FieldStart;
  }

  void end_record() {
    if (!header_done_) {
      find_column();
    } else {
      if (field_index_ != column_count_)
        throw error(fmt::format("{} fields, but the header on line {} has {}: too {} fields (a comma inside a field "
                                "needs double quotes around the field)",
                                field_index_, header_line_, column_count_,
                                field_index_ < column_count_ ? "few" : "many"));
      if (label_.empty()) throw error(fmt::format("the label column '{}' is empty", column_));
      if (labels_.classes.size() >= kMaxLabels)
        throw error(fmt::format("more than {} labelled rows (each label is kept in memory)", kMaxLabels));
      labels_.classes.push_back(class_of(label_));
    }
    label_.clear();
    field_index_ = 0;
  }

  void find_column() {
    header_done_ = true;
    header_line_ = record_line_;
    column_count_ = header_.size();
    std::vector<std::size_t> matches;
    for (std::size_t i = 0; i < header_.size(); ++i)
      if (header_[i] == column_) matches.push_back(i);
    if (matches.size() > 1)
      throw error(fmt::format("the header names column '{}' more than once (fields {} and {})", column_, matches[0] + 1,
                              matches[1] + 1));
    if (matches.empty()) {
      std::string names;
      const std::size_t shown = std::min<std::size_t>(header_.size(), 20);
      for (std::size_t i = 0; i < shown; ++i) names += fmt::format("{}'{}'", i == 0 ? "" : ", ", header_[i]);
      if (shown < header_.size()) names += fmt::format(" and {} more", header_.size() - shown);
      throw error(fmt::format("no column '{}' in the header; its columns are {}", column_, names));
    }
    column_index_ = matches[0];
    header_.clear();
  }

  ClassIndex class_of(const std::string& label) {
    if (has_last_ && label == last_label_) return last_index_;
    auto it = index_of_.find(label);
    if (it == index_of_.end()) {
      if (index_of_.size() == kMaxClasses)
        throw error(
            fmt::format("more than {} distinct values in column '{}'; is it the label column?", kMaxClasses, column_));
      it = index_of_.emplace(label, static_cast<ClassIndex>(index_of_.size())).first;
    }
    last_label_ = label;
    last_index_ = it->second;
    has_last_ = true;
    return it->second;
  }

  /** Renumbers the classes in name order (they were numbered in order of first appearance). */
  void sort_classes() {
    std::vector<std::string> names(index_of_.size());
    for (auto& [name, index] : index_of_) names[index] = name;
    std::vector<std::size_t> order(names.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return names[a] < names[b]; });
    std::vector<ClassIndex> renumber(names.size());
    for (std::size_t rank = 0; rank < order.size(); ++rank) {
      renumber[order[rank]] = static_cast<ClassIndex>(rank);
      labels_.class_names.push_back(std::move(names[order[rank]]));
    }
    for (ClassIndex& c : labels_.classes) c = renumber[c];
  }

  std::string source_;
  std::string column_;
  char delimiter_;
  State state_ = State::FieldStart;
  bool skip_lf_ = false;     // the last line ended in CR: an LF right after it belongs to the same line end
  bool record_empty_ = true; // nothing but the line end seen on this row yet (blank lines are skipped)
  bool header_done_ = false;
  std::uint64_t line_ = 1;        // physical line being read
  std::uint64_t record_line_ = 1; // line where the current row starts
  std::uint64_t header_line_ = 1;
  std::size_t field_index_ = 0;
  std::size_t column_index_ = 0;
  std::size_t column_count_ = 0;
  std::vector<std::string> header_;
  std::string field_; // the field being read, when it is kept
  std::string label_; // the label field of the current row
  std::unordered_map<std::string, ClassIndex> index_of_;
  std::string last_label_;
  ClassIndex last_index_ = 0;
  bool has_last_ = false;
  Labels labels_;
};

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};

} // namespace

Labels read_label_csv(const std::filesystem::path& path, std::string_view column, char delimiter) {
  PARTSIM_CHECK(delimiter != '"' && delimiter != '\n' && delimiter != '\r') << "delimiter " << int{delimiter};
  const std::string source = path.string();
  const std::unique_ptr<std::FILE, FileCloser> file(std::fopen(source.c_str(), "rb"));
  if (!file) throw InputError(source, "", fmt::format("cannot open the label file: {}", std::strerror(errno)));
  LabelCsvParser parser(source, column, delimiter);
  std::vector<char> buffer(std::size_t{1} << 20);
  bool first = true;
  for (;;) {
    const std::size_t n = std::fread(buffer.data(), 1, buffer.size(), file.get());
    if (n == 0) {
      if (std::ferror(file.get()))
        throw InputError(source, "", fmt::format("cannot read the label file: {}", std::strerror(errno)));
      break;
    }
    std::size_t skip = 0;
    if (first && n >= 3 && std::memcmp(buffer.data(), "\xEF\xBB\xBF", 3) == 0) skip = 3; // UTF-8 byte-order mark
    first = false;
    parser.feed(buffer.data() + skip, n - skip);
  }
  return parser.finish();
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
