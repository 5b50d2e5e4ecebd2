// Reading a JSON document from a file with one-line errors (missing file, directory, empty, malformed).
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace partsim {

/** Parses `text` as JSON; `source` names it in errors ("line L, column C: ..."). */
nlohmann::json parse_json_text(const std::string& text, const std::string& source);

/** Reads and parses a JSON file. @throws InputError for a missing, unreadable, empty or malformed file. */
nlohmann::json read_json_file(const std::filesystem::path& path);

} // namespace partsim
