// GPU-side timing through the CUPTI activity API: kernel and memcpy records (start and end on the GPU clock), tied to
// the calibrator's own measurement ids through CUPTI external correlation, as Kineto does for PyTorch ops.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace partsim::calibrate::cuda {

/** Everything the GPU did for one measurement id: the span from the first start to the last end. */
struct ActivityInterval {
  std::uint64_t start = UINT64_MAX; ///< ns, GPU timestamp (CUPTI's normalised clock)
  std::uint64_t end = 0;            ///< ns
  std::string names;                ///< kernel names and memcpy kinds, " + " between distinct ones
  std::uint64_t bytes = 0;          ///< bytes copied by memcpy records
  int device = -1;                  ///< device of the first record
  std::size_t records = 0;
};

/** The process's CUPTI activity session (CUPTI allows one per process: do not create two).
 *
 * Enables CONCURRENT_KERNEL (does not serialise kernels), MEMCPY, MEMCPY2 (peer copies), EXTERNAL_CORRELATION, and
 * RUNTIME and DRIVER (the API records that external correlation records accompany).
 * Work issued between begin() and end() on this thread is tied to the id begin() returned. */
class ActivityRecorder {
 public:
  /** @throws std::runtime_error naming the CUPTI call that failed. */
  ActivityRecorder();
  ~ActivityRecorder();
  ActivityRecorder(const ActivityRecorder&) = delete;
  ActivityRecorder& operator=(const ActivityRecorder&) = delete;

  /** A new measurement id, pushed as the external correlation id of the CUDA calls that follow. */
  std::uint64_t begin();
  /** Pops the id pushed by begin(). */
  void end();
  /** Flushes CUPTI's buffers (call after synchronising the device) and returns the interval of each id seen since the
   * last call. @throws std::runtime_error when CUPTI dropped records (the buffers were too small). */
  std::map<std::uint64_t, ActivityInterval> collect();

 private:
  std::uint64_t next_id_ = 1;
};

/** cuptiGetVersion() as a string. */
std::string cupti_version();

} // namespace partsim::calibrate::cuda
