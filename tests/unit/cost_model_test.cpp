// Cost model: GEMM efficiency interpolation (exact at table points, between its neighbours elsewhere, clamped
// outside, documented fallbacks) and op times hand-computed for compute-bound, memory-bound and launch-bound ops.
#include "partsim/common/error.hpp"
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

/** The test GPU with one bf16 point at the smallest shape: every bf16 GEMM runs at half of peak (the edge value
 * holds above the table). */
GpuProfile half_peak_gpu() {
  return test_gpu(json::array({point(1, 1, 1, 0.5)}));
}

/** The test GPU with scattered bf16 `points`. */
GpuProfile scattered_gpu(const json& points, const std::string& layout = "scattered") {
  return parse({{"name", "hand"},
                {"peak_flops", {{"bf16", "1000TFLOPs"}, {"fp32", "50TFLOPs"}}},
                {"memory_bandwidth", "2TBps"},
                {"memory_capacity", "80GB"},
                {"kernel_launch_overhead", "5us"},
                {"gemm_efficiency", {{"layout", layout}, {"points", points}}}});
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
    // The point as measured, times the profile's sustained-compute figure (1 without one).
    for (const GemmEfficiencyPoint& p : gpu.gemm_efficiency.points)
      EXPECT_EQ(gemm_efficiency(gpu, {1, p.m, p.n, p.k}, p.data_type), gpu.sustained_compute_factor() * p.efficiency)
          << p.m << "x" << p.n << "x" << p.k;
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
  // k has one value, 1024: above it that value holds; below, it is scaled by the curve's x / (x + 64) relative to
  // the edge's 1024 / 1088.
  EXPECT_NEAR(gemm_efficiency(gpu, {1, 512, 64, 4096}, "bf16"), 0.35, 1e-12);
  EXPECT_NEAR(gemm_efficiency(gpu, {1, 512, 64, 7}, "bf16"), 0.35 * (7.0 / 71.0) / (1024.0 / 1088.0), 1e-12);
}

TEST(GemmEfficiency, AboveTheTableTheEdgeHoldsBelowItTheCurveScalesIt) {
  const GpuProfile gpu = grid_gpu();
  EXPECT_EQ(gemm_efficiency(gpu, {1, 1'000'000, 1'000'000, 1'000'000}, "bf16"), 0.8);
  // m = 1 and n = 1 below the axes' 64: each factor (1/65) / (64/128).
  const double below = (1.0 / 65.0) / (64.0 / 128.0);
  EXPECT_NEAR(gemm_efficiency(gpu, {1, 1, 1, 1024}, "bf16"), 0.2 * below * below, 1e-15);
  EXPECT_NEAR(gemm_efficiency(gpu, {1, 1, 100'000, 1024}, "bf16"), 0.4 * below, 1e-15);
  // Both below the table's 64 rows: the ratio is the curve's alone.
  EXPECT_NEAR(gemm_efficiency(gpu, {1, 1, 16, 1024}, "bf16") / gemm_efficiency(gpu, {1, 16, 16, 1024}, "bf16"),
              (1.0 / 65.0) / (16.0 / 80.0), 1e-12);
  // A shipped scattered table (Vidur's H100 layers: up to 32,768 rows, n 57,344, k 28,672): above every axis's
  // largest value the edge holds too.
  const GpuProfile h100 = shipped("h100-sxm5-80gb");
  EXPECT_EQ(gemm_efficiency(h100, {1, 131072, 131072, 131072}, "bf16"),
            gemm_efficiency(h100, {1, 65536, 65536, 65536}, "bf16"));
}

TEST(GemmEfficiency, ScatteredPointsAreWeighedByInverseSquaredDistance) {
  // Three shapes, not a grid. Query (1024, 1024, 1024): (256, 1024, 1024) and (4096, 1024, 1024) lie 2 ln 2 away
  // along m; (1024, 1024, 8192) 3 ln 2 along k.
  const GpuProfile gpu =
      scattered_gpu({point(256, 1024, 1024, 0.5), point(4096, 1024, 1024, 0.7), point(1024, 1024, 8192, 0.9)});
  ASSERT_EQ(gpu.gemm_efficiency.layout, GemmPointLayout::Scattered);
  ASSERT_TRUE(gpu.gemm_efficiency.grids.empty());
  const double l2 = std::log(2.0) * std::log(2.0);
  const double w_m = 1.0 / (4.0 * l2);
  const double w_k = 1.0 / (9.0 * l2);
  EXPECT_NEAR(gemm_efficiency(gpu, {1, 1024, 1024, 1024}, "bf16"),
              (0.5 * w_m + 0.7 * w_m + 0.9 * w_k) / (2 * w_m + w_k), 1e-12);
  // Exactly a point's value at its shape; the batch counts as rows.
  EXPECT_EQ(gemm_efficiency(gpu, {1, 4096, 1024, 1024}, "bf16"), 0.7);
  EXPECT_EQ(gemm_efficiency(gpu, {16, 256, 1024, 1024}, "bf16"), 0.7);
  // Above every point's m: clamped to 4096, the point itself.
  EXPECT_EQ(gemm_efficiency(gpu, {1, 100'000, 1024, 1024}, "bf16"), 0.7);
  // Below the smallest n (1024): the clamped value scaled by the curve's factor.
  EXPECT_NEAR(gemm_efficiency(gpu, {1, 4096, 64, 1024}, "bf16"), 0.7 * (64.0 / 128.0) / (1024.0 / 1088.0), 1e-12);
  // Any query inside the points' range lies between their smallest and largest efficiency.
  for (std::int64_t m : {300, 1000, 3000})
    for (std::int64_t k : {1024, 2000, 5000, 8192}) {
      const double e = gemm_efficiency(gpu, {1, m, 1024, k}, "bf16");
      EXPECT_GE(e, 0.5);
      EXPECT_LE(e, 0.9);
    }
  // The layout survives the report's copy of the profile.
  EXPECT_EQ(to_json(gpu)["gemm_efficiency"]["layout"], "scattered");
}

TEST(GemmEfficiency, AScatteredTableRefusesADuplicateShapeAndAnUnknownLayout) {
  const json twice = {point(256, 1024, 1024, 0.5), point(256, 1024, 1024, 0.6)};
  try {
    scattered_gpu(twice);
    ADD_FAILURE() << "a duplicate shape was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/gemm_efficiency/points/1");
    EXPECT_NE(std::string(e.what()).find("duplicate point"), std::string::npos) << e.what();
  }
  try {
    scattered_gpu({point(256, 1024, 1024, 0.5)}, "cloud");
    ADD_FAILURE() << "an unknown layout was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/gemm_efficiency/layout");
  }
  // Without "layout", the same three shapes are a broken grid, not silently scattered.
  EXPECT_THROW(test_gpu({point(256, 1024, 1024, 0.5), point(4096, 1024, 1024, 0.7), point(1024, 1024, 8192, 0.9)}),
               InputError);
}

TEST(GemmEfficiency, GrowsWithEachDimensionOnAShippedTable) {
  // B200's table follows its default curve (no measurement yet), which saturates at 0.80. (Measured tables need not
  // grow: cuBLAS picks another kernel at another size, and Vidur's A100 times show it.)
  const GpuProfile gpu = shipped("b200");
  double previous = 0.0;
  for (std::int64_t m = 8; m <= 32768; m = m * 3 / 2) {
    const double e = gemm_efficiency(gpu, {1, m, 2048, 2048}, "bf16");
    EXPECT_GE(e, previous) << m;
    previous = e;
  }
  EXPECT_GT(previous, 0.70);
  EXPECT_LE(previous, 0.80);
}

TEST(GemmEfficiency, TheA100TableIsVidursMeasuredLayers) {
  const GpuProfile gpu = shipped("a100-sxm4-80gb");
  ASSERT_EQ(gpu.gemm_efficiency.layout, GemmPointLayout::Scattered);
  EXPECT_EQ(gpu.gemm_efficiency.provenance.kind, "published_measurement");
  // Llama-2-70B's MLP up projection at 4096 tokens and TP 1 (4096 x 57344 x 8192): 15.9 to 16.6 ms in the rows of
  // Vidur's a100/meta-llama/Llama-2-70b-hf/mlp.csv and Meta-Llama-3-70B/mlp.csv (the same shape), median 16.3 ms:
  // 2mnk / t = 236 TFLOP/s = 0.756 of 312.
  EXPECT_NEAR(gemm_efficiency(gpu, {1, 4096, 57344, 8192}, "fp16"), 0.756, 0.005);
  // Large GEMMs reach 0.65 to 0.85 of the peak, below the MAMF best of 0.87 that the curve assumed before.
  for (const GemmShape& s : {GemmShape{1, 8192, 2304, 6144}, GemmShape{1, 8192, 6144, 3072},
                             GemmShape{1, 2048, 9600, 25600}, GemmShape{1, 16384, 16384, 16384}}) {
    const double e = gemm_efficiency(gpu, s, "bf16");
    EXPECT_GT(e, 0.65) << s.m << "x" << s.n << "x" << s.k;
    EXPECT_LT(e, 0.85) << s.m << "x" << s.n << "x" << s.k;
  }
}

TEST(GemmEfficiency, DataTypeWithoutPointsUsesTheProfileCurve) {
  // h100: points for fp16 and bf16 only; tf32 follows default_curve 0.80 · Π x/(x+64) (fp8 is the bf16 table's at
  // half the depth: Fp8Cost in fp8_test.cpp).
  const GpuProfile h100 = shipped("h100-sxm5-80gb");
  const double f = 4096.0 / (4096.0 + 64.0);
  EXPECT_NEAR(gemm_efficiency(h100, {1, 4096, 4096, 4096}, "tf32"), 0.80 * f * f * f, 1e-12);
  EXPECT_NEAR(gemm_efficiency(h100, {1, 64, 64, 64}, "tf32"), 0.80 * 0.125, 1e-12);
  // Without bf16 points either, fp8 has the curve's own figure.
  GpuProfile bare = h100;
  bare.gemm_efficiency.grids.clear();
  bare.gemm_efficiency.scatters.clear();
  EXPECT_NEAR(gemm_efficiency(bare, {1, 4096, 4096, 4096}, "fp8"), 0.70 * f * f * f, 1e-12);
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
  // Vidur's H100 layers of about this size read 0.65 to 0.80 a kernel at a time; the profile keeps its sustained
  // fraction of that (below 1: the H100 boosts above the clock its datasheet peak is counted at).
  const double sustained = h100.sustained_compute_factor();
  EXPECT_LT(sustained, 1.0);
  EXPECT_GT(e / sustained, 0.65);
  EXPECT_LT(e / sustained, 0.80);
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
  // k = 64 below the grid's one k (1024): 0.8 scaled by (64/128) / (1024/1088).
  EXPECT_NEAR(gemm_efficiency(gpu, {1, 4096, 4096, 64}, "bf16"), 0.8 * 0.5 / (1024.0 / 1088.0), 1e-15);
}

} // namespace
} // namespace partsim
