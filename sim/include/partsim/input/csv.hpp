// A streaming RFC 4180 CSV reader that keeps only the named columns of each row (label files, arrival traces).
#pragma once

#include "partsim/common/error.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace partsim {

/** One data row as read_csv_columns hands it over: the physical line it starts on and the fields of the columns asked
 * for, in the order asked (an empty string for an empty field). Valid during the call only. */
struct CsvRow {
  std::uint64_t line = 0;
  const std::vector<std::string>& fields;
};

/** What read_csv_columns throws when the header lacks one of the columns asked for: which one (its index in
 * `columns`), so that a caller can name the scenario key that asked for it. */
class CsvMissingColumn : public InputError {
 public:
  CsvMissingColumn(const InputError& error, std::size_t column) : InputError(error), column_(column) {}
  std::size_t column() const { return column_; }

 private:
  std::size_t column_;
};

/** Reads the columns named `columns` of the CSV file `path`, streaming: only those fields of one row are kept at a
 * time, so files of millions of rows are read in seconds in little memory. `row` is called for every data row, in file
 * order; it may throw (an InputError naming the line, see csv_error).
 *
 * The first row is the header and must name every column of `columns`, each once. Fields follow RFC 4180: a field in
 * double quotes may hold the delimiter, line breaks and doubled quotes (`""` for `"`); lines end in LF, CRLF or CR; a
 * UTF-8 byte-order mark is skipped; blank lines are skipped. Every row must have as many fields as the header. `what`
 * names the file's role in messages ("label file", "arrival trace").
 *
 * @returns the data rows read.
 * @throws InputError naming the file, and `line N` where a row is at fault: a file that cannot be opened or read, an
 *   empty file (the message names `columns`), a header without one of them (CsvMissingColumn; the message lists the
 *   header's columns) or
 *   naming one twice, a row with too few or too many fields, a quote left open, text after a closing quote, a field
 *   that is not UTF-8 or longer than 64 KiB. */
std::uint64_t read_csv_columns(const std::filesystem::path& path, const std::vector<std::string>& columns,
                               const std::function<void(const CsvRow&)>& row, std::string_view what,
                               char delimiter = ',');

/** `path` as a scenario file names it: relative to the folder of `source` (the scenario file), kept as it is when
 * absolute or when `source` has no folder or is not a file ("<built-in default>"). */
std::filesystem::path path_from_scenario(const std::string& source, const std::filesystem::path& path);

/** An InputError for `path` at `line`: "line N: message". */
InputError csv_error(const std::filesystem::path& path, std::uint64_t line, const std::string& message);

} // namespace partsim
