// The GEMM efficiency table of a measured profile: the full (m, n, k) grid per data type that partsim's profile
// parser requires, achieved rate over peak at each point, and the closed-form default curve fitted to the points.
#pragma once

#include "partsim/calibrate/fits.hpp"
#include "partsim/input/hardware.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace partsim::calibrate {

/** The axes of a grid; every combination is one shape to measure. */
struct GemmAxes {
  std::vector<std::int64_t> m;
  std::vector<std::int64_t> n;
  std::vector<std::int64_t> k;
};

/** One GEMM to measure. */
struct GemmShape3 {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  bool operator==(const GemmShape3&) const = default;
};

/** Every (m, n, k) of the axes (sorted, duplicates removed), m slowest and k fastest: the order of the profile's
 * grid. @throws std::invalid_argument for an empty axis or a dimension < 1. */
std::vector<GemmShape3> grid_shapes(GemmAxes axes);

/** Efficiency points on full grids, ready for a profile's `gemm_efficiency/points`. */
struct EfficiencyTable {
  std::vector<GemmEfficiencyPoint> points; ///< per data type in grid order (m, n, k ascending)
  std::size_t samples = 0;                 ///< timings behind the points
  double spread = 0.0;                     ///< median over points of the relative spread (IQR / median time)
  double max_spread = 0.0;                 ///< largest relative spread of any point
  std::vector<std::string> clamped;        ///< points whose achieved rate exceeded the peak, clamped to 1
  std::vector<std::string> dropped_types;  ///< measured data types without a peak rate, or not on a full grid
};

/** efficiency = achieved flop/s / peak[data type] for each measured point.
 *
 * Data types without a peak are dropped (named in `dropped_types`). The points of a data type must form a full grid
 * over their own axes; a type with a hole is dropped too (partsim would refuse the profile). An efficiency above 1
 * (a peak below what the GPU reached) is clamped to 1 and named in `clamped`; one below 1e-6 is raised to 1e-6 (the
 * profile's range is (0, 1]). */
EfficiencyTable efficiency_table(const std::vector<GemmPoint>& points, const std::map<std::string, double>& peaks);

/** GemmEfficiencyCurve fitted to points: one half dimension h for all types and a saturated efficiency s per type
 * minimising Σ (s·Π x/(x+h) - e)² over the points; s has a closed form for each h. With `fixed_half_dimension`, h is
 * that value (a profile keeps its base's h so the types it did not measure are priced as before); otherwise h is
 * searched on a log grid from 1 to 16384, then refined by golden-section search. */
struct CurveFit {
  double half_dimension = 0.0;
  std::map<std::string, double> saturated_efficiency; ///< clamped to (0, 1]
  double rms_residual = 0.0;                          ///< over all points
};
/** @throws std::invalid_argument without points. */
CurveFit fit_efficiency_curve(const std::vector<GemmEfficiencyPoint>& points,
                              std::optional<double> fixed_half_dimension = std::nullopt);

} // namespace partsim::calibrate
