// Board power through NVML, loaded at run time (libnvidia-ml.so.1 ships with the driver; there is no NVML header or
// stub in the toolkit here), so the calibrator starts and measures everything else where NVML is absent.
#pragma once

#include <optional>
#include <string>

namespace partsim::calibrate::cuda {

class NvmlPower {
 public:
  /** Opens NVML and finds the GPU with this UUID ("GPU-xxxxxxxx-..."); available() is false when either fails. */
  explicit NvmlPower(const std::string& uuid);
  ~NvmlPower();
  NvmlPower(const NvmlPower&) = delete;
  NvmlPower& operator=(const NvmlPower&) = delete;

  bool available() const { return device_ != nullptr; }
  /** Why not available. */
  const std::string& problem() const { return problem_; }
  /** Current board power draw in W. */
  std::optional<double> watts() const;
  /** Enforced power limit in W. */
  std::optional<double> limit_watts() const;
  /** Current SM clock in MHz. */
  std::optional<double> sm_clock_mhz() const;
  /** Highest SM clock the board allows, in MHz. */
  std::optional<double> max_sm_clock_mhz() const;
  /** Whether the software power cap is among the reasons the clock is held down now (NVML's clocks event reasons;
   * nvmlDeviceGetCurrentClocksThrottleReasons on drivers before 535). */
  std::optional<bool> power_capped() const;
  /** Driver version ("580.159.04"). */
  std::optional<std::string> driver_version() const;

 private:
  void* library_ = nullptr;
  void* device_ = nullptr;
  std::string problem_;
};

} // namespace partsim::calibrate::cuda
