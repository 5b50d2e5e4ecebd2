// Model parallelism without SimGrid: pipeline schedules, rank placement, the collectives and transfers a plan holds
// (tensor-parallel volume per layer, ZeRO volume), memory per GPU, and the input errors of strategy model_parallel.
#include "partsim/input/workload_library.hpp"
#include "partsim/plan/model_parallel.hpp"
#include "partsim/plan/strategy.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <tuple>

namespace partsim::test {
namespace {

/** `gpus` A100s in one node training GPT-3 13B-like `model` with strategy model_parallel `strategy`. */
nlohmann::json mp_scenario(nlohmann::json strategy, int gpus = 8, const std::string& model = "gpt3-13b",
                           int global_batch = 32) {
  nlohmann::json doc = base_scenario(1, gpus);
  doc["cluster"]["gpu"] = "a100-sxm4-80gb";
  doc["workload"] = {{"kind", "model_training"}, {"model", model}, {"global_batch", global_batch}, {"micro_batch", 1}};
  strategy["kind"] = "model_parallel";
  doc["strategy"] = std::move(strategy);
  return doc;
}

int count(const std::vector<PipelineOp>& ops, Pass pass) {
  int n = 0;
  for (const PipelineOp& op : ops) n += op.pass == pass ? 1 : 0;
  return n;
}

TEST(PipelineSchedule, GPipeRunsEveryForwardThenEveryBackward) {
  const auto ops = pipeline_schedule(PipelineSchedule::GPipe, 4, 1, 6);
  ASSERT_EQ(ops.size(), 12u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(ops[static_cast<std::size_t>(i)], (PipelineOp{Pass::Forward, i, 0}));
    EXPECT_EQ(ops[static_cast<std::size_t>(6 + i)], (PipelineOp{Pass::Backward, i, 0}));
  }
  EXPECT_EQ(peak_in_flight(ops), 6);
}

TEST(PipelineSchedule, OneFOneBWarmsUpWithStagesLeftThenAlternates) {
  const int p = 4;
  const int m = 8;
  for (int s = 0; s < p; ++s) {
    const auto ops = pipeline_schedule(PipelineSchedule::OneFOneB, p, s, m);
    EXPECT_EQ(count(ops, Pass::Forward), m);
    EXPECT_EQ(count(ops, Pass::Backward), m);
    const int warmup = p - s - 1;
    for (int i = 0; i < warmup; ++i) EXPECT_EQ(ops[static_cast<std::size_t>(i)].pass, Pass::Forward);
    // Steady state: forward warmup + k, then backward k.
    EXPECT_EQ(ops[static_cast<std::size_t>(warmup)], (PipelineOp{Pass::Forward, warmup, 0}));
    EXPECT_EQ(ops[static_cast<std::size_t>(warmup + 1)], (PipelineOp{Pass::Backward, 0, 0}));
    EXPECT_EQ(peak_in_flight(ops), p - s) << "stage " << s;
  }
  // Fewer micro-batches than stages: the warm-up is cut to m.
  EXPECT_EQ(peak_in_flight(pipeline_schedule(PipelineSchedule::OneFOneB, 8, 0, 3)), 3);
}

TEST(PipelineSchedule, InterleavedVisitsEveryChunkOfEveryMicroBatchOnce) {
  const int p = 4;
  const int m = 8;
  const int v = 2;
  for (int s = 0; s < p; ++s) {
    const auto ops = pipeline_schedule(PipelineSchedule::Interleaved, p, s, m, v);
    ASSERT_EQ(ops.size(), static_cast<std::size_t>(2 * m * v));
    std::map<std::tuple<int, int, int>, int> seen;
    std::map<std::pair<int, int>, bool> forward_done;
    for (const PipelineOp& op : ops) {
      ++seen[{static_cast<int>(op.pass), op.micro_batch, op.chunk}];
      if (op.pass == Pass::Forward)
        forward_done[{op.micro_batch, op.chunk}] = true;
      else
        EXPECT_TRUE(forward_done[std::make_pair(op.micro_batch, op.chunk)]) << "backward before forward";
    }
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(2 * m * v));
    // Megatron-LM's warm-up: (p - s - 1) x 2 + (v - 1) x p forwards, then one more before the first backward.
    EXPECT_EQ(peak_in_flight(ops), (p - s - 1) * 2 + (v - 1) * p + 1);
  }
  // The first forwards: micro-batches 0..p-1 on chunk 0, then the same on chunk 1.
  const auto ops = pipeline_schedule(PipelineSchedule::Interleaved, p, 0, m, v);
  EXPECT_EQ(ops[3], (PipelineOp{Pass::Forward, 3, 0}));
  EXPECT_EQ(ops[4], (PipelineOp{Pass::Forward, 0, 1}));
}

TEST(ModelParallelPlacement, TensorFirstKeepsTensorGroupsOnConsecutiveRanks) {
  ModelParallel mp;
  mp.data = 2;
  mp.tensor = 4;
  mp.pipeline = 3;
  for (int r = 0; r < mp.gpus(); ++r) EXPECT_EQ(rank_of(mp, coordinates_of(mp, r)), r);
  EXPECT_EQ(rank_of(mp, {1, 2, 0}), 6); // t + T d
  EXPECT_EQ(rank_of(mp, {0, 0, 2}), 16);
  mp.placement = {ParallelAxis::Pipeline, ParallelAxis::Data, ParallelAxis::Tensor};
  EXPECT_EQ(rank_of(mp, {0, 1, 0}), 6); // pipeline fastest: p + P d + P D t
  for (int r = 0; r < mp.gpus(); ++r) EXPECT_EQ(rank_of(mp, coordinates_of(mp, r)), r);
}

/** Per rank: (peer, channel) sequences of sends and receives, to check that every transfer is received in order. */
void expect_matched_transfers(const Plan& plan) {
  std::map<std::tuple<int, int, int>, int> sent;
  std::map<std::tuple<int, int, int>, int> received;
  for (std::size_t r = 0; r < plan.ranks.size(); ++r)
    for (const Step& step : resolved_steps(plan, r)) {
      if (const auto* s = std::get_if<SendStep>(&step)) ++sent[{static_cast<int>(r), s->peer, s->channel}];
      if (const auto* v = std::get_if<RecvStep>(&step)) ++received[{v->peer, static_cast<int>(r), v->channel}];
    }
  EXPECT_EQ(sent, received);
}

TEST(ModelParallelPlacement, DataIsDerivedFromTheGpuCountWhenNotGiven) {
  // 8 GPUs, tensor 2 x pipeline 2: data 2 without being asked (what a sweep over tensor and pipeline needs).
  EXPECT_EQ(
      std::get<ModelParallel>(parse(mp_scenario({{"tensor", 2}, {"pipeline", 2}}, 8, "gpt2-small", 2)).strategy).data,
      2);
  EXPECT_EQ(std::get<ModelParallel>(parse(mp_scenario({{"tensor", 4}}, 8, "gpt2-small", 2)).strategy).data, 2);
  // Given, it must still make the GPU count.
  const InputError given = test::input_error([] {
    parse(mp_scenario({{"data", 3}, {"tensor", 2}}, 8, "gpt2-small", 2));
  });
  EXPECT_EQ(given.pointer(), "/strategy");
  // Derived, tensor x pipeline must divide the GPU count.
  const InputError derived = test::input_error([] { parse(mp_scenario({{"tensor", 3}}, 8, "gpt2-small", 2)); });
  EXPECT_EQ(derived.pointer(), "/strategy");
  EXPECT_NE(std::string(derived.what())
                .find("expected tensor x pipeline to divide the GPU count (8) so that data "
                      "can be derived, got 3 x 1 = 3"),
            std::string::npos)
      << derived.what();
}

TEST(ModelParallelPlan, EveryTransferHasAReceiverInEverySchedule) {
  for (const char* schedule : {"gpipe", "1f1b", "interleaved"}) {
    nlohmann::json strategy = {{"data", 2}, {"tensor", 1}, {"pipeline", 4}, {"schedule", schedule}};
    const Plan plan = build_plan(parse(mp_scenario(strategy)));
    expect_matched_transfers(plan);
    // Activations go to the next stage (channel 0) and their gradients to the previous one (channel 1), wrapping
    // around from the last stage to the first between the chunks of an interleaved schedule.
    for (std::size_t r = 0; r < plan.ranks.size(); ++r)
      for (const Step& step : resolved_steps(plan, r))
        if (const auto* s = std::get_if<SendStep>(&step)) {
          const int from = plan.stage_of_rank[r];
          const int to = plan.stage_of_rank[static_cast<std::size_t>(s->peer)];
          EXPECT_EQ((to - from + 4) % 4, s->channel == 0 ? 1 : 3) << schedule << ": rank " << r << " to " << s->peer;
        }
  }
}

struct Volume {
  int all_reduces = 0;
  int reduce_scatters = 0;
  int all_gathers = 0;
  std::uint64_t bytes = 0; ///< of one collective (all the same here)
  double bus = 0.0;        ///< bus bytes summed
};

Volume volume(const Plan& plan, int rank, CommKind kind) {
  Volume v;
  for (const Step& step : resolved_steps(plan, rank))
    if (const auto* c = std::get_if<CollectiveStep>(&step); c && c->kind == kind) {
      v.all_reduces += c->op == CollectiveOp::AllReduce ? 1 : 0;
      v.reduce_scatters += c->op == CollectiveOp::ReduceScatter ? 1 : 0;
      v.all_gathers += c->op == CollectiveOp::AllGather ? 1 : 0;
      v.bytes = c->bytes;
      // nccl-tests' bus bytes: the bus bandwidth formula applied to bytes instead of bytes/s.
      v.bus += bus_bandwidth(c->op, static_cast<int>(plan.groups[static_cast<std::size_t>(c->group)].size()),
                             static_cast<double>(c->bytes));
    }
  return v;
}

TEST(ModelParallelPlan, TensorParallelRunsTwoAllReducesOfBshPerLayerEachWay) {
  // GPT-3 13B: 40 layers, h = 5120, s = 2048, b = 1, bf16. One micro-batch per replica. Besides the layers' 4 per
  // layer: the embedding's and the head's all-reduce of b·s·h and the cross-entropy's 3 small ones.
  const Plan plan = build_plan(parse(mp_scenario({{"data", 4}, {"tensor", 2}}, 8, "gpt3-13b", 4)));
  const Volume v = volume(plan, 0, CommKind::Tensor);
  EXPECT_EQ(v.all_reduces, 40 * 4 + 2 + 3);
  EXPECT_EQ(v.bytes, 1u * 2048 * 5120 * 2); // the last: the first layer's attention, backward
  const Plan sp =
      build_plan(parse(mp_scenario({{"data", 4}, {"tensor", 2}, {"sequence_parallel", true}}, 8, "gpt3-13b", 4)));
  const Volume s = volume(sp, 0, CommKind::Tensor);
  EXPECT_EQ(s.all_reduces, 3); // the cross-entropy's
  EXPECT_EQ(s.reduce_scatters, 40 * 4 + 2);
  EXPECT_EQ(s.all_gathers, 40 * 4 + 2);
  EXPECT_DOUBLE_EQ(s.bus, v.bus); // a reduce-scatter and an all-gather move what an all-reduce moves
  // Fused per pass: the same bytes in 2 collectives per micro-batch.
  const Plan fused = build_plan(parse(
      mp_scenario({{"data", 4}, {"tensor", 2}, {"tensor_collectives", {{"granularity", "pass"}}}}, 8, "gpt3-13b", 4)));
  const Volume f = volume(fused, 0, CommKind::Tensor);
  EXPECT_EQ(f.all_reduces, 2);
  EXPECT_NEAR(f.bus, v.bus, v.bus * 1e-9);
}

TEST(ModelParallelPlan, FullRecomputationReissuesTheForwardsTensorCollectives) {
  // Megatron-LM reruns a layer's forward, all-reduces included, before its backward: 2 more per layer (4 more with
  // sequence parallelism: a reduce-scatter and an all-gather for each); the compute is the same in total.
  const auto plan_with = [](const char* recomputation, bool sp) {
    nlohmann::json doc = mp_scenario({{"data", 4}, {"tensor", 2}, {"sequence_parallel", sp}}, 8, "gpt3-13b", 4);
    doc["workload"]["recomputation"] = recomputation;
    return build_plan(parse(doc));
  };
  const Plan none = plan_with("none", false);
  const Plan full = plan_with("full", false);
  EXPECT_EQ(volume(full, 0, CommKind::Tensor).all_reduces, volume(none, 0, CommKind::Tensor).all_reduces + 40 * 2);
  EXPECT_EQ(volume(plan_with("selective", false), 0, CommKind::Tensor).all_reduces,
            volume(none, 0, CommKind::Tensor).all_reduces);
  const Plan full_sp = plan_with("full", true);
  const Plan none_sp = plan_with("none", true);
  EXPECT_EQ(volume(full_sp, 0, CommKind::Tensor).reduce_scatters,
            volume(none_sp, 0, CommKind::Tensor).reduce_scatters + 40 * 2);
  EXPECT_EQ(volume(full_sp, 0, CommKind::Tensor).all_gathers,
            volume(none_sp, 0, CommKind::Tensor).all_gathers + 40 * 2);
  // The rerun forwards are compute the backward already counted: full > selective > none in total compute.
  auto compute = [](const Plan& plan) {
    double sum = 0.0;
    for (const Step& step : resolved_steps(plan, 0))
      if (const auto* c = std::get_if<ComputeStep>(&step)) sum += c->amount;
    return sum;
  };
  EXPECT_GT(compute(full), compute(plan_with("selective", false)));
  EXPECT_GT(compute(plan_with("selective", false)), compute(none));
}

/** Sum of the bytes of every collective of `kind` on `rank`, and their count. */
std::pair<std::uint64_t, int> collective_bytes(const Plan& plan, int rank, CommKind kind) {
  std::uint64_t bytes = 0;
  int count = 0;
  for (const Step& step : resolved_steps(plan, rank))
    if (const auto* c = std::get_if<CollectiveStep>(&step); c && c->kind == kind) {
      bytes += c->bytes;
      ++count;
    }
  return {bytes, count};
}

TEST(ModelParallelPlan, TensorCommOverlapRunsEachLayersCollectivesBesideItsGemms) {
  // GPT-3 13B (40 layers, h = 5120, s = 2048, b = 1, bf16) on tensor 2 with sequence parallelism, one micro-batch per
  // replica, B = b·s·h·2 bytes. Transformer Engine's userbuffers, per layer and block (attention, MLP): forward, the
  // input's all-gather (B) beside the column GEMM, the row GEMM's reduce-scatter in 4 chunks (3B/4 beside, B/4
  // after); backward, the output gradient's all-gather beside the row GEMM's input gradient, the input re-gathered
  // beside the column GEMM's input gradient and its gradient reduce-scattered beside its weight gradient: one more
  // all-gather of B per block than without the overlap.
  const auto plan_with = [](bool overlap) {
    return build_plan(parse(mp_scenario(
        {{"data", 4}, {"tensor", 2}, {"sequence_parallel", true}, {"tp_comm_overlap", overlap}}, 8, "gpt3-13b", 4)));
  };
  const Plan plain = plan_with(false);
  const Plan overlapped = plan_with(true);
  const Volume p = volume(plain, 0, CommKind::Tensor);
  const Volume o = volume(overlapped, 0, CommKind::Tensor);
  EXPECT_EQ(p.all_gathers, 40 * 4 + 2);
  const std::uint64_t b = 1u * 2048 * 5120 * 2;
  EXPECT_EQ(o.all_gathers, 40 * 6 + 2); // the embedding's backward and the head's forward gathers as before
  EXPECT_EQ(o.reduce_scatters, 40 * 6 + 2);
  EXPECT_EQ(o.all_reduces, 3); // the cross-entropy's
  const auto [plain_bytes, plain_count] = collective_bytes(plain, 0, CommKind::Tensor);
  const auto [bytes, collectives] = collective_bytes(overlapped, 0, CommKind::Tensor);
  EXPECT_EQ(plain_count, 40 * 8 + 2 + 2 + 3);
  EXPECT_EQ(collectives, 40 * 12 + 2 + 2 + 3);
  EXPECT_EQ(bytes, plain_bytes + 40 * 2 * b);
  // Every overlap is a compute step marked to run beside the collective right after it: 4 forward, 6 backward.
  const std::vector<Step> steps = resolved_steps(overlapped, 0);
  int beside = 0;
  for (std::size_t k = 0; k < steps.size(); ++k)
    if (const auto* c = std::get_if<ComputeStep>(&steps[k]); c != nullptr && c->beside_next) {
      ++beside;
      ASSERT_LT(k + 1, steps.size());
      const auto* next = std::get_if<CollectiveStep>(&steps[k + 1]);
      ASSERT_NE(next, nullptr);
      EXPECT_EQ(next->kind, CommKind::Tensor);
      EXPECT_EQ(next->stream, 0);
      EXPECT_GT(c->amount, 0.0);
    }
  EXPECT_EQ(beside, 40 * 10);
  // The pipelined and bulk overlaps' GEMMs run on 108 - 16 of the A100's SMs: more compute, by less than 108 / 92.
  auto compute = [](const Plan& plan) {
    double sum = 0.0;
    for (const Step& step : resolved_steps(plan, 0))
      if (const auto* c = std::get_if<ComputeStep>(&step)) sum += c->amount;
    return sum;
  };
  EXPECT_GT(compute(overlapped), compute(plain) * 1.01);
  EXPECT_LT(compute(overlapped), compute(plain) * 108.0 / 92.0);
  EXPECT_NE(overlapped.summary.find("communication overlapped with the GEMMs"), std::string::npos);
  // Fused per pass: one overlap of each kind per pass, the same bytes.
  const Plan fused = build_plan(parse(mp_scenario({{"data", 4},
                                                   {"tensor", 2},
                                                   {"sequence_parallel", true},
                                                   {"tp_comm_overlap", true},
                                                   {"tensor_collectives", {{"granularity", "pass"}}}},
                                                  8, "gpt3-13b", 4)));
  EXPECT_EQ(collective_bytes(fused, 0, CommKind::Tensor).first, bytes);
  EXPECT_NEAR(compute(fused), compute(overlapped), compute(overlapped) * 1e-9);
}

TEST(ModelParallelPlan, AsyncTensorBackwardRunsTheColumnGemmsCollectivesBesideThem) {
  // GPT-3 13B (40 layers, h = 5120, s = 2048, b = 1, bf16) on tensor 2, one micro-batch per replica, B = b·s·h·2
  // bytes. Megatron's asynchronous backward, per layer and block (attention, MLP): with sequence parallelism the
  // column GEMM's input re-gathered (B) beside its input gradient and the input gradient reduce-scattered beside its
  // weight gradient, both contending for SMs; without it the input gradient's all-reduce beside the weight gradient.
  // The forward and the compute are the plain plan's; one more all-gather of B per block.
  auto plan_with = [](bool sp, bool async, const std::string& granularity = "layer") {
    return build_plan(parse(mp_scenario({{"data", 4},
                                         {"tensor", 2},
                                         {"sequence_parallel", sp},
                                         {"tp_async_backward", async},
                                         {"tensor_collectives", {{"granularity", granularity}}}},
                                        8, "gpt3-13b", 4)));
  };
  auto compute = [](const Plan& plan) {
    double sum = 0.0;
    for (const Step& step : resolved_steps(plan, 0))
      if (const auto* c = std::get_if<ComputeStep>(&step)) sum += c->amount;
    return sum;
  };
  // The contended overlaps, each a compute followed by its collective: (op, bytes) in order.
  auto overlaps = [](const Plan& plan) {
    std::vector<std::pair<CollectiveOp, std::uint64_t>> out;
    const std::vector<Step> steps = resolved_steps(plan, 0);
    for (std::size_t k = 0; k + 1 < steps.size(); ++k)
      if (const auto* c = std::get_if<ComputeStep>(&steps[k]); c != nullptr && c->beside_next) {
        EXPECT_TRUE(c->contended);
        EXPECT_GT(c->amount, 0.0);
        const auto* next = std::get_if<CollectiveStep>(&steps[k + 1]);
        EXPECT_TRUE(next != nullptr && next->kind == CommKind::Tensor && next->stream == 0);
        if (next != nullptr) out.emplace_back(next->op, next->bytes);
      }
    return out;
  };
  const std::uint64_t b = 1u * 2048 * 5120 * 2;
  for (const bool sp : {true, false}) {
    SCOPED_TRACE(sp ? "sequence parallel" : "all-reduce");
    const Plan plain = plan_with(sp, false);
    const Plan async = plan_with(sp, true);
    const auto [plain_bytes, plain_count] = collective_bytes(plain, 0, CommKind::Tensor);
    const auto [bytes, count] = collective_bytes(async, 0, CommKind::Tensor);
    EXPECT_EQ(count, plain_count + (sp ? 40 * 2 : 0));
    EXPECT_EQ(bytes, plain_bytes + (sp ? 40 * 2 * b : 0));
    EXPECT_NEAR(compute(async), compute(plain), compute(plain) * 1e-12);
    const auto beside = overlaps(async);
    ASSERT_EQ(beside.size(), static_cast<std::size_t>(40 * (sp ? 4 : 2)));
    for (std::size_t k = 0; k < beside.size(); ++k) {
      const CollectiveOp expected = !sp          ? CollectiveOp::AllReduce
                                    : k % 2 == 0 ? CollectiveOp::AllGather
                                                 : CollectiveOp::ReduceScatter;
      EXPECT_EQ(beside[k], std::make_pair(expected, b)) << k;
    }
    EXPECT_TRUE(overlaps(plain).empty());
    // Their NCCL kernels hold 16 of the A100's 108 SMs, the compute beside them at 92 / 108.
    EXPECT_DOUBLE_EQ(async.stream_compute_share, 92.0 / 108.0);
    EXPECT_NE(async.summary.find("beside the"), std::string::npos);
    // Fused per pass: the same bytes and compute.
    const Plan fused = plan_with(sp, true, "pass");
    EXPECT_EQ(collective_bytes(fused, 0, CommKind::Tensor).first, bytes);
    EXPECT_NEAR(compute(fused), compute(async), compute(async) * 1e-9);
  }
}

TEST(ModelParallelPlan, AMixtureOfExpertsRunsItsAttentionBlocksBackwardAsynchronously) {
  // Mixtral 8x7B (32 layers) on tensor 2 with sequence parallelism, one micro-batch per replica: each layer's attention
  // block re-gathers its input beside the QKV GEMM's input gradient and reduce-scatters that gradient beside its
  // weight gradient (2 contended overlaps and one more all-gather a layer); the experts' collectives are as before.
  auto plan_with = [](bool async) {
    return build_plan(
        parse(mp_scenario({{"data", 4}, {"tensor", 2}, {"sequence_parallel", true}, {"tp_async_backward", async}}, 8,
                          "mixtral-8x7b", 4)));
  };
  const Plan plain = plan_with(false);
  const Plan async = plan_with(true);
  EXPECT_EQ(volume(async, 0, CommKind::Tensor).all_gathers, volume(plain, 0, CommKind::Tensor).all_gathers + 32);
  EXPECT_EQ(volume(async, 0, CommKind::Tensor).reduce_scatters, volume(plain, 0, CommKind::Tensor).reduce_scatters);
  EXPECT_EQ(collective_bytes(async, 0, CommKind::Expert), collective_bytes(plain, 0, CommKind::Expert));
  int contended = 0;
  double plain_compute = 0.0;
  double async_compute = 0.0;
  for (const Step& step : resolved_steps(async, 0))
    if (const auto* c = std::get_if<ComputeStep>(&step)) {
      contended += c->beside_next && c->contended ? 1 : 0;
      async_compute += c->amount;
    }
  for (const Step& step : resolved_steps(plain, 0))
    if (const auto* c = std::get_if<ComputeStep>(&step)) plain_compute += c->amount;
  EXPECT_EQ(contended, 32 * 2);
  EXPECT_NEAR(async_compute, plain_compute, plain_compute * 1e-12);
}

TEST(ModelParallelPlan, TheMegatronStacksRunTheTensorBackwardAsynchronously) {
  // Megatron-Core: with any tensor split of a dense model without userbuffers; Megatron-LM of 2021 only with sequence
  // parallelism (its 2022 layers); other stacks not.
  auto async = [](const std::string& stack, bool sp, bool overlap = false, int tensor = 2) {
    nlohmann::json doc =
        mp_scenario({{"data", 8 / tensor}, {"tensor", tensor}, {"sequence_parallel", sp}, {"tp_comm_overlap", overlap}},
                    8, "gpt3-13b", 8);
    doc["workload"]["stack"] = stack;
    return std::get<ModelParallel>(parse(doc).strategy).tp_async_backward;
  };
  EXPECT_TRUE(async("megatron-core-2024", true));
  EXPECT_TRUE(async("megatron-core-2024", false));
  EXPECT_FALSE(async("megatron-core-2024", true, true));
  EXPECT_FALSE(async("megatron-core-2024", false, false, 1));
  EXPECT_TRUE(async("megatron-lm-2021", true));
  EXPECT_FALSE(async("megatron-lm-2021", false));
  EXPECT_FALSE(async("custom", true));
  EXPECT_FALSE(async("torchtitan", true));
}

TEST(ModelParallelPlan, VocabularyParallelEmbeddingAndHeadAddOneAllReduceOfBshEachWayAndThreeOfBsValues) {
  // GPT-2 small, tensor 4 x data 2, one micro-batch of b = 1 per replica: L = 12, s = 1024, h = 768, bf16.
  // Forward: 2L all-reduces of b·s·h·2 bytes in the layers, one after the embedding lookup, and the vocabulary-parallel
  // cross-entropy's three of b·s fp32 values (max logit, target logit, sum of exponentials). Backward: 2L in the
  // layers and one for the head's input gradient.
  const Plan plan = build_plan(parse(mp_scenario({{"data", 2}, {"tensor", 4}}, 8, "gpt2-small", 2)));
  const std::uint64_t bsh = 1u * 1024 * 768 * 2;
  const std::uint64_t bs = 1u * 1024 * 4;
  const auto [bytes, count] = collective_bytes(plan, 0, CommKind::Tensor);
  EXPECT_EQ(count, 4 * 12 + 2 + 3);
  EXPECT_EQ(bytes, (4 * 12 + 2) * bsh + 3 * bs);
  // Every tensor rank runs the same collectives.
  EXPECT_EQ(collective_bytes(plan, 3, CommKind::Tensor), collective_bytes(plan, 0, CommKind::Tensor));
  // The order: the embedding's all-reduce is the first collective, the cross-entropy's three end the forward pass.
  std::vector<std::uint64_t> sizes;
  for (const Step& step : resolved_steps(plan, 0))
    if (const auto* c = std::get_if<CollectiveStep>(&step); c && c->kind == CommKind::Tensor) sizes.push_back(c->bytes);
  ASSERT_EQ(sizes.size(), 53u);
  EXPECT_EQ(sizes[0], bsh);
  for (std::size_t i = 25; i < 28; ++i) EXPECT_EQ(sizes[i], bs) << i;
  EXPECT_EQ(sizes[28], bsh); // the head's input gradient, first of the backward pass
}

TEST(ModelParallelPlan, VocabularyParallelEmbeddingAndHeadSplitTheirParametersByTheTensorDegree) {
  // GPT-2 small on 4 tensor ranks: V = 50257 (shards of ceil(V/4) = 12565 rows), h = 768, s = 1024 learned
  // positions, LayerNorm with biases, tied embeddings.
  const Scenario s = parse(mp_scenario({{"data", 2}, {"tensor", 4}}, 8, "gpt2-small", 2));
  const auto& training = std::get<ModelTraining>(s.workload);
  const TransformerModel model = training.transformer();
  const double h = 768;
  // Per layer and rank: two whole LayerNorms (2h each); QKV and MLP up column-parallel (weights and biases / 4);
  // output projection and MLP down row-parallel (weights / 4, whole biases).
  const double layer =
      2 * 2 * h + (h * 3 * h + 3 * h) / 4 + (h * h / 4 + h) + (h * 4 * h + 4 * h) / 4 + (4 * h * h / 4 + h);
  EXPECT_DOUBLE_EQ(model.layer_parameters(4), layer);
  // What the 4 ranks hold together: the sharded weights once, the norms and row-parallel biases 4 times.
  EXPECT_DOUBLE_EQ(4 * model.layer_parameters(4) - model.layer_parameters(), 3 * (4 * h + 2 * h));
  EXPECT_EQ(model.vocab_shard(4), 12565);
  EXPECT_DOUBLE_EQ(model.embedding_parameters(4), 12565 * h + 1024 * h); // the position table whole
  EXPECT_DOUBLE_EQ(model.output_parameters(4), 2 * h);                   // tied: the final norm only
  const MemoryBreakdown m = model_parallel_memory(training, std::get<ModelParallel>(s.strategy), s.cluster.gpu, 0);
  const double parameters = 12 * layer + 12565 * h + 1024 * h + 2 * h;
  EXPECT_DOUBLE_EQ(m.parameters, parameters * 2); // bf16
  EXPECT_DOUBLE_EQ(m.gradients, parameters * 2);
  EXPECT_DOUBLE_EQ(m.optimizer_states, parameters * 12); // Adam: fp32 master, momentum, variance
  // The head's logits GEMM and the cross-entropy run over the shard: 1/4 of the flops (12565 of 50257 columns).
  const auto whole = model.outer_ops(1);
  const auto split = model.outer_ops(1, TensorSplit{4, false});
  ASSERT_EQ(split[2].name, "logits");
  EXPECT_EQ(split[2].gemm->n, 12565);
  EXPECT_DOUBLE_EQ(split[2].forward_flops, 2.0 * 1024 * 12565 * 768);
  EXPECT_DOUBLE_EQ(split[3].forward_flops, whole[3].forward_flops * 12565 / 50257);
}

TEST(ModelParallelPlan, TiedEmbeddingsAllReduceTheirGradientBetweenTheFirstAndLastStageOnly) {
  // GPT-2 small (tied), tensor 2 x pipeline 4, no data parallelism: the only data-kind collective is Megatron-LM's
  // embedding group all-reduce of the token table shard's gradient, ceil(V/2) x h elements in bf16, once per
  // iteration, on the first stage (ranks 0, 1) and the last (ranks 6, 7).
  const Plan plan = build_plan(parse(mp_scenario({{"tensor", 2}, {"pipeline", 4}}, 8, "gpt2-small", 8)));
  const std::uint64_t shard = 25129u * 768 * 2;
  for (int rank : {0, 1, 6, 7}) {
    EXPECT_EQ(collective_bytes(plan, rank, CommKind::Data), std::make_pair(shard, 1)) << "rank " << rank;
    for (const Step& step : resolved_steps(plan, rank))
      if (const auto* c = std::get_if<CollectiveStep>(&step); c && c->kind == CommKind::Data) {
        EXPECT_EQ(c->op, CollectiveOp::AllReduce);
        EXPECT_EQ(plan.groups[static_cast<std::size_t>(c->group)], (std::vector<int>{rank % 2, rank % 2 + 6}));
      }
  }
  for (int rank : {2, 3, 4, 5}) EXPECT_EQ(collective_bytes(plan, rank, CommKind::Data).second, 0) << "rank " << rank;
  // The last stage holds the copy: 3 layers, the final norm and the shard.
  const Scenario s = parse(mp_scenario({{"tensor", 2}, {"pipeline", 4}}, 8, "gpt2-small", 8));
  const TransformerModel model = std::get<ModelTraining>(s.workload).transformer();
  ASSERT_EQ(plan.stage_memory.size(), 4u);
  EXPECT_DOUBLE_EQ(plan.stage_memory[3].parameters, (3 * model.layer_parameters(2) + 2 * 768 + 25129.0 * 768) * 2);
  EXPECT_DOUBLE_EQ(plan.stage_memory[1].parameters, 3 * model.layer_parameters(2) * 2);
  // One stage: the head uses the embedding's own table, nothing to synchronise.
  const Plan one =
      build_plan(parse(mp_scenario({{"tensor", 4}, {"data", 2}, {"gradient_sync", "none"}}, 8, "gpt2-small", 2)));
  for (int rank = 0; rank < 8; ++rank) EXPECT_EQ(collective_bytes(one, rank, CommKind::Data).second, 0);
  // Untied (Llama 2 7B): the head has its own matrix, nothing to synchronise either.
  const Plan untied = build_plan(parse(mp_scenario({{"tensor", 2}, {"pipeline", 4}}, 8, "llama2-7b", 8)));
  for (int rank = 0; rank < 8; ++rank) EXPECT_EQ(collective_bytes(untied, rank, CommKind::Data).second, 0);
}

/** A uniform decoder without biases or learned positions (every op's work splits evenly with sequence parallelism):
 * h = 1024, 8 heads, f = 4096, V = 8, s = 1024. */
nlohmann::json uniform_model() {
  return {{"schema_version", 1},
          {"kind", "transformer"},
          {"name", "uniform"},
          {"description", "test"},
          {"source", "test"},
          {"mlp", "plain"},
          {"norm", "layernorm"},
          {"bias", false},
          {"tied_embeddings", true},
          {"architecture", "decoder"},
          {"layers", 4},
          {"hidden_size", 1024},
          {"heads", 8},
          {"ffn_size", 4096},
          {"vocab_size", 8},
          {"sequence_length", 1024},
          {"position_embedding", "rotary"}};
}

/** Compute (flop at peak) of micro-batch 0's forward and backward on rank 0 of a 2-GPU run of the uniform model on a
 * GPU with `points` as its bf16 GEMM efficiency table, no launch overhead and memory bandwidth at the physical ceiling
 * (1 PB/s: never the bound here). */
double micro_batch_compute(const nlohmann::json& points, nlohmann::json strategy) {
  nlohmann::json doc = mp_scenario(std::move(strategy), 2, "gpt2-small", 2);
  doc["workload"]["model"] = uniform_model();
  doc["cluster"]["gpu"] = {
      {"name", "table"},           {"peak_flops", "100TFLOPs"},   {"memory_bandwidth", 1e15},
      {"memory_capacity", "80GB"}, {"kernel_launch_overhead", 0}, {"gemm_efficiency", {{"points", points}}}};
  const Plan plan = build_plan(parse(doc));
  double amount = 0.0;
  for (const Step& step : resolved_steps(plan, 0))
    if (const auto* c = std::get_if<ComputeStep>(&step))
      if (plan.labels[c->label] == "F mb0" || plan.labels[c->label] == "B mb0") amount += c->amount;
  return amount;
}

TEST(ModelParallelPlan, SplitGemmsArePricedAtTheirOwnShape) {
  // GPT-2 small on 4 ranks: column-parallel GEMMs keep N/4, row-parallel K/4, the attention core 12/4 heads.
  const WorkloadSpec spec = load_workload(source_dir(), "gpt2-small", "test", "/workload");
  const TransformerModel model = spec.transformer(kMegatronLm2021Kernels);
  std::map<std::string, GemmShape> shapes;
  for (const ComputeOp& op : model.layer_ops(1, TensorSplit{4, false}))
    if (op.gemm) shapes[op.name] = *op.gemm;
  EXPECT_EQ(shapes["qkv_projection"], (GemmShape{1, 1024, 3 * 768 / 4, 768}));
  EXPECT_EQ(shapes["attention_scores"], (GemmShape{3, 1024, 1024, 64}));
  EXPECT_EQ(shapes["attention_over_values"], (GemmShape{3, 1024, 64, 1024}));
  EXPECT_EQ(shapes["output_projection"], (GemmShape{1, 1024, 768, 768 / 4}));
  EXPECT_EQ(shapes["mlp_up"], (GemmShape{1, 1024, 3072 / 4, 768}));
  EXPECT_EQ(shapes["mlp_down"], (GemmShape{1, 1024, 768, 3072 / 4}));
  // A fused attention kernel keeps the rank's heads too.
  int fused = 0;
  for (const ComputeOp& op : spec.transformer().layer_ops(1, TensorSplit{4, false})) {
    if (!op.attention) continue;
    EXPECT_EQ(*op.attention, (AttentionShape{3, 1024, 64, true}));
    ++fused;
  }
  EXPECT_EQ(fused, 1);

  // One point at the smallest shape: every GEMM lies above it on every axis, where the edge value holds.
  const nlohmann::json flat = {{{"m", 1}, {"n", 1}, {"k", 1}, {"data_type", "bf16"}, {"efficiency", 1.0}}};
  // Efficiency 0.8 at 4096 on every axis, halved for each axis at 64 (log-linear in between).
  nlohmann::json dropping = nlohmann::json::array();
  for (int m : {64, 4096})
    for (int n : {64, 4096})
      for (int k : {64, 4096})
        dropping.push_back({{"m", m},
                            {"n", n},
                            {"k", k},
                            {"data_type", "bf16"},
                            {"efficiency", 0.8 * (m == 64 ? 0.5 : 1) * (n == 64 ? 0.5 : 1) * (k == 64 ? 0.5 : 1)}});
  const nlohmann::json one = {{"data", 2}};
  const nlohmann::json two = {{"tensor", 2}, {"sequence_parallel", true}};
  // A flat table and sequence parallelism (every op's work halved): twice as fast, but for the few memory-bound
  // elementwise ops at 1 PB/s (a part in a million).
  EXPECT_NEAR(micro_batch_compute(flat, one) / micro_batch_compute(flat, two), 2.0, 1e-5);
  // Smaller GEMMs run at a lower efficiency: less than twice as fast (but faster).
  const double speedup = micro_batch_compute(dropping, one) / micro_batch_compute(dropping, two);
  EXPECT_LT(speedup, 2.0 * (1.0 - 1e-3)) << speedup;
  EXPECT_GT(speedup, 1.0);
  // Without sequence parallelism the norms and residual adds run whole on both ranks: less than 2 with a flat table.
  const double whole = micro_batch_compute(flat, one) / micro_batch_compute(flat, {{"tensor", 2}});
  EXPECT_LT(whole, 2.0 * (1.0 - 1e-4)) << whole;
  EXPECT_GT(whole, 1.0);
}

TEST(ModelParallelPlan, ZeroThreeMovesOneAndAHalfTimesThePlainAllReduceVolume) {
  auto data_volume = [](int zero) {
    const Plan plan = build_plan(parse(mp_scenario({{"data", 8}, {"zero", zero}}, 8, "gpt2-xl", 8)));
    return volume(plan, 0, CommKind::Data);
  };
  const Volume plain = data_volume(0);
  EXPECT_GT(plain.all_reduces, 0);
  EXPECT_EQ(plain.reduce_scatters, 0);
  for (int zero : {1, 2}) {
    const Volume v = data_volume(zero);
    EXPECT_EQ(v.all_reduces, 0);
    EXPECT_EQ(v.reduce_scatters, v.all_gathers);
    EXPECT_NEAR(v.bus, plain.bus, plain.bus * 1e-6) << "ZeRO-" << zero;
  }
  const Volume z3 = data_volume(3);
  EXPECT_NEAR(z3.bus, 1.5 * plain.bus, plain.bus * 1e-6);
  EXPECT_EQ(z3.all_gathers, 2 * z3.reduce_scatters); // forward and backward gathers per reduce-scatter
}

TEST(ModelParallelPlan, ZeroTwoReduceScattersEveryMicroBatchIntoItsShard) {
  // 4 micro-batches per replica (data 2, global batch 8, micro-batch 1), with and without a pipeline: ZeRO-1
  // reduce-scatters the accumulated gradients once, ZeRO-2 after every micro-batch's backward (4x the bytes), and
  // keeps 1/D of the gradients in memory. The all-gathers after the step are the same.
  for (int pipeline : {1, 2}) {
    SCOPED_TRACE(pipeline);
    auto plan_of = [&](int zero) {
      return build_plan(
          parse(mp_scenario({{"data", 2}, {"pipeline", pipeline}, {"zero", zero}}, 2 * pipeline, "gpt2-xl", 8)));
    };
    const Volume one = volume(plan_of(1), 0, CommKind::Data);
    const Volume two = volume(plan_of(2), 0, CommKind::Data);
    EXPECT_GT(one.reduce_scatters, 0);
    EXPECT_EQ(two.reduce_scatters, 4 * one.reduce_scatters);
    EXPECT_EQ(two.all_gathers, one.all_gathers);
    EXPECT_EQ(two.all_reduces, one.all_reduces); // the tied embedding's sync between first and last stage
    if (pipeline == 1) {
      EXPECT_NEAR(two.bus, 2.5 * one.bus, one.bus * 1e-9); // 4 scatters + 1 gather against 1 + 1
    }
    const Scenario s =
        parse(mp_scenario({{"data", 2}, {"pipeline", pipeline}, {"zero", 2}}, 2 * pipeline, "gpt2-xl", 8));
    const auto& training = std::get<ModelTraining>(s.workload);
    const auto& mp = std::get<ModelParallel>(s.strategy);
    const MemoryBreakdown m = model_parallel_memory(training, mp, s.cluster.gpu, 0);
    EXPECT_DOUBLE_EQ(m.gradients, m.parameters / 2.0);
  }
}

TEST(ModelParallelPlan, ZeroThreeReduceScattersEveryMicroBatchIntoItsShard) {
  // FSDP keeps 1/D of the gradients, so every micro-batch's backward reduce-scatters its gradients into the shard (no
  // no_sync): with 4 micro-batches per replica 4x the reduce-scatters and 4x the data-parallel bytes of one
  // micro-batch, and still one reduce-scatter per forward and backward gather of a unit.
  auto volume_of = [](int global_batch) {
    return volume(build_plan(parse(mp_scenario({{"data", 2}, {"zero", 3}}, 2, "gpt2-xl", global_batch))), 0,
                  CommKind::Data);
  };
  const Volume one = volume_of(2);
  const Volume four = volume_of(8);
  EXPECT_GT(one.reduce_scatters, 0);
  EXPECT_EQ(four.reduce_scatters, 4 * one.reduce_scatters);
  EXPECT_EQ(four.all_gathers, 2 * four.reduce_scatters);
  EXPECT_EQ(four.all_gathers, 4 * one.all_gathers);
  EXPECT_NEAR(four.bus, 4.0 * one.bus, one.bus * 1e-9);
  // The report's strategy line says so (ZeRO-1 overlaps only the last micro-batch's backward).
  const auto summary = [](int zero) {
    return build_plan(parse(mp_scenario({{"data", 2}, {"zero", zero}}, 2, "gpt2-xl", 8))).summary;
  };
  EXPECT_NE(summary(3).find("ZeRO-3 reduce_scatter / ring overlapping every backward"), std::string::npos)
      << summary(3);
  EXPECT_NE(summary(2).find("overlapping every backward"), std::string::npos) << summary(2);
  EXPECT_NE(summary(1).find("overlapping the last backward"), std::string::npos) << summary(1);
}

TEST(ModelParallelPlan, MegatronReducesBf16GradientsInFp32AndGathersTheParametersInBf16) {
  // Megatron-LM forces accumulate_allreduce_grads_in_fp32 for bf16: the reduce-scatter moves 4 bytes per parameter,
  // the all-gather of the updated parameters 2, the gradient buffers hold 4. `gradient_data_type` says it for any
  // stack; the custom stack keeps the data type.
  auto scenario = [](const std::string& stack, const std::string& gradients) {
    nlohmann::json doc = mp_scenario({{"data", 8}, {"zero", 1}}, 8, "gpt2-xl", 8);
    doc["workload"]["stack"] = stack;
    if (!gradients.empty()) doc["workload"]["gradient_data_type"] = gradients;
    return parse(doc);
  };
  const Scenario custom = scenario("custom", "");
  const Scenario megatron = scenario("megatron-core-2024", "");
  EXPECT_EQ(std::get<ModelTraining>(custom.workload).gradient_type(), "bf16");
  EXPECT_EQ(std::get<ModelTraining>(megatron.workload).gradient_type(), "fp32");
  EXPECT_EQ(std::get<ModelTraining>(scenario("megatron-lm-2021", "").workload).gradient_type(), "fp32");
  EXPECT_EQ(std::get<ModelTraining>(scenario("megatron-core-2024", "bf16").workload).gradient_type(), "bf16");
  EXPECT_EQ(std::get<ModelTraining>(scenario("custom", "fp32").workload).gradient_type(), "fp32");

  const Volume b = volume(build_plan(custom), 0, CommKind::Data);
  const Volume f = volume(build_plan(megatron), 0, CommKind::Data);
  // Buckets fill by bytes, so fp32 gradients may make more of them; every scatter still has its gather.
  EXPECT_EQ(f.reduce_scatters, f.all_gathers);
  EXPECT_GE(f.reduce_scatters, b.reduce_scatters);
  // bf16: scatter s + gather s (no pipeline, so no tied-embedding all-reduce); fp32: 2s + s.
  EXPECT_NEAR(f.bus, 1.5 * b.bus, b.bus * 1e-6);

  const auto memory = [](const Scenario& s) {
    return model_parallel_memory(std::get<ModelTraining>(s.workload), std::get<ModelParallel>(s.strategy),
                                 s.cluster.gpu, 0);
  };
  EXPECT_DOUBLE_EQ(memory(megatron).gradients, 2.0 * memory(custom).gradients);
  EXPECT_DOUBLE_EQ(memory(megatron).parameters, memory(custom).parameters);
  // The optimizer step reads the fp32 gradients for the norm and the update, and zeroes them: 3 x 2 bytes more.
  EXPECT_EQ(optimizer_step_bytes_per_parameter(Optimizer::Adam, "bf16", true, "fp32"),
            optimizer_step_bytes_per_parameter(Optimizer::Adam, "bf16", true) + 6.0);
}

TEST(ModelParallelPlan, OverlappedParameterGathersAreQueuedFirstAndAwaitedBucketByBucket) {
  // gpt2-xl (48 layers) on data 8 with ZeRO-1, buckets of 100 MB: with overlap_param_gather every bucket's all-gather
  // is queued on the communication stream before the first forward pass, which waits before each bucket's first
  // layer until the gathers up to it are done (pending 3, 2, 1, 0 with 4 buckets); none blocks after the step, and
  // the gathered bytes are the same.
  auto plan_of = [](bool overlap) {
    nlohmann::json doc = mp_scenario({{"data", 8}, {"zero", 1}}, 8, "gpt2-xl", 16);
    doc["strategy"]["gradient_sync"] = {{"bucket_size", "100MB"}, {"overlap_param_gather", overlap}};
    return build_plan(parse(doc));
  };
  const Plan blocking = plan_of(false);
  const Plan overlapped = plan_of(true);
  auto gathers = [](const Plan& plan, int stream) {
    std::uint64_t bytes = 0;
    int count = 0;
    for (const Step& step : resolved_steps(plan, 0))
      if (const auto* c = std::get_if<CollectiveStep>(&step);
          c && c->op == CollectiveOp::AllGather && c->kind == CommKind::Data && c->stream == stream) {
        bytes += c->bytes;
        ++count;
      }
    return std::pair{count, bytes};
  };
  const auto [blocking_count, blocking_bytes] = gathers(blocking, 0);
  EXPECT_EQ(gathers(blocking, 1).first, 0);
  EXPECT_EQ(gathers(overlapped, 0).first, 0);
  const auto [count, bytes] = gathers(overlapped, 1);
  EXPECT_EQ(count, blocking_count);
  EXPECT_GE(count, 2);
  EXPECT_NEAR(static_cast<double>(bytes), static_cast<double>(blocking_bytes), 1e-9 * static_cast<double>(bytes));
  // The program opens with the gathers, then waits for them one by one during the first micro-batch's forward.
  const auto steps = resolved_steps(overlapped, 0);
  for (int i = 0; i < count; ++i)
    ASSERT_TRUE(std::holds_alternative<CollectiveStep>(steps[static_cast<std::size_t>(i)]));
  std::vector<std::uint32_t> waits;
  for (const Step& step : steps)
    if (const auto* sync = std::get_if<StreamSyncStep>(&step)) waits.push_back(sync->pending);
  ASSERT_GE(waits.size(), static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i)
    EXPECT_EQ(waits[static_cast<std::size_t>(i)], static_cast<std::uint32_t>(count - 1 - i));
}

TEST(ModelParallelPlan, MegatronCoreReducesLaterPipelineStagesInOneBucket) {
  // gpt2-xl on data 2 x pipeline 2 with ZeRO-1 and 50 MB buckets: Megatron-Core (f2e5db4) sets bucket_size = None on
  // every pipeline rank but the first, so stage 1 reduce-scatters its gradients in one bucket and gathers its
  // parameters in one, stage 0 in several; the bytes are the same either way. Off (the custom stack's default), both
  // stages bucket alike.
  auto plan_of = [](const std::string& stack, std::optional<bool> one_bucket) {
    nlohmann::json doc = mp_scenario({{"data", 2}, {"pipeline", 2}, {"zero", 1}}, 4, "gpt2-xl", 8);
    doc["workload"]["stack"] = stack;
    doc["strategy"]["gradient_sync"] = {{"bucket_size", "50MB"}};
    if (one_bucket) doc["strategy"]["gradient_sync"]["one_bucket_after_first_stage"] = *one_bucket;
    const Scenario s = parse(doc);
    EXPECT_EQ(std::get<ModelParallel>(s.strategy).gradient_sync.one_bucket_after_first_stage,
              one_bucket.value_or(stack == "megatron-core-2024"));
    return build_plan(s);
  };
  auto data_collectives = [](const Plan& plan, int stage, CollectiveOp op) {
    std::pair<int, std::uint64_t> out{0, 0};
    for (std::size_t r = 0; r < plan.ranks.size(); ++r) {
      if (plan.stage_of_rank[r] != stage) continue;
      for (const Step& step : resolved_steps(plan, r))
        if (const auto* c = std::get_if<CollectiveStep>(&step); c && c->op == op && c->kind == CommKind::Data) {
          ++out.first;
          out.second += c->bytes;
        }
      break;
    }
    return out;
  };
  const Plan megatron = plan_of("megatron-core-2024", std::nullopt);
  const Plan custom = plan_of("custom", std::nullopt);
  const Plan forced = plan_of("custom", true);
  for (CollectiveOp op : {CollectiveOp::ReduceScatter, CollectiveOp::AllGather}) {
    EXPECT_GT(data_collectives(megatron, 0, op).first, 1) << to_string(op);
    EXPECT_EQ(data_collectives(megatron, 1, op).first, 1) << to_string(op);
    EXPECT_GT(data_collectives(custom, 1, op).first, 1) << to_string(op);
    EXPECT_EQ(data_collectives(forced, 1, op).first, 1) << to_string(op);
    EXPECT_EQ(data_collectives(forced, 0, op), data_collectives(custom, 0, op)) << to_string(op);
  }
  // fp32 gradients under megatron, bf16 under custom: compare the forced plan with the custom one.
  EXPECT_EQ(data_collectives(forced, 1, CollectiveOp::ReduceScatter).second,
            data_collectives(custom, 1, CollectiveOp::ReduceScatter).second);
}

TEST(PipelineSchedule, MicroBatchGroupsFollowMegatronCoresScheduleTable) {
  // Megatron-Core's docstring of microbatch_group_size_per_vp_stage (model_parallel_config.py): for PP 2 and VP 2,
  // groups of 2 over 4 micro-batches run "0 1 0 1 2 3 2 3" on rank 0; groups of 3 over 5, "0 1 2 0 1 2 3 4 3 4".
  auto forwards = [](int m, int group) {
    std::vector<std::pair<int, int>> out; // (micro-batch, chunk)
    for (const PipelineOp& op : pipeline_schedule(PipelineSchedule::Interleaved, 2, 0, m, 2, group))
      if (op.pass == Pass::Forward) out.emplace_back(op.micro_batch, op.chunk);
    return out;
  };
  using V = std::vector<std::pair<int, int>>;
  EXPECT_EQ(forwards(4, 2), (V{{0, 0}, {1, 0}, {0, 1}, {1, 1}, {2, 0}, {3, 0}, {2, 1}, {3, 1}}));
  EXPECT_EQ(forwards(5, 3), (V{{0, 0}, {1, 0}, {2, 0}, {0, 1}, {1, 1}, {2, 1}, {3, 0}, {4, 0}, {3, 1}, {4, 1}}));
  // The default group is the pipeline degree: the same schedule as naming it.
  for (int stage = 0; stage < 4; ++stage)
    EXPECT_EQ(pipeline_schedule(PipelineSchedule::Interleaved, 4, stage, 8, 3),
              pipeline_schedule(PipelineSchedule::Interleaved, 4, stage, 8, 3, 4));
  // Warm-up (p - s - 1) x 2 + (v - 1) x N forwards, then one forward one backward: N - p more chunk passes in flight
  // per extra chunk on every stage. Every pass runs once, each micro-batch's backward after its forward.
  const int p = 4;
  const int v = 3;
  const int m = 12;
  for (int group : {4, 6, 12}) {
    for (int stage = 0; stage < p; ++stage) {
      const auto ops = pipeline_schedule(PipelineSchedule::Interleaved, p, stage, m, v, group);
      const int warmup = std::min((p - stage - 1) * 2 + (v - 1) * group, m * v);
      EXPECT_EQ(peak_in_flight(ops), std::min(warmup + 1, m * v)) << group << " " << stage;
      for (int k = 0; k < warmup; ++k) EXPECT_EQ(ops[static_cast<std::size_t>(k)].pass, Pass::Forward);
      std::map<std::pair<int, int>, int> seen;
      for (const PipelineOp& op : ops) {
        int& state = seen[{op.micro_batch, op.chunk}];
        EXPECT_EQ(state, op.pass == Pass::Forward ? 0 : 1) << group << " " << stage;
        state += 1;
      }
      EXPECT_EQ(seen.size(), static_cast<std::size_t>(m * v));
    }
  }
}

TEST(ModelParallelMemory, LargerMicroBatchGroupsKeepMoreChunksInFlight) {
  auto memory = [](int group) {
    nlohmann::json strategy = {{"pipeline", 4}, {"schedule", "interleaved"}, {"virtual_stages", 2}};
    if (group > 0) strategy["microbatch_group"] = group;
    const Scenario s = parse(mp_scenario(strategy, 8, "gpt3-13b", 24)); // data 2: 12 micro-batches per replica
    return model_parallel_memory(std::get<ModelTraining>(s.workload), std::get<ModelParallel>(s.strategy),
                                 s.cluster.gpu, 1);
  };
  // Stage 1 holds warm-up + 1 chunks of 5 layers: (4 - 2) x 2 + 4 + 1 = 9 by default, 4 more with groups of 8.
  const Scenario s = parse(mp_scenario({{"pipeline", 4}}, 8, "gpt3-13b", 24));
  const double layer =
      std::get<ModelTraining>(s.workload).transformer().layer_activation_bytes(1, Recomputation::None, 2.0);
  EXPECT_NEAR(memory(0).activations, 9 * 5 * layer, 1.0);
  EXPECT_NEAR(memory(4).activations, 9 * 5 * layer, 1.0);
  EXPECT_NEAR(memory(8).activations, 13 * 5 * layer, 1.0);
}

TEST(ModelParallelMemory, UnevenChunksWeighTheChunkPassesReallyInFlight) {
  // GPT-3 13B (40 layers) on 4 stages x 2 chunks, 8 micro-batches per replica, the chunks uneven: stage 0 holds an
  // embedding-only chunk and one of 5 layers, stage 3 chunks of 5 and 10.
  nlohmann::json strategy = {{"pipeline", 4}, {"schedule", "interleaved"}, {"virtual_stages", 2}};
  strategy["stage_layers"] = {0, 5, 5, 5, 5, 5, 5, 10};
  const Scenario s = parse(mp_scenario(strategy, 8, "gpt3-13b", 16));
  const auto& training = std::get<ModelTraining>(s.workload);
  const auto& mp = std::get<ModelParallel>(s.strategy);
  const double layer = training.transformer().layer_activation_bytes(1, Recomputation::None, 2.0);
  // Stage 0: 10 warm-up forwards (4 through the empty chunk, 4 through the 5 layers, 2 through the empty one), then
  // each forward paired with a backward of the 5-layer chunk: at most 4 passes of 5 layers, not the 11 passes' mean
  // (11 x 5 / 2 = 27.5 layers).
  EXPECT_NEAR(model_parallel_memory(training, mp, s.cluster.gpu, 0).activations, 20 * layer, 1.0);
  // Stage 3: 4 warm-up passes of 5 layers, then each 10-layer pass in flight beside them before its backward: 30.
  // The chunk mean would say 5 passes x 7.5 = 37.5.
  // With it, the head's input and fp32 logits (the loss is the default fused kernel: no transient).
  const TransformerModel model = training.transformer();
  const double tokens = 2048.0;
  const double head = model.outer_activation_bytes(1, 2.0) - 4.0 * tokens * static_cast<double>(model.config().vocab) +
                      4.0 * tokens * static_cast<double>(model.vocab_shard(1));
  EXPECT_NEAR(model_parallel_memory(training, mp, s.cluster.gpu, 3).activations, 30 * layer + head, 1.0);
  // Even chunks keep the product: passes in flight x one chunk (stage 1, chunks of 5 and 5 layers: a warm-up of
  // (4 - 1 - 1) x 2 + 4 = 8 passes, so 9 in flight).
  EXPECT_NEAR(model_parallel_memory(training, mp, s.cluster.gpu, 1).activations, 45 * layer, 1.0);
}

TEST(ModelParallelErrors, MicroBatchGroupsAreCheckedAsMegatronCoreChecksThem) {
  auto error = [](nlohmann::json strategy, int global_batch) {
    return test::input_error([&] { parse(mp_scenario(std::move(strategy), 8, "gpt3-13b", global_batch)); });
  };
  const nlohmann::json interleaved = {{"pipeline", 4}, {"schedule", "interleaved"}, {"virtual_stages", 2}};
  auto with = [&](int group) {
    nlohmann::json s = interleaved;
    s["microbatch_group"] = group;
    return s;
  };
  // 1F1B has no groups.
  InputError e = error({{"pipeline", 4}, {"microbatch_group", 4}}, 24);
  EXPECT_EQ(e.pointer(), "/strategy/microbatch_group") << e.what();
  // Fewer than the stages, more than the micro-batches (12 per replica), a last group shorter than the stages.
  e = error(with(3), 24);
  EXPECT_EQ(e.pointer(), "/strategy/microbatch_group") << e.what();
  EXPECT_NE(std::string(e.detail()).find("at least the pipeline degree (4)"), std::string::npos) << e.what();
  e = error(with(13), 24);
  EXPECT_EQ(e.pointer(), "/strategy/microbatch_group") << e.what();
  EXPECT_NE(std::string(e.detail()).find("at most the micro-batches per replica (12)"), std::string::npos) << e.what();
  e = error(with(5), 24); // 12 = 2 x 5 + 2
  EXPECT_EQ(e.pointer(), "/strategy/microbatch_group") << e.what();
  EXPECT_NE(std::string(e.detail()).find("leave a last group of 2"), std::string::npos) << e.what();
  e = error(with(0), 24);
  EXPECT_EQ(e.pointer(), "/strategy/microbatch_group") << e.what();
  // Accepted: 14 micro-batches (not divisible by 4) in groups of 5 (last group 4).
  EXPECT_NO_THROW(parse(mp_scenario(with(5), 8, "gpt3-13b", 28)));
  e = error(interleaved, 28);
  EXPECT_EQ(e.pointer(), "/workload/global_batch") << e.what();
}

TEST(ModelParallelMemory, PipelineKeepsWhatItsScheduleHoldsInFlight) {
  const Scenario gpipe = parse(mp_scenario({{"pipeline", 8}, {"schedule", "gpipe"}}, 8, "gpt3-13b", 32));
  const Scenario onef = parse(mp_scenario({{"pipeline", 8}, {"schedule", "1f1b"}}, 8, "gpt3-13b", 32));
  const auto& training = std::get<ModelTraining>(gpipe.workload);
  const auto& mp_g = std::get<ModelParallel>(gpipe.strategy);
  const auto& mp_1 = std::get<ModelParallel>(onef.strategy);
  const GpuProfile& gpu = gpipe.cluster.gpu;
  // Stage 1 (no embedding, no head): 5 layers x in-flight micro-batches x one layer's activations.
  const double layer = training.transformer().layer_activation_bytes(1, Recomputation::None, 2.0);
  EXPECT_NEAR(model_parallel_memory(training, mp_g, gpu, 1).activations, 32 * 5 * layer, 1.0);
  EXPECT_NEAR(model_parallel_memory(training, mp_1, gpu, 1).activations, 7 * 5 * layer, 1.0);
  EXPECT_NEAR(model_parallel_memory(training, mp_1, gpu, 7 - 1).activations, 2 * 5 * layer, 1.0);
  // Weights are split by the stages: 5 of 40 layers on stage 1.
  const double weights = 5 * training.transformer().layer_parameters() * 2.0;
  EXPECT_NEAR(model_parallel_memory(training, mp_1, gpu, 1).parameters, weights, 1.0);
}

TEST(ModelParallelMemory, TensorAndZeroShardWhatTheyShard) {
  const Scenario base = parse(mp_scenario({{"data", 2}, {"tensor", 4}}));
  const Scenario zero1 = parse(mp_scenario({{"data", 2}, {"tensor", 4}, {"zero", 1}}));
  const Scenario zero3 = parse(mp_scenario({{"data", 8}, {"zero", 3}}));
  const Scenario plain = parse(mp_scenario({{"data", 8}}));
  const auto& training = std::get<ModelTraining>(base.workload);
  const GpuProfile& gpu = base.cluster.gpu;
  const MemoryBreakdown b = model_parallel_memory(training, std::get<ModelParallel>(base.strategy), gpu, 0);
  const MemoryBreakdown z1 = model_parallel_memory(training, std::get<ModelParallel>(zero1.strategy), gpu, 0);
  const TransformerModel model = training.transformer();
  EXPECT_DOUBLE_EQ(b.parameters,
                   (40 * model.layer_parameters(4) + model.embedding_parameters(4) + model.output_parameters(4)) * 2.0);
  EXPECT_DOUBLE_EQ(z1.parameters, b.parameters);
  EXPECT_DOUBLE_EQ(z1.optimizer_states, b.optimizer_states / 2);
  const MemoryBreakdown p = model_parallel_memory(training, std::get<ModelParallel>(plain.strategy), gpu, 0);
  const MemoryBreakdown z3 = model_parallel_memory(training, std::get<ModelParallel>(zero3.strategy), gpu, 0);
  EXPECT_DOUBLE_EQ(z3.parameters, p.parameters / 8);
  EXPECT_DOUBLE_EQ(z3.gradients, p.gradients / 8);
  // Sequence parallelism splits the rest of the activations.
  const Scenario sp = parse(mp_scenario({{"data", 2}, {"tensor", 4}, {"sequence_parallel", true}}));
  EXPECT_LT(model_parallel_memory(training, std::get<ModelParallel>(sp.strategy), gpu, 0).activations, b.activations);
  // Plain data parallelism of the same model: the pipeline-free, tensor-free split matches data_parallel_memory's
  // weights and optimizer states.
  const MemoryBreakdown dp = data_parallel_memory(training, gpu);
  EXPECT_NEAR(p.parameters, dp.parameters, 1.0);
  EXPECT_NEAR(p.optimizer_states, dp.optimizer_states, 1.0);
}

TEST(ModelParallelMemory, TheLastStageAddsTheLossTransientOverItsLogitShard) {
  // Tensor 2 x pipeline 4, micro-batch 1 of GPT-3 13B's 2,048 tokens; the loss only on the last stage, over the rank's
  // vocabulary shard, E = 2048 x vocab_shard(2) logits.
  auto with = [](const char* cross_entropy, nlohmann::json strategy, int gpus = 8) {
    nlohmann::json doc = mp_scenario(std::move(strategy), gpus);
    doc["workload"]["cross_entropy"] = cross_entropy;
    return parse(doc);
  };
  const nlohmann::json split = {{"tensor", 2}, {"pipeline", 4}};
  const Scenario fused = with("fused", split);
  const Scenario megatron = with("megatron_fp32", split);
  const Scenario titan = with("fp32_log_softmax", split);
  const auto& mp = std::get<ModelParallel>(fused.strategy);
  const GpuProfile& gpu = fused.cluster.gpu;
  const ModelTraining& t_fused = std::get<ModelTraining>(fused.workload);
  const ModelTraining& t_megatron = std::get<ModelTraining>(megatron.workload);
  const ModelTraining& t_titan = std::get<ModelTraining>(titan.workload);
  const double logits = 2048.0 * static_cast<double>(t_fused.transformer().vocab_shard(2));
  const double base = model_parallel_memory(t_fused, mp, gpu, 3).activations;
  // Megatron's .float() copy beside the bf16 logits (2 bytes each over the kept fp32 ones); PyTorch's fp32
  // log_softmax: the nll gradient and log_softmax's input gradient beside the kept output, 8 bytes each.
  EXPECT_NEAR(model_parallel_memory(t_megatron, mp, gpu, 3).activations - base, 2.0 * logits, 1.0);
  EXPECT_NEAR(model_parallel_memory(t_titan, mp, gpu, 3).activations - base, 8.0 * logits, 1.0);
  // The other stages hold no loss.
  for (int stage = 0; stage < 3; ++stage) {
    EXPECT_DOUBLE_EQ(model_parallel_memory(t_megatron, mp, gpu, stage).activations,
                     model_parallel_memory(t_fused, mp, gpu, stage).activations)
        << stage;
  }
  // Context parallelism: each rank's loss covers its s/C tokens, so the transient falls by C like the rest.
  const nlohmann::json cp = {{"tensor", 2}, {"pipeline", 4}, {"context", 2}};
  const Scenario fused_cp = with("fused", cp, 16);
  const Scenario megatron_cp = with("megatron_fp32", cp, 16);
  const auto& mp_cp = std::get<ModelParallel>(fused_cp.strategy);
  EXPECT_NEAR(model_parallel_memory(std::get<ModelTraining>(megatron_cp.workload), mp_cp, gpu, 3).activations -
                  model_parallel_memory(std::get<ModelTraining>(fused_cp.workload), mp_cp, gpu, 3).activations,
              logits, 1.0);
}

TEST(ModelParallelMemory, GptThree175BDoesNotFitOnOneNodeWithoutEnoughSplits) {
  const Scenario s = parse(mp_scenario({{"tensor", 8}}, 8, "gpt3-175b", 8));
  EXPECT_FALSE(build_plan(s).memory->fits());
}

TEST(ModelParallelPipeline, FirstAndLastVirtualStagesMayHoldOnlyTheEmbeddingAndTheLoss) {
  // Llama 3's balanced pipeline (arXiv:2407.21783, section 3.3.2): one layer fewer on the first and the last GPU, the
  // first chunk holding only the embedding, the last only the output projection and the loss. GPT-2 small's 12
  // layers over 2 GPUs x 7 chunks: each GPU runs 6 layers, as in a 1F1B split [6, 6].
  std::vector<int> layers(14, 1);
  layers.front() = 0;
  layers.back() = 0;
  const Scenario s =
      parse(mp_scenario({{"pipeline", 2}, {"schedule", "interleaved"}, {"virtual_stages", 7}, {"stage_layers", layers}},
                        2, "gpt2-small", 14));
  const Plan interleaved = build_plan(s);
  const Plan even = build_plan(parse(mp_scenario({{"pipeline", 2}, {"stage_layers", {6, 6}}}, 2, "gpt2-small", 14)));
  ASSERT_EQ(interleaved.stage_memory.size(), 2u);
  for (std::size_t stage = 0; stage < 2; ++stage)
    EXPECT_DOUBLE_EQ(interleaved.stage_memory[stage].parameters, even.stage_memory[stage].parameters) << stage;
  auto compute = [](const Plan& plan, int rank) {
    double sum = 0.0;
    for (const Step& step : resolved_steps(plan, rank))
      if (const auto* c = std::get_if<ComputeStep>(&step)) sum += c->amount;
    return sum;
  };
  for (int rank = 0; rank < 2; ++rank) // the same work on each GPU: 6 layers, the embedding or the head
    EXPECT_NEAR(compute(interleaved, rank), compute(even, rank), 1e-9 * compute(even, rank)) << rank;
  EXPECT_EQ(std::get<ModelParallel>(s.strategy).stage_layers, layers);

  // Only at the ends, and only interleaved (a GPU would otherwise hold no layer).
  std::vector<int> middle = layers;
  middle[0] = 1;
  middle[1] = 0;
  EXPECT_EQ(input_error([&] {
              parse(mp_scenario(
                  {{"pipeline", 2}, {"schedule", "interleaved"}, {"virtual_stages", 7}, {"stage_layers", middle}}, 2,
                  "gpt2-small", 14));
            }).pointer(),
            "/strategy/stage_layers/1");
  EXPECT_EQ(input_error([&] {
              parse(mp_scenario({{"pipeline", 2}, {"stage_layers", {0, 12}}}, 2, "gpt2-small", 14));
            }).pointer(),
            "/strategy/stage_layers/0");
  // At most two chunks more than layers; and none more without stage_layers.
  EXPECT_EQ(
      input_error([&] {
        parse(mp_scenario({{"pipeline", 2}, {"schedule", "interleaved"}, {"virtual_stages", 8}}, 2, "gpt2-small", 16));
      }).pointer(),
      "/strategy/pipeline");
}

std::string error_pointer(const nlohmann::json& doc) {
  return input_error([&] { parse(doc); }).pointer();
}

TEST(ModelParallelErrors, EachInvalidCombinationNamesItsKey) {
  EXPECT_EQ(error_pointer(mp_scenario({{"data", 3}})), "/strategy");                            // 3 x 1 x 1 != 8
  EXPECT_EQ(error_pointer(mp_scenario({{"data", 2}, {"tensor", 3}}, 6)), "/strategy/tensor");   // 40 heads
  EXPECT_EQ(error_pointer(mp_scenario({{"tensor", 16}}, 16, "llama3-8b")), "/strategy/tensor"); // 8 kv heads
  nlohmann::json odd_ffn = mp_scenario({{"tensor", 8}});
  odd_ffn["workload"]["model"] = uniform_model();
  odd_ffn["workload"]["model"]["ffn_size"] = 4100;
  EXPECT_EQ(error_pointer(odd_ffn), "/strategy/tensor");                                             // 4100 % 8
  EXPECT_EQ(error_pointer(mp_scenario({{"pipeline", 16}}, 16, "gpt2-small")), "/strategy/pipeline"); // 12 layers
  EXPECT_EQ(error_pointer(mp_scenario({{"pipeline", 3}}, 3)), "/strategy/pipeline");                 // 40 % 3
  EXPECT_EQ(error_pointer(mp_scenario({{"pipeline", 2}, {"stage_layers", {10, 20}}}, 2)), "/strategy/stage_layers");
  EXPECT_EQ(error_pointer(mp_scenario({{"pipeline", 2}, {"stage_layers", {40}}}, 2)), "/strategy/stage_layers");
  EXPECT_EQ(error_pointer(mp_scenario({{"data", 2}, {"pipeline", 4}, {"schedule", "interleaved"}}, 8, "gpt3-13b", 6)),
            "/workload/global_batch"); // 3 micro-batches, 4 stages
  EXPECT_EQ(error_pointer(mp_scenario({{"pipeline", 8}, {"virtual_stages", 2}})), "/strategy/virtual_stages");
  EXPECT_EQ(error_pointer(mp_scenario({{"pipeline", 8}, {"schedule", "interleaved"}, {"virtual_stages", 1}})),
            "/strategy/virtual_stages");
  EXPECT_EQ(error_pointer(mp_scenario({{"data", 4}, {"pipeline", 2}, {"zero", 3}})), "/strategy/zero");
  EXPECT_EQ(error_pointer(mp_scenario({{"data", 8}, {"zero", "zero-4"}})), "/strategy/zero");
  EXPECT_EQ(error_pointer(mp_scenario({{"data", 8}, {"placement", {"tensor", "tensor", "data"}}})),
            "/strategy/placement/1");
  EXPECT_EQ(error_pointer(mp_scenario({{"data", 8}, {"placement", "pipeline_first"}})), "/strategy/placement");
  EXPECT_EQ(error_pointer(mp_scenario({{"data", 8}}, 8, "gpt3-13b", 12)), "/workload/global_batch");
  EXPECT_EQ(error_pointer(mp_scenario({{"data", 8}}, 8, "resnet50")), "/strategy/kind");
  EXPECT_EQ(error_pointer(mp_scenario({{"data", 8}, {"sequence_parallel", true}})), "/strategy/sequence_parallel");
  EXPECT_EQ(error_pointer(mp_scenario({{"data", 8}, {"unknown", 1}})), "/strategy/unknown");
}

TEST(ModelParallelErrors, OverlappedParameterGathersNeedZeroOneOrTwo) {
  for (int zero : {0, 3}) {
    nlohmann::json doc = mp_scenario({{"data", 8}, {"zero", zero}}, 8, "gpt2-xl", 8);
    doc["strategy"]["gradient_sync"] = {{"overlap_param_gather", true}};
    EXPECT_EQ(error_pointer(doc), "/strategy/gradient_sync/overlap_param_gather") << zero;
  }
}

TEST(ModelParallelErrors, TensorCommOverlapNeedsSequenceParallelismAndTheGpusSmCount) {
  EXPECT_EQ(error_pointer(mp_scenario({{"data", 4}, {"tensor", 2}, {"tp_comm_overlap", true}})),
            "/strategy/tp_comm_overlap");
  nlohmann::json no_sms =
      mp_scenario({{"data", 4}, {"tensor", 2}, {"sequence_parallel", true}, {"tp_comm_overlap", true}});
  no_sms["cluster"]["gpu"] = base_scenario(1, 8)["cluster"]["gpu"]; // inline, without sm_count
  EXPECT_EQ(error_pointer(no_sms), "/strategy/tp_comm_overlap");
  EXPECT_EQ(error_pointer(mp_scenario({{"data", 8}, {"tp_comm_overlap", "yes"}})), "/strategy/tp_comm_overlap");
  nlohmann::json inline_sms = no_sms;
  inline_sms["cluster"]["gpu"]["sm_count"] = 0;
  EXPECT_EQ(error_pointer(inline_sms), "/cluster/gpu/sm_count");
  inline_sms["cluster"]["gpu"]["sm_count"] = 132;
  EXPECT_TRUE(std::get<ModelParallel>(parse(inline_sms).strategy).tp_comm_overlap);
}

TEST(ModelParallelErrors, AsyncTensorBackwardNeedsATensorSplitWithoutUserbuffersOrLatentAttention) {
  EXPECT_EQ(error_pointer(mp_scenario({{"data", 8}, {"tp_async_backward", true}})), "/strategy/tp_async_backward");
  EXPECT_EQ(error_pointer(mp_scenario({{"data", 4},
                                       {"tensor", 2},
                                       {"sequence_parallel", true},
                                       {"tp_comm_overlap", true},
                                       {"tp_async_backward", true}})),
            "/strategy/tp_async_backward");
  nlohmann::json mla = mp_scenario(
      {{"data", 4}, {"tensor", 2}, {"sequence_parallel", true}, {"tp_async_backward", true}}, 8, "deepseek-v3", 8);
  EXPECT_EQ(error_pointer(mla), "/strategy/tp_async_backward");
  EXPECT_EQ(error_pointer(mp_scenario({{"data", 4}, {"tensor", 2}, {"tp_async_backward", 1}})),
            "/strategy/tp_async_backward");
  // Asked off, or where it has nothing to do, it is off.
  EXPECT_FALSE(std::get<ModelParallel>(parse(mp_scenario({{"data", 8}, {"tp_async_backward", false}})).strategy)
                   .tp_async_backward);
  mla["strategy"]["tp_async_backward"] = false;
  EXPECT_FALSE(std::get<ModelParallel>(parse(mla).strategy).tp_async_backward);
}

TEST(ModelParallelErrors, FsdpIsZeroThree) {
  const Scenario s = parse(mp_scenario({{"data", 8}, {"zero", "fsdp"}}));
  EXPECT_EQ(std::get<ModelParallel>(s.strategy).zero, 3);
}

TEST(ModelParallelPlan, HierarchicalOnGroupsStraddlingNodesUnevenlyIsRefusedAtItsKey) {
  // Tensor 3 on nodes of 4 GPUs: the groups {0,1,2}, {3,4,5}, ... have 3 and 1+2 members per node.
  nlohmann::json doc = mp_scenario(
      {{"tensor", 3}, {"data", 4}, {"tensor_collectives", {{"algorithm", "hierarchical"}}}}, 4, "gpt2-small", 4);
  doc["cluster"]["nodes"] = 3;
  const InputError e = input_error([&] { build_plan(parse(doc, "mine.json")); });
  EXPECT_EQ(e.source(), "mine.json");
  EXPECT_EQ(e.pointer(), "/strategy/tensor_collectives/algorithm");
  EXPECT_NE(e.detail().find("straddle nodes of 4 GPUs unevenly"), std::string::npos) << e.what();
  doc["strategy"]["tensor"] = 2; // groups of 2 on nodes of 4: even
  doc["strategy"]["data"] = 6;
  doc["workload"]["global_batch"] = 6;
  EXPECT_NO_THROW(build_plan(parse(doc)));
}

TEST(ModelParallelPlan, NvlsTreeNeedsGroupsOfSeveralMembersOnEachOfSeveralNodes) {
  // 4 nodes of 4 GPUs whose switch has NVLink SHARP: tensor groups of 4 lie inside one node, data groups of TP 4 have
  // one member per node; NVLS-tree needs g >= 2 members on each of m >= 2 nodes.
  nlohmann::json doc = mp_scenario({{"tensor", 4}, {"data", 4}, {"tensor_collectives", {{"algorithm", "nvls_tree"}}}},
                                   4, "gpt2-small", 4);
  doc["cluster"]["nodes"] = 4;
  doc["cluster"]["intra_node_link"]["nvls_efficiency"] = 0.85;
  InputError e = input_error([&] { build_plan(parse(doc, "mine.json")); });
  EXPECT_EQ(e.pointer(), "/strategy/tensor_collectives/algorithm");
  EXPECT_NE(e.detail().find("lie inside one node; expected nvls, ring, tree or auto"), std::string::npos) << e.what();
  doc["strategy"].erase("tensor_collectives");
  doc["strategy"]["gradient_sync"] = {{"algorithm", "nvls_tree"}};
  e = input_error([&] { build_plan(parse(doc, "mine.json")); });
  EXPECT_EQ(e.pointer(), "/strategy/gradient_sync/algorithm");
  EXPECT_NE(e.detail().find("lie one per node"), std::string::npos) << e.what();
  doc["strategy"]["tensor"] = 2; // data groups of 8: 2 on each of the 4 nodes
  doc["strategy"]["data"] = 8;
  doc["workload"]["global_batch"] = 8;
  const Plan plan = build_plan(parse(doc));
  bool seen = false;
  for (int r = 0; r < static_cast<int>(plan.ranks.size()); ++r)
    for (const Step& step : resolved_steps(plan, r))
      if (const auto* c = std::get_if<CollectiveStep>(&step); c != nullptr && c->kind == CommKind::Data)
        seen |= c->algorithm == CollectiveAlgorithm::NvlsTree;
  EXPECT_TRUE(seen);
  // Without NVLink SHARP in the switch: refused at the same key, whatever the groups.
  doc["cluster"]["intra_node_link"].erase("nvls_efficiency");
  e = input_error([&] { build_plan(parse(doc, "mine.json")); });
  EXPECT_EQ(e.pointer(), "/strategy/gradient_sync/algorithm");
  EXPECT_NE(e.detail().find("nvls_tree needs an NVSwitch with NVLink SHARP"), std::string::npos) << e.what();
}

} // namespace
} // namespace partsim::test
