// Field schemas: lookup by pointer pattern and kind, and the words of the reference tables.
#include "partsim/input/field_schema.hpp"

#include "partsim/common/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace partsim {

std::string schema_pattern(std::string_view pointer) {
  std::string out;
  std::size_t at = 0;
  while (at < pointer.size()) {
    const std::size_t next = pointer.find('/', at + 1);
    const std::string_view token = pointer.substr(at + 1, next == std::string_view::npos ? next : next - at - 1);
    const bool index = !token.empty() && token.find_first_not_of("0123456789") == std::string_view::npos;
    out += '/';
    out += index ? std::string_view("*") : token;
    if (next == std::string_view::npos) break;
    at = next;
  }
  return out;
}

Schema::Schema(std::vector<FieldSpec> fields) : fields_(std::move(fields)) {
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    const FieldSpec& f = fields_[i];
    for (auto [it, end] = by_pointer_.equal_range(f.pointer); it != end; ++it) {
      const FieldSpec& other = fields_[it->second];
      PARTSIM_CHECK(!other.kinds.empty() && !f.kinds.empty()) << "schema: " << f.pointer << " given twice";
      for (const std::string& kind : f.kinds)
        PARTSIM_CHECK(std::find(other.kinds.begin(), other.kinds.end(), kind) == other.kinds.end())
            << "schema: " << f.pointer << " given twice for kind " << kind;
    }
    by_pointer_.emplace(f.pointer, i);
  }
}

const FieldSpec* Schema::find(std::string_view pattern, std::string_view kind) const {
  const FieldSpec* any = nullptr;
  for (auto [it, end] = by_pointer_.equal_range(pattern); it != end; ++it) {
    const FieldSpec& f = fields_[it->second];
    if (f.kinds.empty()) any = &f;
    for (const std::string& k : f.kinds)
      if (k == kind) return &f;
  }
  if (any != nullptr) return any;
  // A pointer with entries for other kinds only: the first, so that a refused key still has its entry.
  const auto it = by_pointer_.find(pattern);
  return it == by_pointer_.end() ? nullptr : &fields_[it->second];
}

bool Schema::inside_opaque(std::string_view pattern) const {
  for (std::size_t cut = pattern.rfind('/'); cut != std::string_view::npos && cut > 0;
       cut = pattern.rfind('/', cut - 1)) {
    const auto it = by_pointer_.find(pattern.substr(0, cut));
    if (it != by_pointer_.end() && fields_[it->second].opaque) return true;
  }
  return false;
}

namespace {

/** 65,536; 10^15; 2^63-1 */
std::string integer_words(std::int64_t v) {
  if (v == std::numeric_limits<std::int64_t>::max()) return "2^63-1";
  if (v >= 1'000'000) {
    int k = 0;
    std::int64_t p = 1;
    while (p < v && k < 18) {
      p *= 10;
      ++k;
    }
    if (p == v) return fmt::format("10^{}", k);
  }
  std::string digits = std::to_string(v < 0 ? -v : v);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

std::string number_words(double v) {
  if (v != 0.0 && std::abs(v) < 1e300) {
    const double k = std::round(std::log10(std::abs(v)));
    if (std::abs(k) >= 3 && std::abs(v - std::pow(10.0, k)) <= 1e-9 * std::abs(v))
      return fmt::format("{}10^{}", v < 0 ? "-" : "", static_cast<int>(k));
  }
  if (v == std::floor(v) && std::abs(v) < 1e6) return integer_words(static_cast<std::int64_t>(v));
  return fmt::format("{:g}", v);
}

std::string quoted_list(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += fmt::format("{}`{}`", i == 0 ? "" : ", ", items[i]);
  return out;
}

} // namespace

std::string describe_type(const FieldSpec& f) {
  if (!f.type_doc.empty()) return f.type_doc;
  switch (f.type) {
  case FieldType::Integer:
    return "integer";
  case FieldType::Number:
    return "number";
  case FieldType::Quantity:
    return "quantity";
  case FieldType::String:
  case FieldType::Choice:
    return "string";
  case FieldType::Boolean:
    return "boolean";
  case FieldType::Object:
    return "object";
  case FieldType::Array:
    return "array";
  case FieldType::Forms:
    return "several forms";
  }
  return "";
}

std::string describe_allowed(const FieldSpec& f) {
  std::string range;
  if (f.type == FieldType::Integer) {
    if (f.int_min == f.int_max)
      range = fmt::format("`{}`", f.int_min);
    else if (f.int_max == std::numeric_limits<std::int64_t>::max() && f.int_min == 1)
      range = ">= 1";
    else
      range = fmt::format("{} to {}", integer_words(f.int_min), integer_words(f.int_max));
  } else if (f.type == FieldType::Number || f.type == FieldType::Quantity) {
    const bool bounded = f.max < 1e308;
    if (f.min_exclusive)
      range = bounded ? fmt::format("> {}, at most {}", number_words(f.min), number_words(f.max))
                      : fmt::format("> {}", number_words(f.min));
    else
      range = bounded ? fmt::format("{} to {}", number_words(f.min), number_words(f.max))
                      : fmt::format("at least {}", number_words(f.min));
  } else if (f.type == FieldType::Choice || (f.type == FieldType::Forms && !f.choices.empty())) {
    range = quoted_list(f.choices);
  } else if (!f.library.empty()) {
    range = fmt::format("a file name in `models/{}` (without `.json`)", f.library);
  }
  if (f.allowed_doc.empty()) return range;
  if (range.empty()) return f.allowed_doc;
  return range + "; " + f.allowed_doc;
}

std::string describe_default(const FieldSpec& f) {
  if (!f.default_doc.empty()) return f.default_doc;
  if (!f.default_value) return "required";
  return fmt::format("`{}`", f.default_value->dump());
}

std::string describe_unit(const FieldSpec& f) {
  if (!f.unit_doc.empty()) return f.unit_doc;
  return f.type == FieldType::Quantity ? std::string(si_unit(f.dimension)) : "";
}

} // namespace partsim
