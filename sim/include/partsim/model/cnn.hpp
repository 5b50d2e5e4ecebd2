// Convolutional network workload model: a list of layers (convolutions lowered to GEMMs by im2col, linear, norm,
// activation, pooling, residual add) with flops, parameters and activation sizes; ResNets built from their definition.
#pragma once

#include "partsim/common/enum_names.hpp"

#include "partsim/model/compute_op.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace partsim {

/** Shape of one sample's activation: channels x height x width (a feature vector is C x 1 x 1). */
struct ImageShape {
  std::int64_t channels = 0;
  std::int64_t height = 0;
  std::int64_t width = 0;

  double elements() const {
    return static_cast<double>(channels) * static_cast<double>(height) * static_cast<double>(width);
  }
  bool operator==(const ImageShape&) const = default;
};

enum class CnnLayerKind { Convolution, Linear, BatchNorm, Relu, MaxPool, AvgPool, Add };

template <>
struct EnumNames<CnnLayerKind> {
  static constexpr std::array<EnumEntry<CnnLayerKind>, 7> entries{{{CnnLayerKind::Convolution, "convolution"},
                                                                   {CnnLayerKind::Linear, "linear"},
                                                                   {CnnLayerKind::BatchNorm, "batch_norm"},
                                                                   {CnnLayerKind::Relu, "relu"},
                                                                   {CnnLayerKind::MaxPool, "max_pool"},
                                                                   {CnnLayerKind::AvgPool, "avg_pool"},
                                                                   {CnnLayerKind::Add, "add"}}};
};

inline std::string_view to_string(CnnLayerKind kind) {
  return enum_name(kind);
}

/** One layer; shapes are per sample. `Add` sums two tensors of the input shape (a residual connection). */
struct CnnLayer {
  std::string name;
  CnnLayerKind kind = CnnLayerKind::Relu;
  ImageShape input;
  ImageShape output;
  std::int64_t kernel_h = 1; ///< kernel height (convolution, pooling)
  std::int64_t kernel_w = 1; ///< kernel width (convolution, pooling)
  std::int64_t stride = 1;   ///< convolution, pooling
  std::int64_t padding = 0;  ///< convolution, pooling
  std::int64_t groups = 1;   ///< convolution
  bool bias = false;         ///< convolution, linear

  /** Trainable parameters: weights and biases of convolutions and linear layers, scale and shift of batch norms. */
  double parameters() const;
};

/** A convolution with a square kernel; the output side is (side + 2·padding - kernel) / stride + 1. */
CnnLayer convolution(std::string name, ImageShape input, std::int64_t out_channels, std::int64_t kernel,
                     std::int64_t stride, std::int64_t padding, std::int64_t groups = 1, bool bias = false);
/** A fully connected layer on the flattened input. */
CnnLayer linear(std::string name, ImageShape input, std::int64_t out_features, bool bias = true);
/** BatchNorm, ReLU: the output has the input's shape. */
CnnLayer batch_norm(std::string name, ImageShape shape);
CnnLayer relu(std::string name, ImageShape shape);
/** Max or average pooling with a square window. */
CnnLayer pooling(std::string name, CnnLayerKind kind, ImageShape input, std::int64_t kernel, std::int64_t stride,
                 std::int64_t padding);
/** Average over each channel's whole plane: C x H x W to C x 1 x 1. */
CnnLayer global_average_pool(std::string name, ImageShape input);
/** Sum of two tensors of `shape`. */
CnnLayer residual_add(std::string name, ImageShape shape);

/** The arithmetic of a CNN over a batch of samples.
 *
 * Conventions: 2 flop per multiply-accumulate. A convolution is the GEMM of im2col: batch = groups,
 * M = N·H_out·W_out, N = C_out / groups, K = C_in / groups · kernel² (flops 2·N·H_out·W_out·C_out·C_in/groups·k²);
 * a linear layer M = N, N = out, K = in. Backward is 2x forward for GEMMs (input and weight gradients), except the
 * first layer, whose input (the images) needs no gradient: weight gradient only. Other layers: 2x forward.
 * Forward flop per output element: BatchNorm 8, ReLU 1, add 1, pooling kernel² (compare or add per window
 * element). For training, convolutions, linear layers, batch norms and max pooling keep their input for the
 * backward pass; ReLU (in place: its output is the next layer's input, counted there), add and average pooling keep
 * nothing. A tensor read by two layers (a block's input, read by its first convolution and its shortcut
 * projection) is counted twice. */
class CnnModel {
 public:
  /** `layers` in execution order (at least one); build them with the functions above. */
  CnnModel(std::string name, std::vector<CnnLayer> layers);

  const std::string& name() const { return name_; }
  const std::vector<CnnLayer>& layers() const { return layers_; }
  ImageShape input() const { return layers_.front().input; }
  ImageShape output() const { return layers_.back().output; }

  double parameters() const;
  /** Multiply-accumulates of the convolutions and linear layers for `batch` samples (ResNet-50: about 4.1e9 per
   * 224x224 image, the figure papers quote as "FLOPs"). */
  double multiply_accumulates(std::int64_t batch) const;
  /** One forward op per layer for `batch` samples. */
  std::vector<ComputeOp> ops(std::int64_t batch) const;
  /** Forward and backward flops of one training iteration over `batch` samples. */
  TrainingFlops training_flops(std::int64_t batch) const;
  /** Bytes the forward keeps for the backward pass at `bytes_per_element`. */
  double activation_bytes(std::int64_t batch, double bytes_per_element = 2.0) const;

 private:
  std::string name_;
  std::vector<CnnLayer> layers_;
};

inline constexpr std::size_t kMaxResNetStages = 8;

/** A ResNet (He et al. 2016) with torchvision's layout ("v1.5": the stride of a downsampling bottleneck is on its
 * 3x3 convolution). JSON keys in comments. */
struct ResNetConfig {
  std::string block = "bottleneck"; ///< "block": bottleneck (1x1, 3x3, 1x1; expansion 4) | basic (3x3, 3x3)
  std::vector<std::int64_t> stages; ///< "blocks_per_stage": ResNet-50 [3, 4, 6, 3], ResNet-18 [2, 2, 2, 2]
  std::int64_t base_width = 64;     ///< "base_width": channels of the stem and of the first stage
  ImageShape input{3, 224, 224};    ///< "input": [channels, height, width]
  std::int64_t classes = 1000;      ///< "classes"
};

/** The first problem with a ResNet config (unknown block, no stages or more than kMaxResNetStages, a count below 1),
 * or nothing. Any input side >= 1 survives the stem and the strided stages (each halves it, rounding up). */
std::optional<ConfigProblem> find_problem(const ResNetConfig& config);

/** Builds the layer list. @throws InputError (source "resnet config", pointer "/KEY") on a find_problem(). */
CnnModel build_resnet(const ResNetConfig& config, const std::string& name = "resnet");

} // namespace partsim
