// Data folder lookup.
#include "partsim/data_dir.hpp"

#include "partsim/version.hpp"

#include <cstdlib>

namespace partsim {

std::filesystem::path data_dir() {
  if (const char* env = std::getenv("PARTSIM_DATA_DIR"); env != nullptr && *env != '\0') return env;
  return PARTSIM_BUILT_DATA_DIR;
}

} // namespace partsim
