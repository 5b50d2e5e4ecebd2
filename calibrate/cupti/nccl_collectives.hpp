// NCCL collectives over the first N GPUs of this process (one communicator per GPU, ncclCommInitAll), in nccl-tests'
// size convention, timed through the activity recorder as the span of all GPUs' kernels.
#pragma once

#include "activity_recorder.hpp"
#include "partsim/calibrate/measurement_backend.hpp"

#include <memory>
#include <string>
#include <vector>

namespace partsim::calibrate::cuda {

class NcclCollectives {
 public:
  /** @throws std::runtime_error naming the NCCL or CUDA call that failed. */
  NcclCollectives(int ranks, std::size_t max_bytes);
  ~NcclCollectives();
  NcclCollectives(const NcclCollectives&) = delete;
  NcclCollectives& operator=(const NcclCollectives&) = delete;

  std::vector<Sample> run(const std::string& name, std::int64_t bytes, const Repeats& r, ActivityRecorder& recorder);

  /** "NCCL 2.28.9". */
  static std::string version();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace partsim::calibrate::cuda
