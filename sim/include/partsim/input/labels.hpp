// Class labels of a data set, one compact class index per sample: read from a CSV column or generated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace partsim {

/** Index of a class in Labels::class_names. */
using ClassIndex = std::uint16_t;

/** The most distinct classes a label column may hold (a column with more is probably not a label column). */
inline constexpr std::size_t kMaxClasses = 65536;
/** Most labels kept in memory (2 bytes each), read from a CSV file or generated. */
inline constexpr std::uint64_t kMaxLabels = 2'000'000'000;

/** The labels of a data set: class names plus one class index per sample, in sample order.
 *
 * Two bytes a sample, so ten million labels take 20 MB. Invariant: every index is below
 * `class_names.size()`. */
struct Labels {
  std::vector<std::string> class_names; ///< sorted by name (byte order); generated labels: {"0", "1"}
  std::vector<ClassIndex> classes;      ///< class of each sample
  std::string source;                   ///< the CSV path, or a description of the generator and its seed

  std::size_t size() const { return classes.size(); }
  std::size_t class_count() const { return class_names.size(); }
  /** Samples per class, indexed like class_names. */
  std::vector<std::uint64_t> class_totals() const;
  /** The index of the class named `name`, if there is one. */
  std::optional<std::size_t> find_class(std::string_view name) const;
};

/** Reads the label column `column` of a CSV file, streaming: only the labels are kept, so files of
 * millions of rows are read in seconds in little memory.
 *
 * The first row is the header and must name `column`. Fields follow RFC 4180: a field in double quotes
 * may hold the delimiter, line breaks and doubled quotes (`""` for `"`); lines end in LF, CRLF or CR;
 * a UTF-8 byte-order mark is skipped; blank lines are skipped. Every row must have as many fields as the
 * header and a non-empty label. Class names are sorted, so class indices do not depend on row order.
 *
 * @throws InputError naming the file, and `line N` where a row is at fault: a file that cannot be opened
 *   or read, an empty file, a header without `column` (the message lists the columns), a row with too few
 *   or too many fields, an empty label, a quote left open, text after a closing quote, no data rows, or
 *   more than kMaxClasses distinct labels. */
Labels read_label_csv(const std::filesystem::path& path, std::string_view column, char delimiter = ',');

/** Generates binary labels: each of `samples` samples is positive (class "1") with probability
 * `positive_rate`, independently, from xoshiro256** seeded with `seed`; the rest are class "0".
 *
 * The same seed gives the same labels on every platform. Both classes are always listed, even when one
 * has no samples.
 * @pre samples > 0 and 0 <= positive_rate <= 1 (the scenario reader checks these and names the JSON path). */
Labels generate_labels(std::uint64_t samples, double positive_rate, std::uint64_t seed);

} // namespace partsim
