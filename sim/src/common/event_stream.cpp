// The machine-readable progress and error stream: writing and reading its lines.
#include "partsim/common/event_stream.hpp"

#include <nlohmann/json.hpp>

namespace partsim {

std::string progress_line(std::uint64_t done, std::uint64_t planned) {
  return nlohmann::json{{"progress", {{"done", done}, {"planned", planned}}}}.dump() + '\n';
}

std::string sweep_progress_line(std::size_t done, std::size_t points) {
  return nlohmann::json{{"sweep_progress", {{"done", done}, {"points", points}}}}.dump() + '\n';
}

std::string error_line(int exit_code, const std::string& source, const std::string& pointer,
                       const std::string& message) {
  const nlohmann::json error{{"exit_code", exit_code}, {"source", source}, {"pointer", pointer}, {"message", message}};
  // Messages are escaped to printable text already; replace anything else rather than fail to report an error.
  return nlohmann::json{{"error", error}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + '\n';
}

std::optional<StreamEvent> parse_stream_line(std::string_view line) {
  if (line.empty() || line.front() != '{') return std::nullopt;
  const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (!j.is_object() || j.size() != 1) return std::nullopt;
  StreamEvent e;
  try {
    if (const auto it = j.find("progress"); it != j.end()) {
      e.kind = StreamEvent::Kind::Progress;
      e.done = it->at("done").get<std::uint64_t>();
      e.total = it->at("planned").get<std::uint64_t>();
    } else if (const auto sweep = j.find("sweep_progress"); sweep != j.end()) {
      e.kind = StreamEvent::Kind::SweepProgress;
      e.done = sweep->at("done").get<std::uint64_t>();
      e.total = sweep->at("points").get<std::uint64_t>();
    } else if (const auto error = j.find("error"); error != j.end()) {
      e.kind = StreamEvent::Kind::Error;
      e.exit_code = error->at("exit_code").get<int>();
      e.source = error->at("source").get<std::string>();
      e.pointer = error->at("pointer").get<std::string>();
      e.message = error->at("message").get<std::string>();
    } else {
      return std::nullopt;
    }
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
  return e;
}

} // namespace partsim
