// A calibration run: the plan of what to measure (quick or full), driving a MeasurementBackend through it, and the
// fits of every figure from the samples.
#pragma once

#include "partsim/calibrate/fits.hpp"
#include "partsim/calibrate/gemm_grid.hpp"
#include "partsim/calibrate/measurement_backend.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace partsim::calibrate {

/** What to measure. */
struct CalibrationPlan {
  GemmAxes gemm_axes;
  std::vector<std::string> gemm_data_types;   ///< asked for; those the backend cannot run are skipped
  std::vector<std::int64_t> memory_sizes;     ///< device copy and elementwise kernel, bytes
  std::vector<std::int64_t> host_copy_sizes;  ///< bytes
  std::vector<std::int64_t> peer_copy_sizes;  ///< bytes
  std::vector<std::int64_t> collective_sizes; ///< bytes (nccl-tests size)
  std::vector<std::string> collectives;       ///< "all_reduce", "all_gather", "reduce_scatter", "all_to_all"
  int launch_batches = 5;
  int launches_per_batch = 200;
  Repeats gemm_repeats;
  Repeats transfer_repeats;
  double power_seconds = 0.0; ///< 0: no power measurement
};

/** Under a minute on one H100/H200: a 4 x 4 x 4 grid, sizes by factors of 16. */
CalibrationPlan quick_plan();
/** Under ten minutes on one H100/H200: the 6 x 6 x 6 grid of the shipped profiles (16 to 16384) for each type, sizes
 * by factors of 4. */
CalibrationPlan full_plan();

/** How much of its kernel-at-a-time rate a GEMM keeps in a sustained loop: the GEMM grid's median time for the
 * power loop's shape over the loop's settled median time (the same CUPTI span). */
struct SustainedComputeFit {
  GemmShape3 shape;
  std::string data_type;
  double kernel_at_a_time_seconds = 0.0; ///< median of the grid's repeats of this shape
  Summary sustained_seconds;             ///< the loop's settled GEMMs
  double ratio = 0.0;                    ///< kernel_at_a_time / sustained median, at most 1
  bool clamped = false;                  ///< the loop ran faster than the grid: ratio written as 1
};

/** Everything fitted from one run. Optional parts are empty when not measured (or not measurable). */
struct CalibrationResult {
  DeviceInfo device;
  std::vector<Sample> samples;
  std::vector<GemmPoint> gemm;
  std::optional<MemoryBandwidthFit> device_copy;
  std::optional<MemoryBandwidthFit> elementwise;
  std::optional<LaunchOverheadFit> launch;
  std::vector<LinkFit> links;
  std::vector<CollectiveFit> collectives;
  std::optional<PowerMeasurement> power;
  std::optional<SustainedComputeFit> sustained_compute;
  std::vector<std::string> warnings; ///< fits that could not be made, and why
};

/** Fits every figure the samples allow; a fit that fails (too few sizes, ...) leaves a warning instead. */
CalibrationResult fit_samples(DeviceInfo device, std::vector<Sample> samples,
                              std::optional<PowerMeasurement> power = std::nullopt);

/** The GEMM the power loop runs: the largest cube of the grid (m = n = k on all three axes) up to 8192, so that the
 * loop's time can be set against the grid's; 8192 cubed when the grid has no cube. */
GemmShape3 power_gemm_shape(const GemmAxes& axes);

/** Called with one line per step ("gemm bf16 27 shapes", ...). */
using ProgressFn = std::function<void(const std::string&)>;

/** Runs `plan` on `backend` and fits the samples. */
CalibrationResult run_calibration(MeasurementBackend& backend, const CalibrationPlan& plan,
                                  const ProgressFn& progress = {});

} // namespace partsim::calibrate
