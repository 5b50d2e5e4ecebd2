// Hostile and careless inputs through the partsim binary, one parameterised case per row of hostile_inputs.json:
// the exit code, and for errors one printable line naming the JSON pointer.
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <fstream>

namespace partsim::test {
namespace {

struct HostileCase {
  std::string name;
  nlohmann::json row;
};

void PrintTo(const HostileCase& c, std::ostream* os) {
  *os << c.name;
}

std::vector<HostileCase> load_cases() {
  std::ifstream in(source_dir() / "tests" / "scenarios" / "hostile_inputs.json");
  const nlohmann::json doc = nlohmann::json::parse(in);
  std::vector<HostileCase> cases;
  for (const nlohmann::json& row : doc.at("cases")) cases.push_back({row.at("name").get<std::string>(), row});
  return cases;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

/** `\xNN` in an argument is that byte (a command line can carry bytes a JSON file cannot). */
std::string decode_bytes(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 2, "\\x") == 0 && i + 3 < text.size() && std::isxdigit(text[i + 2]) &&
        std::isxdigit(text[i + 3])) {
      out += static_cast<char>(std::stoi(text.substr(i + 2, 2), nullptr, 16));
      i += 3;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string file_content(const nlohmann::json& spec) {
  if (spec.is_string()) return spec.get<std::string>();
  if (spec.contains("hex")) {
    const std::string hex = spec.at("hex").get<std::string>();
    std::string bytes;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
      bytes += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
    return bytes;
  }
  std::string text;
  const std::string unit = spec.at("repeat").get<std::string>();
  for (int i = 0; i < spec.at("count").get<int>(); ++i) text += unit;
  return text + spec.value("then", std::string());
}

class HostileInput : public ::testing::TestWithParam<HostileCase> {};

TEST_P(HostileInput, IsRefusedWithOneLine) {
  const nlohmann::json& row = GetParam().row;
  const std::filesystem::path tmp = temp_dir();
  auto expand = [&](const std::string& text) {
    return replace_all(replace_all(text, "{src}", source_dir().string()), "{tmp}", tmp.string());
  };
  if (row.contains("files"))
    for (const auto& [name, spec] : row.at("files").items()) {
      std::ofstream out(tmp / name, std::ios::binary);
      out << expand(file_content(spec));
    }
  std::vector<std::string> args;
  for (const nlohmann::json& arg : row.at("args")) args.push_back(decode_bytes(expand(arg.get<std::string>())));
  const CliResult r = run_cli(args, tmp);
  const int expected = row.at("exit").get<int>();
  ASSERT_EQ(r.exit_code, expected) << r.err;
  if (expected == 0) return;
  EXPECT_EQ(r.err.rfind("partsim: error: ", 0), 0U) << r.err;
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.back(), '\n');
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "expected exactly one line: " << r.err;
  for (std::size_t i = 0; i + 1 < r.err.size(); ++i) {
    const auto c = static_cast<unsigned char>(r.err[i]);
    EXPECT_TRUE(c >= 0x20 && c != 0x7F) << "byte " << i << " is a control character: " << r.err;
  }
  EXPECT_EQ(r.err.find("internal check"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("filesystem error"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("json.exception"), std::string::npos) << r.err;
  if (row.contains("pointer") && !row.at("pointer").get<std::string>().empty()) {
    const std::string pointer = row.at("pointer").get<std::string>();
    EXPECT_NE(r.err.find(": " + pointer + ": "), std::string::npos) << "expected pointer " << pointer << ": " << r.err;
  }
  if (row.contains("contains")) {
    EXPECT_NE(r.err.find(expand(row.at("contains").get<std::string>())), std::string::npos) << r.err;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, HostileInput, ::testing::ValuesIn(load_cases()),
                         [](const ::testing::TestParamInfo<HostileCase>& info) { return info.param.name; });

} // namespace
} // namespace partsim::test
