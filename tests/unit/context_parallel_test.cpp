// Context parallelism: the rank's share of a layer's work and activations (1/C), the keys and values exchanged on
// the context group (ring hops or all-gathers) against their closed forms, the data group that spans the context
// ranks, input errors, and simulations whose traffic is checked against the ring's closed form.
#include "partsim/model/transformer.hpp"
#include "partsim/plan/sharded_memory.hpp"
#include "partsim/plan/strategy.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

namespace partsim::test {
namespace {

/** Llama 3 8B (GQA: 32 heads, 8 key/value heads of 128) at 8,192 tokens on `gpus` H100s of one node. */
nlohmann::json cp_scenario(nlohmann::json strategy, int gpus = 8, int global_batch = 4) {
  nlohmann::json doc = base_scenario(1, gpus);
  doc["cluster"]["gpu"] = "h100-sxm5-80gb";
  doc["workload"] = {{"kind", "model_training"},
                     {"model", "llama3-8b"},
                     {"sequence_length", 8192},
                     {"global_batch", global_batch},
                     {"micro_batch", 1}};
  strategy["kind"] = "model_parallel";
  doc["strategy"] = std::move(strategy);
  return doc;
}

TEST(ContextParallel, EachRankHoldsOneOverCOfTheLayersWork) {
  TransformerConfig config;
  config.layers = 2;
  config.hidden = 4096;
  config.heads = 32;
  config.kv_heads = 8;
  config.ffn = 14336;
  config.vocab = 128256;
  config.sequence_length = 8192;
  config.mlp = MlpKind::Gated;
  config.position = PositionEmbedding::Rotary;
  config.norm = NormKind::RmsNorm;
  config.bias = false;
  const TransformerModel model(config);
  for (const int cp : {2, 4, 16}) {
    TensorSplit split;
    split.context = cp;
    const std::vector<ComputeOp> whole = model.layer_ops(1);
    const std::vector<ComputeOp> part = model.layer_ops(1, split);
    ASSERT_EQ(whole.size(), part.size());
    for (std::size_t i = 0; i < whole.size(); ++i) {
      // Every op, attention included, does 1/C of the work and moves 1/C of the activations (weights are whole).
      EXPECT_NEAR(part[i].forward_flops * cp, whole[i].forward_flops, 1e-9 * whole[i].forward_flops) << whole[i].name;
      EXPECT_NEAR(part[i].backward_flops * cp, whole[i].backward_flops, 1e-9 * whole[i].backward_flops)
          << whole[i].name;
      EXPECT_DOUBLE_EQ(part[i].weight_elements, whole[i].weight_elements) << whole[i].name;
      EXPECT_NEAR(part[i].output_elements * cp, whole[i].output_elements, 1e-9 * whole[i].output_elements)
          << whole[i].name;
      if (whole[i].gemm && whole[i].name != "attention_scores" && whole[i].name != "attention_over_values") {
        EXPECT_EQ(part[i].gemm->m * cp, whole[i].gemm->m) << whole[i].name; // the rank's tokens
      }
      if (whole[i].attention) {
        // The flash kernel runs the rank's s/C queries against all s keys: half of that masked, balanced by the
        // 2C chunks (chunks i and 2C-1-i): the whole causal work over C.
        EXPECT_NEAR(part[i].attention->executed_forward_flops() * cp, whole[i].attention->executed_forward_flops(),
                    1e-6);
        EXPECT_EQ(part[i].attention->query_block(), 8192 / cp);
      }
    }
  }
}

TEST(ContextParallelMemory, ActivationsFallAsOneOverC) {
  const Scenario one = parse(cp_scenario({{"data", 8}, {"zero", 1}}, 8, 8));
  const Scenario four = parse(cp_scenario({{"data", 2}, {"context", 4}, {"zero", 1}}, 8, 8));
  const auto& training = std::get<ModelTraining>(one.workload);
  const GpuProfile& gpu = one.cluster.gpu;
  const MemoryBreakdown m1 = model_parallel_memory(training, std::get<ModelParallel>(one.strategy), gpu, 0);
  const MemoryBreakdown m4 = model_parallel_memory(training, std::get<ModelParallel>(four.strategy), gpu, 0);
  EXPECT_NEAR(m4.activations, m1.activations / 4.0, 1e-6 * m1.activations);
  // ZeRO-1 shards over data x context = 8 ranks in both: the same optimizer states; the weights are whole.
  EXPECT_DOUBLE_EQ(m4.optimizer_states, m1.optimizer_states);
  EXPECT_DOUBLE_EQ(m4.parameters, m1.parameters);
  // The ring keeps two blocks of keys and values in flight: 2 x 2·(s/C)·8·128 bf16 values of the workspace.
  EXPECT_NEAR(m4.workspace - m1.workspace, 2.0 * 2.0 * 2.0 * 8192.0 / 4 * 8 * 128, 1.0);
}

/** Sends and receives of kind Context on a rank: count and bytes. */
std::pair<int, std::uint64_t> ring_sends(const Plan& plan, int rank) {
  int count = 0;
  std::uint64_t bytes = 0;
  for (const Step& step : resolved_steps(plan, rank))
    if (const auto* s = std::get_if<SendStep>(&step); s && s->kind == CommKind::Context) {
      ++count;
      bytes += s->bytes;
    }
  return {count, bytes};
}

int ring_receives(const Plan& plan, int rank) {
  int count = 0;
  for (const Step& step : resolved_steps(plan, rank))
    if (const auto* r = std::get_if<RecvStep>(&step); r && r->kind == CommKind::Context) ++count;
  return count;
}

TEST(ContextParallelPlan, TheRingPassesEachBlockAroundOnceEachWay) {
  // Context 4 x data 2, one micro-batch per replica (global batch 2), 32 layers. A block: the rank's keys and values,
  // 2·(8192 / 4)·8·128 bf16 values. Per layer: 3 hops forward, 3 hops of keys, values and their gradients (2 blocks)
  // backward and one hop returning the gradients: 3 + 6 + 1 = 10 blocks.
  const Scenario scenario = parse(cp_scenario({{"data", 2}, {"context", 4}, {"zero", 1}}, 8, 2));
  const Plan plan = build_plan(scenario);
  const std::uint64_t block = 2ULL * (8192 / 4) * 8 * 128 * 2;
  for (int rank = 0; rank < 8; ++rank) {
    const auto [count, bytes] = ring_sends(plan, rank);
    EXPECT_EQ(count, 32 * (3 + 3 + 1)) << "rank " << rank;
    EXPECT_EQ(bytes, 32 * 10 * block) << "rank " << rank;
    EXPECT_EQ(ring_receives(plan, rank), count) << "rank " << rank;
  }
  // Placement: the context axis right after the tensor axis (tensor 1 here): ranks 0-3 are one group, and each sends
  // to the next around it.
  for (const Step& step : resolved_steps(plan, 3))
    if (const auto* s = std::get_if<SendStep>(&step); s && s->kind == CommKind::Context) {
      EXPECT_EQ(s->peer, 0);
    }
  // The gradients are reduced over data x context = 8 ranks; only the first rank of each context group counts the
  // samples of its replica.
  bool data_group_of_8 = false;
  for (const Step& step : resolved_steps(plan, 0))
    if (const auto* c = std::get_if<CollectiveStep>(&step); c && c->kind == CommKind::Data)
      data_group_of_8 = data_group_of_8 || plan.groups[static_cast<std::size_t>(c->group)].size() == 8u;
  EXPECT_TRUE(data_group_of_8);
  std::uint64_t samples[8] = {};
  for (int rank = 0; rank < 8; ++rank)
    for (const Step& step : resolved_steps(plan, rank))
      if (const auto* c = std::get_if<ComputeStep>(&step)) samples[rank] += c->samples;
  EXPECT_EQ(samples[0], 1u);
  EXPECT_EQ(samples[1], 0u);
  EXPECT_EQ(samples[4], 1u);
  EXPECT_NE(plan.summary.find("context 4 (p2p exchange"), std::string::npos) << plan.summary;
}

TEST(ContextParallelPlan, TheAllGatherModeGathersTwiceAndReduceScattersOnce) {
  // Llama 3's exchange: per layer an all-gather of the group's keys and values before the attention, again before
  // its backward, and a reduce-scatter of their gradients, each of C blocks, on the 4 ranks of the group.
  const Plan plan = build_plan(parse(cp_scenario({{"data", 2}, {"context", 4}, {"context_comm", "all_gather"}}, 8, 2)));
  const std::uint64_t whole = 4 * 2ULL * (8192 / 4) * 8 * 128 * 2;
  int gathers = 0;
  int scatters = 0;
  for (const Step& step : resolved_steps(plan, 5))
    if (const auto* c = std::get_if<CollectiveStep>(&step); c && c->kind == CommKind::Context) {
      EXPECT_EQ(c->bytes, whole);
      EXPECT_EQ(plan.groups[static_cast<std::size_t>(c->group)], (std::vector<int>{4, 5, 6, 7}));
      gathers += c->op == CollectiveOp::AllGather ? 1 : 0;
      scatters += c->op == CollectiveOp::ReduceScatter ? 1 : 0;
    }
  EXPECT_EQ(gathers, 2 * 32);
  EXPECT_EQ(scatters, 32);
  EXPECT_EQ(ring_sends(plan, 5).first, 0);
}

TEST(ContextParallelPlan, UlyssesAllToAllsTheHeadsAroundTheAttention) {
  // DeepSpeed-Ulysses on context 4 x data 2: per layer an all-to-all of the rank's queries, keys and values (its
  // 2,048 tokens of 32 + 2 x 8 heads of 128) before the core and one of the core's output (32 heads) after it;
  // backward the same two, of the gradients, in the other order. Each on the 4 ranks of the group.
  const Plan plan = build_plan(parse(cp_scenario({{"data", 2}, {"context", 4}, {"context_comm", "all_to_all"}}, 8, 2)));
  const std::uint64_t qkv = 2048ULL * (32 + 2 * 8) * 128 * 2;
  const std::uint64_t out = 2048ULL * 32 * 128 * 2;
  std::vector<std::uint64_t> sizes;
  for (const Step& step : resolved_steps(plan, 5))
    if (const auto* c = std::get_if<CollectiveStep>(&step); c && c->kind == CommKind::Context) {
      EXPECT_EQ(c->op, CollectiveOp::AllToAll);
      EXPECT_EQ(plan.groups[static_cast<std::size_t>(c->group)], (std::vector<int>{4, 5, 6, 7}));
      sizes.push_back(c->bytes);
    }
  ASSERT_EQ(sizes.size(), 4u * 32);
  EXPECT_EQ(std::count(sizes.begin(), sizes.end(), qkv), 2 * 32);
  EXPECT_EQ(std::count(sizes.begin(), sizes.end(), out), 2 * 32);
  EXPECT_EQ((std::vector<std::uint64_t>(sizes.begin(), sizes.begin() + 2)), (std::vector<std::uint64_t>{qkv, out}));
  EXPECT_EQ(ring_sends(plan, 5).first, 0);
  // Memory: the all-to-all's send and receive buffers of the queries, keys and values instead of the ring's blocks.
  const Scenario ring = parse(cp_scenario({{"data", 2}, {"context", 4}}, 8, 2));
  const Scenario a2a = parse(cp_scenario({{"data", 2}, {"context", 4}, {"context_comm", "all_to_all"}}, 8, 2));
  const auto& training = std::get<ModelTraining>(ring.workload);
  const MemoryBreakdown mr =
      model_parallel_memory(training, std::get<ModelParallel>(ring.strategy), ring.cluster.gpu, 0);
  const MemoryBreakdown ma = model_parallel_memory(training, std::get<ModelParallel>(a2a.strategy), a2a.cluster.gpu, 0);
  EXPECT_NEAR(ma.workspace - mr.workspace, 2.0 * static_cast<double>(qkv) - 2.0 * 2.0 * (2048.0 * 8 * 128 * 2), 1.0);
  EXPECT_DOUBLE_EQ(ma.activations, mr.activations);
}

TEST(ContextParallelPlan, TensorAndContextCompose) {
  // Tensor 2 x context 2 x data 2: the tensor pairs are consecutive GPUs, the context pairs 2 apart; a block is the
  // rank's key/value heads (8 / 2) for its 4,096 tokens.
  const Plan plan =
      build_plan(parse(cp_scenario({{"data", 2}, {"tensor", 2}, {"context", 2}, {"sequence_parallel", true}}, 8, 2)));
  const std::uint64_t block = 2ULL * 4096 * 4 * 128 * 2;
  const auto [count, bytes] = ring_sends(plan, 1);
  EXPECT_EQ(count, 32 * (1 + 1 + 1));
  EXPECT_EQ(bytes, 32 * (1 + 2 + 1) * block);
  for (const Step& step : resolved_steps(plan, 1))
    if (const auto* s = std::get_if<SendStep>(&step); s && s->kind == CommKind::Context) {
      EXPECT_EQ(s->peer, 3);
    }
  for (const Step& step : resolved_steps(plan, 1))
    if (const auto* c = std::get_if<CollectiveStep>(&step); c && c->kind == CommKind::Tensor) {
      EXPECT_EQ(plan.groups[static_cast<std::size_t>(c->group)], (std::vector<int>{0, 1}));
      // The sequence-parallel collectives move the rank's 4,096 tokens of h: half of what they move without.
      EXPECT_EQ(c->bytes, 4096ULL * 4096 * 2);
      break;
    }
}

/** The tensor-group collectives of `rank`'s steps, in order: (op, bytes). */
std::vector<std::pair<CollectiveOp, std::uint64_t>> tensor_collectives(const Plan& plan, int rank) {
  std::vector<std::pair<CollectiveOp, std::uint64_t>> out;
  for (const Step& step : resolved_steps(plan, rank))
    if (const auto* c = std::get_if<CollectiveStep>(&step); c && c->kind == CommKind::Tensor)
      out.emplace_back(c->op, c->bytes);
  return out;
}

TEST(ContextParallelPlan, TheTensorOverlapRunsAroundTheCoresExchange) {
  // Tensor 2 x context 2 x data 2 with Transformer Engine's userbuffers overlap (Megatron-Bridge's Llama 3.1 405B
  // preset on H100 runs TP 8 x CP 2 with it): the context group exchanges what it does without the overlap, in every
  // mode, and the tensor group runs the overlap's collectives of a context-1 plan of the rank's 4,096 tokens.
  const nlohmann::json tp = {{"tensor", 2}, {"sequence_parallel", true}};
  auto with = [&](nlohmann::json extra) {
    nlohmann::json strategy = tp;
    strategy.update(extra);
    return build_plan(parse(cp_scenario(strategy, 8, 2)));
  };
  for (const char* mode : {"p2p", "all_gather", "all_to_all"}) {
    SCOPED_TRACE(mode);
    const Plan plain = with({{"data", 2}, {"context", 2}, {"context_comm", mode}});
    const Plan overlap = with({{"data", 2}, {"context", 2}, {"context_comm", mode}, {"tp_comm_overlap", true}});
    EXPECT_EQ(ring_sends(overlap, 1), ring_sends(plain, 1));
    auto context_collectives = [](const Plan& plan) {
      std::vector<std::pair<CollectiveOp, std::uint64_t>> out;
      for (const Step& step : resolved_steps(plan, 1))
        if (const auto* c = std::get_if<CollectiveStep>(&step); c && c->kind == CommKind::Context)
          out.emplace_back(c->op, c->bytes);
      return out;
    };
    EXPECT_EQ(context_collectives(overlap), context_collectives(plain));
  }
  const Plan overlap = with({{"data", 2}, {"context", 2}, {"tp_comm_overlap", true}});
  nlohmann::json half =
      cp_scenario({{"data", 2}, {"tensor", 2}, {"sequence_parallel", true}, {"tp_comm_overlap", true}}, 4, 2);
  half["workload"]["sequence_length"] = 4096;
  const auto with_context = tensor_collectives(overlap, 1);
  const auto without = tensor_collectives(build_plan(parse(half)), 1);
  ASSERT_FALSE(without.empty());
  EXPECT_EQ(with_context, without);
  // In the first layer's forward the ring's first hop comes after the QKV GEMM's all-gather and before the output
  // projection's reduce-scatter.
  std::optional<CollectiveOp> before;
  std::optional<CollectiveOp> after;
  bool hopped = false;
  for (const Step& step : resolved_steps(overlap, 1)) {
    if (const auto* s = std::get_if<SendStep>(&step); s && s->kind == CommKind::Context) {
      if (hopped) continue;
      hopped = true;
    }
    if (const auto* c = std::get_if<CollectiveStep>(&step); c && c->kind == CommKind::Tensor) {
      if (!hopped) before = c->op;
      if (hopped && !after) after = c->op;
    }
  }
  EXPECT_EQ(before, CollectiveOp::AllGather);
  EXPECT_EQ(after, CollectiveOp::ReduceScatter);
}

TEST(ContextParallelPlan, TheAsyncTensorBackwardKeepsTheCoresExchange) {
  // Tensor 2 x context 2 x data 2 with Megatron's asynchronous tensor backward: the context group exchanges what it
  // does without it, in every mode, the compute is the same, and the tensor group gains one all-gather per block and
  // layer (the column GEMMs' re-gather, 32 layers x 2 blocks x 2 micro-batches), every reduce-scatter as before.
  const nlohmann::json tp = {{"tensor", 2}, {"sequence_parallel", true}, {"data", 2}, {"context", 2}};
  auto with = [&](const char* mode, bool async) {
    nlohmann::json strategy = tp;
    strategy["context_comm"] = mode;
    strategy["tp_async_backward"] = async;
    return build_plan(parse(cp_scenario(strategy, 8, 4)));
  };
  auto count = [](const Plan& plan, CommKind kind, CollectiveOp op) {
    int n = 0;
    for (const Step& step : resolved_steps(plan, 1))
      if (const auto* c = std::get_if<CollectiveStep>(&step); c && c->kind == kind && c->op == op) ++n;
    return n;
  };
  auto compute = [](const Plan& plan) {
    double sum = 0.0;
    for (const Step& step : resolved_steps(plan, 1))
      if (const auto* c = std::get_if<ComputeStep>(&step)) sum += c->amount;
    return sum;
  };
  for (const char* mode : {"p2p", "all_gather", "all_to_all"}) {
    SCOPED_TRACE(mode);
    const Plan plain = with(mode, false);
    const Plan async = with(mode, true);
    EXPECT_EQ(ring_sends(async, 1), ring_sends(plain, 1));
    for (const CollectiveOp op : {CollectiveOp::AllGather, CollectiveOp::AllToAll, CollectiveOp::ReduceScatter})
      EXPECT_EQ(count(async, CommKind::Context, op), count(plain, CommKind::Context, op));
    EXPECT_EQ(count(async, CommKind::Tensor, CollectiveOp::AllGather),
              count(plain, CommKind::Tensor, CollectiveOp::AllGather) + 32 * 2 * 2);
    EXPECT_EQ(count(async, CommKind::Tensor, CollectiveOp::ReduceScatter),
              count(plain, CommKind::Tensor, CollectiveOp::ReduceScatter));
    EXPECT_NEAR(compute(async), compute(plain), compute(plain) * 1e-12);
  }
}

TEST(ContextParallelErrors, EachInvalidCombinationNamesItsKey) {
  auto message = [](const nlohmann::json& doc) { return std::string(input_error([&] { parse(doc); }).what()); };
  // 2 x 3 does not divide 8,192.
  EXPECT_NE(message(cp_scenario({{"data", 1}, {"tensor", 2}, {"context", 3}}, 6)).find("/strategy/context"),
            std::string::npos);
  // 8 GPUs are not data 4 x context 4.
  const std::string product = message(cp_scenario({{"data", 4}, {"context", 4}}));
  EXPECT_NE(product.find("data x tensor x pipeline x context"), std::string::npos) << product;
  // A mixture of experts takes context parallelism (ContextParallelExperts in moe_test.cpp), with an expert degree
  // dividing data x context.
  nlohmann::json moe = cp_scenario({{"data", 4}, {"context", 2}, {"expert", 16}});
  moe["workload"]["model"] = "mixtral-8x7b";
  EXPECT_NE(message(moe).find("/strategy/expert"), std::string::npos);
  EXPECT_NE(
      message(cp_scenario({{"data", 4}, {"context", 2}, {"context_comm", "ring"}})).find("/strategy/context_comm"),
      std::string::npos);
  // Ulysses splits the tensor rank's heads: 8 key/value heads over tensor 2 leave 4, which context 8 cannot split.
  EXPECT_NE(message(cp_scenario({{"data", 1}, {"tensor", 2}, {"context", 8}, {"context_comm", "all_to_all"}}, 16))
                .find("/strategy/context_comm"),
            std::string::npos);
}

/** A small GQA decoder on 4 GPUs of one node, context 4, no gradient synchronisation, every message simulated. */
nlohmann::json tiny_cp(const char* comm) {
  nlohmann::json doc = base_scenario(1, 4);
  doc["workload"] = {{"kind", "model_training"},
                     {"model", tiny_transformer("tiny-gqa", 1024, {{"kv_heads", 2}})},
                     {"global_batch", 2},
                     {"micro_batch", 1}};
  doc["strategy"] = {{"kind", "model_parallel"},
                     {"data", 1},
                     {"context", 4},
                     {"context_comm", comm},
                     {"gradient_sync", "none"},
                     {"tensor_collectives", {{"fidelity", "steps"}}}};
  return doc;
}

TEST(ContextParallelRun, RanksSendWhatTheRingsClosedFormSays) {
  const Outcome out = simulate_document(tiny_cp("p2p"));
  ASSERT_FALSE(out.report.out_of_memory);
  ASSERT_EQ(out.report.ranks.size(), 4u);
  // A block: 2·(1024 / 4)·2·64 bf16 values; 10 blocks per layer and micro-batch (3 forward, 3 x 2 backward, 1 back).
  const double block = 2.0 * 256 * 2 * 64 * 2;
  const double expected = 2 /* micro-batches */ * 2 /* layers */ * 10 * block;
  for (const RankMetrics& m : out.report.ranks) {
    EXPECT_DOUBLE_EQ(static_cast<double>(m.bytes_sent), expected) << "rank " << m.rank;
    EXPECT_DOUBLE_EQ(static_cast<double>(m.bytes_received), expected) << "rank " << m.rank;
    EXPECT_GE(m.context_exposed, 0.0);
    EXPECT_DOUBLE_EQ(m.bubble, 0.0); // a ring hop is not a pipeline bubble
    EXPECT_NEAR(m.busy() + m.idle(), out.report.makespan, 1e-9 * out.report.makespan);
  }
  ASSERT_TRUE(out.report.context_parallel);
}

TEST(ContextParallelRun, AllGathersSendTheirRingClosedForm) {
  // A ring all-gather of C blocks sends C-1 of them per rank, a ring reduce-scatter as many: 3 x 3 blocks per layer
  // and micro-batch.
  const Outcome out = simulate_document(tiny_cp("all_gather"));
  const double block = 2.0 * 256 * 2 * 64 * 2;
  const double expected = 2 * 2 * 3 * 3 * block;
  for (const RankMetrics& m : out.report.ranks) {
    EXPECT_NEAR(static_cast<double>(m.bytes_sent), expected, 1e-9 * expected) << "rank " << m.rank;
    EXPECT_GT(m.context_exposed, 0.0) << "rank " << m.rank; // exposed: nothing overlaps it
    EXPECT_NEAR(m.busy() + m.idle(), out.report.makespan, 1e-9 * out.report.makespan);
  }
}

TEST(ContextParallelRun, UlyssesAllToAllsSendTheirClosedForm) {
  // Direct all-to-alls: each rank keeps 1/C of its buffer and sends the rest. Per layer and micro-batch, forward
  // and backward: 2 x (queries, keys and values: 256 tokens x (4 + 2 x 4) heads x 64) + 2 x (output: 4 heads x 64),
  // 3/4 of each sent.
  nlohmann::json doc = tiny_cp("all_to_all");
  doc["workload"]["model"]["kv_heads"] = 4;
  const Outcome out = simulate_document(doc);
  const double qkv = 256.0 * (4 + 2 * 4) * 64 * 2;
  const double output = 256.0 * 4 * 64 * 2;
  const double expected = 2 /* micro-batches */ * 2 /* layers */ * 2 * (qkv + output) * 3.0 / 4.0;
  for (const RankMetrics& m : out.report.ranks) {
    EXPECT_NEAR(static_cast<double>(m.bytes_sent), expected, 1e-9 * expected) << "rank " << m.rank;
    EXPECT_NEAR(static_cast<double>(m.bytes_received), expected, 1e-9 * expected) << "rank " << m.rank;
    EXPECT_GT(m.context_exposed, 0.0) << "rank " << m.rank;
    EXPECT_NEAR(m.busy() + m.idle(), out.report.makespan, 1e-9 * out.report.makespan);
  }
}

} // namespace
} // namespace partsim::test
