// Matrix products through cuBLASLt for each data type the calibrator measures: D[m,n] = A[m,k]·B[k,n] in the "TN"
// layout (A transposed, the layout FP8 requires, used for every type so that all are measured alike).
#pragma once

#include "device_buffers.hpp"

#include <cublasLt.h>

#include <cstdint>
#include <string>
#include <vector>

namespace partsim::calibrate::cuda {

class GemmRunner {
 public:
  /** Allocates inputs and output for products up to max_m x max_n x max_k on the current device. */
  GemmRunner(std::int64_t max_m, std::int64_t max_n, std::int64_t max_k, cudaStream_t stream);
  ~GemmRunner();
  GemmRunner(const GemmRunner&) = delete;
  GemmRunner& operator=(const GemmRunner&) = delete;

  /** Data types this GPU runs: bf16, fp16, tf32, fp32 everywhere; fp8 (E4M3 in, bf16 out) from compute
   * capability 8.9. */
  static std::vector<std::string> data_types(int major, int minor);

  /** Prepares a product (descriptors, the heuristic's first algorithm, random inputs when the type changes).
   * @throws std::runtime_error when cuBLASLt has no algorithm for it. */
  void prepare(std::int64_t m, std::int64_t n, std::int64_t k, const std::string& data_type);
  /** Enqueues the prepared product on the stream. */
  void run();

 private:
  void release_descriptors();

  cublasLtHandle_t handle_ = nullptr;
  cudaStream_t stream_ = nullptr;
  DevicePtr a_, b_, d_, workspace_;
  std::size_t workspace_bytes_ = 0;
  std::int64_t max_a_ = 0, max_b_ = 0, max_d_ = 0; // elements
  std::string filled_type_;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_layout_ = nullptr, b_layout_ = nullptr, d_layout_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  float alpha_ = 1.0f, beta_ = 0.0f;
};

} // namespace partsim::calibrate::cuda
