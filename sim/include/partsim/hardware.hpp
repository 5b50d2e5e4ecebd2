// Hardware profiles: GPU figures (peak rate per data type, memory bandwidth and capacity), each with its provenance.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace partsim {

class JsonReader;

/** Where a figure came from: a datasheet (with its source), a measurement (device, driver, tool, date,
 * samples), or the scenario itself (an inline figure typed by the user). */
struct Provenance {
  std::string kind;                          ///< "datasheet", "measured" or "scenario"
  std::map<std::string, std::string> fields; ///< source, device, driver, cuda, cupti, date, tool, samples, ...
};

/** One figure in SI units with its provenance. */
struct Figure {
  double value = 0.0;
  Provenance provenance;
};

/** A GPU model as the simulator sees it. Later issues add the GEMM efficiency table, launch overhead and power. */
struct GpuProfile {
  std::string name;
  std::string description;
  std::map<std::string, Figure> peak_flops; ///< dense peak flop/s per data type ("bf16", "fp32", ...)
  Figure memory_bandwidth;                  ///< bytes/s
  Figure memory_capacity;                   ///< bytes

  /** Peak flop/s for a data type. @throws std::out_of_range when the profile has no figure for it. */
  double peak(const std::string& data_type) const { return peak_flops.at(data_type).value; }
};

/** Current version of the hardware profile format. */
inline constexpr int kHardwareSchemaVersion = 1;

/** Data types a profile may list peak rates for. */
const std::vector<std::string>& known_data_types();

/** Reads a GPU profile object (a file's root, or an inline `cluster/gpu` object). */
GpuProfile parse_gpu_profile(JsonReader& reader);

/** Loads `DIR/models/hardware/NAME.json`. @throws InputError naming `source`/`pointer` when absent. */
GpuProfile load_gpu_profile(const std::filesystem::path& data_dir, const std::string& name, const std::string& source,
                            const std::string& pointer);

/** Names of the GPU profiles under `DIR/models/hardware`, sorted. */
std::vector<std::string> list_gpu_profiles(const std::filesystem::path& data_dir);

/** Serialises a profile back to JSON (for reports: the run says which figures it used). */
nlohmann::json to_json(const GpuProfile& profile);

} // namespace partsim
