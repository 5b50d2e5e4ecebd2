// Timeline: per-rank intervals recorded from the simulation (compute, communication, wait) and counters.
#pragma once

#include "partsim/common/enum_names.hpp"

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace partsim {

enum class IntervalKind {
  Compute,       ///< an execution on the GPU
  Communication, ///< at least one of the rank's transfers is moving data
  Wait,          ///< blocked in a collective until a peer is ready
  Overhead,      ///< coordinator time spent coordinating (per-partition set-up, preprocessing), not GPU work
  DataLoading,   ///< the GPU idle while its host hands over the next micro-batch (HostStep)
};

template <>
struct EnumNames<IntervalKind> {
  static constexpr std::array<EnumEntry<IntervalKind>, 5> entries{{{IntervalKind::Compute, "compute"},
                                                                   {IntervalKind::Communication, "communication"},
                                                                   {IntervalKind::Wait, "wait"},
                                                                   {IntervalKind::Overhead, "coordination"},
                                                                   {IntervalKind::DataLoading, "data_loading"}}};
};

inline std::string_view to_string(IntervalKind kind) {
  return enum_name(kind);
}

struct Interval {
  double begin = 0.0;
  double end = 0.0;
  IntervalKind kind = IntervalKind::Compute;
  std::uint32_t label = 0; ///< what the interval ran (Plan::labels), 0: nothing named
};

/** What one rank did. Intervals are ordered, contiguous from 0 to `finish`, adjacent ones of a kind merged.
 * With `keep_all` false only compute intervals are kept (what the metrics need); communication and wait still
 * count in the totals. A ring step can alternate wait and communication, so keeping them all costs O(messages). */
struct RankTimeline {
  std::vector<Interval> intervals;
  bool keep_all = true;
  std::array<double, 5> totals{}; ///< seconds per IntervalKind
  double finish = 0.0;
  std::uint64_t samples = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t messages_sent = 0;
  double stream_wait = 0.0; ///< s blocked on the communication stream (also counted as communication)
  /** s of collectives run beside a compute step (ComputeStep::beside_next) while that compute ran: overlapped
   * communication, not on the timeline; what outlasts the compute is communication on it. */
  double hidden = 0.0;
  /** s the program was blocked in communication of each kind (CommKind order: data, tensor, pipeline, expert,
   * context),
   * waits for peers included; the stream's overlapped collectives count only through StreamSync (as data). */
  std::array<double, 5> blocked_by_kind{};
  double bubble = 0.0; ///< s waiting for a pipeline peer to send (part of wait)
  /** Plan::marked_rank only: the clock at each of Plan::unit_marks, first iteration. */
  std::vector<double> marks;

  /** Appends [begin, end), merging with the previous interval when it has the same kind and label and touches it. */
  void record(IntervalKind kind, double begin, double end, std::uint32_t label = 0);
  double total(IntervalKind kind) const;
};

} // namespace partsim
