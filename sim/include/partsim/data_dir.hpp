// Where partsim finds models/ and scenarios/: $PARTSIM_DATA_DIR, else the source tree it was built from.
#pragma once

#include <filesystem>

namespace partsim {

/** The data folder (holding models/hardware, models/workloads, scenarios). */
std::filesystem::path data_dir();

} // namespace partsim
