// Interval recording with merging of adjacent same-kind intervals.
#include "partsim/report/timeline.hpp"

namespace partsim {

void RankTimeline::record(IntervalKind kind, double begin, double end, std::uint32_t label) {
  if (end <= begin) return;
  totals[static_cast<std::size_t>(kind)] += end - begin;
  if (!keep_all && kind != IntervalKind::Compute) return;
  if (!intervals.empty() && intervals.back().kind == kind && intervals.back().label == label &&
      intervals.back().end == begin) {
    intervals.back().end = end;
    return;
  }
  intervals.push_back({begin, end, kind, label});
}

double RankTimeline::total(IntervalKind kind) const {
  return totals[static_cast<std::size_t>(kind)];
}

} // namespace partsim
