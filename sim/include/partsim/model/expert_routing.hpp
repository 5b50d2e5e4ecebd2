// Expert routing of a mixture-of-experts layer: how the token copies spread over the experts, and what that does to
// the ranks of an expert-parallel group.
#pragma once

#include "partsim/common/enum_names.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

namespace partsim {

/** How a router spreads a layer's token copies over its experts: the same share each, a Zipf law, or each layer's
 * counts measured on a real run (ExpertRouting::measured). */
enum class ExpertDistribution { Uniform, Zipf, Measured };

template <>
struct EnumNames<ExpertDistribution> {
  static constexpr std::array<EnumEntry<ExpertDistribution>, 3> entries{{{ExpertDistribution::Uniform, "uniform"},
                                                                         {ExpertDistribution::Zipf, "zipf"},
                                                                         {ExpertDistribution::Measured, "measured"}}};
};

inline std::string_view to_string(ExpertDistribution distribution) {
  return enum_name(distribution);
}

/** `/workload/expert_routing`: the routing a mixture-of-experts training run sees. */
struct ExpertRouting {
  ExpertDistribution distribution = ExpertDistribution::Uniform;
  /** Zipf: the expert of popularity rank r (1-based) gets a share proportional to r^-exponent. */
  double zipf_exponent = 1.0;
  /** The most token copies an expert takes, as a multiple of its uniform share (GShard's capacity factor); the rest
   * are dropped (they skip the expert, as Megatron-Core's token dropping does). None: no limit, nothing dropped. */
  std::optional<double> capacity_factor;
  /** Measured: by MoE layer (its index in the model), each expert's share of the layer's copies (summing to 1), from
   * the counts file (`/workload/expert_routing/counts`). */
  std::map<std::int64_t, std::vector<double>> measured;
};

/** One layer's routing: each expert's share of the layer's token copies (summing to 1) and what an expert-parallel
 * group of `ranks` (experts in contiguous blocks of experts / ranks, as Megatron-Core places them) makes of it. */
struct LayerRouting {
  std::int64_t layer = 0;     ///< the layer in the model, from 0 (a MoE model's first dense layers have none)
  std::vector<double> shares; ///< per expert, before dropping
  /** Per rank of the expert-parallel group: the copies its experts process, relative to the uniform share (1 = every
   * rank the same; the busiest rank's value is the layer's slow-down of the expert compute). */
  std::vector<double> rank_load;
  double dropped = 0.0; ///< fraction of the layer's copies dropped by the capacity limit
  double max_load() const;
  double mean_load() const;
};

/** The routing of layer `layer`: uniform shares, Zipf shares over a permutation of the experts drawn from `seed` and
 * the layer (each layer's popular experts are different ones, and so are its busiest ranks), or the layer's measured
 * shares. */
LayerRouting route_layer(const ExpertRouting& routing, std::int64_t experts, int ranks, std::int64_t layer,
                         std::uint64_t seed);

/** Node-limited routing (DeepSeek-V3's group-limited gating, arXiv:2412.19437 section 2.1.2, its config's `n_group`
 * and `topk_group`): the experts fall in `groups` groups of experts / groups (contiguous), a token picks
 * `groups_per_token` of them, then its `top_k` experts among theirs; groups 1 and groups_per_token 1: no limit. For an
 * expert-parallel group of `ranks` (experts / ranks each, contiguous) whose positions on each of its nodes are
 * `members[b]`, returns by node the share of a source's token copies for node b's experts that a two-hop all-to-all
 * sends over the network: P(the token has an expert on b) / (top_k E_b / E), E_b being b's experts (a token with
 * several experts on b crosses once). Groups and experts are taken uniformly (an assumption: the gate's scores are not
 * modelled); P(none of the token's experts on b) averages C(G' - x_b(S), k) / C(G', k) over the chosen groups S,
 * G' = groups_per_token x experts / groups, x_b(S) b's experts in S. */
std::vector<double> node_token_share(std::int64_t experts, std::int64_t top_k, std::int64_t groups,
                                     std::int64_t groups_per_token, int ranks,
                                     const std::vector<std::vector<int>>& members);

} // namespace partsim
