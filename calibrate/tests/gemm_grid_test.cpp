// GEMM grids: shapes in the profile's order, efficiency points over full grids (holes, missing peaks, clamping) and the
// default curve fitted back to the parameters points were made from.
#include "partsim/calibrate/gemm_grid.hpp"

#include "synthetic_backend.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace partsim::calibrate {
namespace {

using testing::SyntheticBackend;
using testing::SyntheticGpu;

std::vector<GemmPoint> measure(SyntheticBackend& backend, const GemmAxes& axes, const std::vector<std::string>& types) {
  std::vector<Sample> samples;
  for (const std::string& type : types)
    for (const GemmShape3& shape : grid_shapes(axes)) {
      auto s = backend.gemm(shape, type, {0, 5});
      samples.insert(samples.end(), s.begin(), s.end());
    }
  return fit_gemm(samples);
}

TEST(GemmGrid, ShapesAreSortedDistinctWithKFastest) {
  const std::vector<GemmShape3> shapes = grid_shapes({{4096, 16, 16}, {64}, {256, 16}});
  const std::vector<GemmShape3> expected{{16, 64, 16}, {16, 64, 256}, {4096, 64, 16}, {4096, 64, 256}};
  EXPECT_EQ(shapes, expected);
  EXPECT_EQ(grid_shapes(
                {{16, 64, 256, 1024, 4096, 16384}, {16, 64, 256, 1024, 4096, 16384}, {16, 64, 256, 1024, 4096, 16384}})
                .size(),
            216u);
}

TEST(GemmGrid, RefusesEmptyAxesAndDimensionsBelowOne) {
  EXPECT_THROW(grid_shapes({{}, {16}, {16}}), std::invalid_argument);
  EXPECT_THROW(grid_shapes({{16}, {0, 16}, {16}}), std::invalid_argument);
}

TEST(EfficiencyTable, AchievedRateOverPeakOnAFullGridPerType) {
  SyntheticBackend backend;
  const GemmAxes axes{{64, 1024, 8192}, {256, 4096}, {128, 2048, 16384}};
  const std::vector<GemmPoint> points = measure(backend, axes, {"bf16", "fp32"});
  const SyntheticGpu& gpu = backend.gpu();
  const EfficiencyTable table = efficiency_table(points, gpu.peak);
  ASSERT_EQ(table.points.size(), 2u * 18u);
  EXPECT_EQ(table.samples, 2u * 18u * 5u);
  EXPECT_TRUE(table.clamped.empty());
  EXPECT_TRUE(table.dropped_types.empty());
  EXPECT_GT(table.spread, 0.0);
  EXPECT_LE(table.spread, table.max_spread);
  // Grid order: data type, then m, n, k ascending.
  EXPECT_EQ(table.points[0].data_type, "bf16");
  EXPECT_EQ(table.points[0].m, 64);
  EXPECT_EQ(table.points[0].n, 256);
  EXPECT_EQ(table.points[0].k, 128);
  EXPECT_EQ(table.points[1].k, 2048);
  EXPECT_EQ(table.points[18].data_type, "fp32");
  for (const GemmEfficiencyPoint& p : table.points)
    EXPECT_NEAR(p.efficiency, gpu.achieved_efficiency(p.data_type, p.m, p.n, p.k),
                0.015 * gpu.achieved_efficiency(p.data_type, p.m, p.n, p.k))
        << p.data_type << " " << p.m << " " << p.n << " " << p.k;
}

TEST(EfficiencyTable, DropsTypesWithoutPeakOrWithAHole) {
  SyntheticBackend backend;
  std::vector<GemmPoint> points = measure(backend, {{64, 1024}, {256, 4096}, {128}}, {"bf16", "fp16", "fp8"});
  // A hole in the fp16 grid: partsim's parser would refuse it, so the type is left out.
  points.erase(std::find_if(points.begin(), points.end(), [](const GemmPoint& p) { return p.data_type == "fp16"; }));
  std::map<std::string, double> peaks = backend.gpu().peak;
  peaks.erase("fp8");
  const EfficiencyTable table = efficiency_table(points, peaks);
  EXPECT_EQ(table.points.size(), 4u);
  for (const GemmEfficiencyPoint& p : table.points) EXPECT_EQ(p.data_type, "bf16");
  ASSERT_EQ(table.dropped_types.size(), 2u);
  EXPECT_NE(table.dropped_types[0].find("fp16 (3 distinct shapes do not fill the 2 x 2 x 1 grid)"), std::string::npos)
      << table.dropped_types[0];
  EXPECT_NE(table.dropped_types[1].find("fp8"), std::string::npos);
}

TEST(EfficiencyTable, ClampsRatesAbovePeakToOne) {
  SyntheticBackend backend;
  const std::vector<GemmPoint> points = measure(backend, {{8192}, {8192}, {8192}}, {"bf16"});
  const EfficiencyTable table = efficiency_table(points, {{"bf16", 100e12}}); // a peak below what was reached
  ASSERT_EQ(table.points.size(), 1u);
  EXPECT_DOUBLE_EQ(table.points[0].efficiency, 1.0);
  ASSERT_EQ(table.clamped.size(), 1u);
  EXPECT_NE(table.clamped[0].find("bf16 m=8192 n=8192 k=8192"), std::string::npos) << table.clamped[0];
}

std::vector<GemmEfficiencyPoint> curve_points(double h, const std::map<std::string, double>& saturated) {
  std::vector<GemmEfficiencyPoint> points;
  for (const auto& [type, s] : saturated)
    for (const GemmShape3& g : grid_shapes({{16, 256, 4096}, {64, 1024, 16384}, {16, 512, 8192}})) {
      double e = s;
      for (double x : {double(g.m), double(g.n), double(g.k)}) e *= x / (x + h);
      points.push_back({g.m, g.n, g.k, type, e});
    }
  return points;
}

TEST(EfficiencyCurve, RecoversHalfDimensionAndSaturation) {
  const CurveFit fit = fit_efficiency_curve(curve_points(96.0, {{"bf16", 0.78}, {"fp32", 0.6}}));
  EXPECT_NEAR(fit.half_dimension, 96.0, 0.1);
  EXPECT_NEAR(fit.saturated_efficiency.at("bf16"), 0.78, 1e-3);
  EXPECT_NEAR(fit.saturated_efficiency.at("fp32"), 0.6, 1e-3);
  EXPECT_LT(fit.rms_residual, 1e-4);
}

TEST(EfficiencyCurve, FixedHalfDimensionFitsOnlyTheSaturation) {
  const CurveFit fit = fit_efficiency_curve(curve_points(64.0, {{"bf16", 0.8}}), 64.0);
  EXPECT_DOUBLE_EQ(fit.half_dimension, 64.0);
  EXPECT_NEAR(fit.saturated_efficiency.at("bf16"), 0.8, 1e-12);
  EXPECT_THROW(fit_efficiency_curve({}), std::invalid_argument);
  EXPECT_THROW(fit_efficiency_curve(curve_points(64.0, {{"bf16", 0.8}}), 0.0), std::invalid_argument);
}

} // namespace
} // namespace partsim::calibrate
