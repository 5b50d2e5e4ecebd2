// JSON files to documents: a size limit on what is read, and a strict parser (nesting depth, duplicate keys,
// line/column positions in syntax errors).
#include "partsim/input/json_file.hpp"

#include "partsim/common/error.hpp"
#include "partsim/input/json_reader.hpp"

#include <fmt/format.h>

#include <fstream>
#include <optional>
#include <set>
#include <system_error>
#include <vector>

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

/** nlohmann's SAX events into a document, refusing what its own DOM parser accepts silently: a key given twice in
 * one object (the last would win) and nesting past kMaxJsonDepth (a deep document overflows the stack of every
 * recursive walk after parsing: copy, dump, comparison). The first refusal stops the parse. */
class StrictBuilder {
 public:
  using json = nlohmann::json;

  StrictBuilder(json& root, std::string source) : root_(root), source_(std::move(source)) {}

  bool null() { return add(nullptr); }
  bool boolean(bool v) { return add(v); }
  bool number_integer(json::number_integer_t v) { return add(v); }
  bool number_unsigned(json::number_unsigned_t v) { return add(v); }
  bool number_float(json::number_float_t v, const json::string_t&) { return add(v); }
  bool string(json::string_t& v) { return add(std::move(v)); }
  bool binary(json::binary_t& v) { return add(json::binary(std::move(v))); }
  bool start_object(std::size_t) { return open(json::object()); }
  bool start_array(std::size_t) { return open(json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(json::string_t& k) {
    Level& level = levels_.back();
    if (!level.keys.insert(k).second) {
      fail(InputError(source_, pointer() + "/" + escape_pointer_token(k),
                      "the key appears twice in this object; expected each key once"));
      return false;
    }
    key_ = std::move(k);
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) {
    syntax_error_position_ = position;
    syntax_error_ = e.what();
    // A number literal beyond a double (1e999) comes as out_of_range 406, without "parse error ...: ".
    if (e.id == 406)
      syntax_error_ =
          ": " + syntax_error_.substr(syntax_error_.find("] ") + 2) + "; expected numbers within the range of a double";
    return false;
  }

  const std::optional<InputError>& refusal() const { return refusal_; }
  std::optional<std::size_t> syntax_error_position() const { return syntax_error_position_; }
  const std::string& syntax_error() const { return syntax_error_; }

 private:
  struct Level {
    json* value;
    std::string token; ///< where this container sits in its parent (escaped), empty for the root
    std::set<std::string, std::less<>> keys;
  };

  std::string pointer() const {
    std::string out;
    for (std::size_t i = 1; i < levels_.size(); ++i) out += "/" + levels_[i].token;
    return out;
  }

  /** Places a value in the innermost container (or at the root) and returns it with its pointer token. */
  std::pair<json*, std::string> place(json&& value) {
    if (levels_.empty()) {
      root_ = std::move(value);
      return {&root_, ""};
    }
    json& container = *levels_.back().value;
    if (container.is_array()) {
      container.push_back(std::move(value));
      return {&container.back(), std::to_string(container.size() - 1)};
    }
    json& slot = container[key_];
    slot = std::move(value);
    return {&slot, escape_pointer_token(key_)};
  }

  template <typename T>
  bool add(T&& v) {
    place(json(std::forward<T>(v)));
    return true;
  }

  bool open(json&& container) {
    if (levels_.size() >= kMaxJsonDepth) {
      fail(InputError(
          source_, pointer().empty() ? "/" : pointer(),
          fmt::format("nesting deeper than {} levels; expected a scenario or profile document", kMaxJsonDepth)));
      return false;
    }
    auto [value, token] = place(std::move(container));
    levels_.push_back({value, std::move(token), {}});
    return true;
  }

  bool close() {
    levels_.pop_back();
    return true;
  }

  void fail(InputError error) { refusal_.emplace(std::move(error)); }

  json& root_;
  std::string source_;
  std::vector<Level> levels_;
  std::string key_;
  std::optional<InputError> refusal_;
  std::optional<std::size_t> syntax_error_position_;
  std::string syntax_error_;
};
} // namespace

namespace {
/** The document, or nullopt with `position` and `reason` set when `text` is not JSON; throws for a refusal. */
std::optional<nlohmann::json> parse_strict(const std::string& text, const std::string& source, std::size_t& position,
                                           std::string& reason) {
  nlohmann::json document;
  StrictBuilder builder(document, source);
  nlohmann::json::sax_parse(text, &builder); // errors, 1e999 (out_of_range 406) included, come to parse_error
  if (builder.refusal()) throw *builder.refusal();
  if (const auto at = builder.syntax_error_position()) {
    position = *at;
    reason = builder.syntax_error();
    // nlohmann prefixes "[json.exception.parse_error.101] parse error at line 1, column 2: "; keep the reason.
    if (const auto pos = reason.find(": "); pos != std::string::npos) reason = reason.substr(pos + 2);
    return std::nullopt;
  }
  return document;
}
} // namespace

nlohmann::json parse_json_text(const std::string& text, const std::string& source) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw InputError(source, "", "the file is empty; expected a JSON object");
  std::size_t position = 0;
  std::string reason;
  std::optional<nlohmann::json> document = parse_strict(text, source, position, reason);
  if (!document) {
    // The position is one past the offending character.
    const auto [line, column] = line_and_column(text, position == 0 ? 0 : position - 1);
    throw InputError(source, "", fmt::format("malformed JSON at line {}, column {}: {}", line, column, reason));
  }
  return std::move(*document);
}

std::optional<nlohmann::json> parse_json_if_valid(const std::string& text, const std::string& source) {
  std::size_t position = 0;
  std::string reason;
  return parse_strict(text, source, position, reason);
}

std::string read_text_file(const std::filesystem::path& path, std::size_t max_bytes, const std::string& what) {
  const std::string source = path.string();
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) throw InputError(source, "", "no such file");
  if (std::filesystem::is_directory(status)) throw InputError(source, "", "is a directory; expected " + what);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(source, "", "cannot open the file for reading");
  // Read at most one byte past the limit: a device such as /dev/zero never ends.
  std::string text;
  std::vector<char> buffer(1 << 16);
  while (in && text.size() <= max_bytes) {
    in.read(buffer.data(), static_cast<std::streamsize>(std::min(buffer.size(), max_bytes + 1 - text.size())));
    text.append(buffer.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) throw InputError(source, "", "cannot read the file");
  if (text.size() > max_bytes)
    throw InputError(source, "",
                     fmt::format("larger than {} MiB; expected {} of at most that size", max_bytes >> 20, what));
  return text;
}

nlohmann::json read_json_file(const std::filesystem::path& path) {
  return parse_json_text(read_text_file(path, kMaxJsonFileBytes, "a JSON file"), path.string());
}

} // namespace partsim
