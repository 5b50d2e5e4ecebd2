// Data folder lookup and the model library's file names.
#include "partsim/input/data_dir.hpp"

#include "partsim/common/error.hpp"
#include "partsim/version.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <system_error>

namespace partsim {

std::filesystem::path data_dir() {
  if (const char* env = std::getenv("PARTSIM_DATA_DIR"); env != nullptr && *env != '\0') return env;
  return PARTSIM_BUILT_DATA_DIR;
}

std::vector<std::string> list_library(const std::filesystem::path& data_dir, const LibraryFolder& folder) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(data_dir / "models" / folder.folder, ec))
    if (entry.is_regular_file(ec) && entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::filesystem::path library_file(const std::filesystem::path& data_dir, const LibraryFolder& folder,
                                   const std::string& name, const std::string& source, const std::string& pointer,
                                   const std::string& alternative) {
  const std::filesystem::path dir = data_dir / "models" / folder.folder;
  const bool valid =
      !name.empty() && name.size() <= 128 && name.front() != '.' && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
      });
  std::error_code ec;
  const std::filesystem::path path = dir / (name + ".json");
  if (valid && std::filesystem::is_regular_file(path, ec)) return path;
  const auto names = list_library(data_dir, folder);
  throw InputError(source, pointer,
                   fmt::format("unknown {} \"{}\"; expected one of {} (files in {}){}", folder.what, name,
                               names.empty() ? "(none found)" : fmt::format("{}", fmt::join(names, ", ")), dir.string(),
                               alternative.empty() ? "" : ", " + alternative));
}

} // namespace partsim
