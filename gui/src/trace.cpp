// trace.json reading.
#include "trace.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

namespace partsim::gui {

std::size_t Trace::interval_count() const {
  std::size_t n = 0;
  for (const TraceTrack& t : tracks) n += t.intervals.size();
  return n;
}

std::size_t Trace::instant_count() const {
  std::size_t n = 0;
  for (const TraceTrack& t : tracks) n += t.instants.size();
  return n;
}

std::optional<Trace> parse_trace(const QByteArray& text, QString* error, bool rank_kinds) {
  using nlohmann::json;
  const json doc = json::parse(text.constData(), text.constData() + text.size(), nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("traceEvents") || !doc["traceEvents"].is_array()) {
    if (error != nullptr) *error = QStringLiteral("not a Chrome trace (no traceEvents)");
    return std::nullopt;
  }
  Trace trace;
  if (rank_kinds)
    trace.kinds = {QStringLiteral("compute"), QStringLiteral("communication"), QStringLiteral("wait"),
                   QStringLiteral("coordination")};
  std::map<std::pair<int, int>, TraceTrack> tracks;
  auto track = [&](int pid, int tid) -> TraceTrack& {
    TraceTrack& t = tracks[{pid, tid}];
    t.pid = pid;
    t.tid = tid;
    return t;
  };
  for (const json& e : doc["traceEvents"]) {
    if (!e.is_object()) continue;
    const std::string ph = e.value("ph", "");
    const int pid = e.value("pid", 0);
    const int tid = e.value("tid", 0);
    if (ph == "M" && e.value("name", "") == "thread_name" && e.contains("args") && e["args"].is_object()) {
      track(pid, tid).name = QString::fromStdString(e["args"].value("name", ""));
    } else if (ph == "X") {
      const QString name = QString::fromStdString(e.value("cat", e.value("name", "")));
      qsizetype kind = trace.kinds.indexOf(name);
      if (kind < 0) {
        trace.kinds << name;
        kind = trace.kinds.size() - 1;
      }
      const double begin = e.value("ts", 0.0) * 1e-6;
      const double end = begin + e.value("dur", 0.0) * 1e-6;
      track(pid, tid).intervals.push_back({begin, end, static_cast<std::uint8_t>(std::min<qsizetype>(kind, 255))});
      trace.end = std::max(trace.end, end);
    } else if (ph == "i" || ph == "I") {
      const double at = e.value("ts", 0.0) * 1e-6;
      track(pid, tid).instants.push_back(at);
      trace.end = std::max(trace.end, at);
    }
  }
  // Ranks are numbered by tid across nodes; the coordinator has the highest tid.
  std::vector<TraceTrack> ordered;
  for (auto& [key, t] : tracks) {
    if (t.intervals.empty() && t.instants.empty() && t.name.isEmpty()) continue;
    std::sort(t.intervals.begin(), t.intervals.end(),
              [](const TraceInterval& a, const TraceInterval& b) { return a.begin < b.begin; });
    std::sort(t.instants.begin(), t.instants.end());
    if (t.name.isEmpty()) t.name = QStringLiteral("track %1").arg(t.tid);
    ordered.push_back(std::move(t));
  }
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const TraceTrack& a, const TraceTrack& b) { return a.tid < b.tid; });
  trace.tracks = std::move(ordered);
  return trace;
}

} // namespace partsim::gui
