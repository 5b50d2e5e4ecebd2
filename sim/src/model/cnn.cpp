// CNN arithmetic: layer builders, im2col GEMM shapes, flops, parameters, activation memory, and ResNets.
#include "partsim/model/cnn.hpp"

#include "partsim/common/error.hpp"

#include <fmt/format.h>

#include <utility>

namespace partsim {

namespace {

constexpr double kBatchNormFlop = 8.0;

double as_double(std::int64_t v) {
  return static_cast<double>(v);
}

std::int64_t output_side(std::int64_t side, std::int64_t kernel, std::int64_t stride, std::int64_t padding) {
  PARTSIM_CHECK(side + 2 * padding >= kernel && stride >= 1)
      << "window " << kernel << " stride " << stride << " padding " << padding << " on side " << side;
  return (side + 2 * padding - kernel) / stride + 1;
}

} // namespace

double CnnLayer::parameters() const {
  switch (kind) {
  case CnnLayerKind::Convolution:
    return as_double(output.channels) * as_double(input.channels / groups) * as_double(kernel_h * kernel_w) +
           (bias ? as_double(output.channels) : 0.0);
  case CnnLayerKind::Linear:
    return input.elements() * as_double(output.channels) + (bias ? as_double(output.channels) : 0.0);
  case CnnLayerKind::BatchNorm:
    return 2.0 * as_double(input.channels);
  default:
    return 0.0;
  }
}

CnnLayer convolution(std::string name, ImageShape input, std::int64_t out_channels, std::int64_t kernel,
                     std::int64_t stride, std::int64_t padding, std::int64_t groups, bool bias) {
  PARTSIM_CHECK(groups >= 1 && input.channels % groups == 0 && out_channels % groups == 0)
      << name << ": " << groups << " groups for " << input.channels << " -> " << out_channels << " channels";
  CnnLayer layer;
  layer.name = std::move(name);
  layer.kind = CnnLayerKind::Convolution;
  layer.input = input;
  layer.output = {out_channels, output_side(input.height, kernel, stride, padding),
                  output_side(input.width, kernel, stride, padding)};
  layer.kernel_h = layer.kernel_w = kernel;
  layer.stride = stride;
  layer.padding = padding;
  layer.groups = groups;
  layer.bias = bias;
  return layer;
}

CnnLayer linear(std::string name, ImageShape input, std::int64_t out_features, bool bias) {
  return {.name = std::move(name),
          .kind = CnnLayerKind::Linear,
          .input = input,
          .output = {out_features, 1, 1},
          .bias = bias};
}

CnnLayer batch_norm(std::string name, ImageShape shape) {
  return {.name = std::move(name), .kind = CnnLayerKind::BatchNorm, .input = shape, .output = shape};
}

CnnLayer relu(std::string name, ImageShape shape) {
  return {.name = std::move(name), .kind = CnnLayerKind::Relu, .input = shape, .output = shape};
}

CnnLayer residual_add(std::string name, ImageShape shape) {
  return {.name = std::move(name), .kind = CnnLayerKind::Add, .input = shape, .output = shape};
}

CnnLayer pooling(std::string name, CnnLayerKind kind, ImageShape input, std::int64_t kernel, std::int64_t stride,
                 std::int64_t padding) {
  PARTSIM_CHECK(kind == CnnLayerKind::MaxPool || kind == CnnLayerKind::AvgPool) << name << ": not a pooling kind";
  CnnLayer layer;
  layer.name = std::move(name);
  layer.kind = kind;
  layer.input = input;
  layer.output = {input.channels, output_side(input.height, kernel, stride, padding),
                  output_side(input.width, kernel, stride, padding)};
  layer.kernel_h = layer.kernel_w = kernel;
  layer.stride = stride;
  layer.padding = padding;
  return layer;
}

CnnLayer global_average_pool(std::string name, ImageShape input) {
  return {.name = std::move(name),
          .kind = CnnLayerKind::AvgPool,
          .input = input,
          .output = {input.channels, 1, 1},
          .kernel_h = input.height,
          .kernel_w = input.width};
}

// --- the model -----------------------------------------------------------------------------------------------------

CnnModel::CnnModel(std::string name, std::vector<CnnLayer> layers)
    : name_(std::move(name)), layers_(std::move(layers)) {
  PARTSIM_CHECK(!layers_.empty()) << name_ << ": a CNN needs at least one layer";
  for (const CnnLayer& layer : layers_)
    PARTSIM_CHECK(layer.input.elements() >= 1 && layer.output.elements() >= 1) << name_ << ": empty " << layer.name;
}

double CnnModel::parameters() const {
  double total = 0.0;
  for (const CnnLayer& layer : layers_) total += layer.parameters();
  return total;
}

double CnnModel::multiply_accumulates(std::int64_t batch) const {
  double total = 0.0;
  for (const ComputeOp& op : ops(batch))
    if (op.gemm) total += op.gemm->flops() / kFlopPerMultiplyAccumulate;
  return total;
}

std::vector<ComputeOp> CnnModel::ops(std::int64_t batch) const {
  PARTSIM_CHECK(batch >= 1) << "batch " << batch;
  const double n = as_double(batch);
  std::vector<ComputeOp> ops;
  ops.reserve(layers_.size());
  for (const CnnLayer& layer : layers_) {
    ComputeOp op;
    op.name = layer.name;
    op.weight_elements = layer.parameters();
    op.input_elements = n * layer.input.elements() * (layer.kind == CnnLayerKind::Add ? 2.0 : 1.0);
    op.output_elements = n * layer.output.elements();
    const double outputs = op.output_elements;
    switch (layer.kind) {
    case CnnLayerKind::Convolution:
    case CnnLayerKind::Linear: {
      op.kind = OpKind::Gemm;
      if (layer.kind == CnnLayerKind::Convolution)
        op.gemm = GemmShape{layer.groups, batch * layer.output.height * layer.output.width,
                            layer.output.channels / layer.groups,
                            layer.input.channels / layer.groups * layer.kernel_h * layer.kernel_w};
      else
        op.gemm = GemmShape{1, batch, layer.output.channels, static_cast<std::int64_t>(layer.input.elements())};
      const double bias_adds = layer.bias ? outputs : 0.0;
      op.input_gradient = !ops.empty(); // the first layer reads the images
      op.forward_flops = op.gemm->flops() + bias_adds;
      op.backward_flops = (op.input_gradient ? 2.0 : 1.0) * op.gemm->flops() + bias_adds;
      break;
    }
    case CnnLayerKind::BatchNorm:
      op.kind = OpKind::Norm;
      op.forward_flops = kBatchNormFlop * outputs;
      break;
    case CnnLayerKind::Relu:
    case CnnLayerKind::Add:
      op.kind = OpKind::Elementwise;
      op.forward_flops = outputs;
      break;
    case CnnLayerKind::MaxPool:
    case CnnLayerKind::AvgPool:
      op.kind = OpKind::Pool;
      op.forward_flops = as_double(layer.kernel_h * layer.kernel_w) * outputs;
      break;
    }
    if (op.kind != OpKind::Gemm) op.backward_flops = 2.0 * op.forward_flops;
    ops.push_back(std::move(op));
  }
  return ops;
}

TrainingFlops CnnModel::training_flops(std::int64_t batch) const {
  return sum_flops(ops(batch));
}

double CnnModel::activation_bytes(std::int64_t batch, double bytes_per_element) const {
  double elements = 0.0;
  for (const CnnLayer& layer : layers_) {
    const bool kept = layer.kind == CnnLayerKind::Convolution || layer.kind == CnnLayerKind::Linear ||
                      layer.kind == CnnLayerKind::BatchNorm || layer.kind == CnnLayerKind::MaxPool;
    if (kept) elements += layer.input.elements();
  }
  return bytes_per_element * as_double(batch) * elements;
}

// --- ResNet --------------------------------------------------------------------------------------------------------

std::optional<ConfigProblem> find_problem(const ResNetConfig& c) {
  if (c.block != "bottleneck" && c.block != "basic")
    return ConfigProblem{"block", fmt::format("expected one of basic, bottleneck, got \"{}\"", c.block)};
  if (c.stages.empty() || c.stages.size() > kMaxResNetStages)
    return ConfigProblem{"blocks_per_stage",
                         fmt::format("expected 1 to {} stages, got {}", kMaxResNetStages, c.stages.size())};
  for (std::int64_t blocks : c.stages)
    if (blocks < 1) return ConfigProblem{"blocks_per_stage", fmt::format("expected blocks >= 1, got {}", blocks)};
  if (c.base_width < 1 || c.base_width > 65536)
    return ConfigProblem{"base_width", fmt::format("expected 1 to 65536, got {}", c.base_width)};
  if (c.classes < 1) return ConfigProblem{"classes", fmt::format("expected >= 1, got {}", c.classes)};
  if (c.input.channels < 1 || c.input.height < 1 || c.input.width < 1)
    return ConfigProblem{"input", fmt::format("expected channels, height and width >= 1, got [{}, {}, {}]",
                                              c.input.channels, c.input.height, c.input.width)};
  return std::nullopt;
}

namespace {

/** Appends one residual block reading `in`; returns its output shape. */
ImageShape append_block(std::vector<CnnLayer>& layers, const std::string& prefix, ImageShape in, bool bottleneck,
                        std::int64_t planes, std::int64_t stride) {
  const std::int64_t out_channels = bottleneck ? 4 * planes : planes;
  auto conv_bn = [&](const std::string& name, ImageShape x, std::int64_t channels, std::int64_t kernel,
                     std::int64_t conv_stride, bool activation) {
    layers.push_back(convolution(prefix + name, x, channels, kernel, conv_stride, kernel / 2));
    const ImageShape y = layers.back().output;
    layers.push_back(batch_norm(prefix + "bn" + name.substr(4), y));
    if (activation) layers.push_back(relu(prefix + "relu" + name.substr(4), y));
    return y;
  };
  ImageShape x = in;
  if (bottleneck) {
    x = conv_bn("conv1", x, planes, 1, 1, true);
    x = conv_bn("conv2", x, planes, 3, stride, true);
    x = conv_bn("conv3", x, out_channels, 1, 1, false);
  } else {
    x = conv_bn("conv1", x, planes, 3, stride, true);
    x = conv_bn("conv2", x, planes, 3, 1, false);
  }
  if (stride != 1 || in.channels != out_channels) {
    layers.push_back(convolution(prefix + "downsample.conv", in, out_channels, 1, stride, 0));
    layers.push_back(batch_norm(prefix + "downsample.bn", layers.back().output));
  }
  layers.push_back(residual_add(prefix + "add", x));
  layers.push_back(relu(prefix + "relu", x));
  return x;
}

} // namespace

CnnModel build_resnet(const ResNetConfig& config, const std::string& name) {
  if (const auto problem = find_problem(config))
    throw InputError("resnet config", "/" + problem->key, problem->message);
  const bool bottleneck = config.block == "bottleneck";
  std::vector<CnnLayer> layers;
  layers.push_back(convolution("conv1", config.input, config.base_width, 7, 2, 3));
  layers.push_back(batch_norm("bn1", layers.back().output));
  layers.push_back(relu("relu", layers.back().output));
  layers.push_back(pooling("maxpool", CnnLayerKind::MaxPool, layers.back().output, 3, 2, 1));
  ImageShape x = layers.back().output;
  for (std::size_t stage = 0; stage < config.stages.size(); ++stage) {
    const std::int64_t planes = config.base_width << stage;
    for (std::int64_t block = 0; block < config.stages[stage]; ++block) {
      const std::int64_t stride = stage > 0 && block == 0 ? 2 : 1;
      x = append_block(layers, fmt::format("layer{}.{}.", stage + 1, block), x, bottleneck, planes, stride);
    }
  }
  layers.push_back(global_average_pool("avgpool", x));
  layers.push_back(linear("fc", layers.back().output, config.classes, true));
  return CnnModel(name, std::move(layers));
}

} // namespace partsim
