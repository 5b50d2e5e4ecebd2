// ErrorLine: a partsim error message split into its JSON pointer and the message, to show it at the field.
#pragma once

#include "partsim/common/event_stream.hpp"

#include <QByteArray>
#include <QString>

#include <optional>
#include <vector>

namespace partsim::gui {

struct ErrorLine {
  QString message; ///< the whole line, as the CLI prints it after "partsim: error: "
  QString pointer; ///< the JSON pointer it names, or empty
};

/** Reads the first `partsim: error: SOURCE: /pointer: detail` line of a text (an InputError's what(), or a child's
 * stderr in the text format): the pointer is the first ": /..." token after the source. */
ErrorLine parse_error_line(const QString& text);

/** The child's stderr read as partsim's machine-readable stream (`--progress=json --error-format=json`): complete
 * lines are parsed by the core's parse_stream_line as they arrive. */
class StreamReader {
 public:
  /** The events on the complete lines of `chunk` (a partial last line waits for the next chunk). */
  std::vector<StreamEvent> feed(const QByteArray& chunk);
  /** The last error event seen, if any. */
  const std::optional<StreamEvent>& error() const { return error_; }

 private:
  QByteArray pending_;
  std::optional<StreamEvent> error_;
};

/** The error a finished child reported: its JSON error event, else (a child that died before it could say so) the
 * first error line of its text. */
ErrorLine error_of_child(const StreamReader& reader, const QByteArray& all_stderr);

} // namespace partsim::gui
