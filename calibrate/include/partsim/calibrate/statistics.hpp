// Robust summaries of repeated timings: median, quartiles, interquartile range and relative spread.
#pragma once

#include <cstddef>
#include <vector>

namespace partsim::calibrate {

/** Quantile q in [0, 1] of `values` with linear interpolation between order statistics (Hyndman and Fan's type 7,
 * the default of R and NumPy). @throws std::invalid_argument when `values` is empty or q is outside [0, 1]. */
double quantile(std::vector<double> values, double q);

/** quantile(values, 0.5). */
double median(std::vector<double> values);

/** Median and spread of repeated measurements of one thing. */
struct Summary {
  std::size_t count = 0;
  double min = 0.0;
  double q1 = 0.0; ///< first quartile
  double median = 0.0;
  double q3 = 0.0; ///< third quartile
  double max = 0.0;
  double mean = 0.0;

  /** q3 - q1. */
  double iqr() const { return q3 - q1; }
  /** iqr() / median: the spread a measured profile records (0 for a zero median). */
  double relative_spread() const { return median != 0.0 ? iqr() / median : 0.0; }
};

/** Summary of `values`. @throws std::invalid_argument when empty. */
Summary summarize(const std::vector<double>& values);

} // namespace partsim::calibrate
