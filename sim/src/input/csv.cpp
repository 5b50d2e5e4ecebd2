// A streaming RFC 4180 CSV reader that keeps only the named columns of each row.
#include "partsim/input/csv.hpp"

#include "partsim/common/error.hpp"
#include "partsim/common/text.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace partsim {

namespace {

constexpr std::size_t kMaxFieldBytes = std::size_t{64} << 10;
constexpr std::size_t kMaxColumns = 100'000;
constexpr std::size_t kNotKept = static_cast<std::size_t>(-1);

/** A CSV state machine fed in chunks: keeps the header, then the asked-for fields of the current row. */
class CsvParser {
 public:
  CsvParser(std::string source, const std::vector<std::string>& columns, const std::function<void(const CsvRow&)>& row,
            std::string_view what, char delimiter)
      : source_(std::move(source)), columns_(columns), row_(row), what_(what), delimiter_(delimiter),
        kept_(columns.size()) {}

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

  std::uint64_t finish() {
    if (state_ == State::Quoted)
      throw error("a quoted field that starts on this line is not closed before the end of the file");
    if (!record_empty_) {
      end_field();
      end_record();
    }
    if (!header_done_) {
      std::string names;
      for (std::size_t i = 0; i < columns_.size(); ++i) names += fmt::format("{}'{}'", i == 0 ? "" : ", ", columns_[i]);
      throw InputError(source_, "", fmt::format("the file is empty; expected a header row naming {}", names));
    }
    return rows_;
  }

 private:
  enum class State { FieldStart, Unquoted, Quoted, QuoteInQuoted };

  InputError error(const std::string& message) const {
    return InputError(source_, "", fmt::format("line {}: {}", record_line_, message));
  }

  bool keeping() const { return !header_done_ || (field_index_ < slot_.size() && slot_[field_index_] != kNotKept); }

  void append(char c) {
    if (!keeping()) return;
    // What is kept is bounded: a file without line ends (/dev/zero) is refused, not read into memory.
    if (field_.size() >= kMaxFieldBytes)
      throw error(fmt::format("a field longer than {} KiB; expected a CSV {}", kMaxFieldBytes >> 10, what_));
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
    if (keeping())
      if (const auto at = invalid_utf8_at(field_))
        throw error(fmt::format("field {}: byte {} is not UTF-8; expected UTF-8 text", field_index_ + 1, *at + 1));
    if (!header_done_) {
      if (header_.size() >= kMaxColumns) throw error(fmt::format("more than {} columns in the header", kMaxColumns));
      header_.push_back(std::move(field_));
    } else if (keeping()) {
      kept_[slot_[field_index_]].swap(field_);
    }
    field_.clear();
    ++field_index_;
    state_ = State::FieldStart;
  }

  void end_record() {
    if (!header_done_) {
      find_columns();
    } else {
      if (field_index_ != column_count_)
        throw error(fmt::format("{} fields, but the header on line {} has {}: too {} fields (a comma inside a field "
                                "needs double quotes around the field)",
                                field_index_, header_line_, column_count_,
                                field_index_ < column_count_ ? "few" : "many"));
      ++rows_;
      row_(CsvRow{record_line_, kept_});
      for (std::string& f : kept_) f.clear();
    }
    field_index_ = 0;
  }

  void find_columns() {
    header_done_ = true;
    header_line_ = record_line_;
    column_count_ = header_.size();
    slot_.assign(header_.size(), kNotKept);
    for (std::size_t k = 0; k < columns_.size(); ++k) {
      const std::string& column = columns_[k];
      std::vector<std::size_t> matches;
      for (std::size_t i = 0; i < header_.size(); ++i)
        if (header_[i] == column) matches.push_back(i);
      if (matches.size() > 1)
        throw error(fmt::format("the header names column '{}' more than once (fields {} and {})", column,
                                matches[0] + 1, matches[1] + 1));
      if (matches.empty()) {
        std::string names;
        const std::size_t shown = std::min<std::size_t>(header_.size(), 20);
        for (std::size_t i = 0; i < shown; ++i) names += fmt::format("{}'{}'", i == 0 ? "" : ", ", header_[i]);
        if (shown < header_.size()) names += fmt::format(" and {} more", header_.size() - shown);
        throw CsvMissingColumn(error(fmt::format("no column '{}' in the header; its columns are {}", column, names)),
                               k);
      }
      slot_[matches[0]] = k;
    }
    header_.clear();
  }

  std::string source_;
  const std::vector<std::string>& columns_;
  const std::function<void(const CsvRow&)>& row_;
  std::string what_;
  char delimiter_;
  State state_ = State::FieldStart;
  bool skip_lf_ = false;     // the last line ended in CR: an LF right after it belongs to the same line end
  bool record_empty_ = true; // nothing but the line end seen on this row yet (blank lines are skipped)
  bool header_done_ = false;
  std::uint64_t line_ = 1;        // physical line being read
  std::uint64_t record_line_ = 1; // line where the current row starts
  std::uint64_t header_line_ = 1;
  std::uint64_t rows_ = 0;
  std::size_t field_index_ = 0;
  std::size_t column_count_ = 0;
  std::vector<std::string> header_;
  std::vector<std::size_t> slot_; // by header field: its index in columns_, or kNotKept
  std::string field_;             // the field being read, when it is kept
  std::vector<std::string> kept_; // the current row's fields of columns_
};

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};

} // namespace

std::uint64_t read_csv_columns(const std::filesystem::path& path, const std::vector<std::string>& columns,
                               const std::function<void(const CsvRow&)>& row, std::string_view what, char delimiter) {
  PARTSIM_CHECK(delimiter != '"' && delimiter != '\n' && delimiter != '\r') << "delimiter " << int{delimiter};
  const std::string source = path.string();
  const std::unique_ptr<std::FILE, FileCloser> file(std::fopen(source.c_str(), "rb"));
  if (!file) throw InputError(source, "", fmt::format("cannot open the {}: {}", what, std::strerror(errno)));
  CsvParser parser(source, columns, row, what, delimiter);
  std::vector<char> buffer(std::size_t{1} << 20);
  bool first = true;
  for (;;) {
    const std::size_t n = std::fread(buffer.data(), 1, buffer.size(), file.get());
    if (n == 0) {
      if (std::ferror(file.get()))
        throw InputError(source, "", fmt::format("cannot read the {}: {}", what, std::strerror(errno)));
      break;
    }
    std::size_t skip = 0;
    if (first && n >= 3 && std::memcmp(buffer.data(), "\xEF\xBB\xBF", 3) == 0) skip = 3; // UTF-8 byte-order mark
    first = false;
    parser.feed(buffer.data() + skip, n - skip);
  }
  return parser.finish();
}

std::filesystem::path path_from_scenario(const std::string& source, const std::filesystem::path& path) {
  if (path.is_relative() && std::filesystem::path(source).has_parent_path() && !source.empty() && source[0] != '<')
    return std::filesystem::path(source).parent_path() / path;
  return path;
}

InputError csv_error(const std::filesystem::path& path, std::uint64_t line, const std::string& message) {
  return InputError(path.string(), "", fmt::format("line {}: {}", line, message));
}

} // namespace partsim
