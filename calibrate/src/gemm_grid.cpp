// Grid shapes, efficiency points over full grids, and the default curve fitted to them.
#include "partsim/calibrate/gemm_grid.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <tuple>

namespace partsim::calibrate {

namespace {

void normalise(std::vector<std::int64_t>& axis, const char* name) {
  if (axis.empty()) throw std::invalid_argument(fmt::format("GEMM grid: the {} axis is empty", name));
  std::sort(axis.begin(), axis.end());
  axis.erase(std::unique(axis.begin(), axis.end()), axis.end());
  if (axis.front() < 1) throw std::invalid_argument(fmt::format("GEMM grid: {} values must be >= 1", name));
}

constexpr double kMinEfficiency = 1e-6;

double shape_factor(const GemmEfficiencyPoint& p, double h) {
  double f = 1.0;
  for (double x : {static_cast<double>(p.m), static_cast<double>(p.n), static_cast<double>(p.k)}) f *= x / (x + h);
  return f;
}

/** Best saturated efficiencies for half dimension h, and the summed squared residual. */
double curve_residual(const std::vector<GemmEfficiencyPoint>& points, double h, std::map<std::string, double>* out) {
  std::map<std::string, std::pair<double, double>> sums; // Σ e·c, Σ c²
  for (const GemmEfficiencyPoint& p : points) {
    const double c = shape_factor(p, h);
    sums[p.data_type].first += p.efficiency * c;
    sums[p.data_type].second += c * c;
  }
  std::map<std::string, double> saturated;
  for (const auto& [type, s] : sums)
    saturated[type] = std::clamp(s.second > 0.0 ? s.first / s.second : 1.0, kMinEfficiency, 1.0);
  double residual = 0.0;
  for (const GemmEfficiencyPoint& p : points) {
    const double r = saturated[p.data_type] * shape_factor(p, h) - p.efficiency;
    residual += r * r;
  }
  if (out) *out = std::move(saturated);
  return residual;
}

} // namespace

std::vector<GemmShape3> grid_shapes(GemmAxes axes) {
  normalise(axes.m, "m");
  normalise(axes.n, "n");
  normalise(axes.k, "k");
  std::vector<GemmShape3> shapes;
  for (std::int64_t m : axes.m)
    for (std::int64_t n : axes.n)
      for (std::int64_t k : axes.k) shapes.push_back({m, n, k});
  return shapes;
}

EfficiencyTable efficiency_table(const std::vector<GemmPoint>& points, const std::map<std::string, double>& peaks) {
  std::map<std::string, std::vector<const GemmPoint*>> by_type;
  for (const GemmPoint& p : points) by_type[p.data_type].push_back(&p);
  EfficiencyTable table;
  std::vector<double> spreads;
  for (auto& [type, members] : by_type) {
    const auto peak = peaks.find(type);
    if (peak == peaks.end() || !(peak->second > 0.0)) {
      table.dropped_types.push_back(type + " (the base profile has no peak rate for it)");
      continue;
    }
    std::set<std::int64_t> ms, ns, ks;
    std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t>> cells;
    for (const GemmPoint* p : members) {
      ms.insert(p->m);
      ns.insert(p->n);
      ks.insert(p->k);
      cells.insert({p->m, p->n, p->k});
    }
    if (cells.size() != members.size() || cells.size() != ms.size() * ns.size() * ks.size()) {
      table.dropped_types.push_back(fmt::format("{} ({} distinct shapes do not fill the {} x {} x {} grid)", type,
                                                cells.size(), ms.size(), ns.size(), ks.size()));
      continue;
    }
    std::sort(members.begin(), members.end(), [](const GemmPoint* a, const GemmPoint* b) {
      return std::tie(a->m, a->n, a->k) < std::tie(b->m, b->n, b->k);
    });
    for (const GemmPoint* p : members) {
      double efficiency = p->flops_per_second / peak->second;
      if (efficiency > 1.0) {
        table.clamped.push_back(fmt::format("{} m={} n={} k={}: {:.4g} of peak", type, p->m, p->n, p->k, efficiency));
        efficiency = 1.0;
      }
      table.points.push_back({p->m, p->n, p->k, type, std::max(efficiency, kMinEfficiency)});
      table.samples += p->seconds.count;
      spreads.push_back(p->seconds.relative_spread());
      table.max_spread = std::max(table.max_spread, p->seconds.relative_spread());
    }
  }
  if (!spreads.empty()) table.spread = median(spreads);
  return table;
}

CurveFit fit_efficiency_curve(const std::vector<GemmEfficiencyPoint>& points,
                              std::optional<double> fixed_half_dimension) {
  if (points.empty()) throw std::invalid_argument("a GEMM efficiency curve needs at least one point");
  if (fixed_half_dimension) {
    if (!(*fixed_half_dimension > 0.0)) throw std::invalid_argument("a half dimension must be > 0");
    CurveFit fit;
    fit.half_dimension = *fixed_half_dimension;
    fit.rms_residual = std::sqrt(curve_residual(points, fit.half_dimension, &fit.saturated_efficiency) /
                                 static_cast<double>(points.size()));
    return fit;
  }
  // Coarse search on a log grid (quarter octaves from 1 to 16384), then golden-section search around the best.
  double best_h = 1.0;
  double best = curve_residual(points, best_h, nullptr);
  for (int i = 1; i <= 56; ++i) {
    const double h = std::pow(2.0, i / 4.0);
    const double r = curve_residual(points, h, nullptr);
    if (r < best) {
      best = r;
      best_h = h;
    }
  }
  double lo = std::log(std::max(1.0, best_h / std::pow(2.0, 0.25)));
  double hi = std::log(std::min(16384.0, best_h * std::pow(2.0, 0.25)));
  const double phi = (std::sqrt(5.0) - 1.0) / 2.0;
  for (int i = 0; i < 60; ++i) {
    const double a = hi - phi * (hi - lo);
    const double b = lo + phi * (hi - lo);
    if (curve_residual(points, std::exp(a), nullptr) < curve_residual(points, std::exp(b), nullptr))
      hi = b;
    else
      lo = a;
  }
  const double refined = std::exp((lo + hi) / 2.0);
  if (curve_residual(points, refined, nullptr) < best) best_h = refined;
  CurveFit fit;
  fit.half_dimension = best_h;
  fit.rms_residual =
      std::sqrt(curve_residual(points, best_h, &fit.saturated_efficiency) / static_cast<double>(points.size()));
  return fit;
}

} // namespace partsim::calibrate
