// cuBLASLt descriptors, heuristics and random inputs per data type.
#include "gemm_runner.hpp"

#include "kernels.cuh"

#include <algorithm>
#include <stdexcept>

namespace partsim::calibrate::cuda {

namespace {

struct TypeInfo {
  cudaDataType_t input;
  cudaDataType_t output;
  cublasComputeType_t compute;
  kernels::Element element;
  std::size_t input_bytes;
  std::size_t output_bytes;
};

TypeInfo type_info(const std::string& t) {
  if (t == "bf16") return {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, kernels::Element::BF16, 2, 2};
  if (t == "fp16") return {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, kernels::Element::F16, 2, 2};
  if (t == "tf32") return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, kernels::Element::F32, 4, 4};
  if (t == "fp32") return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, kernels::Element::F32, 4, 4};
  if (t == "fp8") return {CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, kernels::Element::FP8_E4M3, 1, 2};
  throw std::invalid_argument("no cuBLASLt GEMM for data type \"" + t + "\"");
}

constexpr std::size_t kWorkspaceBytes = 64 << 20; // cuBLAS recommends 32 MiB on Hopper; room for split-K
constexpr std::uint64_t kSeedA = 0xA11CE, kSeedB = 0xB0B;

} // namespace

GemmRunner::GemmRunner(std::int64_t max_m, std::int64_t max_n, std::int64_t max_k, cudaStream_t stream)
    : stream_(stream), workspace_bytes_(kWorkspaceBytes), max_a_(max_m * max_k), max_b_(max_k * max_n),
      max_d_(max_m * max_n) {
  CUBLAS_CHECK(cublasLtCreate(&handle_));
  a_ = device_alloc(static_cast<std::size_t>(max_a_) * 4);
  b_ = device_alloc(static_cast<std::size_t>(max_b_) * 4);
  d_ = device_alloc(static_cast<std::size_t>(max_d_) * 4);
  workspace_ = device_alloc(workspace_bytes_);
}

GemmRunner::~GemmRunner() {
  release_descriptors();
  if (handle_ != nullptr) cublasLtDestroy(handle_);
}

std::vector<std::string> GemmRunner::data_types(int major, int minor) {
  std::vector<std::string> types{"bf16", "fp16", "tf32", "fp32"};
  if (major > 8 || (major == 8 && minor >= 9)) types.push_back("fp8");
  return types;
}

void GemmRunner::release_descriptors() {
  if (op_ != nullptr) cublasLtMatmulDescDestroy(op_);
  if (a_layout_ != nullptr) cublasLtMatrixLayoutDestroy(a_layout_);
  if (b_layout_ != nullptr) cublasLtMatrixLayoutDestroy(b_layout_);
  if (d_layout_ != nullptr) cublasLtMatrixLayoutDestroy(d_layout_);
  op_ = nullptr;
  a_layout_ = b_layout_ = d_layout_ = nullptr;
}

void GemmRunner::prepare(std::int64_t m, std::int64_t n, std::int64_t k, const std::string& data_type) {
  if (m * k > max_a_ || k * n > max_b_ || m * n > max_d_)
    throw std::invalid_argument("GEMM shape larger than the buffers allocated for the grid");
  const TypeInfo t = type_info(data_type);
  if (filled_type_ != data_type) {
    // Random inputs, never zeros: tensor cores draw less power (and may run faster) on zeros.
    CUDA_CHECK(kernels::fill_random(a_.get(), static_cast<std::size_t>(max_a_), t.element, kSeedA, stream_));
    CUDA_CHECK(kernels::fill_random(b_.get(), static_cast<std::size_t>(max_b_), t.element, kSeedB, stream_));
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    filled_type_ = data_type;
  }
  release_descriptors();
  CUBLAS_CHECK(cublasLtMatmulDescCreate(&op_, t.compute, CUDA_R_32F));
  const cublasOperation_t transpose = CUBLAS_OP_T, none = CUBLAS_OP_N;
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof(transpose)));
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &none, sizeof(none)));
  // Column major: A is stored k x m and transposed, B is k x n, D is m x n.
  const auto u = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&a_layout_, t.input, u(k), u(m), k));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&b_layout_, t.input, u(k), u(n), k));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&d_layout_, t.output, u(m), u(n), m));

  cublasLtMatmulPreference_t preference = nullptr;
  CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t status = [&] {
    const cublasStatus_t s = cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                                  &workspace_bytes_, sizeof(workspace_bytes_));
    if (s != CUBLAS_STATUS_SUCCESS) return s;
    return cublasLtMatmulAlgoGetHeuristic(handle_, op_, a_layout_, b_layout_, d_layout_, d_layout_, preference, 1,
                                          &result, &found);
  }();
  cublasLtMatmulPreferenceDestroy(preference);
  CUBLAS_CHECK(status);
  if (found == 0)
    throw std::runtime_error("cuBLASLt has no algorithm for " + data_type + " m=" + std::to_string(m) +
                             " n=" + std::to_string(n) + " k=" + std::to_string(k));
  algo_ = result.algo;
}

void GemmRunner::run() {
  CUBLAS_CHECK(cublasLtMatmul(handle_, op_, &alpha_, a_.get(), a_layout_, b_.get(), b_layout_, &beta_, d_.get(),
                              d_layout_, d_.get(), d_layout_, &algo_, workspace_.get(), workspace_bytes_, stream_));
}

} // namespace partsim::calibrate::cuda
