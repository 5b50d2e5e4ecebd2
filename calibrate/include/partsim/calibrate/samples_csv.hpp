// Raw samples as CSV: one row per timed activity, with the device and versions in leading `# key: value` lines, so
// a run can be refitted later without the GPU.
#pragma once

#include "partsim/calibrate/samples.hpp"

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

namespace partsim::calibrate {

/** The header row written and expected. */
inline constexpr const char* kSamplesCsvHeader =
    "kind,label,data_type,m,n,k,bytes,variant,device,peer,ranks,batch,repeat,start_ns,end_ns,duration_ns";

void write_samples_csv(std::ostream& out, const DeviceInfo& device, const std::vector<Sample>& samples);
void write_samples_csv(const std::filesystem::path& path, const DeviceInfo& device, const std::vector<Sample>& samples);

/** A CSV read back. */
struct SampleFile {
  DeviceInfo device;
  std::vector<Sample> samples;
};
/** @throws InputError naming `source` and the line for a malformed row or header. */
SampleFile read_samples_csv(std::istream& in, const std::string& source);
SampleFile read_samples_csv(const std::filesystem::path& path);

} // namespace partsim::calibrate
