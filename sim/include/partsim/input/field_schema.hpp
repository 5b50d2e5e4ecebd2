// A JSON artefact's fields described once, as data: pointer, type, unit, range, default, allowed values, the doc
// line and the kinds each applies to. JsonReader reads a document through its schema (bounds, choices and defaults
// come from the entry), the GUI builds its form from it, and the reference tables are generated from it.
#pragma once

#include "partsim/input/units.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace partsim {

enum class FieldType {
  Integer,  ///< a JSON integer (or an exact float) in [int_min, int_max]
  Number,   ///< a JSON number in `bounds`
  Quantity, ///< a number in SI units or a string with a unit of `dimension`, in `bounds`
  String,   ///< any string (a name; a file of the model library when `library` is set)
  Choice,   ///< one of `choices`
  Boolean,
  Object,
  Array,
  Forms, ///< one of several forms (a string or an object, ...), read by its own code; `type_doc` says which
};

/** One field of a JSON artefact. */
struct FieldSpec {
  std::string pointer; ///< "/cluster/nodes"; array elements as "*" ("/cluster/speed_changes/*/node")
  FieldType type = FieldType::Object;
  /** The workload kinds (under /workload) or strategy kinds (under /strategy) the entry is for; empty: every kind.
   * A pointer may have one entry per kind when its range or default differ. */
  std::vector<std::string> kinds;
  std::int64_t int_min = 0; ///< Integer
  std::int64_t int_max = std::numeric_limits<std::int64_t>::max();
  double min = 0.0; ///< Number, Quantity
  double max = 1e308;
  bool min_exclusive = false;
  Dimension dimension = Dimension::Time;       ///< Quantity
  std::optional<nlohmann::json> default_value; ///< taken when the key is absent; unset: required, or `default_doc`
  std::string default_doc;                     ///< the default in words when it depends on other fields
  std::vector<std::string> choices;            ///< Choice (also the strings a Forms field takes)
  std::string library;                         ///< names a file in models/LIBRARY ("hardware", "links", "workloads")
  std::string allowed_doc;                     ///< constraints the range and choices do not say (checked by the parser)
  std::string type_doc;                        ///< the type in words where `type` alone does not say it
  std::string unit_doc;                        ///< a unit that is not a dimension's ("samples")
  std::string label;                           ///< short, for a form
  std::string doc;                             ///< what it means
  std::string section;                         ///< the reference's table that lists it
  bool opaque = false; ///< its content is read by its own parser (an inline GPU profile, a [time, factor] pair)
};

/** A JSON pointer as a schema pattern: each array index (a token of digits) becomes "*". */
std::string schema_pattern(std::string_view pointer);

class Schema {
 public:
  explicit Schema(std::vector<FieldSpec> fields);

  /** The entry for a (pattern) pointer under `kind`: the kind's own entry, else the entry for every kind. */
  const FieldSpec* find(std::string_view pattern, std::string_view kind) const;
  /** Whether `pattern` is at or under an opaque entry. */
  bool inside_opaque(std::string_view pattern) const;
  const std::vector<FieldSpec>& fields() const { return fields_; }

 private:
  std::vector<FieldSpec> fields_;
  std::multimap<std::string, std::size_t, std::less<>> by_pointer_;
};

/** The type column of a reference table: "integer", "quantity", "string or object", ... */
std::string describe_type(const FieldSpec& field);
/** The allowed column: range or choices, then `allowed_doc`. */
std::string describe_allowed(const FieldSpec& field);
/** The default column: the value as JSON, `default_doc`, or "required". */
std::string describe_default(const FieldSpec& field);
/** The unit column: `unit_doc`, else a quantity's SI unit (si_unit). */
std::string describe_unit(const FieldSpec& field);

} // namespace partsim
