// Measured profiles round-trip through partsim's own parsers (load_gpu_profile, parse_link_profile): the figures the
// synthetic GPU was built from come back, every measured figure carries full provenance, and the cost model uses them.
#include "partsim/calibrate/profile_writer.hpp"

#include "partsim/input/hardware.hpp"
#include "partsim/input/json_reader.hpp"
#include "partsim/input/link_profile.hpp"
#include "partsim/model/cost_model.hpp"

#include "synthetic_backend.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace partsim::calibrate {
namespace {

using testing::SyntheticBackend;

ProfileOptions options(const std::string& name = "h200-measured") {
  return {name, "", "2026-12-01T10:00:00Z", "partsim-calibrate 0.1.0 (test)"};
}

GpuProfile h200_datasheet() {
  return load_gpu_profile(PARTSIM_SOURCE_DIR, "h200-sxm-141gb", "test", "");
}

/** Writes `profile` as DIR/models/hardware/NAME.json and loads it back the way `partsim` does. */
GpuProfile round_trip(const nlohmann::ordered_json& profile, const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("partsim-calibrate-test-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::create_directories(dir / "models" / "hardware");
  std::ofstream(dir / "models" / "hardware" / (name + ".json")) << profile.dump(2) << "\n";
  GpuProfile gpu = load_gpu_profile(dir, name, "test", "");
  std::filesystem::remove_all(dir);
  return gpu;
}

const CalibrationResult& quick_result() {
  static const CalibrationResult result = [] {
    SyntheticBackend backend;
    return run_calibration(backend, quick_plan());
  }();
  return result;
}

void expect_measured(const Provenance& p, const std::string& what) {
  EXPECT_EQ(p.kind, "measured") << what;
  EXPECT_EQ(p.fields.at("device"), "NVIDIA H200") << what;
  EXPECT_EQ(p.fields.at("uuid"), "GPU-00000000-1111-2222-3333-444444444444") << what;
  EXPECT_EQ(p.fields.at("driver"), "580.159.04") << what;
  EXPECT_EQ(p.fields.at("cuda"), "13.0") << what;
  EXPECT_EQ(p.fields.at("cupti"), "130000") << what;
  EXPECT_EQ(p.fields.at("date"), "2026-12-01T10:00:00Z") << what;
  EXPECT_EQ(p.fields.at("tool"), "partsim-calibrate 0.1.0 (test)") << what;
  EXPECT_GT(std::stoll(p.fields.at("samples")), 0) << what;
  EXPECT_TRUE(p.fields.contains("spread")) << what;
  EXPECT_FALSE(p.fields.at("note").empty()) << what;
}

TEST(ProfileWriter, MeasuredProfileParsesWithPartsimAndKeepsTheFigures) {
  const CalibrationResult& r = quick_result();
  const GpuProfile base = h200_datasheet();
  const GpuProfile gpu = round_trip(measured_gpu_profile(r, base, options()), "h200-measured");
  EXPECT_EQ(gpu.name, "h200-measured");

  // Peaks stay the datasheet's (a measurement cannot find a peak); efficiencies are relative to them.
  EXPECT_DOUBLE_EQ(gpu.peak("bf16"), base.peak("bf16"));
  EXPECT_EQ(gpu.peak_flops.at("bf16").provenance.kind, "datasheet");
  EXPECT_EQ(gpu.peak_flops.size(), base.peak_flops.size());

  // The better of copy (4.2 TB/s) and elementwise kernel (4.0 TB/s), bytes read + written.
  EXPECT_NEAR(gpu.memory_bandwidth.value, 4.2e12, 0.03 * 4.2e12);
  expect_measured(gpu.memory_bandwidth.provenance, "memory_bandwidth");
  EXPECT_NE(gpu.memory_bandwidth.provenance.fields.at("note").find("device-to-device copy"), std::string::npos);
  EXPECT_DOUBLE_EQ(gpu.memory_capacity.value, 143771.0 * 1024 * 1024);
  expect_measured(gpu.memory_capacity.provenance, "memory_capacity");
  EXPECT_NEAR(gpu.kernel_launch_overhead.value, 2.5e-6, 0.03 * 2.5e-6);
  expect_measured(gpu.kernel_launch_overhead.provenance, "kernel_launch_overhead");
  ASSERT_TRUE(gpu.power.has_value());
  EXPECT_DOUBLE_EQ(gpu.power->tdp.value, 700.0);
  EXPECT_DOUBLE_EQ(gpu.power->idle.value, 75.0);
  expect_measured(gpu.power->idle.provenance, "power/idle");
  ASSERT_TRUE(gpu.sustained_compute.has_value());
  EXPECT_NEAR(gpu.sustained_compute->value, 0.85, 0.02);
  expect_measured(gpu.sustained_compute->provenance, "sustained_compute");
  EXPECT_NE(gpu.sustained_compute->provenance.fields.at("note").find("bf16 GEMM 8192x8192x8192"), std::string::npos)
      << gpu.sustained_compute->provenance.fields.at("note");
}

TEST(ProfileWriter, GemmEfficiencyGridIsTheMeasuredOnePerType) {
  const CalibrationResult& r = quick_result();
  const GpuProfile base = h200_datasheet();
  const GpuProfile gpu = round_trip(measured_gpu_profile(r, base, options()), "h200-measured");
  const testing::SyntheticGpu truth;
  expect_measured(gpu.gemm_efficiency.provenance, "gemm_efficiency");
  EXPECT_EQ(gpu.gemm_efficiency.points.size(), 5u * 64u);
  for (const std::string type : {"bf16", "fp16", "tf32", "fp32", "fp8"}) {
    ASSERT_TRUE(gpu.gemm_efficiency.grids.contains(type)) << type;
    const GemmEfficiencyGrid& grid = gpu.gemm_efficiency.grids.at(type);
    EXPECT_EQ(grid.m, (std::vector<std::int64_t>{128, 1024, 4096, 8192}));
    // The cost model reads exactly the measured efficiency at a grid point, times the measured sustained fraction ...
    for (const GemmShape3 s : {GemmShape3{128, 1024, 8192}, GemmShape3{8192, 8192, 8192}}) {
      const double expected = truth.achieved_efficiency(type, s.m, s.n, s.k) * gpu.sustained_compute_factor();
      EXPECT_NEAR(gemm_efficiency(gpu, {1, s.m, s.n, s.k}, type), expected, 0.015 * expected) << type;
    }
  }
  // ... so a large bf16 GEMM is priced at the measured rate, not the datasheet curve's, at the fraction of it that
  // the power loop kept (the synthetic GPU keeps 0.85).
  ComputeOp op;
  op.name = "big";
  op.kind = OpKind::Gemm;
  op.gemm = GemmShape{1, 8192, 8192, 8192};
  op.forward_flops = op.gemm->flops();
  const double measured = truth.gemm_seconds("bf16", 8192, 8192, 8192) / truth.sustained;
  EXPECT_NEAR(op_time(op, gpu, "bf16", 2.0, false) - gpu.kernel_launch_overhead.value, measured, 0.025 * measured);

  // The default curve: fitted for measured types at the base's half dimension, kept from the base for the others.
  const GemmEfficiencyCurve& curve = gpu.gemm_efficiency.default_curve;
  EXPECT_DOUBLE_EQ(curve.half_dimension, base.gemm_efficiency.default_curve.half_dimension);
  EXPECT_DOUBLE_EQ(curve.saturated_efficiency.at("fp64"),
                   base.gemm_efficiency.default_curve.saturated_efficiency.at("fp64"));
  EXPECT_DOUBLE_EQ(curve.saturated_efficiency.at("int8"),
                   base.gemm_efficiency.default_curve.saturated_efficiency.at("int8"));
  EXPECT_GT(curve.saturated_efficiency.at("bf16"), 0.6);
  EXPECT_LE(curve.saturated_efficiency.at("bf16"), 0.8);
  EXPECT_EQ(curve.provenance.kind, "measured");
  EXPECT_NE(curve.provenance.fields.at("note").find("fp64, int8 not measured"), std::string::npos)
      << curve.provenance.fields.at("note");
}

TEST(ProfileWriter, UnmeasuredFiguresKeepTheBaseProfileAndItsProvenance) {
  SyntheticBackend backend;
  CalibrationPlan plan = quick_plan();
  plan.gemm_axes = {{1024, 4096}, {1024, 4096}, {1024, 4096}};
  plan.gemm_data_types = {"bf16"};
  plan.power_seconds = 0.0;
  backend.failing = {"device_copy", "elementwise", "empty_kernels"};
  CalibrationResult r = run_calibration(backend, plan);
  r.device.memory_bytes = 0;
  const GpuProfile base = h200_datasheet();
  const GpuProfile gpu = round_trip(measured_gpu_profile(r, base, options()), "h200-measured");
  EXPECT_DOUBLE_EQ(gpu.memory_bandwidth.value, base.memory_bandwidth.value);
  EXPECT_EQ(gpu.memory_bandwidth.provenance.kind, "datasheet");
  EXPECT_DOUBLE_EQ(gpu.memory_capacity.value, base.memory_capacity.value);
  EXPECT_EQ(gpu.kernel_launch_overhead.provenance.kind, "assumption");
  ASSERT_TRUE(gpu.power.has_value());
  EXPECT_EQ(gpu.power->tdp.provenance.kind, "datasheet");
  // No power loop: the base profile's sustained-compute figure, with its own provenance.
  ASSERT_TRUE(base.sustained_compute.has_value());
  ASSERT_TRUE(gpu.sustained_compute.has_value());
  EXPECT_DOUBLE_EQ(gpu.sustained_compute->value, base.sustained_compute->value);
  EXPECT_EQ(gpu.sustained_compute->provenance.kind, "published_measurement");
  // What no calibration measures stays the base's: the datasheet bandwidth's achieved fraction, the SM count and the
  // fused-attention tables (CUDA and Triton kernels), each with its provenance.
  EXPECT_DOUBLE_EQ(gpu.memory_efficiency.value, base.memory_efficiency.value);
  EXPECT_EQ(gpu.memory_efficiency.provenance.kind, base.memory_efficiency.provenance.kind);
  ASSERT_TRUE(base.sm_count.has_value());
  ASSERT_TRUE(gpu.sm_count.has_value());
  EXPECT_DOUBLE_EQ(gpu.sm_count->value, base.sm_count->value);
  ASSERT_TRUE(base.attention_efficiency.has_value());
  ASSERT_TRUE(gpu.attention_efficiency.has_value());
  EXPECT_EQ(to_json(gpu)["attention_efficiency"], to_json(base)["attention_efficiency"]);
  // The H100 base (written under the same name): its Triton stand-in table as well (the H200 profile has none).
  const GpuProfile h100 = load_gpu_profile(PARTSIM_SOURCE_DIR, "h100-sxm5-80gb", "test", "");
  const GpuProfile from_h100 = round_trip(measured_gpu_profile(r, h100, options()), "h200-measured");
  ASSERT_TRUE(from_h100.attention_efficiency_triton.has_value());
  EXPECT_EQ(to_json(from_h100)["attention_efficiency_triton"], to_json(h100)["attention_efficiency_triton"]);
  EXPECT_EQ(gpu.gemm_efficiency.grids.size(), 1u);
  EXPECT_EQ(gpu.gemm_efficiency.grids.at("bf16").k, (std::vector<std::int64_t>{1024, 4096}));
}

TEST(ProfileWriter, AProfileFileOfAShippedProfileLosesNothing) {
  // profile_file_json (the Kineto import's starting point) writes every figure partsim reads back.
  for (const std::string name : {"a100-sxm4-80gb", "h100-sxm5-80gb", "h200-sxm-141gb"}) {
    const GpuProfile shipped = load_gpu_profile(PARTSIM_SOURCE_DIR, name, "test", "");
    const GpuProfile copy = round_trip(profile_file_json(shipped), name);
    EXPECT_EQ(to_json(copy), to_json(shipped)) << name;
  }
}

TEST(ProfileWriter, NothingMeasuredIsRefusedAndNoGemmKeepsTheBaseTable) {
  CalibrationResult empty;
  empty.device.name = "NVIDIA H200";
  const GpuProfile base = h200_datasheet();
  EXPECT_THROW(measured_gpu_profile(empty, base, options()), std::invalid_argument);

  SyntheticBackend backend;
  CalibrationPlan plan = quick_plan();
  plan.gemm_data_types = {};
  const CalibrationResult r = run_calibration(backend, plan);
  const GpuProfile gpu = round_trip(measured_gpu_profile(r, base, options()), "h200-measured");
  EXPECT_EQ(gpu.gemm_efficiency.points.size(), base.gemm_efficiency.points.size());
  EXPECT_EQ(gpu.gemm_efficiency.provenance.kind, base.gemm_efficiency.provenance.kind);
  // The shipped H200 table is scattered (Vidur's measured layers): written back as scattered, not read as a grid.
  ASSERT_EQ(base.gemm_efficiency.layout, GemmPointLayout::Scattered);
  EXPECT_EQ(gpu.gemm_efficiency.layout, GemmPointLayout::Scattered);
}

TEST(ProfileWriter, LinkProfileFromPeerCopiesParsesWithPartsim) {
  const nlohmann::ordered_json link = measured_link_profile(quick_result(), options("h200-measured-p2p"));
  const nlohmann::json doc = nlohmann::json::parse(link.dump());
  JsonReader reader(doc, "link.json");
  const LinkProfile parsed = parse_link_profile(reader);
  EXPECT_EQ(parsed.name, "h200-measured-p2p");
  EXPECT_EQ(parsed.scope, "intra_node");
  EXPECT_NEAR(parsed.bandwidth.value, 4e11, 0.03 * 4e11);
  EXPECT_NEAR(parsed.latency.value, 8e-6, 1e-6);
  expect_measured(parsed.bandwidth.provenance, "link bandwidth");
  EXPECT_NE(parsed.bandwidth.provenance.fields.at("note").find("from GPU 0 to GPU 1"), std::string::npos);

  CalibrationResult one_gpu = quick_result();
  one_gpu.links.clear();
  EXPECT_THROW(measured_link_profile(one_gpu, options()), std::invalid_argument);
}

TEST(ProfileWriter, SummaryRecordsEveryFit) {
  const nlohmann::ordered_json s = calibration_summary(quick_result(), options());
  EXPECT_EQ(s["schema"], "partsim.calibration");
  EXPECT_EQ(s["gemm"].size(), 5u * 64u);
  EXPECT_EQ(s["links"].size(), 6u);
  ASSERT_EQ(s["collectives"].size(), 4u);
  const auto& all_reduce = s["collectives"][1];
  EXPECT_EQ(all_reduce["collective"], "all_reduce");
  const auto& last = all_reduce["points"].back();
  EXPECT_DOUBLE_EQ(last["busbw_Bps"].get<double>(), last["algbw_Bps"].get<double>() * 1.0); // 2 ranks: factor 1
  EXPECT_NEAR(all_reduce["line_over_bus_bytes"]["bandwidth_Bps"].get<double>(), 3.6e11, 0.03 * 3.6e11);
  ASSERT_TRUE(s.contains("power"));
  // The power loop's SM clock (the synthetic board: 1755 MHz of 1980) beside its power readings.
  EXPECT_DOUBLE_EQ(s["power"]["busy_sm_clock_MHz"]["median"].get<double>(), 1755.0);
  EXPECT_DOUBLE_EQ(s["power"]["max_sm_clock_MHz"].get<double>(), 1980.0);
  EXPECT_EQ(s["power"]["power_capped_readings"]["capped"], 2);
  EXPECT_EQ(s["power"]["power_capped_readings"]["of"], 3);
  ASSERT_TRUE(s.contains("sustained_compute"));
  EXPECT_NEAR(s["sustained_compute"]["ratio"].get<double>(), 0.85, 0.02);
  EXPECT_EQ(s["sustained_compute"]["m"], 8192);
  EXPECT_TRUE(s["warnings"].empty());
}

TEST(ProfileWriter, SmClockTextSaysHowFarTheLoopPulledTheClockDown) {
  PowerMeasurement p;
  EXPECT_EQ(sm_clock_text(p), "") << "no clock read";
  p.busy_sm_clock_mhz = summarize({1740.0, 1755.0, 1770.0});
  EXPECT_EQ(sm_clock_text(p), "SM clock 1755 MHz (median of 3)");
  p.max_sm_clock_mhz = 1980.0;
  EXPECT_EQ(sm_clock_text(p), "SM clock 1755 MHz (median of 3) of its 1980 MHz maximum, 0.886");
  p.power_capped_readings = 2;
  p.reason_readings = 3;
  EXPECT_EQ(sm_clock_text(p), "SM clock 1755 MHz (median of 3) of its 1980 MHz maximum, 0.886; the power cap held "
                              "the clock at 2 of 3 readings");
  // The measured profile's notes carry it: the power limit's and the sustained fraction's.
  const nlohmann::ordered_json profile = measured_gpu_profile(quick_result(), h200_datasheet(), options());
  EXPECT_NE(profile["power"]["tdp"]["provenance"]["note"].get<std::string>().find("of its 1980 MHz maximum"),
            std::string::npos)
      << profile["power"]["tdp"]["provenance"]["note"];
  EXPECT_NE(profile["sustained_compute"]["provenance"]["note"].get<std::string>().find("SM clock 1755 MHz"),
            std::string::npos)
      << profile["sustained_compute"]["provenance"]["note"];
}

TEST(ProfileWriter, BaseProfileIsChosenByDeviceName) {
  EXPECT_EQ(base_profile_for("NVIDIA H200"), "h200-sxm-141gb");
  EXPECT_EQ(base_profile_for("NVIDIA H100 80GB HBM3"), "h100-sxm5-80gb");
  EXPECT_EQ(base_profile_for("NVIDIA A100-SXM4-80GB"), "a100-sxm4-80gb");
  EXPECT_EQ(base_profile_for("NVIDIA L40S"), "l40s");
  EXPECT_EQ(base_profile_for("Tesla T4"), "");
}

} // namespace
} // namespace partsim::calibrate
