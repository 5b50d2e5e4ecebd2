// Writes what a calibration measured as partsim hardware profiles (models/hardware/NAME.json and models/links format,
// every figure with `measured` provenance), plus a summary of every fit.
#pragma once

#include "partsim/calibrate/calibration.hpp"
#include "partsim/input/hardware.hpp"
#include "partsim/input/link_profile.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace partsim::calibrate {

/** Names and provenance common to every figure written. */
struct ProfileOptions {
  std::string name;        ///< the profile's name (its file stem)
  std::string description; ///< empty: made from the device name
  std::string date;        ///< ISO 8601 UTC
  std::string tool;        ///< "partsim-calibrate 0.1.0 (CUPTI activity API)"
};

/** The base profile for a device name: the shipped datasheet profile of the same GPU model ("NVIDIA H200" →
 * "h200-sxm-141gb"), or empty when none matches. */
std::string base_profile_for(const std::string& device_name);

/** A GPU profile of the measured figures, in the exact format of models/hardware (keys in the shipped files' order).
 *
 * Measured (provenance `measured`): memory bandwidth (the best fitted line of the device copy and the elementwise
 * kernel, bytes read + written), memory capacity, kernel launch overhead, GEMM efficiency points (achieved over the
 * base profile's peak) and the default curve fitted to them, idle power and the power limit as TDP when measured.
 * Kept from `base` with its own provenance: the peak rates (a measurement cannot find a peak; efficiencies are
 * relative to them), the curve's saturated efficiency for data types not measured, and whatever was not measured.
 * @throws std::invalid_argument when no GEMM efficiency can be computed and nothing else was measured. */
nlohmann::ordered_json measured_gpu_profile(const CalibrationResult& result, const GpuProfile& base,
                                            const ProfileOptions& options);

/** A link profile (models/links format) from the peer copies between the two first GPUs: scope intra_node,
 * bandwidth per GPU pair direction as `bandwidth_per` "gpu". @throws std::invalid_argument without peer fits. */
nlohmann::ordered_json measured_link_profile(const CalibrationResult& result, const ProfileOptions& options);

/** Every fit with its points (GEMM rates, memory lines, launch overhead, host and peer links, collectives with
 * algbw and busbw, power) and the warnings: the record of a run for people and scripts. */
nlohmann::ordered_json calibration_summary(const CalibrationResult& result, const ProfileOptions& options);

/** The power loop's SM clock as a phrase ("SM clock 1755 MHz (median of 3) of its 1980 MHz maximum, 0.886; the
 * power cap held the clock at 3 of 3 readings"); "" when the backend read no clock. */
std::string sm_clock_text(const PowerMeasurement& power);

/** A GPU profile in the file format of models/hardware (schema_version, kind, every figure with its provenance): what
 * load_gpu_profile reads back to the same profile. */
nlohmann::ordered_json profile_file_json(const GpuProfile& profile);

/** The `measured` provenance object for a figure. */
nlohmann::ordered_json measured_provenance(const DeviceInfo& device, const ProfileOptions& options, std::size_t samples,
                                           double spread, const std::string& note);

} // namespace partsim::calibrate
