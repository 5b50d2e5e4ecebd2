// Workload files: strict parsing of transformer and CNN configs, lookup by name under models/workloads.
#include "partsim/input/workload_library.hpp"

#include "partsim/input/data_dir.hpp"
#include "partsim/input/json_file.hpp"
#include "partsim/input/json_reader.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

namespace partsim {

namespace {

// Sanity limits: far above any published model, low enough that products of them stay exact in doubles.
constexpr std::int64_t kMaxWidth = std::int64_t{1} << 24;
constexpr std::int64_t kMaxLength = std::int64_t{1} << 30;

bool required_boolean(JsonReader& reader, std::string_view key) {
  JsonReader value = reader.child(key);
  if (!value.value().is_boolean()) throw value.error("expected true or false, got " + value.type_name());
  return value.value().get<bool>();
}

/** Throws a config problem as an InputError at the offending key of `reader`. */
[[noreturn]] void throw_problem(const JsonReader& reader, const ConfigProblem& problem) {
  throw InputError(reader.source(), reader.pointer() + "/" + escape_pointer_token(problem.key), problem.message);
}

TransformerConfig parse_transformer(JsonReader& reader) {
  TransformerConfig c;
  c.architecture = reader.enum_choice<TransformerArchitecture>("architecture");
  c.layers = reader.integer("layers", 1, 100'000);
  c.hidden = reader.integer("hidden_size", 1, kMaxWidth);
  c.heads = reader.integer("heads", 1, kMaxWidth);
  c.kv_heads = reader.integer_or("kv_heads", 0, 1, kMaxWidth);
  c.head_dim = reader.integer_or("head_dim", 0, 1, kMaxWidth);
  c.ffn = reader.integer("ffn_size", 1, kMaxWidth);
  c.vocab = reader.integer("vocab_size", 1, kMaxLength);
  c.sequence_length = reader.integer("sequence_length", 1, kMaxLength);
  c.mlp = reader.enum_choice<MlpKind>("mlp");
  c.position = reader.enum_choice<PositionEmbedding>("position_embedding");
  c.norm = reader.enum_choice<NormKind>("norm");
  c.bias = required_boolean(reader, "bias");
  c.tied_embeddings = required_boolean(reader, "tied_embeddings");
  c.dropout = reader.boolean_or("dropout", false);
  if (auto experts = reader.optional_child("experts")) {
    // A mixture of experts: every layer's MLP is `count` experts of ffn_size each, `top_k` of them per token.
    c.experts.count = experts->integer("count", 2, kMaxWidth);
    c.experts.top_k = experts->integer("top_k", 1, c.experts.count);
    c.experts.shared = experts->integer_or("shared", 0, 0, kMaxWidth);
    c.experts.shared_ffn = experts->integer_or("shared_ffn_size", 0, 1, kMaxWidth);
    c.experts.first_dense = experts->integer_or("first_dense_layers", 0, 0, c.layers - 1);
    c.experts.dense_ffn = experts->integer_or("dense_ffn_size", 0, 1, kMaxWidth);
    // Node-limited routing: `groups` groups of experts, each token's top-k within `groups_per_token` of them.
    c.experts.groups = experts->integer_or("groups", 1, 1, c.experts.count);
    if (c.experts.count % c.experts.groups != 0)
      throw InputError(
          experts->source(), experts->pointer() + "/groups",
          fmt::format("expected groups dividing the {} experts, got {}", c.experts.count, c.experts.groups));
    c.experts.groups_per_token = experts->integer_or("groups_per_token", 1, 1, c.experts.groups);
    if (c.experts.groups_per_token * (c.experts.count / c.experts.groups) < c.experts.top_k)
      throw InputError(experts->source(), experts->pointer() + "/groups_per_token",
                       fmt::format("a token's top-{} experts must fit in its groups: expected groups_per_token x {} "
                                   "experts per group >= {}, got {}",
                                   c.experts.top_k, c.experts.count / c.experts.groups, c.experts.top_k,
                                   c.experts.groups_per_token));
    experts->finish();
  }
  if (auto mla = reader.optional_child("mla")) {
    // Multi-head latent attention: head_dim is then the query/key head dimension (non-rotary + rotary parts).
    c.mla.q_lora_rank = mla->integer_or("q_lora_rank", 0, 0, kMaxWidth);
    c.mla.kv_lora_rank = mla->integer("kv_lora_rank", 1, kMaxWidth);
    c.mla.rope_dim = mla->integer("qk_rope_head_dim", 1, kMaxWidth);
    c.mla.v_head_dim = mla->integer("v_head_dim", 1, kMaxWidth);
    mla->finish();
  }
  if (auto window = reader.optional_child("attention_window")) {
    if (c.architecture != TransformerArchitecture::Decoder)
      throw window->error("a sliding window is modelled for causal decoders; expected no attention_window for an "
                          "encoder");
    c.window.size = window->integer("size", 1, kMaxLength);
    c.window.full_every = window->integer_or("full_every", 0, 0, c.layers);
    if (c.window.full_every == 1)
      throw InputError(window->source(), window->pointer() + "/full_every",
                       "1 would make every layer full: expected 0 (every layer windowed) or at least 2");
    window->finish();
  }
  return c;
}

ResNetConfig parse_resnet(JsonReader& reader) {
  reader.choice("family", {"resnet"});
  ResNetConfig c;
  c.block = reader.choice("block", {"bottleneck", "basic"});
  c.stages.clear();
  for (const JsonReader& stage : reader.child("blocks_per_stage").elements(1, kMaxResNetStages))
    c.stages.push_back(stage.as_integer(1, 1000));
  c.base_width = reader.integer_or("base_width", c.base_width, 1, 65536);
  if (reader.has("input")) {
    const std::vector<JsonReader> dims = reader.child("input").elements(3, 3);
    c.input = {dims[0].as_integer(1, 65536), dims[1].as_integer(1, 65536), dims[2].as_integer(1, 65536)};
  }
  c.classes = reader.integer_or("classes", c.classes, 1, kMaxWidth);
  return c;
}

} // namespace

WorkloadSpec parse_workload_spec(JsonReader& reader) {
  reader.integer("schema_version", kWorkloadSchemaVersion, kWorkloadSchemaVersion);
  const std::string kind = reader.choice("kind", {"transformer", "cnn"});
  WorkloadSpec spec;
  spec.name = reader.string("name");
  spec.description = reader.string("description");
  spec.source = reader.string("source");
  if (kind == "transformer") {
    const TransformerConfig config = parse_transformer(reader);
    reader.finish();
    if (const auto problem = find_problem(config)) throw_problem(reader, *problem);
    spec.config = config;
  } else {
    const ResNetConfig config = parse_resnet(reader);
    reader.finish();
    if (const auto problem = find_problem(config)) throw_problem(reader, *problem);
    spec.config = config;
  }
  return spec;
}

WorkloadSpec load_workload(const std::filesystem::path& data_dir, const std::string& name, const std::string& source,
                           const std::string& pointer) {
  const auto path = library_file(data_dir, kWorkloads, name, source, pointer);
  const nlohmann::json doc = read_json_file(path);
  JsonReader reader(doc, path.string());
  WorkloadSpec spec = parse_workload_spec(reader);
  if (spec.name != name)
    throw reader.child("name").error(
        fmt::format("workload name \"{}\" does not match its file name \"{}\"", spec.name, name));
  return spec;
}

std::vector<std::string> list_workloads(const std::filesystem::path& data_dir) {
  return list_library(data_dir, kWorkloads);
}

} // namespace partsim
