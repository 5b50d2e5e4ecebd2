// `/cluster/stragglers`: parsing, the slow-down laws and the per-(GPU, iteration) draws (input/stragglers.hpp).
#include "partsim/input/stragglers.hpp"

#include "partsim/common/error.hpp"
#include "partsim/input/json_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <numbers>
#include <string_view>
#include <utility>

namespace partsim {

namespace {

/** A standard normal value (Box-Muller, as the serving workload's draws; the pair's second value is not kept). */
double standard_normal(Xoshiro256StarStar& rng) {
  const double u1 = 1.0 - rng.uniform(); // (0, 1]
  const double u2 = rng.uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

/** The standard normal distribution function. */
double normal_cdf(double x) {
  return 0.5 * std::erfc(-x / std::numbers::sqrt2);
}

/** ln f ~ N(mu, sigma^2) for a log-normal of mean `mean` and coefficient of variation `cv`. */
std::pair<double, double> lognormal_parameters(double mean, double cv) {
  const double sigma2 = std::log1p(cv * cv);
  return {std::log(mean) - 0.5 * sigma2, std::sqrt(sigma2)};
}

SlowdownLaw parse_slowdown(JsonReader reader) {
  SlowdownLaw law;
  if (reader.value().is_number()) {
    law.kind = SlowdownKind::Fixed;
    law.factor = reader.as_number(Bounds::closed(kMinSpeedFactor, 1.0));
    return law;
  }
  if (!reader.value().is_object())
    throw reader.error("expected a speed factor (a number from 1e-6 to 1) or an object {\"distribution\", ...}, got " +
                       reader.type_name());
  law.kind = reader.enum_choice<SlowdownKind>("distribution");
  // Every value given is checked against its range first, then against the law.
  const auto value = [&](const char* key, double& into) {
    if (reader.has(key)) into = reader.number(key);
  };
  value("factor", law.factor);
  value("min", law.min);
  value("max", law.max);
  value("mean", law.mean);
  value("cv", law.cv);
  const auto needs = [&](std::initializer_list<const char*> keys) {
    for (const char* key : {"factor", "min", "max", "mean", "cv"}) {
      const bool wanted = std::find_if(keys.begin(), keys.end(),
                                       [&](const char* k) { return std::string_view(k) == key; }) != keys.end();
      if (wanted && !reader.has(key))
        throw InputError(reader.source(), reader.pointer() + "/" + key,
                         fmt::format("a {} slow-down needs {}", enum_name(law.kind), key));
      if (!wanted && reader.has(key))
        throw InputError(reader.source(), reader.pointer() + "/" + key,
                         fmt::format("a {} slow-down has no {}; expected no such key", enum_name(law.kind), key));
    }
  };
  switch (law.kind) {
  case SlowdownKind::Fixed:
    needs({"factor"});
    break;
  case SlowdownKind::Uniform:
    needs({"min", "max"});
    if (law.max < law.min)
      throw InputError(reader.source(), reader.pointer() + "/max",
                       fmt::format("expected max >= min ({:g}), got {:g}", law.min, law.max));
    break;
  case SlowdownKind::LogNormal:
    needs({"mean", "cv"});
    break;
  }
  reader.finish();
  return law;
}

} // namespace

double SlowdownLaw::sample(Xoshiro256StarStar& rng) const {
  switch (kind) {
  case SlowdownKind::Fixed:
    return factor;
  case SlowdownKind::Uniform:
    return min + (max - min) * rng.uniform();
  case SlowdownKind::LogNormal: {
    const auto [mu, sigma] = lognormal_parameters(mean, cv);
    return std::clamp(std::exp(mu + sigma * standard_normal(rng)), kMinSpeedFactor, 1.0);
  }
  }
  return 1.0;
}

double SlowdownLaw::mean_stretch(double floor) const {
  switch (kind) {
  case SlowdownKind::Fixed:
    return std::max(1.0 / factor, floor);
  case SlowdownKind::Uniform: {
    if (max <= min) return std::max(1.0 / min, floor);
    // f below g = 1 / floor stretches by 1/f, f above it by floor.
    const double g = 1.0 / floor;
    const double split = std::clamp(g, min, max);
    return (std::log(split / min) + floor * (max - split)) / (max - min);
  }
  case SlowdownKind::LogNormal: {
    // 1/f is log-normal (-mu, sigma) and the cap at f = 1 only matters below floor >= 1: with c = floor,
    // E[max(1/f, c)] = exp(-mu + sigma^2/2) Phi((-mu + sigma^2 - ln c) / sigma) + c Phi((mu + ln c) / sigma).
    // (The floor of draws at kMinSpeedFactor lies many standard deviations out for any allowed mean and cv.)
    const auto [mu, sigma] = lognormal_parameters(mean, cv);
    const double c = std::max(floor, 1.0);
    if (sigma == 0.0) return std::max(1.0 / mean, c);
    const double lc = std::log(c);
    return std::exp(-mu + 0.5 * sigma * sigma) * normal_cdf((-mu + sigma * sigma - lc) / sigma) +
           c * normal_cdf((mu + lc) / sigma);
  }
  }
  return floor;
}

std::string SlowdownLaw::describe() const {
  switch (kind) {
  case SlowdownKind::Fixed:
    return fmt::format("{:g}", factor);
  case SlowdownKind::Uniform:
    return fmt::format("uniform {:g} to {:g}", min, max);
  case SlowdownKind::LogNormal:
    return fmt::format("lognormal mean {:g} cv {:g}, capped at 1", mean, cv);
  }
  return "";
}

StragglerSpec parse_stragglers(JsonReader reader, int gpus) {
  StragglerSpec spec;
  if (auto fixed = reader.optional_child("fixed")) {
    std::vector<bool> seen(static_cast<std::size_t>(gpus), false);
    for (JsonReader& item : fixed->elements(0, static_cast<std::size_t>(gpus))) {
      FixedStraggler s;
      s.gpu = static_cast<int>(item.integer("gpu", 0, gpus - 1));
      if (seen[static_cast<std::size_t>(s.gpu)])
        throw InputError(item.source(), item.pointer() + "/gpu",
                         fmt::format("GPU {} is already a fixed straggler; expected each GPU at most once", s.gpu));
      seen[static_cast<std::size_t>(s.gpu)] = true;
      s.factor = item.number("factor");
      item.finish();
      spec.fixed.push_back(s);
    }
    std::sort(spec.fixed.begin(), spec.fixed.end(),
              [](const FixedStraggler& a, const FixedStraggler& b) { return a.gpu < b.gpu; });
  }
  if (auto random = reader.optional_child("random")) {
    spec.probability = random->number("probability");
    spec.slowdown = parse_slowdown(random->child("slowdown"));
    random->finish();
  }
  reader.finish();
  return spec;
}

StragglerDraws::StragglerDraws(const StragglerSpec& spec, std::uint64_t seed, int gpus)
    : spec_(spec), fixed_(static_cast<std::size_t>(gpus), 1.0) {
  // A stream of its own: the same seed's other draws (failures, serving arrivals) stay independent of these.
  key_ = SplitMix64(seed ^ 0x5354524147474c52ULL).next(); // "STRAGGLR"
  for (const FixedStraggler& s : spec_.fixed) fixed_.at(static_cast<std::size_t>(s.gpu)) = s.factor;
}

std::pair<bool, double> StragglerDraws::random_draw(int gpu, std::int64_t iteration) const {
  if (spec_.probability <= 0.0) return {false, 1.0};
  const std::uint64_t per_gpu = SplitMix64(key_ + static_cast<std::uint64_t>(gpu)).next();
  Xoshiro256StarStar rng(per_gpu ^ (static_cast<std::uint64_t>(iteration) * 0x9e3779b97f4a7c15ULL));
  if (rng.uniform() >= spec_.probability) return {false, 1.0};
  return {true, spec_.slowdown.sample(rng)};
}

bool StragglerDraws::same_factors(int a, int b, std::int64_t iterations) const {
  if (fixed_factor(a) != fixed_factor(b)) return false;
  if (a == b || spec_.probability <= 0.0) return true;
  for (std::int64_t it = 0; it < iterations; ++it)
    if (random_factor(a, it) != random_factor(b, it)) return false;
  return true;
}

} // namespace partsim
