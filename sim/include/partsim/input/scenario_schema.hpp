// The scenario's fields (schema version 1) as data: the parser reads every field through this table (JsonReader's
// schema reads), the GUI's form is built from it, and docs/scenario-reference.md's field tables are generated from
// it (partsim_reference; a test checks that the checked-in file is current).
#pragma once

#include "partsim/input/field_schema.hpp"

#include <string>
#include <vector>

namespace partsim {

/** Every field of a scenario, with its range, default, allowed values, doc line and the kinds it applies to. */
const Schema& scenario_schema();

/** A table of the reference: the fields whose `section` is `id`, keys shown relative to `base`. */
struct SchemaSection {
  std::string id;
  std::string base; ///< "/cluster/network"
};

/** The reference's tables, in document order. */
const std::vector<SchemaSection>& scenario_schema_sections();

/** The markdown table of one section: key, type, unit, default, allowed, meaning. */
std::string schema_section_table(const Schema& schema, const SchemaSection& section);

/** `text` with every generated table replaced by the current one: the lines between `<!-- fields: ID -->` and
 * `<!-- end fields -->`. @throws InputError for a marker naming an unknown section or left open. */
std::string update_schema_tables(const std::string& text, const std::string& source);

} // namespace partsim
