// A whole calibration on the synthetic backend: every step of the plan is measured and fitted, failures become
// warnings without losing the rest, and the plans stay within their time budgets on an H200-like GPU.
#include "partsim/calibrate/calibration.hpp"

#include "synthetic_backend.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace partsim::calibrate {
namespace {

using testing::SyntheticBackend;
using testing::SyntheticGpu;

TEST(Calibration, QuickPlanMeasuresAndFitsEverything) {
  SyntheticBackend backend;
  std::vector<std::string> progress;
  const CalibrationResult r =
      run_calibration(backend, quick_plan(), [&](const std::string& line) { progress.push_back(line); });
  EXPECT_TRUE(r.warnings.empty()) << r.warnings.front();
  EXPECT_EQ(r.device.name, "NVIDIA H200");
  EXPECT_EQ(r.gemm.size(), 5u * 64u);
  ASSERT_TRUE(r.device_copy && r.elementwise && r.launch && r.power);
  EXPECT_NEAR(r.device_copy->line.bandwidth, 4.2e12, 0.03 * 4.2e12);
  EXPECT_NEAR(r.elementwise->line.bandwidth, 4.0e12, 0.03 * 4.0e12);
  EXPECT_NEAR(r.launch->interval.median, 2.5e-6, 0.03 * 2.5e-6);
  EXPECT_EQ(r.links.size(), 4u + 2u); // H2D and D2H, pinned and pageable; 0 -> 1 and 1 -> 0
  EXPECT_EQ(r.collectives.size(), 4u);
  EXPECT_NEAR(r.power->idle_watts.median, 75.0, 1e-9);
  EXPECT_FALSE(progress.empty());
  EXPECT_EQ(progress.back().rfind("fitting ", 0), 0u);
}

TEST(Calibration, SustainedComputeIsTheLoopsRateOverTheGridsForTheSameGemm) {
  SyntheticBackend backend; // the loop's GEMMs run at 0.85 of the grid's rate
  const CalibrationResult r = run_calibration(backend, quick_plan());
  ASSERT_TRUE(r.sustained_compute.has_value());
  const SustainedComputeFit& s = *r.sustained_compute;
  EXPECT_EQ(s.data_type, "bf16");
  EXPECT_EQ(s.shape, (GemmShape3{8192, 8192, 8192}));
  EXPECT_NEAR(s.ratio, 0.85, 0.02);
  EXPECT_FALSE(s.clamped);
  EXPECT_EQ(s.sustained_seconds.count, 50u);
  EXPECT_EQ(r.power->shape, s.shape);

  SyntheticGpu faster; // a loop that runs faster than the grid (noise, a boost) is written as 1, and says so
  faster.sustained = 1.1;
  SyntheticBackend boost(faster);
  const CalibrationResult b = run_calibration(boost, quick_plan());
  ASSERT_TRUE(b.sustained_compute.has_value());
  EXPECT_DOUBLE_EQ(b.sustained_compute->ratio, 1.0);
  EXPECT_TRUE(b.sustained_compute->clamped);

  SyntheticGpu untimed; // a backend that does not time the loop's GEMMs: no figure and no warning
  untimed.sustained = 0.0;
  SyntheticBackend quiet(untimed);
  const CalibrationResult q = run_calibration(quiet, quick_plan());
  EXPECT_FALSE(q.sustained_compute.has_value());
  EXPECT_TRUE(q.warnings.empty());
}

TEST(Calibration, SustainedComputeNeedsTheLoopsShapeOnTheGrid) {
  SyntheticBackend backend;
  CalibrationPlan plan = quick_plan();
  plan.gemm_axes = {{1024}, {4096}, {1024}}; // no cube: the loop runs 8192 cubed, which the grid lacks
  plan.gemm_data_types = {"bf16"};
  const CalibrationResult r = run_calibration(backend, plan);
  EXPECT_FALSE(r.sustained_compute.has_value());
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0], "sustained compute: the GEMM grid has no bf16 8192x8192x8192 point to compare the power "
                           "loop's GEMMs with; not written");
}

TEST(Calibration, SustainedComputeIsNotWrittenFromZeroLengthTimings) {
  SyntheticGpu broken; // the loop's GEMMs timed at 0 s: no ratio can be formed, and the warning says why
  broken.sustained = -1.0;
  SyntheticBackend backend(broken);
  const CalibrationResult r = run_calibration(backend, quick_plan());
  EXPECT_FALSE(r.sustained_compute.has_value());
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0].rfind("sustained compute: a bf16 8192x8192x8192 GEMM timed at 0 s in the power loop and ", 0),
            0u)
      << r.warnings[0];
  EXPECT_NE(r.warnings[0].find("not both positive; not written"), std::string::npos) << r.warnings[0];
}

TEST(Calibration, PowerLoopRunsTheGridsLargestCubeUpTo8192) {
  EXPECT_EQ(power_gemm_shape(quick_plan().gemm_axes), (GemmShape3{8192, 8192, 8192}));
  EXPECT_EQ(power_gemm_shape(full_plan().gemm_axes), (GemmShape3{4096, 4096, 4096})); // 16384 is above 8192
  EXPECT_EQ(power_gemm_shape({{256, 1024}, {1024, 256}, {4096, 256}}), (GemmShape3{256, 256, 256}));
  EXPECT_EQ(power_gemm_shape({{128}, {256}, {512}}), (GemmShape3{8192, 8192, 8192}));
}

TEST(Calibration, OneGpuMeasuresNoPeersOrCollectives) {
  SyntheticGpu gpu;
  gpu.gpus = 1;
  SyntheticBackend backend(gpu);
  const CalibrationResult r = run_calibration(backend, quick_plan());
  EXPECT_EQ(r.links.size(), 4u);
  EXPECT_TRUE(r.collectives.empty());
}

TEST(Calibration, AFailingStepBecomesAWarningAndTheRestIsKept) {
  SyntheticBackend backend;
  backend.failing = {"elementwise", "collective", "power"};
  const CalibrationResult r = run_calibration(backend, quick_plan());
  EXPECT_TRUE(r.device_copy.has_value());
  EXPECT_FALSE(r.elementwise.has_value());
  EXPECT_FALSE(r.power.has_value());
  EXPECT_TRUE(r.collectives.empty());
  ASSERT_EQ(r.warnings.size(), 1u + 4u + 1u); // the elementwise kernel, four collectives, power
  EXPECT_EQ(r.warnings[0], "elementwise kernel: elementwise: synthetic failure");
}

TEST(Calibration, UnsupportedDataTypesAreSkippedWithAWarning) {
  class NoFp8 : public SyntheticBackend {
   public:
    std::vector<std::string> gemm_data_types() override { return {"bf16", "fp16", "tf32", "fp32"}; }
  } backend;
  CalibrationPlan plan = quick_plan();
  plan.gemm_axes = {{256}, {256}, {256, 512}};
  const CalibrationResult r = run_calibration(backend, plan);
  EXPECT_EQ(r.gemm.size(), 4u * 2u);
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_EQ(r.warnings[0], "GEMM fp8: not supported on NVIDIA H200; skipped");
}

TEST(Calibration, RefitFromSamplesGivesTheSameFigures) {
  SyntheticBackend backend;
  const CalibrationResult first = run_calibration(backend, quick_plan());
  const CalibrationResult again = fit_samples(first.device, first.samples);
  ASSERT_EQ(again.gemm.size(), first.gemm.size());
  EXPECT_DOUBLE_EQ(again.gemm[17].flops_per_second, first.gemm[17].flops_per_second);
  EXPECT_DOUBLE_EQ(again.device_copy->line.bandwidth, first.device_copy->line.bandwidth);
}

/** GPU seconds the plan takes on the synthetic H200, warm-up runs included (host overheads come on top). */
double gpu_seconds(const CalibrationPlan& plan) {
  SyntheticGpu gpu;
  gpu.noise = 0.0;
  SyntheticBackend backend(gpu);
  const CalibrationResult r = run_calibration(backend, plan);
  double total = 0.0;
  for (const Sample& s : r.samples) {
    const Repeats& rep = s.kind == SampleKind::Gemm ? plan.gemm_repeats : plan.transfer_repeats;
    total += s.seconds() * (rep.warmup + rep.repeats) / rep.repeats;
  }
  return total + plan.power_seconds * 2.0;
}

TEST(Calibration, PlansFitTheirTimeBudgets) {
  // The budgets are 1 min (quick) and 10 min (full) on one GPU; GPU time must leave room for host overheads.
  EXPECT_LT(gpu_seconds(quick_plan()), 20.0);
  EXPECT_LT(gpu_seconds(full_plan()), 150.0);
  EXPECT_EQ(grid_shapes(full_plan().gemm_axes).size(), 216u);
}

} // namespace
} // namespace partsim::calibrate
