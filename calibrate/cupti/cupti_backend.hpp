// The CUPTI measurement backend as the CLI sees it: no CUDA types, so the CLI compiles without CUDA headers.
#pragma once

#include "partsim/calibrate/measurement_backend.hpp"

#include <memory>
#include <string>

namespace partsim::calibrate {

/** GPUs the CUDA runtime can use, or why none can. */
struct GpuAvailability {
  int devices = 0;
  std::string problem; ///< one line starting "no NVIDIA GPU/driver: ..." when devices == 0
};

/** Asks cudaGetDeviceCount (the first CUDA call: it loads the driver) how many GPUs there are. */
GpuAvailability probe_gpus();

/** A backend measuring GPU `device` (and, for peer copies and NCCL collectives, every visible GPU) through the
 * CUPTI activity API, cuBLASLt and the calibrator's own kernels. @throws std::runtime_error naming the failing call. */
std::unique_ptr<MeasurementBackend> make_cupti_backend(int device);

/** "CUPTI activity API, cuBLASLt 13.1.0, NCCL 2.28.9": what the tool measured with, for provenance. */
std::string cupti_backend_description();

} // namespace partsim::calibrate
