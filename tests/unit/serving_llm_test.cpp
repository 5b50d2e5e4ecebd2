// The LLM serving stage: its cost model held to closed forms (decode step, KV-cache capacity, prefill against the
// training cost model's forward pass, tensor-parallel all-reduces) and whole runs held to those prices (a lone
// request, requests waiting for KV room, two prompts prefilled together), its parser's errors and determinism. Each
// TEST runs at most one simulation in its process (SimGrid 3.32 allows one engine per process).
#include "partsim/engine/serving_engine.hpp"
#include "partsim/model/cost_model.hpp"
#include "partsim/model/training.hpp"
#include "partsim/report/report_document.hpp"
#include "partsim/serving/llm_cost.hpp"
#include "partsim/serving/serving_report.hpp"
#include "partsim/serving/serving_spec.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>

namespace partsim {
namespace {

using nlohmann::json;

json fixed_tokens(std::int64_t n) {
  return {{"distribution", "fixed"}, {"mean", n}};
}

/** One node of 8 H100s on NVLink 4, one LLM stage of Llama 3 8B: `replicas` replicas of `tensor` GPUs. */
json llm_scenario(json llm, int replicas, json arrivals, std::int64_t requests) {
  json doc = test::base_scenario(1, 8);
  doc["cluster"]["gpu"] = "h100-sxm5-80gb";
  doc["cluster"]["intra_node_link"] = {{"profile", "nvlink4"}};
  json stage = {{"name", "llm"}, {"pool", {{"nodes", 1}, {"replicas_per_node", replicas}}}, {"llm", llm}};
  doc["workload"] = {{"kind", "serving"},
                     {"stages", json::array({stage})},
                     {"arrivals", arrivals},
                     {"requests", requests},
                     {"warmup", 0}};
  doc["strategy"] = {{"kind", "serving"}};
  return doc;
}

json llama(std::int64_t prompt, std::int64_t output) {
  return {{"model", "llama3-8b"}, {"input_tokens", fixed_tokens(prompt)}, {"output_tokens", fixed_tokens(output)}};
}

/** Two clients sending one request each at time 0 (a closed loop without think time). */
json two_at_once() {
  return {{"process", "closed"}, {"clients", 2}};
}

ReportServing run(const json& doc) {
  const Scenario scenario = test::parse(doc);
  const ServingRunResult result = simulate_serving(scenario);
  return make_serving_section(std::get<ServingWorkload>(scenario.workload), result);
}

/** The cost model of the stage of `doc`. */
LlmReplicaCost cost_of(const json& doc) {
  const Scenario scenario = test::parse(doc);
  const LlmStage& llm = *std::get<ServingWorkload>(scenario.workload).stages.at(0).llm;
  return LlmReplicaCost(llm.model, scenario.cluster.gpu, llm.data_type, llm.tensor_parallel,
                        two_level_cost(scenario.cluster), llm.workspace_fraction);
}

// Llama 3 8B by hand (Meta's config.json: h 4096, 32 layers, 32 heads, 8 KV heads of 128, ffn 14336, vocab 128256):
// per layer q and o 4096 x 4096, k and v 4096 x 1024, MLP 3 x 4096 x 14336, two RMSNorms of 4096.
constexpr double kLayerParameters = 4096.0 * 4096 * 2 + 4096.0 * 1024 * 2 + 3 * 4096.0 * 14336 + 2 * 4096;
constexpr double kHeadParameters = 128256.0 * 4096;
constexpr double kParameters = 32 * kLayerParameters + 2 * kHeadParameters + 4096; // embedding, head, final norm

// --- the cost model, by closed forms -------------------------------------------------------------------------

TEST(LlmCost, WeightsAndKvCacheOfLlama3_8B) {
  EXPECT_DOUBLE_EQ(kParameters, 8'030'261'248.0); // Meta: 8.03B
  const json doc = llm_scenario(llama(512, 128), 1, two_at_once(), 2);
  const LlmReplicaCost cost = cost_of(doc);
  EXPECT_DOUBLE_EQ(cost.weight_bytes(), 2 * kParameters);
  EXPECT_DOUBLE_EQ(cost.weight_bytes_read(), 2 * (32 * kLayerParameters + kHeadParameters + 4096));
  // 2 (K, V) x 32 layers x 8 KV heads x 128 x 2 bytes = 128 KiB per token.
  EXPECT_DOUBLE_EQ(cost.kv_bytes_per_token(), 2.0 * 32 * 8 * 128 * 2);
  // H100 80 GB, 10% workspace: (80e9 - 16.06e9 - 8e9) / 131072 = 426,784 tokens.
  EXPECT_EQ(cost.kv_capacity_tokens(), static_cast<std::int64_t>(std::floor((80e9 - 2 * kParameters - 8e9) / 131072)));
  EXPECT_EQ(cost.kv_capacity_tokens(), 426'784);
}

TEST(LlmCost, KvCapacityFollowsTensorParallelismAndWorkspace) {
  json doc = llm_scenario(llama(512, 128), 2, two_at_once(), 2);
  doc["workload"]["stages"][0]["llm"]["tensor_parallel"] = 4;
  doc["workload"]["stages"][0]["llm"]["workspace_fraction"] = 0.25;
  const LlmReplicaCost cost = cost_of(doc);
  // Each GPU holds a quarter of the KV heads and of every sharded weight (norms whole).
  EXPECT_DOUBLE_EQ(cost.kv_bytes_per_token(), 2.0 * 32 * 2 * 128 * 2);
  const double layer = (4096.0 * 4096 * 2 + 4096.0 * 1024 * 2 + 3 * 4096.0 * 14336) / 4 + 2 * 4096;
  const double weights = 2 * (32 * layer + 2 * kHeadParameters / 4 + 4096);
  EXPECT_DOUBLE_EQ(cost.weight_bytes(), weights);
  EXPECT_EQ(cost.kv_capacity_tokens(), static_cast<std::int64_t>(std::floor((0.75 * 80e9 - weights) / 32768)));
}

TEST(LlmCost, DecodeStepIsTheRooflineOfWeightsAndKvCache) {
  const json doc = llm_scenario(llama(512, 128), 1, two_at_once(), 2);
  const Scenario scenario = test::parse(doc);
  const GpuProfile& gpu = scenario.cluster.gpu;
  const LlmReplicaCost cost = cost_of(doc);
  const double bandwidth = 3.35e12 * 0.887; // the profile's datasheet HBM3 x BabelStream's triad fraction
  EXPECT_DOUBLE_EQ(gpu.achieved_memory_bandwidth(), bandwidth);
  const double matrix = 32 * kLayerParameters + kHeadParameters;
  const double weights_read = 2 * (matrix + 4096);
  int memory_bound = 0, compute_bound = 0;
  for (const auto& [batch, context] : std::vector<std::pair<std::int64_t, double>>{{1, 600.0},
                                                                                   {16, 16 * 1500.0},
                                                                                   {16, 16 * 100000.0},
                                                                                   {64, 64 * 300.0},
                                                                                   {256, 256 * 200.0},
                                                                                   {1024, 1024 * 100.0}}) {
    const double bytes = weights_read + 131072.0 * context;
    const double weight_flops = 2.0 * batch * matrix;
    const double attention_flops = 4.0 * 32 * 32 * 128 * context;
    const double rate = gpu.peak("bf16") * gemm_efficiency(gpu, GemmShape{1, batch, 14336, 4096}, "bf16");
    // The attention's flops at the dense peak: the few-row GEMM rate already holds the weights' reads.
    const double compute = weight_flops / rate + attention_flops / gpu.peak("bf16");
    const double expected = std::max(bytes / bandwidth, compute);
    (bytes / bandwidth >= compute ? memory_bound : compute_bound) += 1;
    EXPECT_DOUBLE_EQ(cost.decode_bytes(batch, context), bytes);
    EXPECT_DOUBLE_EQ(cost.decode_weight_flops(batch), weight_flops);
    EXPECT_DOUBLE_EQ(cost.decode_attention_flops(context), attention_flops);
    EXPECT_NEAR(cost.decode_step_time(batch, context), expected, 1e-12 * expected) << "batch " << batch;
  }
  // Both sides of the roofline are exercised. 16 requests of 100,000 tokens read 15 GB of weights and 210 GB of keys
  // and values (75.7 ms at 2.97 TB/s); one request of 600 is the profile's measured GEMV time (Vidur's H100 layers at
  // one row, slower than BabelStream's bandwidth reads the weights), the longer side.
  EXPECT_GT(memory_bound, 0);
  EXPECT_GT(compute_bound, 0);
  EXPECT_NEAR(cost.decode_step_time(16, 16 * 100000.0), (weights_read + 131072.0 * 16 * 100000) / bandwidth, 1e-15);
  EXPECT_GT(cost.decode_step_time(1, 600.0), (weights_read + 131072.0 * 600) / bandwidth);
}

TEST(LlmCost, MixtureOfExpertsReadsTheExpertsItsTokensGoTo) {
  // Mixtral 8x7B on 2 H100s: every expert's width split over the 2 ranks (vLLM's fused MoE), so a GPU holds half of
  // each of the 8 experts; a decode step of B tokens reads 8 x (1 - (1 - 2/8)^B) experts a layer on average: the 2 a
  // token goes to at B = 1, nearly all 8 at B = 64.
  json llm = llama(512, 128);
  llm["model"] = "mixtral-8x7b";
  llm["tensor_parallel"] = 2;
  const json doc = llm_scenario(llm, 4, two_at_once(), 2);
  const LlmReplicaCost cost = cost_of(doc);
  const TransformerModel m(
      std::get<TransformerConfig>(load_workload(test::source_dir(), "mixtral-8x7b", "test", "/model").config));
  const double experts = m.expert_parameters(); // the 8 routed experts of a layer, whole
  const double layer = m.layer_parameters(2) - experts / 2;
  EXPECT_DOUBLE_EQ(cost.weight_bytes(), 2.0 * (32 * layer + m.embedding_parameters(2) + m.output_parameters(2)));
  const double per_expert = 2.0 * experts / 2 / 8; // bytes of one expert's half on one GPU
  EXPECT_DOUBLE_EQ(cost.expert_bytes_read(1), 32 * 2 * per_expert);
  EXPECT_NEAR(cost.expert_bytes_read(64), 32 * 8 * per_expert * (1 - std::pow(0.75, 64)), 1.0);
  EXPECT_DOUBLE_EQ(cost.decode_bytes(1, 0.0), cost.weight_bytes_read() + 32 * 2 * per_expert);
  EXPECT_DOUBLE_EQ(cost.weight_bytes_read(), 2.0 * (32 * (layer - experts / 2) + m.output_parameters(2)));
  // A token's flops: the dense part and 2 of the 8 experts (half of each on this GPU), and the LM head shard.
  const double head = 16000.0 * 4096;
  EXPECT_DOUBLE_EQ(cost.decode_weight_flops(1), 2.0 * (32 * (layer - experts / 2 + experts / 2 * 2 / 8) + head));
  // Prefill: the experts' GEMMs split by the tensor ranks too, so 4 GPUs take about half the time of 2.
  json four = llm;
  four["tensor_parallel"] = 4;
  const LlmReplicaCost wider = cost_of(llm_scenario(four, 2, two_at_once(), 2));
  const double ratio = wider.layer_gemm_time(4096) / cost.layer_gemm_time(4096);
  EXPECT_GT(ratio, 0.45);
  EXPECT_LT(ratio, 0.6);
}

TEST(LlmCost, TensorParallelDecodeAddsTwoRingAllReducesPerLayer) {
  json doc = llm_scenario(llama(512, 128), 4, two_at_once(), 2);
  doc["workload"]["stages"][0]["llm"]["tensor_parallel"] = 2;
  const Scenario scenario = test::parse(doc);
  const LlmReplicaCost cost = cost_of(doc);
  const LinkSpec& link = scenario.cluster.intra_node;
  const std::int64_t batch = 32;
  const double context = 32 * 1000.0;
  // All-reduce over 2 GPUs of 32 tokens x 4096 x 2 bytes (256 KB), as NCCL's tuner picks: a ring (or tree) with LL
  // or LL128, its protocol's latency on top of the alpha-beta form of its bytes on the wire.
  const double bytes = batch * 4096.0 * 2;
  const TwoLevelCost links = two_level_cost(scenario.cluster);
  const CollectiveMethod method = choose_method(CollectiveOp::AllReduce, 2, 1, bytes, links);
  EXPECT_NE(method.protocol, CollectiveProtocol::Simple);
  const double ring =
      collective_time(CollectiveOp::AllReduce, method.algorithm, method.protocol, bytes, 2, 2, 1, links);
  EXPECT_GT(ring, 2.0 * (link.latency + bytes / 2 / link.bandwidth)); // the protocol's latency
  EXPECT_NEAR(cost.all_reduce_time(batch), ring, 1e-15);
  const double roofline = std::max(cost.decode_bytes(batch, context) / scenario.cluster.gpu.achieved_memory_bandwidth(),
                                   cost.decode_weight_flops(batch) / cost.decode_rate(batch) +
                                       cost.decode_attention_flops(context) / scenario.cluster.gpu.peak("bf16"));
  EXPECT_NEAR(cost.decode_step_time(batch, context), roofline + 64 * ring, 1e-12);
  EXPECT_DOUBLE_EQ(cost.kv_bytes_per_token(), 65536.0);
}

TEST(LlmCost, PrefillIsTheCostModelsForwardPass) {
  const json doc = llm_scenario(llama(512, 128), 1, two_at_once(), 2);
  const Scenario scenario = test::parse(doc);
  const GpuProfile& gpu = scenario.cluster.gpu;
  const LlmReplicaCost cost = cost_of(doc);
  const LlmStage& llm = *std::get<ServingWorkload>(scenario.workload).stages.at(0).llm;
  // The LM head over one token (the last prompt token's logits: the first output token).
  TransformerConfig one = llm.model;
  one.sequence_length = 1;
  double head = 0.0;
  for (const ComputeOp& op : TransformerModel(one).outer_ops(1))
    if (op.kind != OpKind::Loss) head += op_time(op, gpu, "bf16", 2.0, false);
  for (std::int64_t n : {128, 1000, 4096}) {
    // The training cost model's forward of one sequence of n tokens, its 32 layers.
    ModelTraining training;
    training.model = load_workload(test::source_dir(), "llama3-8b", "test", "/model");
    std::get<TransformerConfig>(training.model.config).sequence_length = n;
    const TrainingCost forward = training_cost(training, gpu);
    double layers = 0.0;
    for (const TrainingUnit& u : forward.units)
      if (u.name.starts_with("layer ")) layers += u.forward_time;
    const double prefill = cost.prefill_time({n});
    EXPECT_NEAR(prefill, layers + head, 1e-12 * prefill) << n << " tokens";
    // Compute bound: at least the flops of the matrices (2 x params x n) at the bf16 peak.
    EXPECT_GT(prefill, 2.0 * (32 * kLayerParameters) * n / gpu.peak("bf16"));
  }
  // Two prompts in one step share the weights' reads and run larger GEMMs: cheaper than one after the other, dearer
  // than the longer alone.
  const double both = cost.prefill_time({1000, 1000});
  EXPECT_LT(both, 2 * cost.prefill_time({1000}));
  EXPECT_GT(both, cost.prefill_time({1000}));
}

TEST(LlmTokenLengths, UniformAndShapedDraws) {
  Xoshiro256StarStar rng(3);
  const TokenLengths uniform{LengthKind::Uniform, 0.0, 0.0, 10, 20};
  std::int64_t lo = 100, hi = 0;
  double sum = 0;
  for (int i = 0; i < 100'000; ++i) {
    const std::int64_t n = sample(uniform, rng);
    lo = std::min(lo, n);
    hi = std::max(hi, n);
    sum += static_cast<double>(n);
  }
  EXPECT_EQ(lo, 10);
  EXPECT_EQ(hi, 20);
  EXPECT_NEAR(sum / 100'000, 15.0, 0.05);
  const TokenLengths gamma{LengthKind::Gamma, 200.0, 0.5, 8, 1000};
  sum = 0;
  for (int i = 0; i < 100'000; ++i) {
    const std::int64_t n = sample(gamma, rng);
    ASSERT_GE(n, 8);
    ASSERT_LE(n, 1000);
    sum += static_cast<double>(n);
  }
  EXPECT_NEAR(sum / 100'000, 200.0, 2.0);
  EXPECT_EQ(sample(TokenLengths{LengthKind::Fixed, 300.0, 0.0, 1, 0}, rng), 300);
}

// --- bad input -------------------------------------------------------------------------------------------

TEST(LlmInput, ErrorsNameTheField) {
  struct Case {
    std::string pointer;
    json value;
    std::string expected_pointer;
  };
  const std::string l = "/workload/stages/0/llm";
  const std::vector<Case> cases{
      {"/workload/stages/0/service", json{{"distribution", "fixed"}, {"mean", "1ms"}}, "/workload/stages/0/service"},
      {l + "/model", "resnet50", l + "/model"},
      {l + "/model", "no-such-model", l + "/model"},
      {l + "/tensor_parallel", 3, l + "/tensor_parallel"},
      {l + "/tensor_parallel", 16, l + "/tensor_parallel"},
      {l + "/max_num_seqs", 0, l + "/max_num_seqs"},
      {l + "/workspace_fraction", 1.5, l + "/workspace_fraction"},
      {l + "/workspace_fraction", 0.99, l + "/model"}, // the weights and the workspace leave no KV cache
      {l + "/output_tokens", json{{"distribution", "uniform"}, {"min", 10}}, l + "/output_tokens/max"},
      {l + "/output_tokens", json{{"distribution", "uniform"}, {"min", 10}, {"max", 5}}, l + "/output_tokens/max"},
      {l + "/output_tokens", json{{"distribution", "gamma"}, {"mean", 100}}, l + "/output_tokens/cv"},
      {l + "/input_tokens", json{{"distribution", "fixed"}, {"mean", 9000}}, l + "/max_num_batched_tokens"},
      {l + "/ttft_target", "-1s", l + "/ttft_target"},
      {l + "/max_tokens", 5, l + "/max_tokens"},
      {l + "/kv_admission", "swap", l + "/kv_admission"},
      {l + "/chunked_prefill", "yes", l + "/chunked_prefill"},
      {l + "/prefill_pool", json{{"nodes", 1}}, l + "/prefill_pool/nodes"}, // the cluster has one node
      {l + "/prefill_pool", json{{"nodes", 1}, {"replicas_per_node", 9}}, l + "/prefill_pool/replicas_per_node"},
      {l + "/prefill_pool", json{{"replicas_per_node", 1}}, l + "/prefill_pool/nodes"},
      {l + "/prefill_pool", json{{"nodes", 0}}, l + "/prefill_pool/nodes"},
  };
  for (const Case& c : cases) {
    json doc = llm_scenario(llama(512, 128), 1, two_at_once(), 2);
    doc[json::json_pointer(c.pointer)] = c.value;
    const InputError e = test::input_error([&] { test::parse(doc, "llm.json"); });
    EXPECT_EQ(e.source(), "llm.json") << c.pointer;
    EXPECT_EQ(e.pointer(), c.expected_pointer) << c.pointer << ": " << e.what();
  }
}

TEST(LlmInput, CliExitsTwoWithOneLine) {
  json doc = llm_scenario(llama(512, 128), 1, two_at_once(), 2);
  doc["workload"]["stages"][0]["llm"]["tensor_parallel"] = 3;
  const std::filesystem::path dir = test::temp_dir();
  std::ofstream(dir / "bad.json") << doc.dump(2);
  const test::CliResult r = test::run_cli({"run", "bad.json", "--no-files", "--no-progress"}, dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("bad.json: /workload/stages/0/llm/tensor_parallel"), std::string::npos) << r.err;
}

// --- whole runs held to the cost model -------------------------------------------------------------------

TEST(LlmServing, LoneRequestIsPrefillThenDecodeSteps) {
  // One request: TTFT is its prefill, and the rest of its time one decode step per further token, each reading the
  // weights and the KV cache grown by one token per step.
  const std::int64_t prompt = 700, output = 50;
  const json doc = llm_scenario(llama(prompt, output), 1, {{"process", "poisson"}, {"rate", 1}}, 1);
  const LlmReplicaCost cost = cost_of(doc);
  const ReportServing r = run(doc);
  ASSERT_TRUE(r.stages[0].llm.has_value());
  const ReportServingLlm& l = *r.stages[0].llm;
  double decode = 0.0;
  for (std::int64_t k = 0; k < output - 1; ++k) decode += cost.decode_step_time(1, static_cast<double>(prompt + k));
  const double prefill = cost.prefill_time({prompt});
  std::printf("lone request: prefill %.4f ms, %lld decode steps %.4f ms\n", prefill * 1e3,
              static_cast<long long>(output - 1), decode * 1e3);
  EXPECT_EQ(l.ttft.count, 1u);
  EXPECT_NEAR(l.ttft.mean, prefill, 1e-12);
  EXPECT_NEAR(r.latency.mean, prefill + decode, 1e-12);
  EXPECT_NEAR(l.tpot.mean, decode / static_cast<double>(output - 1), 1e-12);
  EXPECT_EQ(l.steps, static_cast<std::uint64_t>(output));
  EXPECT_EQ(l.output_tokens, static_cast<std::uint64_t>(output));
  EXPECT_EQ(l.kv_peak_tokens, static_cast<std::uint64_t>(prompt + output - 1));
  EXPECT_EQ(l.kv_blocked_steps, 0u);
}

TEST(LlmServing, TraceTokenCountsReplaceTheDrawnOnes) {
  // The lone request of LoneRequestIsPrefillThenDecodeSteps, its 700 prompt and 50 output tokens from a trace row,
  // while the stage would draw 100 and 10: the same closed forms.
  const std::int64_t prompt = 700, output = 50;
  const std::filesystem::path path = test::temp_dir() / "trace.csv";
  std::ofstream(path) << "arrival_s,in,out\n3.5," << prompt << "," << output << "\n";
  json doc = llm_scenario(
      llama(100, 10), 1,
      {{"process", "trace"},
       {"trace", {{"csv", path.string()}, {"input_tokens_column", "in"}, {"output_tokens_column", "out"}}}},
      1);
  const LlmReplicaCost cost = cost_of(doc);
  const ReportServing r = run(doc);
  const ReportServingLlm& l = *r.stages[0].llm;
  double decode = 0.0;
  for (std::int64_t k = 0; k < output - 1; ++k) decode += cost.decode_step_time(1, static_cast<double>(prompt + k));
  EXPECT_NEAR(l.ttft.mean, cost.prefill_time({prompt}), 1e-12);
  EXPECT_NEAR(r.latency.mean, cost.prefill_time({prompt}) + decode, 1e-12);
  EXPECT_EQ(l.input_tokens, static_cast<std::uint64_t>(prompt));
  EXPECT_EQ(l.output_tokens, static_cast<std::uint64_t>(output));
}

TEST(LlmServing, TwoRequestsJoinOneBatchWhenTheKvCacheHoldsBoth) {
  const json doc = llm_scenario(llama(2000, 1000), 1, two_at_once(), 2);
  const LlmReplicaCost cost = cost_of(doc);
  const ReportServing r = run(doc);
  const ReportServingLlm& l = *r.stages[0].llm;
  // Both prompts prefilled in the first step, then decoded together.
  const double prefill = cost.prefill_time({2000, 2000});
  EXPECT_NEAR(l.ttft.max, prefill, 1e-12);
  EXPECT_NEAR(l.ttft.p50, prefill, 1e-12);
  double decode = 0.0;
  for (std::int64_t k = 0; k < 999; ++k) decode += cost.decode_step_time(2, 2.0 * static_cast<double>(2000 + k));
  EXPECT_NEAR(r.latency.max, prefill + decode, 1e-12);
  EXPECT_EQ(l.max_running, 2u);
  EXPECT_EQ(l.kv_blocked_steps, 0u);
}

TEST(LlmServing, RequestWaitsWhenTheKvCacheIsFull) {
  // A workspace of 79.19% leaves (80e9 - 16.06e9 - 63.352e9) / 131072 = 4,482 tokens of KV cache: one request of
  // 2000 + 1000 tokens fits, two do not, so the second waits for the first to finish.
  json doc = llm_scenario(llama(2000, 1000), 1, two_at_once(), 2);
  doc["workload"]["stages"][0]["llm"]["workspace_fraction"] = 0.7919;
  doc["workload"]["stages"][0]["llm"]["kv_admission"] = "reserve_full";
  const LlmReplicaCost cost = cost_of(doc);
  ASSERT_EQ(cost.kv_capacity_tokens(), 4482);
  const ReportServing r = run(doc);
  const ReportServingLlm& l = *r.stages[0].llm;
  const double prefill = cost.prefill_time({2000});
  double decode = 0.0;
  for (std::int64_t k = 0; k < 999; ++k) decode += cost.decode_step_time(1, static_cast<double>(2000 + k));
  const double first = prefill + decode;
  EXPECT_NEAR(l.ttft.p50 - (l.ttft.max - l.ttft.p50), prefill, 1e-9); // the smaller of the two TTFTs
  EXPECT_NEAR(l.ttft.max, first + prefill, 1e-9);
  EXPECT_NEAR(r.latency.max, 2 * first, 1e-9);
  EXPECT_EQ(l.max_running, 1u);
  EXPECT_EQ(l.kv_blocked_steps, 1000u); // the prefill step and 999 decode steps of the first
  EXPECT_LE(static_cast<double>(l.kv_peak_tokens), l.kv_capacity_tokens);
}

// --- prefill/decode disaggregation, preemption, chunked prefill ---------------------------------------------

TEST(LlmServing, DisaggregatedTtftIsPrefillPlusKvTransfer) {
  // Prefill on node 1, decode on node 0, one GPU per replica: the KV cache of the prompt (700 x 128 KiB = 91.75 MB)
  // crosses the star network (50 GB/s, 5 us from NIC to NIC) as one message. TTFT = prefill + latency + bytes / B;
  // then the decode steps as on one replica.
  const std::int64_t prompt = 700, output = 50;
  json doc = llm_scenario(llama(prompt, output), 1, {{"process", "poisson"}, {"rate", 1}}, 1);
  doc["cluster"]["nodes"] = 2;
  doc["cluster"]["network"] = {{"topology", "star"}, {"bandwidth", "50GBps"}, {"latency", "5us"}};
  doc["workload"]["stages"][0]["llm"]["prefill_pool"] = {{"nodes", 1}, {"replicas_per_node", 1}};
  const LlmReplicaCost cost = cost_of(doc);
  const Scenario scenario = test::parse(doc);
  const ReportDocument report = make_serving_report_document(scenario, simulate_serving(scenario));
  // report.json reads back through the strict reader, the disaggregation's figures with it.
  const json written = to_json(report);
  EXPECT_EQ(to_json(report_document_from_json(written, "report.json")), written);
  EXPECT_EQ(report.summary->gpus, 16); // both pools' nodes
  const ReportServing& r = *report.serving;
  const ReportServingLlm& l = *r.stages[0].llm;
  const double bytes = 700.0 * 131072;
  const double transfer = 5e-6 + bytes / 50e9;
  const double prefill = cost.prefill_time({prompt});
  double decode = 0.0;
  for (std::int64_t k = 0; k < output - 1; ++k) decode += cost.decode_step_time(1, static_cast<double>(prompt + k));
  std::printf("disaggregated lone request: prefill %.4f ms + KV %.4f ms = TTFT %.4f ms; end to end %.4f ms\n",
              prefill * 1e3, transfer * 1e3, l.ttft.mean * 1e3, r.latency.mean * 1e3);
  EXPECT_NEAR(l.ttft.mean, prefill + transfer, 1e-9);
  EXPECT_NEAR(r.latency.mean, prefill + transfer + decode, 1e-9);
  ASSERT_TRUE(l.disaggregation.has_value());
  EXPECT_EQ(l.disaggregation->kv_transfers, 1u);
  EXPECT_DOUBLE_EQ(l.disaggregation->kv_transfer_bytes, bytes);
  EXPECT_NEAR(l.disaggregation->kv_transfer.mean, transfer, 1e-9);
  EXPECT_EQ(l.disaggregation->prefill_replicas, 1);
  EXPECT_EQ(l.disaggregation->decode_replicas, 1);
  EXPECT_EQ(l.steps, static_cast<std::uint64_t>(output)); // one prefill step, 49 decode steps
  EXPECT_EQ(l.output_tokens, static_cast<std::uint64_t>(output));
  EXPECT_EQ(r.stages[0].replicas, 2);
}

TEST(LlmServing, PreemptionRecomputesTheLatestRequest) {
  // 4,482 tokens of KV cache; two requests of 2000 + 1000 tokens sent together. kv_admission preempt admits both
  // (2 x 2000 prompt tokens fit) and decodes them together while 2 x (2000 + j) slots fit: decode steps 1..241.
  // Step 242 would need 4,484: the later request is preempted, waits (its recomputation, 2000 + 242 tokens, does not
  // fit beside the first) until the first finishes after decode step 999, is prefilled again over 2,242 tokens
  // (producing its 243rd token) and decodes its last 757 tokens alone.
  json doc = llm_scenario(llama(2000, 1000), 1, two_at_once(), 2);
  doc["workload"]["stages"][0]["llm"]["workspace_fraction"] = 0.7919;
  doc["workload"]["stages"][0]["llm"]["kv_admission"] = "preempt";
  const LlmReplicaCost cost = cost_of(doc);
  ASSERT_EQ(cost.kv_capacity_tokens(), 4482);
  const ReportServing r = run(doc);
  const ReportServingLlm& l = *r.stages[0].llm;
  const double first_step = cost.prefill_time({2000, 2000});
  double together = 0.0, alone = 0.0, after = 0.0;
  for (std::int64_t j = 1; j <= 241; ++j) together += cost.decode_step_time(2, 2.0 * static_cast<double>(1999 + j));
  for (std::int64_t j = 242; j <= 999; ++j) alone += cost.decode_step_time(1, static_cast<double>(1999 + j));
  const double recompute = cost.prefill_time({2242});
  for (std::int64_t m = 0; m < 757; ++m) after += cost.decode_step_time(1, static_cast<double>(2242 + m));
  const double first_done = first_step + together + alone;
  const double second_done = first_done + recompute + after;
  std::printf("preemption: first done %.4f s, second (recomputed over 2242 tokens) %.4f s\n", first_done, second_done);
  EXPECT_EQ(l.preemptions, 1u);
  EXPECT_EQ(l.recomputed_tokens, 2242u);
  EXPECT_EQ(l.input_tokens, 4000u);
  EXPECT_NEAR(l.ttft.max, first_step, 1e-12); // both first tokens after the first step
  EXPECT_NEAR(l.ttft.p50, first_step, 1e-12);
  EXPECT_NEAR(r.latency.p50 - (r.latency.max - r.latency.p50), first_done, 1e-9); // the smaller of the two
  EXPECT_NEAR(r.latency.max, second_done, 1e-9);
  EXPECT_NEAR(l.tpot.max, (second_done - first_step) / 999, 1e-12);
  EXPECT_EQ(l.max_running, 2u);
  EXPECT_EQ(l.kv_peak_tokens, 4482u);  // 2 x 2241 after decode step 241
  EXPECT_EQ(l.kv_blocked_steps, 758u); // decode steps 242..999 of the first
  EXPECT_EQ(l.steps, 1u + 999u + 1u + 757u);
  EXPECT_EQ(l.output_tokens, 2000u); // the tokens generated before the preemption are kept, not generated again
}

TEST(LlmCost, ChunkedStepIsOnePassOverAllTokens) {
  const json doc = llm_scenario(llama(512, 128), 1, two_at_once(), 2);
  const Scenario scenario = test::parse(doc);
  const GpuProfile& gpu = scenario.cluster.gpu;
  const LlmReplicaCost cost = cost_of(doc);
  // One whole prompt, no decode: the prefill.
  for (std::int64_t n : {128, 1000})
    EXPECT_NEAR(cost.chunked_step_time({{0, n, true}}, 0, 0.0), cost.prefill_time({n}), 1e-12 * cost.prefill_time({n}));
  // A chunk of 300 after 200 tokens, a whole prompt of 100 and 8 decodes over 5000 tokens of KV, by hand: the
  // layer's ops but the attention core at M = 408 tokens, the attention core's rows the chunks add, x 32 layers; the
  // decodes' KV read; the head over the 9 sequences that produce a token.
  auto ops = [&](std::int64_t tokens, bool attention) {
    TransformerConfig c = std::get<ServingWorkload>(scenario.workload).stages[0].llm->model;
    c.sequence_length = tokens;
    double t = 0.0;
    for (const ComputeOp& op : TransformerModel(c).layer_ops(1, TensorSplit{1, false}))
      if (op.selectively_recomputed == attention) t += op_time(op, gpu, "bf16", 2.0, false);
    return t;
  };
  TransformerConfig one = std::get<ServingWorkload>(scenario.workload).stages[0].llm->model;
  one.sequence_length = 1;
  double head = 0.0;
  for (const ComputeOp& op : TransformerModel(one).outer_ops(9))
    if (op.kind != OpKind::Loss) head += op_time(op, gpu, "bf16", 2.0, false);
  const double expected = 32 * (ops(408, false) + ops(500, true) - ops(200, true) + ops(100, true)) +
                          131072.0 * 5000 / gpu.achieved_memory_bandwidth() + head;
  EXPECT_NEAR(cost.chunked_step_time({{200, 300, false}, {0, 100, true}}, 8, 5000.0), expected, 1e-12 * expected);
}

TEST(LlmServing, ChunkedPrefillMixesChunksWithDecodes) {
  // 512 tokens a step; two requests of 700 + 3 tokens sent together:
  //   step 1: A's first 512 prompt tokens (B does not get a token of the budget);
  //   step 2: A's last 188 (its first token) and B's first 324;
  //   step 3: A decodes (700 tokens of KV) and B's last 376 (its first token);
  //   step 4: both decode (701 + 700 tokens of KV): no chunk, a decode step; A is done;
  //   step 5: B decodes (701): done.
  json doc = llm_scenario(llama(700, 3), 1, two_at_once(), 2);
  doc["workload"]["stages"][0]["llm"]["chunked_prefill"] = true;
  doc["workload"]["stages"][0]["llm"]["max_num_batched_tokens"] = 512;
  const LlmReplicaCost cost = cost_of(doc);
  const ReportServing r = run(doc);
  const ReportServingLlm& l = *r.stages[0].llm;
  const double s1 = cost.chunked_step_time({{0, 512, false}}, 0, 0.0);
  const double s2 = cost.chunked_step_time({{512, 188, true}, {0, 324, false}}, 0, 0.0);
  const double s3 = cost.chunked_step_time({{324, 376, true}}, 1, 700.0);
  const double s4 = cost.decode_step_time(2, 1401.0);
  const double s5 = cost.decode_step_time(1, 701.0);
  std::printf("chunked prefill: steps %.4f %.4f %.4f %.4f %.4f ms; unchunked prefill of 700: %.4f ms\n", s1 * 1e3,
              s2 * 1e3, s3 * 1e3, s4 * 1e3, s5 * 1e3, cost.prefill_time({700}) * 1e3);
  EXPECT_NEAR(l.ttft.p50 - (l.ttft.max - l.ttft.p50), s1 + s2, 1e-12); // A's
  EXPECT_NEAR(l.ttft.max, s1 + s2 + s3, 1e-12);                        // B's
  EXPECT_NEAR(r.latency.p50 - (r.latency.max - r.latency.p50), s1 + s2 + s3 + s4, 1e-12);
  EXPECT_NEAR(r.latency.max, s1 + s2 + s3 + s4 + s5, 1e-12);
  EXPECT_EQ(l.steps, 5u);
  EXPECT_EQ(l.prefill_steps, 3u);
  EXPECT_EQ(l.input_tokens, 1400u);
  EXPECT_EQ(l.output_tokens, 6u);
  EXPECT_TRUE(l.chunked_prefill);
  // A chunk with decodes costs more than the chunk alone, less than the chunk and a decode step one after the other.
  EXPECT_GT(s3, cost.chunked_step_time({{324, 376, true}}, 0, 0.0));
  EXPECT_LT(s3, cost.chunked_step_time({{324, 376, true}}, 0, 0.0) + cost.decode_step_time(1, 700.0));
}

TEST(LlmServing, GoodputAndTokensPerSecondUnderLoad) {
  json llm = llama(0, 0);
  llm["input_tokens"] = {{"distribution", "uniform"}, {"min", 100}, {"max", 900}};
  llm["output_tokens"] = {{"distribution", "exponential"}, {"mean", 100}, {"max", 1000}};
  llm["ttft_target"] = "200ms";
  llm["max_num_seqs"] = 64;
  const json doc = llm_scenario(llm, 1, {{"process", "poisson"}, {"rate", 20}}, 2000);
  const ReportServing r = run(doc);
  const ReportServingLlm& l = *r.stages[0].llm;
  EXPECT_EQ(r.answered, 2000u);
  EXPECT_GT(l.mean_running, 1.5);
  EXPECT_LE(l.max_running, 64u);
  // Each request produces at least one token; the window holds them all (no warm-up).
  EXPECT_GE(l.output_tokens, r.answered);
  EXPECT_NEAR(l.output_tokens_per_s * r.window, static_cast<double>(l.output_tokens), 1e-6 * l.output_tokens);
  ASSERT_TRUE(l.goodput.has_value());
  EXPECT_GT(*l.goodput, 0.0);
  EXPECT_LE(*l.goodput, 1.0);
  EXPECT_LE(l.ttft.p50, l.ttft.p99);
  EXPECT_GT(l.tpot.p50, 0.005); // at least one weight read per token (5 ms)
}

TEST(LlmServing, SameSeedSameReport) {
  json llm = llama(0, 0);
  llm["input_tokens"] = {{"distribution", "lognormal"}, {"mean", 400}, {"cv", 0.8}, {"max", 4000}};
  llm["output_tokens"] = {{"distribution", "gamma"}, {"mean", 80}, {"cv", 1.0}, {"max", 1000}};
  llm["ttft_target"] = "300ms";
  json doc = llm_scenario(llm, 2, {{"process", "poisson"}, {"rate", 30}}, 600);
  const std::filesystem::path dir = test::temp_dir();
  std::ofstream(dir / "s.json") << doc.dump(2);
  const std::vector<std::string> args{"run", "s.json", "--json", "--no-files", "--no-progress"};
  const test::CliResult a = test::run_cli(args, dir);
  const test::CliResult b = test::run_cli(args, dir);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  std::vector<std::string> other = args;
  other.insert(other.end(), {"--set", "/run/seed=2"});
  const test::CliResult c = test::run_cli(other, dir);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(a.out, c.out);
  const ReportDocument read = report_document_from_json(json::parse(a.out), "report.json");
  ASSERT_TRUE(read.serving.has_value());
  ASSERT_TRUE(read.serving->stages.at(0).llm.has_value());
  EXPECT_GT(read.serving->stages[0].llm->ttft.count, 0u);
}

TEST(LlmServing, TwoLlmStagesInARowEachServeTheWholeRequest) {
  // The lone request of LoneRequestIsPrefillThenDecodeSteps through two LLM stages one after the other (as a
  // rewriter before a generator): each prefills and decodes the request from scratch, so the latency is twice the
  // one stage's and each stage produces all its output tokens.
  const std::int64_t prompt = 700, output = 50;
  json doc = llm_scenario(llama(prompt, output), 1, {{"process", "poisson"}, {"rate", 1}}, 1);
  doc["cluster"]["nodes"] = 2;
  json second = doc["workload"]["stages"][0];
  second["name"] = "llm2";
  doc["workload"]["stages"].push_back(second);
  const LlmReplicaCost cost = cost_of(doc);
  const ReportServing r = run(doc);
  double one = cost.prefill_time({prompt});
  for (std::int64_t k = 0; k < output - 1; ++k) one += cost.decode_step_time(1, static_cast<double>(prompt + k));
  EXPECT_NEAR(r.latency.mean, 2 * one, 1e-12);
  for (std::size_t i = 0; i < 2; ++i) {
    ASSERT_TRUE(r.stages[i].llm.has_value());
    EXPECT_EQ(r.stages[i].llm->output_tokens, static_cast<std::uint64_t>(output)) << i;
    EXPECT_EQ(r.stages[i].llm->steps, static_cast<std::uint64_t>(output)) << i;
    EXPECT_NEAR(r.stages[i].latency.mean, one, 1e-12) << i;
  }
}

} // namespace
} // namespace partsim
