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
  if (routing.distribution == ExpertDistribution::Measured) {
    const auto at = routing.measured.find(layer);
    PARTSIM_CHECK(at != routing.measured.end() && at->second.size() == count)
        << "no measured routing of " << experts << " experts for layer " << layer;
    out.shares = at->second;
  }
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

std::vector<double> node_token_share(std::int64_t experts, std::int64_t top_k, std::int64_t groups,
                                     std::int64_t groups_per_token, int ranks,
                                     const std::vector<std::vector<int>>& members) {
  PARTSIM_CHECK(experts >= 1 && ranks >= 1 && experts % ranks == 0 && groups >= 1 && experts % groups == 0 &&
                groups_per_token >= 1 && groups_per_token <= groups && groups_per_token * (experts / groups) >= top_k &&
                top_k >= 1)
      << "node-limited routing of top-" << top_k << " of " << experts << " experts in " << groups_per_token << " of "
      << groups << " groups over " << ranks << " ranks";
  const std::int64_t per_group = experts / groups;
  const std::int64_t per_rank = experts / ranks;
  const std::int64_t chosen = groups_per_token * per_group; // G'
  // C(G' - x, k) / C(G', k): none of the k experts among the x of the node.
  const auto none_of = [&](std::int64_t x) {
    double p = 1.0;
    for (std::int64_t i = 0; i < top_k; ++i) {
      if (chosen - x - i <= 0) return 0.0;
      p *= static_cast<double>(chosen - x - i) / static_cast<double>(chosen - i);
    }
    return p;
  };
  std::vector<double> share;
  for (const auto& mine : members) {
    // The node's experts in each group.
    std::vector<std::int64_t> in_group(static_cast<std::size_t>(groups), 0);
    for (const int pos : mine)
      for (std::int64_t e = pos * per_rank; e < (pos + 1) * per_rank; ++e)
        ++in_group[static_cast<std::size_t>(e / per_group)];
    // Over the groups: the number of ways to choose j of them holding x of the node's experts (ways[j][x]).
    std::vector<std::vector<double>> ways(static_cast<std::size_t>(groups_per_token) + 1,
                                          std::vector<double>(static_cast<std::size_t>(experts) + 1, 0.0));
    ways[0][0] = 1.0;
    for (std::int64_t r = 0; r < groups; ++r) {
      const std::int64_t y = in_group[static_cast<std::size_t>(r)];
      for (std::int64_t j = std::min(r + 1, groups_per_token); j >= 1; --j)
        for (std::int64_t x = experts; x >= y; --x)
          ways[static_cast<std::size_t>(j)][static_cast<std::size_t>(x)] +=
              ways[static_cast<std::size_t>(j - 1)][static_cast<std::size_t>(x - y)];
    }
    double subsets = 0.0;
    double miss = 0.0;
    for (std::int64_t x = 0; x <= experts; ++x) {
      const double w = ways[static_cast<std::size_t>(groups_per_token)][static_cast<std::size_t>(x)];
      subsets += w;
      miss += w * none_of(x);
    }
    const double node_experts = static_cast<double>(per_rank) * static_cast<double>(mine.size());
    const double copies = static_cast<double>(top_k) * node_experts / static_cast<double>(experts);
    share.push_back((1.0 - miss / subsets) / copies);
  }
  return share;
}

} // namespace partsim
