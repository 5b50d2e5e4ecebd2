// Strict, pointer-aware reading of JSON input: every value read names its JSON pointer in errors,
// and keys that nobody asked for are reported as unknown.
#pragma once

#include "partsim/common/enum_names.hpp"
#include "partsim/common/error.hpp"
#include "partsim/input/field_schema.hpp"
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

  // --- schema ------------------------------------------------------------------------------------
  /** Reads this value and everything under it through `schema` (children and elements inherit it, except under an
   * opaque entry): every key asked for must have an entry (a broken invariant otherwise), the reads without bounds
   * take the entry's range, choices and default, and the reads with bounds may only narrow the entry's. */
  JsonReader& use_schema(const Schema& schema);
  /** The kind (of workload or strategy) whose entries apply under this value; children inherit it. */
  JsonReader& use_kind(std::string kind);
  /** The schema entry of `key` under this value, or nullptr without a schema. */
  const FieldSpec* spec(std::string_view key) const;

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

  // Reads by the schema: range, choices and default from the key's entry (a key without a default is required).
  std::int64_t integer(std::string_view key);
  double number(std::string_view key);
  double quantity(std::string_view key);
  std::string choice(std::string_view key);
  bool boolean(std::string_view key);
  // Reads by the schema with a default that depends on other fields (the entry has none, its default_doc says it).
  std::int64_t integer_or(std::string_view key, std::int64_t fallback);
  double quantity_or(std::string_view key, double fallback);
  double number_or(std::string_view key, double fallback);

  // Reads with explicit bounds (under a schema, they may only narrow the entry's).
  std::int64_t integer(std::string_view key, std::int64_t min, std::int64_t max);
  std::int64_t integer_or(std::string_view key, std::int64_t fallback, std::int64_t min, std::int64_t max);
  double number(std::string_view key, const Bounds& bounds);
  double number_or(std::string_view key, double fallback, const Bounds& bounds);
  /** A number in SI units or a string with a unit ("25GBps"). */
  double quantity(std::string_view key, Dimension dimension, const Bounds& bounds);
  double quantity_or(std::string_view key, double fallback, Dimension dimension, const Bounds& bounds);
  /** A string; under a schema, absent: the entry's default (required without one). */
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
    check_fallback(spec(key), nlohmann::json(std::string(enum_name(fallback))));
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
  /** This value by its own schema entry's range. */
  std::int64_t as_integer() const;
  double as_number() const;
  double as_number(const Bounds& bounds) const;
  double as_quantity(Dimension dimension, const Bounds& bounds) const;
  std::string as_string() const;
  /** Elements of an array value, each with its own pointer. */
  std::vector<JsonReader> elements(std::size_t min_size, std::size_t max_size) const;

 private:
  std::string child_pointer(std::string_view key) const;
  /** A reader of `value` at `pointer` with this reader's schema and kind unless `entry` is opaque. */
  JsonReader derived(const nlohmann::json& value, std::string pointer, const FieldSpec* entry) const;
  const FieldSpec& own_spec() const;
  /** Under a schema: explicit bounds or a fallback given by the parser must agree with the key's entry. */
  void check_integer_bounds(const FieldSpec* entry, std::int64_t min, std::int64_t max) const;
  void check_bounds(const FieldSpec* entry, const Bounds& bounds) const;
  void check_fallback(const FieldSpec* entry, const nlohmann::json& fallback) const;

  const nlohmann::json* value_;
  std::string source_;
  std::string pointer_;
  std::set<std::string, std::less<>> known_keys_;
  const Schema* schema_ = nullptr;
  std::string kind_;
};

/** Escapes a key for use in a JSON pointer (RFC 6901: ~ as ~0, / as ~1). */
std::string escape_pointer_token(std::string_view key);

} // namespace partsim
