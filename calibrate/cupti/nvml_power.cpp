// NVML through dlopen: the entry points the calibrator needs, declared with NVML's documented C signatures.
#include "nvml_power.hpp"

#include <dlfcn.h>

namespace partsim::calibrate::cuda {

namespace {

using nvmlReturn = int; // NVML_SUCCESS == 0
using nvmlDevice = void*;
using InitFn = nvmlReturn (*)();
using ShutdownFn = nvmlReturn (*)();
using ByUuidFn = nvmlReturn (*)(const char*, nvmlDevice*);
using UintFn = nvmlReturn (*)(nvmlDevice, unsigned int*);
using DriverFn = nvmlReturn (*)(char*, unsigned int);
using ClockFn = nvmlReturn (*)(nvmlDevice, int, unsigned int*); // nvmlClockType_t is a C enum
constexpr int kNvmlClockSm = 1;                                 // NVML_CLOCK_SM
using ReasonsFn = nvmlReturn (*)(nvmlDevice, unsigned long long*);
constexpr unsigned long long kSwPowerCap = 0x4ULL; // nvmlClocksEventReasonSwPowerCap

template <typename Fn>
Fn symbol(void* library, const char* name) {
  return library != nullptr ? reinterpret_cast<Fn>(dlsym(library, name)) : nullptr;
}

} // namespace

NvmlPower::NvmlPower(const std::string& uuid) {
  library_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library_ == nullptr) {
    problem_ = "libnvidia-ml.so.1 not found";
    return;
  }
  const auto init = symbol<InitFn>(library_, "nvmlInit_v2");
  const auto by_uuid = symbol<ByUuidFn>(library_, "nvmlDeviceGetHandleByUUID");
  if (init == nullptr || by_uuid == nullptr || init() != 0) {
    problem_ = "nvmlInit_v2 failed";
    return;
  }
  nvmlDevice device = nullptr;
  if (by_uuid(uuid.c_str(), &device) != 0) {
    problem_ = "nvmlDeviceGetHandleByUUID(" + uuid + ") failed";
    return;
  }
  device_ = device;
}

NvmlPower::~NvmlPower() {
  if (library_ == nullptr) return;
  if (const auto shutdown = symbol<ShutdownFn>(library_, "nvmlShutdown"); shutdown != nullptr && problem_.empty())
    shutdown();
  dlclose(library_);
}

std::optional<double> NvmlPower::watts() const {
  const auto get = symbol<UintFn>(library_, "nvmlDeviceGetPowerUsage");
  unsigned int milliwatts = 0;
  if (device_ == nullptr || get == nullptr || get(device_, &milliwatts) != 0) return std::nullopt;
  return milliwatts / 1000.0;
}

std::optional<double> NvmlPower::limit_watts() const {
  const auto get = symbol<UintFn>(library_, "nvmlDeviceGetEnforcedPowerLimit");
  unsigned int milliwatts = 0;
  if (device_ == nullptr || get == nullptr || get(device_, &milliwatts) != 0) return std::nullopt;
  return milliwatts / 1000.0;
}

std::optional<double> NvmlPower::sm_clock_mhz() const {
  const auto get = symbol<ClockFn>(library_, "nvmlDeviceGetClockInfo");
  unsigned int mhz = 0;
  if (device_ == nullptr || get == nullptr || get(device_, kNvmlClockSm, &mhz) != 0 || mhz == 0) return std::nullopt;
  return static_cast<double>(mhz);
}

std::optional<double> NvmlPower::max_sm_clock_mhz() const {
  const auto get = symbol<ClockFn>(library_, "nvmlDeviceGetMaxClockInfo");
  unsigned int mhz = 0;
  if (device_ == nullptr || get == nullptr || get(device_, kNvmlClockSm, &mhz) != 0 || mhz == 0) return std::nullopt;
  return static_cast<double>(mhz);
}

std::optional<bool> NvmlPower::power_capped() const {
  auto get = symbol<ReasonsFn>(library_, "nvmlDeviceGetCurrentClocksEventReasons");
  if (get == nullptr) get = symbol<ReasonsFn>(library_, "nvmlDeviceGetCurrentClocksThrottleReasons");
  unsigned long long reasons = 0;
  if (device_ == nullptr || get == nullptr || get(device_, &reasons) != 0) return std::nullopt;
  return (reasons & kSwPowerCap) != 0;
}

std::optional<std::string> NvmlPower::driver_version() const {
  const auto get = symbol<DriverFn>(library_, "nvmlSystemGetDriverVersion");
  char text[96] = {};
  if (device_ == nullptr || get == nullptr || get(text, sizeof(text)) != 0) return std::nullopt;
  return std::string(text);
}

} // namespace partsim::calibrate::cuda
