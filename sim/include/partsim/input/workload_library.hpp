// Workload model configs shipped in models/workloads/NAME.json (transformers and CNNs), read strictly.
#pragma once

#include "partsim/model/cnn.hpp"
#include "partsim/model/transformer.hpp"

#include <filesystem>
#include <string>
#include <variant>
#include <vector>

namespace partsim {

class JsonReader;

/** Current version of the workload file format. */
inline constexpr int kWorkloadSchemaVersion = 1;

/** A model config with its provenance.
 *
 * File format: `schema_version` (1), `kind` ("transformer" or "cnn"), `name` (the file's stem), `description`,
 * `source` (the paper or config file the figures come from), then the config's fields at the top level: a
 * transformer's as named in TransformerConfig (`kv_heads`, `head_dim` and `dropout` optional), a CNN's `family`
 * ("resnet") and the ResNetConfig fields. Unknown keys are errors. */
struct WorkloadSpec {
  std::string name;
  std::string description;
  std::string source;
  std::variant<TransformerConfig, ResNetConfig> config;

  bool is_transformer() const { return std::holds_alternative<TransformerConfig>(config); }
  /** The transformer's arithmetic. @throws std::bad_variant_access for a CNN. */
  TransformerModel transformer(const TransformerKernels& kernels = {}) const {
    return TransformerModel(std::get<TransformerConfig>(config), kernels);
  }
  /** The CNN's layers. @throws std::bad_variant_access for a transformer. */
  CnnModel cnn() const { return build_resnet(std::get<ResNetConfig>(config), name); }
};

/** Reads a workload object (a file's root). @throws InputError with the JSON pointer of the offending value. */
WorkloadSpec parse_workload_spec(JsonReader& reader);

/** Loads `DIR/models/workloads/NAME.json`. @throws InputError naming `source`/`pointer` when there is no such
 * workload, or naming the file and the JSON pointer when it is invalid. */
WorkloadSpec load_workload(const std::filesystem::path& data_dir, const std::string& name, const std::string& source,
                           const std::string& pointer);

/** Names of the workloads under `DIR/models/workloads`, sorted. */
std::vector<std::string> list_workloads(const std::filesystem::path& data_dir);

} // namespace partsim
