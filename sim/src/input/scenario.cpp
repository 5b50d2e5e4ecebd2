// Scenario parsing and validation (schema version 1) and command-line overrides.
#include "partsim/input/scenario.hpp"

#include "partsim/common/error.hpp"
#include "partsim/common/text.hpp"
#include "partsim/input/csv.hpp"
#include "partsim/input/json_file.hpp"
#include "partsim/input/json_reader.hpp"
#include "partsim/input/scenario_schema.hpp"
#include "partsim/ps/ps_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>

namespace partsim {

TransformerKernels stack_kernels(TrainingStack stack) {
  switch (stack) {
  case TrainingStack::MegatronLm2021:
    return kMegatronLm2021Kernels;
  case TrainingStack::MegatronCore2024:
    return {AttentionKernel::Flash, true, true, CrossEntropyKernel::MegatronFp32, RecomputeModules{}, true};
  case TrainingStack::Torchtitan:
    return {AttentionKernel::Flash, false, false, CrossEntropyKernel::Fp32LogSoftmax, RecomputeModules{}, false};
  case TrainingStack::Custom:
    break;
  }
  return {};
}

std::string stack_gradient_data_type(TrainingStack stack, const std::string& data_type) {
  const bool megatron = stack == TrainingStack::MegatronLm2021 || stack == TrainingStack::MegatronCore2024;
  return megatron && data_type == "bf16" ? "fp32" : data_type;
}

namespace {

constexpr double kShareTolerance = 1e-6;
/** A node's speed against its GPU profile: a millionth (nearly stalled) to 1000x. SimGrid cannot run an execution
 * at speed 0, and a denormal factor gives durations that are not finite. */
const Bounds kSpeedFactorBounds = Bounds::closed(1e-6, 1000.0);

SpeedChange parse_speed_change(JsonReader& reader, int nodes) {
  SpeedChange change;
  change.node = static_cast<int>(reader.integer("node", 0, nodes - 1));
  JsonReader points = reader.child("points");
  double last = -1.0;
  for (const JsonReader& point : points.elements(1, 100'000)) {
    const auto pair = point.elements(2, 2);
    const double at = pair[0].as_quantity(Dimension::Time, Bounds::non_negative(1e9));
    if (last < 0 && at != 0.0) throw pair[0].error("the first point must be at time 0");
    if (at <= last && last >= 0)
      throw pair[0].error(fmt::format("expected times in increasing order, got {:g} s after {:g} s", at, last));
    last = at;
    // SimGrid cannot run an execution on a host of speed 0 (it aborts): a stalled node is a small factor.
    change.points.emplace_back(at, pair[1].as_number(kSpeedFactorBounds));
  }
  if (reader.has("period")) {
    change.period = reader.quantity("period");
    if (change.period <= last)
      throw InputError(reader.source(), reader.pointer() + "/period",
                       fmt::format("expected a period longer than the last point ({:g} s)", last));
  }
  reader.finish();
  return change;
}

ClusterSpec parse_cluster(JsonReader reader, const std::filesystem::path& data_dir) {
  ClusterSpec c;
  c.nodes = static_cast<int>(reader.integer("nodes"));
  c.gpus_per_node = static_cast<int>(reader.integer("gpus_per_node"));
  if (static_cast<std::int64_t>(c.nodes) * c.gpus_per_node > kMaxGpus)
    throw InputError(reader.source(), reader.pointer() + "/nodes",
                     fmt::format("{} nodes x {} GPUs per node = {} GPUs; expected at most {} GPUs in all", c.nodes,
                                 c.gpus_per_node, static_cast<std::int64_t>(c.nodes) * c.gpus_per_node, kMaxGpus));

  JsonReader gpu = reader.child("gpu");
  if (gpu.value().is_string())
    c.gpu = load_gpu_profile(data_dir, gpu.as_string(), gpu.source(), gpu.pointer());
  else if (gpu.value().is_object() && gpu.value().contains("base"))
    c.gpu = parse_gpu_profile_over_base(gpu, data_dir);
  else if (gpu.value().is_object())
    c.gpu = parse_gpu_profile(gpu);
  else
    throw gpu.error("expected a GPU profile name (a file in models/hardware) or an inline object, got " +
                    gpu.type_name());

  // A link nobody can use may be left out: the intra-node link with one GPU per node, the network with one node.
  if (c.gpus_per_node > 1 || reader.has("intra_node_link")) {
    JsonReader link = reader.child("intra_node_link");
    c.intra_node = parse_link(link, data_dir, "intra_node");
    link.finish();
  }
  if (c.nodes > 1 || reader.has("network")) {
    JsonReader net = reader.child("network");
    c.network = parse_network(net, data_dir, c.nodes, c.gpus_per_node);
  }

  c.node_speed_factor.assign(static_cast<std::size_t>(c.nodes), 1.0);
  if (auto factors = reader.optional_child("node_speed_factors")) {
    const auto items = factors->elements(static_cast<std::size_t>(c.nodes), static_cast<std::size_t>(c.nodes));
    for (std::size_t i = 0; i < items.size(); ++i) c.node_speed_factor[i] = items[i].as_number();
  }
  if (auto changes = reader.optional_child("speed_changes")) {
    std::vector<bool> seen(static_cast<std::size_t>(c.nodes), false);
    for (JsonReader& item : changes->elements(0, 100'000)) {
      c.speed_changes.push_back(parse_speed_change(item, c.nodes));
      const auto node = static_cast<std::size_t>(c.speed_changes.back().node);
      if (seen[node])
        throw InputError(item.source(), item.pointer() + "/node",
                         fmt::format("node {} already has a speed change; expected one entry per node", node));
      seen[node] = true;
    }
  }
  if (auto stragglers = reader.optional_child("stragglers"))
    c.stragglers = parse_stragglers(*stragglers, c.gpu_count());
  reader.finish();
  return c;
}

/** Stragglers slow the rank programs' compute: workloads and strategies without such programs refuse them. */
void check_stragglers(const Scenario& s) {
  if (!s.cluster.stragglers) return;
  const char* why = nullptr;
  if (std::holds_alternative<ServingWorkload>(s.workload))
    why = "a serving workload's replicas are not slowed by stragglers";
  else if (std::holds_alternative<CollectiveBenchmark>(s.workload))
    why = "a collective benchmark computes nothing to slow down";
  else if (std::holds_alternative<ParameterServer>(s.strategy))
    why = "strategy kind \"parameter_server\" has its own per-worker jitter (/strategy/jitter)";
  else if (const auto* dp = std::get_if<DataParallel>(&s.strategy); dp != nullptr && dp->balancing)
    why = "run-time balancing (/strategy/balancing) hands out work by the GPUs' pace, not in iterations";
  if (why != nullptr)
    throw InputError(s.source, "/cluster/stragglers",
                     fmt::format("{}; expected stragglers only with data or model training by rank programs", why));
}

/** Measured expert routing: a CSV file with columns `layer` (a MoE layer's index in the model, from 0), `expert` (from
 * 0) and `tokens` (the copies routed to it, any scale), one row per layer and expert, every MoE layer and expert once;
 * returns each layer's shares (its counts over their sum). */
std::map<std::int64_t, std::vector<double>> read_routing_counts(const std::filesystem::path& path,
                                                                const TransformerConfig& config) {
  const std::int64_t experts = config.experts.count;
  std::map<std::int64_t, std::vector<double>> counts;
  const auto integer = [&](const CsvRow& row, std::size_t k, const char* column, std::int64_t lo, std::int64_t hi) {
    std::int64_t v = 0;
    const std::string& text = row.fields[k];
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty() || v < lo || v > hi)
      throw csv_error(path, row.line,
                      fmt::format("'{}' in column '{}'; expected an integer from {} to {}", text, column, lo, hi));
    return v;
  };
  read_csv_columns(
      path, {"layer", "expert", "tokens"},
      [&](const CsvRow& row) {
        const std::int64_t layer = integer(row, 0, "layer", 0, config.layers - 1);
        if (layer < config.experts.first_dense)
          throw csv_error(path, row.line,
                          fmt::format("layer {} has a dense MLP (the model's first {} layers); expected a layer from "
                                      "{} to {}",
                                      layer, config.experts.first_dense, config.experts.first_dense,
                                      config.layers - 1));
        const std::int64_t expert = integer(row, 1, "expert", 0, experts - 1);
        double tokens = 0.0;
        const std::string& text = row.fields[2];
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), tokens);
        if (ec != std::errc() || end != text.data() + text.size() || text.empty() || !std::isfinite(tokens) ||
            tokens < 0.0)
          throw csv_error(path, row.line,
                          fmt::format("'{}' in column 'tokens'; expected a count (a number >= 0)", text));
        auto& layer_counts = counts[layer];
        if (layer_counts.empty()) layer_counts.assign(static_cast<std::size_t>(experts), -1.0);
        double& slot = layer_counts[static_cast<std::size_t>(expert)];
        if (slot >= 0.0)
          throw csv_error(path, row.line,
                          fmt::format("layer {} expert {} is given twice; expected each once", layer, expert));
        slot = tokens;
      },
      "routing counts file");
  for (std::int64_t layer = config.experts.first_dense; layer < config.layers; ++layer) {
    const auto at = counts.find(layer);
    if (at == counts.end())
      throw InputError(path.string(), "",
                       fmt::format("no counts for layer {}; expected rows for every MoE layer ({} to {}) and every "
                                   "expert (0 to {})",
                                   layer, config.experts.first_dense, config.layers - 1, experts - 1));
    double sum = 0.0;
    for (std::size_t e = 0; e < at->second.size(); ++e) {
      if (at->second[e] < 0.0)
        throw InputError(path.string(), "",
                         fmt::format("no count for layer {} expert {}; expected a row for every expert (0 to {}) of "
                                     "every MoE layer",
                                     layer, e, experts - 1));
      sum += at->second[e];
    }
    if (!(sum > 0.0))
      throw InputError(path.string(), "",
                       fmt::format("layer {} routes no tokens; expected a count above 0 for some expert", layer));
    for (double& c : at->second) c /= sum;
  }
  return counts;
}

/** Labels from a CSV column (path relative to the scenario's folder) or generated for `samples` samples. */
std::shared_ptr<const Labels> parse_labels(JsonReader& reader, std::optional<std::uint64_t> samples) {
  std::shared_ptr<const Labels> labels;
  if (reader.has("csv")) {
    const std::filesystem::path path = path_from_scenario(reader.source(), reader.string("csv"));
    const std::string column = reader.string("column");
    try {
      labels = std::make_shared<const Labels>(read_label_csv(path, column));
    } catch (const InputError& e) {
      // The CSV's own error (file, line) plus where the scenario names that file.
      throw InputError(reader.source(), reader.pointer() + "/csv", e.what());
    }
    if (samples && *samples != labels->size())
      throw InputError(reader.source(), "/workload/samples",
                       fmt::format("the label file {} has {} rows; expected samples to match or be left out",
                                   path.string(), labels->size()));
  } else if (reader.has("generate")) {
    JsonReader generate = reader.child("generate");
    if (!samples) throw InputError(reader.source(), "/workload/samples", "generated labels need the sample count");
    const double rate = generate.number("positive_rate");
    const auto seed = static_cast<std::uint64_t>(generate.integer("seed"));
    generate.finish();
    if (*samples > kMaxLabels)
      throw InputError(reader.source(), "/workload/samples",
                       "expected at most 2e9 samples with generated labels (each label is kept in memory)");
    labels = std::make_shared<const Labels>(generate_labels(*samples, rate, seed));
  } else {
    throw reader.error("expected {\"csv\": PATH, \"column\": NAME} or {\"generate\": {\"positive_rate\": R}}");
  }
  reader.finish();
  return labels;
}

DataJob parse_data_job(JsonReader& reader) {
  DataJob job;
  std::optional<std::uint64_t> samples;
  if (reader.has("samples") || !reader.has("labels")) samples = static_cast<std::uint64_t>(reader.integer("samples"));
  if (auto labels = reader.optional_child("labels")) {
    job.labels = parse_labels(*labels, samples);
    if (job.labels->size() == 0) throw labels->error("expected at least one labelled sample");
    samples = job.labels->size();
  }
  job.samples = *samples;
  job.flop_per_sample = reader.quantity("flop_per_sample");
  job.bytes_read_per_sample = reader.quantity("bytes_read_per_sample");
  if (job.flop_per_sample == 0.0 && job.bytes_read_per_sample == 0.0)
    throw InputError(reader.source(), reader.pointer() + "/flop_per_sample",
                     "a sample must cost something: expected flop_per_sample or bytes_read_per_sample > 0");
  job.data_type = reader.choice("data_type");
  job.iterations = reader.integer("iterations");
  job.gradient_bytes = reader.quantity("gradient_bytes");
  job.serial_fraction = reader.number("serial_fraction");
  return job;
}

ModelTraining parse_model_training(JsonReader& reader, const std::filesystem::path& data_dir) {
  ModelTraining t;
  JsonReader model = reader.child("model");
  if (model.value().is_string()) {
    t.model = load_workload(data_dir, model.as_string(), model.source(), model.pointer());
  } else if (model.value().is_object()) {
    t.model = parse_workload_spec(model);
  } else {
    throw model.error("expected a workload name (a file in models/workloads) or an inline workload object, got " +
                      model.type_name());
  }
  if (reader.has("sequence_length")) {
    if (!t.model.is_transformer())
      throw InputError(reader.source(), reader.pointer() + "/sequence_length",
                       "only a transformer has a sequence length; expected no sequence_length for a CNN");
    std::get<TransformerConfig>(t.model.config).sequence_length = reader.integer("sequence_length");
  }
  t.global_batch = reader.integer("global_batch");
  t.micro_batch = reader.integer("micro_batch");
  if (t.micro_batch > t.global_batch)
    throw InputError(reader.source(), reader.pointer() + "/micro_batch",
                     fmt::format("expected at most the global batch ({}), got {}", t.global_batch, t.micro_batch));
  t.data_type = reader.choice("data_type");
  t.recomputation = reader.enum_choice_or("recomputation", Recomputation::None);
  if (!t.model.is_transformer() && t.recomputation != Recomputation::None)
    throw InputError(reader.source(), reader.pointer() + "/recomputation",
                     "activation recomputation is modelled for transformers; expected \"none\" for a CNN");
  if (reader.has("recompute_num_layers")) {
    if (t.recomputation != Recomputation::Full)
      throw InputError(reader.source(), reader.pointer() + "/recompute_num_layers",
                       fmt::format("the layers are those full recomputation reruns (Megatron-Core's --recompute-method "
                                   "block); expected no recompute_num_layers with recomputation \"{}\", or "
                                   "recomputation \"full\"",
                                   to_string(t.recomputation)));
    t.recompute_num_layers = reader.integer("recompute_num_layers");
  }
  t.optimizer = reader.enum_choice_or("optimizer", Optimizer::Adam);
  t.gradient_clipping = reader.boolean("gradient_clipping");
  t.loss_scaling = reader.boolean_or("loss_scaling", t.data_type == "fp16");
  t.stack = reader.enum_choice_or("stack", TrainingStack::Custom);
  t.kernels = stack_kernels(t.stack);
  for (const char* key : {"attention", "fused_bias_activation", "fused_bias_dropout_add", "cross_entropy"})
    if (reader.has(key) && !t.model.is_transformer())
      throw InputError(reader.source(), reader.pointer() + "/" + key,
                       "kernel choices are modelled for transformers; expected no such key for a CNN");
  if (reader.has("attention")) t.kernels.attention = reader.enum_choice<AttentionKernel>("attention");
  t.kernels.fused_bias_activation = reader.boolean_or("fused_bias_activation", t.kernels.fused_bias_activation);
  t.kernels.fused_bias_dropout_add = reader.boolean_or("fused_bias_dropout_add", t.kernels.fused_bias_dropout_add);
  if (reader.has("cross_entropy")) t.kernels.cross_entropy = reader.enum_choice<CrossEntropyKernel>("cross_entropy");
  t.kernels.fused_moe_permute = reader.boolean_or("fused_moe_permute", false);
  if (t.kernels.fused_moe_permute &&
      (!t.model.is_transformer() || !std::get<TransformerConfig>(t.model.config).experts.moe()))
    throw InputError(reader.source(), reader.pointer() + "/fused_moe_permute",
                     fmt::format("model \"{}\" has no experts to route tokens to; expected false or no "
                                 "fused_moe_permute",
                                 t.model.name));
  t.kernels.fp8 = reader.enum_choice_or("fp8", Fp8Recipe::None);
  if (t.kernels.fp8 != Fp8Recipe::None) {
    if (!t.model.is_transformer())
      throw InputError(reader.source(), reader.pointer() + "/fp8",
                       "FP8 GEMMs are modelled for a transformer's layers; expected \"none\" or no fp8 for a CNN");
    if (t.data_type != "bf16" && t.data_type != "fp16")
      throw InputError(reader.source(), reader.pointer() + "/fp8",
                       fmt::format("Transformer Engine's FP8 recipes keep the weights and the other ops in bf16 or "
                                   "fp16; expected data_type bf16 or fp16 with fp8 \"{}\", got \"{}\"",
                                   to_string(t.kernels.fp8), t.data_type));
  }
  t.kernels.fp8_param_gather = reader.boolean_or("fp8_param_gather", false);
  if (t.kernels.fp8_param_gather && t.kernels.fp8 == Fp8Recipe::None)
    throw InputError(reader.source(), reader.pointer() + "/fp8_param_gather",
                     "the weights are kept in fp8 only for FP8 GEMMs (Megatron-Core's --fp8-param-gather goes with "
                     "--fp8-format); expected false or no fp8_param_gather with fp8 \"none\"");
  if (auto modules = reader.optional_child("recompute_modules")) {
    if (t.recomputation != Recomputation::Selective)
      throw modules->error(fmt::format("the modules are what selective recomputation reruns; expected no "
                                       "recompute_modules with recomputation \"{}\", or recomputation \"selective\"",
                                       to_string(t.recomputation)));
    const TransformerConfig& config = std::get<TransformerConfig>(t.model.config);
    const std::size_t count = EnumNames<LayerModule>::entries.size() - 1;
    RecomputeModules set = RecomputeModules::of({});
    for (const JsonReader& item : modules->elements(1, count)) {
      const std::string name = item.as_string();
      if (name == "moe")
        throw item.error("recomputing the whole MoE layer (its all-to-alls included) is not modelled; expected "
                         "\"moe_act\" (the experts' activation) or \"shared_experts\"");
      const std::optional<LayerModule> module = enum_value<LayerModule>(name);
      if (!module || *module == LayerModule::None)
        throw item.error(fmt::format("expected one of core_attn, layernorm, mla_up_proj, mlp, moe_act, "
                                     "shared_experts, got \"{}\"",
                                     name));
      if (set.contains(*module)) throw item.error(fmt::format("\"{}\" is listed twice; expected each once", name));
      const bool moe = config.experts.moe();
      const char* missing = nullptr;
      if (*module == LayerModule::MoeActivation && !moe) missing = "no experts";
      if (*module == LayerModule::SharedExperts && (!moe || config.experts.shared == 0)) missing = "no shared experts";
      if (*module == LayerModule::MlaUpProjection && !config.mla.enabled()) missing = "no multi-head latent attention";
      if (*module == LayerModule::Mlp && moe && config.experts.first_dense == 0) missing = "no dense MLP layer";
      if (missing != nullptr)
        throw item.error(fmt::format("model \"{}\" has {}; expected a module it has", t.model.name, missing));
      set.add(*module);
    }
    t.kernels.recompute_modules = set;
  }
  if (reader.choice("recompute_policy") == "torchtitan_op") {
    const std::string pointer = reader.pointer() + "/recompute_policy";
    if (t.recomputation != Recomputation::Selective)
      throw InputError(reader.source(), pointer,
                       fmt::format("the policy says what selective recomputation reruns; expected \"modules\" or no "
                                   "recompute_policy with recomputation \"{}\", or recomputation \"selective\"",
                                   to_string(t.recomputation)));
    if (reader.has("recompute_modules"))
      throw InputError(reader.source(), pointer,
                       "torchtitan's per-op policy names no modules; expected no recompute_modules with it");
    const TransformerConfig& config = std::get<TransformerConfig>(t.model.config);
    if (config.experts.moe() || config.mla.enabled())
      throw InputError(reader.source(), pointer,
                       fmt::format("the per-op policy is modelled for a dense model with plain attention (model \"{}\" "
                                   "has {}); expected \"modules\"",
                                   t.model.name, config.experts.moe() ? "experts" : "latent attention"));
    if (t.kernels.attention != AttentionKernel::Flash && t.kernels.attention != AttentionKernel::FlashTriton)
      throw InputError(reader.source(), pointer,
                       fmt::format("the policy keeps the output of a fused attention kernel (SDPA); expected "
                                   "/workload/attention \"flash\" or \"flash_triton\" with it, got \"{}\"",
                                   to_string(t.kernels.attention)));
    t.kernels.recompute_modules = RecomputeModules::torchtitan_ops();
  }
  t.gradient_data_type = reader.has("gradient_data_type") ? reader.choice("gradient_data_type")
                                                          : stack_gradient_data_type(t.stack, t.data_type);
  if (t.gradient_data_type == t.data_type) t.gradient_data_type.clear();
  t.iterations = reader.integer("iterations");
  t.workspace = reader.quantity("workspace");
  t.data_loading = reader.quantity("data_loading");
  if (auto routing = reader.optional_child("expert_routing")) {
    if (!t.model.is_transformer() || !std::get<TransformerConfig>(t.model.config).experts.moe())
      throw routing->error("routing spreads tokens over experts; expected no expert_routing for a model without "
                           "experts");
    t.expert_routing.distribution = routing->enum_choice_or("distribution", ExpertDistribution::Uniform);
    if (routing->has("zipf_exponent") && t.expert_routing.distribution != ExpertDistribution::Zipf)
      throw InputError(routing->source(), routing->pointer() + "/zipf_exponent",
                       "only zipf routing has an exponent; expected no zipf_exponent with uniform routing");
    t.expert_routing.zipf_exponent = routing->number("zipf_exponent");
    if (routing->has("capacity_factor")) t.expert_routing.capacity_factor = routing->number("capacity_factor");
    const bool measured = t.expert_routing.distribution == ExpertDistribution::Measured;
    if (routing->has("counts") != measured)
      throw InputError(routing->source(), routing->pointer() + (measured ? "/distribution" : "/counts"),
                       measured
                           ? "measured routing reads each layer's tokens per expert from a file; expected "
                             "`counts` (a CSV file with columns layer, expert, tokens)"
                           : "only measured routing reads counts; expected no counts with uniform or zipf routing");
    if (measured) {
      const std::filesystem::path path = path_from_scenario(reader.source(), routing->string("counts"));
      try {
        t.expert_routing.measured = read_routing_counts(path, std::get<TransformerConfig>(t.model.config));
      } catch (const InputError& e) {
        // The file's own error (line, what) plus where the scenario names it.
        throw InputError(routing->source(), routing->pointer() + "/counts", e.what());
      }
    }
    routing->finish();
  }
  return t;
}

CollectiveBenchmark parse_collective_benchmark(JsonReader& reader, const ClusterSpec& cluster) {
  CollectiveBenchmark b;
  b.op = reader.enum_choice<CollectiveOp>("operation");
  b.bytes = static_cast<std::uint64_t>(reader.quantity("bytes"));
  b.iterations = reader.integer("iterations");
  b.root = static_cast<int>(reader.integer_or("root", 0, 0, cluster.gpu_count() - 1));
  if (b.op != CollectiveOp::Broadcast && reader.has("root"))
    throw InputError(reader.source(), reader.pointer() + "/root", "only a broadcast has a root");
  if (!cluster.gpu.peak_flops.contains(b.data_type)) b.data_type = cluster.gpu.peak_flops.begin()->first;
  return b;
}

void check_data_type(const JsonReader& reader, const ClusterSpec& cluster, const std::string& data_type) {
  if (cluster.gpu.peak_flops.contains(data_type)) return;
  std::vector<std::string> have;
  for (const auto& [type, _] : cluster.gpu.peak_flops) have.push_back(type);
  throw InputError(reader.source(), reader.pointer() + "/data_type",
                   fmt::format("GPU profile \"{}\" has no peak rate for {}; expected one of {}", cluster.gpu.name,
                               data_type, fmt::join(have, ", ")));
}

Workload parse_workload(JsonReader reader, const ClusterSpec& cluster, const std::filesystem::path& data_dir) {
  const std::string kind = reader.choice("kind");
  reader.use_kind(kind);
  Workload workload;
  if (kind == "data_job") {
    workload = parse_data_job(reader);
  } else if (kind == "model_training") {
    workload = parse_model_training(reader, data_dir);
  } else if (kind == "serving") {
    workload = parse_serving_workload(reader, cluster, data_dir);
  } else {
    workload = parse_collective_benchmark(reader, cluster);
  }
  reader.finish();
  if (kind != "collective" && kind != "serving") check_data_type(reader, cluster, workload_data_type(workload));
  if (const auto* training = std::get_if<ModelTraining>(&workload);
      training != nullptr && training->kernels.fp8 != Fp8Recipe::None && !cluster.gpu.peak_flops.contains("fp8"))
    throw InputError(reader.source(), reader.pointer() + "/fp8",
                     fmt::format("GPU profile \"{}\" has no peak rate for fp8; expected fp8 \"none\" on it, or a GPU "
                                 "with FP8 tensor cores",
                                 cluster.gpu.name));
  return workload;
}

CollectiveChoice parse_collective_choice(JsonReader& reader) {
  CollectiveChoice choice;
  choice.algorithm = reader.auto_or_enum_choice<CollectiveAlgorithm>("algorithm");
  choice.fidelity = reader.auto_or_enum_choice<Fidelity>("fidelity");
  if (reader.has("channels")) choice.channels = static_cast<int>(reader.integer("channels"));
  choice.protocol = reader.auto_or_enum_choice<CollectiveProtocol>("protocol");
  return choice;
}

/** `/expect`: an object whose keys are JSON pointers into report.json and whose values are a string, boolean or
 * number the figure must equal, or an object of `min`, `max`, `value` with `tolerance` (relative), or `equals`. */
std::vector<Expectation> parse_expectations(const JsonReader& reader) {
  if (!reader.value().is_object())
    throw reader.error("expected an object of report figures by JSON pointer ({\"/summary/makespan_s\": {\"max\": "
                       "40}}), got " +
                       reader.type_name());
  std::vector<Expectation> out;
  for (const auto& [key, bound] : reader.value().items()) {
    std::string escaped;
    for (char c : key) escaped += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
    const std::string at = reader.pointer() + "/" + escaped;
    Expectation e;
    e.figure = key;
    try {
      if (key.empty() || key[0] != '/') throw std::invalid_argument("no leading slash");
      (void)nlohmann::json::json_pointer(key);
    } catch (const std::exception&) {
      throw InputError(reader.source(), at,
                       fmt::format("expected a JSON pointer into report.json as the key (\"/summary/mfu\"), got "
                                   "\"{}\"",
                                   key));
    }
    if (bound.is_string() || bound.is_boolean()) {
      e.equals = bound;
    } else if (bound.is_number()) {
      e.value = bound.get<double>();
    } else if (bound.is_object()) {
      for (const auto& [name, v] : bound.items()) {
        const std::string here = at + "/" + name;
        if (name == "equals") {
          if (!v.is_primitive() || v.is_null())
            throw InputError(reader.source(), here, "expected a string, number or boolean");
          e.equals = v;
          continue;
        }
        if (name != "min" && name != "max" && name != "value" && name != "tolerance")
          throw InputError(reader.source(), here,
                           fmt::format("unknown key \"{}\"; expected min, max, value, tolerance or equals", name));
        if (!v.is_number() || !std::isfinite(v.get<double>()))
          throw InputError(reader.source(), here, "expected a finite number, got " + std::string(v.type_name()));
        const double x = v.get<double>();
        if (name == "min") e.min = x;
        if (name == "max") e.max = x;
        if (name == "value") e.value = x;
        if (name == "tolerance") {
          if (x < 0.0 || x > 1e6) throw InputError(reader.source(), here, "expected a relative tolerance >= 0");
          e.tolerance = x;
        }
      }
      if (!e.equals && !e.min && !e.max && !e.value)
        throw InputError(reader.source(), at, "expected at least one of min, max, value or equals");
      if (e.equals && (e.min || e.max || e.value))
        throw InputError(reader.source(), at, "expected either equals or bounds (min, max, value), not both");
      if (bound.contains("tolerance") && !e.value)
        throw InputError(reader.source(), at + "/tolerance", "a tolerance needs a value to be relative to");
      if (e.min && e.max && *e.min > *e.max)
        throw InputError(reader.source(), at + "/min", fmt::format("expected min <= max ({})", *e.max));
    } else {
      throw InputError(reader.source(), at,
                       "expected a value to equal (string, number, boolean) or an object of min, max, value, "
                       "tolerance, equals; got " +
                           std::string(bound.type_name()));
    }
    out.push_back(std::move(e));
  }
  return out;
}

/** The algorithm of `choice` against the operation and the cluster: NVLS needs a switch with NVLink SHARP, and a
 * group inside one node (`whole_cluster`: the group is every GPU of the cluster; the model-parallel planner checks its
 * own groups). */
void check_algorithm(const JsonReader& reader, CollectiveOp op, const CollectiveChoice& choice,
                     const ClusterSpec& cluster, bool whole_cluster) {
  if (choice.protocol == CollectiveProtocol::LL128 && !cluster.intra_node.nvlink)
    throw InputError(reader.source(), reader.pointer() + "/protocol",
                     "ll128 runs only over NVLink inside the node (NCCL enables it only there; the intra-node link's "
                     "transport is pcie); expected auto, simple or ll");
  if (choice.protocol && choice.protocol != CollectiveProtocol::Simple &&
      (op == CollectiveOp::AllToAll || (choice.algorithm && (*choice.algorithm == CollectiveAlgorithm::Nvls ||
                                                             *choice.algorithm == CollectiveAlgorithm::NvlsTree ||
                                                             *choice.algorithm == CollectiveAlgorithm::Direct))))
    throw InputError(reader.source(), reader.pointer() + "/protocol",
                     fmt::format("{} runs with the simple protocol only (NVLS and all-to-all); expected auto or simple",
                                 choice.algorithm ? to_string(*choice.algorithm) : to_string(op)));
  if (!choice.algorithm) return;
  const CollectiveAlgorithm a = *choice.algorithm;
  if (!is_supported(op, a)) // the engine's own list (a broadcast has no tree algorithm)
    throw InputError(reader.source(), reader.pointer() + "/algorithm",
                     fmt::format("{} cannot run {}; expected one of: {}", to_string(a), to_string(op),
                                 op == CollectiveOp::AllReduce  ? "auto, ring, tree, hierarchical, nvls, nvls_tree"
                                 : op == CollectiveOp::AllToAll ? "auto, direct, two_hop"
                                                                : "auto, ring"));
  if (a == CollectiveAlgorithm::TwoHop && whole_cluster && cluster.nodes < 2)
    throw InputError(reader.source(), reader.pointer() + "/algorithm",
                     "two_hop sends between nodes over the network and forwards inside each node over NVLink, but the "
                     "group is one node; expected direct or auto");
  if (a != CollectiveAlgorithm::Nvls && a != CollectiveAlgorithm::NvlsTree) return;
  if (cluster.intra_node.nvls_efficiency <= 0.0)
    throw InputError(reader.source(), reader.pointer() + "/algorithm",
                     fmt::format("{} needs an NVSwitch with NVLink SHARP (Hopper or later: an intra-node link profile "
                                 "with `nvls`, such as nvlink4, or /cluster/intra_node_link/nvls_efficiency); expected "
                                 "ring, tree, hierarchical or auto",
                                 to_string(a)));
  if (!whole_cluster) return;
  if (a == CollectiveAlgorithm::Nvls && cluster.nodes > 1)
    throw InputError(reader.source(), reader.pointer() + "/algorithm",
                     fmt::format("nvls reduces in one node's NVSwitch, but the group spans {} nodes; expected "
                                 "nvls_tree (NVLS in each node, a tree between them), ring, tree, hierarchical or auto",
                                 cluster.nodes));
  if (a == CollectiveAlgorithm::NvlsTree && (cluster.nodes < 2 || cluster.gpus_per_node < 2))
    throw InputError(reader.source(), reader.pointer() + "/algorithm",
                     fmt::format("nvls_tree runs NVLS inside each node and a tree between nodes, but the group is {} "
                                 "node(s) of {} GPU(s); expected {}",
                                 cluster.nodes, cluster.gpus_per_node,
                                 cluster.nodes < 2 ? "nvls, ring, tree or auto" : "ring, tree, hierarchical or auto"));
}

std::vector<double> parse_shares(JsonReader reader, int partitions, std::string& kind, const ClusterSpec& cluster) {
  const auto k = static_cast<std::size_t>(partitions);
  if (reader.value().is_string()) {
    const std::string text = reader.as_string();
    if (text == "by_speed") {
      // Shares in proportion to the nominal speed of the node each partition runs on (partition p on GPU p mod G).
      kind = "by_speed";
      std::vector<double> shares(k);
      const auto gpus = static_cast<std::size_t>(cluster.gpu_count());
      for (std::size_t p = 0; p < k; ++p)
        shares[p] = cluster.node_speed_factor[(p % gpus) / static_cast<std::size_t>(cluster.gpus_per_node)];
      const double sum = std::accumulate(shares.begin(), shares.end(), 0.0);
      for (double& share : shares) share /= sum;
      return shares;
    }
    if (text != "balanced")
      throw reader.error(fmt::format("expected \"balanced\", \"by_speed\", an array of {} shares or "
                                     "{{\"skewed\": LARGEST_SHARE}}, got \"{}\"",
                                     k, text));
    kind = "balanced";
    return std::vector<double>(k, 1.0 / static_cast<double>(k));
  }
  if (reader.value().is_array()) {
    kind = "explicit";
    std::vector<double> shares;
    for (const JsonReader& item : reader.elements(k, k)) shares.push_back(item.as_number());
    const double sum = std::accumulate(shares.begin(), shares.end(), 0.0);
    if (std::abs(sum - 1.0) > kShareTolerance)
      throw reader.error(
          fmt::format("expected shares summing to 1 (within {:g}), got a sum of {:.9g}", kShareTolerance, sum));
    return shares;
  }
  if (reader.value().is_object()) {
    kind = "skewed";
    const double min_share = 1.0 / static_cast<double>(k);
    const double largest = reader.number("skewed", Bounds::closed(min_share, 1.0));
    if (k == 1 && largest != 1.0)
      throw InputError(reader.source(), reader.pointer() + "/skewed", "with one partition its share must be 1");
    const auto at = static_cast<std::size_t>(reader.integer_or("largest_partition", 0, 0, partitions - 1));
    reader.finish();
    std::vector<double> shares(k, k > 1 ? (1.0 - largest) / static_cast<double>(k - 1) : 0.0);
    shares[at] = largest;
    return shares;
  }
  throw reader.error(fmt::format(
      "expected \"balanced\", an array of {} shares or {{\"skewed\": LARGEST_SHARE}}, got {}", k, reader.type_name()));
}

Balancing parse_balancing(JsonReader& reader) {
  Balancing b;
  b.policy = reader.enum_choice<BalancingPolicy>("policy");
  b.chunk_samples = static_cast<std::uint64_t>(reader.integer("chunk_samples"));
  b.dispatch_overhead = reader.quantity("dispatch_overhead");
  b.sample_bytes = reader.quantity("sample_bytes");
  b.request_bytes = reader.quantity("request_bytes");
  reader.finish();
  return b;
}

/** `/strategy/gradient_sync`: "none", "ring_allreduce" (the step-by-step ring), "all_reduce" (automatic choices) or
 * an object {algorithm, fidelity, bucket_size, overlap}. */
void parse_gradient_sync(JsonReader& reader, const Workload& workload, const ClusterSpec& cluster, bool whole_cluster,
                         DataParallel& dp) {
  const auto* job = std::get_if<DataJob>(&workload);
  const bool has_gradients = job ? job->gradient_bytes > 0 : true;
  const std::string pointer = reader.pointer() + "/gradient_sync";
  const auto* training = std::get_if<ModelTraining>(&workload);
  dp.gradient_sync.one_bucket_after_first_stage = training && training->stack == TrainingStack::MegatronCore2024;
  dp.gradient_sync.comm_sms = training != nullptr && cluster.gpu.sm_count ? kNcclStreamSms : 0;
  if (!reader.has("gradient_sync")) {
    dp.sync = has_gradients ? GradientSync::AllReduce : GradientSync::None;
    // A data job keeps the exact step-by-step ring it always had; a model picks its algorithm and fidelity.
    if (job)
      dp.gradient_sync.collective = {CollectiveAlgorithm::Ring, Fidelity::Steps, std::nullopt,
                                     CollectiveProtocol::Simple};
    return;
  }
  JsonReader sync = reader.child("gradient_sync");
  if (sync.value().is_string()) {
    const std::string text = sync.as_string();
    if (text == "none") {
      dp.sync = GradientSync::None;
      return;
    }
    if (text == "ring_allreduce")
      dp.gradient_sync.collective = {CollectiveAlgorithm::Ring, Fidelity::Steps, std::nullopt,
                                     CollectiveProtocol::Simple};
    else if (text != "all_reduce")
      throw sync.error(fmt::format("expected \"none\", \"ring_allreduce\", \"all_reduce\" or an object "
                                   "{{\"algorithm\", \"fidelity\", \"bucket_size\", \"overlap\"}}, got \"{}\"",
                                   text));
  } else if (sync.value().is_object()) {
    dp.gradient_sync.collective = parse_collective_choice(sync);
    check_algorithm(sync, CollectiveOp::AllReduce, dp.gradient_sync.collective, cluster, whole_cluster);
    for (const char* key : {"bucket_size", "overlap", "overlap_param_gather", "one_bucket_after_first_stage"})
      if (job && sync.has(key))
        throw InputError(sync.source(), pointer + "/" + key,
                         "gradient buckets and overlap need a model's backward pass; expected them only with "
                         "/workload/kind \"model_training\"");
    dp.gradient_sync.bucket_bytes = sync.quantity_or("bucket_size", dp.gradient_sync.bucket_bytes);
    dp.gradient_sync.overlap = sync.boolean("overlap");
    dp.gradient_sync.overlap_param_gather = sync.boolean("overlap_param_gather");
    dp.gradient_sync.one_bucket_after_first_stage =
        sync.boolean_or("one_bucket_after_first_stage", dp.gradient_sync.one_bucket_after_first_stage);
    if (sync.has("comm_sms")) {
      if (job)
        throw InputError(sync.source(), pointer + "/comm_sms",
                         "the communication stream overlaps a model's backward pass; expected comm_sms only with "
                         "/workload/kind \"model_training\"");
      if (!cluster.gpu.sm_count)
        throw InputError(sync.source(), pointer + "/comm_sms",
                         fmt::format("GPU profile \"{}\" gives no sm_count to take them from; expected no comm_sms, "
                                     "or a profile with sm_count",
                                     cluster.gpu.name));
      dp.gradient_sync.comm_sms =
          static_cast<int>(sync.integer("comm_sms", 0, static_cast<std::int64_t>(cluster.gpu.sm_count->value) - 1));
    }
    sync.finish();
  } else {
    throw sync.error("expected a string or an object, got " + sync.type_name());
  }
  dp.sync = GradientSync::AllReduce;
  if (!has_gradients)
    throw InputError(sync.source(), pointer,
                     "an all-reduce needs /workload/gradient_bytes > 0; expected \"none\" for a job without gradients");
}

ParallelAxis parse_axis(const JsonReader& item) {
  const std::string name = item.as_string();
  if (const auto axis = enum_value<ParallelAxis>(name)) return *axis;
  throw item.error(fmt::format("expected \"tensor\", \"data\" or \"pipeline\", got \"{}\"", name));
}

/** `/strategy` of kind "model_parallel": degrees, placement, schedule, sharding; every combination the planner cannot
 * honour is refused here with the key that causes it. */
ModelParallel parse_model_parallel(JsonReader& reader, const ClusterSpec& cluster, const Workload& workload) {
  const std::string at = reader.pointer();
  const auto* training = std::get_if<ModelTraining>(&workload);
  if (training == nullptr || !training->model.is_transformer())
    throw InputError(reader.source(), at + "/kind",
                     "model parallelism splits transformer layers; expected /workload/kind \"model_training\" with a "
                     "transformer model");
  ModelParallel mp;
  mp.tensor = static_cast<int>(reader.integer("tensor"));
  mp.pipeline = static_cast<int>(reader.integer("pipeline"));
  mp.context = static_cast<int>(reader.integer("context"));
  // Without `data`, the replicas fill the cluster: GPUs / (tensor x pipeline x context), so that a sweep over tensor
  // and pipeline needs no third axis.
  const std::int64_t split = static_cast<std::int64_t>(mp.tensor) * mp.pipeline * mp.context;
  const std::string product = mp.context > 1 ? "tensor x pipeline x context" : "tensor x pipeline";
  const std::string factors = mp.context > 1 ? fmt::format("{} x {} x {}", mp.tensor, mp.pipeline, mp.context)
                                             : fmt::format("{} x {}", mp.tensor, mp.pipeline);
  if (!reader.has("data") && cluster.gpu_count() % split != 0)
    throw InputError(reader.source(), at,
                     fmt::format("expected {} to divide the GPU count ({}) so that data can be derived, got {} = {}; "
                                 "or give data",
                                 product, cluster.gpu_count(), factors, split));
  mp.data = static_cast<int>(reader.has("data") ? reader.integer("data") : cluster.gpu_count() / split);
  if (static_cast<std::int64_t>(mp.data) * split != cluster.gpu_count())
    throw InputError(reader.source(), at,
                     fmt::format("expected data x {} = the GPU count ({}), got {} x {} = {}", product,
                                 cluster.gpu_count(), mp.data, factors, static_cast<std::int64_t>(mp.data) * split));
  const TransformerModel model = training->transformer();
  const TransformerConfig& config = model.config();
  if (config.heads % mp.tensor != 0 || config.kv_heads % mp.tensor != 0)
    throw InputError(reader.source(), at + "/tensor",
                     fmt::format("expected a degree that divides the heads ({}) and key/value heads ({}), got {}",
                                 config.heads, config.kv_heads, mp.tensor));
  if (config.ffn % mp.tensor != 0)
    throw InputError(reader.source(), at + "/tensor",
                     fmt::format("expected a degree that divides the MLP's ffn_size ({}): each rank keeps ffn_size / "
                                 "tensor of its columns, got {}",
                                 config.ffn, mp.tensor));
  if (auto placement = reader.optional_child("placement")) {
    if (placement->value().is_string()) {
      if (placement->as_string() != "tensor_first")
        throw placement->error(fmt::format("expected \"tensor_first\" or an array of the three axes, fastest first, "
                                           "got \"{}\"",
                                           placement->as_string()));
    } else {
      const std::vector<JsonReader> items = placement->elements(3, 3);
      for (std::size_t i = 0; i < 3; ++i) {
        mp.placement[i] = parse_axis(items[i]);
        for (std::size_t j = 0; j < i; ++j)
          if (mp.placement[j] == mp.placement[i])
            throw items[i].error("expected each of tensor, data and pipeline once");
      }
    }
  }
  mp.schedule = reader.enum_choice_or("schedule", PipelineSchedule::OneFOneB);
  const bool interleaved = mp.schedule == PipelineSchedule::Interleaved;
  mp.virtual_stages = static_cast<int>(reader.integer_or("virtual_stages", interleaved ? 2 : 1));
  if (interleaved != (mp.virtual_stages > 1))
    throw InputError(reader.source(), at + "/virtual_stages",
                     interleaved ? "the interleaved schedule needs at least 2 virtual stages per GPU"
                                 : "virtual stages need /strategy/schedule \"interleaved\"; expected 1");
  if (interleaved && mp.pipeline < 2)
    throw InputError(reader.source(), at + "/schedule", "the interleaved schedule needs /strategy/pipeline >= 2");
  if (reader.has("microbatch_group")) {
    if (!interleaved)
      throw InputError(reader.source(), at + "/microbatch_group",
                       "micro-batch groups order the interleaved schedule; expected it only with /strategy/schedule "
                       "\"interleaved\"");
    mp.microbatch_group = static_cast<int>(reader.integer("microbatch_group", 1, 1 << 20));
    if (mp.microbatch_group < mp.pipeline)
      throw InputError(
          reader.source(), at + "/microbatch_group",
          fmt::format("expected at least the pipeline degree ({}), got {}", mp.pipeline, mp.microbatch_group));
  }
  const std::int64_t chunks = static_cast<std::int64_t>(mp.pipeline) * mp.virtual_stages;
  // With stage_layers the first and the last virtual stage may hold no layer: only the embedding, only the output
  // projection and the loss (Llama 3's pipeline: "the first model chunk on the first stage has only the embedding"),
  // so up to two stages more than layers.
  const bool given = reader.has("stage_layers") && mp.virtual_stages > 1;
  if (chunks > config.layers + (given ? 2 : 0))
    throw InputError(reader.source(), at + "/pipeline",
                     fmt::format("expected at most one stage per layer{}: pipeline x virtual_stages = {} > {} layers",
                                 given ? " (and one for the embedding and one for the loss)" : "", chunks,
                                 config.layers));
  if (auto layers = reader.optional_child("stage_layers")) {
    std::int64_t sum = 0;
    const std::vector<JsonReader> items =
        layers->elements(static_cast<std::size_t>(chunks), static_cast<std::size_t>(chunks));
    for (std::size_t i = 0; i < items.size(); ++i) {
      // Interleaved only: every GPU then keeps layers in its other chunks.
      const bool may_be_empty = (i == 0 || i + 1 == items.size()) && mp.virtual_stages > 1;
      if (!may_be_empty && items[i].value().is_number() && items[i].value() == 0)
        throw items[i].error("expected at least 1 layer: only the first virtual stage (the embedding alone) and the "
                             "last (the output projection and the loss alone) of an interleaved pipeline may hold "
                             "none");
      mp.stage_layers.push_back(static_cast<int>(items[i].as_integer(may_be_empty ? 0 : 1, config.layers)));
      sum += mp.stage_layers.back();
    }
    if (sum != config.layers)
      throw layers->error(
          fmt::format("expected layers per stage summing to the model's {} layers, got {}", config.layers, sum));
  } else if (config.layers % chunks != 0) {
    throw InputError(reader.source(), at + "/pipeline",
                     fmt::format("an even split needs pipeline x virtual_stages ({}) to divide the {} layers; give "
                                 "/strategy/stage_layers for an uneven one",
                                 chunks, config.layers));
  }
  mp.sequence_parallel = reader.boolean("sequence_parallel");
  if (mp.sequence_parallel && mp.tensor < 2)
    throw InputError(reader.source(), at + "/sequence_parallel", "sequence parallelism needs /strategy/tensor >= 2");
  mp.expert = static_cast<int>(reader.integer("expert"));
  if (config.experts.moe()) {
    if (config.experts.count % mp.expert != 0 || mp.data_ranks() % mp.expert != 0)
      throw InputError(reader.source(), at + "/expert",
                       fmt::format("expected a degree that divides the {} experts and the data-parallel degree{} ({}), "
                                   "got {}",
                                   config.experts.count, mp.context > 1 ? " x context" : "", mp.data_ranks(),
                                   mp.expert));
    if (mp.tensor > 1 && !mp.sequence_parallel)
      throw InputError(reader.source(), at + "/sequence_parallel",
                       "a mixture of experts with tensor parallelism routes each rank's sequence slice (Megatron-Core "
                       "requires sequence parallelism with MoE and tensor parallelism); expected true");
  } else if (mp.expert > 1) {
    throw InputError(reader.source(), at + "/expert",
                     fmt::format("model \"{}\" has no experts; expected 1", training->model.name));
  }
  mp.expert_tensor = static_cast<int>(reader.integer("expert_tensor"));
  if (mp.expert_tensor > 1) {
    if (!config.experts.moe())
      throw InputError(reader.source(), at + "/expert_tensor",
                       fmt::format("model \"{}\" has no experts; expected 1", training->model.name));
    if (mp.expert_tensor != mp.tensor)
      throw InputError(reader.source(), at + "/expert_tensor",
                       fmt::format("the experts split over the tensor group: expected 1 or the tensor degree ({}), "
                                   "got {}",
                                   mp.tensor, mp.expert_tensor));
    if (config.ffn % mp.expert_tensor != 0)
      throw InputError(reader.source(), at + "/expert_tensor",
                       fmt::format("expected a degree that divides the experts' ffn_size ({}), got {}", config.ffn,
                                   mp.expert_tensor));
  }
  mp.expert_dispatch = reader.enum_choice_or("expert_dispatch", ExpertDispatch::Direct);
  mp.context_comm = reader.enum_choice_or("context_comm", ContextComm::P2P);
  if (mp.context > 1) {
    if (config.window.enabled())
      throw InputError(reader.source(), at + "/context",
                       fmt::format("context parallelism of a model with a sliding attention window (\"{}\") is not "
                                   "modelled; expected 1",
                                   training->model.name));
    // 2C chunks of the sequence, two per rank (i and 2C-1-i), so that every rank's causal attention work is even.
    if (config.sequence_length % (2 * mp.context) != 0)
      throw InputError(reader.source(), at + "/context",
                       fmt::format("each sequence is cut into 2 x context chunks, two per rank (load-balanced causal "
                                   "attention); expected a degree with 2 x context dividing the sequence length ({}), "
                                   "got {}",
                                   config.sequence_length, mp.context));
    if (mp.context_comm == ContextComm::AllToAll &&
        ((config.heads / mp.tensor) % mp.context != 0 || (config.kv_heads / mp.tensor) % mp.context != 0))
      throw InputError(reader.source(), at + "/context_comm",
                       fmt::format("all_to_all (Ulysses) gives each rank of the context group 1/C of the tensor "
                                   "rank's heads: expected a context degree ({}) dividing its {} query heads and {} "
                                   "key/value heads, or \"p2p\" or \"all_gather\"",
                                   mp.context, config.heads / mp.tensor, config.kv_heads / mp.tensor));
  }
  mp.tp_comm_overlap = reader.boolean("tp_comm_overlap");
  if (mp.tp_comm_overlap) {
    const std::string pointer = at + "/tp_comm_overlap";
    if (!mp.sequence_parallel)
      throw InputError(reader.source(), pointer,
                       "the overlap splits the sequence-parallel all-gathers and reduce-scatters (Megatron-Core "
                       "requires --sequence-parallel with --tp-comm-overlap); expected false, or "
                       "/strategy/sequence_parallel true");
    if (config.experts.moe() || config.mla.enabled())
      throw InputError(reader.source(), pointer,
                       "the overlap of a mixture of experts' layers or of multi-head latent attention is not "
                       "modelled; expected false");
    if (!cluster.gpu.sm_count)
      throw InputError(
          reader.source(), pointer,
          fmt::format("the pipelined and bulk overlaps hold {} SMs of the GPU for their transfers, and GPU "
                      "profile \"{}\" gives no sm_count; expected false, or a profile with sm_count",
                      kTpOverlapCommSms, cluster.gpu.name));
    if (training->recomputation == Recomputation::Selective &&
        training->kernels.recompute_modules.contains(LayerModule::Mlp))
      throw InputError(reader.source(), pointer,
                       "rerunning the MLP module (recompute_modules \"mlp\") beside the overlapped GEMMs is not "
                       "modelled; expected false, or no \"mlp\" in /workload/recompute_modules");
  }
  {
    // Megatron-LM's column-parallel layers run their backward collectives asynchronously since 2022 (the all-reduce
    // since February, sequence parallelism with its gather and reduce-scatter since May), Megatron-Core and
    // Transformer Engine's linear modules likewise: the 2021 stack's runs without sequence parallelism predate it.
    const bool mla = config.mla.enabled(); // a mixture of experts' attention blocks and first dense layers take it
    const bool megatron = training->stack == TrainingStack::MegatronCore2024 ||
                          (training->stack == TrainingStack::MegatronLm2021 && mp.sequence_parallel);
    const bool given = reader.has("tp_async_backward");
    mp.tp_async_backward =
        reader.boolean_or("tp_async_backward", megatron && !mla && mp.tensor > 1 && !mp.tp_comm_overlap);
    const std::string pointer = at + "/tp_async_backward";
    if (given && mp.tp_async_backward) {
      if (mp.tensor == 1)
        throw InputError(reader.source(), pointer,
                         "there is no tensor-parallel collective to run asynchronously; expected false, or "
                         "/strategy/tensor >= 2");
      if (mp.tp_comm_overlap)
        throw InputError(reader.source(), pointer,
                         "with tp_comm_overlap Transformer Engine's userbuffers run these collectives; expected false");
      if (mla)
        throw InputError(reader.source(), pointer,
                         "the asynchronous backward of multi-head latent attention is not modelled; expected false");
    }
  }
  if ((mp.tensor > 1 || mp.context > 1) && training->kernels.recompute_modules.torchtitan_op)
    throw InputError(reader.source(), at + (mp.tensor > 1 ? "/tensor" : "/context"),
                     "torchtitan's per-op policy reruns collectives it does not save (the all-gathers of tensor and "
                     "context parallelism), which is not modelled; expected 1 with /workload/recompute_policy "
                     "\"torchtitan_op\"");
  if (mp.tensor > 1 && training->recomputation == Recomputation::Selective &&
      training->kernels.recompute_modules.contains(LayerModule::SharedExperts))
    throw InputError(reader.source(), at + "/tensor",
                     "rerunning tensor-parallel shared experts (recompute_modules \"shared_experts\") is not "
                     "modelled; expected 1, or no \"shared_experts\" in /workload/recompute_modules");
  if (auto zero = reader.optional_child("zero")) {
    if (zero->value().is_string()) {
      if (zero->as_string() != "fsdp")
        throw zero->error(fmt::format("expected 0, 1, 2, 3 or \"fsdp\", got \"{}\"", zero->as_string()));
      mp.zero = 3;
    } else {
      mp.zero = static_cast<int>(zero->as_integer(0, 3));
    }
    if (mp.zero >= 3 && mp.pipeline > 1)
      throw zero->error("ZeRO-3 gathers a stage's parameters for every micro-batch's forward and backward pass "
                        "(2m all-gathers per iteration); expected 0, 1 or 2 with /strategy/pipeline > 1");
    if (mp.zero >= 3 && config.experts.moe())
      throw zero->error("ZeRO-3 / FSDP of a mixture of experts is not modelled; expected 0, 1 or 2");
  }
  if (auto tensor = reader.optional_child("tensor_collectives")) {
    mp.tensor_collectives = parse_collective_choice(*tensor);
    check_algorithm(*tensor, CollectiveOp::AllReduce, mp.tensor_collectives, cluster, false);
    if (mp.sequence_parallel && mp.tensor_collectives.algorithm &&
        *mp.tensor_collectives.algorithm != CollectiveAlgorithm::Ring)
      throw InputError(tensor->source(), tensor->pointer() + "/algorithm",
                       "sequence parallelism runs reduce-scatters and all-gathers: expected \"ring\" or \"auto\"");
    mp.tensor_per_layer = tensor->choice("granularity") == "layer";
    tensor->finish();
  }
  DataParallel sync;
  parse_gradient_sync(reader, workload, cluster, false, sync);
  mp.sync = sync.sync;
  mp.gradient_sync = sync.gradient_sync;
  if (mp.zero > 0 && mp.gradient_sync.collective.algorithm &&
      *mp.gradient_sync.collective.algorithm != CollectiveAlgorithm::Ring)
    throw InputError(reader.source(), at + "/gradient_sync/algorithm",
                     "ZeRO runs reduce-scatters and all-gathers: expected \"ring\" or \"auto\"");
  if (mp.gradient_sync.overlap_param_gather && mp.zero != 1 && mp.zero != 2)
    throw InputError(reader.source(), at + "/gradient_sync/overlap_param_gather",
                     fmt::format("only ZeRO-1 and ZeRO-2 gather the updated parameters after the step; expected "
                                 "false with zero {}",
                                 mp.zero));
  const std::int64_t per_step = training->micro_batch * mp.data;
  if (training->global_batch % per_step != 0)
    throw InputError(reader.source(), "/workload/global_batch",
                     fmt::format("expected a multiple of micro_batch x data = {} x {} = {}, got {}",
                                 training->micro_batch, mp.data, per_step, training->global_batch));
  const std::int64_t micro_batches = training->global_batch / per_step;
  if (interleaved && mp.microbatch_group == 0 && micro_batches % mp.pipeline != 0)
    throw InputError(reader.source(), "/workload/global_batch",
                     fmt::format("the interleaved schedule needs micro-batches per replica ({}) divisible by the "
                                 "pipeline degree ({}), or a /strategy/microbatch_group that leaves a last group of "
                                 "at least the pipeline degree",
                                 micro_batches, mp.pipeline));
  if (interleaved && mp.microbatch_group > 0) {
    // Megatron-Core's checks (forward_backward_pipelining_with_interleaving): a group no larger than the micro-batches,
    // and a last group of 0 or at least the pipeline degree (a shorter one would stall the pipeline).
    if (mp.microbatch_group > micro_batches)
      throw InputError(reader.source(), at + "/microbatch_group",
                       fmt::format("expected at most the micro-batches per replica ({}), got {}", micro_batches,
                                   mp.microbatch_group));
    const std::int64_t rest = micro_batches % mp.microbatch_group;
    if (rest > 0 && rest < mp.pipeline)
      throw InputError(reader.source(), at + "/microbatch_group",
                       fmt::format("the {} micro-batches per replica leave a last group of {} (they divided by {}), "
                                   "fewer than the pipeline degree ({}); expected a group size that divides them or "
                                   "leaves at least {}",
                                   micro_batches, rest, mp.microbatch_group, mp.pipeline, mp.pipeline));
  }
  reader.finish();
  return mp;
}

Strategy parse_strategy(JsonReader reader, const ClusterSpec& cluster, const Workload& workload) {
  const std::string kind = reader.choice("kind");
  reader.use_kind(kind);
  const bool is_collective = std::holds_alternative<CollectiveBenchmark>(workload);
  if (is_collective != (kind == "collective"))
    throw InputError(reader.source(), reader.pointer() + "/kind",
                     is_collective ? "a collective workload runs with strategy kind \"collective\""
                                   : "strategy kind \"collective\" needs /workload/kind \"collective\"");
  const bool is_serving = std::holds_alternative<ServingWorkload>(workload);
  if (is_serving != (kind == "serving"))
    throw InputError(reader.source(), reader.pointer() + "/kind",
                     is_serving ? "a serving workload runs with strategy kind \"serving\""
                                : "strategy kind \"serving\" needs /workload/kind \"serving\"");
  if (is_serving) {
    reader.finish();
    return ServingStrategy{};
  }
  if (kind == "parameter_server") {
    // A collective or serving workload was refused above; check_parameter_server takes the rest.
    ParameterServer ps = parse_parameter_server(reader, cluster);
    check_parameter_server(ps, cluster, workload, reader.source());
    return ps;
  }
  if (is_collective) {
    CollectiveStrategy strategy{parse_collective_choice(reader)};
    check_algorithm(reader, std::get<CollectiveBenchmark>(workload).op, strategy.choice, cluster, true);
    reader.finish();
    return strategy;
  }
  if (kind == "model_parallel") return parse_model_parallel(reader, cluster, workload);
  DataParallel dp;
  dp.partitions = static_cast<int>(reader.integer_or("partitions", cluster.gpu_count()));
  if (dp.partitions < cluster.gpu_count())
    throw InputError(
        reader.source(), reader.pointer() + "/partitions",
        fmt::format("expected at least one partition per GPU ({} GPUs), got {}", cluster.gpu_count(), dp.partitions));
  if (reader.has("shares"))
    dp.shares = parse_shares(reader.child("shares"), dp.partitions, dp.shares_kind, cluster);
  else
    dp.shares.assign(static_cast<std::size_t>(dp.partitions), 1.0 / dp.partitions);

  parse_gradient_sync(reader, workload, cluster, true, dp);
  if (dp.gradient_sync.overlap_param_gather)
    throw InputError(reader.source(), reader.pointer() + "/gradient_sync/overlap_param_gather",
                     "plain data parallelism all-reduces the gradients and gathers no parameters; expected false "
                     "(strategy model_parallel with zero 1 or 2 has it)");
  if (const auto* training = std::get_if<ModelTraining>(&workload)) {
    for (const char* key : {"balancing", "coordination", "class_split"})
      if (reader.has(key))
        throw InputError(reader.source(), reader.pointer() + "/" + key,
                         "applies to data jobs; expected no such key with /workload/kind \"model_training\"");
    if (dp.partitions != cluster.gpu_count() || dp.shares_kind != "balanced")
      throw InputError(reader.source(), reader.pointer() + (reader.has("shares") ? "/shares" : "/partitions"),
                       "model training runs one replica per GPU with equal shares of the batch; expected no "
                       "partitions or shares keys");
    const std::int64_t per_step = training->micro_batch * cluster.gpu_count();
    if (training->global_batch % per_step != 0)
      throw InputError(reader.source(), "/workload/global_batch",
                       fmt::format("expected a multiple of micro_batch x data-parallel replicas = {} x {} = {}, got {}",
                                   training->micro_batch, cluster.gpu_count(), per_step, training->global_batch));
    reader.finish();
    return dp;
  }
  const DataJob& job = std::get<DataJob>(workload);
  if (auto split = reader.optional_child("class_split")) {
    ClassSplitSpec spec;
    spec.method = split->enum_choice<SplitMethod>("method");
    spec.starved_threshold = static_cast<std::uint64_t>(split->integer("starved_threshold"));
    spec.oversample_target = static_cast<std::uint64_t>(split->integer("oversample_target"));
    spec.minority_class = split->string("minority_class");
    spec.scan_per_sample = split->quantity("scan_per_sample");
    spec.replicate_per_sample = split->quantity("replicate_per_sample");
    if (!job.labels) throw split->error("class-aware splitting needs /workload/labels");
    if (!spec.minority_class.empty() && !job.labels->find_class(spec.minority_class))
      throw InputError(split->source(), split->pointer() + "/minority_class",
                       fmt::format("no class \"{}\" in the labels; expected one of {}", spec.minority_class,
                                   fmt::join(job.labels->class_names, ", ")));
    if (dp.shares_kind != "balanced")
      throw InputError(reader.source(), reader.pointer() + "/shares",
                       "a class-aware split sets the partition sizes; expected \"balanced\" shares");
    if (static_cast<std::uint64_t>(dp.partitions) > job.labels->size())
      throw InputError(reader.source(), reader.pointer() + "/partitions",
                       fmt::format("a class-aware split of {} samples needs at most that many partitions, got {}",
                                   job.labels->size(), dp.partitions));
    split->finish();
    dp.class_split = spec;
  }
  if (auto coordination = reader.optional_child("coordination")) {
    Coordination c;
    c.per_partition = coordination->quantity("per_partition");
    c.data_bytes = coordination->quantity("data_bytes");
    c.result_bytes = coordination->quantity("result_bytes");
    c.boundary_bytes = coordination->quantity("boundary_bytes");
    coordination->finish();
    dp.coordination = c;
  }
  if ((dp.coordination || dp.class_split || job.serial_fraction > 0) && cluster.network.nic.bandwidth <= 0)
    throw InputError(reader.source(), "/cluster/network",
                     "a coordinated run (serial_fraction or /strategy/coordination) needs the network that joins the "
                     "coordinator to the nodes");
  if (auto balancing = reader.optional_child("balancing")) {
    if (dp.coordination || dp.class_split || job.serial_fraction > 0)
      throw balancing->error(
          "run-time balancing cannot be combined with /strategy/coordination, /strategy/class_split or "
          "/workload/serial_fraction yet");
    dp.balancing = parse_balancing(*balancing);
    if (dp.sync != GradientSync::None || job.iterations != 1)
      throw balancing->error("run-time balancing is for data processing jobs: expected /workload/iterations 1 and "
                             "/strategy/gradient_sync \"none\"");
    if (cluster.network.nic.bandwidth <= 0) // the coordinator reaches the GPUs over the network
      throw InputError(reader.source(), "/cluster/network",
                       "run-time balancing needs the network that joins the coordinator to the nodes");
  }
  reader.finish();
  return dp;
}

RunSpec parse_run(JsonReader reader) {
  RunSpec run;
  run.seed = static_cast<std::uint64_t>(reader.integer("seed"));
  run.network_model = reader.enum_choice_or("network_model", NetworkModel::CM02);
  if (auto outputs = reader.optional_child("outputs")) {
    run.outputs = OutputSelection{false, false, false, false, false};
    for (const JsonReader& item : outputs->elements(0, 5)) {
      const std::string name = item.as_string();
      if (name == "table")
        run.outputs.table = true;
      else if (name == "report_json")
        run.outputs.report_json = true;
      else if (name == "ranks_csv")
        run.outputs.ranks_csv = true;
      else if (name == "trace")
        run.outputs.trace = run.outputs.reliability_trace = true;
      else if (name == "reliability_trace")
        run.outputs.reliability_trace = true;
      else
        throw item.error(
            fmt::format("expected one of table, report_json, ranks_csv, trace, reliability_trace, got \"{}\"", name));
    }
  }
  run.max_events = static_cast<std::uint64_t>(reader.integer("max_events"));
  run.fold_replicas = reader.boolean("fold_replicas");
  run.lean_engine = reader.boolean("lean_engine");
  reader.finish();
  return run;
}

} // namespace

Override parse_override(const std::string& text) {
  const auto eq = text.find('=');
  if (text.empty() || text[0] != '/' || eq == std::string::npos)
    throw InputError("--set", "", fmt::format("expected /json/pointer=value, got \"{}\"", text));
  Override o;
  o.pointer = text.substr(0, eq);
  const std::string raw = text.substr(eq + 1);
  if (const auto at = invalid_utf8_at(text))
    throw InputError("--set", o.pointer, fmt::format("byte {} is not UTF-8; expected UTF-8 text", *at + 1));
  if (std::optional<nlohmann::json> value = parse_json_if_valid(raw, "--set " + o.pointer))
    o.value = std::move(*value);
  else
    o.value = raw; // not JSON: take it as a string ("a100-sxm4-80gb", "25GBps")
  return o;
}

void apply_overrides(nlohmann::json& document, const std::vector<Override>& overrides) {
  for (const Override& o : overrides) {
    const std::string source = "--set " + o.pointer;
    nlohmann::json::json_pointer pointer;
    try {
      pointer = nlohmann::json::json_pointer(o.pointer);
    } catch (const nlohmann::json::exception&) {
      throw InputError("--set", o.pointer, "not a valid JSON pointer");
    }
    const auto parent = pointer.parent_pointer();
    if (o.remove) {
      try {
        if (!pointer.empty() && document.contains(parent) && document[parent].is_object())
          document[parent].erase(pointer.back());
      } catch (const nlohmann::json::exception&) {
        // no such parent (an array index too large): nothing to remove
      }
      continue;
    }
    bool has_parent = false;
    try {
      has_parent = document.contains(parent) && (document[parent].is_object() || document[parent].is_array());
    } catch (const nlohmann::json::exception&) {
      // an array index on the way too large for size_t: nlohmann throws out_of_range 404
    }
    if (!has_parent)
      throw InputError(
          "--set", o.pointer,
          fmt::format("the scenario has no object or array at {}", parent.empty() ? "/" : parent.to_string()));
    nlohmann::json& container = document[parent];
    if (container.is_array()) {
      const std::string& token = pointer.back();
      std::size_t index = 0;
      const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), index);
      const bool numeric = !token.empty() && ec == std::errc() && end == token.data() + token.size();
      if (!numeric || index >= container.size())
        throw InputError(
            "--set", o.pointer,
            fmt::format("expected an index below {} into the array at {}", container.size(), parent.to_string()));
      container[index] = o.value;
    } else {
      container[pointer.back()] = o.value;
    }
  }
}

Scenario parse_scenario(const nlohmann::json& document, const std::string& source,
                        const std::filesystem::path& data_dir) {
  Scenario s;
  s.source = source;
  s.document = document;
  JsonReader root(s.document, source);
  root.use_schema(scenario_schema());
  root.expect_object();
  root.integer("schema_version");
  s.name = root.string("name");
  if (s.name.empty()) throw InputError(source, "/name", "expected a non-empty name");
  s.description = root.string("description");
  s.cluster = parse_cluster(root.child("cluster"), data_dir);
  s.workload = parse_workload(root.child("workload"), s.cluster, data_dir);
  s.strategy = parse_strategy(root.child("strategy"), s.cluster, s.workload);
  if (const auto* training = std::get_if<ModelTraining>(&s.workload);
      training != nullptr && training->kernels.fp8_param_gather) {
    const auto* mp = std::get_if<ModelParallel>(&s.strategy);
    if (mp == nullptr || mp->zero < 1)
      throw InputError(source, "/workload/fp8_param_gather",
                       fmt::format("the fp8 weights are gathered by a distributed optimizer or FSDP (Megatron-Core "
                                   "refuses --fp8-param-gather without one); expected false, or strategy kind "
                                   "\"model_parallel\" with zero 1, 2 or 3, got {}",
                                   mp == nullptr ? fmt::format("strategy kind \"{}\"",
                                                               s.document.at("strategy").value("kind", std::string()))
                                                 : "zero 0"));
  }
  if (const auto* training = std::get_if<ModelTraining>(&s.workload);
      training != nullptr && training->recompute_num_layers > 0 && !std::holds_alternative<ModelParallel>(s.strategy))
    throw InputError(source, "/workload/recompute_num_layers",
                     fmt::format("the block method recomputes the first layers of each pipeline stage's model chunk, "
                                 "which only a model_parallel plan has; expected no recompute_num_layers, or strategy "
                                 "kind \"model_parallel\" (data N, tensor 1, pipeline 1 is plain data parallelism), "
                                 "got strategy kind \"{}\"",
                                 s.document.at("strategy").value("kind", std::string())));
  check_stragglers(s);
  if (root.has("run")) s.run = parse_run(root.child("run"));
  // Absent sections are read as empty objects, so that every default comes from the schema.
  static const nlohmann::json kEmpty = nlohmann::json::object();
  auto section = [&](const char* key) {
    if (root.has(key)) return root.child(key);
    JsonReader empty(kEmpty, source, std::string("/") + key);
    empty.use_schema(scenario_schema());
    return empty;
  };
  s.energy = parse_energy(section("energy"), s.cluster);
  s.cost = parse_cost(section("cost"));
  s.budget = parse_budget(section("budget"));
  if (root.has("reliability")) {
    if (!std::holds_alternative<ModelTraining>(s.workload))
      throw InputError(source, "/reliability", "failures and checkpoints apply to model training only");
    if (std::holds_alternative<ParameterServer>(s.strategy))
      throw InputError(source, "/reliability",
                       "failures and checkpoints are not simulated with strategy kind \"parameter_server\"");
    s.reliability = parse_reliability(root.child("reliability"), s.cluster);
  }
  if (auto published = root.optional_child("published")) {
    PublishedFigure f;
    f.figure = published->string("figure");
    if (f.figure.empty() || f.figure[0] != '/')
      throw InputError(
          source, "/published/figure",
          fmt::format("expected a JSON pointer into report.json (\"/summary/makespan_s\"), got \"{}\"", f.figure));
    f.value = published->number("value");
    f.unit = published->string("unit");
    f.source = published->string("source");
    f.url = published->string("url");
    f.note = published->string("note");
    f.group = published->string("group");
    published->finish();
    s.published = std::move(f);
  }
  if (auto expect = root.optional_child("expect")) s.expectations = parse_expectations(*expect);
  root.finish();
  return s;
}

Scenario load_scenario(const std::filesystem::path& path, const std::vector<Override>& overrides,
                       const std::filesystem::path& data_dir) {
  nlohmann::json document = read_json_file(path);
  if (!document.is_object()) throw InputError(path.string(), "/", "expected a JSON object at the top level");
  apply_overrides(document, overrides);
  return parse_scenario(document, path.string(), data_dir);
}

Scenario default_scenario(const std::vector<Override>& overrides, const std::filesystem::path& data_dir) {
  const std::string source = "<built-in default>";
  nlohmann::json document = parse_json_text(default_scenario_text(), source);
  apply_overrides(document, overrides);
  return parse_scenario(document, source, data_dir);
}

std::string workload_data_type(const Workload& workload) {
  if (const auto* job = std::get_if<DataJob>(&workload)) return job->data_type;
  if (const auto* training = std::get_if<ModelTraining>(&workload)) return training->data_type;
  if (const auto* serving = std::get_if<ServingWorkload>(&workload)) return serving->data_type;
  return std::get<CollectiveBenchmark>(workload).data_type;
}

std::int64_t workload_iterations(const Workload& workload) {
  return std::visit([](const auto& w) { return w.iterations; }, workload);
}

} // namespace partsim
