// Per-GPU memory of model-parallel training under tensor, pipeline and ZeRO sharding.
#include "partsim/plan/sharded_memory.hpp"

#include "partsim/common/error.hpp"
#include "partsim/model/training.hpp"
#include "partsim/model/transformer.hpp"
#include "partsim/plan/pipeline_schedule.hpp"
#include "partsim/plan/placement.hpp"

#include <algorithm>
#include <numeric>

namespace partsim {

namespace {

/** The layers of pipeline stage `stage`: (first layer, count) of each of its chunks. */
std::vector<std::pair<int, int>> stage_chunks(const TransformerModel& model, const ModelParallel& mp, int stage) {
  const std::vector<int> layers = virtual_stage_layers(mp, model.config().layers);
  std::vector<std::pair<int, int>> chunks;
  for (int c = 0; c < mp.virtual_stages; ++c) {
    const auto chunk = static_cast<std::size_t>(c * mp.pipeline + stage);
    const int first = std::accumulate(layers.begin(), layers.begin() + static_cast<std::ptrdiff_t>(chunk), 0);
    chunks.emplace_back(first, layers[chunk]);
  }
  return chunks;
}

/** Parameters one tensor rank of pipeline stage `stage` holds (before ZeRO sharding), the stage's layer count and
 * how many of them have the mixture of experts. */
struct StageParameters {
  double parameters = 0.0;
  double layer_parameters = 0.0; ///< of `parameters`, the layers' (without the embedding and the head)
  int layers = 0;
  std::int64_t moe_layers = 0;
};
StageParameters stage_parameters(const TransformerModel& model, const ModelParallel& mp, int stage) {
  StageParameters out;
  for (const auto& [first, count] : stage_chunks(model, mp, stage)) {
    out.layers += count;
    out.moe_layers += model.moe_layers(first, count);
    out.parameters += model.layers_parameters(first, count, mp.tensor);
  }
  out.layer_parameters = out.parameters;
  double& parameters = out.parameters;
  if (stage == 0) parameters += model.embedding_parameters(mp.tensor);
  if (stage == mp.pipeline - 1) {
    parameters += model.output_parameters(mp.tensor);
    // With tied embeddings the last stage keeps its own copy of the token table shard for the head (Megatron-LM).
    const TransformerConfig& c = model.config();
    if (mp.pipeline > 1 && c.tied_embeddings)
      parameters += static_cast<double>(model.vocab_shard(mp.tensor)) * static_cast<double>(c.hidden);
  }
  return out;
}

} // namespace

std::vector<bool> block_recomputed_layers(const ModelTraining& training, const ModelParallel& mp) {
  if (training.recomputation != Recomputation::Full || training.recompute_num_layers <= 0) return {};
  const std::vector<int> layers = virtual_stage_layers(mp, std::get<TransformerConfig>(training.model.config).layers);
  std::vector<bool> out;
  for (const int count : layers) // virtual stages in the model's order: each a chunk of one stage
    for (int l = 0; l < count; ++l) out.push_back(l < training.recompute_num_layers);
  return out;
}

double stage_expert_parameters(const ModelTraining& training, const ModelParallel& mp, int stage) {
  const TransformerModel model = training.transformer();
  return static_cast<double>(stage_parameters(model, mp, stage).moe_layers) *
         model.expert_parameters(mp.expert, mp.expert_tensor);
}

MemoryBreakdown model_parallel_memory(const ModelTraining& training, const ModelParallel& mp, const GpuProfile& gpu,
                                      int stage) {
  const TransformerModel model = training.transformer();
  const TransformerConfig& c = model.config();
  const double e = bytes_per_element(training.data_type);
  const double t = static_cast<double>(mp.tensor);
  const double d = static_cast<double>(mp.data_ranks()); // ZeRO shards over data x context ranks
  const StageParameters held = stage_parameters(model, mp, stage);
  const double all = held.parameters;
  // The routed experts: a rank holds experts / expert of each MoE layer's (each split over expert_tensor ranks),
  // sharded by ZeRO over the expert-data group (data / expert replicas of them) where the rest is sharded over all
  // data replicas.
  const auto moe_layers = static_cast<double>(held.moe_layers);
  const double experts = moe_layers * model.expert_parameters(mp.expert, mp.expert_tensor);
  const double local = all - moe_layers * model.expert_parameters();
  const double de = d / static_cast<double>(mp.expert);
  MemoryBreakdown m;
  m.parameters = local * e / (mp.zero >= 3 ? d : 1.0) + experts * e / (mp.zero >= 3 ? de : 1.0);
  // FP8 GEMMs: Transformer Engine keeps an fp8 copy of every layer weight, row-wise and column-wise (2 bytes per
  // parameter), cast once per iteration and reused by its micro-batches. With fp8_param_gather those fp8 tensors are
  // the weights themselves: 2 bytes in place of the data type's e + 2.
  if (training.kernels.fp8 != Fp8Recipe::None) {
    const double local_layers = held.layer_parameters - moe_layers * model.expert_parameters();
    const double weights = local_layers / (mp.zero >= 3 ? d : 1.0) + experts / (mp.zero >= 3 ? de : 1.0);
    m.parameters += (training.kernels.fp8_param_gather ? 2.0 - e : 2.0) * weights;
  }
  const double gradient = bytes_per_element(training.gradient_type());
  m.gradients = local * gradient / (mp.zero >= 2 ? d : 1.0) + experts * gradient / (mp.zero >= 2 ? de : 1.0);
  const double state = optimizer_bytes_per_parameter(training.optimizer, training.data_type);
  m.optimizer_states = local * state / (mp.zero >= 1 ? d : 1.0) + experts * state / (mp.zero >= 1 ? de : 1.0);
  m.workspace = training.workspace;
  m.capacity = gpu.memory_capacity.value;

  // One layer's activations for one micro-batch under tensor parallelism: the norms' and the first GEMMs' inputs
  // (and the dropout masks) stay whole on every tensor rank unless sequence parallelism splits them.
  const std::int64_t b = training.micro_batch;
  const double tokens = static_cast<double>(b) * static_cast<double>(c.sequence_length);
  const double h = static_cast<double>(c.hidden);
  const TransformerModel dense = model.dense_model();
  const std::vector<std::pair<int, int>> chunks = stage_chunks(model, mp, stage);
  // On a tensor rank: of a layer's `total` bytes, `sequence` are what sequence parallelism splits (all of them under
  // full recomputation: the layer's input); the rest is split by the tensor degree.
  auto on_rank = [&](double total, double sequence, Recomputation recomputation) {
    const double whole = recomputation == Recomputation::Full ? total : sequence;
    return (total - whole) / t + (mp.sequence_parallel ? whole / t : whole);
  };
  const int micro_batches = static_cast<int>(training.global_batch / (training.micro_batch * mp.data));
  const std::vector<PipelineOp> schedule =
      pipeline_schedule(mp.schedule, mp.pipeline, stage, micro_batches, mp.virtual_stages, mp.microbatch_group);
  // Megatron-Core's block method: each chunk's first recompute_num_layers layers keep their input only, the others
  // all their activations.
  const std::int64_t block =
      training.recomputation == Recomputation::Full ? std::max<std::int64_t>(training.recompute_num_layers, 0) : 0;
  // Expert tensor parallelism: the experts' first GEMMs keep their gathered input, the copies of the whole tensor
  // group (expert_tensor x the rank's, k·tokens·h / T each), where their intermediates (expert_tensor x the rows,
  // 1/expert_tensor of the width) and outputs weigh what they would whole: per MoE layer that keeps its activations
  // (not a recomputed one).
  const double gathered = mp.expert_tensor > 1 ? static_cast<double>(c.experts.top_k) * e * tokens * h *
                                                     static_cast<double>(mp.expert_tensor - 1) / t
                                               : 0.0;
  // One micro-batch's bytes in each chunk of the stage, on a tensor rank.
  auto bytes_of = [&](int from, int n, Recomputation r) {
    if (n <= 0) return 0.0;
    const std::int64_t moe = model.moe_layers(from, n);
    const double sequence = static_cast<double>(moe) * model.layer_sequence_bytes(b, r, e) +
                            static_cast<double>(n - moe) * dense.layer_sequence_bytes(b, r, e);
    const double kept = r == Recomputation::Full ? 0.0 : static_cast<double>(moe) * gathered;
    return on_rank(model.layers_activation_bytes(from, n, b, r, e), sequence, r) + kept;
  };
  std::vector<double> chunk_bytes;
  chunk_bytes.reserve(chunks.size());
  for (const auto& [first, count] : chunks) {
    const auto rerun = static_cast<int>(std::min<std::int64_t>(block, count));
    chunk_bytes.push_back(block > 0 ? bytes_of(first, rerun, Recomputation::Full) +
                                          bytes_of(first + rerun, count - rerun, Recomputation::None)
                                    : bytes_of(first, count, training.recomputation));
  }
  // The peak over the schedule of the bytes of the chunk passes in flight: the peak number of passes times one chunk
  // where the chunks weigh the same; where they do not (an embedding-only first chunk or a loss-only last one, dense
  // layers before the experts) it need not come with the most passes in flight.
  double live = 0.0;
  for (const PipelineOp& op : schedule) {
    live += (op.pass == Pass::Forward ? 1.0 : -1.0) * chunk_bytes[static_cast<std::size_t>(op.chunk)];
    m.activations = std::max(m.activations, live);
  }
  // Under full recomputation (and torchtitan's per-op policy) one layer at a time rebuilds all its activations: the
  // stage's largest, with the largest part sequence parallelism splits of the stage's layer kinds (dense, MoE).
  if (training.recomputation == Recomputation::Full || training.kernels.recompute_modules.torchtitan_op) {
    double largest = 0.0;
    double sequence = 0.0;
    for (const auto& [first, count] : chunks) {
      const std::int64_t moe = model.moe_layers(first, count);
      largest = std::max(largest, model.largest_layer_activation_bytes(first, count, b, Recomputation::None, e));
      sequence = std::max({sequence, moe > 0 ? model.layer_sequence_bytes(b, Recomputation::None, e) : 0.0,
                           count > moe ? dense.layer_sequence_bytes(b, Recomputation::None, e) : 0.0});
    }
    m.activations += on_rank(largest, sequence, Recomputation::None);
  }
  if (stage == mp.pipeline - 1) {
    // The head's fp32 logits (4·s·b·V) are split by vocabulary shard; its input (and the embedding's dropout mask,
    // counted here as outer_activation_bytes does) stay whole unless sequence parallelism splits them.
    const double logits = 4.0 * tokens * static_cast<double>(c.vocab);
    const double rest = model.outer_activation_bytes(b, e) - logits;
    const double shard = tokens * static_cast<double>(model.vocab_shard(mp.tensor));
    m.activations += 4.0 * shard + (mp.sequence_parallel ? rest / t : rest);
    // The loss runs at the stage's peak in flight: on the last stage each forward of the last chunk (under 1F1B every
    // forward; interleaved, the first one after the warm-up) is followed by that micro-batch's backward, so the
    // cross-entropy's transient copies of the rank's logits add to the peak.
    m.activations += cross_entropy_transient_bytes(training.kernels.cross_entropy, shard, e);
  }
  // Context parallelism: every activation belongs to one of the rank's s/C tokens (the attention's softmax statistics
  // too: per query), so all of them fall as 1/C. Keys and values from the other ranks are transient: the all-gather
  // mode holds one layer's gathered K and V (and their gradients backward), the ring two blocks in flight.
  if (mp.context > 1) {
    const double cp = static_cast<double>(mp.context);
    m.activations /= cp;
    const double kv = e * static_cast<double>(b) * static_cast<double>(c.sequence_length) *
                      static_cast<double>(c.kv_heads / mp.tensor * (c.head_dim + model.value_dim()));
    // all_to_all: the all-to-all's send and receive buffers of the rank's queries, keys and values.
    const double qkv = e * static_cast<double>(b) * static_cast<double>(c.sequence_length) / cp *
                       static_cast<double>(c.heads / mp.tensor * c.head_dim +
                                           c.kv_heads / mp.tensor * (c.head_dim + model.value_dim()));
    m.workspace += mp.context_comm == ContextComm::AllGather  ? 2.0 * kv
                   : mp.context_comm == ContextComm::AllToAll ? 2.0 * qkv
                                                              : 2.0 * kv / cp;
  }
  return m;
}

MemoryBreakdown model_parallel_peak_memory(const ModelTraining& training, const ModelParallel& mp,
                                           const GpuProfile& gpu, int* stage) {
  MemoryBreakdown peak;
  for (int s = 0; s < mp.pipeline; ++s) {
    const MemoryBreakdown m = model_parallel_memory(training, mp, gpu, s);
    if (s == 0 || m.total() > peak.total()) {
      peak = m;
      if (stage != nullptr) *stage = s;
    }
  }
  return peak;
}

} // namespace partsim
