// The scenario's `/cluster/stragglers`: GPUs slowed for a whole run (fixed) or for single iterations at random, and
// the deterministic per-(GPU, iteration) speed factors the engine applies to compute (docs/stragglers.md).
#pragma once

#include "partsim/common/enum_names.hpp"
#include "partsim/common/random.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace partsim {

class JsonReader;

/** The law of a random straggler's speed factor. */
enum class SlowdownKind : std::uint8_t {
  Fixed,    ///< always `factor`
  Uniform,  ///< uniform on [min, max]
  LogNormal ///< log-normal of mean `mean` and coefficient of variation `cv`, capped at 1
};

template <>
struct EnumNames<SlowdownKind> {
  static constexpr std::array<EnumEntry<SlowdownKind>, 3> entries{
      {{SlowdownKind::Fixed, "fixed"}, {SlowdownKind::Uniform, "uniform"}, {SlowdownKind::LogNormal, "lognormal"}}};
};

/** A random straggler's speed factor f (it computes at f x its speed): 0 < f <= 1. */
struct SlowdownLaw {
  SlowdownKind kind = SlowdownKind::Fixed;
  double factor = 1.0; ///< fixed
  double min = 1.0;    ///< uniform
  double max = 1.0;    ///< uniform
  double mean = 1.0;   ///< lognormal, before the cap
  double cv = 0.0;     ///< lognormal

  /** One draw (lognormal draws above 1 are 1; below kMinSpeedFactor they are that). */
  double sample(Xoshiro256StarStar& rng) const;
  /** E[max(1/f, floor)]: how much longer a straggler's compute takes on average, where a GPU already runs
   * `floor` x longer (a fixed straggler); closed forms, the lognormal's with its cap. */
  double mean_stretch(double floor = 1.0) const;
  /** "0.7", "uniform 0.5 to 0.9", "lognormal mean 0.8 cv 0.2, capped at 1". */
  std::string describe() const;
};

/** A GPU that computes at `factor` x its speed for the whole run. */
struct FixedStraggler {
  int gpu = 0;
  double factor = 1.0;
};

/** `/cluster/stragglers`. */
struct StragglerSpec {
  std::vector<FixedStraggler> fixed; ///< sorted by GPU, each GPU at most once
  double probability = 0.0;          ///< per GPU per iteration; 0: no random stragglers
  SlowdownLaw slowdown;              ///< with probability > 0
};

/** The smallest speed factor: SimGrid cannot run an execution at speed 0 (as /cluster/node_speed_factors). */
inline constexpr double kMinSpeedFactor = 1e-6;

/** Reads `/cluster/stragglers` for a cluster of `gpus` GPUs. @throws InputError at the offending pointer. */
StragglerSpec parse_stragglers(JsonReader reader, int gpus);

/** The speed factors of a run: GPU g in iteration i computes at factor(g, i) x its speed, the product of its fixed
 * factor and, with probability p, a random straggler's draw. Each (GPU, iteration) has its own generator seeded from
 * (seed, GPU, iteration), so a factor does not depend on the order it is asked in, nor on the other GPUs. */
class StragglerDraws {
 public:
  StragglerDraws(const StragglerSpec& spec, std::uint64_t seed, int gpus);

  /** Whether GPU `gpu` is a random straggler in iteration `iteration` (probability p), and its random factor: the
   * draw when it is, else 1. */
  std::pair<bool, double> random_draw(int gpu, std::int64_t iteration) const;
  /** The random part of GPU `gpu`'s factor in iteration `iteration`: 1 when it is not a straggler then. */
  double random_factor(int gpu, std::int64_t iteration) const { return random_draw(gpu, iteration).second; }
  /** Its fixed factor (1 when it is not a fixed straggler). */
  double fixed_factor(int gpu) const { return fixed_[static_cast<std::size_t>(gpu)]; }
  /** fixed_factor x random_factor. */
  double factor(int gpu, std::int64_t iteration) const { return fixed_factor(gpu) * random_factor(gpu, iteration); }
  /** Whether GPUs `a` and `b` have the same factors in iterations 0 .. iterations - 1 (for folding). */
  bool same_factors(int a, int b, std::int64_t iterations) const;
  const StragglerSpec& spec() const { return spec_; }

 private:
  StragglerSpec spec_;
  std::uint64_t key_ = 0;
  std::vector<double> fixed_; ///< per GPU
};

} // namespace partsim
