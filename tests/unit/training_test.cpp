// Model training arithmetic and its scenario syntax: memory per replica, optimizer state, gradient buckets, unit
// times from the cost model, and the bad-input errors of model_training, collective and gradient_sync.
#include "partsim/model/cost_model.hpp"
#include "partsim/model/training.hpp"
#include "partsim/plan/strategy.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

namespace partsim::test {
namespace {

nlohmann::json training_scenario(const std::string& model = "gpt3-1.3b", int gpus = 8) {
  nlohmann::json doc = base_scenario(1, gpus);
  doc["cluster"]["gpu"] = "a100-sxm4-80gb";
  doc["workload"] = {{"kind", "model_training"}, {"model", model}, {"global_batch", 64}, {"micro_batch", 2}};
  doc["strategy"] = {{"kind", "data_parallel"}};
  return doc;
}

const ModelTraining& training_of(const Scenario& s) {
  return std::get<ModelTraining>(s.workload);
}

TEST(Training, BytesPerElementFollowTheDataType) {
  EXPECT_EQ(bytes_per_element("fp32"), 4.0);
  EXPECT_EQ(bytes_per_element("tf32"), 4.0);
  EXPECT_EQ(bytes_per_element("bf16"), 2.0);
  EXPECT_EQ(bytes_per_element("fp16"), 2.0);
  EXPECT_EQ(bytes_per_element("fp8"), 1.0);
}

TEST(Training, OptimizerStepTrafficByClosedForm) {
  // bf16 Adam: norm 2, update 2 + 2 x 12, fp32 master -> bf16 weights 4 + 2, zeroing 2.
  EXPECT_EQ(optimizer_step_bytes_per_parameter(Optimizer::Adam, "bf16", true), 36.0);
  EXPECT_EQ(optimizer_step_bytes_per_parameter(Optimizer::Adam, "bf16", false), 34.0);
  // fp32 Adam, no master: norm 4, update 4 + 2 x 8, weights in place 2 x 4, zeroing 4.
  EXPECT_EQ(optimizer_step_bytes_per_parameter(Optimizer::Adam, "fp32", true), 36.0);
  // fp32 SGD without clipping: the gradient read, the weights in place, zeroing.
  EXPECT_EQ(optimizer_step_bytes_per_parameter(Optimizer::Sgd, "fp32", false), 16.0);
  // fp16 with dynamic loss scaling: the unscale-and-check pass reads and writes every gradient first (2 + 2).
  EXPECT_EQ(optimizer_step_bytes_per_parameter(Optimizer::Adam, "fp16", true, "", true), 40.0);
  EXPECT_EQ(optimizer_step_bytes_per_parameter(Optimizer::Adam, "fp16", true, "fp32", true),
            optimizer_step_bytes_per_parameter(Optimizer::Adam, "fp16", true, "fp32") + 8.0);

  // The step is that traffic at the achieved bandwidth (memory bound), one launch; clipping off removes one read.
  nlohmann::json doc = training_scenario();
  const Scenario clipped = parse(doc);
  doc["workload"]["gradient_clipping"] = false;
  const Scenario plain = parse(doc);
  const GpuProfile& gpu = clipped.cluster.gpu;
  const TrainingCost a = training_cost(training_of(clipped), gpu);
  const TrainingCost b = training_cost(training_of(plain), gpu);
  EXPECT_DOUBLE_EQ(a.optimizer_time,
                   a.parameters * 36.0 / gpu.achieved_memory_bandwidth() + gpu.kernel_launch_overhead.value);
  EXPECT_NEAR(a.optimizer_time - b.optimizer_time, a.parameters * 2.0 / gpu.achieved_memory_bandwidth(), 1e-12);

  // Loss scaling: on by default with fp16, off with bf16, settable; it adds the unscale pass's 2 + 2 bytes.
  EXPECT_FALSE(training_of(clipped).loss_scaling);
  doc["workload"]["gradient_clipping"] = true;
  doc["workload"]["data_type"] = "fp16";
  const Scenario scaled = parse(doc);
  EXPECT_TRUE(training_of(scaled).loss_scaling);
  doc["workload"]["loss_scaling"] = false;
  const Scenario unscaled = parse(doc);
  EXPECT_FALSE(training_of(unscaled).loss_scaling);
  const TrainingCost c = training_cost(training_of(scaled), gpu);
  const TrainingCost d = training_cost(training_of(unscaled), gpu);
  EXPECT_NEAR(c.optimizer_time - d.optimizer_time, c.parameters * 4.0 / gpu.achieved_memory_bandwidth(), 1e-12);
}

TEST(Training, EmbeddingBackwardWritesAndAccumulatesTheWholeTable) {
  // PyTorch's dense embedding backward zero-fills the rank's tables (e) and the gradient is accumulated into the one
  // the optimizer reads (read e, read and write e_g): bf16 with fp32 gradients 2 + 2 + 2 x 4 = 12 bytes per element
  // of vocab_shard·h plus the learned position table; 8 with bf16 gradients. Nothing else of the outer ops changes.
  nlohmann::json doc = training_scenario();
  doc["workload"]["data_type"] = "bf16";
  doc["workload"]["gradient_data_type"] = "fp32";
  const Scenario fp32_gradients = parse(doc);
  doc["workload"]["gradient_data_type"] = "bf16";
  const Scenario bf16_gradients = parse(doc);
  const ModelTraining& training = training_of(fp32_gradients);
  const TransformerModel model = training.transformer();
  const TransformerConfig& c = model.config();
  ASSERT_EQ(c.position, PositionEmbedding::Learned);
  for (const int tensor : {1, 2}) {
    const TensorSplit split{tensor, false};
    const double table = static_cast<double>(model.vocab_shard(tensor) * c.hidden + c.sequence_length * c.hidden);
    const std::vector<ComputeOp> plain = model.outer_ops(2, split);
    const std::vector<ComputeOp> run = training_outer_ops(training, model, 2, split);
    const std::vector<ComputeOp> bf16 = training_outer_ops(training_of(bf16_gradients), model, 2, split);
    ASSERT_EQ(run.size(), plain.size());
    for (std::size_t i = 0; i < run.size(); ++i) {
      const bool embedding = run[i].name == "embedding";
      EXPECT_DOUBLE_EQ(run[i].backward_bytes(2.0) - plain[i].backward_bytes(2.0), embedding ? 12.0 * table : 0.0)
          << run[i].name;
      EXPECT_DOUBLE_EQ(bf16[i].backward_bytes(2.0) - plain[i].backward_bytes(2.0), embedding ? 8.0 * table : 0.0)
          << run[i].name;
      EXPECT_DOUBLE_EQ(run[i].forward_bytes(2.0), plain[i].forward_bytes(2.0)) << run[i].name;
    }
  }
  // The training cost prices it: the embedding unit's backward grows by the traffic at the achieved bandwidth.
  const GpuProfile& gpu = fp32_gradients.cluster.gpu;
  const TrainingCost a = training_cost(training, gpu);
  const TrainingCost b = training_cost(training_of(bf16_gradients), gpu);
  const double table = static_cast<double>(model.vocab_shard(1) * c.hidden + c.sequence_length * c.hidden);
  EXPECT_NEAR(a.units.front().backward_time - b.units.front().backward_time,
              4.0 * table / gpu.achieved_memory_bandwidth(), 1e-12);
}

TEST(Training, MixedPrecisionAdamKeepsSixteenBytesPerParameter) {
  // ZeRO (Rajbhandari et al. 2020): 2 (fp16 weights) + 2 (fp16 gradients) + 12 (fp32 master, momentum, variance).
  EXPECT_EQ(optimizer_bytes_per_parameter(Optimizer::Adam, "bf16"), 12.0);
  EXPECT_EQ(optimizer_bytes_per_parameter(Optimizer::Adam, "fp32"), 8.0);
  EXPECT_EQ(optimizer_bytes_per_parameter(Optimizer::SgdMomentum, "bf16"), 8.0);
  EXPECT_EQ(optimizer_bytes_per_parameter(Optimizer::Sgd, "fp32"), 0.0);
  const Scenario s = parse(training_scenario());
  const MemoryBreakdown m = data_parallel_memory(training_of(s), s.cluster.gpu);
  const double params = training_of(s).transformer().parameters();
  EXPECT_DOUBLE_EQ(m.parameters + m.gradients + m.optimizer_states, 16.0 * params);
  EXPECT_DOUBLE_EQ(m.workspace, 1024.0 * 1024 * 1024); // the documented default
  EXPECT_DOUBLE_EQ(m.capacity, 80e9);
}

TEST(Training, ActivationMemoryIsTheModelsAccountingPerMicroBatch) {
  const Scenario s = parse(training_scenario());
  const ModelTraining& t = training_of(s);
  const TransformerModel model = t.transformer();
  const MemoryBreakdown m = data_parallel_memory(t, s.cluster.gpu);
  const double expected =
      static_cast<double>(model.config().layers) * model.layer_activation_bytes(2, Recomputation::None, 2.0) +
      model.outer_activation_bytes(2, 2.0);
  EXPECT_DOUBLE_EQ(m.activations, expected);
}

TEST(Training, FullRecomputationKeepsLayerInputsPlusOneLayer) {
  nlohmann::json doc = training_scenario();
  doc["workload"]["recomputation"] = "full";
  const Scenario s = parse(doc);
  const TransformerModel model = training_of(s).transformer();
  const MemoryBreakdown m = data_parallel_memory(training_of(s), s.cluster.gpu);
  const double layers = static_cast<double>(model.config().layers);
  EXPECT_DOUBLE_EQ(m.activations, layers * model.layer_activation_bytes(2, Recomputation::Full, 2.0) +
                                      model.layer_activation_bytes(2, Recomputation::None, 2.0) +
                                      model.outer_activation_bytes(2, 2.0));
}

TEST(Training, CrossEntropyTransientIsWhatTheLossHoldsBesideItsKeptLogits) {
  const double logits = 1e6;
  // Megatron: the training-type logits beside their fp32 copy (forward), the cast-back gradient beside the fp32 one
  // (backward); none when the logits are fp32 already.
  EXPECT_DOUBLE_EQ(cross_entropy_transient_bytes(CrossEntropyKernel::MegatronFp32, logits, 2.0), 2.0 * logits);
  EXPECT_DOUBLE_EQ(cross_entropy_transient_bytes(CrossEntropyKernel::MegatronFp32, logits, 4.0), 0.0);
  // PyTorch's cross_entropy on pred.float(): forward e + 4 (the logits and the copy), backward 8 (the nll gradient
  // and log_softmax's input gradient), whichever is larger.
  EXPECT_DOUBLE_EQ(cross_entropy_transient_bytes(CrossEntropyKernel::Fp32LogSoftmax, logits, 2.0), 8.0 * logits);
  EXPECT_DOUBLE_EQ(cross_entropy_transient_bytes(CrossEntropyKernel::Fp32LogSoftmax, logits, 4.0), 8.0 * logits);
  EXPECT_DOUBLE_EQ(cross_entropy_transient_bytes(CrossEntropyKernel::Fused, logits, 2.0), 0.0);
  // A plain replica holds the whole vocabulary's logits: micro-batch 2 x sequence x vocabulary.
  nlohmann::json doc = training_scenario();
  doc["workload"]["cross_entropy"] = "megatron_fp32";
  const Scenario megatron = parse(doc);
  doc["workload"]["cross_entropy"] = "fp32_log_softmax";
  const Scenario titan = parse(doc);
  const Scenario fused = parse(training_scenario());
  ASSERT_EQ(training_of(fused).kernels.cross_entropy, CrossEntropyKernel::Fused);
  const TransformerModel model = training_of(fused).transformer();
  const auto& c = model.config();
  const double replica = 2.0 * static_cast<double>(c.sequence_length) * static_cast<double>(c.vocab);
  const double base = data_parallel_memory(training_of(fused), fused.cluster.gpu).activations;
  EXPECT_NEAR(data_parallel_memory(training_of(megatron), megatron.cluster.gpu).activations - base, 2.0 * replica, 1.0);
  EXPECT_NEAR(data_parallel_memory(training_of(titan), titan.cluster.gpu).activations - base, 8.0 * replica, 1.0);
}

TEST(Training, LlamaSeventyBillionDoesNotFitOneGpuAsPlainDataParallel) {
  const Scenario s = parse(training_scenario("llama3-70b"));
  const MemoryBreakdown m = data_parallel_memory(training_of(s), s.cluster.gpu);
  EXPECT_FALSE(m.fits());
  EXPECT_GT(m.parameters + m.gradients + m.optimizer_states, 16.0 * 70e9 * 0.99);
}

TEST(Training, UnitsCoverTheModelAndItsParameters) {
  const Scenario s = parse(training_scenario());
  const TrainingCost cost = training_cost(training_of(s), s.cluster.gpu);
  const TransformerModel model = training_of(s).transformer();
  ASSERT_EQ(cost.units.size(), static_cast<std::size_t>(model.config().layers) + 2); // embedding, layers, head
  double params = 0.0;
  for (const TrainingUnit& u : cost.units) params += u.parameters;
  EXPECT_NEAR(params, model.parameters(), model.parameters() * 1e-12);
  // The unit times are the cost model's op times: one layer's forward is the sum over its ops.
  double layer_forward = 0.0;
  for (const ComputeOp& op : model.layer_ops(2)) layer_forward += op_time(op, s.cluster.gpu, "bf16", 2.0, false);
  EXPECT_DOUBLE_EQ(cost.units[1].forward_time, layer_forward);
  EXPECT_GT(cost.units[1].backward_time, cost.units[1].forward_time); // two products per GEMM
  EXPECT_DOUBLE_EQ(cost.model_flops_per_sample, model.training_flops(1, Recomputation::None).total());
}

TEST(Training, SelectiveRecomputationAddsTheAttentionCoreToTheBackward) {
  nlohmann::json doc = training_scenario();
  const Scenario plain = parse(doc);
  doc["workload"]["recomputation"] = "selective";
  const Scenario selective = parse(doc);
  const TrainingCost a = training_cost(training_of(plain), plain.cluster.gpu);
  const TrainingCost b = training_cost(training_of(selective), selective.cluster.gpu);
  double recomputed = 0.0;
  for (const ComputeOp& op : training_of(plain).transformer().layer_ops(2))
    if (op.selectively_recomputed) recomputed += op_time(op, plain.cluster.gpu, "bf16", 2.0, false);
  EXPECT_NEAR(b.units[1].backward_time - a.units[1].backward_time, recomputed, 1e-15);
  EXPECT_DOUBLE_EQ(a.model_flops_per_sample, b.model_flops_per_sample); // MFU never counts recomputation
  EXPECT_GT(b.hardware_flops_per_sample, a.hardware_flops_per_sample);
}

TEST(Training, BucketsFillFromTheLastUnitAndHoldEveryGradient) {
  const Scenario s = parse(training_scenario("gpt2-small"));
  const TrainingCost cost = training_cost(training_of(s), s.cluster.gpu);
  const double cap = 25.0 * 1024 * 1024;
  const std::vector<GradientBucket> buckets = gradient_buckets(cost, 2.0, cap);
  ASSERT_FALSE(buckets.empty());
  EXPECT_EQ(buckets.front().last, cost.units.size() - 1); // the head's gradients are ready first
  EXPECT_EQ(buckets.back().first, 0u);                    // the embedding's last
  double total = 0.0;
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    total += static_cast<double>(buckets[b].bytes);
    if (b + 1 < buckets.size()) {
      EXPECT_EQ(buckets[b + 1].last + 1, buckets[b].first); // contiguous, no unit twice
      EXPECT_GE(static_cast<double>(buckets[b].bytes), cap);
    }
  }
  EXPECT_NEAR(total, 2.0 * cost.parameters, 2.0 * static_cast<double>(buckets.size()));
  EXPECT_EQ(gradient_buckets(cost, 2.0, 1e15).size(), 1u); // a huge cap: one all-reduce of everything
}

TEST(Training, PlanRunsAccumulationBucketsAndTheOptimizer) {
  nlohmann::json doc = training_scenario("gpt2-small");
  const Scenario s = parse(doc);
  const Plan plan = build_plan(s);
  ASSERT_EQ(plan.ranks.size(), 8u);
  const auto steps = resolved_steps(plan, 0);
  std::size_t collectives = 0;
  for (const Step& step : steps)
    if (const auto* c = std::get_if<CollectiveStep>(&step)) {
      ++collectives;
      EXPECT_EQ(c->stream, 1);
      EXPECT_EQ(c->op, CollectiveOp::AllReduce);
    }
  EXPECT_EQ(collectives, plan.gradient_buckets);
  EXPECT_TRUE(std::holds_alternative<StreamSyncStep>(steps[steps.size() - 2]));
  EXPECT_EQ(std::get<ComputeStep>(steps.front()).samples, 8u); // 64 sequences over 8 replicas
  const TrainingCost cost = training_cost(training_of(s), s.cluster.gpu);
  const double peak = s.cluster.gpu.peak("bf16");
  double amount = 0.0;
  for (const Step& step : steps)
    if (const auto* c = std::get_if<ComputeStep>(&step)) amount += c->amount;
  // 4 micro-batches of 2 per replica, then the optimizer step.
  EXPECT_NEAR(amount / peak, 4.0 * (cost.forward_time() + cost.backward_time()) + cost.optimizer_time, 1e-9);
  EXPECT_DOUBLE_EQ(plan.model_flops_per_iteration, 64.0 * cost.model_flops_per_sample);
  EXPECT_DOUBLE_EQ(plan.tokens_per_iteration, 64.0 * 1024.0);
}

TEST(Training, DataLoadingIsOneHostWaitPerIterationOfEveryMicroBatchsFigure) {
  nlohmann::json doc = training_scenario("gpt2-small");
  const auto host_steps = [](const std::vector<Step>& steps) {
    return std::count_if(steps.begin(), steps.end(),
                         [](const Step& step) { return std::holds_alternative<HostStep>(step); });
  };
  EXPECT_EQ(training_of(parse(doc)).data_loading, 0.0); // the documented default
  EXPECT_EQ(host_steps(resolved_steps(build_plan(parse(doc)), 0)), 0);
  doc["workload"]["data_loading"] = "2.5ms";
  const Scenario s = parse(doc);
  EXPECT_DOUBLE_EQ(training_of(s).data_loading, 2.5e-3);
  const Plan plan = build_plan(s);
  const auto steps = resolved_steps(plan, 0);
  // 4 micro-batches per replica, loaded before the iteration's compute; the one-GPU reference loads all 32.
  ASSERT_TRUE(std::holds_alternative<HostStep>(steps.front()));
  EXPECT_DOUBLE_EQ(std::get<HostStep>(steps.front()).seconds, 4.0 * 2.5e-3);
  EXPECT_EQ(host_steps(steps), 1);
  EXPECT_DOUBLE_EQ(plan.baseline_host, 32.0 * 2.5e-3);
}

TEST(Training, NoOverlapRunsTheAllReducesAfterTheBackwardPass) {
  nlohmann::json doc = training_scenario("gpt2-small");
  doc["strategy"]["gradient_sync"] = {{"algorithm", "ring"}, {"fidelity", "steps"}, {"overlap", false}};
  const Plan plan = build_plan(parse(doc));
  for (const Step& step : resolved_steps(plan, 0)) {
    EXPECT_FALSE(std::holds_alternative<StreamSyncStep>(step));
    if (const auto* c = std::get_if<CollectiveStep>(&step)) {
      EXPECT_EQ(c->stream, 0);
    }
  }
}

TEST(Training, CnnTrainsLayerByLayer) {
  nlohmann::json doc = training_scenario("resnet50");
  doc["workload"]["micro_batch"] = 8;
  const Scenario s = parse(doc);
  const TrainingCost cost = training_cost(training_of(s), s.cluster.gpu);
  EXPECT_EQ(cost.units.size(), training_of(s).model.cnn().layers().size());
  EXPECT_NEAR(cost.parameters, 25.557e6, 0.01e6);
  EXPECT_EQ(cost.tokens_per_sample, 1.0);
}

// --- bad input ------------------------------------------------------------------------------------------------------

void expect_error(const nlohmann::json& doc, const std::string& pointer, const std::string& detail) {
  const InputError e = input_error([&] { parse(doc); });
  EXPECT_EQ(e.pointer(), pointer) << e.what();
  EXPECT_NE(std::string(e.detail()).find(detail), std::string::npos) << e.what();
}

TEST(TrainingErrors, DataLoadingIsANonNegativeTime) {
  nlohmann::json doc = training_scenario("gpt2-small");
  doc["workload"]["data_loading"] = -1;
  expect_error(doc, "/workload/data_loading", "");
  doc["workload"]["data_loading"] = "3 GB";
  expect_error(doc, "/workload/data_loading", "");
}

TEST(TrainingErrors, GlobalBatchMustSplitIntoMicroBatchesPerReplica) {
  nlohmann::json doc = training_scenario();
  doc["workload"]["global_batch"] = 60;
  expect_error(doc, "/workload/global_batch", "expected a multiple of micro_batch x data-parallel replicas = 2 x 8");
}

TEST(TrainingErrors, UnknownModelNamesTheKey) {
  nlohmann::json doc = training_scenario();
  doc["workload"]["model"] = "gpt-5";
  const InputError e = input_error([&] { parse(doc); });
  EXPECT_EQ(e.pointer(), "/workload/model") << e.what();
}

TEST(TrainingErrors, RecomputationIsForTransformers) {
  nlohmann::json doc = training_scenario("resnet50");
  doc["workload"]["recomputation"] = "full";
  expect_error(doc, "/workload/recomputation", "expected \"none\" for a CNN");
}

TEST(TrainingErrors, SequenceLengthIsForTransformers) {
  nlohmann::json doc = training_scenario("resnet50");
  doc["workload"]["sequence_length"] = 128;
  expect_error(doc, "/workload/sequence_length", "only a transformer");
}

TEST(TrainingErrors, MicroBatchAtMostTheGlobalBatch) {
  nlohmann::json doc = training_scenario();
  doc["workload"]["micro_batch"] = 128;
  expect_error(doc, "/workload/micro_batch", "expected at most the global batch (64)");
}

TEST(TrainingErrors, DataTypeMustHaveAPeak) {
  nlohmann::json doc = training_scenario();
  doc["workload"]["data_type"] = "fp8";
  expect_error(doc, "/workload/data_type", "has no peak rate for fp8");
}

TEST(TrainingErrors, BalancingIsForDataJobs) {
  nlohmann::json doc = training_scenario();
  doc["strategy"]["balancing"] = {{"policy", "work_queue"}};
  expect_error(doc, "/strategy/balancing", "applies to data jobs");
}

TEST(TrainingErrors, SharesAreEqualInTraining) {
  nlohmann::json doc = training_scenario();
  doc["strategy"]["shares"] = {{"skewed", 0.5}};
  expect_error(doc, "/strategy/shares", "one replica per GPU with equal shares");
}

TEST(TrainingErrors, BucketsNeedAModel) {
  nlohmann::json doc = base_scenario(4, 1);
  doc["workload"]["gradient_bytes"] = "1GB";
  doc["strategy"]["gradient_sync"] = {{"bucket_size", "25MB"}};
  expect_error(doc, "/strategy/gradient_sync/bucket_size", "need a model's backward pass");
}

TEST(TrainingErrors, AllReduceAlgorithmMustComputeAnAllReduce) {
  nlohmann::json doc = training_scenario();
  doc["strategy"]["gradient_sync"] = {{"algorithm", "direct"}};
  expect_error(doc, "/strategy/gradient_sync/algorithm", "direct cannot run all_reduce");
}

TEST(TrainingErrors, UnknownFidelity) {
  nlohmann::json doc = training_scenario();
  doc["strategy"]["gradient_sync"] = {{"fidelity", "exact"}};
  expect_error(doc, "/strategy/gradient_sync/fidelity", "expected one of auto, steps, flows, analytic");
}

TEST(TrainingErrors, GradientSyncStringMustBeKnown) {
  nlohmann::json doc = training_scenario();
  doc["strategy"]["gradient_sync"] = "nccl";
  expect_error(doc, "/strategy/gradient_sync", "expected \"none\", \"ring_allreduce\", \"all_reduce\" or an object");
}

TEST(CollectiveErrors, CollectiveWorkloadNeedsTheCollectiveStrategy) {
  nlohmann::json doc = base_scenario(4, 1);
  doc["workload"] = {{"kind", "collective"}, {"operation", "all_to_all"}, {"bytes", "1GB"}};
  expect_error(doc, "/strategy/kind", "a collective workload runs with strategy kind \"collective\"");
  doc["strategy"] = {{"kind", "collective"}, {"algorithm", "ring"}};
  expect_error(doc, "/strategy/algorithm", "ring cannot run all_to_all; expected one of: auto, direct");
  // The engine has no tree broadcast: an input error, not an internal check failing mid-run.
  doc["workload"]["operation"] = "broadcast";
  doc["strategy"]["algorithm"] = "tree";
  expect_error(doc, "/strategy/algorithm", "tree cannot run broadcast; expected one of: auto, ring");
}

TEST(CollectiveErrors, RootOnlyForBroadcastAndWithinTheCluster) {
  nlohmann::json doc = base_scenario(4, 1);
  doc["workload"] = {{"kind", "collective"}, {"operation", "all_reduce"}, {"bytes", "1GB"}, {"root", 1}};
  doc["strategy"] = {{"kind", "collective"}};
  expect_error(doc, "/workload/root", "only a broadcast has a root");
  doc["workload"]["operation"] = "broadcast";
  doc["workload"]["root"] = 4;
  expect_error(doc, "/workload/root", "expected an integer >= 0 and <= 3");
}

TEST(CollectiveErrors, UnknownOperation) {
  nlohmann::json doc = base_scenario(4, 1);
  doc["workload"] = {{"kind", "collective"}, {"operation", "gather"}, {"bytes", "1GB"}};
  doc["strategy"] = {{"kind", "collective"}};
  expect_error(doc, "/workload/operation",
               "expected one of all_reduce, reduce_scatter, all_gather, all_to_all, "
               "broadcast, got \"gather\"");
}

} // namespace
} // namespace partsim::test
