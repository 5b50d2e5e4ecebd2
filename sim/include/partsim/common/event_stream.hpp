// The machine-readable stream a partsim command writes on stderr for the program that runs it (the GUI, a batch
// system): one JSON object per line for progress (`--progress=json`) and errors (`--error-format=json`). Written and
// read by the same code, so a reader never parses the human-readable text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace partsim {

/** One line of the stream. */
struct StreamEvent {
  enum class Kind { Progress, SweepProgress, Error };
  Kind kind = Kind::Progress;
  std::uint64_t done = 0;  ///< Progress: events simulated; SweepProgress: points finished
  std::uint64_t total = 0; ///< Progress: events planned; SweepProgress: points
  // Error
  int exit_code = 0;
  std::string source;  ///< the file (or "--set", "standard output"); may be empty
  std::string pointer; ///< the JSON pointer into the source; may be empty
  std::string message; ///< the whole one-line message, as the text format prints it after "partsim: error: "
};

/** `{"progress": {"done": N, "planned": M}}` */
std::string progress_line(std::uint64_t done, std::uint64_t planned);
/** `{"sweep_progress": {"done": N, "points": M}}` */
std::string sweep_progress_line(std::size_t done, std::size_t points);
/** `{"error": {"exit_code": 2, "source": ..., "pointer": ..., "message": ...}}` */
std::string error_line(int exit_code, const std::string& source, const std::string& pointer,
                       const std::string& message);

/** The event on one line of the stream, or nullopt for a line that is not one (a human-readable line). */
std::optional<StreamEvent> parse_stream_line(std::string_view line);

} // namespace partsim
