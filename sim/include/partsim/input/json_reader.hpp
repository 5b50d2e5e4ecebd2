// Strict, pointer-aware reading of JSON input: every value read names its JSON pointer in errors,
// and keys that nobody asked for are reported as unknown.
#pragma once

#include "partsim/common/enum_names.hpp"
#include "partsim/common/error.hpp"
#include "partsim/input/units.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace partsim {

/** Closed or half-open numeric range for validation. */
struct Bounds {
  double min = -1e308;
  double max = 1e308;
  bool min_exclusive = false; ///< true: value must be > min (e.g. a bandwidth)

  static Bounds positive(double max = 1e308) { return {0.0, max, true}; }
  static Bounds non_negative(double max = 1e308) { return {0.0, max, false}; }
  static Bounds closed(double min, double max) { return {min, max, false}; }
  std::string describe() const;
  bool contains(double value) const;
};

/** A view of one JSON value with its source and pointer; reads children strictly.
 *
 * Object readers remember which keys were read; `finish()` rejects the rest as unknown keys. Copies
 * share nothing: read an object through one reader, then call finish() on it. */
class JsonReader {
 public:
  JsonReader(const nlohmann::json& value, std::string source, std::string pointer = "");

  const nlohmann::json& value() const { return *value_; }
  const std::string& source() const { return source_; }
  const std::string& pointer() const { return pointer_; }

  /** An InputError located at this value. */
  InputError error(const std::string& message) const;
  /** Describes the JSON type of this value for messages: "a string", "an array", ... */
  std::string type_name() const;

  // --- objects -----------------------------------------------------------------------------------
  /** Fails unless this value is an object. */
  void expect_object() const;
  bool has(std::string_view key);
  JsonReader child(std::string_view key);
  std::optional<JsonReader> optional_child(std::string_view key);

  std::int64_t integer(std::string_view key, std::int64_t min, std::int64_t max);
  std::int64_t integer_or(std::string_view key, std::int64_t fallback, std::int64_t min, std::int64_t max);
  double number(std::string_view key, const Bounds& bounds);
  double number_or(std::string_view key, double fallback, const Bounds& bounds);
  /** A number in SI units or a string with a unit ("25GBps"). */
  double quantity(std::string_view key, Dimension dimension, const Bounds& bounds);
  double quantity_or(std::string_view key, double fallback, Dimension dimension, const Bounds& bounds);
  std::string string(std::string_view key);
  std::string string_or(std::string_view key, std::string fallback);
  /** A string that must be one of `allowed`. */
  std::string choice(std::string_view key, const std::vector<std::string>& allowed);
  std::string choice_or(std::string_view key, std::string fallback, const std::vector<std::string>& allowed);
  bool boolean_or(std::string_view key, bool fallback);
  /** A string naming a value of enum E (its EnumNames table). */
  template <NamedEnum E>
  E enum_choice(std::string_view key) {
    return *enum_value<E>(choice(key, enum_names<E>()));
  }
  template <NamedEnum E>
  E enum_choice_or(std::string_view key, E fallback) {
    return has(key) ? enum_choice<E>(key) : fallback;
  }
  /** "auto" (or no key): nullopt, to be chosen later; else a value of enum E. */
  template <NamedEnum E>
  std::optional<E> auto_or_enum_choice(std::string_view key) {
    std::vector<std::string> allowed{"auto"};
    for (std::string& name : enum_names<E>()) allowed.push_back(std::move(name));
    const std::string text = choice_or(key, "auto", allowed);
    return text == "auto" ? std::nullopt : enum_value<E>(text);
  }

  /** Rejects keys of this object that were never asked for. */
  void finish() const;

  // --- this value --------------------------------------------------------------------------------
  std::int64_t as_integer(std::int64_t min, std::int64_t max) const;
  double as_number(const Bounds& bounds) const;
  double as_quantity(Dimension dimension, const Bounds& bounds) const;
  std::string as_string() const;
  /** Elements of an array value, each with its own pointer. */
  std::vector<JsonReader> elements(std::size_t min_size, std::size_t max_size) const;

 private:
  std::string child_pointer(std::string_view key) const;

  const nlohmann::json* value_;
  std::string source_;
  std::string pointer_;
  std::set<std::string, std::less<>> known_keys_;
};

/** Escapes a key for use in a JSON pointer (RFC 6901: ~ as ~0, / as ~1). */
std::string escape_pointer_token(std::string_view key);

} // namespace partsim
