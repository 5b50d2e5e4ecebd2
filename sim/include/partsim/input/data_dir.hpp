// Where partsim finds models/ and scenarios/ ($PARTSIM_DATA_DIR, else the source tree it was built from), and the
// one way to name a file of the model library (models/KIND/NAME.json).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace partsim {

/** The data folder (holding models/hardware, models/workloads, scenarios). */
std::filesystem::path data_dir();

/** One folder of the model library: models/hardware ("GPU profile"), models/links, models/workloads. */
struct LibraryFolder {
  const char* folder; ///< under models/
  const char* what;   ///< for messages: "GPU profile"
};

inline constexpr LibraryFolder kGpuProfiles{"hardware", "GPU profile"};
inline constexpr LibraryFolder kLinkProfiles{"links", "link profile"};
inline constexpr LibraryFolder kWorkloads{"workloads", "workload"};

/** The names of the JSON files of a library folder, sorted. */
std::vector<std::string> list_library(const std::filesystem::path& data_dir, const LibraryFolder& folder);

/** The file of `name` in a library folder. A name is 1 to 128 letters, digits, '-', '_' or '.', not starting with
 * '.'; `alternative` is added to the list of expected values ("or an inline object").
 * @throws InputError at (source, pointer) for an invalid or unknown name, listing the known ones. */
std::filesystem::path library_file(const std::filesystem::path& data_dir, const LibraryFolder& folder,
                                   const std::string& name, const std::string& source, const std::string& pointer,
                                   const std::string& alternative = "");

} // namespace partsim
