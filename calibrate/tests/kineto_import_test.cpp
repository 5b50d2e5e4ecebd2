// Kineto import on a hand-written PyTorch profiler trace (fixtures/kineto-gpt2-small-b2.json: one GPT-2 small layer at
// micro-batch 2 on an H100, durations made from known efficiencies): GEMM shapes of aten ops, mapping onto the model's
// products (forward, input and weight gradients, split-K kernels summed), the micro-batch found, and the profile.
#include "partsim/calibrate/kineto_import.hpp"

#include "partsim/common/error.hpp"
#include "partsim/input/json_reader.hpp"
#include "partsim/input/workload_library.hpp"
#include "partsim/model/cost_model.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace partsim::calibrate {
namespace {

const std::string kFixture = std::string(PARTSIM_CALIBRATE_FIXTURES) + "/kineto-gpt2-small-b2.json";
constexpr double kPeak = 989.5e12; // H100 SXM bf16 dense, the fixture's durations were made against it

struct Imported {
  KinetoTrace trace;
  GpuProfile base;
  KinetoImport import;
};

const Imported& imported() {
  static const Imported result = [] {
    Imported r;
    r.trace = read_kineto_trace(std::filesystem::path(kFixture));
    r.base = load_gpu_profile(PARTSIM_SOURCE_DIR, "h100-sxm5-80gb", "test", "");
    const WorkloadSpec spec = load_workload(PARTSIM_SOURCE_DIR, "gpt2-small", "test", "");
    r.import = import_kineto(r.trace, spec.name, spec.transformer(kMegatronLm2021Kernels), 0, r.base);
    return r;
  }();
  return result;
}

const OpMatch& match(const std::string& op, Pass pass) {
  const auto& m = imported().import.matched;
  const auto it =
      std::find_if(m.begin(), m.end(), [&](const OpMatch& x) { return x.model_op == op && x.pass == pass; });
  if (it == m.end()) throw std::runtime_error("no match for " + op + " " + std::string(to_string(pass)));
  return *it;
}

TEST(KinetoImport, ReadsKernelsOpsAndDevice) {
  const KinetoTrace& t = imported().trace;
  EXPECT_EQ(t.device_name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(t.kernels.size(), 15u);
  EXPECT_EQ(t.ops.size(), 14u);
  EXPECT_EQ(t.ops.at(101).name, "aten::addmm");
  EXPECT_EQ(t.ops.at(101).input_dims[1], (std::vector<std::int64_t>{2048, 768}));
}

TEST(KinetoImport, GemmShapesOfAtenOps) {
  const auto shape = [](const std::string& name, std::vector<std::vector<std::int64_t>> dims) {
    return gemm_shape({name, 1, std::move(dims), {}});
  };
  EXPECT_EQ(shape("aten::mm", {{64, 32}, {32, 16}}), (GemmShape{1, 64, 16, 32}));
  EXPECT_EQ(shape("aten::addmm", {{16}, {64, 32}, {32, 16}, {}, {}}), (GemmShape{1, 64, 16, 32}));
  EXPECT_EQ(shape("aten::bmm", {{8, 64, 32}, {8, 32, 16}}), (GemmShape{8, 64, 16, 32}));
  EXPECT_EQ(shape("aten::baddbmm", {{8, 64, 16}, {8, 64, 32}, {8, 32, 16}}), (GemmShape{8, 64, 16, 32}));
  EXPECT_EQ(shape("aten::linear", {{2, 3, 32}, {16, 32}, {16}}), (GemmShape{1, 6, 16, 32}));
  EXPECT_EQ(shape("aten::matmul", {{2, 8, 64, 32}, {2, 8, 32, 16}}), (GemmShape{16, 64, 16, 32}));
  EXPECT_EQ(shape("aten::matmul", {{2, 64, 32}, {32, 16}}), (GemmShape{1, 128, 16, 32}));
  EXPECT_FALSE(shape("aten::gelu", {{2, 64}}).has_value());
  EXPECT_FALSE(shape("aten::mm", {{64, 32}}).has_value());
  EXPECT_EQ(data_type_of({"aten::mm", 1, {}, {"c10::BFloat16", "c10::BFloat16"}}), "bf16");
  EXPECT_EQ(data_type_of({"aten::mm", 1, {}, {"float", "float"}}, "tf32"), "tf32");
  EXPECT_EQ(data_type_of({"aten::mm", 1, {}, {"c10::Half"}}), "fp16");
  EXPECT_EQ(data_type_of({"aten::mm", 1, {}, {"long int"}}), "");
  EXPECT_TRUE(looks_like_gemm_kernel("nvjet_tst_192x192_64x4_2x1_v_bz_coopB_TNN"));
  EXPECT_TRUE(looks_like_gemm_kernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n"));
  EXPECT_FALSE(looks_like_gemm_kernel("void at::native::vectorized_elementwise_kernel<4>"));
}

TEST(KinetoImport, FindsTheMicroBatchAndMapsEveryGemmOntoTheModel) {
  const KinetoImport& r = imported().import;
  EXPECT_EQ(r.micro_batch, 2);
  EXPECT_EQ(r.kernels, 15u);
  EXPECT_EQ(r.gemm_kernels_without_shape, 1u);
  ASSERT_EQ(r.unmatched.size(), 1u);
  EXPECT_EQ(r.unmatched[0].shape, (GemmShape{1, 128, 128, 128}));
  EXPECT_NEAR(r.matched_seconds + r.unmatched[0].seconds, r.gemm_seconds, 1e-12);
  EXPECT_EQ(r.matched.size(), 9u);
}

TEST(KinetoImport, EfficiencyPerModelOpIsAchievedRateOverPeak) {
  const auto expect = [](const std::string& op, Pass pass, double efficiency, std::size_t count = 1) {
    const OpMatch& m = match(op, pass);
    EXPECT_EQ(m.seconds.count, count) << op;
    EXPECT_EQ(m.data_type, "bf16") << op;
    EXPECT_NEAR(m.efficiency, efficiency, 2e-3 * efficiency) << op << " " << to_string(pass);
    EXPECT_NEAR(m.flops_per_second, m.efficiency * kPeak, 1e-6 * m.flops_per_second);
  };
  expect("qkv_projection", Pass::Forward, 2.0 / (1.0 / 0.60 + 1.0 / 0.62), 2); // the median of two instances
  expect("attention_scores", Pass::Forward, 0.35);
  expect("attention_over_values", Pass::Forward, 0.40);
  expect("output_projection", Pass::Forward, 0.50);
  expect("mlp_up", Pass::Forward, 0.70);   // aten::linear: [2, 1024, 768] folds into 2048 rows
  expect("mlp_down", Pass::Forward, 0.66); // split-K: the GEMM and its reduction kernel summed
  expect("logits", Pass::Forward, 0.75);
  expect("qkv_projection", Pass::InputGradient, 0.55);
  expect("qkv_projection", Pass::WeightGradient, 0.52); // traced as dWᵀ [3h, t]·[t, h]
  EXPECT_EQ(match("mlp_down", Pass::Forward).also, "mlp_up input_gradient");
  EXPECT_EQ(match("mlp_up", Pass::Forward).shape, (GemmShape{1, 2048, 3072, 768}));
}

TEST(KinetoImport, PredictionIsPartsimsCostModelOnTheBaseProfile) {
  const OpMatch& logits = match("logits", Pass::Forward);
  const GpuProfile& base = imported().base;
  const GemmShape s{1, 2048, 50257, 768};
  const double bytes = 2.0 * (2048.0 * 768 + 768.0 * 50257 + 2048.0 * 50257);
  EXPECT_DOUBLE_EQ(logits.predicted_seconds,
                   kernel_time(base, s.flops(), base.peak("bf16") * gemm_efficiency(base, s, "bf16"), bytes));
  const auto report = kineto_report(imported().import, imported().trace);
  EXPECT_EQ(report["micro_batch"], 2);
  EXPECT_EQ(report["ops"].size(), 9u);
  EXPECT_EQ(report["unmatched"].size(), 1u);
}

TEST(KinetoImport, ProfileFitsTheCurveToTheTraceAndParsesWithPartsim) {
  const Imported& r = imported();
  const auto profile = kineto_profile(r.import, r.trace, r.base, "h100-from-trace", "2026-12-01T10:00:00Z",
                                      "partsim-calibrate 0.1.0 import-kineto");
  const nlohmann::json doc = nlohmann::json::parse(profile.dump());
  JsonReader reader(doc, "h100-from-trace.json");
  const GpuProfile gpu = parse_gpu_profile(reader);
  EXPECT_EQ(gpu.name, "h100-from-trace");
  EXPECT_FALSE(gpu.gemm_efficiency.grids.contains("bf16")); // a trace holds no full grid: the curve prices bf16
  const GemmEfficiencyCurve& curve = gpu.gemm_efficiency.default_curve;
  EXPECT_EQ(curve.provenance.kind, "measured");
  EXPECT_EQ(curve.provenance.fields.at("device"), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(curve.provenance.fields.at("samples"), "11");
  EXPECT_GT(curve.saturated_efficiency.at("bf16"), 0.5);
  EXPECT_LT(curve.saturated_efficiency.at("bf16"), 1.0);
  EXPECT_DOUBLE_EQ(curve.saturated_efficiency.at("fp16"),
                   r.base.gemm_efficiency.default_curve.saturated_efficiency.at("fp16"));
  EXPECT_DOUBLE_EQ(gpu.peak("bf16"), r.base.peak("bf16"));
}

TEST(KinetoImport, BadTracesGetOneLineErrors) {
  const auto fails = [](const nlohmann::json& doc, const std::string& pointer) {
    try {
      read_kineto_trace(doc, "t.json");
      FAIL() << doc.dump();
    } catch (const InputError& e) {
      EXPECT_EQ(e.pointer(), pointer) << e.what();
    }
  };
  fails(nlohmann::json::array(), "/traceEvents");
  fails({{"traceEvents", 3}}, "/traceEvents");
  fails({{"traceEvents", {{{"ph", "X"}, {"cat", "kernel"}, {"name", "k"}, {"ts", 1.0}}}}}, "/traceEvents/0");
  const KinetoTrace no_shapes = read_kineto_trace(
      {{"traceEvents", {{{"ph", "X"}, {"cat", "kernel"}, {"name", "gemm"}, {"ts", 1}, {"dur", 2}}}}}, "t.json");
  const WorkloadSpec spec = load_workload(PARTSIM_SOURCE_DIR, "gpt2-small", "test", "");
  EXPECT_THROW(import_kineto(no_shapes, "gpt2-small", spec.transformer(kMegatronLm2021Kernels), 1, imported().base),
               InputError);
}

} // namespace
} // namespace partsim::calibrate
