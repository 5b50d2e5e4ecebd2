// The calibrator's own kernels: random fills for GEMM inputs, y = a·x + b for achieved memory bandwidth, and an empty
// kernel for launch overhead.
#include "kernels.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

namespace partsim::calibrate::kernels {

namespace {

__device__ inline float uniform_nonzero(std::uint64_t seed, std::size_t i) {
  // splitmix64 of (seed, i): independent values per element, the same on every run.
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (i + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  const float magnitude = 1.0f / 64.0f + (63.0f / 64.0f) * static_cast<float>(z >> 40) * (1.0f / 16777216.0f);
  return (z & 1) ? magnitude : -magnitude;
}

template <typename T>
__device__ inline T convert(float v);
template <>
__device__ inline float convert<float>(float v) {
  return v;
}
template <>
__device__ inline __half convert<__half>(float v) {
  return __float2half(v);
}
template <>
__device__ inline __nv_bfloat16 convert<__nv_bfloat16>(float v) {
  return __float2bfloat16(v);
}
template <>
__device__ inline __nv_fp8_e4m3 convert<__nv_fp8_e4m3>(float v) {
  return __nv_fp8_e4m3(v);
}

template <typename T>
__global__ void fill_kernel(T* data, std::size_t count, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    data[i] = convert<T>(uniform_nonzero(seed, i));
}

__global__ void axpb_kernel(const float4* x, float4* y, std::size_t count4, float a, float b) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count4;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float4 v = x[i];
    y[i] = make_float4(a * v.x + b, a * v.y + b, a * v.z + b, a * v.w + b);
  }
}

__global__ void axpb_tail_kernel(const float* x, float* y, std::size_t from, std::size_t count, float a, float b) {
  const std::size_t i = from + blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < count) y[i] = a * x[i] + b;
}

__global__ void empty_kernel() {}

/** Enough blocks to fill any current GPU several times over, capped so grid-stride loops do the rest. */
unsigned blocks_for(std::size_t count, unsigned threads) {
  const std::size_t wanted = (count + threads - 1) / threads;
  return static_cast<unsigned>(wanted < 65536 ? (wanted == 0 ? 1 : wanted) : 65536);
}

template <typename T>
cudaError_t fill(void* data, std::size_t count, std::uint64_t seed, cudaStream_t stream) {
  fill_kernel<T><<<blocks_for(count, 256), 256, 0, stream>>>(static_cast<T*>(data), count, seed);
  return cudaGetLastError();
}

} // namespace

cudaError_t fill_random(void* data, std::size_t count, Element type, std::uint64_t seed, cudaStream_t stream) {
  switch (type) {
  case Element::F32:
    return fill<float>(data, count, seed, stream);
  case Element::F16:
    return fill<__half>(data, count, seed, stream);
  case Element::BF16:
    return fill<__nv_bfloat16>(data, count, seed, stream);
  case Element::FP8_E4M3:
    return fill<__nv_fp8_e4m3>(data, count, seed, stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t axpb(const float* x, float* y, std::size_t count, float a, float b, cudaStream_t stream) {
  const std::size_t count4 = count / 4;
  if (count4 > 0) {
    // One element per thread (no grid-stride for the sizes measured): a streaming kernel at full occupancy.
    const std::size_t blocks = (count4 + 255) / 256;
    axpb_kernel<<<static_cast<unsigned>(blocks < 2147483647u ? blocks : 2147483647u), 256, 0, stream>>>(
        reinterpret_cast<const float4*>(x), reinterpret_cast<float4*>(y), count4, a, b);
  }
  if (count % 4 != 0) axpb_tail_kernel<<<1, 32, 0, stream>>>(x, y, count4 * 4, count, a, b);
  return cudaGetLastError();
}

cudaError_t empty(cudaStream_t stream) {
  empty_kernel<<<1, 32, 0, stream>>>();
  return cudaGetLastError();
}

} // namespace partsim::calibrate::kernels
