// Hardware profiles: the shipped GPU and link profiles load with provenance on every figure; the optional keys
// (launch overhead, power, GEMM efficiency table) parse strictly, with the JSON pointer of each bad value.
#include "partsim/common/error.hpp"
#include "partsim/input/hardware.hpp"
#include "partsim/input/json_reader.hpp"
#include "partsim/input/link_profile.hpp"
#include "partsim/input/units.hpp"
#include "partsim/model/cost_model.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

namespace partsim {
namespace {

using nlohmann::json;

json datasheet(const std::string& source = "a datasheet") {
  return {{"kind", "datasheet"}, {"source", source}};
}

json figure(const json& value) {
  return {{"value", value}, {"provenance", datasheet()}};
}

/** A small valid profile file: bf16 and fp32 peaks, a 2 x 2 x 1 bf16 grid and a default curve. */
json profile_file() {
  return {{"schema_version", 1},
          {"kind", "gpu"},
          {"name", "test-gpu"},
          {"peak_flops", {{"bf16", figure("1000TFLOPs")}, {"fp32", figure("50TFLOPs")}}},
          {"memory_bandwidth", figure("2TBps")},
          {"memory_capacity", figure("80GB")},
          {"kernel_launch_overhead", figure("5us")},
          {"power", {{"tdp", figure("700W")}, {"idle", figure(70)}}},
          {"gemm_efficiency",
           {{"provenance", {{"kind", "assumption"}, {"note", "a test curve"}}},
            {"default_curve", {{"half_dimension", 64}, {"saturated_efficiency", {{"bf16", 0.8}, {"fp32", 0.9}}}}},
            {"points",
             {{{"m", 64}, {"n", 64}, {"k", 1024}, {"data_type", "bf16"}, {"efficiency", 0.2}},
              {{"m", 64}, {"n", 4096}, {"k", 1024}, {"data_type", "bf16"}, {"efficiency", 0.4}},
              {{"m", 4096}, {"n", 64}, {"k", 1024}, {"data_type", "bf16"}, {"efficiency", 0.5}},
              {{"m", 4096}, {"n", 4096}, {"k", 1024}, {"data_type", "bf16"}, {"efficiency", 0.8}}}}}}};
}

GpuProfile parse(const json& doc) {
  JsonReader reader(doc, "profile.json");
  return parse_gpu_profile(reader);
}

/** Parses `doc`, which must fail, and checks the error's pointer. */
void expect_error_at(const json& doc, const std::string& pointer, const std::string& fragment = "") {
  const InputError e = test::input_error([&] { parse(doc); });
  EXPECT_EQ(e.source(), "profile.json");
  EXPECT_EQ(e.pointer(), pointer) << e.what();
  if (!fragment.empty()) {
    EXPECT_NE(std::string(e.detail()).find(fragment), std::string::npos) << e.what();
  }
}

// --- shipped GPU profiles ------------------------------------------------------------------------------------

TEST(HardwareProfile, TheIssueProfilesAreShipped) {
  const std::vector<std::string> names = list_gpu_profiles(test::source_dir());
  for (const char* name : {"a100-sxm4-80gb", "h100-sxm5-80gb", "h200-sxm-141gb", "b200", "l40s", "mi300x"})
    EXPECT_TRUE(std::find(names.begin(), names.end(), name) != names.end()) << name;
}

TEST(HardwareProfile, EveryShippedProfileHasTheNewFigures) {
  for (const std::string& name : list_gpu_profiles(test::source_dir())) {
    SCOPED_TRACE(name);
    const GpuProfile gpu = load_gpu_profile(test::source_dir(), name, "test", "/cluster/gpu");
    for (const char* type : {"fp32", "tf32", "bf16", "fp16"}) EXPECT_TRUE(gpu.peak_flops.contains(type)) << type;
    EXPECT_GT(gpu.peak("bf16"), gpu.peak("fp32"));
    EXPECT_GE(gpu.kernel_launch_overhead.value, 1e-6);
    EXPECT_LE(gpu.kernel_launch_overhead.value, 10e-6);
    EXPECT_EQ(gpu.kernel_launch_overhead.provenance.kind, "assumption");
    ASSERT_TRUE(gpu.power.has_value());
    EXPECT_GT(gpu.power->tdp.value, gpu.power->idle.value);
    EXPECT_GT(gpu.power->idle.value, 0.0);
    EXPECT_EQ(gpu.power->tdp.provenance.kind, "datasheet");
    EXPECT_TRUE(gpu.power->tdp.provenance.fields.contains("source"));
    // Datasheet tables are assumptions, never presented as measured; a published table says where it comes from.
    const GemmEfficiencyTable& table = gpu.gemm_efficiency;
    ASSERT_TRUE(table.provenance.fields.contains("note"));
    ASSERT_TRUE(table.grids.contains("bf16") || table.scatters.contains("bf16"));
    if (table.provenance.kind == "published_measurement") {
      EXPECT_TRUE(table.provenance.fields.contains("url"));
      if (table.layout == GemmPointLayout::Grid)
        EXPECT_EQ(table.points.size(), 125u); // OpenXLA's 5 x 5 x 5 grid
      else
        // Vidur's layers of 8 models (A100) or 6 (H100, and H200 from it) at TP 1-8.
        EXPECT_GE(table.scatters.at("bf16").efficiency.size(), 800u);
    } else {
      EXPECT_EQ(table.provenance.kind, "assumption");
      EXPECT_EQ(table.points.size(), 216u);
    }
    for (const auto& [type, _] : gpu.peak_flops) EXPECT_TRUE(table.default_curve.saturated_efficiency.contains(type));
    for (const GemmEfficiencyPoint& p : table.points) {
      EXPECT_GT(p.efficiency, 0.0);
      // At most Vidur's fastest H100 shapes, 0.904 of the datasheet peak (kept as published: the profile's note).
      EXPECT_LE(p.efficiency, 0.91);
    }
  }
}

TEST(HardwareProfile, DatasheetTablesFollowTheirDocumentedCurve) {
  // Each datasheet table says it holds s * m/(m+h) * n/(n+h) * k/(k+h), rounded to 4 decimals.
  for (const std::string& name : list_gpu_profiles(test::source_dir())) {
    SCOPED_TRACE(name);
    const GpuProfile gpu = load_gpu_profile(test::source_dir(), name, "test", "/cluster/gpu");
    if (gpu.gemm_efficiency.provenance.kind != "assumption") continue; // measured or published: no curve
    const GemmEfficiencyCurve& curve = gpu.gemm_efficiency.default_curve;
    for (const GemmEfficiencyPoint& p : gpu.gemm_efficiency.points) {
      double expected = curve.saturated_efficiency.at(p.data_type);
      for (double x : {p.m, p.n, p.k}) expected *= x / (x + curve.half_dimension);
      EXPECT_NEAR(p.efficiency, expected, 0.5e-4) << p.m << "x" << p.n << "x" << p.k;
    }
  }
}

TEST(HardwareProfile, DatasheetFiguresOfTheNewProfiles) {
  const auto load = [](const std::string& name) {
    return load_gpu_profile(test::source_dir(), name, "test", "/cluster/gpu");
  };
  const GpuProfile h200 = load("h200-sxm-141gb");
  EXPECT_DOUBLE_EQ(h200.peak("bf16"), 989.5e12);
  EXPECT_DOUBLE_EQ(h200.peak("fp8"), 1979e12);
  EXPECT_DOUBLE_EQ(h200.memory_bandwidth.value, 4.8e12);
  EXPECT_DOUBLE_EQ(h200.memory_capacity.value, 141e9);
  EXPECT_DOUBLE_EQ(h200.power->tdp.value, 700.0);
  const GpuProfile b200 = load("b200");
  EXPECT_DOUBLE_EQ(b200.peak("bf16"), 2.25e15);
  EXPECT_DOUBLE_EQ(b200.peak("fp8"), 4.5e15);
  EXPECT_DOUBLE_EQ(b200.memory_bandwidth.value, 8e12);
  EXPECT_DOUBLE_EQ(b200.power->tdp.value, 1000.0);
  const GpuProfile l40s = load("l40s");
  EXPECT_DOUBLE_EQ(l40s.peak("bf16"), 362.05e12);
  EXPECT_DOUBLE_EQ(l40s.memory_capacity.value, 48e9);
  EXPECT_DOUBLE_EQ(l40s.power->tdp.value, 350.0);
  const GpuProfile mi300x = load("mi300x");
  EXPECT_DOUBLE_EQ(mi300x.peak("bf16"), 1307.4e12);
  EXPECT_DOUBLE_EQ(mi300x.memory_bandwidth.value, 5.3e12);
  EXPECT_DOUBLE_EQ(mi300x.memory_capacity.value, 192e9);
  EXPECT_DOUBLE_EQ(mi300x.power->tdp.value, 750.0);
  EXPECT_DOUBLE_EQ(load("a100-sxm4-80gb").power->tdp.value, 400.0);
  for (const GpuProfile* gpu : {&h200, &b200}) {
    const std::string& source = gpu->peak_flops.at("bf16").provenance.fields.at("source");
    EXPECT_NE(source.find("dense"), std::string::npos) << source; // sparse figures halved, and said so
  }
}

TEST(HardwareProfile, ShippedProfilesRoundTripThroughJson) {
  for (const std::string& name : list_gpu_profiles(test::source_dir())) {
    SCOPED_TRACE(name);
    const GpuProfile gpu = load_gpu_profile(test::source_dir(), name, "test", "/cluster/gpu");
    json doc = to_json(gpu);
    doc["schema_version"] = 1;
    doc["kind"] = "gpu";
    const GpuProfile again = parse(doc);
    EXPECT_EQ(to_json(again), to_json(gpu));
  }
}

// --- the format ----------------------------------------------------------------------------------------------

TEST(HardwareProfile, NewKeysParse) {
  const GpuProfile gpu = parse(profile_file());
  EXPECT_DOUBLE_EQ(gpu.kernel_launch_overhead.value, 5e-6);
  EXPECT_EQ(gpu.kernel_launch_overhead.provenance.kind, "datasheet");
  ASSERT_TRUE(gpu.power.has_value());
  EXPECT_DOUBLE_EQ(gpu.power->tdp.value, 700.0);
  EXPECT_DOUBLE_EQ(gpu.power->idle.value, 70.0);
  const GemmEfficiencyTable& table = gpu.gemm_efficiency;
  EXPECT_EQ(table.provenance.kind, "assumption");
  EXPECT_EQ(table.provenance.fields.at("note"), "a test curve");
  ASSERT_EQ(table.points.size(), 4u);
  const GemmEfficiencyGrid& grid = table.grids.at("bf16");
  EXPECT_EQ(grid.m, (std::vector<std::int64_t>{64, 4096}));
  EXPECT_EQ(grid.n, (std::vector<std::int64_t>{64, 4096}));
  EXPECT_EQ(grid.k, (std::vector<std::int64_t>{1024}));
  EXPECT_DOUBLE_EQ(grid.at(0, 1, 0), 0.4);
  EXPECT_DOUBLE_EQ(grid.at(1, 0, 0), 0.5);
  EXPECT_DOUBLE_EQ(table.default_curve.half_dimension, 64.0);
  EXPECT_DOUBLE_EQ(table.default_curve.saturated_efficiency.at("fp32"), 0.9);
  EXPECT_EQ(table.default_curve.provenance.kind, "assumption"); // the table's
}

TEST(HardwareProfile, PowerUnits) {
  json doc = profile_file();
  doc["power"]["tdp"]["value"] = "1.2kW";
  doc["power"]["idle"]["value"] = "150 W";
  const GpuProfile gpu = parse(doc);
  EXPECT_DOUBLE_EQ(gpu.power->tdp.value, 1200.0);
  EXPECT_DOUBLE_EQ(gpu.power->idle.value, 150.0);
  EXPECT_DOUBLE_EQ(parse_quantity("700W", Dimension::Power), 700.0);
  EXPECT_DOUBLE_EQ(parse_quantity("2 kW", Dimension::Power), 2000.0);
  EXPECT_EQ(si_unit(Dimension::Power), "W");
  EXPECT_THROW(parse_quantity("700mW", Dimension::Power), std::invalid_argument);
  EXPECT_THROW(parse_quantity("700J", Dimension::Power), std::invalid_argument);
  EXPECT_THROW(parse_quantity("700GBps", Dimension::Power), std::invalid_argument);
}

TEST(HardwareProfile, OldProfilesGetDocumentedDefaults) {
  json doc = profile_file();
  doc.erase("kernel_launch_overhead");
  doc.erase("power");
  doc.erase("gemm_efficiency");
  const GpuProfile gpu = parse(doc);
  EXPECT_DOUBLE_EQ(gpu.kernel_launch_overhead.value, kDefaultKernelLaunchOverhead);
  EXPECT_EQ(gpu.kernel_launch_overhead.provenance.kind, "assumption");
  EXPECT_FALSE(gpu.power.has_value());
  EXPECT_TRUE(gpu.gemm_efficiency.points.empty());
  EXPECT_TRUE(gpu.gemm_efficiency.grids.empty());
  const GemmEfficiencyCurve& curve = gpu.gemm_efficiency.default_curve;
  EXPECT_DOUBLE_EQ(curve.half_dimension, kDefaultGemmHalfDimension);
  EXPECT_EQ(curve.saturated_efficiency.size(), 2u);
  EXPECT_DOUBLE_EQ(curve.saturated_efficiency.at("bf16"), kDefaultGemmSaturatedEfficiency);
  EXPECT_EQ(curve.provenance.kind, "assumption");
  EXPECT_LT(kDefaultGemmSaturatedEfficiency, 1.0);
}

TEST(HardwareProfile, TableWithoutCurveGetsTheBuiltInCurve) {
  json doc = profile_file();
  doc["gemm_efficiency"].erase("default_curve");
  const GpuProfile gpu = parse(doc);
  EXPECT_DOUBLE_EQ(gpu.gemm_efficiency.default_curve.saturated_efficiency.at("fp32"), kDefaultGemmSaturatedEfficiency);
  EXPECT_NE(gpu.gemm_efficiency.default_curve.provenance.fields.at("note").find("partsim default"), std::string::npos);
}

TEST(HardwareProfile, InlineProfileTakesTheNewKeysBare) {
  const json doc = {{"name", "mine"},
                    {"peak_flops", "100TFLOPs"},
                    {"memory_bandwidth", "1TBps"},
                    {"memory_capacity", "80GB"},
                    {"kernel_launch_overhead", "4us"},
                    {"power", {{"tdp", "300W"}, {"idle", 30}}},
                    {"gemm_efficiency",
                     {{"points", {{{"m", 128}, {"n", 128}, {"k", 128}, {"data_type", "fp16"}, {"efficiency", 0.5}}}}}}};
  const GpuProfile gpu = parse(doc);
  EXPECT_DOUBLE_EQ(gpu.kernel_launch_overhead.value, 4e-6);
  EXPECT_EQ(gpu.kernel_launch_overhead.provenance.kind, "scenario");
  EXPECT_DOUBLE_EQ(gpu.power->idle.value, 30.0);
  EXPECT_EQ(gpu.gemm_efficiency.provenance.kind, "scenario");
  EXPECT_EQ(gpu.gemm_efficiency.grids.at("fp16").efficiency, (std::vector<double>{0.5}));
}

TEST(HardwareProfile, SustainedComputeScalesTheMeasuredTensorCoreEfficienciesAndNothingElse) {
  json doc = profile_file();
  const GpuProfile burst = parse(doc);
  EXPECT_FALSE(burst.sustained_compute.has_value());
  EXPECT_DOUBLE_EQ(burst.sustained_compute_factor(), 1.0);
  doc["sustained_compute"] = {{"value", 0.8},
                              {"provenance",
                               {{"kind", "measured"},
                                {"device", "a GPU"},
                                {"date", "2026-12-05"},
                                {"tool", "partsim-calibrate"},
                                {"note", "a GEMM loop"}}}};
  const GpuProfile sustained = parse(doc);
  ASSERT_TRUE(sustained.sustained_compute.has_value());
  EXPECT_DOUBLE_EQ(sustained.sustained_compute->value, 0.8);
  EXPECT_EQ(sustained.sustained_compute->provenance.kind, "measured");
  // On a grid point and between points; not where the default curve prices it (fp32 has no points): the curve is
  // the best of sustained loops already.
  for (const GemmShape& shape : {GemmShape{1, 4096, 4096, 1024}, GemmShape{1, 1000, 300, 1024}})
    EXPECT_DOUBLE_EQ(gemm_efficiency(sustained, shape, "bf16"), 0.8 * gemm_efficiency(burst, shape, "bf16"));
  EXPECT_DOUBLE_EQ(gemm_efficiency(sustained, {1, 512, 512, 512}, "fp32"),
                   gemm_efficiency(burst, {1, 512, 512, 512}, "fp32"));
  EXPECT_DOUBLE_EQ(gemm_efficiency(burst, {1, 512, 512, 512}, "fp32"),
                   curve_efficiency(burst.gemm_efficiency.default_curve, {1, 512, 512, 512}, "fp32"));
  // A compute-bound GEMM takes 1/0.8 of its time (less the launch), a memory-bound kernel the same time.
  ComputeOp gemm;
  gemm.name = "gemm";
  gemm.kind = OpKind::Gemm;
  gemm.gemm = GemmShape{1, 4096, 4096, 1024};
  gemm.forward_flops = gemm.gemm->flops();
  const double launch = burst.kernel_launch_overhead.value;
  EXPECT_NEAR(op_time(gemm, sustained, "bf16", 2.0, false) - launch,
              (op_time(gemm, burst, "bf16", 2.0, false) - launch) / 0.8, 1e-15);
  ComputeOp norm;
  norm.name = "norm";
  norm.kind = OpKind::Elementwise;
  norm.forward_flops = 1e6;
  norm.input_elements = 1e9;
  EXPECT_DOUBLE_EQ(op_time(norm, sustained, "bf16", 2.0, false), op_time(norm, burst, "bf16", 2.0, false));
  // It round-trips through the report's JSON.
  EXPECT_DOUBLE_EQ(to_json(sustained).at("sustained_compute").at("value").get<double>(), 0.8);
  EXPECT_FALSE(to_json(burst).contains("sustained_compute"));
}

// --- bad profiles: one class of mistake each, with its exact pointer -------------------------------------------

TEST(HardwareProfileErrors, SustainedComputeOutsideZeroToOne) {
  json doc = profile_file();
  doc["sustained_compute"] = figure(1.1);
  expect_error_at(doc, "/sustained_compute/value", "<= 1");
  doc["sustained_compute"] = figure(0);
  expect_error_at(doc, "/sustained_compute/value", ">= 0.0001");
  doc["sustained_compute"] = 0.9; // a file needs the figure form
  expect_error_at(doc, "/sustained_compute");
}

TEST(HardwareProfileErrors, EfficiencyAboveOne) {
  json doc = profile_file();
  doc["gemm_efficiency"]["points"][1]["efficiency"] = 1.2;
  expect_error_at(doc, "/gemm_efficiency/points/1/efficiency", "<= 1");
}

TEST(HardwareProfileErrors, EfficiencyZero) {
  json doc = profile_file();
  doc["gemm_efficiency"]["points"][0]["efficiency"] = 0;
  expect_error_at(doc, "/gemm_efficiency/points/0/efficiency", ">= 0.0001");
}

TEST(HardwareProfileErrors, UnknownKeyInAPoint) {
  json doc = profile_file();
  doc["gemm_efficiency"]["points"][2]["batch"] = 4;
  expect_error_at(doc, "/gemm_efficiency/points/2/batch", "unknown key");
}

TEST(HardwareProfileErrors, PointForADataTypeWithoutPeak) {
  json doc = profile_file();
  doc["gemm_efficiency"]["points"][3]["data_type"] = "fp8";
  expect_error_at(doc, "/gemm_efficiency/points/3/data_type", "no peak rate for fp8");
}

TEST(HardwareProfileErrors, PointWithAZeroDimension) {
  json doc = profile_file();
  doc["gemm_efficiency"]["points"][0]["k"] = 0;
  expect_error_at(doc, "/gemm_efficiency/points/0/k");
}

TEST(HardwareProfileErrors, DuplicatePoint) {
  json doc = profile_file();
  doc["gemm_efficiency"]["points"][3] = doc["gemm_efficiency"]["points"][0];
  expect_error_at(doc, "/gemm_efficiency/points/3", "duplicate point");
}

TEST(HardwareProfileErrors, PointsThatAreNotAFullGrid) {
  json doc = profile_file();
  doc["gemm_efficiency"]["points"].erase(1);
  expect_error_at(doc, "/gemm_efficiency/points", "missing m=64 n=4096 k=1024");
}

TEST(HardwareProfileErrors, CurveMissingADataType) {
  json doc = profile_file();
  doc["gemm_efficiency"]["default_curve"]["saturated_efficiency"].erase("fp32");
  expect_error_at(doc, "/gemm_efficiency/default_curve/saturated_efficiency", "missing fp32");
}

TEST(HardwareProfileErrors, CurveAboveOne) {
  json doc = profile_file();
  doc["gemm_efficiency"]["default_curve"]["saturated_efficiency"]["bf16"] = 1.5;
  expect_error_at(doc, "/gemm_efficiency/default_curve/saturated_efficiency/bf16");
}

TEST(HardwareProfileErrors, TableWithoutProvenance) {
  json doc = profile_file();
  doc["gemm_efficiency"].erase("provenance");
  expect_error_at(doc, "/gemm_efficiency/provenance", "required key is missing");
}

TEST(HardwareProfileErrors, NegativePower) {
  json doc = profile_file();
  doc["power"]["tdp"]["value"] = "-700W";
  expect_error_at(doc, "/power/tdp/value", "> 0");
  doc = profile_file();
  doc["power"]["idle"]["value"] = -1;
  expect_error_at(doc, "/power/idle/value", ">= 0");
}

TEST(HardwareProfileErrors, IdleAboveTdp) {
  json doc = profile_file();
  doc["power"]["idle"]["value"] = "800W";
  expect_error_at(doc, "/power/idle/value", "at most the TDP");
}

TEST(HardwareProfileErrors, PowerOfTheWrongKind) {
  json doc = profile_file();
  doc["power"]["tdp"]["value"] = true;
  expect_error_at(doc, "/power/tdp/value", "700W");
  doc = profile_file();
  doc["power"]["tdp"]["value"] = "700GBps";
  expect_error_at(doc, "/power/tdp/value", "unknown unit");
}

TEST(HardwareProfileErrors, UnknownKeyInPower) {
  json doc = profile_file();
  doc["power"]["peak"] = figure("800W");
  expect_error_at(doc, "/power/peak", "unknown key");
}

TEST(HardwareProfileErrors, NegativeLaunchOverhead) {
  json doc = profile_file();
  doc["kernel_launch_overhead"]["value"] = "-1us";
  expect_error_at(doc, "/kernel_launch_overhead/value");
}

TEST(HardwareProfileErrors, AssumptionWithoutNote) {
  json doc = profile_file();
  doc["kernel_launch_overhead"]["provenance"] = {{"kind", "assumption"}, {"source", "somewhere"}};
  expect_error_at(doc, "/kernel_launch_overhead/provenance/note", "required key is missing");
}

TEST(HardwareProfileErrors, UnknownTopLevelKeyStillAnError) {
  json doc = profile_file();
  doc["launch_overhead"] = figure("3us");
  expect_error_at(doc, "/launch_overhead", "unknown key");
}

TEST(HardwareProfileErrors, BadFileNamesItsPath) {
  const std::filesystem::path dir = test::temp_dir();
  std::filesystem::create_directories(dir / "models" / "hardware");
  json doc = profile_file();
  doc["name"] = "broken";
  doc["gemm_efficiency"]["points"][0]["efficiency"] = 2;
  std::ofstream(dir / "models" / "hardware" / "broken.json") << doc.dump(2);
  const InputError e = test::input_error([&] { load_gpu_profile(dir, "broken", "s.json", "/cluster/gpu"); });
  EXPECT_EQ(e.source(), (dir / "models" / "hardware" / "broken.json").string());
  EXPECT_EQ(e.pointer(), "/gemm_efficiency/points/0/efficiency");
}

// --- link profiles -------------------------------------------------------------------------------------------

/** The JSON pointer of the error parse_link_profile throws on `doc`. */
std::string link_error_at(const json& doc) {
  return test::input_error([&] {
           JsonReader reader(doc, "x.json");
           parse_link_profile(reader);
         })
      .pointer();
}

TEST(LinkProfile, EveryShippedLinkLoads) {
  const std::vector<std::string> names = list_link_profiles(test::source_dir());
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(test::source_dir() / "models" / "links"))
    if (entry.path().extension() == ".json") files.push_back(entry.path().stem().string());
  std::sort(files.begin(), files.end());
  EXPECT_EQ(names, files);
  for (const char* name : {"nvlink3", "nvlink4", "nvlink5", "nvswitch-gen3", "pcie4-x16", "pcie5-x16", "ib-hdr",
                           "ib-ndr", "ib-xdr", "roce-100g", "roce-200g", "roce-400g"})
    EXPECT_TRUE(std::find(names.begin(), names.end(), name) != names.end()) << name;
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const LinkProfile link = load_link_profile(test::source_dir(), name, "test", "/cluster/link");
    EXPECT_EQ(link.name, name);
    EXPECT_GT(link.bandwidth.value, 0.0);
    EXPECT_GT(link.latency.value, 0.0);
    EXPECT_LT(link.latency.value, 10e-6);
    EXPECT_EQ(link.bandwidth.provenance.kind, "datasheet");
    const std::string& latency = link.latency.provenance.kind;
    EXPECT_TRUE(latency == "assumption" || latency == "measured" || latency == "datasheet" ||
                latency == "published_measurement")
        << latency;
    EXPECT_EQ(to_json(link)["name"], name);
  }
}

TEST(LinkProfile, PerDirectionFigures) {
  const auto bandwidth = [](const std::string& name) {
    return load_link_profile(test::source_dir(), name, "test", "/").bandwidth.value;
  };
  EXPECT_DOUBLE_EQ(bandwidth("nvlink3"), 300e9);
  EXPECT_DOUBLE_EQ(bandwidth("nvlink4"), 450e9);
  EXPECT_DOUBLE_EQ(bandwidth("nvlink5"), 900e9);
  EXPECT_DOUBLE_EQ(bandwidth("ib-hdr"), 25e9);
  EXPECT_DOUBLE_EQ(bandwidth("ib-ndr"), 50e9);
  EXPECT_DOUBLE_EQ(bandwidth("ib-xdr"), 100e9);
  EXPECT_DOUBLE_EQ(bandwidth("roce-100g"), 12.5e9);
  EXPECT_DOUBLE_EQ(bandwidth("roce-400g"), 50e9);
  EXPECT_NEAR(bandwidth("pcie4-x16"), 16e9 * 16 * 128 / 130 / 8, 0.01e9);
  EXPECT_NEAR(bandwidth("pcie5-x16"), 32e9 * 16 * 128 / 130 / 8, 0.1e9);
}

TEST(LinkProfile, UnknownNameListsTheShippedOnes) {
  const InputError e = test::input_error([] { load_link_profile(test::source_dir(), "nvlink9", "s.json", "/x"); });
  EXPECT_EQ(e.source(), "s.json");
  EXPECT_EQ(e.pointer(), "/x");
  EXPECT_NE(std::string(e.detail()).find("nvlink4"), std::string::npos) << e.what();
  EXPECT_THROW(load_link_profile(test::source_dir(), "../hardware/l40s", "s.json", "/x"), InputError);
}

TEST(LinkProfile, StrictFormat) {
  const json good = {{"schema_version", 1},     {"kind", "link"},          {"name", "x"},
                     {"scope", "inter_node"},   {"bandwidth_per", "port"}, {"bandwidth", figure("400Gbps")},
                     {"latency", figure("1us")}};
  JsonReader ok(good, "x.json");
  EXPECT_DOUBLE_EQ(parse_link_profile(ok).bandwidth.value, 50e9);
  json doc = good;
  doc["bandwith"] = figure("1GBps");
  EXPECT_EQ(link_error_at(doc), "/bandwith");
  doc = good;
  doc["scope"] = "rack";
  EXPECT_EQ(link_error_at(doc), "/scope");
  doc = good;
  doc["bandwidth"]["value"] = 0;
  EXPECT_EQ(link_error_at(doc), "/bandwidth/value");
  doc = good;
  doc["latency"]["provenance"]["kind"] = "guess";
  EXPECT_EQ(link_error_at(doc), "/latency/provenance/kind");
}

TEST(LinkProfile, NvlsTreeHeadBandwidth) {
  // NCCL's perChMaxNVLSTreeBw (src/graph/tuning.cc): Hopper 57.7 / 45.5 GB/s, Blackwell 96 / 80 GB/s per head.
  const LinkProfile hopper = load_link_profile(test::source_dir(), "nvlink4", "test", "/");
  ASSERT_TRUE(hopper.nvls && hopper.nvls->tree_head_two_nodes && hopper.nvls->tree_head_more_nodes);
  EXPECT_DOUBLE_EQ(hopper.nvls->tree_head_two_nodes->value, 57.7e9);
  EXPECT_DOUBLE_EQ(hopper.nvls->tree_head_more_nodes->value, 45.5e9);
  EXPECT_EQ(to_json(hopper)["nvls"]["tree_head_bandwidth"]["two_nodes"]["value"], 57.7e9);
  const LinkProfile blackwell = load_link_profile(test::source_dir(), "nvlink5", "test", "/");
  ASSERT_TRUE(blackwell.nvls && blackwell.nvls->tree_head_two_nodes && blackwell.nvls->tree_head_more_nodes);
  EXPECT_DOUBLE_EQ(blackwell.nvls->tree_head_two_nodes->value, 96e9);
  EXPECT_DOUBLE_EQ(blackwell.nvls->tree_head_more_nodes->value, 80e9);

  const json nvls = {
      {"efficiency", figure(0.85)},
      {"latency", figure("25us")},
      {"tree_head_bandwidth", {{"two_nodes", figure("57.7GBps")}, {"three_or_more_nodes", figure("45.5GBps")}}}};
  const json good = {{"schema_version", 1},
                     {"kind", "link"},
                     {"name", "x"},
                     {"scope", "intra_node"},
                     {"bandwidth_per", "gpu"},
                     {"bandwidth", figure("450GBps")},
                     {"latency", figure("1us")},
                     {"nvls", nvls}};
  JsonReader ok(good, "x.json");
  EXPECT_DOUBLE_EQ(parse_link_profile(ok).nvls->tree_head_more_nodes->value, 45.5e9);
  json doc = good;
  doc["nvls"]["tree_head_bandwidth"].erase("three_or_more_nodes");
  EXPECT_EQ(link_error_at(doc), "/nvls/tree_head_bandwidth/three_or_more_nodes");
  doc = good;
  doc["nvls"]["tree_head_bandwidth"]["two_nodes"]["value"] = -1;
  EXPECT_EQ(link_error_at(doc), "/nvls/tree_head_bandwidth/two_nodes/value");
  doc = good;
  doc["nvls"]["tree_head_bandwidth"]["four_nodes"] = figure("1GBps");
  EXPECT_EQ(link_error_at(doc), "/nvls/tree_head_bandwidth/four_nodes");
}

} // namespace
} // namespace partsim
