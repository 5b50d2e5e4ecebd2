// Trace: per-rank intervals read from partsim's trace.json (Chrome trace-event format), for the timeline view.
#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <cstdint>
#include <optional>
#include <vector>

namespace partsim::gui {

struct TraceInterval {
  double begin = 0;      ///< s (simulated)
  double end = 0;        ///< s
  std::uint8_t kind = 0; ///< index into Trace::kinds
};

/** One track: a rank (or the coordinator), its intervals sorted by begin, and its instant events ("ph": "i", such as
 * a replayed run's failures) sorted. */
struct TraceTrack {
  QString name;
  int pid = 0;
  int tid = 0;
  std::vector<TraceInterval> intervals;
  std::vector<double> instants; ///< s
};

struct Trace {
  QStringList kinds; ///< "compute", "communication", "wait", "coordination", then any others in order of appearance
  std::vector<TraceTrack> tracks; ///< ranks in order, the coordinator last
  double end = 0;                 ///< s: the last interval's end (or instant)
  std::size_t interval_count() const;
  std::size_t instant_count() const;
};

/** A failure injected into the iteration (report.json's reliability/injected), to mark on the timeline. */
struct FailureMark {
  double at = 0;      ///< s: when it struck
  double stopped = 0; ///< s: when the job stopped every rank still running
  QString what;       ///< "GPU 5", "leaf switch 1 (nodes 4 to 7)"
  std::vector<int> failed_ranks;
};

/** Parses trace.json text. `rank_kinds`: the kinds start with compute, communication, wait and coordination (an
 * iteration's trace), else with the kinds in order of appearance (reliability_trace.json: training, checkpoint,
 * recovery). @returns nullopt with `error` set when it is not a trace. */
std::optional<Trace> parse_trace(const QByteArray& text, QString* error = nullptr, bool rank_kinds = true);

} // namespace partsim::gui
