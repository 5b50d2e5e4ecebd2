// The LLM serving stage's prefill and decode prices and KV-cache sizes, from the transformer model and the op cost
// model.
#include "partsim/serving/llm_cost.hpp"

#include "partsim/common/error.hpp"
#include "partsim/model/cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace partsim {

LlmReplicaCost::LlmReplicaCost(const TransformerConfig& model, const GpuProfile& gpu, std::string data_type, int tensor,
                               const TwoLevelCost& links, double workspace_fraction)
    : model_(TransformerModel(model).config()), gpu_(gpu), data_type_(std::move(data_type)), tensor_(tensor),
      links_(links) {
  const DataTypeInfo* type = find_data_type(data_type_);
  PARTSIM_CHECK(type != nullptr && gpu.peak_flops.contains(data_type_)) << "no peak rate for " << data_type_;
  PARTSIM_CHECK(tensor_ >= 1 && model_.heads % tensor_ == 0 && model_.kv_heads % tensor_ == 0 &&
                model_.ffn % tensor_ == 0)
      << "tensor degree " << tensor_ << " does not divide the heads, kv_heads and ffn_size";
  const ExpertConfig& x = model_.experts;
  PARTSIM_CHECK(!x.moe() || x.shared_ffn_size(model_.ffn) % tensor_ == 0)
      << "tensor degree " << tensor_ << " does not divide the shared experts' width";
  element_ = type->element_bytes;
  const TransformerModel m(model_);
  const auto layers = static_cast<double>(model_.layers);
  const double head = static_cast<double>(m.vocab_shard(tensor_)) * static_cast<double>(model_.hidden);
  // A layer on one GPU: TransformerModel keeps experts whole on their rank; here they are split like the MLP.
  double layer = m.layer_parameters(tensor_);
  double routed = 0.0; // the routed experts' weights of a layer on one GPU
  if (x.moe()) {
    double shared = 0.0;
    for (const ComputeOp& op : m.layer_ops(1))
      if (op.name.starts_with("shared_expert_")) shared += op.weight_elements;
    routed = m.expert_parameters() / tensor_;
    layer += (routed + shared / tensor_) - (m.expert_parameters() + shared);
    expert_bytes_ = element_ * routed / static_cast<double>(x.count);
  }
  weight_bytes_ = element_ * (layers * layer + m.embedding_parameters(tensor_) + m.output_parameters(tensor_));
  weight_read_bytes_ =
      element_ * (layers * (layer - routed) + m.output_parameters(tensor_) + (model_.tied_embeddings ? head : 0.0));
  const double active = x.moe() ? routed * static_cast<double>(x.top_k) / static_cast<double>(x.count) : 0.0;
  matrix_parameters_ = layers * (layer - routed + active) + head;
  kv_per_token_ =
      2.0 * layers * static_cast<double>(model_.kv_heads / tensor_) * static_cast<double>(model_.head_dim) * element_;
  const double memory = gpu.memory_capacity.value;
  const double room = memory - weight_bytes_ - workspace_fraction * memory;
  kv_capacity_ = room > 0 ? static_cast<std::int64_t>(std::floor(room / kv_per_token_)) : 0;
}

double LlmReplicaCost::all_reduce_time(std::int64_t tokens) const {
  if (tensor_ < 2) return 0.0;
  const double bytes = static_cast<double>(tokens) * static_cast<double>(model_.hidden) * element_;
  const CollectiveMethod method = choose_method(CollectiveOp::AllReduce, tensor_, 1, bytes, links_);
  return collective_time(CollectiveOp::AllReduce, method.algorithm, method.protocol, bytes, tensor_, tensor_, 1,
                         links_);
}

std::vector<ComputeOp> LlmReplicaCost::layer_ops(std::int64_t tokens) const {
  TransformerConfig config = model_;
  config.sequence_length = tokens;
  std::vector<ComputeOp> ops = TransformerModel(config).layer_ops(1, TensorSplit{tensor_, false});
  if (!config.experts.moe() || tensor_ == 1) return ops;
  // The experts at 1 / tensor of their width (of every rank's copies: the rank routes all the tokens).
  auto expert = [](const ComputeOp& op) { return op.name.starts_with("shared_expert_") || is_routed_expert_op(op); };
  std::erase_if(ops, expert);
  config.ffn /= tensor_;
  config.experts.shared_ffn = config.experts.shared_ffn_size(model_.ffn) / tensor_;
  std::vector<ComputeOp> split = TransformerModel(config).layer_ops(1);
  std::erase_if(split, [&](const ComputeOp& op) { return !expert(op); });
  // Back in execution order: the routed experts after the permute, the shared ones after the unpermute.
  const auto permute =
      std::find_if(ops.begin(), ops.end(), [](const ComputeOp& op) { return op.name == "expert_permute"; });
  std::vector<ComputeOp> routed;
  std::vector<ComputeOp> shared;
  for (const ComputeOp& op : split) (op.name.starts_with("shared_") ? shared : routed).push_back(op);
  const auto at = ops.insert(permute + 1, routed.begin(), routed.end()) + static_cast<std::ptrdiff_t>(routed.size());
  ops.insert(at + 1, shared.begin(), shared.end());
  return ops;
}

double LlmReplicaCost::expert_bytes_read(std::int64_t batch) const {
  const ExpertConfig& x = model_.experts;
  if (!x.moe() || batch <= 0) return 0.0;
  const double e = static_cast<double>(x.count);
  const double touched = e * (1.0 - std::pow(1.0 - static_cast<double>(x.top_k) / e, static_cast<double>(batch)));
  return static_cast<double>(model_.layers) * touched * expert_bytes_;
}

double LlmReplicaCost::prefill_time(const std::vector<std::int64_t>& prompts) const {
  if (prompts.empty()) return 0.0;
  std::int64_t total = 0;
  for (std::int64_t n : prompts) total += n;
  TransformerConfig config = model_;
  double layer = 0.0;
  for (const ComputeOp& op : layer_ops(total))
    if (op.module != LayerModule::CoreAttention) layer += op_time(op, gpu_, data_type_, element_, false);
  for (std::int64_t n : prompts) {
    for (const ComputeOp& op : layer_ops(n))
      if (op.module == LayerModule::CoreAttention) layer += op_time(op, gpu_, data_type_, element_, false);
  }
  const TensorSplit split{tensor_, false};
  config.sequence_length = 1;
  double outer = 0.0;
  for (const ComputeOp& op : TransformerModel(config).outer_ops(static_cast<std::int64_t>(prompts.size()), split))
    if (op.kind != OpKind::Loss) outer += op_time(op, gpu_, data_type_, element_, false);
  const auto layers = static_cast<double>(model_.layers);
  return layers * (layer + 2.0 * all_reduce_time(total)) + outer;
}

double LlmReplicaCost::attention_core_time(std::int64_t tokens) const {
  if (tokens <= 0) return 0.0;
  double time = 0.0;
  for (const ComputeOp& op : layer_ops(tokens))
    if (op.module == LayerModule::CoreAttention) time += op_time(op, gpu_, data_type_, element_, false);
  return time;
}

double LlmReplicaCost::layer_gemm_time(std::int64_t tokens) const {
  if (tokens <= 0) return 0.0;
  double time = 0.0;
  for (const ComputeOp& op : layer_ops(tokens))
    if (op.module != LayerModule::CoreAttention) time += op_time(op, gpu_, data_type_, element_, false);
  return time;
}

double LlmReplicaCost::head_time(std::int64_t sequences) const {
  if (sequences <= 0) return 0.0;
  TransformerConfig config = model_;
  config.sequence_length = 1;
  double time = 0.0;
  for (const ComputeOp& op : TransformerModel(config).outer_ops(sequences, TensorSplit{tensor_, false}))
    if (op.kind != OpKind::Loss) time += op_time(op, gpu_, data_type_, element_, false);
  return time;
}

double LlmReplicaCost::chunked_step_time(const std::vector<PrefillChunk>& chunks, std::int64_t decodes,
                                         double decode_context) const {
  std::int64_t total = decodes;
  std::int64_t sequences = decodes;
  double attention = 0.0;
  for (const PrefillChunk& c : chunks) {
    total += c.tokens;
    if (c.last) ++sequences;
    attention += attention_core_time(c.done + c.tokens) - attention_core_time(c.done);
  }
  if (total == 0) return 0.0;
  const auto layers = static_cast<double>(model_.layers);
  const double kv_read = kv_per_token_ * decode_context / gpu_.achieved_memory_bandwidth();
  return layers * (layer_gemm_time(total) + attention + 2.0 * all_reduce_time(total)) + kv_read + head_time(sequences);
}

double LlmReplicaCost::decode_weight_flops(std::int64_t batch) const {
  return kFlopPerMultiplyAccumulate * static_cast<double>(batch) * matrix_parameters_;
}

double LlmReplicaCost::decode_attention_flops(double context) const {
  return 2.0 * kFlopPerMultiplyAccumulate * static_cast<double>(model_.layers) *
         static_cast<double>(model_.heads / tensor_) * static_cast<double>(model_.head_dim) * context;
}

double LlmReplicaCost::decode_bytes(std::int64_t batch, double context) const {
  return weight_read_bytes_ + expert_bytes_read(batch) + kv_per_token_ * context;
}

double LlmReplicaCost::decode_rate(std::int64_t batch) const {
  const GemmShape up{1, std::max<std::int64_t>(batch, 1), model_.ffn / tensor_, model_.hidden};
  return gpu_.peak(data_type_) * gemm_efficiency(gpu_, up, data_type_);
}

double LlmReplicaCost::decode_step_time(std::int64_t batch, double context) const {
  if (batch <= 0) return 0.0;
  const double memory = decode_bytes(batch, context) / gpu_.achieved_memory_bandwidth();
  // The weight products at the rate of a GEMM of `batch` rows; the attention's products at the dense peak, not at
  // that rate: a measured table's few-row GEMM rate holds the time its weight reads take (a GEMV is memory bound), and
  // the attention's flops at it would count those reads again (the caches' reads are in `memory`).
  const double compute =
      decode_weight_flops(batch) / decode_rate(batch) + decode_attention_flops(context) / gpu_.peak(data_type_);
  return std::max(memory, compute) + 2.0 * static_cast<double>(model_.layers) * all_reduce_time(batch);
}

} // namespace partsim
