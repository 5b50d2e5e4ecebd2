// Raw measurement records: one timed GPU activity (a GEMM, a copy, a kernel, a collective) with its GPU-side start and
// end, what it did (shape, bytes, data type), and where it ran. What a backend produces and every fit consumes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace partsim::calibrate {

/** What a sample measured. */
enum class SampleKind {
  Gemm,         ///< one matrix product C[m,n] = A[m,k]·B[k,n] (all kernels of one library call)
  DeviceCopy,   ///< device-to-device copy of `bytes` (reads and writes `bytes` each)
  Elementwise,  ///< the calibrator's own streaming kernel over `bytes` of input (reads `bytes`, writes `bytes`)
  EmptyKernel,  ///< an empty kernel, launched back to back with others of the same `batch`
  HostToDevice, ///< a copy of `bytes` from host memory (`variant` "pinned" or "pageable")
  DeviceToHost, ///< a copy of `bytes` to host memory (`variant` "pinned" or "pageable")
  PeerCopy,     ///< a copy of `bytes` from `device` to `peer`
  Collective,   ///< one NCCL collective (`variant` "all_reduce", ...) of nccl-tests size `bytes` over `ranks` GPUs
};

/** Lower-case name used in CSV files and messages: "gemm", "device_copy", ... */
std::string_view to_string(SampleKind kind);
/** The kind named `name`, or nothing. */
std::optional<SampleKind> sample_kind_from_string(std::string_view name);

/** One timed activity. Times are GPU timestamps in ns (CUPTI activity records), never host clocks. */
struct Sample {
  SampleKind kind = SampleKind::Gemm;
  std::string label;          ///< kernel name(s) as the driver reports them, or the collective's name
  std::string data_type;      ///< GEMM inputs ("bf16", "fp16", "tf32", "fp32", "fp8"); elementwise: "fp32"
  std::int64_t m = 0;         ///< GEMM rows of C
  std::int64_t n = 0;         ///< GEMM columns of C
  std::int64_t k = 0;         ///< GEMM inner dimension
  std::int64_t bytes = 0;     ///< payload: copy size, elementwise input size, nccl-tests collective size; 0 for GEMMs
  std::string variant;        ///< "pinned"/"pageable" for host copies, the collective ("all_reduce", ...), else empty
  int device = 0;             ///< the GPU it ran on (the source of a peer copy)
  int peer = -1;              ///< destination GPU of a peer copy, else -1
  int ranks = 1;              ///< GPUs taking part in a collective
  int batch = 0;              ///< samples of one batch were issued back to back (launch overhead)
  int repeat = 0;             ///< index within its measurement (warm-up runs are not recorded)
  std::uint64_t start_ns = 0; ///< GPU timestamp of the start
  std::uint64_t end_ns = 0;   ///< GPU timestamp of the end, >= start_ns

  /** end - start in s. */
  double seconds() const { return static_cast<double>(end_ns - start_ns) * 1e-9; }
  /** 2·m·n·k for a GEMM, else 0. */
  double flops() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k); }
};

/** Where and when the samples came from: the device, software versions, date and tool a measured profile records as
 * provenance. */
struct DeviceInfo {
  std::string name;               ///< "NVIDIA H200"
  std::string uuid;               ///< "GPU-xxxxxxxx-xxxx-..."
  std::string driver;             ///< driver version ("580.159.04", or the CUDA driver API version "13.0")
  std::string cuda;               ///< CUDA runtime version "13.0"
  std::string cupti;              ///< CUPTI API version
  std::string compute_capability; ///< "9.0"
  std::int64_t memory_bytes = 0;  ///< total device memory
  int multiprocessors = 0;
  int device_count = 1; ///< GPUs visible to the process
  int index = 0;        ///< the GPU measured
  std::string date;     ///< ISO 8601 UTC start of the run
  std::string tool;     ///< "partsim-calibrate 0.1.0 (CUPTI activity API ..., cuBLASLt ...)"
};

/** The samples of one kind. */
std::vector<Sample> of_kind(const std::vector<Sample>& samples, SampleKind kind);

} // namespace partsim::calibrate
