// One macro per library that checks a CUDA, CUPTI, cuBLAS or NCCL call and throws std::runtime_error naming the call
// and the library's own description of the result.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <cupti.h>

#include <stdexcept>
#include <string>

namespace partsim::calibrate::cuda {

[[noreturn]] inline void fail(const char* call, const std::string& what, const char* file, int line) {
  throw std::runtime_error(std::string(call) + " failed: " + what + " (" + file + ":" + std::to_string(line) + ")");
}

inline void check(cudaError_t result, const char* call, const char* file, int line) {
  if (result != cudaSuccess)
    fail(call, std::string(cudaGetErrorName(result)) + ": " + cudaGetErrorString(result), file, line);
}

inline void check(CUptiResult result, const char* call, const char* file, int line) {
  if (result == CUPTI_SUCCESS) return;
  const char* text = nullptr;
  cuptiGetResultString(result, &text);
  fail(call, std::string("CUPTI error ") + std::to_string(static_cast<int>(result)) + ": " + (text ? text : "?"), file,
       line);
}

inline void check(cublasStatus_t result, const char* call, const char* file, int line) {
  if (result != CUBLAS_STATUS_SUCCESS)
    fail(call, std::string(cublasLtGetStatusName(result)) + ": " + cublasLtGetStatusString(result), file, line);
}

} // namespace partsim::calibrate::cuda

/** CUDA_CHECK(cudaMalloc(&p, n)); throws std::runtime_error "cudaMalloc(&p, n) failed: cudaErrorMemoryAllocation: ..."
 */
#define CUDA_CHECK(call) ::partsim::calibrate::cuda::check((call), #call, __FILE__, __LINE__)
/** CUPTI_CHECK(cuptiActivityEnable(kind)); the message carries cuptiGetResultString. */
#define CUPTI_CHECK(call) ::partsim::calibrate::cuda::check((call), #call, __FILE__, __LINE__)
/** CUBLAS_CHECK(cublasLtMatmul(...)); the message carries cublasLtGetStatusString. */
#define CUBLAS_CHECK(call) ::partsim::calibrate::cuda::check((call), #call, __FILE__, __LINE__)
