// CNN arithmetic: ResNet-50 and ResNet-18 against torchvision's published figures, im2col GEMM shapes by hand,
// backward and activation-memory conventions on a small network, config errors.
#include "partsim/common/error.hpp"
#include "partsim/model/cnn.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace partsim {
namespace {

ResNetConfig resnet50_config() {
  ResNetConfig c;
  c.stages = {3, 4, 6, 3};
  return c;
}

const ComputeOp& find_op(const std::vector<ComputeOp>& ops, const std::string& name) {
  for (const ComputeOp& op : ops)
    if (op.name == name) return op;
  throw std::runtime_error("no op named " + name);
}

const CnnLayer& find_layer(const CnnModel& model, const std::string& name) {
  for (const CnnLayer& layer : model.layers())
    if (layer.name == name) return layer;
  throw std::runtime_error("no layer named " + name);
}

TEST(Cnn, ResNet50MatchesPublishedSize) {
  // torchvision resnet50 (IMAGENET1K_V1): 25,557,032 parameters (25.6M in He et al. 2016), 4.09 G
  // multiply-accumulates per 224x224 image (torchvision's "GFLOPS" column; 2 flop per MAC: 8.2 GFLOP forward).
  const CnnModel model = build_resnet(resnet50_config(), "resnet50");
  EXPECT_EQ(model.parameters(), 25'557'032.0);
  EXPECT_NEAR(model.parameters(), 25.6e6, 0.01 * 25.6e6);
  EXPECT_NEAR(model.multiply_accumulates(1), 4.09e9, 0.01 * 4.09e9);
  EXPECT_NEAR(model.multiply_accumulates(32), 32 * 4.09e9, 0.01 * 32 * 4.09e9);
  // The forward is the GEMMs (2 flop per MAC) plus norms, activations and pooling: under 1% more.
  const double forward = model.training_flops(1).forward;
  EXPECT_GT(forward, 2 * 4.09e9 * 0.99);
  EXPECT_NEAR(forward, 8.18e9, 0.02 * 8.18e9);
}

TEST(Cnn, ResNet18MatchesPublishedSize) {
  // torchvision resnet18: 11,689,512 parameters, 1.81 G multiply-accumulates per 224x224 image.
  ResNetConfig c;
  c.block = "basic";
  c.stages = {2, 2, 2, 2};
  const CnnModel model = build_resnet(c, "resnet18");
  EXPECT_EQ(model.parameters(), 11'689'512.0);
  EXPECT_NEAR(model.multiply_accumulates(1), 1.81e9, 0.01 * 1.81e9);
}

TEST(Cnn, ResNet50ShapesByHand) {
  const CnnModel model = build_resnet(resnet50_config(), "resnet50");
  EXPECT_EQ(model.input(), (ImageShape{3, 224, 224}));
  EXPECT_EQ(model.output(), (ImageShape{1000, 1, 1}));
  EXPECT_EQ(find_layer(model, "conv1").output, (ImageShape{64, 112, 112}));
  EXPECT_EQ(find_layer(model, "maxpool").output, (ImageShape{64, 56, 56}));
  EXPECT_EQ(find_layer(model, "layer1.2.conv3").output, (ImageShape{256, 56, 56}));
  EXPECT_EQ(find_layer(model, "layer3.0.conv2").output, (ImageShape{256, 14, 14}));
  EXPECT_EQ(find_layer(model, "layer4.2.relu").output, (ImageShape{2048, 7, 7}));
  EXPECT_EQ(find_layer(model, "avgpool").output, (ImageShape{2048, 1, 1}));
  // A shortcut projection where the width or the resolution changes: first block of every stage.
  int projections = 0;
  for (const CnnLayer& layer : model.layers())
    if (layer.name.find("downsample.conv") != std::string::npos) ++projections;
  EXPECT_EQ(projections, 4);
}

TEST(Cnn, Im2colGemmShapesByHand) {
  // Batch 32. Stem: M = 32·112·112, N = 64, K = 3·7·7.
  const CnnModel model = build_resnet(resnet50_config(), "resnet50");
  const std::vector<ComputeOp> ops = model.ops(32);
  EXPECT_EQ(*find_op(ops, "conv1").gemm, (GemmShape{1, 32 * 112 * 112, 64, 147}));
  // layer3.0.conv2: 3x3 stride 2 on 256 x 28 x 28 -> 256 x 14 x 14: M = 32·14·14, N = 256, K = 256·9.
  EXPECT_EQ(*find_op(ops, "layer3.0.conv2").gemm, (GemmShape{1, 32 * 14 * 14, 256, 2304}));
  // layer3.0.downsample.conv: 1x1 stride 2, 512 -> 1024.
  EXPECT_EQ(*find_op(ops, "layer3.0.downsample.conv").gemm, (GemmShape{1, 32 * 14 * 14, 1024, 512}));
  EXPECT_EQ(*find_op(ops, "fc").gemm, (GemmShape{1, 32, 1000, 2048}));
  EXPECT_DOUBLE_EQ(find_op(ops, "conv1").forward_flops, 2.0 * 32 * 112 * 112 * 64 * 147);
  EXPECT_FALSE(find_op(ops, "maxpool").gemm.has_value());
}

TEST(Cnn, GroupedConvolution) {
  // 64 -> 128 channels, 3x3, 4 groups, on 16 x 16 (padding 1): each output channel sees 16 input channels.
  const CnnLayer layer = convolution("grouped", {64, 16, 16}, 128, 3, 1, 1, 4);
  EXPECT_EQ(layer.output, (ImageShape{128, 16, 16}));
  EXPECT_DOUBLE_EQ(layer.parameters(), 128.0 * 16 * 9);
  const CnnModel model("grouped", {layer});
  const ComputeOp op = model.ops(2).front();
  EXPECT_EQ(*op.gemm, (GemmShape{4, 2 * 16 * 16, 32, 16 * 9}));
  EXPECT_DOUBLE_EQ(op.forward_flops, 2.0 * (2 * 16 * 16) * 128 * (16 * 9));
}

/** conv 3->8 3x3 on 3x8x8 (pad 1), BN, ReLU, 2x2 max pool, linear 128 -> 10. */
CnnModel small_network() {
  std::vector<CnnLayer> layers;
  layers.push_back(convolution("conv", {3, 8, 8}, 8, 3, 1, 1));
  layers.push_back(batch_norm("bn", {8, 8, 8}));
  layers.push_back(relu("relu", {8, 8, 8}));
  layers.push_back(pooling("pool", CnnLayerKind::MaxPool, {8, 8, 8}, 2, 2, 0));
  layers.push_back(linear("fc", {8, 4, 4}, 10, true));
  return CnnModel("small", std::move(layers));
}

TEST(Cnn, SmallNetworkFlopsAndParameters) {
  const CnnModel model = small_network();
  // conv 8·3·9 = 216, BN 16, fc 128·10 + 10.
  EXPECT_DOUBLE_EQ(model.parameters(), 216 + 16 + 1290);
  const double n = 4;
  const double conv = 2 * n * 64 * 8 * 27; // M = 4·8·8, N = 8, K = 27
  const double fc = 2 * n * 10 * 128;      // M = 4, N = 10, K = 128
  const double bn = 8 * n * 512, act = n * 512, pool = 4 * n * 128, fc_bias = n * 10;
  const TrainingFlops flops = model.training_flops(4);
  EXPECT_DOUBLE_EQ(flops.forward, conv + bn + act + pool + fc + fc_bias);
  // The first convolution reads the images: weight gradient only. Everything else: twice its forward.
  EXPECT_DOUBLE_EQ(flops.backward, conv + 2 * (bn + act + pool + fc) + fc_bias);
  EXPECT_FALSE(model.ops(4).front().input_gradient);
  EXPECT_DOUBLE_EQ(model.ops(4).front().backward_bytes(2.0), model.ops(4).front().forward_bytes(2.0));
}

TEST(Cnn, SmallNetworkActivationMemory) {
  // Kept for the backward: the conv's, BN's, pool's and fc's inputs; ReLU (in place) keeps nothing more.
  const CnnModel model = small_network();
  const double per_sample = 192 + 512 + 512 + 128;
  EXPECT_DOUBLE_EQ(model.activation_bytes(4, 2.0), 2.0 * 4 * per_sample);
  EXPECT_DOUBLE_EQ(model.activation_bytes(1, 4.0), 4.0 * per_sample);
}

void expect_resnet_error(const ResNetConfig& config, const std::string& pointer) {
  try {
    build_resnet(config);
    FAIL() << "expected an InputError at " << pointer;
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), pointer) << e.what();
  }
}

TEST(Cnn, BadResNetConfigsAreInputErrors) {
  ResNetConfig c = resnet50_config();
  c.block = "inverted";
  expect_resnet_error(c, "/block");
  c = resnet50_config();
  c.stages = {};
  expect_resnet_error(c, "/blocks_per_stage");
  c.stages = {3, 0, 6, 3};
  expect_resnet_error(c, "/blocks_per_stage");
  c = resnet50_config();
  c.input = {3, 0, 224};
  expect_resnet_error(c, "/input");
  c = resnet50_config();
  c.classes = 0;
  expect_resnet_error(c, "/classes");
}

TEST(Cnn, TinyInputsStillBuild) {
  // Every strided step rounds up: a 1x1 image survives the stem and three downsampling stages.
  ResNetConfig c = resnet50_config();
  c.input = {3, 1, 1};
  const CnnModel model = build_resnet(c);
  EXPECT_EQ(find_layer(model, "layer4.2.relu").output, (ImageShape{2048, 1, 1}));
}

} // namespace
} // namespace partsim
