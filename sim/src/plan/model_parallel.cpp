// Model-parallel planner: per-rank programs of tensor-parallel layers, pipeline passes joined by point-to-point
// transfers, and data-parallel (ZeRO) gradient synchronisation per stage.
#include "partsim/plan/model_parallel.hpp"

#include "partsim/common/error.hpp"
#include "partsim/model/collective_schedule.hpp"
#include "partsim/model/cost_model.hpp"
#include "partsim/model/expert_routing.hpp"
#include "partsim/plan/plan_collectives.hpp"
#include "partsim/plan/strategy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <tuple>
#include <variant>

namespace partsim {

namespace {

/** Bytes of one value the vocabulary-parallel cross-entropy all-reduces per token: fp32, as Megatron-LM computes the
 * loss on logits cast to float. */
constexpr std::uint64_t kCrossEntropyValueBytes = 4;
/** One expert's count of routed copies in Megatron-Core's dispatcher: an int64 (routing_map.sum(dim=0).long()). */
constexpr std::int64_t kExpertCountBytes = 8;
/** The absolute maximum per-tensor current scaling all-reduces (MAX) over the tensor group before quantizing a
 * sequence-parallel tensor for its fp8 all-gather: one fp32 value (Transformer Engine's Float8CurrentScalingQuantizer
 * with_amax_reduction: allreduce of amax_buf, then wait; transformer_engine/pytorch/csrc/quantizer.cpp). */
constexpr std::uint64_t kFp8AmaxBytes = 4;

/** A collective inside a pass: on the tensor group, or (kind Expert) the token all-to-all on the expert group. */
struct TensorCollective {
  CollectiveOp op = CollectiveOp::AllReduce;
  std::uint64_t bytes = 0;
  CommKind kind = CommKind::Tensor;
  std::int32_t skew = 0; ///< an all-to-all: 1 + its weights in Plan::all_to_all_skews, 0 when uniform
};

/** The routed experts' compute of a mixture-of-experts layer, forward or backward, which depends on the rank's share
 * of the layer's tokens: priced per rank when planning it. A full recomputation's rerun in a backward pass is a copy
 * of the forward actions, so it keeps `forward`. */
struct ExpertWork {
  std::int32_t layer = 0; ///< in the model, from 0
  bool forward = true;
};

/** A hop of the context-parallel ring: send `bytes` of keys and values (and their gradients backward) to the next
 * rank of the context group, or receive the block the previous one sent, on `channel`. */
struct RingHop {
  bool send = true;
  std::uint64_t bytes = 0;
  int channel = 2;
};

/** A tensor collective run beside `compute` s of GEMM work (tensor-parallel communication overlap): the pass goes on
 * when both are done. */
struct Beside {
  TensorCollective collective;
  double compute = 0.0;
  /** The collective's NCCL kernel takes SMs from the compute while it runs (ComputeStep::contended); otherwise the
   * compute runs at its rate, or its price holds the SMs it lacks (userbuffers' SM margin). */
  bool contended = false;
};

/** What a pass over a unit does on one tensor rank, in order: compute (s), a collective, the experts' compute, a hop
 * of the context ring, or a collective beside a compute. */
using Action = std::variant<double, TensorCollective, ExpertWork, RingHop, Beside>;

/** A piece of a virtual stage: the embedding, a layer or the head, per micro-batch on one tensor rank. */
struct Unit {
  std::vector<Action> forward;
  std::vector<Action> backward;
  double parameters = 0.0;        ///< on one tensor rank, but for the routed experts
  double expert_parameters = 0.0; ///< the routed experts this rank holds (synchronised over the expert-data group)
  bool layer = false;             ///< a transformer layer: its weights are gathered in fp8 with fp8_param_gather
};

/** The embedding, every layer of the model in order and the head, priced under one recomputation. */
struct LayerUnits {
  Unit embedding;
  Unit head;
  std::vector<Unit> layers;
};

/** The layout of a group's members over the nodes, which the algorithm choice and message counts depend on. */

class Planner {
 public:
  Planner(const Scenario& scenario, const ModelTraining& training, const ModelParallel& mp)
      : source_(scenario.source), seed_(scenario.run.seed), cluster_(scenario.cluster), training_(training), mp_(mp),
        model_(training.transformer()), recomputed_(block_recomputed_layers(training, mp)),
        cost_(training_cost(training, scenario.cluster.gpu, recomputed_)), collectives_(cluster_),
        parameters_(model_.parameters()) {
    micro_batches_ = static_cast<int>(training.global_batch / (training.micro_batch * mp.data));
    chunks_ = mp.pipeline * mp.virtual_stages;
    element_ = bytes_per_element(training.data_type);
    layer_element_ = training.kernels.fp8_param_gather ? 1.0 : element_; // fp8: 1 byte
    gradient_element_ = bytes_per_element(training.gradient_type());
    peak_ = cluster_.gpu.peak(training.data_type);
    const TransformerConfig& c = model_.config();
    // The rank's tokens: its s/C of each sequence under context parallelism.
    const double tokens = static_cast<double>(training.micro_batch) * static_cast<double>(c.sequence_length) /
                          static_cast<double>(mp.context);
    tensor_bytes_ = static_cast<std::uint64_t>(std::llround(tokens * static_cast<double>(c.hidden) * element_));
    // Activations (forward) and their gradients (backward) between stages; sequence parallelism sends 1/T each.
    transfer_bytes_ = mp.sequence_parallel ? tensor_bytes_ / static_cast<std::uint64_t>(mp.tensor) : tensor_bytes_;
    // FP8 with sequence parallelism: what a layer all-gathers on the tensor group, the column-parallel GEMMs' inputs
    // and the row-parallel GEMMs' output gradients, moves as fp8 copies, 1 byte an element (Transformer Engine
    // quantizes the rank's rows before gather_along_first_dim; see apply_fp8). Under current scaling each such
    // quantization first all-reduces its absolute maximum over the tensor group (amax_reduction).
    const bool fp8_gathers = training.kernels.fp8 != Fp8Recipe::None && mp.sequence_parallel && mp.tensor > 1;
    layer_gather_bytes_ =
        fp8_gathers ? static_cast<std::uint64_t>(std::llround(tokens * static_cast<double>(c.hidden))) : tensor_bytes_;
    if (fp8_gathers && training.kernels.fp8 == Fp8Recipe::Tensorwise)
      amax_reduction_.push_back(TensorCollective{CollectiveOp::AllReduce, kFp8AmaxBytes});
    build_units();
  }

  /** What plan() will hold, from the units alone: every micro-batch runs forward and backward through each virtual
   * stage of each rank, one execution per compute of a pass (one per pass when a pass's tensor collectives are fused)
   * and one step per action, plus the optimizer step. Lower bounds (gradient collectives and transfers come on top). */
  struct Estimate {
    double executions = 0.0;
    double steps = 0.0;
  };
  Estimate estimate() const {
    const bool fused = fused_passes();
    Estimate per_position; // one (data, tensor) position through all stages, one micro-batch
    for (const auto& units : units_) {
      if (fused) {
        // Per layer at most 6 (userbuffers: forward 4, backward 6; the asynchronous backward 4).
        const double overlaps = mp_.tp_comm_overlap ? 6.0 : mp_.tp_async_backward ? 4.0 : 0.0;
        per_position.executions += 2.0 + overlaps;
        per_position.steps += 2.0 + 2.0 * overlaps;
        continue;
      }
      for (const Unit& unit : units)
        for (const auto* actions : {&unit.forward, &unit.backward})
          for (const Action& action : *actions) {
            per_position.executions +=
                std::holds_alternative<TensorCollective>(action) || std::holds_alternative<RingHop>(action) ? 0.0 : 1.0;
            per_position.steps += std::holds_alternative<Beside>(action)                                ? 2.0
                                  : std::holds_alternative<ExpertWork>(action) && mp_.expert_tensor > 1 ? 3.0
                                                                                                        : 1.0;
          }
    }
    const double positions = static_cast<double>(mp_.data_ranks()) * static_cast<double>(mp_.tensor);
    // Only ranks with programs of their own hold steps (the others share one: share_programs).
    const double built =
        static_cast<double>(std::count(like_.begin(), like_.end(), -1)) / static_cast<double>(mp_.pipeline);
    const double micro_batches = static_cast<double>(micro_batches_);
    const double stages = static_cast<double>(mp_.pipeline);
    return {(per_position.executions * micro_batches + stages) * positions * static_cast<double>(training_.iterations),
            (per_position.steps * micro_batches + stages) * built};
  }

  /** The groups, and which ranks share a program (call before estimate()). */
  void prepare(Plan& plan, bool share) {
    plan.labels.emplace_back();
    make_groups(plan);
    share_programs(share);
  }

  Plan plan(Plan plan) {
    const int gpus = mp_.gpus();
    plan.ranks.resize(static_cast<std::size_t>(gpus));
    plan.stage_of_rank.resize(static_cast<std::size_t>(gpus));
    for (int p = 0; p < mp_.pipeline; ++p)
      schedules_.push_back(
          pipeline_schedule(mp_.schedule, mp_.pipeline, p, micro_batches_, mp_.virtual_stages, mp_.microbatch_group));
    labels_.assign(static_cast<std::size_t>(2 * micro_batches_ * mp_.virtual_stages), 0);
    for (int r = 0; r < gpus; ++r) {
      RankProgram& rank = plan.ranks[static_cast<std::size_t>(r)];
      rank.gpu = r;
      plan.stage_of_rank[static_cast<std::size_t>(r)] = coordinates_of(mp_, r).pipeline;
      const int like = like_[static_cast<std::size_t>(r)];
      if (like < 0) {
        if (r == 0 && !fused_passes()) plan.marked_rank = 0; // program() marks its passes' units
        program(plan, r);
        continue;
      }
      rank.like = like;
      rank.peer_shift = r - like;
      rank.group_map = group_map(like, r);
    }
    plan.iterations = training_.iterations;
    const bool tensor_auto = !mp_.tensor_collectives.fidelity;
    const bool data_auto = !mp_.gradient_sync.collective.fidelity;
    collectives_.resolve_auto_fidelity(
        plan, [&](const CollectiveStep& c) { return c.kind == CommKind::Data ? data_auto : tensor_auto; });
    collectives_.count_events(plan);
    fill_figures(plan);
    return plan;
  }

 private:
  /** A transformer block's actions with its tensor collectives beside its GEMMs (tp_comm_overlap). */
  struct OverlapBlock {
    std::vector<Action> forward;
    std::vector<Action> backward; ///< without a full recomputation's rerun
  };

  /** A block (the attention or the MLP; its ops in order) run as Transformer Engine's userbuffers overlap it, with
   * Megatron-Core's sequence parallelism: the ops before its column-parallel GEMM(s) (`column`, and a gate GEMM right
   * before it), then those GEMMs, the ops up to the row-parallel GEMM `row`, that GEMM and the ops after it.
   * Forward: the input's all-gather by ring exchange beside the column GEMMs (T steps of 1/T of the rows: the first
   * chunk's GEMM needs no transfer, each further one waits for its chunk, so the last chunk's GEMM runs after the
   * transfers: the gather beside (T-1)/T of the GEMM, then 1/T alone); the row GEMM in kTpOverlapPipelineSplits
   * chunks, each chunk's reduce-scatter beside the next chunk's GEMM (the first chunk alone, the last chunk's
   * reduce-scatter exposed). Backward: the output gradient's all-gather by ring exchange beside the row GEMM's input
   * gradient, then its weight gradient; the block's inner ops; the input re-gathered (sequence parallelism keeps only
   * the rank's slice) in bulk beside the column GEMMs' input gradient, and the input gradient's reduce-scatter in
   * bulk beside their weight gradient. Pipelined and bulk transfers hold kTpOverlapCommSms SMs, taken from their GEMMs
   * (set_sm_margin): those GEMMs take sm_count / (sm_count - kTpOverlapCommSms) as long; the ring exchange copies on
   * the copy engines without a margin. */
  OverlapBlock overlap_block(const std::vector<ComputeOp>& ops, const std::string& column, const std::string& row,
                             Recomputation recomputation, bool context_core = false) const {
    const BlockSplit split = split_block(ops, column, row, recomputation, context_core);
    const GpuProfile& gpu = cluster_.gpu;
    const std::string& type = training_.data_type;
    const double element = bytes_per_element(type);
    double column_forward = 0.0;
    GemmBackwardTimes column_backward;
    const int t_chunks = mp_.tensor;
    for (const ComputeOp& op : split.columns) {
      // Ring exchange forward: T GEMMs of the chunks' rows; backward whole (bulk).
      const GemmBackwardTimes whole_backward = gemm_backward_times(op, gpu, type, element);
      column_forward += chunked_time(op, t_chunks, false);
      column_backward.input_gradient += whole_backward.input_gradient;
      column_backward.weight_gradient += whole_backward.weight_gradient;
    }
    // Pipelined forward: kTpOverlapPipelineSplits GEMMs; backward the input gradient by ring exchange (T GEMMs), the
    // weight gradient whole on the gathered output gradient.
    const double row_forward = chunked_time(split.row, kTpOverlapPipelineSplits, false);
    const GemmBackwardTimes row_backward{chunked_time(split.row, t_chunks, true),
                                         gemm_backward_times(split.row, gpu, type, element).weight_gradient};

    const double t = static_cast<double>(mp_.tensor);
    const double sms = cluster_.gpu.sm_count->value;
    const double margin = sms / (sms - static_cast<double>(kTpOverlapCommSms));
    const double splits = static_cast<double>(kTpOverlapPipelineSplits);
    const std::uint64_t whole = tensor_bytes_;
    const std::uint64_t last = whole / static_cast<std::uint64_t>(kTpOverlapPipelineSplits);
    // The column GEMMs' input and the row GEMM's output gradient: fp8 under FP8 (layer_gather_bytes_), each quantized
    // after its absolute maximum's all-reduce under current scaling; the backward's re-gather of the column GEMMs'
    // input moves the saved fp8 copy, quantized in the forward.
    auto ring = [&](double gemm, std::uint64_t bytes) {
      return std::vector<Action>{Beside{{CollectiveOp::AllGather, bytes}, gemm * (t - 1.0) / t}, gemm / t};
    };
    auto pipelined = [&](double gemm) {
      const double g = gemm * margin;
      return std::vector<Action>{g / splits,
                                 Beside{{CollectiveOp::ReduceScatter, whole - last}, g * (splits - 1.0) / splits},
                                 TensorCollective{CollectiveOp::ReduceScatter, last}};
    };
    auto bulk = [&](CollectiveOp op, double gemm, std::uint64_t bytes) {
      return std::vector<Action>{Beside{{op, bytes}, gemm * margin}};
    };
    OverlapBlock block;
    block.forward = join({{split.pre.forward_time},
                          amax_reduction_,
                          ring(column_forward, layer_gather_bytes_),
                          {split.mid.forward_time},
                          split.core_forward,
                          pipelined(row_forward),
                          {split.post.forward_time}});
    block.backward = join({{split.post.backward_time},
                           amax_reduction_,
                           ring(row_backward.input_gradient, layer_gather_bytes_),
                           {row_backward.weight_gradient, split.mid.backward_time},
                           split.core_backward,
                           bulk(CollectiveOp::AllGather, column_backward.input_gradient, layer_gather_bytes_),
                           bulk(CollectiveOp::ReduceScatter, column_backward.weight_gradient, whole),
                           {split.pre.backward_time}});
    return block;
  }

  /** A block's backward as Megatron's asynchronous tensor-parallel backward runs it (tp_async_backward; Megatron-LM's
   * LinearWithGradAccumulationAndAsyncCommunication.backward, megatron/mpu/layers.py at 80389ef, 2022, and its
   * successors in Megatron-Core and Transformer Engine): the ops after the row-parallel GEMM, that GEMM whole, the
   * inner ops; then for the column-parallel GEMMs, with sequence parallelism the input re-gathered (the layer keeps
   * its slice only; under FP8 the saved fp8 copy) beside their input gradient and the input gradient reduce-scattered
   * beside their weight gradient; without it the input gradient all-reduced beside their weight gradient; then the
   * ops before them. Each collective is launched on its own stream just before its GEMM ("to have [it] scheduled
   * first and have GPU resources allocated"): its NCCL kernel holds SMs while it runs, the GEMM runs on the others
   * (contended), and the rank waits for both. The output gradient's gather before the block stays blocking, as
   * without it (the forward is unchanged). */
  std::vector<Action> async_backward(const std::vector<ComputeOp>& ops, const std::string& column,
                                     const std::string& row, Recomputation recomputation,
                                     bool context_core = false) const {
    const BlockSplit split = split_block(ops, column, row, recomputation, context_core);
    const GpuProfile& gpu = cluster_.gpu;
    const std::string& type = training_.data_type;
    const double element = bytes_per_element(type);
    GemmBackwardTimes column_backward;
    for (const ComputeOp& op : split.columns) {
      const GemmBackwardTimes whole = gemm_backward_times(op, gpu, type, element);
      column_backward.input_gradient += whole.input_gradient;
      column_backward.weight_gradient += whole.weight_gradient;
    }
    const GemmBackwardTimes row_backward = gemm_backward_times(split.row, gpu, type, element);
    const bool sp = mp_.sequence_parallel;
    const std::vector<Action> input_gradient =
        sp ? std::vector<Action>{Beside{
                 {CollectiveOp::AllGather, layer_gather_bytes_}, column_backward.input_gradient, true}}
           : std::vector<Action>{column_backward.input_gradient};
    const TensorCollective reduction{sp ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce, tensor_bytes_};
    return join({{split.post.backward_time, row_backward.input_gradient + row_backward.weight_gradient,
                  split.mid.backward_time},
                 split.core_backward,
                 input_gradient,
                 {Beside{reduction, column_backward.weight_gradient, true}},
                 {split.pre.backward_time}});
  }

  /** A block's ops (the attention or the MLP, in order) around its column-parallel GEMM(s) (`column`, and a gate GEMM
   * right before it) and its row-parallel GEMM `row`: the other ops priced before, between and after them (under
   * `recomputation`, a full one's rerun left to the caller), and with context parallelism (`context_core`) the
   * attention core's actions around its exchange of keys and values, as the layer without an overlap runs them. */
  struct BlockSplit {
    TrainingUnit pre;  ///< before the column GEMMs
    TrainingUnit mid;  ///< between them and the row GEMM, but the core under `context_core`
    TrainingUnit post; ///< after the row GEMM
    std::vector<ComputeOp> columns;
    ComputeOp row;
    std::vector<Action> core_forward;
    std::vector<Action> core_backward;
  };
  BlockSplit split_block(const std::vector<ComputeOp>& ops, const std::string& column, const std::string& row,
                         Recomputation recomputation, bool context_core) const {
    const std::string gate = column == "mlp_up" ? "mlp_gate" : std::string();
    const GpuProfile& gpu = cluster_.gpu;
    const std::string& type = training_.data_type;
    const Recomputation rest = recomputation == Recomputation::Full ? Recomputation::None : recomputation;
    std::vector<ComputeOp> pre;
    std::vector<ComputeOp> mid;
    std::vector<ComputeOp> post;
    BlockSplit split;
    bool has_row = false;
    int seen = 0; // 0: before the column GEMMs, 1: after them, 2: after the row GEMM
    // With context parallelism (`context_core`) the attention core runs around its exchange of keys and values on the
    // context group (context_forward, context_backward), between the column and the row GEMMs.
    std::vector<ComputeOp> core;
    for (const ComputeOp& op : ops) {
      if (context_core && op.module == LayerModule::CoreAttention) {
        PARTSIM_CHECK(seen == 1) << "attention core " << op.name << " outside the block's middle";
        core.push_back(op);
        continue;
      }
      const bool is_column = op.name == column || (!gate.empty() && op.name == gate);
      if (is_column || op.name == row) {
        PARTSIM_CHECK(op.kind == OpKind::Gemm && op.gemm) << "op " << op.name << " is not a GEMM";
        if (is_column) {
          split.columns.push_back(op);
          seen = 1;
        } else {
          split.row = op;
          has_row = true;
          seen = 2;
        }
        continue;
      }
      (seen == 0 ? pre : seen == 1 ? mid : post).push_back(op);
    }
    PARTSIM_CHECK(!split.columns.empty() && has_row) << "block without " << column << " and " << row;
    split.pre = price_ops("block", pre, gpu, type, rest);
    split.mid = price_ops("block", mid, gpu, type, rest);
    split.post = price_ops("block", post, gpu, type, rest);
    if (!core.empty()) {
      // As the layer without the overlap runs it (priced_units): the core priced alone, selective recomputation
      // rerunning it with its exchange (after a Ulysses all-to-all, from the saved head-split inputs) before its
      // backward.
      const TrainingUnit k = price_ops("attention_core", core, gpu, type, Recomputation::None);
      const bool selective = recomputation == Recomputation::Selective &&
                             training_.kernels.recompute_modules.contains(LayerModule::CoreAttention);
      split.core_forward = context_forward(k.forward_time);
      split.core_backward = join({!selective                                  ? std::vector<Action>{}
                                  : mp_.context_comm == ContextComm::AllToAll ? std::vector<Action>{k.forward_time}
                                                                              : context_forward(k.forward_time),
                                  context_backward(k.backward_time)});
    }
    return split;
  }

  /** A GEMM run as `chunks` GEMMs over as many slices of its rows (tokens), as the userbuffers overlaps run it: each
   * priced at its own shape (a chunk of fewer rows reaches less of the peak) and launched on its own, each reading
   * the whole weight. `input_gradient`: the chunks of the backward's input-gradient GEMM instead of the forward. */
  double chunked_time(const ComputeOp& op, int chunks, bool input_gradient) const {
    ComputeOp chunk = op;
    const double c = static_cast<double>(chunks);
    chunk.gemm->m = std::max<std::int64_t>(1, op.gemm->m / chunks);
    const double share = static_cast<double>(chunk.gemm->m) / static_cast<double>(op.gemm->m);
    chunk.forward_flops *= share;
    chunk.backward_flops *= share;
    chunk.input_elements *= share;
    chunk.output_elements *= share;
    const double element = bytes_per_element(training_.data_type);
    const double one = input_gradient
                           ? gemm_backward_times(chunk, cluster_.gpu, training_.data_type, element).input_gradient
                           : op_time(chunk, cluster_.gpu, training_.data_type, element, false);
    return c * one;
  }

  /** The pieces in order, adjacent computes merged into one execution. */
  static std::vector<Action> join(std::vector<std::vector<Action>> pieces) {
    std::vector<Action> all;
    for (const auto& piece : pieces)
      for (const Action& action : piece) {
        const auto* seconds = std::get_if<double>(&action);
        double* last = all.empty() ? nullptr : std::get_if<double>(&all.back());
        if (seconds != nullptr && last != nullptr)
          *last += *seconds;
        else
          all.push_back(action);
      }
    return all;
  }

  /** The embedding, each layer and the head, every layer under `recomputation`. Each GEMM priced at its split shape
   * (TensorSplit), the tensor-parallel collectives in between: per layer an all-reduce of b·s·h after the attention and
   * after the MLP, each way (with sequence parallelism a reduce-scatter and an all-gather); the vocabulary-parallel
   * embedding and head as Megatron-LM runs them (see the comments). */
  LayerUnits priced_units(Recomputation recomputation) {
    const TransformerConfig& c = model_.config();
    const std::int64_t b = training_.micro_batch;
    const int t = mp_.tensor;
    const bool sp = mp_.sequence_parallel;
    // The routed experts' ops (the only ones the expert fields change) are priced by price_experts, not here.
    const TensorSplit split = layer_split(mp_);
    std::vector<ComputeOp> attention;
    // With context parallelism the attention core (the ops selective recomputation repeats) is priced apart: its
    // keys and values come from the other ranks of the context group.
    std::vector<ComputeOp> core;
    std::vector<ComputeOp> attention_after;
    std::vector<ComputeOp> mlp;
    // A mixture of experts: the MLP block splits around the routed experts (before: the norm, router and permute;
    // after: the unpermute, shared experts and residual).
    std::vector<ComputeOp> moe_before;
    std::vector<ComputeOp> moe_after;
    bool in_mlp = false;
    bool past_experts = false;
    for (const ComputeOp& op : model_.layer_ops(b, split)) {
      in_mlp = in_mlp || op.name == "mlp_norm";
      const bool routed = is_routed_expert_op(op);
      past_experts = past_experts || op.name == "expert_unpermute";
      const bool in_core = op.module == LayerModule::CoreAttention;
      if (!in_mlp && mp_.context > 1 && (in_core || !core.empty()))
        (in_core ? core : attention_after).push_back(op);
      else if (!in_mlp)
        attention.push_back(op);
      else if (!moe())
        mlp.push_back(op);
      else if (!routed)
        (past_experts ? moe_after : moe_before).push_back(op);
    }
    std::vector<ComputeOp> embedding;
    std::vector<ComputeOp> norm;
    std::vector<ComputeOp> head;
    for (const ComputeOp& op : training_outer_ops(training_, model_, b, split))
      (op.name == "embedding" ? embedding : op.name == "final_norm" ? norm : head).push_back(op);
    const GpuProfile& gpu = cluster_.gpu;
    const std::string& type = training_.data_type;
    const TrainingUnit a = price_ops("attention", attention, gpu, type, recomputation);
    const TrainingUnit m = price_ops("mlp", mlp, gpu, type, recomputation);
    const TrainingUnit e = price_ops("embedding", embedding, gpu, type, Recomputation::None);
    const TrainingUnit n = price_ops("norm", norm, gpu, type, Recomputation::None);
    const TrainingUnit l = price_ops("head", head, gpu, type, Recomputation::None);

    // Collectives on the tensor group (none without one). b·s·h elements at the data type's size.
    const bool tp = t > 1;
    auto collectives = [&](std::initializer_list<TensorCollective> list) {
      return tp ? std::vector<Action>(list.begin(), list.end()) : std::vector<Action>();
    };
    // Partial outputs summed (reduce-scatter with sequence parallelism), and a sequence-split input gathered.
    const std::vector<Action> sum =
        collectives({{sp ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce, tensor_bytes_}});
    // The embedding's and the head's gathers, in the data type.
    const std::vector<Action> gather =
        sp ? collectives({{CollectiveOp::AllGather, tensor_bytes_}}) : std::vector<Action>{};
    // A layer's gathers: forward they feed the next block's column-parallel GEMMs, backward they are the row-parallel
    // GEMMs' output gradients; under FP8 both move fp8 copies (layer_gather_bytes_), each after the all-reduce of its
    // absolute maximum under current scaling (amax_reduction_).
    const std::vector<Action> layer_gather =
        sp && tp ? join({amax_reduction_, {TensorCollective{CollectiveOp::AllGather, layer_gather_bytes_}}})
                 : std::vector<Action>{};
    const std::vector<Action> reduce = join({sum, layer_gather});

    // Full recomputation reruns each layer's forward, collectives included, before its backward (Megatron-LM
    // checkpoints a layer's input and calls its forward again: megatron/core/tensor_parallel/random.py,
    // CheckpointFunction.backward). Selective recomputation reruns only the attention core, which has no collective.
    const bool full = recomputation == Recomputation::Full;
    const double attention_backward = full ? a.backward_time - a.forward_time : a.backward_time;
    // The attention block's actions: one compute, or with context parallelism the projections, the core around its
    // exchange of keys and values on the context group, and the output projection.
    std::vector<Action> attention_forward{a.forward_time};
    std::vector<Action> attention_backward_actions{attention_backward};
    if (mp_.context > 1) {
      if (mp_.context_comm == ContextComm::AllToAll)
        for (ComputeOp& op : core)
          if (op.attention) { // one kernel over the whole sequence for 1/C of the heads: the same flops and bytes
            op.attention->batch_heads /= mp_.context;
            op.attention->context = 1;
          }
      const TrainingUnit k = price_ops("attention_core", core, gpu, type, Recomputation::None);
      const TrainingUnit o = price_ops("attention", attention_after, gpu, type, recomputation);
      auto backward_of = [&](const TrainingUnit& u) {
        return full ? u.backward_time - u.forward_time : u.backward_time;
      };
      attention_forward = join({{a.forward_time}, context_forward(k.forward_time), {o.forward_time}});
      // Selective recomputation reruns the core forward, its exchange included, before the core's backward; after
      // a Ulysses all-to-all the core's inputs are the saved head-split queries, keys and values: no exchange.
      const bool selective = recomputation == Recomputation::Selective &&
                             training_.kernels.recompute_modules.contains(LayerModule::CoreAttention);
      const std::vector<Action> rerun_core = !selective ? std::vector<Action>{}
                                             : mp_.context_comm == ContextComm::AllToAll
                                                 ? std::vector<Action>{k.forward_time}
                                                 : context_forward(k.forward_time);
      attention_backward_actions =
          join({{backward_of(o)}, rerun_core, context_backward(k.backward_time), {backward_of(a)}});
    }
    // The attention block's ops in order with the core split out by context parallelism (its Ulysses head split
    // applied): what the userbuffers overlap runs around the core's exchange.
    std::vector<ComputeOp> attention_whole = attention;
    attention_whole.insert(attention_whole.end(), core.begin(), core.end());
    attention_whole.insert(attention_whole.end(), attention_after.begin(), attention_after.end());
    // A dense layer with MLP `mlp`: the attention block (its actions each way as given: the whole sequence's, or a
    // sliding window's), then the MLP between the tensor collectives; full recomputation reruns the whole forward
    // before the backward.
    // Selective recomputation of the `mlp` module reruns the MLP's forward with its tensor collectives (the input's
    // all-gather inside the first GEMM's module with sequence parallelism, the output's reduction inside the last):
    // Megatron-Core checkpoints the whole MLP module.
    const bool rerun_mlp = recomputation == Recomputation::Selective &&
                           training_.kernels.recompute_modules.contains(LayerModule::Mlp) && tp;
    auto dense_unit = [&](const TrainingUnit& mlp, double parameters, const std::vector<Action>& attention_in,
                          const std::vector<Action>& attention_back) {
      const std::vector<Action> forward = join({attention_in, reduce, {mlp.forward_time}, reduce});
      const double mlp_backward = full ? mlp.backward_time - mlp.forward_time : mlp.backward_time;
      const std::vector<Action> mlp_rerun =
          rerun_mlp ? join({layer_gather, {mlp.recompute_time}, sum}) : std::vector<Action>{};
      return Unit{forward,
                  join({full ? forward : std::vector<Action>{},
                        mlp_rerun,
                        {rerun_mlp ? mlp_backward - mlp.recompute_time : mlp_backward},
                        reduce,
                        attention_back,
                        reduce}),
                  parameters, 0.0, true};
    };
    // A sliding attention window (AttentionWindow): its layers' attention block priced again with the fused kernel
    // reaching over the window only (context parallelism of such a model is refused when parsing).
    const AttentionWindow& window = c.window;
    const std::vector<ComputeOp> windowed_attention =
        window.enabled() ? with_attention_window(attention, window.size) : attention;
    const TrainingUnit aw = window.enabled() ? price_ops("attention", windowed_attention, gpu, type, recomputation) : a;
    const std::vector<Action> windowed_forward =
        window.enabled() ? std::vector<Action>{aw.forward_time} : attention_forward;
    const std::vector<Action> windowed_backward =
        window.enabled() ? std::vector<Action>{full ? aw.backward_time - aw.forward_time : aw.backward_time}
                         : attention_backward_actions;
    // With the asynchronous backward the attention block's column GEMM re-gathers its input and reduce-scatters its
    // input gradient (or all-reduces it) beside its own GEMMs (async_backward), in place of the collective after the
    // block: a dense layer's and a mixture of experts' attention blocks alike.
    auto async_attention = [&](bool windowed) {
      return mp_.context > 1
                 ? async_backward(attention_whole, "qkv_projection", "output_projection", recomputation, true)
                 : async_backward(windowed ? windowed_attention : attention, "qkv_projection", "output_projection",
                                  recomputation);
    };
    auto dense_layer_of = [&](const TrainingUnit& mlp_unit, const std::vector<ComputeOp>& mlp_ops, double parameters,
                              bool windowed) {
      Unit unit = windowed ? dense_unit(mlp_unit, parameters, windowed_forward, windowed_backward)
                           : dense_unit(mlp_unit, parameters, attention_forward, attention_backward_actions);
      if (mp_.tp_comm_overlap) {
        const OverlapBlock attention_block =
            mp_.context > 1 ? overlap_block(attention_whole, "qkv_projection", "output_projection", recomputation, true)
                            : overlap_block(windowed ? windowed_attention : attention, "qkv_projection",
                                            "output_projection", recomputation);
        const OverlapBlock mlp_block = overlap_block(mlp_ops, "mlp_up", "mlp_down", recomputation);
        const std::vector<Action> forward = join({attention_block.forward, mlp_block.forward});
        unit.forward = forward;
        unit.backward = join({full ? forward : std::vector<Action>{}, mlp_block.backward, attention_block.backward});
      } else if (mp_.tp_async_backward) {
        // The forward as without it; each block's backward ends in its column GEMMs' asynchronous collectives, the
        // output gradient's gather for the block before it after them (under FP8 after its amax all-reduce). A rerun
        // MLP module keeps its blocking collectives (its rerun and backward as without it).
        const std::vector<Action> attention_back = async_attention(windowed);
        const std::vector<Action> mlp_back = rerun_mlp ? join({layer_gather,
                                                               {mlp_unit.recompute_time},
                                                               sum,
                                                               {mlp_unit.backward_time - mlp_unit.recompute_time},
                                                               sum})
                                                       : async_backward(mlp_ops, "mlp_up", "mlp_down", recomputation);
        unit.backward =
            join({full ? unit.forward : std::vector<Action>{}, mlp_back, layer_gather, attention_back, layer_gather});
      }
      return unit;
    };
    // A dense model's layers (a mixture of experts' have no dense MLP ops: moe_layer and, below, dense_layer).
    const Unit layer = moe() ? Unit{} : dense_layer_of(m, mlp, model_.layer_parameters(t), false);
    const Unit windowed_layer =
        window.enabled() && !moe() ? dense_layer_of(m, mlp, model_.layer_parameters(t), true) : layer;
    // A mixture of experts' first dense layers (first_dense_layers): the attention block of every layer, then the
    // dense model's MLP (dense_ffn_size) between the tensor collectives, as in a dense model's layer.
    Unit dense_layer = layer;
    Unit windowed_dense_layer = windowed_layer;
    if (moe() && c.experts.first_dense > 0) {
      const TransformerModel dense = model_.dense_model();
      std::vector<ComputeOp> dense_mlp;
      bool past_norm = false;
      for (const ComputeOp& op : dense.layer_ops(b, split)) {
        past_norm = past_norm || op.name == "mlp_norm";
        if (past_norm) dense_mlp.push_back(op);
      }
      const TrainingUnit dense_mlp_unit = price_ops("mlp", dense_mlp, gpu, type, recomputation);
      dense_layer = dense_layer_of(dense_mlp_unit, dense_mlp, dense.layer_parameters(t), false);
      windowed_dense_layer = dense_layer_of(dense_mlp_unit, dense_mlp, dense.layer_parameters(t), true);
    }
    // A mixture-of-experts layer (with sequence parallelism when T > 1): the attention block ends in a reduce-scatter;
    // the MoE block runs on the rank's sequence slice, its tokens sent to their experts' ranks and back by two
    // all-to-alls of the copies (k·tokens·h values) on the expert group (with expert tensor parallelism the experts'
    // work is wrapped in an all-gather and a reduce-scatter of the copies on the tensor group: see pass()); the next
    // block's input is gathered. Backward mirrors it: two all-to-alls of the copies' gradients, the reduce-scatter's
    // backward an all-gather and the all-gather's a reduce-scatter.
    // What every MoE layer shares, priced once (the layers differ only in the index their expert work carries).
    const TrainingUnit before = moe() ? price_ops("moe", moe_before, gpu, type, recomputation) : TrainingUnit{};
    const TrainingUnit after = moe() ? price_ops("moe", moe_after, gpu, type, recomputation) : TrainingUnit{};
    const double moe_dense_parameters = moe() ? model_.layer_parameters(t) - model_.expert_parameters() : 0.0;
    const double moe_expert_parameters = moe() ? model_.expert_parameters(mp_.expert, mp_.expert_tensor) : 0.0;
    const double k = static_cast<double>(c.experts.top_k);
    const double own = static_cast<double>(b * c.sequence_length) / (sp ? t : 1) / mp_.context;
    const auto copies = static_cast<std::uint64_t>(std::llround(own * k * static_cast<double>(c.hidden) * element_));
    // A layer's dispatch (each rank's copies to the experts' ranks, in proportion to their load) and combine (each
    // expert rank returning what it received); backward, the combine's gradients go the dispatch's way and the
    // dispatch's the combine's, so the first all-to-all of either pass is weighted by destination, the second by
    // source. Uniform routing: one all-to-all for both.
    auto all_to_all = [&](std::int32_t index, bool combine) {
      if (mp_.expert <= 1) return std::vector<Action>{};
      const auto skew = layer_skew_.find(index);
      const std::int32_t id = skew == layer_skew_.end() ? 0 : skew->second + (combine ? 1 : 0);
      return std::vector<Action>{TensorCollective{CollectiveOp::AllToAll, copies, CommKind::Expert, id}};
    };
    // Megatron-Core's all-to-all dispatcher learns the all-to-all's split sizes before it: every rank's count of
    // copies per expert (E int64 values) is all-gathered over the expert group, each MoE layer's forward
    // (MoEAlltoAllTokenDispatcher.preprocess, gather_from_sequence_parallel_region of num_local_tokens_per_expert,
    // megatron/core/transformer/moe/token_dispatcher.py); the backward reuses the splits. With expert tensor
    // parallelism Megatron gathers over the expert and tensor ranks together; partsim over the expert group. DeepEP's
    // two-hop dispatch exchanges its layout inside its own kernels.
    const std::vector<Action> count_gather =
        mp_.expert > 1 && !two_hop()
            ? std::vector<Action>{TensorCollective{
                  CollectiveOp::AllGather, static_cast<std::uint64_t>(kExpertCountBytes * c.experts.count * mp_.expert),
                  CommKind::Expert}}
            : std::vector<Action>{};
    const std::vector<Action> scatter = collectives({{CollectiveOp::ReduceScatter, tensor_bytes_}});
    auto moe_layer = [&](std::int32_t index) {
      const bool windowed = window.windowed(index);
      const std::vector<Action> attention_backward_of_layer =
          mp_.tp_async_backward ? async_attention(windowed)
                                : join({windowed ? windowed_backward : attention_backward_actions, scatter});
      const std::vector<Action> forward = join({windowed ? windowed_forward : attention_forward,
                                                scatter,
                                                {before.forward_time},
                                                count_gather,
                                                all_to_all(index, false),
                                                {ExpertWork{index}},
                                                all_to_all(index, true),
                                                {after.forward_time},
                                                layer_gather});
      const double before_backward = full ? before.backward_time - before.forward_time : before.backward_time;
      const double after_backward = full ? after.backward_time - after.forward_time : after.backward_time;
      const std::vector<Action> backward = join({full ? forward : std::vector<Action>{},
                                                 {after_backward},
                                                 all_to_all(index, false),
                                                 {ExpertWork{index, false}},
                                                 all_to_all(index, true),
                                                 {before_backward},
                                                 layer_gather,
                                                 attention_backward_of_layer});
      return Unit{forward, backward, moe_dense_parameters, moe_expert_parameters, true};
    };
    // Vocabulary-parallel embedding (Megatron-LM VocabParallelEmbedding): each rank looks up the tokens of its shard,
    // the partial outputs are summed by an all-reduce of b·s·h (reduce-scatter with sequence parallelism, whose
    // backward is an all-gather; the all-reduce's backward is the identity).
    const Unit embedding_unit{join({{e.forward_time}, sum}), join({gather, {e.backward_time}}),
                              model_.embedding_parameters(t)};
    // LM head: a column-parallel GEMM over the rank's vocabulary shard. Its input is whole on every rank (with sequence
    // parallelism gathered first); backward, the partial input gradients are summed by an all-reduce of b·s·h
    // (reduce-scatter with sequence parallelism). The vocabulary-parallel cross-entropy needs three all-reduces of
    // b·s fp32 values in the forward pass and none backward: the max logit per token, the target's logit and the sum
    // of exponentials (Megatron-LM megatron/core/tensor_parallel/cross_entropy.py, _VocabParallelCrossEntropy.forward:
    // all_reduce(logits_max, MAX), all_reduce(predicted_logits), all_reduce(sum_exp_logits)).
    const auto token_values = static_cast<std::uint64_t>(b * c.sequence_length / mp_.context) * kCrossEntropyValueBytes;
    const TensorCollective cross_entropy{CollectiveOp::AllReduce, token_values};
    double head_parameters = model_.output_parameters(t);
    // With tied embeddings and a pipeline the last stage holds its own copy of the token table shard (Megatron-LM).
    if (tied_copy()) head_parameters += static_cast<double>(model_.vocab_shard(t) * c.hidden);
    const Unit head_unit{
        join({{n.forward_time}, gather, {l.forward_time}, collectives({cross_entropy, cross_entropy, cross_entropy})}),
        join({{l.backward_time}, sum, {n.backward_time}}), head_parameters};
    LayerUnits out{embedding_unit, head_unit, {}};
    for (std::int32_t index = 0; index < c.layers; ++index)
      out.layers.push_back(!moe()                    ? (window.windowed(index) ? windowed_layer : layer)
                           : model_.moe_layer(index) ? moe_layer(index)
                           : window.windowed(index)  ? windowed_dense_layer
                                                     : dense_layer);
    return out;
  }

  /** The units of every virtual stage, in forward order: the embedding on the first, each layer priced under the
   * training's recomputation (or, with the block method, under none where it is not among its chunk's first
   * recompute_num_layers), the head on the last. */
  void build_units() {
    if (moe()) price_experts(cluster_.gpu, training_.data_type);
    const LayerUnits all = priced_units(training_.recomputation);
    const LayerUnits kept = recomputed_.empty() ? LayerUnits{} : priced_units(Recomputation::None);
    const std::vector<int> layers = virtual_stage_layers(mp_, model_.config().layers);
    units_.resize(static_cast<std::size_t>(chunks_));
    std::size_t index = 0; // the model's layer
    for (int vs = 0; vs < chunks_; ++vs) {
      auto& units = units_[static_cast<std::size_t>(vs)];
      if (vs == 0) units.push_back(all.embedding);
      for (int l = 0; l < layers[static_cast<std::size_t>(vs)]; ++l, ++index)
        units.push_back((recomputed_.empty() || recomputed_[index] ? all : kept).layers[index]);
      if (vs == chunks_ - 1) units.push_back(all.head);
    }
  }

  bool moe() const { return model_.config().experts.moe(); }

  /** Bytes of the keys and values one rank of the context group holds for a layer: b·(s/C)·(kv heads / T)·(d + dv). */
  std::uint64_t context_block_bytes() const {
    const TransformerConfig& c = model_.config();
    // Keys of head_dim and values of value_dim per key/value head (multi-head latent attention: every head's own,
    // after the up projection, 192 + 128 in DeepSeek-V3).
    const double values = static_cast<double>(training_.micro_batch) *
                          static_cast<double>(c.sequence_length / mp_.context) *
                          static_cast<double>(c.kv_heads / mp_.tensor * (c.head_dim + model_.value_dim()));
    return static_cast<std::uint64_t>(std::llround(values * element_));
  }

  /** Bytes a rank holds on either side of a Ulysses all-to-all (all_to_all): its s/C tokens of the tensor rank's heads
   * for the queries, keys and values (`qkv`: b·(s/C)·(heads·d + kv heads·(d + dv))/T values, dv the value head
   * dimension) or for the attention's output (b·(s/C)·(heads/T)·dv); it keeps 1/C and sends the rest, 1/C to each
   * peer. */
  std::uint64_t ulysses_bytes(bool qkv) const {
    const TransformerConfig& c = model_.config();
    const auto kv = static_cast<double>(c.kv_heads / mp_.tensor);
    const auto value = static_cast<double>(model_.value_dim());
    const double width =
        qkv ? static_cast<double>(c.heads / mp_.tensor * c.head_dim) + kv * (static_cast<double>(c.head_dim) + value)
            : static_cast<double>(c.heads / mp_.tensor) * value;
    const double values =
        static_cast<double>(training_.micro_batch) * static_cast<double>(c.sequence_length / mp_.context) * width;
    return static_cast<std::uint64_t>(std::llround(values * element_));
  }

  /** The attention core's forward (`core` s of compute on the rank) with its keys and values from the context group.
   * p2p: C-1 ring steps, each sending the block held to the next rank while attending to it, then receiving the
   * previous rank's (the causal chunk pairs make every step the same work: core / C); all_gather: the whole group's
   * keys and values gathered first (exposed), then the core. */
  std::vector<Action> context_forward(double core) const {
    const std::uint64_t block = context_block_bytes();
    if (mp_.context_comm == ContextComm::AllToAll)
      return {TensorCollective{CollectiveOp::AllToAll, ulysses_bytes(true), CommKind::Context}, core,
              TensorCollective{CollectiveOp::AllToAll, ulysses_bytes(false), CommKind::Context}};
    if (mp_.context_comm == ContextComm::AllGather)
      return {
          TensorCollective{CollectiveOp::AllGather, block * static_cast<std::uint64_t>(mp_.context), CommKind::Context},
          core};
    std::vector<Action> out;
    const double step = core / static_cast<double>(mp_.context);
    for (int i = 0; i + 1 < mp_.context; ++i) {
      out.emplace_back(RingHop{true, block, 2});
      out.emplace_back(step);
      out.emplace_back(RingHop{false, 0, 2});
    }
    out.emplace_back(step);
    return out;
  }

  /** The core's backward (`core` s): p2p, C-1 ring steps passing the keys and values with the gradients accumulated
   * for them (2 blocks a step), then one hop that returns the gradients to the rank that holds the block
   * (Transformer Engine's AttnFuncWithCPAndKVP2P); all_gather, the keys and values gathered again, the backward,
   * and their gradients reduce-scattered to their ranks. */
  std::vector<Action> context_backward(double core) const {
    const std::uint64_t block = context_block_bytes();
    const auto whole = block * static_cast<std::uint64_t>(mp_.context);
    if (mp_.context_comm == ContextComm::AllToAll) // the output's gradient in, the queries', keys' and values' out
      return {TensorCollective{CollectiveOp::AllToAll, ulysses_bytes(false), CommKind::Context}, core,
              TensorCollective{CollectiveOp::AllToAll, ulysses_bytes(true), CommKind::Context}};
    if (mp_.context_comm == ContextComm::AllGather)
      return {TensorCollective{CollectiveOp::AllGather, whole, CommKind::Context}, core,
              TensorCollective{CollectiveOp::ReduceScatter, whole, CommKind::Context}};
    std::vector<Action> out;
    const double step = core / static_cast<double>(mp_.context);
    for (int i = 0; i + 1 < mp_.context; ++i) {
      out.emplace_back(RingHop{true, 2 * block, 3});
      out.emplace_back(step);
      out.emplace_back(RingHop{false, 0, 3});
    }
    out.emplace_back(step);
    out.emplace_back(RingHop{true, block, 4});
    out.emplace_back(RingHop{false, 0, 4});
    return out;
  }

  /** Index of a rank's (data, context) position along the data ranks: d·C + c. */
  int data_rank(const ParallelCoordinates& at) const { return partsim::data_rank(mp_, at); }
  /** Coordinates of data rank `dr` (d·C + c) at tensor `t`, pipeline `p`. */
  ParallelCoordinates at_data_rank(int dr, int t, int p) const {
    return ParallelCoordinates{dr / mp_.context, t, p, dr % mp_.context};
  }

  /** Each layer's routing over the expert group, and the routed experts' forward and backward time on each of its
   * positions (the same for every layer and position with uniform routing: priced once). */
  void price_experts(const GpuProfile& gpu, const std::string& type) {
    const TransformerConfig& c = model_.config();
    const TensorSplit base = layer_split(mp_);
    // Expert tensor parallelism: the copies a position's experts get from its expert group, gathered over the tensor
    // group (each tensor rank's expert group routes with the layer's same shares: expert_tensor x as many), in bytes.
    const double own = static_cast<double>(training_.micro_batch * c.sequence_length) /
                       (mp_.sequence_parallel ? static_cast<double>(mp_.tensor) : 1.0) /
                       static_cast<double>(mp_.context);
    auto gathered = [&](double load) -> std::uint64_t {
      if (mp_.expert_tensor <= 1) return 0;
      const double copies = std::round(own * static_cast<double>(c.experts.top_k) * load);
      return static_cast<std::uint64_t>(
          std::llround(static_cast<double>(mp_.expert_tensor) * copies * static_cast<double>(c.hidden) * element_));
    };
    // (load, recomputation) -> (forward, backward): with the block method a layer outside its chunk's first
    // recompute_num_layers runs no rerun.
    std::map<std::pair<double, Recomputation>, std::pair<double, double>> by_load;
    auto price = [&](double load, Recomputation recomputation) {
      const bool full = recomputation == Recomputation::Full;
      auto [it, fresh] = by_load.try_emplace({load, recomputation});
      if (fresh) {
        TensorSplit split = base;
        split.expert_load = load;
        std::vector<ComputeOp> ops;
        for (const ComputeOp& op : model_.layer_ops(training_.micro_batch, split))
          if (is_routed_expert_op(op)) ops.push_back(op);
        const TrainingUnit u = price_ops("experts", ops, gpu, type, recomputation);
        it->second = {u.forward_time, full ? u.backward_time - u.forward_time : u.backward_time};
      }
      return it->second;
    };
    expert_times_.assign(static_cast<std::size_t>(c.layers), {});
    expert_gathers_.assign(static_cast<std::size_t>(c.layers), {});
    routing_.clear();
    skews_.clear();
    layer_skew_.clear();
    node_share_.clear();
    if (two_hop())
      node_share_ = node_token_share(c.experts.count, c.experts.top_k, c.experts.groups, c.experts.groups_per_token,
                                     mp_.expert, expert_layout(0, 0, 0).members);
    for (std::int64_t l = 0; l < c.layers; ++l) {
      if (!model_.moe_layer(l)) continue; // a first dense layer: no experts, no routing
      routing_.push_back(route_layer(training_.expert_routing, c.experts.count, mp_.expert, l, seed_));
      const std::vector<double>& load = routing_.back().rank_load;
      const Recomputation layer_recomputation = recomputed_.empty() || recomputed_[static_cast<std::size_t>(l)]
                                                    ? training_.recomputation
                                                    : Recomputation::None;
      for (const double x : load) {
        expert_times_[static_cast<std::size_t>(l)].push_back(price(x, layer_recomputation));
        expert_gathers_[static_cast<std::size_t>(l)].push_back(gathered(x));
      }
      // A layer whose ranks' loads differ sends them its tokens in that proportion: its dispatch and combine. A two-hop
      // all-to-all also carries the network's share per node.
      if (mp_.expert > 1 &&
          (two_hop() || std::any_of(load.begin(), load.end(), [](double x) { return std::abs(x - 1.0) > 1e-12; }))) {
        layer_skew_[static_cast<std::int32_t>(l)] = static_cast<std::int32_t>(skews_.size()) + 1;
        skews_.push_back(AllToAllSkew{load, false, node_share_});
        skews_.push_back(AllToAllSkew{load, true, node_share_});
      }
    }
  }

  /** Two-hop dispatch of the expert all-to-alls (/strategy/expert_dispatch). */
  bool two_hop() const { return moe() && mp_.expert > 1 && mp_.expert_dispatch == ExpertDispatch::TwoHop; }

  /** Expert group (tensor t, pipeline p, block)'s members placed on their nodes, as the engine places them. */
  partsim::GroupShape expert_layout(int t, int p, int block) const {
    std::vector<int> node_key;
    for (int j = 0; j < mp_.expert; ++j)
      node_key.push_back(rank_of(mp_, at_data_rank(block * mp_.expert + j, t, p)) / cluster_.gpus_per_node);
    partsim::GroupShape shape;
    place_members(shape, node_key);
    return shape;
  }

  /** ZeRO-3 / FSDP parameters sharded over a data group that exists (replicas that synchronise). */
  bool zero3_sharded() const { return mp_.zero >= 3 && mp_.sync == GradientSync::AllReduce && mp_.data_ranks() > 1; }
  /** A pass is one compute and one fused collective per kind (tensor collectives per pass, no ZeRO-3 gathers, no
   * expert all-to-alls: each one waits for the layer's busiest expert rank). */
  bool fused_passes() const {
    return !mp_.tensor_per_layer && !zero3_sharded() && !(moe() && mp_.expert > 1) && mp_.context == 1;
  }

  /** Tied embeddings with more than one stage: the first stage's token table and the last stage's copy. */
  bool tied_copy() const { return mp_.pipeline > 1 && model_.config().tied_embeddings; }

  /** The rank whose program rank `r` runs relabeled: the one at the same (tensor, pipeline, context) position in the
   * first data-parallel replica (with expert parallelism, where each position of an expert group routes its own
   * tokens, the first data rank at the same position of its expert group and the same context index: data rank
   * modulo lcm(expert, context)). The rest of a program depends on its position only through its peers (the same
   * offset away in every replica: rank_of is linear in the data coordinate) and its groups (group_map). */
  int template_of(int r) const {
    const ParallelCoordinates at = coordinates_of(mp_, r);
    const int period = moe() && mp_.expert > 1 ? std::lcm(mp_.expert, mp_.context) : mp_.context;
    return rank_of(mp_, at_data_rank(data_rank(at) % period, at.tensor, at.pipeline));
  }

  /** (template's group, rank's group) for the groups of the template's program that differ for the rank. */
  std::vector<std::pair<int, int>> group_map(int from, int to) const {
    const ParallelCoordinates a = coordinates_of(mp_, from);
    const ParallelCoordinates b = coordinates_of(mp_, to);
    std::vector<std::pair<int, int>> map;
    auto add = [&](const auto& groups, const auto& key_a, const auto& key_b) {
      const auto ia = groups.find(key_a);
      const auto ib = groups.find(key_b);
      if (ia != groups.end() && ib != groups.end() && ia->second != ib->second)
        map.emplace_back(ia->second, ib->second);
    };
    add(tensor_group_, std::pair{data_rank(a), a.pipeline}, std::pair{data_rank(b), b.pipeline});
    add(context_group_, std::tuple{a.data, a.tensor, a.pipeline}, std::tuple{b.data, b.tensor, b.pipeline});
    const int e = std::max(1, mp_.expert);
    const int da = data_rank(a);
    const int db = data_rank(b);
    add(expert_group_, std::tuple{a.tensor, a.pipeline, da / e}, std::tuple{b.tensor, b.pipeline, db / e});
    add(expert_data_group_, std::tuple{a.tensor, a.pipeline, da % e}, std::tuple{b.tensor, b.pipeline, db % e});
    add(data_group_, std::pair{a.tensor, a.pipeline}, std::pair{b.tensor, b.pipeline});
    add(embedding_group_, std::pair{data_rank(a), a.tensor}, std::pair{data_rank(b), b.tensor});
    std::sort(map.begin(), map.end());
    return map;
  }

  /** Decides like_: a rank shares its template's program when every group it meets has the shape of the template's
   * (the same members per node, ports and links: the planner's algorithm choices depend on nothing else). */
  void share_programs(bool share) {
    const int gpus = mp_.gpus();
    like_.assign(static_cast<std::size_t>(gpus), -1);
    for (int r = 0; r < gpus && share; ++r) {
      const int t = template_of(r);
      if (t == r) continue;
      bool same = true;
      for (const auto& [ga, gb] : group_map(t, r)) same = same && collectives_.same_shape(ga, gb);
      if (same) like_[static_cast<std::size_t>(r)] = t;
    }
  }

  void make_groups(Plan& plan) {
    const bool sync = mp_.sync == GradientSync::AllReduce && mp_.data_ranks() > 1;
    const int data_ranks = mp_.data_ranks();
    for (int p = 0; p < mp_.pipeline; ++p)
      for (int d = 0; d < data_ranks && mp_.tensor > 1; ++d) {
        tensor_group_[{d, p}] = static_cast<int>(plan.groups.size());
        plan.groups.emplace_back();
        for (int t = 0; t < mp_.tensor; ++t) plan.groups.back().push_back(rank_of(mp_, at_data_rank(d, t, p)));
      }
    // The data group: every rank holding the same weights, the context-parallel ones included (Megatron-Core's
    // data-parallel group with context parallelism).
    for (int p = 0; p < mp_.pipeline; ++p)
      for (int t = 0; t < mp_.tensor && sync; ++t) {
        data_group_[{t, p}] = static_cast<int>(plan.groups.size());
        plan.groups.emplace_back();
        for (int d = 0; d < data_ranks; ++d) plan.groups.back().push_back(rank_of(mp_, at_data_rank(d, t, p)));
      }
    // Context groups (all-gather and all-to-all exchanges; the ring's hops are point-to-point): the C ranks of one
    // replica's position.
    for (int p = 0; p < mp_.pipeline && mp_.context > 1 && mp_.context_comm != ContextComm::P2P; ++p)
      for (int t = 0; t < mp_.tensor; ++t)
        for (int d = 0; d < mp_.data; ++d) {
          context_group_[{d, t, p}] = static_cast<int>(plan.groups.size());
          plan.groups.emplace_back();
          for (int c = 0; c < mp_.context; ++c) plan.groups.back().push_back(rank_of(mp_, {d, t, p, c}));
        }
    // Expert groups: `expert` consecutive data ranks (data x context, as Megatron-Core carves expert groups out of the
    // data and context ranks) of one (tensor, pipeline) position route their tokens to each other's experts; their
    // expert-data groups (the same position in every expert group) synchronise those experts.
    for (int p = 0; p < mp_.pipeline && mp_.expert > 1; ++p)
      for (int t = 0; t < mp_.tensor; ++t)
        for (int block = 0; block < data_ranks / mp_.expert; ++block) {
          expert_group_[{t, p, block}] = static_cast<int>(plan.groups.size());
          plan.groups.emplace_back();
          for (int j = 0; j < mp_.expert; ++j)
            plan.groups.back().push_back(rank_of(mp_, at_data_rank(block * mp_.expert + j, t, p)));
          if (two_hop()) check_two_hop(expert_layout(t, p, block));
        }
    for (int p = 0; p < mp_.pipeline && moe() && sync && data_ranks > mp_.expert; ++p)
      for (int t = 0; t < mp_.tensor; ++t)
        for (int j = 0; j < mp_.expert; ++j) {
          expert_data_group_[{t, p, j}] = static_cast<int>(plan.groups.size());
          plan.groups.emplace_back();
          for (int block = 0; block < data_ranks / mp_.expert; ++block)
            plan.groups.back().push_back(rank_of(mp_, at_data_rank(block * mp_.expert + j, t, p)));
        }
    // Megatron-LM's embedding group: the first and last stage of each (data, tensor) position.
    for (int d = 0; d < data_ranks && tied_copy(); ++d)
      for (int t = 0; t < mp_.tensor; ++t) {
        embedding_group_[{d, t}] = static_cast<int>(plan.groups.size());
        plan.groups.push_back(
            {rank_of(mp_, at_data_rank(d, t, 0)), rank_of(mp_, at_data_rank(d, t, mp_.pipeline - 1))});
      }
    collectives_.set_groups(plan.groups);
  }

  /** A two-hop all-to-all forwards inside nodes what crossed between them: every expert group spans nodes evenly, and
   * alike (the network shares are per node of the first group). */
  void check_two_hop(const partsim::GroupShape& layout) const {
    if (layout.members.size() < 2 || !layout.even)
      throw InputError(source_, "/strategy/expert_dispatch",
                       fmt::format("two_hop sends tokens between nodes and forwards them inside each, but expert "
                                   "groups of {} GPUs lie {} (nodes of {} GPUs); expected direct",
                                   mp_.expert, layout.members.size() < 2 ? "inside one node" : "unevenly over nodes",
                                   cluster_.gpus_per_node));
    if (layout.members != expert_layout(0, 0, 0).members)
      throw InputError(source_, "/strategy/expert_dispatch",
                       "two_hop needs every expert group laid out alike on its nodes; this placement puts them "
                       "differently; expected direct or another placement");
  }

  CollectiveStep collective(CollectiveOp op, std::uint64_t bytes, int group, const CollectiveChoice& choice,
                            CommKind kind, int stream) {
    const GroupLayout& shape = collectives_.shape(group);
    if (choice.algorithm == CollectiveAlgorithm::Hierarchical && !shape.even)
      throw InputError(
          source_,
          kind == CommKind::Tensor ? "/strategy/tensor_collectives/algorithm" : "/strategy/gradient_sync/algorithm",
          fmt::format("a hierarchical all-reduce needs the same number of members on every node, but "
                      "{} groups of {} GPUs straddle nodes of {} GPUs unevenly; expected ring, tree or "
                      "auto",
                      kind == CommKind::Tensor ? "tensor" : "data", shape.members, cluster_.gpus_per_node));
    if (choice.algorithm == CollectiveAlgorithm::Nvls && shape.nodes > 1)
      throw InputError(
          source_,
          kind == CommKind::Tensor ? "/strategy/tensor_collectives/algorithm" : "/strategy/gradient_sync/algorithm",
          fmt::format("nvls reduces in one node's NVSwitch, but {} groups of {} GPUs span {} nodes of {} GPUs; "
                      "expected nvls_tree (NVLS in each node, a tree between them), ring, tree, hierarchical or auto",
                      kind == CommKind::Tensor ? "tensor" : "data", shape.members, shape.nodes,
                      cluster_.gpus_per_node));
    if (choice.algorithm == CollectiveAlgorithm::NvlsTree && (shape.nodes < 2 || !shape.even || shape.per_node < 2))
      throw InputError(
          source_,
          kind == CommKind::Tensor ? "/strategy/tensor_collectives/algorithm" : "/strategy/gradient_sync/algorithm",
          fmt::format("nvls_tree runs NVLS inside each node and a tree between the nodes, but {} groups of {} GPUs "
                      "lie {}; expected {}",
                      kind == CommKind::Tensor ? "tensor" : "data", shape.members,
                      shape.nodes < 2 ? "inside one node"
                      : !shape.even   ? "unevenly over nodes"
                                      : "one per node",
                      shape.nodes < 2 ? "nvls, ring, tree or auto" : "ring, tree or auto"));
    return collectives_.step(op, bytes, group, choice, kind, stream); // `auto` fidelity: settled in plan()
  }

  /** The label of a pass, named on first use (labels in the order the programs first run them). */
  std::uint32_t label(Plan& plan, Pass pass, int micro_batch, int chunk) {
    const int forward = pass == Pass::Forward ? 1 : 0;
    std::uint32_t& id =
        labels_[static_cast<std::size_t>((forward * micro_batches_ + micro_batch) * mp_.virtual_stages + chunk)];
    if (id == 0) {
      id = static_cast<std::uint32_t>(plan.labels.size());
      plan.labels.push_back(fmt::format("{} mb{}{}", forward != 0 ? 'F' : 'B', micro_batch,
                                        mp_.virtual_stages > 1 ? fmt::format(" c{}", chunk) : std::string()));
    }
    return id;
  }

  /** A collective of a pass: the tensor collectives' choice; the experts' all-to-all takes its fidelity only (its
   * algorithm is direct, or two-hop as /strategy/expert_dispatch says; its protocol NCCL's `auto`). */
  void tensor_collective(std::vector<Step>& steps, int group, const TensorCollective& c) {
    CollectiveChoice choice = mp_.tensor_collectives;
    if (c.kind == CommKind::Expert || c.kind == CommKind::Context) {
      choice.algorithm.reset();
      choice.protocol.reset();
    }
    if (c.kind == CommKind::Expert && two_hop()) choice.algorithm = CollectiveAlgorithm::TwoHop;
    steps.emplace_back(collective(c.op, c.bytes, group, choice, c.kind, 0));
    if (c.op == CollectiveOp::AllToAll) std::get<CollectiveStep>(steps.back()).root = c.skew;
  }

  /** Gradient synchronisation of `bytes` on the data group: all-reduce, or reduce-scatter under ZeRO. */
  CollectiveStep gradient_collective(std::uint64_t bytes, int group) {
    const bool overlap = mp_.gradient_sync.overlap;
    return collective(mp_.zero >= 1 ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce, bytes, group,
                      mp_.gradient_sync.collective, CommKind::Data, overlap ? 1 : 0);
  }

  /** The token table shard's gradient, (V/T)·h elements at the gradients' size. */
  std::uint64_t embedding_sync_bytes() const {
    return static_cast<std::uint64_t>(std::llround(static_cast<double>(model_.vocab_shard(mp_.tensor)) *
                                                   static_cast<double>(model_.config().hidden) * gradient_element_));
  }

  /** The all-gather after the optimizer step of what gradient collective `reduction` reduced: its parameters,
   * `gathered` bytes. Without fp8_param_gather they are the gradients' bytes in the data type. */
  CollectiveStep gather_back(CollectiveStep reduction, double gathered) const {
    reduction.op = CollectiveOp::AllGather;
    reduction.stream = 0;
    reduction.bytes = static_cast<std::uint64_t>(std::llround(
        training_.kernels.fp8_param_gather ? gathered
                                           : static_cast<double>(reduction.bytes) * element_ / gradient_element_));
    return reduction;
  }

  /** A unit's parameters (what ZeRO gathers) and its gradients (what the data-parallel reduction moves). With
   * fp8_param_gather a layer's parameters are gathered at 1 byte each (partsim counts its norms, biases and router
   * with its weights: at most a few per mille of them). */
  std::uint64_t unit_bytes(const Unit& unit) const {
    return static_cast<std::uint64_t>(std::llround(unit.parameters * (unit.layer ? layer_element_ : element_)));
  }
  std::uint64_t unit_gradient_bytes(const Unit& unit) const {
    return static_cast<std::uint64_t>(std::llround(unit.parameters * gradient_element_));
  }

  /** A gradient bucket of a virtual stage as its parameters: its first unit in forward order and their bytes. */
  struct ParamBucket {
    std::size_t first = 0;
    std::uint64_t bytes = 0;
  };

  /** The buckets pass() reduces the last micro-batch's gradients in (filled from the last unit backwards), in
   * forward order: the order Megatron-Core gathers their parameters in. */
  /** Gradient bytes that close a bucket of virtual stage `vs`: the scenario's, or none (one bucket per chunk) on
   * pipeline stages after the first with one_bucket_after_first_stage. */
  double bucket_bytes(int vs) const {
    if (mp_.gradient_sync.one_bucket_after_first_stage && vs % mp_.pipeline > 0)
      return std::numeric_limits<double>::infinity();
    return mp_.gradient_sync.bucket_bytes;
  }

  std::vector<ParamBucket> param_buckets(int vs) const {
    const auto& units = units_[static_cast<std::size_t>(vs)];
    std::vector<ParamBucket> buckets;
    double gradients = 0.0;
    std::uint64_t parameters = 0;
    for (std::size_t k = units.size(); k-- > 0;) {
      gradients += static_cast<double>(unit_gradient_bytes(units[k]));
      parameters += unit_bytes(units[k]);
      if (gradients >= bucket_bytes(vs) || (k == 0 && gradients > 0.0)) {
        buckets.push_back({k, parameters});
        gradients = 0.0;
        parameters = 0;
      }
    }
    std::reverse(buckets.begin(), buckets.end());
    return buckets;
  }

  /** Overlapped parameter gathers (ZeRO-1/2 with overlap_param_gather): queues every bucket's all-gather of this
   * rank's chunks on the communication stream, chunk by chunk in forward order, and notes in param_waits_ before
   * which unit the first forward pass waits for which of them (as a count of gathers still allowed to be pending). */
  void queue_param_gathers(std::vector<Step>& steps, const ParallelCoordinates& at) {
    param_waits_.assign(static_cast<std::size_t>(chunks_), {});
    if (!gathers_overlapped()) return;
    const int data_group = data_group_.at({at.tensor, at.pipeline});
    std::vector<std::pair<int, ParamBucket>> all;
    for (int c = 0; c < mp_.virtual_stages; ++c) {
      const int vs = c * mp_.pipeline + at.pipeline;
      for (const ParamBucket& b : param_buckets(vs)) all.emplace_back(vs, b);
    }
    for (std::size_t g = 0; g < all.size(); ++g) {
      const auto& [vs, bucket] = all[g];
      steps.emplace_back(collective(CollectiveOp::AllGather, bucket.bytes, data_group, mp_.gradient_sync.collective,
                                    CommKind::Data, 1));
      auto& waits = param_waits_[static_cast<std::size_t>(vs)];
      if (waits.empty()) waits.assign(units_[static_cast<std::size_t>(vs)].size(), -1);
      waits[bucket.first] = static_cast<std::int64_t>(all.size() - g - 1);
    }
  }

  bool gathers_overlapped() const {
    return mp_.gradient_sync.overlap_param_gather && (mp_.zero == 1 || mp_.zero == 2) && !data_group_.empty();
  }

  /** One pass of micro-batch `mb` through virtual stage `vs` on a rank. `deferred`: data-parallel collectives that
   * wait for the pipeline to drain; `final_sync`: for every gradient collective of the last micro-batch, the all-gather
   * of its parameters after the optimizer step (ZeRO-1/2 without overlapped gathers). */
  void pass(Plan& plan, std::vector<Step>& steps, std::vector<CollectiveStep>& deferred,
            std::vector<CollectiveStep>& final_sync, const ParallelCoordinates& at, const PipelineOp& op, int vs) {
    const auto& units = units_[static_cast<std::size_t>(vs)];
    const int tensor_group = mp_.tensor > 1 ? tensor_group_.at({data_rank(at), at.pipeline}) : -1;
    const int context_group = context_group_.empty() ? -1 : context_group_.at({at.data, at.tensor, at.pipeline});
    const int data_group = data_group_.empty() ? -1 : data_group_.at({at.tensor, at.pipeline});
    const int expert_group =
        expert_group_.empty() ? -1 : expert_group_.at({at.tensor, at.pipeline, data_rank(at) / mp_.expert});
    const int expert_data_group =
        expert_data_group_.empty() ? -1 : expert_data_group_.at({at.tensor, at.pipeline, data_rank(at) % mp_.expert});
    const auto position = static_cast<std::size_t>(data_rank(at) % mp_.expert);
    // The routed experts' time on this rank for a layer (forward or backward as the pass).
    auto expert_time = [&](const ExpertWork& work) {
      const auto& [f, b] = expert_times_[static_cast<std::size_t>(work.layer)][position];
      return work.forward ? f : b;
    };
    // Expert tensor parallelism (Megatron-Core's all-to-all dispatcher with a tensor group: the received copies
    // all-gathered over it before the experts, their outputs reduce-scattered after; backward, the output gradients
    // gathered, the input gradients reduce-scattered). The members of a tensor group share their data position, so
    // their loads and bytes agree.
    auto expert_gather = [&](const ExpertWork& work) -> std::uint64_t {
      return mp_.expert_tensor > 1 ? expert_gathers_[static_cast<std::size_t>(work.layer)][position] : 0;
    };
    auto group_of = [&](const TensorCollective& c) {
      return c.kind == CommKind::Expert ? expert_group : c.kind == CommKind::Context ? context_group : tensor_group;
    };
    const bool forward = op.pass == Pass::Forward;
    const bool last_micro_batch = op.micro_batch == micro_batches_ - 1;
    // ZeRO-2 and ZeRO-3 keep only their shard of the gradients: every micro-batch's backward reduce-scatters them
    // into it (as DeepSpeed's stages 2 and 3 do, and FSDP unless no_sync holds the whole gradients, which neither
    // Composer nor torchtitan does under FSDP); otherwise they accumulate whole until the last micro-batch.
    const bool reduce_now = !forward && (last_micro_batch || mp_.zero >= 2);
    const bool sync_now = reduce_now && data_group >= 0;
    const bool zero3 = zero3_sharded();
    // The first forward pass waits for each bucket's overlapped parameter gather before the bucket's first unit.
    const std::vector<std::int64_t>* gathers =
        forward && op.micro_batch == 0 && !param_waits_[static_cast<std::size_t>(vs)].empty()
            ? &param_waits_[static_cast<std::size_t>(vs)]
            : nullptr;
    auto wait_for_gather = [&](std::int64_t pending) {
      if (pending >= 0) steps.emplace_back(StreamSyncStep{static_cast<std::uint32_t>(pending)});
    };
    const std::uint32_t name = label(plan, op.pass, op.micro_batch, op.chunk);
    const std::uint64_t samples =
        forward && vs == 0 && at.tensor == 0 && at.context == 0 ? static_cast<std::uint64_t>(training_.micro_batch) : 0;
    bool samples_given = false;
    auto compute = [&](double time, bool beside_next = false, bool contended = false) {
      steps.emplace_back(ComputeStep{time * peak_, samples_given ? 0 : samples, name, beside_next, contended});
      samples_given = true;
    };
    auto beside = [&](const Beside& b) {
      compute(b.compute, true, b.contended);
      tensor_collective(steps, tensor_group, b.collective);
    };
    auto gather = [&](const Unit& unit) {
      steps.emplace_back(collective(CollectiveOp::AllGather, unit_bytes(unit), data_group, mp_.gradient_sync.collective,
                                    CommKind::Data, 1));
    };
    double bucket = 0.0;
    double bucket_gathered = 0.0; // the bucket's parameters as gathered back after the step (bytes)
    auto flush = [&] {
      if (bucket <= 0.0) return;
      const CollectiveStep step = gradient_collective(static_cast<std::uint64_t>(std::llround(bucket)), data_group);
      if (last_micro_batch) final_sync.push_back(gather_back(step, bucket_gathered));
      if (step.stream == 1)
        steps.emplace_back(step);
      else
        deferred.push_back(step);
      bucket = 0.0;
      bucket_gathered = 0.0;
    };
    auto add_gradients = [&](const Unit& unit) {
      bucket += static_cast<double>(unit_gradient_bytes(unit));
      bucket_gathered += static_cast<double>(unit_bytes(unit));
      if (bucket >= bucket_bytes(vs)) flush();
    };
    // The routed experts' gradients, in their own buckets on the expert-data group (Megatron-Core keeps expert
    // parameters in buffers of their own, reduced over the expert-data-parallel group).
    const bool expert_sync_now = reduce_now && expert_data_group >= 0;
    double expert_bucket = 0.0;
    double expert_gathered = 0.0;
    auto flush_experts = [&] {
      if (expert_bucket <= 0.0) return;
      const CollectiveStep step =
          gradient_collective(static_cast<std::uint64_t>(std::llround(expert_bucket)), expert_data_group);
      if (last_micro_batch) expert_final_sync_.push_back(gather_back(step, expert_gathered));
      if (step.stream == 1)
        steps.emplace_back(step);
      else
        deferred.push_back(step);
      expert_bucket = 0.0;
      expert_gathered = 0.0;
    };
    auto add_expert_gradients = [&](const Unit& unit) {
      if (!expert_sync_now || unit.expert_parameters <= 0.0) return;
      expert_bucket += unit.expert_parameters * gradient_element_;
      expert_gathered += unit.expert_parameters * layer_element_;
      if (expert_bucket >= bucket_bytes(vs)) flush_experts();
    };

    const std::size_t n = units.size();
    // The marked rank's boundaries (Plan::unit_marks): where the pass starts and where each unit ends.
    const bool marking =
        plan.marked_rank >= 0 && &steps == &plan.ranks[static_cast<std::size_t>(plan.marked_rank)].own_steps;
    auto mark = [&](bool layer_end) {
      if (marking) plan.unit_marks.push_back({static_cast<std::uint32_t>(steps.size()), forward, layer_end});
    };
    if (fused_passes()) {
      // One compute and one fused tensor-parallel collective per kind for the whole pass (the bytes of all of that
      // kind, in the order the kinds first appear); gradients bucketed afterwards.
      double time = 0.0;
      std::vector<TensorCollective> fused;
      // The k-th overlap of every unit fused into one (the layers of a pass are alike, so each of its terms is bound
      // by the same side, compute or transfer, and the sum of the overlaps is the overlap of the sums).
      std::vector<Beside> fused_beside;
      for (const Unit& u : units) {
        std::size_t k = 0;
        for (const Action& action : forward ? u.forward : u.backward) {
          if (const auto* seconds = std::get_if<double>(&action)) {
            time += *seconds;
            continue;
          }
          if (const auto* b = std::get_if<Beside>(&action)) {
            if (k == fused_beside.size()) {
              fused_beside.push_back(*b);
            } else {
              PARTSIM_CHECK(fused_beside[k].collective.op == b->collective.op &&
                            fused_beside[k].contended == b->contended)
                  << "units overlap unlike collectives";
              fused_beside[k].collective.bytes += b->collective.bytes;
              fused_beside[k].compute += b->compute;
            }
            ++k;
            continue;
          }
          auto add = [&](const TensorCollective& c) {
            auto it = std::find_if(fused.begin(), fused.end(), [&](const TensorCollective& f) { return f.op == c.op; });
            if (it == fused.end())
              fused.push_back(c);
            else
              it->bytes += c.bytes;
          };
          if (const auto* work = std::get_if<ExpertWork>(&action)) {
            time += expert_time(*work);
            if (const std::uint64_t bytes = expert_gather(*work); bytes > 0) {
              add({CollectiveOp::AllGather, bytes});
              add({CollectiveOp::ReduceScatter, bytes});
            }
            continue;
          }
          add(std::get<TensorCollective>(action));
        }
      }
      if (gathers) { // one compute for the whole pass: every bucket of the chunk first (the last has the fewest left)
        std::int64_t last = -1;
        for (const std::int64_t pending : *gathers)
          if (pending >= 0 && (last < 0 || pending < last)) last = pending;
        wait_for_gather(last);
      }
      compute(time);
      for (const Beside& b : fused_beside) beside(b);
      for (const TensorCollective& c : fused) tensor_collective(steps, group_of(c), c);
      if (sync_now)
        for (std::size_t k = n; k-- > 0;) add_gradients(units[k]);
      for (std::size_t k = n; k-- > 0;) add_expert_gradients(units[k]);
      flush();
      flush_experts();
      return;
    }
    mark(false); // the pass's start
    if (zero3) gather(units[forward ? 0 : n - 1]);
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t index = forward ? k : n - 1 - k; // in forward order: the embedding first on chunk 0
      const Unit& unit = units[index];
      if (gathers) wait_for_gather((*gathers)[k]);
      if (zero3) {
        // Wait for this unit's parameters, then prefetch the next unit's (and reduce the previous unit's gradients)
        // while it computes.
        steps.emplace_back(StreamSyncStep{});
        if (sync_now && k > 0) steps.emplace_back(gradient_collective(unit_gradient_bytes(units[n - k]), data_group));
        if (k + 1 < n) gather(units[forward ? k + 1 : n - 2 - k]);
      }
      for (const Action& action : forward ? unit.forward : unit.backward) {
        if (const auto* seconds = std::get_if<double>(&action))
          compute(*seconds);
        else if (const auto* work = std::get_if<ExpertWork>(&action)) {
          const std::uint64_t bytes = expert_gather(*work);
          if (bytes > 0) tensor_collective(steps, tensor_group, {CollectiveOp::AllGather, bytes});
          compute(expert_time(*work));
          if (bytes > 0) tensor_collective(steps, tensor_group, {CollectiveOp::ReduceScatter, bytes});
        } else if (const auto* hop = std::get_if<RingHop>(&action))
          ring_hop(steps, at, *hop);
        else if (const auto* b = std::get_if<Beside>(&action))
          beside(*b);
        else
          tensor_collective(steps, group_of(std::get<TensorCollective>(action)), std::get<TensorCollective>(action));
      }
      mark(!(vs == 0 && index == 0) && !(vs == chunks_ - 1 && index == n - 1)); // the embedding and head are not layers
      if (sync_now && !zero3) add_gradients(unit);
      add_expert_gradients(unit);
    }
    if (zero3 && sync_now) steps.emplace_back(gradient_collective(unit_gradient_bytes(units[0]), data_group));
    flush();
    flush_experts();
  }

  /** A hop of the context ring: to the next rank of the context group, or from the previous one. */
  void ring_hop(std::vector<Step>& steps, const ParallelCoordinates& at, const RingHop& hop) const {
    const int c = mp_.context;
    if (hop.send)
      steps.emplace_back(SendStep{rank_of(mp_, {at.data, at.tensor, at.pipeline, (at.context + 1) % c}), hop.bytes,
                                  hop.channel, CommKind::Context});
    else
      steps.emplace_back(RecvStep{rank_of(mp_, {at.data, at.tensor, at.pipeline, (at.context + c - 1) % c}),
                                  hop.channel, CommKind::Context});
  }

  void program(Plan& plan, int rank) {
    const ParallelCoordinates at = coordinates_of(mp_, rank);
    std::vector<Step>& steps = plan.ranks[static_cast<std::size_t>(rank)].own_steps;
    std::vector<CollectiveStep> deferred;   // data-parallel collectives after the pipeline (no overlap)
    std::vector<CollectiveStep> final_sync; // the gathers back of the last micro-batch's gradient collectives
    auto stage_rank = [&](int vs) { return rank_of(mp_, {at.data, at.tensor, vs % mp_.pipeline, at.context}); };
    // The step's gathers of the previous iteration, overlapping this one's first forward pass (every iteration is
    // the same program, so each one starts with the gathers of the step before it).
    queue_param_gathers(steps, at);
    for (const PipelineOp& op : schedules_[static_cast<std::size_t>(at.pipeline)]) {
      const int vs = op.chunk * mp_.pipeline + at.pipeline;
      if (op.pass == Pass::Forward) {
        if (vs > 0) steps.emplace_back(RecvStep{stage_rank(vs - 1), 0, CommKind::Pipeline});
        // The first stage reads the micro-batch's tokens, the last its labels (Megatron-LM's get_batch).
        if (training_.data_loading > 0 && (vs == 0 || vs == chunks_ - 1))
          steps.emplace_back(HostStep{training_.data_loading});
        pass(plan, steps, deferred, final_sync, at, op, vs);
        if (vs < chunks_ - 1) steps.emplace_back(SendStep{stage_rank(vs + 1), transfer_bytes_, 0, CommKind::Pipeline});
      } else {
        if (vs < chunks_ - 1) steps.emplace_back(RecvStep{stage_rank(vs + 1), 1, CommKind::Pipeline});
        pass(plan, steps, deferred, final_sync, at, op, vs);
        if (vs > 0) steps.emplace_back(SendStep{stage_rank(vs - 1), transfer_bytes_, 1, CommKind::Pipeline});
      }
    }
    const bool synced = !data_group_.empty();
    if (synced && mp_.gradient_sync.overlap) steps.emplace_back(StreamSyncStep{});
    for (const CollectiveStep& step : deferred) steps.emplace_back(step);
    // Tied embeddings: the first and last stage sum their token table gradients once per iteration, after the
    // data-parallel synchronisation (Megatron-LM's finalize_model_grads).
    if (tied_copy() && (at.pipeline == 0 || at.pipeline == mp_.pipeline - 1)) {
      const int group = embedding_group_.at({data_rank(at), at.tensor});
      steps.emplace_back(
          collective(CollectiveOp::AllReduce, embedding_sync_bytes(), group,
                     CollectiveChoice{std::nullopt, mp_.gradient_sync.collective.fidelity, std::nullopt, std::nullopt},
                     CommKind::Data, 0));
    }
    // The optimizer step over this rank's share of the stage's parameters (sharded over the replicas under ZeRO).
    double parameters = 0.0;
    double experts = 0.0;
    for (int c = 0; c < mp_.virtual_stages; ++c)
      for (const Unit& u : units_[static_cast<std::size_t>(c * mp_.pipeline + at.pipeline)]) {
        parameters += u.parameters;
        experts += u.expert_parameters;
      }
    const bool experts_synced = !expert_data_group_.empty();
    const double share = parameters / parameters_ / (mp_.zero >= 1 && synced ? mp_.data_ranks() : 1) +
                         experts / parameters_ / (mp_.zero >= 1 && experts_synced ? mp_.data_ranks() / mp_.expert : 1);
    steps.emplace_back(ComputeStep{cost_.optimizer_time * share * peak_, 0, 0});
    // ZeRO-1/2: every replica gathers the parameters the others updated (one all-gather per reduce-scatter of one
    // micro-batch's gradients), in the data type (see gather_back), where the reduction moved gradients in theirs. The
    // routed experts' parameters (on their expert-data groups) are gathered after the step too, never overlapped with
    // the next forward.
    if (synced && (mp_.zero == 1 || mp_.zero == 2) && !gathers_overlapped())
      for (const CollectiveStep& g : final_sync) steps.emplace_back(g);
    if (mp_.zero == 1 || mp_.zero == 2)
      for (const CollectiveStep& g : expert_final_sync_) steps.emplace_back(g);
    expert_final_sync_.clear();
  }

  void fill_figures(Plan& plan) {
    const TrainingCost& cost = cost_;
    const double batch = static_cast<double>(training_.global_batch);
    plan.iterations = training_.iterations;
    plan.pipeline_stages = mp_.pipeline;
    plan.expert_parallel = moe() && mp_.expert > 1;
    plan.context_parallel = mp_.context > 1;
    if (plan.expert_parallel) {
      plan.expert_routing = routing_;
      plan.all_to_all_skews = skews_;
    }
    for (int s = 0; s < mp_.pipeline; ++s)
      plan.stage_memory.push_back(model_parallel_memory(training_, mp_, cluster_.gpu, s));
    plan.memory = model_parallel_peak_memory(training_, mp_, cluster_.gpu);
    plan.model_flops_per_iteration = cost.model_flops_per_sample * batch;
    plan.hardware_flops_per_iteration = cost.hardware_flops_per_sample * batch;
    plan.tokens_per_iteration = cost.tokens_per_sample * batch;
    plan.samples_per_iteration = static_cast<std::uint64_t>(training_.global_batch);
    const double step = cost.forward_time() + cost.backward_time();
    plan.sample_time = step / static_cast<double>(training_.micro_batch);
    set_training_baseline(plan, training_, step, cost.optimizer_time, peak_);
    std::string sync = "no gradient sync";
    if (!data_group_.empty()) {
      const CollectiveStep probe = gradient_collective(1, data_group_.begin()->second);
      sync = fmt::format("{} {} / {}{}", mp_.zero > 0 ? fmt::format("ZeRO-{}", mp_.zero) : std::string("gradient"),
                         to_string(probe.op), to_string(probe.algorithm),
                         !mp_.gradient_sync.overlap ? ""
                         : mp_.zero >= 2            ? " overlapping every backward" // into the shard, per micro-batch
                                                    : " overlapping the last backward");
    }
    plan.summary = fmt::format(
        "model_parallel training of {} on {} GPUs: data {} x tensor {}{}{} x pipeline {} ({} schedule{}, "
        "{} micro-batches of {} per replica), placement {}/{}/{}, {} recomputation, {}",
        training_.model.name, mp_.gpus(), mp_.data, mp_.tensor,
        mp_.tp_comm_overlap ? " (sequence parallel, communication overlapped with the GEMMs)"
        : mp_.tp_async_backward && mp_.sequence_parallel
            ? " (sequence parallel, the backward's gathers and reduce-scatters beside the GEMMs)"
        : mp_.sequence_parallel ? " (sequence parallel)"
        : mp_.tp_async_backward ? " (the backward's all-reduces beside the weight-gradient GEMMs)"
                                : "",
        mp_.context > 1
            ? fmt::format(" x context {} ({} exchange of keys and values)", mp_.context, to_string(mp_.context_comm))
            : std::string(),
        mp_.pipeline, to_string(mp_.schedule),
        mp_.virtual_stages > 1
            ? fmt::format(", {} virtual stages{}", mp_.virtual_stages,
                          mp_.microbatch_group > 0
                              ? fmt::format(", micro-batches through each chunk in groups of {}", mp_.microbatch_group)
                              : std::string())
            : std::string(),
        micro_batches_, training_.micro_batch, to_string(mp_.placement[0]), to_string(mp_.placement[1]),
        to_string(mp_.placement[2]), describe_recomputation(training_), sync);
    if (tied_copy()) plan.summary += ", tied embedding gradients all-reduced between the first and last stage";
    if (moe()) {
      const ExpertConfig& x = model_.config().experts;
      double busiest = 0.0;
      double dropped = 0.0;
      for (const LayerRouting& r : routing_) {
        busiest += r.max_load() / r.mean_load();
        dropped += r.dropped;
      }
      const auto layers = static_cast<double>(routing_.size());
      plan.summary += fmt::format(
          ", {} routed experts (top-{}{}) over expert groups of {} ({} each{}), {} routing: the "
          "busiest expert rank takes {:.3g}x the mean on average over the layers",
          x.count, x.top_k, x.shared > 0 ? fmt::format(", {} shared", x.shared) : std::string(), mp_.expert,
          x.count / mp_.expert,
          mp_.expert_tensor > 1 ? fmt::format(", split over {} tensor ranks", mp_.expert_tensor) : std::string(),
          to_string(training_.expert_routing.distribution), busiest / layers);
      if (two_hop()) {
        double share = 0.0;
        for (const double d : node_share_) share += d / static_cast<double>(node_share_.size());
        plan.summary += fmt::format(
            ", two-hop dispatch{}: {:.3g} of the copies for another node cross the network",
            x.groups > 1 ? fmt::format(" (each token within {} of {} expert groups)", x.groups_per_token, x.groups)
                         : std::string(),
            share);
      }
      if (training_.expert_routing.capacity_factor)
        plan.summary += fmt::format(", capacity factor {:g} drops {:.3g}% of the copies",
                                    *training_.expert_routing.capacity_factor, 100.0 * dropped / layers);
    }
    plan.summary += "; " + describe_stack(training_, cluster_.gpu);
    plan.summary += "; " + describe_data_loading(training_);
    collectives_.set_stream_contention(plan, cluster_.gpu, mp_.gradient_sync);
  }

  std::string source_;     ///< the scenario's file, named in errors
  std::uint64_t seed_ = 1; ///< the scenario's, for the experts' routing
  const ClusterSpec& cluster_;
  const ModelTraining& training_;
  const ModelParallel& mp_;
  TransformerModel model_;
  std::vector<bool> recomputed_; ///< per layer, with the block method: reruns its forward (block_recomputed_layers)
  TrainingCost cost_;
  PlanCollectives collectives_; ///< group shapes, `auto` choices, event counts
  double parameters_ = 0.0;     ///< the whole model's
  int micro_batches_ = 1;
  int chunks_ = 1;
  double element_ = 2.0;          ///< bytes of a weight or an activation
  double layer_element_ = 2.0;    ///< bytes of a layer's parameter as ZeRO gathers it (1 with fp8_param_gather)
  double gradient_element_ = 2.0; ///< bytes of a gradient
  double peak_ = 1.0;
  std::uint64_t tensor_bytes_ = 0;
  std::uint64_t layer_gather_bytes_ = 0; ///< a layer's tensor all-gather: tensor_bytes_, 1 byte an element under FP8
  /** Before each fp8 quantization of a sequence-parallel tensor under current scaling, the all-reduce of its absolute
   * maximum over the tensor group; empty otherwise. */
  std::vector<Action> amax_reduction_;
  std::uint64_t transfer_bytes_ = 0;
  std::vector<std::vector<Unit>> units_;            ///< per virtual stage, in forward order
  std::map<std::pair<int, int>, int> tensor_group_; ///< (data rank d·C + c, pipeline) -> group
  std::map<std::pair<int, int>, int> data_group_;   ///< (tensor, pipeline) -> group
  std::map<std::pair<int, int>, int>
      embedding_group_; ///< (data rank, tensor) -> first and last stage (tied embeddings)
  std::map<std::tuple<int, int, int>, int> context_group_; ///< (data, tensor, pipeline) -> group (all-gather exchange)
  std::map<std::tuple<int, int, int>, int> expert_group_;  ///< (tensor, pipeline, data / expert) -> group
  std::map<std::tuple<int, int, int>, int> expert_data_group_; ///< (tensor, pipeline, data % expert) -> group
  std::vector<LayerRouting> routing_;                          ///< per layer (mixture of experts)
  std::vector<AllToAllSkew> skews_;                            ///< skewed (or two-hop) layers' dispatch and combine
  std::map<std::int32_t, std::int32_t> layer_skew_; ///< skewed (or two-hop) layer -> 1 + its dispatch's index in skews_
  std::vector<double> node_share_; ///< two-hop: by node of an expert group, the copies' share that crosses the network
  /** Per layer, per position in the expert group: the routed experts' forward and backward time (s). */
  std::vector<std::vector<std::pair<double, double>>> expert_times_;
  /** Per layer, per position: with expert tensor parallelism the bytes of the copies the tensor group gathers for
   * its experts (and reduce-scatters back); 0 without. */
  std::vector<std::vector<std::uint64_t>> expert_gathers_;
  std::vector<CollectiveStep> expert_final_sync_;  ///< the rank being planned: its experts' gathers back
  std::vector<std::vector<PipelineOp>> schedules_; ///< per pipeline stage
  std::vector<std::uint32_t> labels_;              ///< per (pass, micro-batch, chunk); 0 until named
  /** The rank being planned: per virtual stage, per unit, the parameter gathers its first forward pass lets stay
   * pending before the unit (-1: no wait); empty per stage without overlapped gathers. */
  std::vector<std::vector<std::int64_t>> param_waits_;
  std::vector<int> like_; ///< per rank: the rank whose program it runs relabeled, -1: its own (share_programs)
};

} // namespace

Plan plan_model_parallel(const Scenario& scenario, const ModelTraining& training, const ModelParallel& mp,
                         bool share_programs) {
  Planner planner(scenario, training, mp);
  Plan plan;
  planner.prepare(plan, share_programs);
  // Programs grow with the micro-batches: refuse an oversized run before building them.
  const auto estimate = planner.estimate();
  check_event_budget(scenario, estimate.executions, "executions (before counting its messages)");
  check_plan_size(scenario, estimate.steps);
  return planner.plan(std::move(plan));
}

TensorSplit layer_split(const ModelParallel& mp) {
  TensorSplit split{mp.tensor, mp.sequence_parallel, mp.expert};
  split.expert_tensor = mp.expert_tensor;
  split.context = mp.context;
  split.expert_sort = mp.expert > 1 && mp.expert_dispatch == ExpertDispatch::Direct;
  return split;
}

} // namespace partsim
