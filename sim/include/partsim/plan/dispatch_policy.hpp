// The decisions of run-time balancing as pure code: which chunk of samples a worker gets under each policy (static,
// work_queue, measured_rate, work_stealing), in which order waiting requests are served, and whom a work-stealing
// worker robs. The engine's dispatcher and workers (engine/dispatch.cpp) carry these decisions out on SimGrid.
#pragma once

#include "partsim/plan/plan.hpp"

#include <cstdint>
#include <vector>

namespace partsim {

/** The dispatcher's state and decisions for one balanced run. */
class DispatchPolicy {
 public:
  explicit DispatchPolicy(const DynamicWork& work);

  /** A worker's report with its request: `samples` done in `compute_time` s (its measured rate; ignored when 0). */
  void record(int rank, std::uint64_t samples, double compute_time);

  /** Whether `a`'s waiting request is served before `b`'s: measured_rate serves the fastest measured worker first;
   * the other policies serve in arrival order (use with a stable sort). */
  bool serves_before(int a, int b) const;

  /** The chunk `rank` gets now (0: no more work, the worker stops), taken from what is left:
   * - static, work_stealing: its whole static share, once;
   * - work_queue: chunk_samples;
   * - measured_rate: an unmeasured rank gets one probe of chunk_samples; then weighted guided self-scheduling, half of
   *   its share of what is left by the current rates (nominal for ranks not yet measured), never below chunk_samples
   *   scaled by its rate over the fastest rate (so that the last chunks take the same time everywhere).
   * A work-stealing worker never asks again after its share. */
  std::uint64_t assign(int rank);

  /** Workers that will ask again. */
  std::size_t running() const { return running_; }
  std::uint64_t remaining() const { return remaining_; }
  double measured_rate(int rank) const { return measured_rate_[static_cast<std::size_t>(rank)]; }

 private:
  std::uint64_t chunk_for(int rank) const;

  Balancing balancing_;
  std::vector<std::uint64_t> static_left_;
  std::vector<double> nominal_rate_;
  std::vector<double> measured_rate_;
  std::vector<bool> active_;
  std::uint64_t remaining_ = 0;
  std::size_t running_ = 0;
};

/** A work-stealing worker found its queue empty: it robs the rank holding the most samples (the first such), of half
 * of them rounded up. `samples` 0: nobody holds any. */
struct Steal {
  std::size_t victim = 0;
  std::uint64_t samples = 0;
};

/** Chooses the steal from every rank's queue, without changing it. */
Steal choose_steal(const std::vector<std::uint64_t>& queue);

} // namespace partsim
