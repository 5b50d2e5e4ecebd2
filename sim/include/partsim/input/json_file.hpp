// Reading a JSON document from a file with one-line errors (missing file, directory, too large, empty, malformed,
// nested too deep, a key given twice).
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace partsim {

/** Deepest nesting of objects and arrays accepted in any JSON input (scenarios nest 6 levels deep). */
inline constexpr std::size_t kMaxJsonDepth = 64;
/** Largest JSON file read (a scenario with 100,000 speed-change points is about 3 MiB). */
inline constexpr std::size_t kMaxJsonFileBytes = std::size_t{64} << 20;

/** Parses `text` as JSON; `source` names it in errors ("line L, column C: ..."). Refuses nesting deeper than
 * kMaxJsonDepth and a key given twice in one object (naming its pointer); nlohmann refuses bytes that are not
 * UTF-8 inside strings. */
nlohmann::json parse_json_text(const std::string& text, const std::string& source);

/** Parses `text` as strictly as parse_json_text but returns nullopt where it is not JSON at all (a bare word on the
 * command line, taken as a string). @throws InputError for nesting too deep or a key given twice. */
std::optional<nlohmann::json> parse_json_if_valid(const std::string& text, const std::string& source);

/** Reads a whole file of at most `max_bytes` bytes. `what` names what was expected ("a JSON file") in errors.
 * @throws InputError for a missing, unreadable or larger file, or a directory. */
std::string read_text_file(const std::filesystem::path& path, std::size_t max_bytes, const std::string& what);

/** Reads and parses a JSON file of at most kMaxJsonFileBytes. @throws InputError as the two functions above. */
nlohmann::json read_json_file(const std::filesystem::path& path);

} // namespace partsim
