// Sample kind names.
#include "partsim/calibrate/samples.hpp"

#include <array>
#include <utility>

namespace partsim::calibrate {

namespace {
constexpr std::array<std::pair<SampleKind, std::string_view>, 8> kNames{{
    {SampleKind::Gemm, "gemm"},
    {SampleKind::DeviceCopy, "device_copy"},
    {SampleKind::Elementwise, "elementwise"},
    {SampleKind::EmptyKernel, "empty_kernel"},
    {SampleKind::HostToDevice, "host_to_device"},
    {SampleKind::DeviceToHost, "device_to_host"},
    {SampleKind::PeerCopy, "peer_copy"},
    {SampleKind::Collective, "collective"},
}};
} // namespace

std::string_view to_string(SampleKind kind) {
  for (const auto& [k, name] : kNames)
    if (k == kind) return name;
  return "unknown";
}

std::optional<SampleKind> sample_kind_from_string(std::string_view name) {
  for (const auto& [k, n] : kNames)
    if (n == name) return k;
  return std::nullopt;
}

std::vector<Sample> of_kind(const std::vector<Sample>& samples, SampleKind kind) {
  std::vector<Sample> out;
  for (const Sample& s : samples)
    if (s.kind == kind) out.push_back(s);
  return out;
}

} // namespace partsim::calibrate
