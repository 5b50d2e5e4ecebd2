// Pipeline schedules (GPipe, 1F1B, interleaved 1F1B) and the micro-batches a stage keeps in flight.
#include "partsim/plan/pipeline_schedule.hpp"

#include "partsim/common/error.hpp"

#include <algorithm>
#include <utility>

namespace partsim {

std::vector<PipelineOp> pipeline_schedule(PipelineSchedule schedule, int stages, int stage, int micro_batches,
                                          int chunks, int group) {
  PARTSIM_CHECK(stages >= 1 && stage >= 0 && stage < stages && micro_batches >= 1 && chunks >= 1)
      << "schedule of stage " << stage << " of " << stages << ", " << micro_batches << " micro-batches";
  std::vector<PipelineOp> ops;
  const int m = micro_batches;
  if (schedule == PipelineSchedule::GPipe) {
    for (int i = 0; i < m; ++i) ops.push_back({Pass::Forward, i, 0});
    for (int i = 0; i < m; ++i) ops.push_back({Pass::Backward, i, 0});
    return ops;
  }
  if (schedule == PipelineSchedule::OneFOneB) {
    const int warmup = std::min(stages - stage - 1, m);
    for (int i = 0; i < warmup; ++i) ops.push_back({Pass::Forward, i, 0});
    for (int k = 0; k < m - warmup; ++k) {
      ops.push_back({Pass::Forward, warmup + k, 0});
      ops.push_back({Pass::Backward, k, 0});
    }
    for (int k = m - warmup; k < m; ++k) ops.push_back({Pass::Backward, k, 0});
    return ops;
  }
  const int p = stages;
  const int v = chunks;
  const int n = group > 0 ? group : p;
  PARTSIM_CHECK(n >= p && n <= m && (m % n == 0 || m % n >= p))
      << "interleaving " << m << " micro-batches in groups of " << n << " over " << p << " stages";
  // Megatron-Core's schedule table: each group of n micro-batches (the last one: every micro-batch left) through
  // chunk 0, then chunk 1, ...
  std::vector<std::pair<int, int>> table; // (micro-batch, chunk)
  table.reserve(static_cast<std::size_t>(m) * static_cast<std::size_t>(v));
  for (int first = 0; first < m; first += n) {
    const int last = std::min(first + n, m);
    for (int c = 0; c < v; ++c)
      for (int i = first; i < last; ++i) table.emplace_back(i, c);
  }
  const int total = m * v;
  auto forward = [&](int k) {
    const auto& [i, c] = table[static_cast<std::size_t>(k)];
    return PipelineOp{Pass::Forward, i, c};
  };
  auto backward = [&](int k) {
    const auto& [i, c] = table[static_cast<std::size_t>(k)];
    return PipelineOp{Pass::Backward, i, v - 1 - c};
  };
  const int warmup = std::min((p - stage - 1) * 2 + (v - 1) * n, total);
  for (int k = 0; k < warmup; ++k) ops.push_back(forward(k));
  for (int k = 0; k < total - warmup; ++k) {
    ops.push_back(forward(warmup + k));
    ops.push_back(backward(k));
  }
  for (int k = total - warmup; k < total; ++k) ops.push_back(backward(k));
  return ops;
}

int peak_in_flight(const std::vector<PipelineOp>& ops) {
  int live = 0;
  int peak = 0;
  for (const PipelineOp& op : ops) {
    live += op.pass == Pass::Forward ? 1 : -1;
    peak = std::max(peak, live);
  }
  return peak;
}

} // namespace partsim
