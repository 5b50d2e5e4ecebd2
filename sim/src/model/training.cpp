// Model training arithmetic: unit times from the cost model, gradient buckets, optimizer step, replica memory.
#include "partsim/model/training.hpp"

#include "partsim/input/hardware.hpp"

#include "partsim/common/error.hpp"
#include "partsim/model/cost_model.hpp"
#include "partsim/model/memory.hpp"

#include <fmt/format.h>

#include <array>

#include <cmath>

namespace partsim {

namespace {

std::vector<ComputeOp> pick(const std::vector<ComputeOp>& ops, bool embedding) {
  std::vector<ComputeOp> out;
  for (const ComputeOp& op : ops)
    if ((op.name == "embedding") == embedding) out.push_back(op);
  return out;
}

} // namespace

double bytes_per_element(const std::string& data_type) {
  const DataTypeInfo* type = find_data_type(data_type);
  PARTSIM_CHECK(type != nullptr && type->trainable) << "no training element size for data type " << data_type;
  return type->element_bytes;
}

double TrainingCost::forward_time() const {
  double sum = 0.0;
  for (const TrainingUnit& u : units) sum += u.forward_time;
  return sum;
}

double TrainingCost::backward_time() const {
  double sum = 0.0;
  for (const TrainingUnit& u : units) sum += u.backward_time;
  return sum;
}

TrainingUnit price_ops(std::string name, const std::vector<ComputeOp>& ops, const GpuProfile& gpu,
                       const std::string& data_type, Recomputation recomputation) {
  TrainingUnit unit;
  unit.name = std::move(name);
  const double bytes = bytes_per_element(data_type);
  for (const ComputeOp& op : ops) {
    const double forward = op_time(op, gpu, data_type, bytes, false);
    unit.forward_time += forward;
    unit.backward_time += op_time(op, gpu, data_type, bytes, true);
    const double rerun = recomputation == Recomputation::Full ? forward
                         : recomputation == Recomputation::Selective && op.selectively_recomputed
                             ? forward * op.recomputed_share
                             : 0.0;
    unit.backward_time += rerun;
    unit.recompute_time += rerun;
  }
  return unit;
}

std::vector<ComputeOp> training_outer_ops(const ModelTraining& training, const TransformerModel& model,
                                          std::int64_t micro_batch, const TensorSplit& split) {
  std::vector<ComputeOp> ops = model.outer_ops(micro_batch, split);
  const double per_element =
      2.0 * bytes_per_element(training.data_type) + 2.0 * bytes_per_element(training.gradient_type());
  for (ComputeOp& op : ops)
    if (op.name == "embedding") op.extra_backward_bytes += model.embedding_parameters(split.tensor) * per_element;
  return ops;
}

LayerOpsBreakdown layer_ops_breakdown(const ModelTraining& training, const TensorSplit& split, const GpuProfile& gpu) {
  LayerOpsBreakdown out;
  if (!training.model.is_transformer()) return out;
  const TransformerModel model = training.transformer();
  const std::string& type = training.data_type;
  const double bytes = bytes_per_element(type);
  auto price = [&](const std::vector<ComputeOp>& ops, std::vector<PricedOp>& into) {
    for (const ComputeOp& op : ops)
      into.push_back(
          {op.name, op_time(op, gpu, type, bytes, false), op_time(op, gpu, type, bytes, true), op.forward_flops});
  };
  price(model.layer_ops(training.micro_batch, split), out.layer);
  price(training_outer_ops(training, model, training.micro_batch, split), out.outer);
  return out;
}

std::vector<ComputeOp> with_attention_window(std::vector<ComputeOp> ops, std::int64_t window) {
  for (ComputeOp& op : ops)
    if (op.attention) op.attention->window = window;
  return ops;
}

std::string describe_recomputation(const ModelTraining& training) {
  const RecomputeModules& modules = training.kernels.recompute_modules;
  if (training.recomputation == Recomputation::Full && training.recompute_num_layers > 0)
    return fmt::format("full (block: the first {} layer{} of each stage's model chunk)", training.recompute_num_layers,
                       training.recompute_num_layers == 1 ? "" : "s");
  if (training.recomputation != Recomputation::Selective || modules.is_default())
    return std::string(to_string(training.recomputation));
  return fmt::format("selective ({})", modules.describe());
}

std::string describe_stack(const ModelTraining& training, const GpuProfile& gpu) {
  std::string out = fmt::format("stack {}: {}", to_string(training.stack), describe(training.kernels));
  if (training.kernels.attention != AttentionKernel::FlashTriton) return out;
  if (const auto& triton = gpu.attention_efficiency_triton)
    return out + " (Triton attention priced from " + gpu.name + "'s attention_efficiency_triton" +
           (triton->provenance.kind == "assumption" ? ", an assumption the profile explains)" : ", measured)");
  return out + " (Triton attention: " + gpu.name +
         " has no measured Triton throughput, priced as its measured fused attention, an assumption)";
}

std::string describe_data_loading(const ModelTraining& training) {
  if (training.data_loading <= 0) return "data loading 0 s per micro-batch (assumed hidden by the loader's workers)";
  return fmt::format("data loading {:.4g} ms per micro-batch on the ranks that read the input",
                     1e3 * training.data_loading);
}

double optimizer_step_bytes_per_parameter(Optimizer optimizer, const std::string& data_type, bool clipping,
                                          const std::string& gradient_type, bool loss_scaling) {
  const double element = bytes_per_element(data_type); // weights
  const double gradient = bytes_per_element(gradient_type.empty() ? data_type : gradient_type);
  const bool master = element < 4.0; // optimizer_bytes_per_parameter keeps an fp32 copy
  const double norm = clipping ? gradient : 0.0;
  const double update = gradient + 2.0 * optimizer_bytes_per_parameter(optimizer, data_type);
  const double weights = master ? 4.0 + element : 2.0 * element;
  const double zero = gradient;
  const double unscale = loss_scaling ? 2.0 * gradient : 0.0;
  return unscale + norm + update + weights + zero;
}

TrainingCost training_cost(const ModelTraining& training, const GpuProfile& gpu, const std::vector<bool>& recomputed) {
  TrainingCost cost;
  const std::string& type = training.data_type;
  const std::int64_t b = training.micro_batch;
  if (training.model.is_transformer()) {
    const TransformerModel model = training.transformer();
    const std::vector<ComputeOp> outer = training_outer_ops(training, model, b);
    cost.units.push_back(price_ops("embedding", pick(outer, true), gpu, type, Recomputation::None));
    cost.units.front().parameters = model.embedding_parameters();
    // Each layer priced as its kind runs: a mixture of experts' first dense layers (first_dense_layers) as the dense
    // model's layer, a sliding window's layers with the fused attention kernel over the band (AttentionWindow).
    const AttentionWindow& window = model.config().window;
    // Per kind of layer, the whole sequence's attention and (with a window) the window's: [windowed].
    auto layer_units = [&](const TransformerModel& m, Recomputation recomputation) {
      std::array<TrainingUnit, 2> units;
      units[0] = price_ops("layer", m.layer_ops(b), gpu, type, recomputation);
      units[0].parameters = m.layer_parameters();
      units[1] = units[0];
      if (window.enabled()) {
        units[1] = price_ops("layer", with_attention_window(m.layer_ops(b), window.size), gpu, type, recomputation);
        units[1].parameters = units[0].parameters;
      }
      return units;
    };
    const std::int64_t layers = model.config().layers;
    PARTSIM_CHECK(recomputed.empty() || std::ssize(recomputed) == layers) << "recomputed layers of another model";
    const bool first_dense = model.config().experts.first_dense > 0;
    const std::array<TrainingUnit, 2> layer = layer_units(model, training.recomputation);
    const std::array<TrainingUnit, 2> dense =
        first_dense ? layer_units(model.dense_model(), training.recomputation) : layer;
    // The layers the block method leaves alone, and their hardware flops without the rerun forward.
    std::array<TrainingUnit, 2> kept_layer;
    std::array<TrainingUnit, 2> kept_dense;
    double skipped_flops = 0.0;
    if (!recomputed.empty()) {
      kept_layer = layer_units(model, Recomputation::None);
      kept_dense = first_dense ? layer_units(model.dense_model(), Recomputation::None) : kept_layer;
    }
    for (std::int64_t l = 0; l < layers; ++l) {
      const bool rerun = recomputed.empty() || recomputed[static_cast<std::size_t>(l)];
      const bool moe_kind = model.moe_layer(l);
      cost.units.push_back(
          (rerun ? (moe_kind ? layer : dense) : (moe_kind ? kept_layer : kept_dense))[window.windowed(l) ? 1 : 0]);
      cost.units.back().name = "layer " + std::to_string(l);
      if (!rerun)
        skipped_flops +=
            (moe_kind || !first_dense ? model : model.dense_model()).layer_flops(1, Recomputation::Full).recompute;
    }
    cost.units.push_back(price_ops("head", pick(outer, false), gpu, type, Recomputation::None));
    cost.units.back().parameters = model.output_parameters();
    cost.parameters = model.parameters();
    cost.model_flops_per_sample = model.training_flops(1, Recomputation::None).total();
    cost.hardware_flops_per_sample = model.training_flops(1, training.recomputation).total() - skipped_flops;
    cost.tokens_per_sample = static_cast<double>(model.config().sequence_length);
  } else {
    const CnnModel model = training.model.cnn();
    for (const ComputeOp& op : model.ops(b)) {
      cost.units.push_back(price_ops(op.name, {op}, gpu, type, Recomputation::None));
      cost.units.back().parameters = op.weight_elements;
    }
    cost.parameters = model.parameters();
    cost.model_flops_per_sample = model.training_flops(1).total();
    cost.hardware_flops_per_sample = cost.model_flops_per_sample;
  }
  // The optimizer step is memory bound (optimizer_step_bytes_per_parameter); about 10 flop per parameter (Adam) on
  // the vector units.
  const double bytes =
      cost.parameters * optimizer_step_bytes_per_parameter(training.optimizer, type, training.gradient_clipping,
                                                           training.gradient_type(), training.loss_scaling);
  const double rate = gpu.peak_flops.contains("fp32") ? gpu.peak("fp32") : gpu.peak(type);
  cost.optimizer_time = kernel_time(gpu, 10.0 * cost.parameters, rate, bytes);
  return cost;
}

std::vector<GradientBucket> gradient_buckets(const TrainingCost& cost, double gradient_bytes_per_parameter,
                                             double bucket_bytes) {
  std::vector<GradientBucket> buckets;
  double filled = 0.0;
  for (std::size_t i = cost.units.size(); i-- > 0;) {
    const double bytes = cost.units[i].parameters * gradient_bytes_per_parameter;
    if (buckets.empty() || filled >= bucket_bytes) {
      buckets.push_back({i, i, 0});
      filled = 0.0;
    }
    buckets.back().first = i;
    filled += bytes;
    buckets.back().bytes = static_cast<std::uint64_t>(std::llround(filled));
  }
  return buckets;
}

} // namespace partsim
