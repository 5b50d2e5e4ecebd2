// Expert routing of a mixture-of-experts layer: how the token copies spread over the experts, and what that does to
// the ranks of an expert-parallel group.
#pragma once

#include "partsim/common/enum_names.hpp"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace partsim {

/** How a router spreads a layer's token copies over its experts. */
enum class ExpertDistribution { Uniform, Zipf };

template <>
struct EnumNames<ExpertDistribution> {
  static constexpr std::array<EnumEntry<ExpertDistribution>, 2> entries{
      {{ExpertDistribution::Uniform, "uniform"}, {ExpertDistribution::Zipf, "zipf"}}};
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

/** The routing of layer `layer`: uniform shares, or Zipf shares over a permutation of the experts drawn from `seed`
 * and the layer (each layer's popular experts are different ones, and so are its busiest ranks). */
LayerRouting route_layer(const ExpertRouting& routing, std::int64_t experts, int ranks, std::int64_t layer,
                         std::uint64_t seed);

} // namespace partsim
