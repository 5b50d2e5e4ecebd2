// JSON files to documents, with line/column positions in parse errors.
#include "partsim/json_file.hpp"

#include "partsim/error.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <system_error>

namespace partsim {

namespace {
/** Line and column (1-based) of a byte offset. */
std::pair<std::size_t, std::size_t> line_and_column(const std::string& text, std::size_t offset) {
  std::size_t line = 1;
  std::size_t column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}
} // namespace

nlohmann::json parse_json_text(const std::string& text, const std::string& source) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw InputError(source, "", "the file is empty; expected a JSON object");
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is one past the offending character.
    const auto [line, column] = line_and_column(text, e.byte == 0 ? 0 : e.byte - 1);
    std::string what = e.what();
    // nlohmann prefixes "[json.exception.parse_error.101] parse error at line 1, column 2: "; keep the reason.
    if (const auto pos = what.find(": "); pos != std::string::npos) what = what.substr(pos + 2);
    throw InputError(source, "", fmt::format("malformed JSON at line {}, column {}: {}", line, column, what));
  } catch (const nlohmann::json::out_of_range& e) {
    // A number literal beyond a double (1e999) is refused as out_of_range 406, without a position.
    std::string what = e.what();
    if (const auto pos = what.find("] "); pos != std::string::npos) what = what.substr(pos + 2);
    throw InputError(source, "",
                     fmt::format("malformed JSON: {}; expected numbers within the range of a double", what));
  }
}

nlohmann::json read_json_file(const std::filesystem::path& path) {
  const std::string source = path.string();
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) throw InputError(source, "", "no such file");
  if (std::filesystem::is_directory(status)) throw InputError(source, "", "is a directory; expected a JSON file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(source, "", "cannot open the file for reading");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) throw InputError(source, "", "cannot read the file");
  return parse_json_text(buffer.str(), source);
}

} // namespace partsim
