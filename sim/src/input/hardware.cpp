// GPU profile parsing (figures, power, GEMM efficiency grids), lookup by name under models/hardware, and serialisation.
#include "partsim/input/hardware.hpp"

#include "partsim/input/data_dir.hpp"
#include "partsim/input/json_file.hpp"
#include "partsim/input/json_reader.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <tuple>

namespace partsim {

namespace {
const std::vector<DataTypeInfo>& data_type_table() {
  // tf32 is stored as fp32; fp8 (e4m3/e5m2) trains with bf16/fp32 state around it (Transformer Engine).
  static const std::vector<DataTypeInfo> table{{"fp64", 8.0, true},  {"fp32", 4.0, true}, {"tf32", 4.0, true},
                                               {"bf16", 2.0, true},  {"fp16", 2.0, true}, {"fp8", 1.0, true},
                                               {"int8", 1.0, false}, {"fp4", 0.5, false}};
  return table;
}

std::vector<std::string> names_of(bool only_trainable) {
  std::vector<std::string> names;
  for (const DataTypeInfo& type : data_type_table())
    if (!only_trainable || type.trainable) names.push_back(type.name);
  return names;
}
} // namespace

const DataTypeInfo* find_data_type(const std::string& name) {
  for (const DataTypeInfo& type : data_type_table())
    if (type.name == name) return &type;
  return nullptr;
}

const std::vector<std::string>& known_data_types() {
  static const std::vector<std::string> names = names_of(false);
  return names;
}

const std::vector<std::string>& training_data_types() {
  static const std::vector<std::string> names = names_of(true);
  return names;
}

Provenance parse_provenance(JsonReader reader) {
  Provenance p;
  p.kind = reader.choice("kind", {"datasheet", "measured", "published_measurement", "assumption"});
  if (p.kind == "published_measurement") {
    // A public benchmark or an engineer's published figure: what, where (URL) and when.
    for (const char* key : {"source", "url", "date"}) p.fields[key] = reader.string(key);
    if (reader.has("note")) p.fields["note"] = reader.string("note");
  } else if (p.kind == "datasheet") {
    p.fields["source"] = reader.string("source");
    if (reader.has("note")) p.fields["note"] = reader.string("note");
  } else if (p.kind == "assumption") {
    p.fields["note"] = reader.string("note");
    if (reader.has("source")) p.fields["source"] = reader.string("source");
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

Figure parse_figure(JsonReader reader, Dimension dimension, const Bounds& bounds) {
  Figure f;
  JsonReader value = reader.child("value");
  if (dimension == Dimension::Power && !value.value().is_number() && !value.value().is_string())
    throw value.error("expected a power in W (a number, or a string such as \"700W\"), got " + value.type_name());
  f.value = value.as_quantity(dimension, bounds);
  f.provenance = parse_provenance(reader.child("provenance"));
  reader.finish();
  return f;
}

Figure parse_fraction_figure(JsonReader reader, const Bounds& bounds) {
  Figure f;
  f.value = reader.child("value").as_number(bounds);
  f.provenance = parse_provenance(reader.child("provenance"));
  reader.finish();
  return f;
}

nlohmann::json to_json(const Figure& figure) {
  nlohmann::json prov = {{"kind", figure.provenance.kind}};
  for (const auto& [k, v] : figure.provenance.fields) prov[k] = v;
  return nlohmann::json{{"value", figure.value}, {"provenance", prov}};
}

namespace {

nlohmann::json to_json(const Provenance& p) {
  nlohmann::json out = {{"kind", p.kind}};
  for (const auto& [k, v] : p.fields) out[k] = v;
  return out;
}

Provenance scenario_provenance(const JsonReader& reader) {
  return {"scenario", {{"source", reader.source()}}};
}

/** A figure is either {"value": Q, "provenance": {...}} in a profile file, or a bare quantity inline. */
Figure read_figure(JsonReader reader, Dimension dimension, const Bounds& bounds, bool inline_figure) {
  if (!inline_figure) return parse_figure(reader, dimension, bounds);
  if (dimension == Dimension::Power && !reader.value().is_number() && !reader.value().is_string())
    throw reader.error("expected a power in W (a number, or a string such as \"700W\"), got " + reader.type_name());
  return {reader.as_quantity(dimension, bounds), scenario_provenance(reader)};
}

// A fraction of peak, never zero: a ten-thousandth (the slowest kernel worth a profile entry) to 1.
const Bounds kEfficiencyBounds = Bounds::closed(1e-4, 1.0);
const Bounds kLaunchOverheadBounds = Bounds::non_negative(1.0);

/** A dimensionless figure (an efficiency): bare inline, {"value", "provenance"} in a file. */
Figure read_fraction(JsonReader reader, bool inline_figure) {
  return inline_figure ? Figure{reader.as_number(kEfficiencyBounds), scenario_provenance(reader)}
                       : parse_fraction_figure(reader, kEfficiencyBounds);
}
constexpr std::int64_t kMaxGemmDimension = std::int64_t{1} << 40;

PowerFigures parse_power(JsonReader reader, bool inline_figure) {
  PowerFigures power;
  power.tdp = read_figure(reader.child("tdp"), Dimension::Power, Bounds::positive(1e6), inline_figure);
  JsonReader idle = reader.child("idle");
  power.idle = read_figure(idle, Dimension::Power, Bounds::non_negative(1e6), inline_figure);
  if (power.idle.value > power.tdp.value)
    throw InputError(
        idle.source(), inline_figure ? idle.pointer() : idle.pointer() + "/value",
        fmt::format("expected an idle power at most the TDP ({:g} W), got {:g} W", power.tdp.value, power.idle.value));
  reader.finish();
  return power;
}

Provenance builtin_curve_provenance() {
  return {"assumption",
          {{"note", fmt::format("partsim default, the profile gives no GEMM efficiency curve: x / (x + {:g}) per "
                                "dimension x of (m, n, k), saturating at {:g} of peak for every data type; below "
                                "the 0.80-0.87 measured for large bf16 GEMMs on A100/H100 and above the 0.51-0.60 "
                                "of MI300X",
                                kDefaultGemmHalfDimension, kDefaultGemmSaturatedEfficiency)},
           {"source", "S. Bekman, Machine Learning Engineering, 'Maximum Achievable Matmul FLOPS' table"}}};
}

GemmEfficiencyCurve builtin_curve(const GpuProfile& gpu) {
  GemmEfficiencyCurve curve;
  curve.half_dimension = kDefaultGemmHalfDimension;
  for (const auto& [type, _] : gpu.peak_flops) curve.saturated_efficiency[type] = kDefaultGemmSaturatedEfficiency;
  curve.provenance = builtin_curve_provenance();
  return curve;
}

std::vector<std::string> peak_types(const GpuProfile& gpu) {
  std::vector<std::string> types;
  for (const auto& [type, _] : gpu.peak_flops) types.push_back(type);
  return types;
}

GemmEfficiencyCurve parse_curve(JsonReader reader, const GpuProfile& gpu, const Provenance& table_provenance,
                                bool inline_figure) {
  GemmEfficiencyCurve curve;
  curve.half_dimension = reader.number("half_dimension", Bounds::closed(1.0, 1e9));
  JsonReader saturated = reader.child("saturated_efficiency");
  saturated.expect_object();
  for (const std::string& type : known_data_types())
    if (saturated.has(type)) {
      JsonReader value = saturated.child(type);
      if (!gpu.peak_flops.contains(type))
        throw value.error(fmt::format("the profile has no peak rate for {}; expected only its data types ({})", type,
                                      fmt::join(peak_types(gpu), ", ")));
      curve.saturated_efficiency[type] = value.as_number(kEfficiencyBounds);
    }
  saturated.finish();
  std::vector<std::string> missing;
  for (const auto& [type, _] : gpu.peak_flops)
    if (!curve.saturated_efficiency.contains(type)) missing.push_back(type);
  if (!missing.empty())
    throw saturated.error(fmt::format("missing {}; expected one efficiency for each data type with a peak rate ({})",
                                      fmt::join(missing, ", "), fmt::join(peak_types(gpu), ", ")));
  if (inline_figure)
    curve.provenance = scenario_provenance(reader);
  else if (reader.has("provenance"))
    curve.provenance = parse_provenance(reader.child("provenance"));
  else
    curve.provenance = table_provenance;
  reader.finish();
  return curve;
}

GemmEfficiencyPoint parse_point(JsonReader reader, const GpuProfile& gpu) {
  GemmEfficiencyPoint point;
  reader.expect_object();
  point.m = reader.integer("m", 1, kMaxGemmDimension);
  point.n = reader.integer("n", 1, kMaxGemmDimension);
  point.k = reader.integer("k", 1, kMaxGemmDimension);
  point.data_type = reader.choice("data_type", known_data_types());
  if (!gpu.peak_flops.contains(point.data_type))
    throw reader.child("data_type")
        .error(fmt::format("the profile has no peak rate for {}; expected one of {}", point.data_type,
                           fmt::join(peak_types(gpu), ", ")));
  point.efficiency = reader.number("efficiency", kEfficiencyBounds);
  reader.finish();
  return point;
}

std::vector<std::int64_t> axis(const std::vector<GemmEfficiencyPoint>& points, const std::vector<std::size_t>& of,
                               std::int64_t GemmEfficiencyPoint::*member) {
  std::vector<std::int64_t> values;
  for (std::size_t i : of) values.push_back(points[i].*member);
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

std::size_t index_in(const std::vector<std::int64_t>& axis, std::int64_t value) {
  return static_cast<std::size_t>(std::lower_bound(axis.begin(), axis.end(), value) - axis.begin());
}

/** Sorts the points of each data type onto its grid; every (m, n, k) of the axes must appear exactly once. */
std::map<std::string, GemmEfficiencyGrid> build_grids(const std::vector<GemmEfficiencyPoint>& points,
                                                      const JsonReader& reader) {
  std::map<std::string, std::vector<std::size_t>> by_type;
  for (std::size_t i = 0; i < points.size(); ++i) by_type[points[i].data_type].push_back(i);
  std::map<std::string, GemmEfficiencyGrid> grids;
  for (const auto& [type, of] : by_type) {
    GemmEfficiencyGrid grid;
    grid.m = axis(points, of, &GemmEfficiencyPoint::m);
    grid.n = axis(points, of, &GemmEfficiencyPoint::n);
    grid.k = axis(points, of, &GemmEfficiencyPoint::k);
    constexpr std::size_t kUnset = static_cast<std::size_t>(-1);
    std::vector<std::size_t> source(grid.m.size() * grid.n.size() * grid.k.size(), kUnset);
    grid.efficiency.assign(source.size(), 0.0);
    for (std::size_t i : of) {
      const GemmEfficiencyPoint& p = points[i];
      const std::size_t cell =
          (index_in(grid.m, p.m) * grid.n.size() + index_in(grid.n, p.n)) * grid.k.size() + index_in(grid.k, p.k);
      if (source[cell] != kUnset)
        throw InputError(reader.source(), fmt::format("{}/{}", reader.pointer(), i),
                         fmt::format("duplicate point: m={} n={} k={} {} is also at {}/{}", p.m, p.n, p.k, type,
                                     reader.pointer(), source[cell]));
      source[cell] = i;
      grid.efficiency[cell] = p.efficiency;
    }
    for (std::size_t cell = 0; cell < source.size(); ++cell) {
      if (source[cell] != kUnset) continue;
      const std::size_t ik = cell % grid.k.size();
      const std::size_t in = (cell / grid.k.size()) % grid.n.size();
      const std::size_t im = cell / (grid.k.size() * grid.n.size());
      throw reader.error(fmt::format("the {} points do not form a full grid: {} m x {} n x {} k values need {} "
                                     "points, found {}; missing m={} n={} k={}",
                                     type, grid.m.size(), grid.n.size(), grid.k.size(), source.size(), of.size(),
                                     grid.m[im], grid.n[in], grid.k[ik]));
    }
    grids.emplace(type, std::move(grid));
  }
  return grids;
}

/** The points of each data type in log space, for inverse-distance weighting; a shape may appear once per type. */
std::map<std::string, GemmEfficiencyScatter> build_scatters(const std::vector<GemmEfficiencyPoint>& points,
                                                            const JsonReader& reader) {
  std::map<std::string, GemmEfficiencyScatter> scatters;
  std::map<std::tuple<std::string, std::int64_t, std::int64_t, std::int64_t>, std::size_t> seen;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const GemmEfficiencyPoint& p = points[i];
    const auto [at, fresh] = seen.try_emplace({p.data_type, p.m, p.n, p.k}, i);
    if (!fresh)
      throw InputError(reader.source(), fmt::format("{}/{}", reader.pointer(), i),
                       fmt::format("duplicate point: m={} n={} k={} {} is also at {}/{}", p.m, p.n, p.k, p.data_type,
                                   reader.pointer(), at->second));
    GemmEfficiencyScatter& scatter = scatters[p.data_type];
    const std::array<double, 3> x{std::log(static_cast<double>(p.m)), std::log(static_cast<double>(p.n)),
                                  std::log(static_cast<double>(p.k))};
    for (std::size_t a = 0; a < 3; ++a) {
      scatter.log_min[a] = scatter.log_shape.empty() ? x[a] : std::min(scatter.log_min[a], x[a]);
      scatter.log_max[a] = scatter.log_shape.empty() ? x[a] : std::max(scatter.log_max[a], x[a]);
    }
    scatter.log_shape.push_back(x);
    scatter.efficiency.push_back(p.efficiency);
  }
  return scatters;
}

GemmEfficiencyTable parse_gemm_efficiency(JsonReader reader, const GpuProfile& gpu, bool inline_figure) {
  GemmEfficiencyTable table;
  table.provenance = inline_figure ? scenario_provenance(reader) : parse_provenance(reader.child("provenance"));
  table.layout = reader.enum_choice_or("layout", GemmPointLayout::Grid);
  JsonReader points = reader.child("points");
  for (const JsonReader& point : points.elements(0, 1'000'000)) table.points.push_back(parse_point(point, gpu));
  if (table.layout == GemmPointLayout::Grid)
    table.grids = build_grids(table.points, points);
  else
    table.scatters = build_scatters(table.points, points);
  if (auto curve = reader.optional_child("default_curve"))
    table.default_curve = parse_curve(*curve, gpu, table.provenance, inline_figure);
  else
    table.default_curve = builtin_curve(gpu);
  reader.finish();
  return table;
}

AttentionEfficiencyTable parse_attention_efficiency(JsonReader reader, const GpuProfile& gpu, bool inline_figure) {
  AttentionEfficiencyTable table;
  table.provenance = inline_figure ? scenario_provenance(reader) : parse_provenance(reader.child("provenance"));
  table.data_type = reader.choice("data_type", {"bf16", "fp16"});
  if (!gpu.peak_flops.contains(table.data_type))
    throw reader.child("data_type")
        .error(fmt::format("the profile has no peak rate for {}; expected one of {}", table.data_type,
                           fmt::join(peak_types(gpu), ", ")));
  JsonReader points = reader.child("points");
  for (JsonReader point : points.elements(1, 10'000)) {
    point.expect_object();
    AttentionEfficiencyPoint p;
    p.sequence_length = point.integer("sequence_length", 1, kMaxGemmDimension);
    p.head_dim = point.integer("head_dim", 1, 1'000'000);
    JsonReader causal = point.child("causal");
    if (!causal.value().is_boolean()) throw causal.error("expected true or false, got " + causal.type_name());
    p.causal = causal.value().get<bool>();
    p.efficiency = point.number("efficiency", kEfficiencyBounds);
    point.finish();
    for (const AttentionEfficiencyPoint& q : table.points)
      if (q.sequence_length == p.sequence_length && q.head_dim == p.head_dim && q.causal == p.causal)
        throw point.error(fmt::format("a second point for sequence_length {}, head_dim {}, causal {}; expected one",
                                      p.sequence_length, p.head_dim, p.causal));
    table.points.push_back(p);
  }
  reader.finish();
  return table;
}

Figure default_memory_efficiency() {
  return {1.0,
          {"assumption",
           {{"note", "partsim default, the profile gives no memory_efficiency: memory-bound kernels are priced at the "
                     "full memory_bandwidth (stream benchmarks reach 85-89% of the datasheet figure on A100/H100)"}}}};
}

Figure default_launch_overhead() {
  return {kDefaultKernelLaunchOverhead,
          {"assumption",
           {{"note", fmt::format("partsim default, the profile gives no kernel_launch_overhead: {:g} us, a typical "
                                 "back-to-back kernel launch on CUDA or HIP (2-5 us)",
                                 kDefaultKernelLaunchOverhead * 1e6)}}}};
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
    const Figure f = read_figure(peaks, Dimension::FlopRate, Bounds::positive(), true);
    for (const std::string& type : known_data_types()) gpu.peak_flops[type] = f;
  } else {
    peaks.expect_object();
    for (const std::string& type : known_data_types())
      if (peaks.has(type))
        gpu.peak_flops[type] = read_figure(peaks.child(type), Dimension::FlopRate, Bounds::positive(), inline_figure);
    peaks.finish();
    if (gpu.peak_flops.empty())
      throw peaks.error(
          fmt::format("expected at least one peak rate, keyed by data type ({})", fmt::join(known_data_types(), ", ")));
  }
  gpu.memory_bandwidth =
      read_figure(reader.child("memory_bandwidth"), Dimension::Bandwidth, Bounds::positive(), inline_figure);
  gpu.memory_capacity =
      read_figure(reader.child("memory_capacity"), Dimension::Bytes, Bounds::positive(), inline_figure);
  if (auto efficiency = reader.optional_child("memory_efficiency"))
    gpu.memory_efficiency = read_fraction(*efficiency, inline_figure);
  else
    gpu.memory_efficiency = default_memory_efficiency();
  if (auto overhead = reader.optional_child("kernel_launch_overhead"))
    gpu.kernel_launch_overhead = read_figure(*overhead, Dimension::Time, kLaunchOverheadBounds, inline_figure);
  else
    gpu.kernel_launch_overhead = default_launch_overhead();
  if (auto power = reader.optional_child("power")) gpu.power = parse_power(*power, inline_figure);
  if (auto sms = reader.optional_child("sm_count")) {
    constexpr std::int64_t kMaxSms = 100000;
    if (inline_figure) {
      gpu.sm_count = Figure{static_cast<double>(sms->as_integer(1, kMaxSms)), scenario_provenance(*sms)};
    } else {
      Figure f;
      f.value = static_cast<double>(sms->child("value").as_integer(1, kMaxSms));
      f.provenance = parse_provenance(sms->child("provenance"));
      sms->finish();
      gpu.sm_count = f;
    }
  }
  if (auto sustained = reader.optional_child("sustained_compute"))
    gpu.sustained_compute = read_fraction(*sustained, inline_figure);
  if (auto table = reader.optional_child("gemm_efficiency"))
    gpu.gemm_efficiency = parse_gemm_efficiency(*table, gpu, inline_figure);
  else {
    gpu.gemm_efficiency.provenance = builtin_curve_provenance();
    gpu.gemm_efficiency.default_curve = builtin_curve(gpu);
  }
  if (auto table = reader.optional_child("attention_efficiency"))
    gpu.attention_efficiency = parse_attention_efficiency(*table, gpu, inline_figure);
  if (auto table = reader.optional_child("attention_efficiency_triton"))
    gpu.attention_efficiency_triton = parse_attention_efficiency(*table, gpu, inline_figure);
  reader.finish();
  return gpu;
}

GpuProfile parse_gpu_profile_over_base(JsonReader& reader, const std::filesystem::path& data_dir) {
  JsonReader base = reader.child("base");
  GpuProfile gpu = load_gpu_profile(data_dir, base.as_string(), base.source(), base.pointer());
  std::vector<std::string> replaced;
  const auto replace = [&](const char* key, auto read) {
    if (auto f = reader.optional_child(key)) {
      read(*f);
      replaced.emplace_back(key);
    }
  };
  replace("sustained_compute", [&](JsonReader f) { gpu.sustained_compute = read_fraction(f, true); });
  replace("memory_efficiency", [&](JsonReader f) { gpu.memory_efficiency = read_fraction(f, true); });
  replace("memory_capacity",
          [&](JsonReader f) { gpu.memory_capacity = read_figure(f, Dimension::Bytes, Bounds::positive(), true); });
  replace("kernel_launch_overhead", [&](JsonReader f) {
    gpu.kernel_launch_overhead = read_figure(f, Dimension::Time, kLaunchOverheadBounds, true);
  });
  for (const auto& [key, value] : reader.value().items())
    if (key != "base" && std::find(replaced.begin(), replaced.end(), key) == replaced.end())
      throw InputError(reader.source(), reader.pointer() + "/" + escape_pointer_token(key),
                       "not a figure a scenario can replace in a profile it names as base; expected "
                       "sustained_compute, memory_efficiency, memory_capacity or kernel_launch_overhead (or an "
                       "inline profile without base)");
  if (replaced.empty())
    throw reader.error(fmt::format("names the profile \"{}\" as base and replaces none of its figures; expected at "
                                   "least one of sustained_compute, memory_efficiency, memory_capacity and "
                                   "kernel_launch_overhead, or the profile's name alone",
                                   gpu.name));
  gpu.description += fmt::format(" (the scenario replaces {})", fmt::join(replaced, ", "));
  return gpu;
}

GpuProfile load_gpu_profile(const std::filesystem::path& data_dir, const std::string& name, const std::string& source,
                            const std::string& pointer) {
  const auto path = library_file(data_dir, kGpuProfiles, name, source, pointer, "or an inline object");
  const nlohmann::json doc = read_json_file(path);
  JsonReader reader(doc, path.string());
  GpuProfile gpu = parse_gpu_profile(reader);
  if (gpu.name != name)
    throw reader.error(fmt::format("profile name \"{}\" does not match its file name \"{}\"", gpu.name, name));
  return gpu;
}

std::vector<std::string> list_gpu_profiles(const std::filesystem::path& data_dir) {
  return list_library(data_dir, kGpuProfiles);
}

nlohmann::json to_json(const GpuProfile& profile) {
  nlohmann::json peaks = nlohmann::json::object();
  for (const auto& [type, f] : profile.peak_flops) peaks[type] = to_json(f);
  const GemmEfficiencyTable& table = profile.gemm_efficiency;
  nlohmann::json points = nlohmann::json::array();
  for (const GemmEfficiencyPoint& p : table.points)
    points.push_back({{"m", p.m}, {"n", p.n}, {"k", p.k}, {"data_type", p.data_type}, {"efficiency", p.efficiency}});
  nlohmann::json out = {{"name", profile.name},
                        {"description", profile.description},
                        {"peak_flops", peaks},
                        {"memory_bandwidth", to_json(profile.memory_bandwidth)},
                        {"memory_capacity", to_json(profile.memory_capacity)},
                        {"kernel_launch_overhead", to_json(profile.kernel_launch_overhead)},
                        {"gemm_efficiency",
                         {{"provenance", to_json(table.provenance)},
                          {"layout", enum_name(table.layout)},
                          {"default_curve",
                           {{"half_dimension", table.default_curve.half_dimension},
                            {"saturated_efficiency", table.default_curve.saturated_efficiency},
                            {"provenance", to_json(table.default_curve.provenance)}}},
                          {"points", points}}}};
  if (profile.power) out["power"] = {{"tdp", to_json(profile.power->tdp)}, {"idle", to_json(profile.power->idle)}};
  out["memory_efficiency"] = to_json(profile.memory_efficiency);
  if (profile.sm_count) out["sm_count"] = to_json(*profile.sm_count);
  if (profile.sustained_compute) out["sustained_compute"] = to_json(*profile.sustained_compute);
  const auto attention_json = [](const AttentionEfficiencyTable& attention) {
    nlohmann::json attention_points = nlohmann::json::array();
    for (const AttentionEfficiencyPoint& p : attention.points)
      attention_points.push_back({{"sequence_length", p.sequence_length},
                                  {"head_dim", p.head_dim},
                                  {"causal", p.causal},
                                  {"efficiency", p.efficiency}});
    return nlohmann::json{{"provenance", to_json(attention.provenance)},
                          {"data_type", attention.data_type},
                          {"points", attention_points}};
  };
  if (const auto& attention = profile.attention_efficiency) out["attention_efficiency"] = attention_json(*attention);
  if (const auto& triton = profile.attention_efficiency_triton)
    out["attention_efficiency_triton"] = attention_json(*triton);
  return out;
}

} // namespace partsim
