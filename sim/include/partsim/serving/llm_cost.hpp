// The LLM serving stage's cost model: prefill and decode step times, the KV cache's size per token and its capacity,
// on one replica of `tensor_parallel` GPUs of a profile. Pure arithmetic over the transformer model and the op cost
// model (docs/serving.md#llm-serving-stage).
#pragma once

#include "partsim/input/hardware.hpp"
#include "partsim/model/collective_cost.hpp"
#include "partsim/model/transformer.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace partsim {

/** One LLM server replica: a transformer split over `tensor` GPUs of one node (Megatron-style tensor parallelism,
 * TensorSplit), its weights and KV cache in `data_type`. Every figure is per GPU of the replica unless said.
 *
 * A mixture of experts is served as vLLM's fused MoE runs it by default: every expert's (routed and shared) inner
 * width split over the tensor ranks like the dense MLP, every rank routing all of the step's tokens; a decode step of
 * `batch` tokens reads the weights of the experts its tokens go to, E x (1 - (1 - k/E)^batch) of each layer's E on
 * average under uniform routing (k at batch 1, nearly all of them at large batches). */
class LlmReplicaCost {
 public:
  /** `links`: the cluster's links (two_level_cost), for the tensor-parallel all-reduces inside the node (2 per layer,
   * the algorithm and NCCL protocol `auto` picks).
   * Checks (a broken invariant aborts) that `tensor` divides heads, kv_heads and ffn_size and that the profile has
   * a peak rate for `data_type`. */
  LlmReplicaCost(const TransformerConfig& model, const GpuProfile& gpu, std::string data_type, int tensor,
                 const TwoLevelCost& links, double workspace_fraction);

  double bytes_per_element() const { return element_; }
  /** Bytes of the weights one GPU holds: layers x layer_parameters + embedding + output, at the data type. */
  double weight_bytes() const { return weight_bytes_; }
  /** Bytes of weights one decode step reads besides a mixture's routed experts: every layer's and the LM head's (the
   * embedding table's rows read are negligible; a tied LM head reads the table). */
  double weight_bytes_read() const { return weight_read_bytes_; }
  /** A mixture of experts: the routed experts' weights a decode step of `batch` tokens reads on one GPU, over all
   * layers (see the class); 0 for a dense model. */
  double expert_bytes_read(std::int64_t batch) const;
  /** KV cache per token: 2 (K and V) x layers x kv_heads / tensor x head_dim x bytes per element. */
  double kv_bytes_per_token() const { return kv_per_token_; }
  /** Tokens the KV cache holds: floor((memory - weights - workspace_fraction x memory) / kv_bytes_per_token); 0 when
   * the weights and the workspace fill the GPU. */
  std::int64_t kv_capacity_tokens() const { return kv_capacity_; }

  /** One tensor-parallel all-reduce of `tokens` x hidden activations over `tensor` GPUs of one node, with the
   * algorithm and protocol NCCL's tuner would pick (choose_method; a decode step's few kilobytes run LL) and its
   * closed form with the protocol's latency (collective_time); 0 without tensor parallelism. */
  double all_reduce_time(std::int64_t tokens) const;

  /** Prefill of prompts of these lengths together in one step: the forward pass by the op cost model (op_time of
   * TransformerModel::layer_ops on this GPU's split): every op but the attention core over all the prompts' tokens as
   * one sequence (their GEMMs have M = total tokens), the attention core of each prompt over its own length; x layers;
   * plus 2 all-reduces per layer, plus the final norm and LM head over each prompt's last token (outer_ops without
   * the loss; the first output token). */
  double prefill_time(const std::vector<std::int64_t>& prompts) const;

  /** A piece of a prompt's prefill in one step: `tokens` tokens after the `done` already in the KV cache; `last`
   * when it ends the prompt (the step then produces the request's next token). */
  struct PrefillChunk {
    std::int64_t done = 0;
    std::int64_t tokens = 0;
    bool last = true;
  };

  /** A step of chunked prefill: prefill chunks and `decodes` decoding requests (their KV caches holding
   * `decode_context` tokens in all) in one pass (vLLM's chunked prefill, Sarathi). Per layer: every op but the
   * attention core once over all the step's tokens (chunks + one per decode; GEMMs of M = those tokens), the attention
   * core of each chunk as attention(done + tokens) - attention(done) (the rows of a causal attention over the prompt
   * that the chunk adds), 2 all-reduces of all the tokens; x layers; plus the decodes' attention, which reads their KV
   * caches (kv_bytes_per_token x decode_context at the achieved memory bandwidth: memory bound), plus the final norm
   * and LM head over the chunks that end a prompt and the decodes. One unchunked prompt and no decode: prefill_time. */
  double chunked_step_time(const std::vector<PrefillChunk>& chunks, std::int64_t decodes, double decode_context) const;

  /** The attention core of one layer over a causal sequence of `tokens` (op_time of the layer's attention op). */
  double attention_core_time(std::int64_t tokens) const;
  /** One layer's ops but the attention core over `tokens` tokens (M = tokens). */
  double layer_gemm_time(std::int64_t tokens) const;
  /** The final norm and LM head over `sequences` tokens, one per sequence (outer_ops without the loss). */
  double head_time(std::int64_t sequences) const;

  /** The weight products' flops of a decode step of `batch` requests: 2 x batch x the matrix parameters a token goes
   * through (layers and LM head; of a mixture of experts, k of each layer's routed experts). */
  double decode_weight_flops(std::int64_t batch) const;
  /** The attention's flops of a decode step whose KV caches hold `context` tokens in all: 4 x layers x heads / tensor
   * x head_dim x context (scores and values). */
  double decode_attention_flops(double context) const;
  /** Bytes a decode step of `batch` tokens reads: weight_bytes_read() + expert_bytes_read(batch) +
   * kv_bytes_per_token() x context. */
  double decode_bytes(std::int64_t batch, double context) const;
  /** The rate of a decode step's products: peak(data_type) x gemm_efficiency of the MLP up projection at M = batch
   * (M = batch, N = ffn / tensor, K = hidden). */
  double decode_rate(std::int64_t batch) const;
  /** One decode step: max(decode_bytes / achieved memory bandwidth, decode_weight_flops / decode_rate +
   * decode_attention_flops / peak) + 2 x layers all-reduces of `batch` tokens. The attention's flops at the dense
   * peak, not at decode_rate: a measured table's few-row GEMM rate holds its weight reads' time (a GEMV is memory
   * bound), which the attention's flops at that rate would count again. No launch overhead: servers replay decode
   * steps as CUDA graphs. */
  double decode_step_time(std::int64_t batch, double context) const;

 private:
  TransformerConfig model_;
  GpuProfile gpu_; ///< a copy: the cost outlives the scenario it came from
  std::string data_type_;
  int tensor_;
  TwoLevelCost links_;
  double element_ = 2.0;
  double weight_bytes_ = 0.0;
  double weight_read_bytes_ = 0.0;
  double matrix_parameters_ = 0.0;
  double kv_per_token_ = 0.0;
  std::int64_t kv_capacity_ = 0;
  double expert_bytes_ = 0.0; ///< one routed expert's weights on one GPU, in one layer

  /** One layer's ops over `tokens` tokens on one GPU of the replica (a mixture's experts split by the tensor ranks). */
  std::vector<ComputeOp> layer_ops(std::int64_t tokens) const;
};

} // namespace partsim
