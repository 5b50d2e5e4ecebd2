// Owning handles for device, pinned-host and pageable-host memory and CUDA streams (no raw new/delete, no leaks on
// the exceptions CUDA_CHECK throws).
#pragma once

#include "cuda_check.hpp"

#include <cstddef>
#include <cstdlib>
#include <memory>

namespace partsim::calibrate::cuda {

struct DeviceFree {
  void operator()(void* p) const { cudaFree(p); }
};
struct HostFree {
  void operator()(void* p) const { cudaFreeHost(p); }
};
struct StdFree {
  void operator()(void* p) const { std::free(p); }
};

using DevicePtr = std::unique_ptr<void, DeviceFree>;
using PinnedPtr = std::unique_ptr<void, HostFree>;
using PageablePtr = std::unique_ptr<void, StdFree>;

/** cudaMalloc on the current device. */
inline DevicePtr device_alloc(std::size_t bytes) {
  void* p = nullptr;
  CUDA_CHECK(cudaMalloc(&p, bytes));
  return DevicePtr(p);
}

/** Page-locked host memory (cudaMallocHost). */
inline PinnedPtr pinned_alloc(std::size_t bytes) {
  void* p = nullptr;
  CUDA_CHECK(cudaMallocHost(&p, bytes));
  return PinnedPtr(p);
}

/** Ordinary (pageable) host memory, every page touched so the first copy does not pay for page faults. */
inline PageablePtr pageable_alloc(std::size_t bytes) {
  void* p = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
  if (p == nullptr) fail("aligned_alloc", "out of host memory", __FILE__, __LINE__);
  auto* bytes_p = static_cast<unsigned char*>(p);
  for (std::size_t i = 0; i < bytes; i += 4096) bytes_p[i] = static_cast<unsigned char>(i / 4096);
  return PageablePtr(p);
}

/** A non-blocking stream on the current device. */
class Stream {
 public:
  Stream() { CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }
  void synchronize() const { CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
};

} // namespace partsim::calibrate::cuda
