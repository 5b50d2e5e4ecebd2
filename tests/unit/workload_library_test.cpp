// Shipped workload files: parameter counts against published sizes, training flops per token against 6·N plus the
// attention term, and strict parsing (JSON pointers in errors, unknown keys, names).
#include "partsim/common/error.hpp"
#include "partsim/input/json_reader.hpp"
#include "partsim/input/workload_library.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace partsim {
namespace {

using nlohmann::json;

WorkloadSpec load(const std::string& name) {
  return load_workload(test::source_dir(), name, "test", "/workload");
}

/** Published parameter counts: the paper's or the released checkpoint's own figure. */
const std::map<std::string, double>& published_parameters() {
  static const std::map<std::string, double> sizes{
      {"gpt2-small", 124e6},      // Hugging Face gpt2 (the paper's "117M" predates a recount)
      {"gpt2-xl", 1558e6},        // OpenAI's release of the 1.5B model
      {"gpt3-1.3b", 1320e6},      // Brown et al. 2020, Table D.1
      {"gpt3-13b", 12850e6},      // Table D.1
      {"gpt3-175b", 174600e6},    // Table D.1
      {"bert-large", 335e6},      // Hugging Face bert-large-uncased (the paper rounds to 340M)
      {"llama2-7b", 6.74e9},      // Touvron et al. 2023
      {"llama2-70b", 68.98e9},    // Touvron et al. 2023
      {"llama3-8b", 8.03e9},      // Meta-Llama-3-8B model card
      {"llama3-70b", 70.6e9},     // Meta-Llama-3-70B model card
      {"llama3-405b", 405.8e9},   // Llama 3.1 405B model card
      {"resnet50", 25.6e6},       // He et al. 2016
      {"megatron-22b", 22e9},     // Korthikanti et al. 2022, Table 3 ("22B")
      {"megatron-175b", 174.6e9}, // the GPT-3 175B configuration with Megatron-LM's 51200-token vocabulary
      {"megatron-530b", 529.6e9}, // Narayanan et al. 2021 (arXiv:2104.04473), Table 1
      {"megatron-1t", 1008.0e9},  // Narayanan et al. 2021, Table 1
      {"mixtral-8x7b", 46.7e9},   // Mistral AI, Mixtral of experts (total; 12.9B active: moe_test.cpp)
      {"qwen3-30b-a3b", 30.5e9},  // Qwen3-30B-A3B model card
      {"gpt-oss-120b", 116.83e9}, // gpt-oss model card, Table 1
      {"deepseek-v3", 671e9},     // DeepSeek-V3 technical report (the main model; 37B active: mla_test.cpp)
  };
  return sizes;
}

TEST(WorkloadLibrary, ListsShippedWorkloads) {
  std::vector<std::string> expected;
  for (const auto& [name, _] : published_parameters()) expected.push_back(name);
  EXPECT_EQ(list_workloads(test::source_dir()), expected);
  EXPECT_TRUE(list_workloads(test::temp_dir()).empty());
}

TEST(WorkloadLibrary, ShippedModelsMatchPublishedSizes) {
  for (const auto& [name, published] : published_parameters()) {
    SCOPED_TRACE(name);
    const WorkloadSpec spec = load(name);
    EXPECT_EQ(spec.name, name);
    EXPECT_FALSE(spec.description.empty());
    EXPECT_FALSE(spec.source.empty());
    const double parameters = spec.is_transformer() ? spec.transformer().parameters() : spec.cnn().parameters();
    EXPECT_NEAR(parameters, published, 0.01 * published);
  }
}

TEST(WorkloadLibrary, HeadlineSizesRoundToTheModelNames) {
  // The GPT-3 names round to two significant figures.
  EXPECT_NEAR(load("gpt3-1.3b").transformer().parameters(), 1.3e9, 0.05e9);
  EXPECT_NEAR(load("gpt3-13b").transformer().parameters(), 13e9, 0.5e9);
  EXPECT_NEAR(load("gpt3-175b").transformer().parameters(), 175e9, 0.5e9);
}

TEST(WorkloadLibrary, TrainingFlopsPerTokenAreSixTimesParametersPlusAttention) {
  // Per token, without recomputation: 6 flop per parameter that takes part in a matrix product (lookup tables do
  // not: the untied input embedding V·h, a learned position table s·h; of a mixture of experts only the active
  // parameters, the k routed experts a token goes to), plus 6·l·s·a·(d + d_v) for QK^T and attention over values
  // (forward 2·s·a·(d + d_v) per layer, backward twice that; d_v = d but for multi-head latent attention).
  for (const auto& [name, _] : published_parameters()) {
    const WorkloadSpec spec = load(name);
    if (!spec.is_transformer()) continue;
    SCOPED_TRACE(name);
    const TransformerModel model = spec.transformer();
    const TransformerConfig& c = model.config();
    const double h = c.hidden, V = c.vocab, s = c.sequence_length, l = c.layers;
    double matmul_parameters = model.active_parameters();
    if (!c.tied_embeddings) matmul_parameters -= V * h;
    if (c.position == PositionEmbedding::Learned) matmul_parameters -= s * h;
    const double expected =
        6 * matmul_parameters + 6 * l * s * static_cast<double>(c.heads * (c.head_dim + model.value_dim()));
    const double per_token = model.training_flops(2, Recomputation::None).total() / (2 * s);
    EXPECT_NEAR(per_token, expected, 0.01 * expected);
  }
}

TEST(WorkloadLibrary, LlamaFilesCarryTheirShapes) {
  const TransformerConfig c = std::get<TransformerConfig>(load("llama3-405b").config);
  EXPECT_EQ(c.layers, 126);
  EXPECT_EQ(c.hidden, 16384);
  EXPECT_EQ(c.heads, 128);
  EXPECT_EQ(c.kv_heads, 8);
  EXPECT_EQ(c.ffn, 53248);
  EXPECT_EQ(c.vocab, 128256);
  EXPECT_EQ(c.mlp, MlpKind::Gated);
  EXPECT_EQ(c.norm, NormKind::RmsNorm);
  EXPECT_EQ(c.position, PositionEmbedding::Rotary);
  EXPECT_FALSE(c.bias);
  EXPECT_FALSE(c.tied_embeddings);
  EXPECT_EQ(std::get<TransformerConfig>(load("bert-large").config).architecture, TransformerArchitecture::Encoder);
}

TEST(WorkloadLibrary, ResNet50FileIsTheStandardDefinition) {
  const WorkloadSpec spec = load("resnet50");
  ASSERT_FALSE(spec.is_transformer());
  const ResNetConfig& c = std::get<ResNetConfig>(spec.config);
  EXPECT_EQ(c.block, "bottleneck");
  EXPECT_EQ(c.stages, (std::vector<std::int64_t>{3, 4, 6, 3}));
  EXPECT_EQ(c.input, (ImageShape{3, 224, 224}));
  EXPECT_EQ(c.classes, 1000);
  EXPECT_EQ(spec.cnn().name(), "resnet50");
}

// --- errors --------------------------------------------------------------------------------------------------------

json gpt2_document() {
  std::ifstream in(test::source_dir() / "models" / "workloads" / "gpt2-small.json");
  return json::parse(in);
}

json resnet_document() {
  std::ifstream in(test::source_dir() / "models" / "workloads" / "resnet50.json");
  return json::parse(in);
}

/** Parses `doc`; expects an InputError at `pointer` whose message contains `fragment`. */
void expect_error(const json& doc, const std::string& pointer, const std::string& fragment) {
  try {
    JsonReader reader(doc, "bad.json");
    parse_workload_spec(reader);
    FAIL() << "expected an InputError at " << pointer;
  } catch (const InputError& e) {
    EXPECT_EQ(e.source(), "bad.json");
    EXPECT_EQ(e.pointer(), pointer) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(WorkloadLibrary, ValidDocumentParses) {
  const json doc = gpt2_document(); // the reader keeps a pointer to it
  JsonReader reader(doc, "gpt2.json");
  EXPECT_EQ(parse_workload_spec(reader).name, "gpt2-small");
}

TEST(WorkloadLibrary, HeadsNotDividingHidden) {
  json doc = gpt2_document();
  doc["heads"] = 10;
  expect_error(doc, "/heads", "do not divide hidden_size 768");
}

TEST(WorkloadLibrary, KvHeadsNotDividingHeads) {
  json doc = gpt2_document();
  doc["kv_heads"] = 5;
  expect_error(doc, "/kv_heads", "do not divide 12 heads");
}

TEST(WorkloadLibrary, ZeroLayers) {
  json doc = gpt2_document();
  doc["layers"] = 0;
  expect_error(doc, "/layers", ">= 1");
}

TEST(WorkloadLibrary, UnknownKey) {
  json doc = gpt2_document();
  doc["hiden_size"] = 768;
  expect_error(doc, "/hiden_size", "unknown key");
}

TEST(WorkloadLibrary, MissingKey) {
  json doc = gpt2_document();
  doc.erase("vocab_size");
  expect_error(doc, "/vocab_size", "required key is missing");
}

TEST(WorkloadLibrary, WrongTypes) {
  json doc = gpt2_document();
  doc["bias"] = "yes";
  expect_error(doc, "/bias", "expected true or false");
  doc = gpt2_document();
  doc["mlp"] = "swiglu";
  expect_error(doc, "/mlp", "expected one of plain, gated");
  doc = gpt2_document();
  doc["hidden_size"] = 768.5;
  expect_error(doc, "/hidden_size", "expected an integer");
}

TEST(WorkloadLibrary, SchemaVersionAndKind) {
  json doc = gpt2_document();
  doc["schema_version"] = 2;
  expect_error(doc, "/schema_version", "expected an integer >= 1 and <= 1");
  doc = gpt2_document();
  doc["kind"] = "rnn";
  expect_error(doc, "/kind", "expected one of transformer, cnn");
}

TEST(WorkloadLibrary, CnnErrors) {
  json doc = resnet_document();
  doc["blocks_per_stage"][1] = 0;
  expect_error(doc, "/blocks_per_stage/1", ">= 1");
  doc = resnet_document();
  doc["input"] = {3, 224};
  expect_error(doc, "/input", "expected an array of 3 to 3 elements");
  doc = resnet_document();
  doc["heads"] = 12; // a transformer key in a CNN
  expect_error(doc, "/heads", "unknown key");
  doc = resnet_document();
  doc["family"] = "vgg";
  expect_error(doc, "/family", "expected one of resnet");
}

TEST(WorkloadLibrary, UnknownWorkloadNamesTheReference) {
  try {
    load_workload(test::source_dir(), "gpt5", "scenario.json", "/workload/model");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.source(), "scenario.json");
    EXPECT_EQ(e.pointer(), "/workload/model");
    EXPECT_NE(std::string(e.what()).find("llama3-8b"), std::string::npos) << e.what();
  }
}

TEST(WorkloadLibrary, NameMustMatchFileName) {
  const auto dir = test::temp_dir();
  std::filesystem::create_directories(dir / "models" / "workloads");
  std::ofstream(dir / "models" / "workloads" / "mine.json") << gpt2_document().dump();
  try {
    load_workload(dir, "mine", "test", "");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/name");
    EXPECT_NE(std::string(e.what()).find("does not match its file name"), std::string::npos) << e.what();
  }
  EXPECT_EQ(list_workloads(dir), (std::vector<std::string>{"mine"}));
}

} // namespace
} // namespace partsim
