// GPU profile parsing, lookup by name under models/hardware, and serialisation.
#include "partsim/hardware.hpp"

#include "partsim/json_file.hpp"
#include "partsim/json_reader.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

namespace partsim {

const std::vector<std::string>& known_data_types() {
  static const std::vector<std::string> types{"fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4"};
  return types;
}

namespace {

Provenance parse_provenance(JsonReader reader) {
  Provenance p;
  p.kind = reader.choice("kind", {"datasheet", "measured"});
  if (p.kind == "datasheet") {
    p.fields["source"] = reader.string("source");
    if (reader.has("note")) p.fields["note"] = reader.string("note");
  } else {
    for (const char* key : {"device", "date", "tool"}) p.fields[key] = reader.string(key);
    for (const char* key : {"uuid", "driver", "cuda", "cupti", "samples", "spread", "note"})
      if (reader.has(key)) {
        JsonReader v = reader.child(key);
        p.fields[key] = v.value().is_string() ? v.as_string() : v.value().dump();
      }
  }
  reader.finish();
  return p;
}

/** A figure is either {"value": Q, "provenance": {...}} in a profile file, or a bare quantity inline. */
Figure parse_figure(JsonReader reader, Dimension dimension, bool inline_figure) {
  Figure f;
  if (inline_figure) {
    f.value = reader.as_quantity(dimension, Bounds::positive());
    f.provenance.kind = "scenario";
    f.provenance.fields["source"] = reader.source();
    return f;
  }
  f.value = reader.quantity("value", dimension, Bounds::positive());
  f.provenance = parse_provenance(reader.child("provenance"));
  reader.finish();
  return f;
}

} // namespace

GpuProfile parse_gpu_profile(JsonReader& reader) {
  GpuProfile gpu;
  // A profile file carries schema_version and provenance on every figure; an inline object is the user's own.
  const bool inline_figure = !reader.has("schema_version");
  if (!inline_figure) {
    reader.integer("schema_version", kHardwareSchemaVersion, kHardwareSchemaVersion);
    reader.choice("kind", {"gpu"});
  }
  gpu.name = reader.string("name");
  gpu.description = reader.string_or("description", "");
  JsonReader peaks = reader.child("peak_flops");
  if (inline_figure && !peaks.value().is_object()) {
    // Inline shorthand: one peak rate for every data type.
    const Figure f = parse_figure(peaks, Dimension::FlopRate, true);
    for (const std::string& type : known_data_types()) gpu.peak_flops[type] = f;
  } else {
    peaks.expect_object();
    for (const std::string& type : known_data_types())
      if (peaks.has(type)) gpu.peak_flops[type] = parse_figure(peaks.child(type), Dimension::FlopRate, inline_figure);
    peaks.finish();
    if (gpu.peak_flops.empty())
      throw peaks.error(
          fmt::format("expected at least one peak rate, keyed by data type ({})", fmt::join(known_data_types(), ", ")));
  }
  gpu.memory_bandwidth = parse_figure(reader.child("memory_bandwidth"), Dimension::Bandwidth, inline_figure);
  gpu.memory_capacity = parse_figure(reader.child("memory_capacity"), Dimension::Bytes, inline_figure);
  reader.finish();
  return gpu;
}

GpuProfile load_gpu_profile(const std::filesystem::path& data_dir, const std::string& name, const std::string& source,
                            const std::string& pointer) {
  const auto path = data_dir / "models" / "hardware" / (name + ".json");
  if (name.empty() || name.find('/') != std::string::npos || !std::filesystem::is_regular_file(path)) {
    const auto names = list_gpu_profiles(data_dir);
    throw InputError(source, pointer,
                     fmt::format("unknown GPU profile \"{}\"; expected one of {} (files in {}), or an inline object",
                                 name, names.empty() ? "(none found)" : fmt::format("{}", fmt::join(names, ", ")),
                                 (data_dir / "models" / "hardware").string()));
  }
  const nlohmann::json doc = read_json_file(path);
  JsonReader reader(doc, path.string());
  GpuProfile gpu = parse_gpu_profile(reader);
  if (gpu.name != name)
    throw reader.error(fmt::format("profile name \"{}\" does not match its file name \"{}\"", gpu.name, name));
  return gpu;
}

std::vector<std::string> list_gpu_profiles(const std::filesystem::path& data_dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(data_dir / "models" / "hardware", ec))
    if (entry.is_regular_file() && entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

nlohmann::json to_json(const GpuProfile& profile) {
  auto figure = [](const Figure& f) {
    nlohmann::json prov = {{"kind", f.provenance.kind}};
    for (const auto& [k, v] : f.provenance.fields) prov[k] = v;
    return nlohmann::json{{"value", f.value}, {"provenance", prov}};
  };
  nlohmann::json peaks = nlohmann::json::object();
  for (const auto& [type, f] : profile.peak_flops) peaks[type] = figure(f);
  return {{"name", profile.name},
          {"description", profile.description},
          {"peak_flops", peaks},
          {"memory_bandwidth", figure(profile.memory_bandwidth)},
          {"memory_capacity", figure(profile.memory_capacity)}};
}

} // namespace partsim
