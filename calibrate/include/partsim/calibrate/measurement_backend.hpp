// The seam between calibration and the GPU: what a measurement backend (CUPTI, or a synthetic one in tests) offers.
// Every method runs warm-up iterations first, then returns one timed sample per repeat.
#pragma once

#include "partsim/calibrate/gemm_grid.hpp"
#include "partsim/calibrate/samples.hpp"
#include "partsim/calibrate/statistics.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace partsim::calibrate {

/** Untimed warm-up runs, then timed repeats. */
struct Repeats {
  int warmup = 3;
  int repeats = 10;
};

/** Board power readings (W): idle before work, and while a large GEMM runs in a loop; and the GEMM's own time once
 * power and clocks have settled under that load. */
struct PowerMeasurement {
  Summary idle_watts;
  Summary busy_watts;
  double limit_watts = 0.0; ///< the enforced power limit, 0 when unknown
  std::string workload;     ///< what ran during the busy readings ("bf16 GEMM 8192x8192x8192")
  GemmShape3 shape;         ///< the GEMM of the loop
  std::string data_type;    ///< its data type
  /** GPU time of each GEMM of the loop's settled half (the same CUPTI span the GEMM grid records); count 0 when the
   * backend did not time them. */
  Summary busy_gemm_seconds;
  /** SM clock in MHz read with each busy power reading (NVML's NVML_CLOCK_SM); count 0 when not read. */
  Summary busy_sm_clock_mhz;
  /** The board's highest SM clock in MHz (NVML's maximum clock); 0 when unknown. The loop's clock against it says how
   * far the power limit pulled the clock down. */
  double max_sm_clock_mhz = 0.0;
  /** Busy readings at which NVML named the software power cap among the clock's limiters (its clocks event reasons),
   * and the readings that gave reasons at all (0: not read). */
  std::size_t power_capped_readings = 0;
  std::size_t reason_readings = 0;
};

/** A source of timed samples. Implementations throw std::runtime_error with the failing call named. */
class MeasurementBackend {
 public:
  virtual ~MeasurementBackend() = default;

  /** The GPU being measured (and the software versions). */
  virtual DeviceInfo device_info() = 0;
  /** GEMM data types this GPU and library can run, among "bf16", "fp16", "tf32", "fp32", "fp8". */
  virtual std::vector<std::string> gemm_data_types() = 0;

  virtual std::vector<Sample> gemm(const GemmShape3& shape, const std::string& data_type, const Repeats& r) = 0;
  /** Device-to-device copies of `bytes`. */
  virtual std::vector<Sample> device_copy(std::int64_t bytes, const Repeats& r) = 0;
  /** The streaming elementwise kernel over `bytes` of input. */
  virtual std::vector<Sample> elementwise(std::int64_t bytes, const Repeats& r) = 0;
  /** `batches` batches of `per_batch` empty kernels launched back to back. */
  virtual std::vector<Sample> empty_kernels(int batches, int per_batch) = 0;
  /** Host↔device copies; `pinned` false: pageable host memory. */
  virtual std::vector<Sample> host_copy(bool to_device, bool pinned, std::int64_t bytes, const Repeats& r) = 0;

  /** GPUs that peer copies and collectives can use (1: none of those are measured). */
  virtual int peer_devices() = 0;
  virtual std::vector<Sample> peer_copy(int from, int to, std::int64_t bytes, const Repeats& r) = 0;
  /** One NCCL collective over the first `ranks` GPUs; `bytes` in nccl-tests' size convention. */
  virtual std::vector<Sample> collective(const std::string& name, int ranks, std::int64_t bytes, const Repeats& r) = 0;

  /** Power during idle and a sustained GEMM, when the board reports it (NVML); nothing otherwise. */
  virtual std::optional<PowerMeasurement> power(const GemmShape3& shape, const std::string& data_type,
                                                double seconds) = 0;
};

} // namespace partsim::calibrate
