// Cost model: GEMM efficiency interpolation (exact at table points, between its neighbours elsewhere, clamped
// outside, documented fallbacks) and op times hand-computed for compute-bound, memory-bound and launch-bound ops.
#include "partsim/input/hardware.hpp"
#include "partsim/input/json_reader.hpp"
#include "partsim/model/compute_op.hpp"
#include "partsim/model/cost_model.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace partsim {
namespace {

using nlohmann::json;

GpuProfile parse(const json& doc) {
  JsonReader reader(doc, "gpu.json");
  return parse_gpu_profile(reader);
}

json point(std::int64_t m, std::int64_t n, std::int64_t k, double efficiency) {
  return {{"m", m}, {"n", n}, {"k", k}, {"data_type", "bf16"}, {"efficiency", efficiency}};
}

/** An inline GPU: bf16 1000 TFLOP/s, fp32 50 TFLOP/s, 2 TB/s, 5 us launches, bf16 `points`. */
GpuProfile test_gpu(const json& points) {
  return parse({{"name", "hand"},
                {"peak_flops", {{"bf16", "1000TFLOPs"}, {"fp32", "50TFLOPs"}}},
                {"memory_bandwidth", "2TBps"},
                {"memory_capacity", "80GB"},
                {"kernel_launch_overhead", "5us"},
                {"gemm_efficiency", {{"points", points}}}});
}

/** The test GPU with one bf16 point: every bf16 GEMM runs at half of peak. */
GpuProfile half_peak_gpu() {
  return test_gpu(json::array({point(1024, 1024, 1024, 0.5)}));
}

/** A 2 x 2 x 1 grid: m, n in {64, 4096}, k = 1024. */
GpuProfile grid_gpu() {
  return test_gpu(
      {point(64, 64, 1024, 0.2), point(64, 4096, 1024, 0.4), point(4096, 64, 1024, 0.5), point(4096, 4096, 1024, 0.8)});
}

GpuProfile shipped(const std::string& name) {
  return load_gpu_profile(test::source_dir(), name, "test", "/cluster/gpu");
}

ComputeOp gemm_op(std::int64_t m, std::int64_t n, std::int64_t k) {
  ComputeOp op;
  op.name = "gemm";
  op.kind = OpKind::Gemm;
  op.gemm = GemmShape{1, m, n, k};
  op.forward_flops = op.gemm->flops();
  op.backward_flops = 2.0 * op.forward_flops;
  op.weight_elements = static_cast<double>(k * n);
  op.input_elements = static_cast<double>(m * k);
  op.output_elements = static_cast<double>(m * n);
  return op;
}

ComputeOp elementwise_op(double elements) {
  ComputeOp op;
  op.name = "gelu";
  op.kind = OpKind::Elementwise;
  op.forward_flops = elements;
  op.backward_flops = 2.0 * elements;
  op.input_elements = elements;
  op.output_elements = elements;
  return op;
}

// --- gemm_efficiency -----------------------------------------------------------------------------------------

TEST(GemmEfficiency, ExactAtEveryTablePointOfEveryShippedProfile) {
  for (const std::string& name : list_gpu_profiles(test::source_dir())) {
    SCOPED_TRACE(name);
    const GpuProfile gpu = shipped(name);
    ASSERT_FALSE(gpu.gemm_efficiency.points.empty());
    for (const GemmEfficiencyPoint& p : gpu.gemm_efficiency.points)
      EXPECT_EQ(gemm_efficiency(gpu, {1, p.m, p.n, p.k}, p.data_type), p.efficiency) << p.m << "x" << p.n << "x" << p.k;
  }
}

TEST(GemmEfficiency, HandComputedBetweenPoints) {
  const GpuProfile gpu = grid_gpu();
  // 512 is halfway between 64 and 4096 in log space: the four corners weigh 1/4 each.
  EXPECT_NEAR(gemm_efficiency(gpu, {1, 512, 512, 1024}, "bf16"), (0.2 + 0.4 + 0.5 + 0.8) / 4, 1e-12);
  // On an edge: halfway between (64, 64) and (4096, 64).
  EXPECT_NEAR(gemm_efficiency(gpu, {1, 512, 64, 1024}, "bf16"), (0.2 + 0.5) / 2, 1e-12);
  // A quarter of the way in log space: 64 · 64^(1/4) = 181.02...; 128 is 1/6 of the way (2^6 → 2^12).
  EXPECT_NEAR(gemm_efficiency(gpu, {1, 128, 64, 1024}, "bf16"), 0.2 + (0.5 - 0.2) / 6, 1e-12);
  // k has one value: every k takes it.
  EXPECT_NEAR(gemm_efficiency(gpu, {1, 512, 64, 7}, "bf16"), 0.35, 1e-12);
}

TEST(GemmEfficiency, ClampedOutsideTheTable) {
  const GpuProfile gpu = grid_gpu();
  EXPECT_EQ(gemm_efficiency(gpu, {1, 1, 1, 1024}, "bf16"), 0.2);
  EXPECT_EQ(gemm_efficiency(gpu, {1, 1'000'000, 1'000'000, 1'000'000}, "bf16"), 0.8);
  EXPECT_EQ(gemm_efficiency(gpu, {1, 1, 100'000, 1024}, "bf16"), 0.4);
  const GpuProfile h100 = shipped("h100-sxm5-80gb");
  EXPECT_EQ(gemm_efficiency(h100, {1, 1, 16, 16}, "bf16"), gemm_efficiency(h100, {1, 16, 16, 16}, "bf16"));
  EXPECT_EQ(gemm_efficiency(h100, {1, 65536, 65536, 65536}, "bf16"),
            gemm_efficiency(h100, {1, 16384, 16384, 16384}, "bf16"));
}

TEST(GemmEfficiency, BatchCountsAsRows) {
  const GpuProfile gpu = grid_gpu();
  EXPECT_EQ(gemm_efficiency(gpu, {8, 64, 64, 1024}, "bf16"), gemm_efficiency(gpu, {1, 512, 64, 1024}, "bf16"));
}

TEST(GemmEfficiency, WithinTheSurroundingPointsOfAShippedTable) {
  for (const char* name : {"h100-sxm5-80gb", "mi300x"}) {
    SCOPED_TRACE(name);
    const GpuProfile gpu = shipped(name);
    const GemmEfficiencyGrid& grid = gpu.gemm_efficiency.grids.at("bf16");
    // Queries inside every cell (and on every edge) along a fixed pattern of log-space fractions.
    for (std::size_t im = 0; im + 1 < grid.m.size(); ++im)
      for (std::size_t in = 0; in + 1 < grid.n.size(); ++in)
        for (std::size_t ik = 0; ik + 1 < grid.k.size(); ++ik)
          for (double f : {0.0, 0.13, 0.5, 0.77}) {
            const auto between = [f](std::int64_t lo, std::int64_t hi) {
              return static_cast<std::int64_t>(std::llround(std::exp(
                  std::log(static_cast<double>(lo)) + f * (std::log(static_cast<double>(hi)) - std::log(lo)))));
            };
            const GemmShape shape{1, between(grid.m[im], grid.m[im + 1]), between(grid.n[in], grid.n[in + 1]),
                                  between(grid.k[ik], grid.k[ik + 1])};
            double lo = 1.0;
            double hi = 0.0;
            for (std::size_t a : {im, im + 1})
              for (std::size_t b : {in, in + 1})
                for (std::size_t c : {ik, ik + 1}) {
                  lo = std::min(lo, grid.at(a, b, c));
                  hi = std::max(hi, grid.at(a, b, c));
                }
            const double e = gemm_efficiency(gpu, shape, "bf16");
            EXPECT_GE(e, lo - 1e-12) << shape.m << "x" << shape.n << "x" << shape.k;
            EXPECT_LE(e, hi + 1e-12) << shape.m << "x" << shape.n << "x" << shape.k;
          }
  }
}

TEST(GemmEfficiency, GrowsWithEachDimensionOnAShippedTable) {
  const GpuProfile gpu = shipped("a100-sxm4-80gb");
  double previous = 0.0;
  for (std::int64_t m = 8; m <= 32768; m = m * 3 / 2) {
    const double e = gemm_efficiency(gpu, {1, m, 2048, 2048}, "bf16");
    EXPECT_GE(e, previous) << m;
    previous = e;
  }
  EXPECT_GT(previous, 0.75); // saturating below the A100 curve's 0.85
  EXPECT_LE(previous, 0.85);
}

TEST(GemmEfficiency, DataTypeWithoutPointsUsesTheProfileCurve) {
  // h100: points for bf16 only; fp8 follows default_curve 0.70 · Π x/(x+64).
  const GpuProfile h100 = shipped("h100-sxm5-80gb");
  const double f = 4096.0 / (4096.0 + 64.0);
  EXPECT_NEAR(gemm_efficiency(h100, {1, 4096, 4096, 4096}, "fp8"), 0.70 * f * f * f, 1e-12);
  EXPECT_NEAR(gemm_efficiency(h100, {1, 64, 64, 64}, "fp8"), 0.70 * 0.125, 1e-12);
}

TEST(GemmEfficiency, ProfileWithoutTableUsesTheBuiltInCurveNotOne) {
  const GpuProfile gpu = parse(
      {{"name", "bare"}, {"peak_flops", "100TFLOPs"}, {"memory_bandwidth", "1TBps"}, {"memory_capacity", "80GB"}});
  const double f = 1024.0 / (1024.0 + kDefaultGemmHalfDimension);
  EXPECT_NEAR(gemm_efficiency(gpu, {1, 1024, 1024, 1024}, "bf16"), kDefaultGemmSaturatedEfficiency * f * f * f, 1e-12);
  EXPECT_LT(gemm_efficiency(gpu, {1, 1 << 20, 1 << 20, 1 << 20}, "bf16"), kDefaultGemmSaturatedEfficiency);
}

// --- op_time -------------------------------------------------------------------------------------------------

TEST(OpTime, ComputeBoundGemm) {
  const GpuProfile gpu = half_peak_gpu();
  const ComputeOp op = gemm_op(4096, 4096, 4096);
  // 2·4096³ = 137,438,953,472 flop at 1e15 x 0.5 flop/s = 274.877906944 us; bytes 2·3·4096² = 100,663,296 at
  // 2e12 B/s = 50.33 us (less); plus the 5 us launch.
  EXPECT_NEAR(op_time(op, gpu, "bf16", 2.0, false), 279.877906944e-6, 1e-15);
  // Backward: the input and weight gradients, each the forward's flops and bytes, each launched.
  EXPECT_NEAR(op_time(op, gpu, "bf16", 2.0, true), 2 * 279.877906944e-6, 1e-15);
  ComputeOp first = op;
  first.input_gradient = false;
  first.backward_flops = first.forward_flops;
  EXPECT_NEAR(op_time(first, gpu, "bf16", 2.0, true), 279.877906944e-6, 1e-15);
}

TEST(OpTime, MemoryBoundGemm) {
  const GpuProfile gpu = half_peak_gpu();
  // One token through a 4096 x 4096 layer: 2·4096² flop = 67 ns at half peak; the weights dominate the bytes:
  // 2·(4096² + 4096 + 4096) = 33,570,816 B at 2e12 B/s = 16.785408 us; plus 5 us.
  EXPECT_NEAR(op_time(gemm_op(1, 4096, 4096), gpu, "bf16", 2.0, false), 21.785408e-6, 1e-15);
}

TEST(OpTime, MemoryBoundElementwise) {
  const GpuProfile gpu = half_peak_gpu();
  const ComputeOp op = elementwise_op(1e8);
  // 1e8 flop at the fp32 vector rate 50e12 = 2 us; 2·(1e8 + 1e8) = 4e8 B at 2e12 B/s = 200 us; plus 5 us.
  EXPECT_NEAR(op_time(op, gpu, "bf16", 2.0, false), 205e-6, 1e-15);
  // Backward reads input and output gradient, writes the input gradient: 2·(2·1e8 + 1e8) = 6e8 B = 300 us.
  EXPECT_NEAR(op_time(op, gpu, "bf16", 2.0, true), 305e-6, 1e-15);
  // fp32 data doubles the bytes.
  EXPECT_NEAR(op_time(op, gpu, "bf16", 4.0, false), 405e-6, 1e-15);
}

TEST(OpTime, TinyOpIsLaunchBound) {
  const GpuProfile gpu = half_peak_gpu();
  // 4,000 B at 2e12 B/s = 2 ns; 1,000 flop at 50e12 = 20 ps: the 5 us launch is nearly all of it.
  const double t = op_time(elementwise_op(1000), gpu, "bf16", 2.0, false);
  EXPECT_NEAR(t, 5.002e-6, 1e-15);
  EXPECT_GT(gpu.kernel_launch_overhead.value / t, 0.999);
  // A tiny GEMM too: 2·16³ flop, 2·3·256 B.
  EXPECT_NEAR(op_time(gemm_op(16, 16, 16), gpu, "bf16", 2.0, false), 5e-6 + 1536.0 / 2e12, 1e-15);
}

TEST(OpTime, NoWorkNoLaunch) {
  ComputeOp op;
  op.kind = OpKind::Elementwise;
  EXPECT_EQ(op_time(op, half_peak_gpu(), "bf16", 2.0, false), 0.0);
}

TEST(OpTime, ShippedProfileUsesItsTableAndOverhead) {
  const GpuProfile h100 = shipped("h100-sxm5-80gb");
  const ComputeOp op = gemm_op(8192, 8192, 8192);
  const double e = gemm_efficiency(h100, *op.gemm, "bf16");
  EXPECT_GT(e, 0.75);
  EXPECT_LT(e, 0.80);
  const double expected = op.forward_flops / (989.5e12 * e) + 3e-6;
  EXPECT_NEAR(op_time(op, h100, "bf16", 2.0, false), expected, 1e-12);
  // The same GEMM on an A100 takes longer, by about the ratio of achieved rates.
  const double a100 = op_time(op, shipped("a100-sxm4-80gb"), "bf16", 2.0, false);
  EXPECT_GT(a100, 2.5 * op_time(op, h100, "bf16", 2.0, false));
}

TEST(OpTime, BackwardProductsHaveTheirOwnShapes) {
  // m = 64 rows: forward (64, 4096, k) and input gradient (64, k, 4096) are thin; the weight gradient
  // (k, 4096, 64) has a shallow depth of 64. On the grid GPU (k fixed) the shapes give different efficiencies.
  const GpuProfile gpu = grid_gpu();
  ComputeOp op = gemm_op(64, 4096, 4096);
  const double flops = op.forward_flops;
  const double bytes = op.forward_bytes(2.0);
  const double dgrad = std::max(flops / (1e15 * gemm_efficiency(gpu, {1, 64, 4096, 4096}, "bf16")), bytes / 2e12);
  const double wgrad = std::max(flops / (1e15 * gemm_efficiency(gpu, {1, 4096, 4096, 64}, "bf16")), bytes / 2e12);
  EXPECT_NEAR(op_time(op, gpu, "bf16", 2.0, true), dgrad + wgrad + 10e-6, 1e-15);
  EXPECT_EQ(gemm_efficiency(gpu, {1, 64, 4096, 4096}, "bf16"), 0.4);
  EXPECT_EQ(gemm_efficiency(gpu, {1, 4096, 4096, 64}, "bf16"), 0.8);
}

} // namespace
} // namespace partsim
