// JsonReader: strict typed access with JSON-pointer error messages.
#include "partsim/input/json_reader.hpp"

#include <fmt/format.h>

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
  known_keys_.emplace(key);
  return value_->contains(key);
}

JsonReader JsonReader::child(std::string_view key) {
  if (!has(key)) throw InputError(source_, child_pointer(key), "required key is missing");
  return JsonReader(value_->find(key).value(), source_, child_pointer(key));
}

std::optional<JsonReader> JsonReader::optional_child(std::string_view key) {
  if (!has(key)) return std::nullopt;
  return child(key);
}

std::int64_t JsonReader::integer(std::string_view key, std::int64_t min, std::int64_t max) {
  return child(key).as_integer(min, max);
}

std::int64_t JsonReader::integer_or(std::string_view key, std::int64_t fallback, std::int64_t min, std::int64_t max) {
  return has(key) ? integer(key, min, max) : fallback;
}

double JsonReader::number(std::string_view key, const Bounds& bounds) {
  return child(key).as_number(bounds);
}

double JsonReader::number_or(std::string_view key, double fallback, const Bounds& bounds) {
  return has(key) ? number(key, bounds) : fallback;
}

double JsonReader::quantity(std::string_view key, Dimension dimension, const Bounds& bounds) {
  return child(key).as_quantity(dimension, bounds);
}

double JsonReader::quantity_or(std::string_view key, double fallback, Dimension dimension, const Bounds& bounds) {
  return has(key) ? quantity(key, dimension, bounds) : fallback;
}

std::string JsonReader::string(std::string_view key) {
  return child(key).as_string();
}

std::string JsonReader::string_or(std::string_view key, std::string fallback) {
  return has(key) ? string(key) : fallback;
}

std::string JsonReader::choice(std::string_view key, const std::vector<std::string>& allowed) {
  JsonReader reader = child(key);
  std::string text = reader.as_string();
  for (const std::string& option : allowed)
    if (option == text) return text;
  throw reader.error(fmt::format("expected one of {}, got \"{}\"", fmt::join(allowed, ", "), text));
}

std::string JsonReader::choice_or(std::string_view key, std::string fallback, const std::vector<std::string>& allowed) {
  return has(key) ? choice(key, allowed) : fallback;
}

bool JsonReader::boolean_or(std::string_view key, bool fallback) {
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
  if (!value_->is_number()) throw error(fmt::format("expected a number {}, got {}", bounds.describe(), type_name()));
  const double v = value_->get<double>();
  if (!bounds.contains(v)) throw error(fmt::format("expected a number {}, got {}", bounds.describe(), value_->dump()));
  return v;
}

double JsonReader::as_quantity(Dimension dimension, const Bounds& bounds) const {
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
  std::vector<JsonReader> out;
  out.reserve(value_->size());
  for (std::size_t i = 0; i < value_->size(); ++i)
    out.emplace_back((*value_)[i], source_, pointer_ + "/" + std::to_string(i));
  return out;
}

} // namespace partsim
