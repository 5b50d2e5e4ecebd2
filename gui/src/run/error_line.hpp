// ErrorLine: a partsim error message split into its JSON pointer and the message, to show it at the field.
#pragma once

#include <QString>

namespace partsim::gui {

struct ErrorLine {
  QString message; ///< the whole line, as the CLI prints it after "partsim: error: "
  QString pointer; ///< the JSON pointer it names, or empty
};

/** Reads the first `partsim: error: SOURCE: /pointer: detail` line of a child's stderr (or an InputError's
 * what()): the pointer is the first ": /..." token after the source. */
ErrorLine parse_error_line(const QString& text);

} // namespace partsim::gui
