// Scenario parsing: SI values and defaults, GPU profiles and their provenance, shares, overrides, shipped files.
#include "partsim/common/error.hpp"
#include "partsim/input/hardware.hpp"
#include "partsim/input/json_file.hpp"
#include "partsim/input/scenario.hpp"
#include "partsim/plan/strategy.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

namespace partsim {
namespace {

using nlohmann::json;
using test::base_scenario;

const DataJob& job_of(const Scenario& s) {
  return std::get<DataJob>(s.workload);
}

const DataParallel& dp_of(const Scenario& s) {
  return std::get<DataParallel>(s.strategy);
}

TEST(Scenario, ValidScenarioInSiUnits) {
  const Scenario s = test::parse(base_scenario(2, 4));
  EXPECT_EQ(s.source, "test.json");
  EXPECT_EQ(s.name, "test");
  EXPECT_EQ(s.description, "test scenario");

  EXPECT_EQ(s.cluster.nodes, 2);
  EXPECT_EQ(s.cluster.gpus_per_node, 4);
  EXPECT_EQ(s.cluster.gpu_count(), 8);
  EXPECT_EQ(s.cluster.gpu.name, "test-gpu");
  EXPECT_DOUBLE_EQ(s.cluster.gpu.peak("bf16"), 100e12);
  EXPECT_DOUBLE_EQ(s.cluster.gpu.memory_bandwidth.value, 1e12);
  EXPECT_DOUBLE_EQ(s.cluster.gpu.memory_capacity.value, 80e9);
  EXPECT_DOUBLE_EQ(s.cluster.intra_node.bandwidth, 300e9);
  EXPECT_DOUBLE_EQ(s.cluster.intra_node.latency, 1e-6);
  EXPECT_EQ(s.cluster.network.topology, "star");
  EXPECT_DOUBLE_EQ(s.cluster.network.nic.bandwidth, 25e9);
  EXPECT_DOUBLE_EQ(s.cluster.network.nic.latency, 2e-6);
  EXPECT_EQ(s.cluster.node_speed_factor, (std::vector<double>{1.0, 1.0}));

  const DataJob& job = job_of(s);
  EXPECT_EQ(job.samples, 1000u);
  EXPECT_DOUBLE_EQ(job.flop_per_sample, 1e9);
  EXPECT_EQ(job.bytes_read_per_sample, 0.0);
  EXPECT_EQ(job.gradient_bytes, 0.0);

  const DataParallel& dp = dp_of(s);
  EXPECT_EQ(dp.partitions, 8);
  EXPECT_EQ(dp.shares_kind, "balanced");
  EXPECT_EQ(dp.shares, std::vector<double>(8, 1.0 / 8));
  EXPECT_EQ(s.run.seed, 1u);
  EXPECT_EQ(s.document, base_scenario(2, 4)); // echoed as given
}

TEST(Scenario, Defaults) {
  json doc = base_scenario(4, 1);
  doc.erase("run");
  doc.erase("description");
  doc["strategy"].erase("shares");
  const Scenario s = test::parse(doc);
  EXPECT_EQ(s.description, "");
  EXPECT_EQ(job_of(s).iterations, 1);
  EXPECT_EQ(job_of(s).data_type, "bf16");
  EXPECT_EQ(dp_of(s).shares_kind, "balanced");
  EXPECT_EQ(dp_of(s).shares, std::vector<double>(4, 0.25));
  EXPECT_EQ(dp_of(s).sync, GradientSync::None);
  EXPECT_EQ(s.run.seed, 1u);
  EXPECT_EQ(s.run.network_model, NetworkModel::CM02);
  EXPECT_TRUE(s.run.outputs.table);
  EXPECT_TRUE(s.run.outputs.report_json);
  EXPECT_TRUE(s.run.outputs.ranks_csv);
  EXPECT_TRUE(s.run.outputs.trace);
  EXPECT_TRUE(s.run.outputs.reliability_trace);
  EXPECT_EQ(s.run.max_events, 200'000'000u);
}

TEST(Scenario, LinksAreOptionalWhereNobodyUsesThem) {
  // One node with one GPU needs neither an intra-node link nor a network.
  json doc = base_scenario(1, 1);
  doc["cluster"].erase("intra_node_link");
  doc["cluster"].erase("network");
  const Scenario s = test::parse(doc);
  EXPECT_EQ(s.cluster.gpu_count(), 1);
  EXPECT_EQ(s.cluster.network.nic.bandwidth, 0.0);
  EXPECT_EQ(s.cluster.intra_node.bandwidth, 0.0);
}

TEST(Scenario, GradientSyncDefaultsToRingAllReduceWithGradients) {
  json doc = base_scenario(4, 1);
  doc["workload"]["gradient_bytes"] = "1.4GB";
  const Scenario s = test::parse(doc);
  EXPECT_DOUBLE_EQ(job_of(s).gradient_bytes, 1.4e9);
  EXPECT_EQ(dp_of(s).sync, GradientSync::AllReduce);
  EXPECT_EQ(to_string(dp_of(s).sync), "all_reduce");
  // A data job keeps the exact step-by-step ring unless the scenario asks for another algorithm or fidelity.
  EXPECT_EQ(dp_of(s).gradient_sync.collective.algorithm, CollectiveAlgorithm::Ring);
  EXPECT_EQ(dp_of(s).gradient_sync.collective.fidelity, Fidelity::Steps);
}

TEST(Scenario, GradientSyncCanBeTurnedOffWithGradients) {
  json doc = base_scenario(4, 1);
  doc["workload"]["gradient_bytes"] = "1GB";
  doc["strategy"]["gradient_sync"] = "none";
  EXPECT_EQ(dp_of(test::parse(doc)).sync, GradientSync::None);
}

TEST(Scenario, RunSettings) {
  json doc = base_scenario();
  doc["run"] = {{"seed", 42}, {"network_model", "LV08"}, {"outputs", {"table", "trace"}}, {"max_events", 1000}};
  const Scenario s = test::parse(doc);
  EXPECT_EQ(s.run.seed, 42u);
  EXPECT_EQ(s.run.network_model, NetworkModel::LV08);
  EXPECT_EQ(to_string(s.run.network_model), "LV08");
  EXPECT_TRUE(s.run.outputs.table);
  EXPECT_FALSE(s.run.outputs.report_json);
  EXPECT_FALSE(s.run.outputs.ranks_csv);
  EXPECT_TRUE(s.run.outputs.trace);
  EXPECT_TRUE(s.run.outputs.reliability_trace); // with the trace
  EXPECT_EQ(s.run.max_events, 1000u);
}

TEST(Scenario, WorkloadFigures) {
  json doc = base_scenario();
  doc["workload"] = {
      {"kind", "data_job"},  {"samples", 5000}, {"flop_per_sample", "2.5TFLOP"}, {"bytes_read_per_sample", "8MiB"},
      {"data_type", "fp16"}, {"iterations", 7}};
  const DataJob job = job_of(test::parse(doc));
  EXPECT_EQ(job.samples, 5000u);
  EXPECT_DOUBLE_EQ(job.flop_per_sample, 2.5e12);
  EXPECT_DOUBLE_EQ(job.bytes_read_per_sample, 8.0 * 1024 * 1024);
  EXPECT_EQ(job.data_type, "fp16");
  EXPECT_EQ(job.iterations, 7);
}

TEST(Scenario, NodeSpeedFactors) {
  json doc = base_scenario(3, 1);
  doc["cluster"]["node_speed_factors"] = {1.0, 0.5, 2};
  EXPECT_EQ(test::parse(doc).cluster.node_speed_factor, (std::vector<double>{1.0, 0.5, 2.0}));
}

TEST(Scenario, NamedGpuProfileHasDatasheetProvenance) {
  json doc = base_scenario();
  doc["cluster"]["gpu"] = "a100-sxm4-80gb";
  const GpuProfile gpu = test::parse(doc).cluster.gpu;
  EXPECT_EQ(gpu.name, "a100-sxm4-80gb");
  EXPECT_DOUBLE_EQ(gpu.peak("bf16"), 312e12);
  EXPECT_DOUBLE_EQ(gpu.peak("fp64"), 19.5e12);
  EXPECT_FALSE(gpu.peak_flops.contains("fp8")); // the A100 has no FP8 tensor cores
  EXPECT_DOUBLE_EQ(gpu.memory_bandwidth.value, 2039e9);
  EXPECT_DOUBLE_EQ(gpu.memory_capacity.value, 80e9);
  const Provenance& p = gpu.peak_flops.at("bf16").provenance;
  EXPECT_EQ(p.kind, "datasheet");
  ASSERT_TRUE(p.fields.contains("source"));
  EXPECT_NE(p.fields.at("source").find("A100"), std::string::npos) << p.fields.at("source");
  EXPECT_EQ(gpu.memory_bandwidth.provenance.kind, "datasheet");
}

TEST(Scenario, BaseGpuProfileWithReplacedFigures) {
  json doc = base_scenario();
  doc["cluster"]["gpu"] = "h100-sxm5-80gb";
  const GpuProfile shipped = test::parse(doc).cluster.gpu;
  doc["cluster"]["gpu"] = {{"base", "h100-sxm5-80gb"},
                           {"sustained_compute", 0.8},
                           {"memory_efficiency", 0.75},
                           {"memory_capacity", "94GB"},
                           {"kernel_launch_overhead", "5us"}};
  const GpuProfile gpu = test::parse(doc, "what-if.json").cluster.gpu;
  // The four figures replaced, as the scenario's...
  ASSERT_TRUE(gpu.sustained_compute);
  EXPECT_DOUBLE_EQ(gpu.sustained_compute->value, 0.8);
  EXPECT_DOUBLE_EQ(gpu.memory_efficiency.value, 0.75);
  EXPECT_DOUBLE_EQ(gpu.memory_capacity.value, 94e9);
  EXPECT_DOUBLE_EQ(gpu.kernel_launch_overhead.value, 5e-6);
  EXPECT_DOUBLE_EQ(gpu.sustained_compute_factor(), 0.8);
  for (const Figure* f :
       {&*gpu.sustained_compute, &gpu.memory_efficiency, &gpu.memory_capacity, &gpu.kernel_launch_overhead}) {
    EXPECT_EQ(f->provenance.kind, "scenario");
    EXPECT_EQ(f->provenance.fields.at("source"), "what-if.json");
  }
  // ...and everything else the shipped profile's, with its provenance.
  EXPECT_EQ(gpu.name, shipped.name);
  EXPECT_DOUBLE_EQ(gpu.peak("bf16"), shipped.peak("bf16"));
  EXPECT_EQ(gpu.peak_flops.at("bf16").provenance.kind, "datasheet");
  EXPECT_DOUBLE_EQ(gpu.memory_bandwidth.value, shipped.memory_bandwidth.value);
  EXPECT_EQ(gpu.gemm_efficiency.points.size(), shipped.gemm_efficiency.points.size());
  EXPECT_EQ(gpu.gemm_efficiency.provenance.kind, shipped.gemm_efficiency.provenance.kind);
  EXPECT_EQ(gpu.attention_efficiency.has_value(), shipped.attention_efficiency.has_value());
  ASSERT_TRUE(shipped.sustained_compute); // the shipped figure, replaced
  EXPECT_EQ(shipped.sustained_compute->provenance.kind, "published_measurement");
  EXPECT_NE(gpu.description.find("replaces sustained_compute, memory_efficiency, memory_capacity, "
                                 "kernel_launch_overhead"),
            std::string::npos)
      << gpu.description;
}

TEST(Scenario, InlineGpuHasScenarioProvenance) {
  const GpuProfile gpu = test::parse(base_scenario(), "mine.json").cluster.gpu;
  // The inline shorthand gives one peak rate to every data type.
  EXPECT_EQ(gpu.peak_flops.size(), known_data_types().size());
  EXPECT_DOUBLE_EQ(gpu.peak("fp8"), 100e12);
  for (const Figure* f : {&gpu.peak_flops.at("bf16"), &gpu.memory_bandwidth, &gpu.memory_capacity}) {
    EXPECT_EQ(f->provenance.kind, "scenario");
    EXPECT_EQ(f->provenance.fields.at("source"), "mine.json");
  }
}

TEST(Scenario, InlineGpuWithPeakRatesPerDataType) {
  json doc = base_scenario();
  doc["cluster"]["gpu"]["peak_flops"] = {{"fp32", "20TFLOPs"}, {"bf16", "300TFLOPs"}};
  const GpuProfile gpu = test::parse(doc).cluster.gpu;
  EXPECT_EQ(gpu.peak_flops.size(), 2u);
  EXPECT_DOUBLE_EQ(gpu.peak("fp32"), 20e12);
  EXPECT_DOUBLE_EQ(gpu.peak("bf16"), 300e12);
}

TEST(Scenario, SkewedShares) {
  // 10 partitions, the largest holds 30%: the other nine share 70% evenly.
  json doc = base_scenario(10, 1);
  doc["strategy"]["shares"] = {{"skewed", 0.3}};
  const DataParallel dp = dp_of(test::parse(doc));
  EXPECT_EQ(dp.shares_kind, "skewed");
  ASSERT_EQ(dp.shares.size(), 10u);
  EXPECT_DOUBLE_EQ(dp.shares[0], 0.3);
  for (std::size_t i = 1; i < dp.shares.size(); ++i) EXPECT_DOUBLE_EQ(dp.shares[i], 0.7 / 9) << "partition " << i;
  EXPECT_NEAR(std::accumulate(dp.shares.begin(), dp.shares.end(), 0.0), 1.0, 1e-12);
}

TEST(Scenario, SkewedSharesHonourLargestPartition) {
  json doc = base_scenario(10, 1);
  doc["strategy"]["shares"] = {{"skewed", 0.3}, {"largest_partition", 7}};
  const DataParallel dp = dp_of(test::parse(doc));
  ASSERT_EQ(dp.shares.size(), 10u);
  EXPECT_EQ(std::max_element(dp.shares.begin(), dp.shares.end()) - dp.shares.begin(), 7);
  EXPECT_DOUBLE_EQ(dp.shares[7], 0.3);
  EXPECT_DOUBLE_EQ(dp.shares[0], 0.7 / 9);
  EXPECT_DOUBLE_EQ(dp.shares[9], 0.7 / 9);
}

TEST(Scenario, SkewedShareWithOnePartition) {
  json doc = base_scenario(1, 1);
  doc["strategy"]["shares"] = {{"skewed", 1.0}};
  EXPECT_EQ(dp_of(test::parse(doc)).shares, std::vector<double>{1.0});
}

TEST(Scenario, ExplicitShares) {
  json doc = base_scenario(2, 1);
  doc["strategy"]["partitions"] = 4;
  doc["strategy"]["shares"] = {0.4, 0.3, 0.2, 0.1};
  const DataParallel dp = dp_of(test::parse(doc));
  EXPECT_EQ(dp.shares_kind, "explicit");
  EXPECT_EQ(dp.partitions, 4);
  EXPECT_EQ(dp.shares, (std::vector<double>{0.4, 0.3, 0.2, 0.1}));
}

// --- overrides ---------------------------------------------------------------------------------------------------

TEST(Scenario, OverrideChangesANestedValue) {
  json doc = base_scenario(4, 1);
  apply_overrides(doc, {parse_override("/cluster/network/bandwidth=100GBps")});
  EXPECT_EQ(doc["cluster"]["network"]["bandwidth"], "100GBps");
  EXPECT_DOUBLE_EQ(test::parse(doc).cluster.network.nic.bandwidth, 100e9);
}

TEST(Scenario, OverridesApplyInOrder) {
  json doc = base_scenario(4, 1);
  apply_overrides(doc, {parse_override("/workload/samples=10"), parse_override("/workload/samples=20")});
  EXPECT_EQ(job_of(test::parse(doc)).samples, 20u);
}

TEST(Scenario, OverrideAddsAKey) {
  json doc = base_scenario(4, 1);
  apply_overrides(doc, {parse_override("/workload/iterations=5")});
  EXPECT_EQ(doc["workload"]["iterations"], 5);
  EXPECT_EQ(job_of(test::parse(doc)).iterations, 5);
}

TEST(Scenario, OverrideAddingAMisspelledKeyFailsAsUnknown) {
  json doc = base_scenario(4, 1);
  apply_overrides(doc, {parse_override("/workload/iteration=5")});
  ASSERT_TRUE(doc["workload"].contains("iteration"));
  try {
    test::parse(doc);
    FAIL() << "the misspelled key was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/workload/iteration");
    EXPECT_NE(e.detail().find("unknown key"), std::string::npos) << e.detail();
  }
}

TEST(Scenario, OverrideReplacesAnArrayElement) {
  json doc = base_scenario(4, 1);
  doc["strategy"]["shares"] = {0.4, 0.2, 0.2, 0.2};
  apply_overrides(doc, {parse_override("/strategy/shares/0=0.2"), parse_override("/strategy/shares/3=0.4")});
  EXPECT_EQ(dp_of(test::parse(doc)).shares, (std::vector<double>{0.2, 0.2, 0.2, 0.4}));
}

TEST(Scenario, OverrideReplacesAWholeObject) {
  json doc = base_scenario(4, 1);
  apply_overrides(doc, {parse_override("/strategy/shares={\"skewed\":0.5,\"largest_partition\":2}")});
  const DataParallel dp = dp_of(test::parse(doc));
  EXPECT_EQ(dp.shares_kind, "skewed");
  EXPECT_DOUBLE_EQ(dp.shares[2], 0.5);
  EXPECT_DOUBLE_EQ(dp.shares[0], 0.5 / 3);
}

TEST(Scenario, ParseOverrideReadsJsonValues) {
  EXPECT_EQ(parse_override("/a=3").value, json(3));
  EXPECT_EQ(parse_override("/a=2.5").value, json(2.5));
  EXPECT_EQ(parse_override("/a=-1").value, json(-1));
  EXPECT_EQ(parse_override("/a=true").value, json(true));
  EXPECT_EQ(parse_override("/a=null").value, json(nullptr));
  EXPECT_EQ(parse_override("/a=[0.5,0.5]").value, json::array({0.5, 0.5}));
  EXPECT_EQ(parse_override("/a={\"skewed\":0.3}").value, json::object({{"skewed", 0.3}}));
  EXPECT_EQ(parse_override("/a=\"42\"").value, json("42")); // quoted: a string, not a number
}

TEST(Scenario, ParseOverrideFallsBackToPlainStrings) {
  EXPECT_EQ(parse_override("/cluster/gpu=a100-sxm4-80gb").value, json("a100-sxm4-80gb"));
  EXPECT_EQ(parse_override("/cluster/network/bandwidth=25GBps").value, json("25GBps"));
  EXPECT_EQ(parse_override("/a=[1,2").value, json("[1,2"));
  EXPECT_EQ(parse_override("/a=").value, json(""));
}

TEST(Scenario, ParseOverrideSplitsAtTheFirstEqualsSign) {
  const Override o = parse_override("/cluster/network/latency=a=b");
  EXPECT_EQ(o.pointer, "/cluster/network/latency");
  EXPECT_EQ(o.value, json("a=b"));
}

// --- shipped data ------------------------------------------------------------------------------------------------

TEST(Scenario, EveryShippedScenarioParsesAndPlans) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(test::source_dir() / "scenarios"))
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  ASSERT_FALSE(files.empty());
  for (const auto& path : files) {
    SCOPED_TRACE(path.string());
    const Scenario s = load_scenario(path, {}, test::source_dir());
    EXPECT_EQ(s.source, path.string());
    EXPECT_FALSE(s.name.empty());
    const Plan plan = build_plan(s);
    // A serving workload has no rank programs: its stages' replicas are the engine's actors (docs/serving.md); nor
    // has a parameter server: its workers and shards are (docs/stale-gradients.md).
    const bool own_engine =
        std::holds_alternative<ServingWorkload>(s.workload) || std::holds_alternative<ParameterServer>(s.strategy);
    EXPECT_EQ(plan.ranks.size(), own_engine ? 0 : static_cast<std::size_t>(s.cluster.gpu_count()));
  }
}

TEST(Scenario, DefaultScenarioIsTheShippedFile) {
  EXPECT_EQ(default_scenario_text(), test::read_file(test::source_dir() / "scenarios" / "default.json"));
  const Scenario s = default_scenario({}, test::source_dir());
  EXPECT_EQ(s.source, "<built-in default>");
  EXPECT_EQ(s.document, read_json_file(test::source_dir() / "scenarios" / "default.json"));
  EXPECT_EQ(s.cluster.gpu.name, "a100-sxm4-80gb");
}

TEST(Scenario, DefaultScenarioTakesOverrides) {
  const Scenario s = default_scenario({parse_override("/workload/samples=1234")}, test::source_dir());
  EXPECT_EQ(job_of(s).samples, 1234u);
  EXPECT_EQ(s.document["workload"]["samples"], 1234);
}

TEST(Scenario, EveryHardwareProfileLoads) {
  const std::vector<std::string> names = list_gpu_profiles(test::source_dir());
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(test::source_dir() / "models" / "hardware"))
    if (entry.path().extension() == ".json") files.push_back(entry.path().stem().string());
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty());
  EXPECT_EQ(names, files);
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const GpuProfile gpu = load_gpu_profile(test::source_dir(), name, "test", "/cluster/gpu");
    EXPECT_EQ(gpu.name, name);
    EXPECT_FALSE(gpu.peak_flops.empty());
    EXPECT_TRUE(gpu.peak_flops.contains("bf16"));
    for (const auto& [type, figure] : gpu.peak_flops) {
      EXPECT_GT(figure.value, 0.0) << type;
      EXPECT_TRUE(figure.provenance.kind == "datasheet" || figure.provenance.kind == "measured") << type;
    }
    EXPECT_GT(gpu.memory_bandwidth.value, 0.0);
    EXPECT_GT(gpu.memory_capacity.value, 0.0);
    EXPECT_EQ(to_json(gpu)["name"], name);
  }
}

} // namespace
} // namespace partsim
