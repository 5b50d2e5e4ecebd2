// Raw samples CSV (RFC 4180 quoting for names with commas) with the device in `# key: value` lines.
#include "partsim/calibrate/samples_csv.hpp"

#include "partsim/common/error.hpp"
#include "partsim/common/output_file.hpp"
#include "partsim/input/json_file.hpp"

#include <fmt/format.h>

#include <charconv>
#include <fstream>
#include <istream>
#include <ostream>
#include <sstream>

namespace partsim::calibrate {

namespace {

std::string quoted(const std::string& field) {
  if (field.find_first_of(",\"\n\r") == std::string::npos) return field;
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

/** Splits one CSV record; false when a quoted field is not closed. */
bool split_record(const std::string& line, std::vector<std::string>& fields) {
  fields.assign(1, "");
  bool in_quotes = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (in_quotes) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        in_quotes = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      in_quotes = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return !in_quotes;
}

template <typename T>
T parse_number(const std::string& text, const std::string& source, std::size_t line, const char* column) {
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size())
    throw InputError(source, fmt::format("line {}", line),
                     fmt::format("column {}: expected an integer, got \"{}\"", column, text));
  return value;
}

const std::vector<std::pair<std::string, std::string DeviceInfo::*>>& text_keys() {
  static const std::vector<std::pair<std::string, std::string DeviceInfo::*>> keys{
      {"device", &DeviceInfo::name},   {"uuid", &DeviceInfo::uuid},
      {"driver", &DeviceInfo::driver}, {"cuda", &DeviceInfo::cuda},
      {"cupti", &DeviceInfo::cupti},   {"compute_capability", &DeviceInfo::compute_capability},
      {"date", &DeviceInfo::date},     {"tool", &DeviceInfo::tool}};
  return keys;
}

} // namespace

void write_samples_csv(std::ostream& out, const DeviceInfo& device, const std::vector<Sample>& samples) {
  for (const auto& [key, member] : text_keys()) out << "# " << key << ": " << device.*member << '\n';
  out << "# memory_bytes: " << device.memory_bytes << '\n'
      << "# multiprocessors: " << device.multiprocessors << '\n'
      << "# device_count: " << device.device_count << '\n'
      << "# index: " << device.index << '\n'
      << kSamplesCsvHeader << '\n';
  for (const Sample& s : samples)
    out << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", to_string(s.kind), quoted(s.label),
                       quoted(s.data_type), s.m, s.n, s.k, s.bytes, quoted(s.variant), s.device, s.peer, s.ranks,
                       s.batch, s.repeat, s.start_ns, s.end_ns, s.end_ns - s.start_ns);
}

void write_samples_csv(const std::filesystem::path& path, const DeviceInfo& device,
                       const std::vector<Sample>& samples) {
  write_file_atomically(path, [&](std::ostream& out) { write_samples_csv(out, device, samples); });
}

SampleFile read_samples_csv(std::istream& in, const std::string& source) {
  SampleFile file;
  std::string line;
  std::size_t number = 0;
  bool header = false;
  std::vector<std::string> f;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (line.starts_with("# ")) {
      const auto colon = line.find(": ");
      if (colon == std::string::npos) continue;
      const std::string key = line.substr(2, colon - 2);
      const std::string value = line.substr(colon + 2);
      for (const auto& [name, member] : text_keys())
        if (key == name) file.device.*member = value;
      if (key == "memory_bytes")
        file.device.memory_bytes = parse_number<std::int64_t>(value, source, number, key.c_str());
      if (key == "multiprocessors") file.device.multiprocessors = parse_number<int>(value, source, number, key.c_str());
      if (key == "device_count") file.device.device_count = parse_number<int>(value, source, number, key.c_str());
      if (key == "index") file.device.index = parse_number<int>(value, source, number, key.c_str());
      continue;
    }
    if (!header) {
      if (line != kSamplesCsvHeader)
        throw InputError(source, fmt::format("line {}", number),
                         fmt::format("expected the header \"{}\", got \"{}\"", kSamplesCsvHeader, line));
      header = true;
      continue;
    }
    if (!split_record(line, f) || f.size() != 16)
      throw InputError(source, fmt::format("line {}", number),
                       fmt::format("expected 16 comma-separated fields, got {}", f.size()));
    const auto kind = sample_kind_from_string(f[0]);
    if (!kind) throw InputError(source, fmt::format("line {}", number), fmt::format("unknown kind \"{}\"", f[0]));
    Sample s;
    s.kind = *kind;
    s.label = f[1];
    s.data_type = f[2];
    s.m = parse_number<std::int64_t>(f[3], source, number, "m");
    s.n = parse_number<std::int64_t>(f[4], source, number, "n");
    s.k = parse_number<std::int64_t>(f[5], source, number, "k");
    s.bytes = parse_number<std::int64_t>(f[6], source, number, "bytes");
    s.variant = f[7];
    s.device = parse_number<int>(f[8], source, number, "device");
    s.peer = parse_number<int>(f[9], source, number, "peer");
    s.ranks = parse_number<int>(f[10], source, number, "ranks");
    s.batch = parse_number<int>(f[11], source, number, "batch");
    s.repeat = parse_number<int>(f[12], source, number, "repeat");
    s.start_ns = parse_number<std::uint64_t>(f[13], source, number, "start_ns");
    s.end_ns = parse_number<std::uint64_t>(f[14], source, number, "end_ns");
    if (s.end_ns < s.start_ns) throw InputError(source, fmt::format("line {}", number), "end_ns is before start_ns");
    file.samples.push_back(std::move(s));
  }
  if (!header) throw InputError(source, "", fmt::format("no header row \"{}\"", kSamplesCsvHeader));
  return file;
}

SampleFile read_samples_csv(const std::filesystem::path& path) {
  // Bounded: a device such as /dev/zero is refused, not read line by endless line.
  constexpr std::size_t kMaxSamplesBytes = std::size_t{1} << 30;
  std::istringstream in(read_text_file(path, kMaxSamplesBytes, "a samples CSV file"));
  return read_samples_csv(in, path.string());
}

} // namespace partsim::calibrate
