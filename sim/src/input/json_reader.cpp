// JsonReader: strict typed access with JSON-pointer error messages.
#include "partsim/input/json_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace partsim {

std::string Bounds::describe() const {
  const bool has_min = min > -1e308;
  const bool has_max = max < 1e308;
  if (has_min && has_max) return fmt::format("{} {:g} and <= {:g}", min_exclusive ? ">" : ">=", min, max);
  if (has_min) return fmt::format("{} {:g}", min_exclusive ? ">" : ">=", min);
  if (has_max) return fmt::format("<= {:g}", max);
  return "finite";
}

bool Bounds::contains(double value) const {
  if (!std::isfinite(value)) return false;
  if (min_exclusive ? value <= min : value < min) return false;
  return value <= max;
}

std::string escape_pointer_token(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

JsonReader::JsonReader(const nlohmann::json& value, std::string source, std::string pointer)
    : value_(&value), source_(std::move(source)), pointer_(std::move(pointer)) {}

JsonReader& JsonReader::use_schema(const Schema& schema) {
  schema_ = &schema;
  return *this;
}

JsonReader& JsonReader::use_kind(std::string kind) {
  kind_ = std::move(kind);
  return *this;
}

const FieldSpec* JsonReader::spec(std::string_view key) const {
  if (schema_ == nullptr) return nullptr;
  const std::string pattern = schema_pattern(child_pointer(key));
  const FieldSpec* entry = schema_->find(pattern, kind_);
  PARTSIM_CHECK(entry != nullptr) << "the schema has no entry for " << pattern << " (read in " << source_ << ")";
  return entry;
}

const FieldSpec& JsonReader::own_spec() const {
  PARTSIM_CHECK(schema_ != nullptr) << "a read by the schema without one, at " << pointer_;
  const std::string pattern = schema_pattern(pointer_);
  const FieldSpec* entry = schema_->find(pattern, kind_);
  PARTSIM_CHECK(entry != nullptr) << "the schema has no entry for " << pattern << " (read in " << source_ << ")";
  return *entry;
}

JsonReader JsonReader::derived(const nlohmann::json& value, std::string pointer, const FieldSpec* entry) const {
  JsonReader out(value, source_, std::move(pointer));
  if (schema_ != nullptr && entry != nullptr && !entry->opaque) {
    out.schema_ = schema_;
    out.kind_ = kind_;
  }
  return out;
}

namespace {

const FieldSpec& typed(const FieldSpec* entry, FieldType type, std::string_view key) {
  PARTSIM_CHECK(entry != nullptr) << "a read by the schema of " << key << " without a schema";
  PARTSIM_CHECK(entry->type == type || entry->type == FieldType::Forms)
      << "schema entry " << entry->pointer << " has another type than its read";
  return *entry;
}

Bounds bounds_of(const FieldSpec& entry) {
  return Bounds{entry.min, entry.max, entry.min_exclusive};
}

} // namespace

void JsonReader::check_integer_bounds(const FieldSpec* entry, std::int64_t min, std::int64_t max) const {
  if (entry == nullptr || entry->type != FieldType::Integer) return;
  PARTSIM_CHECK(min >= entry->int_min && max <= entry->int_max)
      << "bounds [" << min << ", " << max << "] of " << entry->pointer << " outside its schema entry's";
}

void JsonReader::check_bounds(const FieldSpec* entry, const Bounds& bounds) const {
  if (entry == nullptr || (entry->type != FieldType::Number && entry->type != FieldType::Quantity)) return;
  const bool min_ok =
      bounds.min > entry->min || (bounds.min == entry->min && (bounds.min_exclusive || !entry->min_exclusive));
  PARTSIM_CHECK(min_ok && bounds.max <= entry->max)
      << "bounds " << bounds.describe() << " of " << entry->pointer << " outside its schema entry's";
}

void JsonReader::check_fallback(const FieldSpec* entry, const nlohmann::json& fallback) const {
  if (entry == nullptr || !entry->default_value) return;
  PARTSIM_CHECK(*entry->default_value == fallback) << "fallback " << fallback.dump() << " of " << entry->pointer
                                                   << " is not its schema default " << entry->default_value->dump();
}

std::int64_t JsonReader::integer(std::string_view key) {
  const FieldSpec& entry = typed(spec(key), FieldType::Integer, key);
  if (!has(key) && entry.default_value) return entry.default_value->get<std::int64_t>();
  return child(key).as_integer(entry.int_min, entry.int_max);
}

std::int64_t JsonReader::integer_or(std::string_view key, std::int64_t fallback) {
  const FieldSpec& entry = typed(spec(key), FieldType::Integer, key);
  PARTSIM_CHECK(!entry.default_value) << entry.pointer << " has a schema default; read it with integer()";
  return has(key) ? child(key).as_integer(entry.int_min, entry.int_max) : fallback;
}

double JsonReader::number(std::string_view key) {
  const FieldSpec& entry = typed(spec(key), FieldType::Number, key);
  if (!has(key) && entry.default_value) return entry.default_value->get<double>();
  return child(key).as_number(bounds_of(entry));
}

double JsonReader::quantity(std::string_view key) {
  const FieldSpec& entry = typed(spec(key), FieldType::Quantity, key);
  if (!has(key) && entry.default_value) return entry.default_value->get<double>();
  return child(key).as_quantity(entry.dimension, bounds_of(entry));
}

double JsonReader::quantity_or(std::string_view key, double fallback) {
  const FieldSpec& entry = typed(spec(key), FieldType::Quantity, key);
  PARTSIM_CHECK(!entry.default_value) << entry.pointer << " has a schema default; read it with quantity()";
  return has(key) ? child(key).as_quantity(entry.dimension, bounds_of(entry)) : fallback;
}

double JsonReader::number_or(std::string_view key, double fallback) {
  const FieldSpec& entry = typed(spec(key), FieldType::Number, key);
  PARTSIM_CHECK(!entry.default_value) << entry.pointer << " has a schema default; read it with number()";
  return has(key) ? child(key).as_number(bounds_of(entry)) : fallback;
}

std::string JsonReader::choice(std::string_view key) {
  const FieldSpec& entry = typed(spec(key), FieldType::Choice, key);
  if (!has(key) && entry.default_value) return entry.default_value->get<std::string>();
  return choice(key, entry.choices);
}

bool JsonReader::boolean(std::string_view key) {
  const FieldSpec& entry = typed(spec(key), FieldType::Boolean, key);
  PARTSIM_CHECK(entry.default_value.has_value()) << entry.pointer << " needs a schema default";
  return boolean_or(key, entry.default_value->get<bool>());
}

std::int64_t JsonReader::as_integer() const {
  const FieldSpec& entry = own_spec();
  return as_integer(entry.int_min, entry.int_max);
}

double JsonReader::as_number() const {
  const FieldSpec& entry = own_spec();
  return as_number(bounds_of(entry));
}

InputError JsonReader::error(const std::string& message) const {
  return InputError(source_, pointer_.empty() ? "/" : pointer_, message);
}

std::string JsonReader::type_name() const {
  switch (value_->type()) {
  case nlohmann::json::value_t::null:
    return "null";
  case nlohmann::json::value_t::object:
    return "an object";
  case nlohmann::json::value_t::array:
    return "an array";
  case nlohmann::json::value_t::string:
    return fmt::format("the string \"{}\"", value_->get_ref<const std::string&>());
  case nlohmann::json::value_t::boolean:
    return value_->get<bool>() ? "true" : "false";
  case nlohmann::json::value_t::number_integer:
  case nlohmann::json::value_t::number_unsigned:
  case nlohmann::json::value_t::number_float:
    return fmt::format("{}", value_->dump());
  default:
    return "a binary value";
  }
}

std::string JsonReader::child_pointer(std::string_view key) const {
  return pointer_ + "/" + escape_pointer_token(key);
}

void JsonReader::expect_object() const {
  if (!value_->is_object()) throw error("expected an object, got " + type_name());
}

bool JsonReader::has(std::string_view key) {
  expect_object();
  (void)spec(key); // under a schema, every key asked for has an entry
  known_keys_.emplace(key);
  return value_->contains(key);
}

JsonReader JsonReader::child(std::string_view key) {
  if (!has(key)) throw InputError(source_, child_pointer(key), "required key is missing");
  return derived(value_->find(key).value(), child_pointer(key), spec(key));
}

std::optional<JsonReader> JsonReader::optional_child(std::string_view key) {
  if (!has(key)) return std::nullopt;
  return child(key);
}

std::int64_t JsonReader::integer(std::string_view key, std::int64_t min, std::int64_t max) {
  check_integer_bounds(spec(key), min, max);
  return child(key).as_integer(min, max);
}

std::int64_t JsonReader::integer_or(std::string_view key, std::int64_t fallback, std::int64_t min, std::int64_t max) {
  check_fallback(spec(key), fallback);
  return has(key) ? integer(key, min, max) : fallback;
}

double JsonReader::number(std::string_view key, const Bounds& bounds) {
  check_bounds(spec(key), bounds);
  return child(key).as_number(bounds);
}

double JsonReader::number_or(std::string_view key, double fallback, const Bounds& bounds) {
  check_fallback(spec(key), fallback);
  return has(key) ? number(key, bounds) : fallback;
}

double JsonReader::quantity(std::string_view key, Dimension dimension, const Bounds& bounds) {
  check_bounds(spec(key), bounds);
  return child(key).as_quantity(dimension, bounds);
}

double JsonReader::quantity_or(std::string_view key, double fallback, Dimension dimension, const Bounds& bounds) {
  check_fallback(spec(key), fallback);
  return has(key) ? quantity(key, dimension, bounds) : fallback;
}

std::string JsonReader::string(std::string_view key) {
  if (const FieldSpec* entry = spec(key); entry != nullptr && entry->default_value && !has(key))
    return entry->default_value->get<std::string>();
  return child(key).as_string();
}

std::string JsonReader::string_or(std::string_view key, std::string fallback) {
  check_fallback(spec(key), fallback);
  return has(key) ? string(key) : fallback;
}

std::string JsonReader::choice(std::string_view key, const std::vector<std::string>& allowed) {
  if (const FieldSpec* entry = spec(key)) {
    for (const std::string& option : allowed)
      PARTSIM_CHECK(std::find(entry->choices.begin(), entry->choices.end(), option) != entry->choices.end())
          << "choice " << option << " of " << entry->pointer << " is not in its schema entry";
  }
  JsonReader reader = child(key);
  std::string text = reader.as_string();
  for (const std::string& option : allowed)
    if (option == text) return text;
  throw reader.error(fmt::format("expected one of {}, got \"{}\"", fmt::join(allowed, ", "), text));
}

std::string JsonReader::choice_or(std::string_view key, std::string fallback, const std::vector<std::string>& allowed) {
  check_fallback(spec(key), fallback);
  return has(key) ? choice(key, allowed) : fallback;
}

bool JsonReader::boolean_or(std::string_view key, bool fallback) {
  check_fallback(spec(key), fallback);
  if (!has(key)) return fallback;
  JsonReader reader = child(key);
  if (!reader.value().is_boolean()) throw reader.error("expected true or false, got " + reader.type_name());
  return reader.value().get<bool>();
}

void JsonReader::finish() const {
  expect_object();
  for (const auto& [key, _] : value_->items()) {
    if (known_keys_.contains(key)) continue;
    throw InputError(source_, child_pointer(key),
                     fmt::format("unknown key; expected one of {}", fmt::join(known_keys_, ", ")));
  }
}

std::int64_t JsonReader::as_integer(std::int64_t min, std::int64_t max) const {
  if (schema_ != nullptr) check_integer_bounds(&own_spec(), min, max);
  const std::string expected = fmt::format("an integer >= {} and <= {}", min, max);
  if (value_->is_number_integer()) {
    if (value_->is_number_unsigned() && value_->get<std::uint64_t>() > static_cast<std::uint64_t>(max))
      throw error(fmt::format("expected {}, got {}", expected, value_->dump()));
    const std::int64_t v = value_->get<std::int64_t>();
    if (v < min || v > max) throw error(fmt::format("expected {}, got {}", expected, v));
    return v;
  }
  if (value_->is_number_float()) {
    // Compare in doubles only where they are exact: 2^63 is the first double past INT64_MAX (which rounds up to it).
    const double v = value_->get<double>();
    constexpr double kTwo63 = 9223372036854775808.0;
    if (std::isfinite(v) && std::floor(v) == v && v >= -kTwo63 && v < kTwo63) {
      const auto i = static_cast<std::int64_t>(v);
      if (i >= min && i <= max) return i;
      throw error(fmt::format("expected {}, got {}", expected, value_->dump()));
    }
  }
  throw error(fmt::format("expected {}, got {}", expected, type_name()));
}

double JsonReader::as_number(const Bounds& bounds) const {
  if (schema_ != nullptr) check_bounds(&own_spec(), bounds);
  if (!value_->is_number()) throw error(fmt::format("expected a number {}, got {}", bounds.describe(), type_name()));
  const double v = value_->get<double>();
  if (!bounds.contains(v)) throw error(fmt::format("expected a number {}, got {}", bounds.describe(), value_->dump()));
  return v;
}

double JsonReader::as_quantity(Dimension dimension, const Bounds& bounds) const {
  if (schema_ != nullptr) check_bounds(&own_spec(), bounds);
  double v = 0.0;
  if (value_->is_number()) {
    v = value_->get<double>();
  } else if (value_->is_string()) {
    try {
      v = parse_quantity(value_->get_ref<const std::string&>(), dimension);
    } catch (const std::invalid_argument& e) {
      throw error(e.what());
    }
  } else {
    throw error(fmt::format("expected a quantity in {} (a number, or a string with a unit such as \"{}\"), got {}",
                            si_unit(dimension),
                            dimension == Dimension::Time        ? "2us"
                            : dimension == Dimension::Bandwidth ? "25GBps"
                            : dimension == Dimension::Bytes     ? "80GB"
                            : dimension == Dimension::FlopRate  ? "312TFLOPs"
                                                                : "1GFLOP",
                            type_name()));
  }
  const std::string given = value_->is_string() ? value_->get<std::string>() : value_->dump();
  if (!bounds.contains(v))
    throw error(fmt::format("expected a quantity {} {}, got {}", bounds.describe(), si_unit(dimension), given));
  const PhysicalRange range = physical_range(dimension);
  if (v != 0.0 && (std::abs(v) < range.smallest || std::abs(v) > range.largest))
    throw error(fmt::format("expected a quantity {} {} that a real machine can have (0, or {:g} to {:g} {}), got {}",
                            bounds.describe(), si_unit(dimension), range.smallest, range.largest, si_unit(dimension),
                            given));
  return v;
}

std::string JsonReader::as_string() const {
  if (!value_->is_string()) throw error("expected a string, got " + type_name());
  return value_->get<std::string>();
}

std::vector<JsonReader> JsonReader::elements(std::size_t min_size, std::size_t max_size) const {
  if (!value_->is_array())
    throw error(fmt::format("expected an array of {} to {} elements, got {}", min_size, max_size, type_name()));
  if (value_->size() < min_size || value_->size() > max_size)
    throw error(fmt::format("expected an array of {} to {} elements, got {}", min_size, max_size, value_->size()));
  const FieldSpec* entry = nullptr;
  if (schema_ != nullptr) {
    const std::string pattern = schema_pattern(pointer_) + "/*";
    entry = schema_->find(pattern, kind_);
    PARTSIM_CHECK(entry != nullptr) << "the schema has no entry for " << pattern << " (read in " << source_ << ")";
  }
  std::vector<JsonReader> out;
  out.reserve(value_->size());
  for (std::size_t i = 0; i < value_->size(); ++i)
    out.push_back(derived((*value_)[i], pointer_ + "/" + std::to_string(i), entry));
  return out;
}

} // namespace partsim
