// Run-time balancing decisions: chunk sizes per policy, service order, steals.
#include "partsim/plan/dispatch_policy.hpp"

#include "partsim/common/error.hpp"

#include <algorithm>
#include <cmath>

namespace partsim {

DispatchPolicy::DispatchPolicy(const DynamicWork& work)
    : balancing_(work.balancing), static_left_(work.static_samples), nominal_rate_(work.nominal_rate),
      measured_rate_(work.static_samples.size(), 0.0), active_(work.static_samples.size(), true),
      remaining_(work.total_samples), running_(work.static_samples.size()) {
  PARTSIM_CHECK(nominal_rate_.size() == static_left_.size()) << "a nominal rate per rank";
}

void DispatchPolicy::record(int rank, std::uint64_t samples, double compute_time) {
  if (samples > 0 && compute_time > 0)
    measured_rate_[static_cast<std::size_t>(rank)] = static_cast<double>(samples) / compute_time;
}

bool DispatchPolicy::serves_before(int a, int b) const {
  return balancing_.policy == BalancingPolicy::MeasuredRate &&
         measured_rate_[static_cast<std::size_t>(a)] > measured_rate_[static_cast<std::size_t>(b)];
}

std::uint64_t DispatchPolicy::chunk_for(int rank) const {
  const auto me = static_cast<std::size_t>(rank);
  switch (balancing_.policy) {
  case BalancingPolicy::Static:
  case BalancingPolicy::WorkStealing:
    return static_left_[me];
  case BalancingPolicy::WorkQueue:
    return std::min(balancing_.chunk_samples, remaining_);
  case BalancingPolicy::MeasuredRate: {
    if (measured_rate_[me] <= 0) return std::min(balancing_.chunk_samples, remaining_);
    auto rate = [&](std::size_t r) { return measured_rate_[r] > 0 ? measured_rate_[r] : nominal_rate_[r]; };
    double total = 0.0;
    double fastest = 0.0;
    for (std::size_t r = 0; r < active_.size(); ++r)
      if (active_[r]) {
        total += rate(r);
        fastest = std::max(fastest, rate(r));
      }
    const double mine = rate(me);
    const auto chunk = static_cast<std::uint64_t>(std::ceil(static_cast<double>(remaining_) * mine / total / 2.0));
    const auto smallest = std::max<std::uint64_t>(
        1, static_cast<std::uint64_t>(std::llround(static_cast<double>(balancing_.chunk_samples) * mine / fastest)));
    return std::min(remaining_, std::max(chunk, smallest));
  }
  }
  return 0;
}

std::uint64_t DispatchPolicy::assign(int rank) {
  const auto me = static_cast<std::size_t>(rank);
  PARTSIM_CHECK(active_[me]) << "rank " << rank << " asked for work after it stopped";
  const std::uint64_t chunk = std::min(chunk_for(rank), remaining_);
  if (balancing_.policy == BalancingPolicy::Static || balancing_.policy == BalancingPolicy::WorkStealing)
    static_left_[me] = 0;
  remaining_ -= chunk;
  if (chunk == 0 || balancing_.policy == BalancingPolicy::WorkStealing) {
    active_[me] = false;
    --running_;
  }
  return chunk;
}

Steal choose_steal(const std::vector<std::uint64_t>& queue) {
  PARTSIM_CHECK(!queue.empty()) << "a steal among no ranks";
  const auto victim = static_cast<std::size_t>(std::max_element(queue.begin(), queue.end()) - queue.begin());
  return {victim, queue[victim] == 0 ? 0 : (queue[victim] + 1) / 2};
}

} // namespace partsim
