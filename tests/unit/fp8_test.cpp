// FP8 training as Transformer Engine runs it (workload `fp8`): which GEMMs run in FP8 and the casts before them, the
// casts' bytes and the FP8 GEMMs' operand bytes by closed form, the FP8 GEMM efficiency derived from the bf16 table
// (half the depth), the activations and weight copies in memory, the weights kept and gathered in fp8
// (fp8_param_gather), the input errors, and a whole simulation.
#include "partsim/input/hardware.hpp"
#include "partsim/model/cost_model.hpp"
#include "partsim/model/memory.hpp"
#include "partsim/model/transformer.hpp"
#include "partsim/plan/plan.hpp"
#include "partsim/plan/sharded_memory.hpp"
#include "partsim/plan/strategy.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace partsim::test {
namespace {

/** A Llama-like layer (GQA, gated MLP, no biases): h 1024, 8 heads of 128 (2 key/value heads), ffn 2816. */
TransformerConfig llama_like() {
  TransformerConfig c;
  c.layers = 4;
  c.hidden = 1024;
  c.heads = 8;
  c.kv_heads = 2;
  c.ffn = 2816;
  c.vocab = 32000;
  c.sequence_length = 2048;
  c.mlp = MlpKind::Gated;
  c.position = PositionEmbedding::Rotary;
  c.norm = NormKind::RmsNorm;
  c.bias = false;
  c.tied_embeddings = false;
  return c;
}

TransformerKernels with_fp8(Fp8Recipe recipe) {
  TransformerKernels k;
  k.fp8 = recipe;
  return k;
}

TEST(Fp8Ops, EachLinearGemmGetsACastAndTheSameFlops) {
  const TransformerModel bf16(llama_like());
  const TransformerModel fp8(llama_like(), with_fp8(Fp8Recipe::Tensorwise));
  const std::vector<ComputeOp> ops = fp8.layer_ops(2);
  EXPECT_EQ(op_names(ops),
            (std::vector<std::string>{"attention_norm", "qkv_projection_fp8_cast", "qkv_projection", "rotary_embedding",
                                      "attention_core", "output_projection_fp8_cast", "output_projection",
                                      "attention_residual", "mlp_norm", "mlp_gate_fp8_cast", "mlp_gate", "mlp_up",
                                      "mlp_activation", "mlp_down_fp8_cast", "mlp_down", "mlp_residual"}));
  for (const ComputeOp& op : ops) {
    const bool linear = op.name == "qkv_projection" || op.name == "output_projection" || op.name == "mlp_gate" ||
                        op.name == "mlp_up" || op.name == "mlp_down";
    EXPECT_EQ(op.fp8, linear) << op.name;
  }
  // Casts change bytes, never flops.
  const TrainingFlops a = sum_flops(bf16.layer_ops(2));
  const TrainingFlops b = sum_flops(ops);
  EXPECT_DOUBLE_EQ(a.forward, b.forward);
  EXPECT_DOUBLE_EQ(a.backward, b.backward);
  EXPECT_EQ(bf16.layer_ops(2).size() + 4, ops.size());
}

TEST(Fp8Ops, CastBytesFollowTheRecipe) {
  const TransformerConfig c = llama_like();
  const double t = 2.0 * 2048; // tokens of two sequences
  const double h = 1024.0;
  const double f = 2816.0;
  const double qkv = (8 + 2 + 2) * 128.0;
  for (const Fp8Recipe recipe : {Fp8Recipe::Delayed, Fp8Recipe::Tensorwise}) {
    const double reads = recipe == Fp8Recipe::Tensorwise ? 2.0 : 1.0;
    const std::vector<ComputeOp> ops = TransformerModel(c, with_fp8(recipe)).layer_ops(2);
    // Each cast reads its tensor `reads` times at 2 bytes and writes two 1-byte copies.
    const double per = reads * 2.0 + 2.0;
    const ComputeOp q = find_op(ops, "qkv_projection_fp8_cast");
    EXPECT_DOUBLE_EQ(q.forward_bytes(2.0), per * t * h);    // the QKV GEMM's input
    EXPECT_DOUBLE_EQ(q.backward_bytes(2.0), per * t * qkv); // its output gradient
    const ComputeOp g = find_op(ops, "mlp_gate_fp8_cast");  // gate and up share one input
    EXPECT_DOUBLE_EQ(g.forward_bytes(2.0), per * t * h);
    EXPECT_DOUBLE_EQ(g.backward_bytes(2.0), per * t * 2.0 * f); // both output gradients
    const ComputeOp d = find_op(ops, "mlp_down_fp8_cast");
    EXPECT_DOUBLE_EQ(d.forward_bytes(2.0), per * t * f);
    EXPECT_DOUBLE_EQ(d.backward_bytes(2.0), per * t * h);
    EXPECT_DOUBLE_EQ(d.forward_flops + d.backward_flops, 0.0);
  }
}

TEST(Fp8Ops, SequenceParallelQuantizesTheRanksRowsAndTransposesTheGatheredCopy) {
  // Tensor 2 with sequence parallelism: the QKV and gate/up GEMMs' input arrives by an all-gather. Transformer
  // Engine quantizes the rank's half of the rows, row-wise only (one 1-byte write), gathers that copy and, in the
  // backward, re-gathers and transposes it for the weight gradient (1 byte read and written per gathered element).
  // The row-parallel GEMMs' output gradients (output projection, down) arrive by an all-gather in the backward: the
  // same, quantized on the rank's rows and transposed once gathered. The column-parallel GEMMs' output gradients
  // (the rank's columns) and the row-parallel GEMMs' inputs are cast as without it.
  const TransformerConfig c = llama_like();
  const double t = 2.0 * 2048;
  const double h = 1024.0;
  const double f = 2816.0 / 2;
  const double qkv = (8 + 2 + 2) * 128.0 / 2;
  TensorSplit split;
  split.tensor = 2;
  split.sequence_parallel = true;
  for (const Fp8Recipe recipe : {Fp8Recipe::Delayed, Fp8Recipe::Tensorwise}) {
    const double reads = recipe == Fp8Recipe::Tensorwise ? 2.0 : 1.0;
    const double per = reads * 2.0 + 2.0;
    const std::vector<ComputeOp> ops = TransformerModel(c, with_fp8(recipe)).layer_ops(2, split);
    const ComputeOp q = find_op(ops, "qkv_projection_fp8_cast");
    EXPECT_DOUBLE_EQ(q.forward_bytes(2.0), (reads * 2.0 + 1.0) * t / 2 * h);
    EXPECT_DOUBLE_EQ(q.backward_bytes(2.0), per * t * qkv + 2.0 * t * h);
    const ComputeOp g = find_op(ops, "mlp_gate_fp8_cast");
    EXPECT_DOUBLE_EQ(g.forward_bytes(2.0), (reads * 2.0 + 1.0) * t / 2 * h);
    EXPECT_DOUBLE_EQ(g.backward_bytes(2.0), per * t * 2.0 * f + 2.0 * t * h);
    const ComputeOp d = find_op(ops, "mlp_down_fp8_cast");
    EXPECT_DOUBLE_EQ(d.forward_bytes(2.0), per * t * f);
    EXPECT_DOUBLE_EQ(d.backward_bytes(2.0), (reads * 2.0 + 1.0) * t / 2 * h + 2.0 * t * h);
    const ComputeOp o = find_op(ops, "output_projection_fp8_cast");
    EXPECT_DOUBLE_EQ(o.forward_bytes(2.0), per * t * 8 * 128.0 / 2);
    EXPECT_DOUBLE_EQ(o.backward_bytes(2.0), (reads * 2.0 + 1.0) * t / 2 * h + 2.0 * t * h);
    // Without sequence parallelism every input is whole on the rank: cast whole, both copies.
    split.sequence_parallel = false;
    const std::vector<ComputeOp> whole = TransformerModel(c, with_fp8(recipe)).layer_ops(2, split);
    EXPECT_DOUBLE_EQ(find_op(whole, "qkv_projection_fp8_cast").forward_bytes(2.0), per * t * h);
    EXPECT_DOUBLE_EQ(find_op(whole, "mlp_down_fp8_cast").backward_bytes(2.0), per * t * h);
    split.sequence_parallel = true;
  }
}

TEST(Fp8Ops, Fp8GemmsReadOneByteOperands) {
  const std::vector<ComputeOp> bf16 = TransformerModel(llama_like()).layer_ops(1);
  const std::vector<ComputeOp> fp8 = TransformerModel(llama_like(), with_fp8(Fp8Recipe::Delayed)).layer_ops(1);
  const ComputeOp a = find_op(bf16, "mlp_down");
  const ComputeOp b = find_op(fp8, "mlp_down");
  // Weights and input at 1 byte instead of 2, the output still at 2.
  EXPECT_DOUBLE_EQ(a.forward_bytes(2.0) - b.forward_bytes(2.0), a.weight_elements + a.input_elements);
  EXPECT_DOUBLE_EQ(b.backward_bytes(2.0), 2.0 * b.forward_bytes(2.0));
}

TEST(Fp8Ops, MixtureOfExpertsKeepsTheRouterInTheDataType) {
  TransformerConfig c = llama_like();
  c.experts.count = 8;
  c.experts.top_k = 2;
  const std::vector<ComputeOp> ops = TransformerModel(c, with_fp8(Fp8Recipe::Tensorwise)).layer_ops(1);
  EXPECT_FALSE(find_op(ops, "router").fp8);
  EXPECT_TRUE(find_op(ops, "expert_gate").fp8);
  EXPECT_TRUE(find_op(ops, "expert_up").fp8);
  EXPECT_TRUE(find_op(ops, "expert_down").fp8);
  // The experts' casts are work on the copies the rank's experts receive.
  EXPECT_TRUE(is_routed_expert_op(find_op(ops, "expert_gate_fp8_cast")));
  EXPECT_DOUBLE_EQ(find_op(ops, "expert_gate_fp8_cast").fp8_cast_forward, find_op(ops, "expert_gate").input_elements);
  for (const ComputeOp& op : ops) EXPECT_NE(op.name, "router_fp8_cast");
}

TEST(Fp8Cost, EfficiencyIsTheBf16TablesAtHalfTheDepth) {
  const GpuProfile gpu = load_gpu_profile(source_dir(), "h100-sxm5-80gb", "test", "/cluster/gpu");
  ASSERT_DOUBLE_EQ(gpu.peak("fp8"), 2.0 * gpu.peak("bf16"));
  for (const GemmShape s : {GemmShape{1, 4096, 4096, 4096}, GemmShape{1, 8192, 2560, 8192},
                            GemmShape{1, 512, 1024, 256}, GemmShape{4, 1024, 2048, 1536, 4}})
    EXPECT_DOUBLE_EQ(gemm_efficiency(gpu, s, "fp8"),
                     gemm_efficiency(gpu, {s.batch, s.m, s.n, (s.k + 1) / 2, s.row_groups}, "bf16"))
        << s.m << " " << s.n << " " << s.k;
  // A large FP8 GEMM takes about half its bf16 time, never less: the depth halves, the rest stays.
  const std::vector<ComputeOp> bf16 = TransformerModel(llama_like()).layer_ops(4);
  const std::vector<ComputeOp> fp8 = TransformerModel(llama_like(), with_fp8(Fp8Recipe::Delayed)).layer_ops(4);
  for (const char* name : {"qkv_projection", "mlp_gate", "mlp_down"}) {
    const ComputeOp a = find_op(bf16, name);
    const ComputeOp b = find_op(fp8, name);
    const double ta = op_time(a, gpu, "bf16", 2.0, false);
    const double tb = op_time(b, gpu, "bf16", 2.0, false);
    EXPECT_LT(tb, ta) << name;
    EXPECT_GT(tb, 0.5 * ta) << name;
    // By closed form: flops at the fp8 peak times the efficiency of (m, n, k/2), its bytes, one launch.
    const GemmShape& s = *b.gemm;
    const double rate = gpu.peak("fp8") * gemm_efficiency(gpu, {1, s.m, s.n, (s.k + 1) / 2}, "bf16");
    EXPECT_DOUBLE_EQ(tb, kernel_time(gpu, b.forward_flops, rate, b.forward_bytes(2.0))) << name;
    // The backward: both products in FP8.
    const GemmBackwardTimes parts = gemm_backward_times(b, gpu, "bf16", 2.0);
    const double dgrad = gpu.peak("fp8") * gemm_efficiency(gpu, {1, s.m, s.k, s.n}, "fp8");
    EXPECT_DOUBLE_EQ(parts.input_gradient, kernel_time(gpu, 0.5 * b.backward_flops, dgrad, 0.5 * b.backward_bytes(2.0)))
        << name;
  }
}

TEST(Fp8Memory, GemmInputsAreKeptAtOneByte) {
  const TransformerConfig c = llama_like();
  const double t = 2.0 * 2048;
  const double h = 1024.0;
  const double f = 2816.0;
  const double out = 8 * 128.0;
  const double bf16 = TransformerModel(c).layer_activation_bytes(2, Recomputation::None, 2.0);
  const double fp8 =
      TransformerModel(c, with_fp8(Fp8Recipe::Tensorwise)).layer_activation_bytes(2, Recomputation::None, 2.0);
  // The QKV input, the output projection's, the MLP's first GEMMs' and its last GEMM's: one byte less each.
  EXPECT_DOUBLE_EQ(bf16 - fp8, t * (h + out + h + f));
  // Full recomputation keeps the layer's input only, in the data type.
  EXPECT_DOUBLE_EQ(
      TransformerModel(c, with_fp8(Fp8Recipe::Tensorwise)).layer_activation_bytes(2, Recomputation::Full, 2.0),
      2.0 * t * h);
}

/** Llama 3 8B on one 8-GPU H100 node, tensor 2 x data 4, the distributed optimizer; `fp8` the recipe. */
nlohmann::json llama8b(const std::string& fp8) {
  nlohmann::json doc = base_scenario(1, 8);
  doc["cluster"]["gpu"] = "h100-sxm5-80gb";
  doc["workload"] = {{"kind", "model_training"}, {"model", "llama3-8b"}, {"sequence_length", 4096},
                     {"global_batch", 8},        {"micro_batch", 1},     {"fp8", fp8}};
  doc["strategy"] = {{"kind", "model_parallel"}, {"data", 4}, {"tensor", 2}, {"zero", 1}};
  return doc;
}

TEST(Fp8Memory, EachLayerWeightHasATwoByteFp8Copy) {
  const Scenario a = parse(llama8b("none"));
  const Scenario b = parse(llama8b("tensorwise"));
  const auto& ta = std::get<ModelTraining>(a.workload);
  const auto& tb = std::get<ModelTraining>(b.workload);
  const ModelParallel& mp = std::get<ModelParallel>(a.strategy);
  const MemoryBreakdown ma = model_parallel_memory(ta, mp, a.cluster.gpu, 0);
  const MemoryBreakdown mb = model_parallel_memory(tb, mp, b.cluster.gpu, 0);
  const TransformerModel model = ta.transformer();
  EXPECT_DOUBLE_EQ(mb.parameters - ma.parameters, 2.0 * model.layers_parameters(0, model.config().layers, 2));
  EXPECT_DOUBLE_EQ(mb.optimizer_states, ma.optimizer_states);
  EXPECT_DOUBLE_EQ(mb.gradients, ma.gradients);
  EXPECT_LT(mb.activations, ma.activations);
}

/** llama8b with the weights kept and gathered in fp8 (`gather`), the gathers overlapped with the forward or not. */
nlohmann::json llama8b_gathered(bool gather, bool overlap) {
  nlohmann::json doc = llama8b("tensorwise");
  doc["workload"]["fp8_param_gather"] = gather;
  doc["strategy"]["gradient_sync"] = {{"overlap_param_gather", overlap}};
  return doc;
}

TEST(Fp8ParamGather, TheFp8WeightsReplaceTheDataTypeCopy) {
  // Row- and column-wise fp8 (2 bytes) in place of bf16 + the fp8 copy (4 bytes): as many bytes as bf16 weights.
  const Scenario none = parse(llama8b("none"));
  const Scenario copies = parse(llama8b_gathered(false, false));
  const Scenario gathered = parse(llama8b_gathered(true, false));
  const ModelParallel& mp = std::get<ModelParallel>(none.strategy);
  auto memory = [&](const Scenario& s) {
    return model_parallel_memory(std::get<ModelTraining>(s.workload), mp, s.cluster.gpu, 0);
  };
  const TransformerModel model = std::get<ModelTraining>(none.workload).transformer();
  const double layers = model.layers_parameters(0, model.config().layers, 2);
  EXPECT_DOUBLE_EQ(memory(gathered).parameters, memory(none).parameters);
  EXPECT_DOUBLE_EQ(memory(copies).parameters - memory(gathered).parameters, 2.0 * layers);
  EXPECT_DOUBLE_EQ(memory(gathered).gradients, memory(copies).gradients);
  EXPECT_DOUBLE_EQ(memory(gathered).optimizer_states, memory(copies).optimizer_states);
  EXPECT_DOUBLE_EQ(memory(gathered).activations, memory(copies).activations);
  TransformerKernels kernels = with_fp8(Fp8Recipe::Delayed);
  kernels.fp8_param_gather = true;
  EXPECT_NE(describe(kernels).find("FP8 layer GEMMs (delayed scaling, weights kept and gathered in fp8)"),
            std::string::npos)
      << describe(kernels);
}

TEST(Fp8ParamGather, TheLayersAreGatheredAtOneByteAParameter) {
  // ZeRO-1 over 4 data ranks: each rank gathers every bucket after the step (or overlapped with the next forward);
  // the layers' parameters at 1 byte instead of 2, the embedding and the LM head still at 2. The reduce-scatters
  // of the gradients do not change.
  const Scenario none = parse(llama8b("none"));
  const TransformerModel model = std::get<ModelTraining>(none.workload).transformer();
  const double layers = model.layers_parameters(0, model.config().layers, 2);
  for (const bool overlap : {false, true}) {
    const Plan bf16 = build_plan(parse(llama8b_gathered(false, overlap)));
    const Plan fp8 = build_plan(parse(llama8b_gathered(true, overlap)));
    auto data = [](const Plan& plan, CollectiveOp op) {
      std::pair<int, double> out{0, 0.0};
      for (const Step& step : resolved_steps(plan, 0))
        if (const auto* c = std::get_if<CollectiveStep>(&step); c && c->op == op && c->kind == CommKind::Data) {
          ++out.first;
          out.second += static_cast<double>(c->bytes);
        }
      return out;
    };
    const auto [count, bytes] = data(bf16, CollectiveOp::AllGather);
    const auto [fp8_count, fp8_bytes] = data(fp8, CollectiveOp::AllGather);
    EXPECT_GE(count, 2) << overlap;
    EXPECT_EQ(fp8_count, count) << overlap;
    EXPECT_NEAR(bytes - fp8_bytes, layers, count) << overlap; // rounding: under a byte a bucket
    EXPECT_EQ(data(fp8, CollectiveOp::ReduceScatter), data(bf16, CollectiveOp::ReduceScatter)) << overlap;
  }
}

TEST(Fp8SequenceParallel, EveryLayerGatherMovesFp8) {
  // Llama 3 8B, tensor 2 with sequence parallelism, 2 micro-batches per replica, 32 layers: each layer's two
  // forward all-gathers (before the QKV and the gate/up GEMMs) and two backward ones (the output projection's and
  // the down GEMM's output gradients) move fp8 copies, half of the bf16 bytes (b·s·h = 4,096 x 4,096); the head's
  // input and the embedding's gradient stay in bf16. With the userbuffers overlap or the asynchronous backward the
  // backward's re-gathers of the column GEMMs' inputs are fp8 too (6 a layer).
  const std::uint64_t bf16 = 4096ULL * 4096 * 2;
  for (const std::string mode : {"plain", "overlap", "async"}) {
    SCOPED_TRACE(mode);
    const bool overlap = mode == "overlap";
    auto gathers = [&](const std::string& fp8) {
      nlohmann::json doc = llama8b(fp8);
      doc["strategy"]["sequence_parallel"] = true;
      doc["strategy"]["tp_comm_overlap"] = overlap;
      doc["strategy"]["tp_async_backward"] = mode == "async";
      std::map<std::uint64_t, int> out;
      for (const Step& step : resolved_steps(build_plan(parse(doc)), 0))
        if (const auto* c = std::get_if<CollectiveStep>(&step);
            c && c->kind == CommKind::Tensor && c->op == CollectiveOp::AllGather)
          ++out[c->bytes];
      return out;
    };
    const std::map<std::uint64_t, int> a = gathers("none");
    const std::map<std::uint64_t, int> b = gathers("tensorwise");
    ASSERT_EQ(a.size(), 1U);
    const int total = a.at(bf16);
    const int fp8 = (mode == "plain" ? 4 : 6) * 32 * 2; // per layer, layers, micro-batches
    EXPECT_EQ(b.at(bf16 / 2), fp8);
    EXPECT_EQ(b.at(bf16), total - fp8);
  }
}

TEST(Fp8SequenceParallel, CurrentScalingReducesEachGatheredTensorsMaximumFirst) {
  // Per-tensor current scaling (tensorwise) all-reduces the absolute maximum (one fp32 value, MAX) over the tensor
  // group before each quantization of a sequence-parallel tensor it gathers: 2 forward, 2 backward a layer and
  // micro-batch (the overlap's bulk re-gathers reuse the forward's fp8 copy). Delayed scaling knows its scale
  // beforehand, and without sequence parallelism nothing is gathered: none.
  for (const bool overlap : {false, true}) {
    SCOPED_TRACE(overlap ? "overlap" : "plain");
    auto amax = [&](const std::string& fp8, bool sp) {
      nlohmann::json doc = llama8b(fp8);
      doc["strategy"]["sequence_parallel"] = sp;
      doc["strategy"]["tp_comm_overlap"] = overlap && sp;
      const std::vector<Step> steps = resolved_steps(build_plan(parse(doc)), 0);
      int count = 0;
      for (std::size_t i = 0; i < steps.size(); ++i) {
        const auto* c = std::get_if<CollectiveStep>(&steps[i]);
        if (!c || c->op != CollectiveOp::AllReduce || c->bytes != 4) continue;
        EXPECT_EQ(c->kind, CommKind::Tensor);
        ++count;
        // Without the overlap the fp8 all-gather follows at once.
        if (!overlap) {
          EXPECT_TRUE(i + 1 < steps.size());
          const auto* next = i + 1 < steps.size() ? std::get_if<CollectiveStep>(&steps[i + 1]) : nullptr;
          EXPECT_TRUE(next && next->op == CollectiveOp::AllGather && next->bytes == 4096ULL * 4096);
        }
      }
      return count;
    };
    EXPECT_EQ(amax("tensorwise", true), 4 * 32 * 2);
    EXPECT_EQ(amax("delayed", true), 0);
    EXPECT_EQ(amax("tensorwise", false), 0);
    EXPECT_EQ(amax("none", true), 0);
  }
}

TEST(Fp8Errors, EachInvalidUseNamesTheKey) {
  auto message = [](const nlohmann::json& doc) { return std::string(input_error([&] { parse(doc); }).what()); };
  nlohmann::json fp32 = llama8b("tensorwise");
  fp32["workload"]["data_type"] = "fp32";
  EXPECT_NE(message(fp32).find("/workload/fp8"), std::string::npos) << message(fp32);
  EXPECT_NE(message(fp32).find("bf16 or fp16"), std::string::npos) << message(fp32);
  nlohmann::json a100 = llama8b("delayed");
  a100["cluster"]["gpu"] = "a100-sxm4-80gb";
  EXPECT_NE(message(a100).find("/workload/fp8"), std::string::npos) << message(a100);
  EXPECT_NE(message(a100).find("no peak rate for fp8"), std::string::npos) << message(a100);
  nlohmann::json unknown = llama8b("blockwise");
  EXPECT_NE(message(unknown).find("/workload/fp8"), std::string::npos) << message(unknown);
  nlohmann::json cnn = base_scenario(1, 8);
  cnn["workload"] = {
      {"kind", "model_training"}, {"model", "resnet50"}, {"global_batch", 64}, {"micro_batch", 8}, {"fp8", "delayed"}};
  cnn["strategy"] = {{"kind", "data_parallel"}};
  EXPECT_NE(message(cnn).find("/workload/fp8"), std::string::npos) << message(cnn);
  // The fp8 weights: only with FP8 GEMMs, and only with a distributed optimizer or FSDP to gather them.
  nlohmann::json no_fp8 = llama8b("none");
  no_fp8["workload"]["fp8_param_gather"] = true;
  EXPECT_NE(message(no_fp8).find("/workload/fp8_param_gather"), std::string::npos) << message(no_fp8);
  EXPECT_NE(message(no_fp8).find("fp8 \"none\""), std::string::npos) << message(no_fp8);
  nlohmann::json zero0 = llama8b_gathered(true, false);
  zero0["strategy"]["zero"] = 0;
  zero0["strategy"].erase("gradient_sync");
  EXPECT_NE(message(zero0).find("/workload/fp8_param_gather"), std::string::npos) << message(zero0);
  EXPECT_NE(message(zero0).find("got zero 0"), std::string::npos) << message(zero0);
  nlohmann::json plain = llama8b_gathered(true, false);
  plain["strategy"] = {{"kind", "data_parallel"}};
  EXPECT_NE(message(plain).find("/workload/fp8_param_gather"), std::string::npos) << message(plain);
  EXPECT_NE(message(plain).find("strategy kind \"data_parallel\""), std::string::npos) << message(plain);
}

TEST(Fp8Run, FasterThanBf16ButNotTwiceAndTheReportSaysSo) {
  // Llama 3 70B on 64 H100s (tensor 8 x pipeline 4 x data 2): the GEMMs take at most half as long in FP8, attention,
  // norms and communication as long, and the casts add to them.
  const nlohmann::json bf16 = run_scenario_json("llama3-70b-3d-64xh100.json", {});
  const nlohmann::json fp8 = run_scenario_json("llama3-70b-3d-64xh100.json", {"/workload/fp8=tensorwise"});
  const double a = bf16["summary"]["makespan_s"].get<double>();
  const double b = fp8["summary"]["makespan_s"].get<double>();
  EXPECT_LT(b, 0.9 * a);
  EXPECT_GT(b, 0.5 * a);
  const std::string strategy = fp8["strategy"].get<std::string>();
  EXPECT_NE(strategy.find("FP8 layer GEMMs (tensorwise scaling)"), std::string::npos) << strategy;
  EXPECT_EQ(bf16["strategy"].get<std::string>().find("FP8"), std::string::npos);
}

} // namespace
} // namespace partsim::test
