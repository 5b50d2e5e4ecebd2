// Quantiles and summaries against values computed by hand (and by NumPy's default, linear interpolation).
#include "partsim/calibrate/statistics.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace partsim::calibrate {
namespace {

TEST(Statistics, MedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_DOUBLE_EQ(median({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_DOUBLE_EQ(median({7.0}), 7.0);
}

TEST(Statistics, QuantilesInterpolateLinearly) {
  // numpy.quantile([1, 2, 3, 4, 10], [0, .25, .5, .75, .9, 1]) = 1, 2, 3, 4, 7.6, 10
  const std::vector<double> v{10.0, 1.0, 4.0, 2.0, 3.0};
  EXPECT_DOUBLE_EQ(quantile(v, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(quantile(v, 0.25), 2.0);
  EXPECT_DOUBLE_EQ(quantile(v, 0.5), 3.0);
  EXPECT_DOUBLE_EQ(quantile(v, 0.75), 4.0);
  EXPECT_NEAR(quantile(v, 0.9), 7.6, 1e-12);
  EXPECT_DOUBLE_EQ(quantile(v, 1.0), 10.0);
  // numpy.quantile([1, 2, 3, 4], .25) = 1.75
  EXPECT_DOUBLE_EQ(quantile({1.0, 2.0, 3.0, 4.0}, 0.25), 1.75);
}

TEST(Statistics, SummaryHasQuartilesSpreadAndMean) {
  const Summary s = summarize({1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 100.0});
  EXPECT_EQ(s.count, 9u);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 100.0);
  EXPECT_DOUBLE_EQ(s.median, 5.0);
  EXPECT_DOUBLE_EQ(s.q1, 3.0);
  EXPECT_DOUBLE_EQ(s.q3, 7.0);
  EXPECT_DOUBLE_EQ(s.iqr(), 4.0);
  EXPECT_DOUBLE_EQ(s.relative_spread(), 0.8);
  EXPECT_DOUBLE_EQ(s.mean, 136.0 / 9.0);
  // One outlier moves the mean, not the median: why profiles use medians.
  EXPECT_GT(s.mean, 2.0 * s.median);
}

TEST(Statistics, RejectsEmptyInputAndBadQuantiles) {
  EXPECT_THROW(median({}), std::invalid_argument);
  EXPECT_THROW(summarize({}), std::invalid_argument);
  EXPECT_THROW(quantile({1.0}, 1.5), std::invalid_argument);
  EXPECT_THROW(quantile({1.0}, -0.1), std::invalid_argument);
}

TEST(Statistics, ZeroMedianHasZeroRelativeSpread) {
  EXPECT_DOUBLE_EQ(summarize({0.0, 0.0, 0.0}).relative_spread(), 0.0);
}

} // namespace
} // namespace partsim::calibrate
