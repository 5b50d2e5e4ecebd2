// The calibrator's own kernels (kernels.cu): random fills (never zeros), a streaming elementwise kernel and an empty
// kernel. Host launchers only, so C++ files need no CUDA compiler.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace partsim::calibrate::kernels {

/** Element types of the random fill. */
enum class Element { F32, F16, BF16, FP8_E4M3 };

/** Fills `count` elements with uniform values in [-1, -1/64] ∪ [1/64, 1] (never zero) from `seed`. */
cudaError_t fill_random(void* data, std::size_t count, Element type, std::uint64_t seed, cudaStream_t stream);

/** y[i] = a·x[i] + b over `count` floats (reads 4·count bytes, writes 4·count bytes). */
cudaError_t axpb(const float* x, float* y, std::size_t count, float a, float b, cudaStream_t stream);

/** One empty kernel: one block of 32 threads that does nothing. */
cudaError_t empty(cudaStream_t stream);

} // namespace partsim::calibrate::kernels
