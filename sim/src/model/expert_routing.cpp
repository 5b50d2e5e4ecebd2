// Expert routing: per-expert shares of a layer's token copies, the capacity limit, and per-rank loads.
#include "partsim/model/expert_routing.hpp"

#include "partsim/common/error.hpp"
#include "partsim/common/random.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace partsim {

double LayerRouting::max_load() const {
  return rank_load.empty() ? 0.0 : *std::max_element(rank_load.begin(), rank_load.end());
}

double LayerRouting::mean_load() const {
  return rank_load.empty()
             ? 0.0
             : std::accumulate(rank_load.begin(), rank_load.end(), 0.0) / static_cast<double>(rank_load.size());
}

LayerRouting route_layer(const ExpertRouting& routing, std::int64_t experts, int ranks, std::int64_t layer,
                         std::uint64_t seed) {
  PARTSIM_CHECK(experts >= 1 && ranks >= 1 && experts % ranks == 0)
      << ranks << " expert-parallel ranks for " << experts << " experts";
  const auto count = static_cast<std::size_t>(experts);
  LayerRouting out;
  out.layer = layer;
  out.shares.assign(count, 1.0 / static_cast<double>(experts));
  if (routing.distribution == ExpertDistribution::Zipf) {
    // Popularity ranks over a seeded Fisher-Yates permutation, one stream per layer.
    std::vector<std::size_t> order(count);
    std::iota(order.begin(), order.end(), std::size_t{0});
    Xoshiro256StarStar random(seed ^ (0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(layer + 1)));
    for (std::size_t i = count; i > 1; --i) std::swap(order[i - 1], order[random.below(i)]);
    double sum = 0.0;
    for (std::size_t r = 0; r < count; ++r) sum += std::pow(static_cast<double>(r + 1), -routing.zipf_exponent);
    for (std::size_t r = 0; r < count; ++r)
      out.shares[order[r]] = std::pow(static_cast<double>(r + 1), -routing.zipf_exponent) / sum;
  }
  const double cap = routing.capacity_factor ? *routing.capacity_factor / static_cast<double>(experts)
                                             : std::numeric_limits<double>::infinity();
  const std::size_t per_rank = count / static_cast<std::size_t>(ranks);
  out.rank_load.assign(static_cast<std::size_t>(ranks), 0.0);
  for (std::size_t e = 0; e < count; ++e) {
    const double kept = std::min(out.shares[e], cap);
    out.dropped += out.shares[e] - kept;
    out.rank_load[e / per_rank] += kept * static_cast<double>(ranks);
  }
  return out;
}

} // namespace partsim
