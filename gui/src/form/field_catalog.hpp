// FieldCatalog: the scenario form's sections; each field's type, range, default, choices, label, doc and kinds come
// from the core's scenario schema (partsim/input/scenario_schema.hpp), the widget hints (sliders) from here.
#pragma once

#include "partsim/input/units.hpp"

#include <nlohmann/json.hpp>

#include <QString>
#include <QStringList>

#include <string>
#include <vector>

namespace partsim::gui {

enum class FieldKind {
  Integer,  ///< spin box (or a line edit past 2^31), optionally with a slider
  Number,   ///< double spin box, optionally with a slider
  Quantity, ///< number + unit (`"25GBps"`, `"2us"`)
  Choice,   ///< combo box
  Text,     ///< line edit
  Json,     ///< any JSON value, typed as compact JSON
  Shares,   ///< /strategy/shares: balanced, by_speed, skewed (slider) or explicit
};

/** Units offered for a dimension, base unit first. */
QStringList units_of(partsim::Dimension dimension);

struct FieldSpec {
  std::string pointer;
  QString label;
  FieldKind kind = FieldKind::Text;
  bool optional = false; ///< may be absent (a check box adds or removes it)
  double min = 0;
  double max = 1e18;
  int slider_max = 0;                                      ///< > 0: a slider over [min, slider_max] beside the spin box
  partsim::Dimension dimension = partsim::Dimension::Time; ///< of a Quantity
  QStringList choices;
  nlohmann::json default_value; ///< written when an optional field is switched on
  QString tooltip;
  QStringList workload_kinds; ///< shown only for these /workload/kind values (empty: always)
  QStringList strategy_kinds; ///< shown only for these /strategy/kind values (empty: always)
};

/** A group box of the form. An optional section is an optional object (`/strategy/balancing`). */
struct SectionSpec {
  QString title;
  std::string pointer; ///< the object it edits ("" for the top level)
  bool optional = false;
  nlohmann::json default_object; ///< written when an optional section is switched on
  std::vector<FieldSpec> fields;
};

/** The form's sections and fields; profile choices are read from `data_dir`/models. */
std::vector<SectionSpec> scenario_catalog(const QString& data_dir);

} // namespace partsim::gui
