// Bad input, one test per mistake: each must raise an InputError naming its source, the JSON pointer and the reason.
#include "partsim/common/error.hpp"
#include "partsim/input/json_file.hpp"
#include "partsim/input/scenario.hpp"
#include "partsim/plan/strategy.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>

namespace partsim {
namespace {

using nlohmann::json;
using test::base_scenario;

using test::input_error;

/** The error raised by parsing `document` (read as if from test.json). */
InputError parse_error(const json& document) {
  return input_error([&] { test::parse(document); });
}

::testing::AssertionResult contains(const std::string& text, const std::string& fragment) {
  if (text.find(fragment) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << fragment << "\"";
}

std::filesystem::path write_file(const std::string& name, const std::string& text) {
  const auto path = test::temp_dir() / name;
  std::ofstream out(path, std::ios::binary);
  out << text;
  return path;
}

Scenario load(const std::filesystem::path& path) {
  return load_scenario(path, {}, test::source_dir());
}

// --- malformed files -----------------------------------------------------------------------------------------

TEST(ScenarioErrors, MalformedJsonTextGivesLineAndColumn) {
  // The stray '}' is on line 3, after two spaces, "b" (3 characters), ':' and a space: column 2 + 3 + 1 + 1 + 1.
  const InputError e = input_error([] { parse_json_text("{\n  \"a\": 1,\n  \"b\": }\n", "inline.json"); });
  EXPECT_EQ(e.source(), "inline.json");
  EXPECT_EQ(e.pointer(), "");
  EXPECT_TRUE(contains(e.detail(), "malformed JSON at line 3, column 8"));
}

TEST(ScenarioErrors, MalformedJsonFileNamesThePath) {
  // A trailing comma before the closing brace, on line 2.
  const auto path = write_file("trailing-comma.json", "{\"schema_version\": 1,\n}\n");
  const InputError e = input_error([&] { load(path); });
  EXPECT_EQ(e.source(), path.string());
  EXPECT_EQ(e.pointer(), "");
  EXPECT_TRUE(contains(e.detail(), "malformed JSON at line 2, column 1"));
}

TEST(ScenarioErrors, NumberLiteralOverflowingADouble) {
  // nlohmann/json refuses 1e999 with out_of_range 406 ("number overflow"), not with a parse_error.
  const InputError e = input_error([] { parse_json_text("{\"samples\": 1e999}", "huge.json"); });
  EXPECT_EQ(e.source(), "huge.json");
  EXPECT_EQ(e.pointer(), "");
  EXPECT_TRUE(contains(e.detail(), "1e999"));
  EXPECT_TRUE(contains(e.detail(), "overflow"));
}

TEST(ScenarioErrors, MissingFile) {
  const auto path = test::temp_dir() / "absent.json";
  const InputError e = input_error([&] { load(path); });
  EXPECT_EQ(e.source(), path.string());
  EXPECT_EQ(e.pointer(), "");
  EXPECT_TRUE(contains(e.detail(), "no such file"));
}

TEST(ScenarioErrors, DirectoryInsteadOfFile) {
  const auto dir = test::temp_dir();
  const InputError e = input_error([&] { load(dir); });
  EXPECT_EQ(e.source(), dir.string());
  EXPECT_EQ(e.pointer(), "");
  EXPECT_TRUE(contains(e.detail(), "is a directory"));
}

TEST(ScenarioErrors, EmptyFile) {
  const auto path = write_file("empty.json", "");
  const InputError e = input_error([&] { load(path); });
  EXPECT_EQ(e.source(), path.string());
  EXPECT_EQ(e.pointer(), "");
  EXPECT_TRUE(contains(e.detail(), "the file is empty"));
}

TEST(ScenarioErrors, WhitespaceOnlyFile) {
  const auto path = write_file("blank.json", " \n\t\r\n  \n");
  const InputError e = input_error([&] { load(path); });
  EXPECT_EQ(e.source(), path.string());
  EXPECT_EQ(e.pointer(), "");
  EXPECT_TRUE(contains(e.detail(), "the file is empty"));
}

TEST(ScenarioErrors, TopLevelArrayInAFile) {
  const auto path = write_file("array.json", json::array({base_scenario()}).dump());
  const InputError e = input_error([&] { load(path); });
  EXPECT_EQ(e.source(), path.string());
  EXPECT_EQ(e.pointer(), "/");
  EXPECT_TRUE(contains(e.detail(), "expected a JSON object at the top level"));
}

TEST(ScenarioErrors, TopLevelArrayDocument) {
  const InputError e = parse_error(json::array({1, 2}));
  EXPECT_EQ(e.source(), "test.json");
  EXPECT_EQ(e.pointer(), "/");
  EXPECT_TRUE(contains(e.detail(), "expected an object, got an array"));
}

TEST(ScenarioErrors, OverrideAppliedToAFileIsReportedAgainstTheFile) {
  const auto path = write_file("ok.json", base_scenario().dump(2));
  const InputError e =
      input_error([&] { load_scenario(path, {parse_override("/cluster/nodes=0")}, test::source_dir()); });
  EXPECT_EQ(e.source(), path.string());
  EXPECT_EQ(e.pointer(), "/cluster/nodes");
  EXPECT_TRUE(contains(e.detail(), "expected an integer >= 1"));
}

// --- wrong types -------------------------------------------------------------------------------------------------

TEST(ScenarioErrors, StringWhereACountIsExpected) {
  json doc = base_scenario();
  doc["cluster"]["nodes"] = "four";
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.source(), "test.json");
  EXPECT_EQ(e.pointer(), "/cluster/nodes");
  EXPECT_TRUE(contains(e.detail(), "got the string \"four\""));
}

TEST(ScenarioErrors, QuotedNumberWhereAnIntegerIsExpected) {
  json doc = base_scenario();
  doc["workload"]["samples"] = "1000";
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/workload/samples");
  EXPECT_TRUE(contains(e.detail(), "expected an integer"));
  EXPECT_TRUE(contains(e.detail(), "got the string \"1000\""));
}

TEST(ScenarioErrors, FractionalCount) {
  json doc = base_scenario();
  doc["cluster"]["nodes"] = 2.5;
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/cluster/nodes");
  EXPECT_TRUE(contains(e.detail(), "expected an integer >= 1 and <= 65536, got 2.5"));
}

TEST(ScenarioErrors, NumberWhereAnObjectIsExpected) {
  json doc = base_scenario();
  doc["workload"] = 42;
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/workload");
  EXPECT_TRUE(contains(e.detail(), "expected an object, got 42"));
}

TEST(ScenarioErrors, ArrayForName) {
  json doc = base_scenario();
  doc["name"] = json::array({"a", "b"});
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/name");
  EXPECT_TRUE(contains(e.detail(), "expected a string, got an array"));
}

TEST(ScenarioErrors, EmptyName) {
  json doc = base_scenario();
  doc["name"] = "";
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/name");
  EXPECT_TRUE(contains(e.detail(), "non-empty"));
}

TEST(ScenarioErrors, BooleanWhereAQuantityIsExpected) {
  json doc = base_scenario();
  doc["cluster"]["network"]["bandwidth"] = true;
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/cluster/network/bandwidth");
  EXPECT_TRUE(contains(e.detail(), "expected a quantity in bytes/s"));
  EXPECT_TRUE(contains(e.detail(), "got true"));
}

TEST(ScenarioErrors, GpuGivenAsANumber) {
  json doc = base_scenario();
  doc["cluster"]["gpu"] = 100;
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/cluster/gpu");
  EXPECT_TRUE(contains(e.detail(), "expected a GPU profile name"));
}

TEST(ScenarioErrors, UnsupportedSchemaVersion) {
  json doc = base_scenario();
  doc["schema_version"] = kScenarioSchemaVersion + 1;
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/schema_version");
  EXPECT_TRUE(contains(e.detail(), "got " + std::to_string(kScenarioSchemaVersion + 1)));
}

// --- counts: zero, negative, absurd -----------------------------------------------------------------------------

TEST(ScenarioErrors, ZeroNodes) {
  json doc = base_scenario();
  doc["cluster"]["nodes"] = 0;
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/cluster/nodes");
  EXPECT_TRUE(contains(e.detail(), "expected an integer >= 1 and <= 65536, got 0"));
}

TEST(ScenarioErrors, NegativeGpusPerNode) {
  json doc = base_scenario();
  doc["cluster"]["gpus_per_node"] = -1;
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/cluster/gpus_per_node");
  EXPECT_TRUE(contains(e.detail(), "expected an integer >= 1 and <= 1024, got -1"));
}

TEST(ScenarioErrors, ZeroSamples) {
  json doc = base_scenario();
  doc["workload"]["samples"] = 0;
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/workload/samples");
  EXPECT_TRUE(contains(e.detail(), "expected an integer >= 1"));
  EXPECT_TRUE(contains(e.detail(), "got 0"));
}

TEST(ScenarioErrors, ZeroIterations) {
  json doc = base_scenario();
  doc["workload"]["iterations"] = 0;
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/workload/iterations");
  EXPECT_TRUE(contains(e.detail(), "expected an integer >= 1 and <= 1000000000, got 0"));
}

TEST(ScenarioErrors, ZeroPartitions) {
  json doc = base_scenario();
  doc["strategy"]["partitions"] = 0;
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/strategy/partitions");
  EXPECT_TRUE(contains(e.detail(), "expected an integer >= 1"));
  EXPECT_TRUE(contains(e.detail(), "got 0"));
}

TEST(ScenarioErrors, FewerPartitionsThanGpus) {
  json doc = base_scenario(4, 1);
  doc["strategy"]["partitions"] = 3;
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/strategy/partitions");
  EXPECT_TRUE(contains(e.detail(), "expected at least one partition per GPU (4 GPUs), got 3"));
}

TEST(ScenarioErrors, MillionNodesHitsTheGpuLimit) {
  json doc = base_scenario();
  doc["cluster"]["nodes"] = 1'000'000;
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/cluster/nodes");
  EXPECT_TRUE(contains(e.detail(), std::to_string(kMaxGpus)));
  EXPECT_TRUE(contains(e.detail(), "got 1000000"));
}

TEST(ScenarioErrors, NodesTimesGpusPerNodeAboveTheGpuLimit) {
  // Each count is within its own bound, their product is not.
  json doc = base_scenario();
  doc["cluster"]["nodes"] = 1024;
  doc["cluster"]["gpus_per_node"] = 128;
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/cluster/nodes");
  EXPECT_TRUE(contains(e.detail(), "= " + std::to_string(1024 * 128) + " GPUs"));
  EXPECT_TRUE(contains(e.detail(), "at most " + std::to_string(kMaxGpus) + " GPUs in all"));
}

TEST(ScenarioErrors, SamplesAboveTheLimit) {
  json doc = base_scenario();
  // The limit is 1e15 samples per iteration.
  doc["workload"]["samples"] = std::uint64_t{1'000'000'000'000'001};
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/workload/samples");
  EXPECT_TRUE(contains(e.detail(), "expected an integer >= 1 and <= 1000000000000000, got 1000000000000001"));
}

TEST(ScenarioErrors, SamplesAboveInt64) {
  json doc = base_scenario();
  doc["workload"]["samples"] = std::uint64_t{10'000'000'000'000'000'000U};
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/workload/samples");
  EXPECT_TRUE(contains(e.detail(), "got 10000000000000000000"));
}

TEST(ScenarioErrors, HugeNumberGivenThroughSetIsAString) {
  // parse_override cannot read 1e999 as JSON, so it keeps the text; the integer reader then names it.
  json doc = base_scenario();
  apply_overrides(doc, {parse_override("/workload/samples=1e999")});
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/workload/samples");
  EXPECT_TRUE(contains(e.detail(), "got the string \"1e999\""));
}

TEST(ScenarioErrors, SampleThatCostsNothing) {
  json doc = base_scenario();
  doc["workload"]["flop_per_sample"] = 0;
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/workload/flop_per_sample");
  EXPECT_TRUE(contains(e.detail(), "a sample must cost something"));
}

// --- shares ------------------------------------------------------------------------------------------------------

TEST(ScenarioErrors, ExplicitSharesNotSummingToOne) {
  json doc = base_scenario(4, 1);
  doc["strategy"]["shares"] = {0.5, 0.25, 0.125, 0.0625}; // 0.9375
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/strategy/shares");
  EXPECT_TRUE(contains(e.detail(), "expected shares summing to 1"));
  EXPECT_TRUE(contains(e.detail(), "got a sum of 0.9375"));
}

TEST(ScenarioErrors, ExplicitSharesOfTheWrongLength) {
  json doc = base_scenario(4, 1);
  doc["strategy"]["shares"] = {0.5, 0.5};
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/strategy/shares");
  EXPECT_TRUE(contains(e.detail(), "expected an array of 4 to 4 elements, got 2"));
}

TEST(ScenarioErrors, NegativeExplicitShare) {
  json doc = base_scenario(4, 1);
  doc["strategy"]["shares"] = {0.5, -0.5, 0.5, 0.5};
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/strategy/shares/1");
  EXPECT_TRUE(contains(e.detail(), "expected a number >= 0 and <= 1, got -0.5"));
}

TEST(ScenarioErrors, SkewedShareBelowOneOverK) {
  // With 4 partitions the largest share is at least 1/4.
  json doc = base_scenario(4, 1);
  doc["strategy"]["shares"] = {{"skewed", 0.2}};
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/strategy/shares/skewed");
  EXPECT_TRUE(contains(e.detail(), "expected a number >= 0.25 and <= 1, got 0.2"));
}

TEST(ScenarioErrors, SkewedShareAboveOne) {
  json doc = base_scenario(4, 1);
  doc["strategy"]["shares"] = {{"skewed", 1.5}};
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/strategy/shares/skewed");
  EXPECT_TRUE(contains(e.detail(), "got 1.5"));
}

TEST(ScenarioErrors, SkewedLargestPartitionOutOfRange) {
  json doc = base_scenario(4, 1);
  doc["strategy"]["shares"] = {{"skewed", 0.4}, {"largest_partition", 4}};
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/strategy/shares/largest_partition");
  EXPECT_TRUE(contains(e.detail(), "expected an integer >= 0 and <= 3, got 4"));
}

TEST(ScenarioErrors, UnknownSharesWord) {
  json doc = base_scenario(4, 1);
  doc["strategy"]["shares"] = "even";
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/strategy/shares");
  EXPECT_TRUE(contains(e.detail(), "got \"even\""));
}

// --- non-finite and malformed quantities ------------------------------------------------------------------------

TEST(ScenarioErrors, NanQuantity) {
  json doc = base_scenario();
  doc["cluster"]["network"]["latency"] = "nan";
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/cluster/network/latency");
  EXPECT_TRUE(contains(e.detail(), "expected a finite quantity, got \"nan\""));
}

TEST(ScenarioErrors, InfQuantity) {
  json doc = base_scenario();
  doc["cluster"]["intra_node_link"]["bandwidth"] = "inf";
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/cluster/intra_node_link/bandwidth");
  EXPECT_TRUE(contains(e.detail(), "expected a finite quantity, got \"inf\""));
}

TEST(ScenarioErrors, InfWithAUnit) {
  json doc = base_scenario();
  doc["workload"]["flop_per_sample"] = "inf GFLOP";
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/workload/flop_per_sample");
  EXPECT_TRUE(contains(e.detail(), "finite"));
}

TEST(ScenarioErrors, UnknownBandwidthUnit) {
  json doc = base_scenario();
  doc["cluster"]["network"]["bandwidth"] = "25GBs";
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/cluster/network/bandwidth");
  EXPECT_TRUE(contains(e.detail(), "unknown unit \"GBs\""));
  EXPECT_TRUE(contains(e.detail(), "Bps"));
}

TEST(ScenarioErrors, UnknownTimeUnit) {
  json doc = base_scenario();
  doc["cluster"]["network"]["latency"] = "2 parsecs";
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/cluster/network/latency");
  EXPECT_TRUE(contains(e.detail(), "unknown unit \"parsecs\""));
}

TEST(ScenarioErrors, ZeroBandwidth) {
  json doc = base_scenario();
  doc["cluster"]["network"]["bandwidth"] = "0GBps";
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/cluster/network/bandwidth");
  EXPECT_TRUE(contains(e.detail(), "expected a quantity > 0"));
}

// --- names that are not in the menu ----------------------------------------------------------------------------

TEST(ScenarioErrors, UnknownStrategyKind) {
  json doc = base_scenario();
  doc["strategy"]["kind"] = "expert_parallel";
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/strategy/kind");
  EXPECT_TRUE(contains(e.detail(),
                       "expected one of data_parallel, model_parallel, collective, serving, parameter_server, got "
                       "\"expert_parallel\""));
}

TEST(ScenarioErrors, UnknownWorkloadKind) {
  json doc = base_scenario();
  doc["workload"]["kind"] = "inference";
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/workload/kind");
  EXPECT_TRUE(contains(e.detail(), "expected one of data_job, model_training, collective, serving, got \"inference\""));
}

TEST(ScenarioErrors, UnknownGpuProfileListsTheAvailableOnes) {
  json doc = base_scenario();
  doc["cluster"]["gpu"] = "no-such-gpu";
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/cluster/gpu");
  EXPECT_TRUE(contains(e.detail(), "unknown GPU profile \"no-such-gpu\""));
  EXPECT_TRUE(contains(e.detail(), "a100-sxm4-80gb, "));
  EXPECT_TRUE(contains(e.detail(), "h100-sxm5-80gb"));
}

TEST(ScenarioErrors, GpuProfileNameWithAPath) {
  // A name is a file stem, never a path out of models/hardware.
  json doc = base_scenario();
  doc["cluster"]["gpu"] = "../hardware/a100-sxm4-80gb";
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/cluster/gpu");
  EXPECT_TRUE(contains(e.detail(), "unknown GPU profile"));
}

TEST(ScenarioErrors, DataTypeTheGpuLacks) {
  json doc = base_scenario();
  doc["cluster"]["gpu"] = "a100-sxm4-80gb";
  doc["workload"]["data_type"] = "fp8";
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/workload/data_type");
  EXPECT_TRUE(contains(e.detail(), "\"a100-sxm4-80gb\" has no peak rate for fp8"));
  EXPECT_TRUE(contains(e.detail(), "bf16"));
}

TEST(ScenarioErrors, UnknownDataType) {
  json doc = base_scenario();
  doc["workload"]["data_type"] = "fp12";
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/workload/data_type");
  EXPECT_TRUE(contains(e.detail(), "got \"fp12\""));
}

TEST(ScenarioErrors, UnknownNetworkModel) {
  json doc = base_scenario();
  doc["run"]["network_model"] = "LV09";
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/run/network_model");
  EXPECT_TRUE(contains(e.detail(), "expected one of CM02, LV08, got \"LV09\""));
}

TEST(ScenarioErrors, UnknownOutput) {
  json doc = base_scenario();
  doc["run"]["outputs"] = {"table", "pdf"};
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/run/outputs/1");
  EXPECT_TRUE(contains(e.detail(), "got \"pdf\""));
}

TEST(ScenarioErrors, UnknownTopology) {
  json doc = base_scenario();
  doc["cluster"]["network"]["topology"] = "torus";
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/cluster/network/topology");
  EXPECT_TRUE(contains(e.detail(), "expected one of star, fat_tree, rail, got \"torus\""));
}

// --- unknown and missing keys ----------------------------------------------------------------------------------

TEST(ScenarioErrors, UnknownTopLevelKey) {
  json doc = base_scenario();
  doc["descripton"] = "typo";
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/descripton");
  EXPECT_TRUE(contains(e.detail(), "unknown key"));
  EXPECT_TRUE(contains(e.detail(), "description"));
}

TEST(ScenarioErrors, UnknownKeyInNetwork) {
  json doc = base_scenario();
  doc["cluster"]["network"]["topolgy"] = "star";
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/cluster/network/topolgy");
  EXPECT_TRUE(contains(
      e.detail(), "unknown key; expected one of bandwidth, efficiency, latency, nics_per_node, profile, topology"));
}

TEST(ScenarioErrors, UnknownKeyInCluster) {
  json doc = base_scenario();
  doc["cluster"]["node_speed_factor"] = {1, 1, 1, 1}; // the key is node_speed_factors
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/cluster/node_speed_factor");
  EXPECT_TRUE(contains(e.detail(), "unknown key"));
  EXPECT_TRUE(contains(e.detail(), "node_speed_factors"));
}

TEST(ScenarioErrors, UnknownKeyInWorkload) {
  json doc = base_scenario();
  doc["workload"]["iteratons"] = 10;
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/workload/iteratons");
  EXPECT_TRUE(contains(e.detail(), "unknown key"));
  EXPECT_TRUE(contains(e.detail(), "iterations"));
}

TEST(ScenarioErrors, UnknownKeyInInlineGpu) {
  json doc = base_scenario();
  doc["cluster"]["gpu"]["tdp"] = "700W";
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/cluster/gpu/tdp");
  EXPECT_TRUE(contains(e.detail(), "unknown key"));
}

TEST(ScenarioErrors, BaseGpuProfileReplacesOnlyItsScalarFigures) {
  json doc = base_scenario();
  doc["cluster"]["gpu"] = {{"base", "h100-sxm5-80gb"}, {"sustained_compute", 0.8}, {"peak_flops", "1PFLOPs"}};
  InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/cluster/gpu/peak_flops");
  EXPECT_TRUE(contains(e.detail(), "sustained_compute, memory_efficiency, memory_capacity or kernel_launch_overhead"))
      << e.detail();

  doc["cluster"]["gpu"] = {{"base", "h100-sxm5-80gb"}};
  e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/cluster/gpu");
  EXPECT_TRUE(contains(e.detail(), "replaces none of its figures")) << e.detail();

  doc["cluster"]["gpu"] = {{"base", "h100-sxm5-80gb"}, {"sustained_compute", 1.5}};
  e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/cluster/gpu/sustained_compute");
  EXPECT_TRUE(contains(e.detail(), "<= 1")) << e.detail();

  doc["cluster"]["gpu"] = {{"base", "no-such-gpu"}, {"sustained_compute", 0.8}};
  e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/cluster/gpu/base");
  EXPECT_TRUE(contains(e.detail(), "h100-sxm5-80gb")) << e.detail();

  doc["cluster"]["gpu"] = {{"base", 7}, {"sustained_compute", 0.8}};
  EXPECT_EQ(parse_error(doc).pointer(), "/cluster/gpu/base");

  doc["cluster"]["gpu"] = {{"base", "h100-sxm5-80gb"}, {"memory_capacity", "-3GB"}};
  EXPECT_EQ(parse_error(doc).pointer(), "/cluster/gpu/memory_capacity");
}

TEST(ScenarioErrors, KeyWithSlashIsEscapedInThePointer) {
  json doc = base_scenario();
  doc["run"]["a/b~c"] = 1;
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/run/a~1b~0c");
  EXPECT_TRUE(contains(e.detail(), "unknown key"));
}

TEST(ScenarioErrors, MissingGpu) {
  json doc = base_scenario();
  doc["cluster"].erase("gpu");
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/cluster/gpu");
  EXPECT_TRUE(contains(e.detail(), "required key is missing"));
}

TEST(ScenarioErrors, MissingSamples) {
  json doc = base_scenario();
  doc["workload"].erase("samples");
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/workload/samples");
  EXPECT_TRUE(contains(e.detail(), "required key is missing"));
}

TEST(ScenarioErrors, MissingNetworkWithSeveralNodes) {
  json doc = base_scenario(2, 1);
  doc["cluster"].erase("network");
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/cluster/network");
  EXPECT_TRUE(contains(e.detail(), "required key is missing"));
}

// --- cluster details ---------------------------------------------------------------------------------------------

TEST(ScenarioErrors, NodeSpeedFactorsOfTheWrongLength) {
  json doc = base_scenario(4, 1);
  doc["cluster"]["node_speed_factors"] = {1.0, 0.5, 1.0};
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/cluster/node_speed_factors");
  EXPECT_TRUE(contains(e.detail(), "expected an array of 4 to 4 elements, got 3"));
}

TEST(ScenarioErrors, ZeroNodeSpeedFactor) {
  json doc = base_scenario(4, 1);
  doc["cluster"]["node_speed_factors"] = {1.0, 0.0, 1.0, 1.0};
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/cluster/node_speed_factors/1");
  EXPECT_TRUE(contains(e.detail(), "expected a number >= 1e-06")) << e.detail();
  EXPECT_TRUE(contains(e.detail(), "got 0"));
}

TEST(ScenarioErrors, RingAllReduceWithoutGradientBytes) {
  json doc = base_scenario();
  doc["strategy"]["gradient_sync"] = "ring_allreduce";
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/strategy/gradient_sync");
  EXPECT_TRUE(contains(e.detail(), "needs /workload/gradient_bytes > 0"));
}

TEST(ScenarioErrors, RingAllReduceWithZeroGradientBytes) {
  json doc = base_scenario();
  doc["workload"]["gradient_bytes"] = "0GB";
  doc["strategy"]["gradient_sync"] = "ring_allreduce";
  const InputError e = parse_error(doc);
  EXPECT_EQ(e.pointer(), "/strategy/gradient_sync");
  EXPECT_TRUE(contains(e.detail(), "needs /workload/gradient_bytes > 0"));
}

// --- --set overrides ---------------------------------------------------------------------------------------------

TEST(ScenarioErrors, OverrideWithoutEqualsSign) {
  const InputError e = input_error([] { parse_override("/cluster/nodes"); });
  EXPECT_EQ(e.source(), "--set");
  EXPECT_EQ(e.pointer(), "");
  EXPECT_TRUE(contains(e.detail(), "expected /json/pointer=value, got \"/cluster/nodes\""));
}

TEST(ScenarioErrors, OverridePointerWithoutLeadingSlash) {
  const InputError e = input_error([] { parse_override("cluster/nodes=4"); });
  EXPECT_EQ(e.source(), "--set");
  EXPECT_EQ(e.pointer(), "");
  EXPECT_TRUE(contains(e.detail(), "got \"cluster/nodes=4\""));
}

TEST(ScenarioErrors, OverrideWhoseParentDoesNotExist) {
  json doc = base_scenario();
  const InputError e = input_error([&] { apply_overrides(doc, {parse_override("/cluster/fabric/bandwidth=1")}); });
  EXPECT_EQ(e.source(), "--set");
  EXPECT_EQ(e.pointer(), "/cluster/fabric/bandwidth");
  EXPECT_TRUE(contains(e.detail(), "no object or array at /cluster/fabric"));
}

TEST(ScenarioErrors, OverrideThroughAScalar) {
  // /cluster/nodes is a number: it cannot hold a key.
  json doc = base_scenario();
  const InputError e = input_error([&] { apply_overrides(doc, {parse_override("/cluster/nodes/x=1")}); });
  EXPECT_EQ(e.source(), "--set");
  EXPECT_EQ(e.pointer(), "/cluster/nodes/x");
  EXPECT_TRUE(contains(e.detail(), "no object or array at /cluster/nodes"));
}

TEST(ScenarioErrors, OverrideArrayIndexOutOfRange) {
  json doc = base_scenario(4, 1);
  doc["strategy"]["shares"] = {0.25, 0.25, 0.25, 0.25};
  const InputError e = input_error([&] { apply_overrides(doc, {parse_override("/strategy/shares/4=0.5")}); });
  EXPECT_EQ(e.source(), "--set");
  EXPECT_EQ(e.pointer(), "/strategy/shares/4");
  EXPECT_TRUE(contains(e.detail(), "expected an index below 4 into the array at /strategy/shares"));
}

TEST(ScenarioErrors, OverrideArrayIndexNotANumber) {
  json doc = base_scenario(4, 1);
  doc["strategy"]["shares"] = {0.25, 0.25, 0.25, 0.25};
  const InputError e = input_error([&] { apply_overrides(doc, {parse_override("/strategy/shares/-=0.5")}); });
  EXPECT_EQ(e.pointer(), "/strategy/shares/-");
  EXPECT_TRUE(contains(e.detail(), "expected an index below 4"));
}

TEST(ScenarioErrors, OverrideArrayIndexBeyondSizeT) {
  // 2^64 and more: std::stoul would throw std::out_of_range instead of naming the problem.
  json doc = base_scenario(4, 1);
  doc["strategy"]["shares"] = {0.25, 0.25, 0.25, 0.25};
  const InputError e =
      input_error([&] { apply_overrides(doc, {parse_override("/strategy/shares/99999999999999999999=0.5")}); });
  EXPECT_EQ(e.source(), "--set");
  EXPECT_EQ(e.pointer(), "/strategy/shares/99999999999999999999");
  EXPECT_TRUE(contains(e.detail(), "expected an index below 4 into the array at /strategy/shares"));
}

TEST(ScenarioErrors, OverrideThroughAnArrayIndexBeyondSizeT) {
  // nlohmann's json_pointer lookup throws out_of_range 404 for such an index on the way to the parent.
  json doc = base_scenario(4, 1);
  doc["strategy"]["shares"] = {0.25, 0.25, 0.25, 0.25};
  const InputError e =
      input_error([&] { apply_overrides(doc, {parse_override("/strategy/shares/99999999999999999999/x=1")}); });
  EXPECT_EQ(e.source(), "--set");
  EXPECT_EQ(e.pointer(), "/strategy/shares/99999999999999999999/x");
  EXPECT_TRUE(contains(e.detail(), "no object or array at /strategy/shares/99999999999999999999"));
}

TEST(ScenarioErrors, OverrideWithABadPointerEscape) {
  json doc = base_scenario();
  const InputError e = input_error([&] { apply_overrides(doc, {parse_override("/cluster/a~2b=1")}); });
  EXPECT_EQ(e.source(), "--set");
  EXPECT_EQ(e.pointer(), "/cluster/a~2b");
  EXPECT_TRUE(contains(e.detail(), "not a valid JSON pointer"));
}

// --- plans too big to run ----------------------------------------------------------------------------------------

TEST(ScenarioErrors, MaxEventsExceededByBuildPlan) {
  // 1024 GPUs in a ring: 2 (n-1) n messages and n executions per iteration.
  constexpr std::uint64_t n = 1024;
  constexpr std::uint64_t iterations = 100;
  constexpr std::uint64_t events = iterations * (2 * (n - 1) * n + n);
  static_assert(events > 200'000'000, "the run must exceed the default limit");
  json doc = base_scenario(128, 8);
  doc["workload"]["gradient_bytes"] = "1GB";
  doc["workload"]["iterations"] = iterations;
  const Scenario s = test::parse(doc);
  ASSERT_EQ(s.cluster.gpu_count(), static_cast<int>(n));
  const InputError e = input_error([&] { build_plan(s); });
  EXPECT_EQ(e.source(), "test.json");
  EXPECT_EQ(e.pointer(), "/run/max_events");
  EXPECT_TRUE(contains(e.detail(), "more than the limit of 200000000"));
}

TEST(ScenarioErrors, MaxEventsLoweredByTheScenario) {
  // 4 GPUs, no sync: 4 executions per iteration, 3 iterations = 12 events against a limit of 11.
  json doc = base_scenario(4, 1);
  doc["workload"]["iterations"] = 3;
  doc["run"]["max_events"] = 11;
  const Scenario s = test::parse(doc);
  const InputError e = input_error([&] { build_plan(s); });
  EXPECT_EQ(e.pointer(), "/run/max_events");
  EXPECT_TRUE(contains(e.detail(), "would simulate 12 messages and executions, more than the limit of 11"));
}

} // namespace
} // namespace partsim
