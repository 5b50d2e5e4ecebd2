// Interval recording with merging of adjacent same-kind intervals.
#include "partsim/timeline.hpp"

namespace partsim {

const char* to_string(IntervalKind kind) {
  switch (kind) {
  case IntervalKind::Compute:
    return "compute";
  case IntervalKind::Communication:
    return "communication";
  case IntervalKind::Wait:
    return "wait";
  }
  return "?";
}

void RankTimeline::record(IntervalKind kind, double begin, double end) {
  if (end <= begin) return;
  if (!intervals.empty() && intervals.back().kind == kind && intervals.back().end == begin) {
    intervals.back().end = end;
    return;
  }
  intervals.push_back({begin, end, kind});
}

double RankTimeline::total(IntervalKind kind) const {
  double sum = 0.0;
  for (const Interval& i : intervals)
    if (i.kind == kind) sum += i.end - i.begin;
  return sum;
}

} // namespace partsim
