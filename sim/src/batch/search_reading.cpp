// Reading a search's JSON (schema partsim.search) back into the SearchResult that search_json wrote it from: for
// `partsim merge` and the GUI. Strict: what does not read back as partsim search writes it is an error.
#include "partsim/batch/search.hpp"
#include "partsim/batch/search_merge.hpp"

#include "partsim/common/error.hpp"
#include "partsim/input/json_reader.hpp"
#include "partsim/report/report_writers.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace partsim {

namespace {

/** Most axes, constraints, derived or fixed values a search's JSON may hold. */
constexpr std::size_t kMaxSpaceParts = 10'000;

/** A number, or null for an infinite one (nlohmann writes infinity as null: time to train at 0 tokens/s). */
double number_or_infinity(JsonReader& object, std::string_view key) {
  JsonReader value = object.child(key);
  if (value.value().is_null()) return std::numeric_limits<double>::infinity();
  return value.as_number(Bounds{});
}

std::optional<double> optional_number(JsonReader& object, std::string_view key) {
  JsonReader value = object.child(key);
  if (value.value().is_null()) return std::nullopt;
  return value.as_number(Bounds{});
}

std::optional<double> number_if_present(JsonReader& object, std::string_view key) {
  if (!object.has(key)) return std::nullopt;
  return object.child(key).as_number(Bounds{});
}

SearchFigures read_figures(JsonReader figures) {
  figures.expect_object();
  SearchFigures f;
  f.fidelity = figures.choice("fidelity", {"fast", "faithful"});
  f.collective_fidelity = figures.string("collective_fidelity");
  f.rank_value = number_or_infinity(figures, "rank_value");
  f.pareto_value = number_or_infinity(figures, "pareto_value");
  f.makespan = figures.number("makespan_s", Bounds{});
  f.samples_per_s = figures.number("throughput_samples_per_s", Bounds{});
  f.tokens_per_s = optional_number(figures, "tokens_per_s");
  f.mfu = optional_number(figures, "mfu");
  f.cost_per_million_tokens = optional_number(figures, "cost_per_million_tokens");
  f.energy_per_token = optional_number(figures, "energy_per_token_j");
  JsonReader b = figures.child("breakdown_per_rank");
  b.expect_object();
  f.breakdown.compute = b.number("compute_s", Bounds{});
  f.breakdown.communication = b.number("communication_s", Bounds{});
  f.breakdown.wait = b.number("wait_s", Bounds{});
  f.breakdown.tail_idle = b.number("tail_idle_s", Bounds{});
  f.breakdown.bubble = number_if_present(b, "bubble_s");
  f.breakdown.tensor_exposed = number_if_present(b, "tensor_exposed_s");
  f.breakdown.pipeline_exposed = number_if_present(b, "pipeline_exposed_s");
  f.breakdown.data_exposed = number_if_present(b, "data_exposed_s");
  f.breakdown.expert_exposed = number_if_present(b, "expert_exposed_s");
  f.breakdown.context_exposed = number_if_present(b, "context_exposed_s");
  b.finish();
  figures.finish();
  return f;
}

SearchSpace read_space(JsonReader space) {
  space.expect_object();
  SearchSpace out;
  for (JsonReader axis : space.child("axes").elements(1, kMaxSpaceParts)) {
    axis.expect_object();
    SweepAxis a;
    a.pointer = axis.string("pointer");
    if (a.pointer.empty() || a.pointer[0] != '/')
      throw axis.child("pointer").error(fmt::format("expected a JSON pointer, got \"{}\"", a.pointer));
    for (const JsonReader& v : axis.child("values").elements(1, kMaxSweepPoints)) a.values.push_back(v.value());
    JsonReader labels = axis.child("labels");
    for (const JsonReader& l : labels.elements(a.values.size(), a.values.size())) a.labels.push_back(l.as_string());
    axis.finish();
    out.axes.push_back(std::move(a));
  }
  if (sweep_size(out.axes) > kMaxSweepPoints)
    throw space.child("axes").error(fmt::format("expected at most {} points, got more", kMaxSweepPoints));
  JsonReader sets = space.child("set");
  sets.expect_object();
  for (const auto& [pointer, value] : sets.value().items()) out.sets.push_back({pointer, value});
  JsonReader derived = space.child("derived");
  derived.expect_object();
  for (const auto& [pointer, text] : derived.value().items()) {
    const std::string at = derived.pointer() + "/" + escape_pointer_token(pointer);
    if (!text.is_string()) throw InputError(derived.source(), at, "expected \"default\" or a product, as a string");
    out.derived.push_back(parse_derived(pointer + "=" + text.get<std::string>(), derived.source(), at));
  }
  const std::vector<JsonReader> constraints = space.child("constraints").elements(0, kMaxSpaceParts);
  for (const JsonReader& c : constraints)
    out.constraints.push_back(parse_constraint(c.as_string(), c.source(), c.pointer()));
  for (const JsonReader& note : space.child("notes").elements(0, kMaxSpaceParts)) out.notes.push_back(note.as_string());
  space.finish();
  return out;
}

/** A metric by its name; the rest of its object is checked against the metric's own (search_result_from_json). */
SearchMetric read_metric(JsonReader metric) {
  metric.expect_object();
  JsonReader name = metric.child("name");
  try {
    return parse_search_metric(name.as_string(), "");
  } catch (const InputError& e) {
    throw name.error(e.detail());
  }
}

/** The point of the space with this index: its axis values by the mixed radix of the axes, first axis slowest. */
SweepPoint space_point(const std::vector<SweepAxis>& axes, std::size_t index) {
  SweepPoint p;
  p.index = index;
  p.overrides.resize(axes.size());
  p.labels.resize(axes.size());
  std::size_t rest = index;
  for (std::size_t a = axes.size(); a-- > 0;) {
    const std::size_t v = rest % axes[a].values.size();
    rest /= axes[a].values.size();
    p.overrides[a] = {axes[a].pointer, axes[a].values[v]};
    p.labels[a] = axes[a].labels[v];
  }
  return p;
}

SearchRow read_row(JsonReader point, const std::vector<SweepAxis>& axes, std::size_t expected_index) {
  point.expect_object();
  SearchRow row;
  const auto index = static_cast<std::size_t>(point.integer("point", 0, kMaxSweepPoints - 1));
  if (index != expected_index)
    throw point.child("point").error(
        fmt::format("expected point {} (the points of the shard, in index order), got {}", expected_index, index));
  row.point = space_point(axes, index);
  JsonReader values = point.child("values");
  nlohmann::json expected = nlohmann::json::object();
  for (const Override& o : row.point.overrides) expected[o.pointer] = o.value;
  if (values.value() != expected)
    throw values.error(
        fmt::format("expected the axis values of point {}: {}, got {}", index, expected.dump(), values.value().dump()));
  row.status = point.enum_choice<PointStatus>("status");
  row.gpus = point.integer("gpus", 0, std::numeric_limits<std::int64_t>::max());
  row.reason = point.has("reason") ? point.string("reason") : std::string();
  row.detail = point.has("error") ? point.string("error") : std::string();
  const std::optional<double> memory = number_if_present(point, "memory_per_gpu_bytes");
  const std::optional<double> capacity = number_if_present(point, "memory_capacity_bytes");
  if (memory.has_value() != capacity.has_value())
    throw point.error("expected both memory_per_gpu_bytes and memory_capacity_bytes, or neither");
  if (memory) {
    row.memory = MemoryBreakdown{};
    row.memory->parameters = *memory; // only the total is kept
    row.memory->capacity = *capacity;
  }
  if (auto fast = point.optional_child("fast")) row.fast = read_figures(*fast);
  if (auto faithful = point.optional_child("faithful")) row.faithful = read_figures(*faithful);
  if ((row.status == PointStatus::Simulated) != (row.fast.has_value()))
    throw point.error(fmt::format("expected \"fast\" figures for a simulated point only, got a {} point {} them",
                                  to_string(row.status), row.fast ? "with" : "without"));
  point.finish();
  row.overrides = row.point.overrides;
  return row;
}

std::string shortened(const nlohmann::json& value) {
  const std::string text = value.dump();
  return text.size() <= 200 ? text : text.substr(0, 200) + "...";
}

} // namespace

SearchResult search_result_from_json(const nlohmann::json& json, const std::string& source) {
  JsonReader root(json, source);
  root.expect_object();
  root.choice("schema", {"partsim.search"});
  root.integer("schema_version", kSearchSchemaVersion, kSearchSchemaVersion);
  const std::string version = root.string("partsim_version");
  if (version != partsim_version())
    throw root.child("partsim_version")
        .error(fmt::format("expected a search written by this partsim ({}), got {}", partsim_version(), version));
  SearchResult r;
  r.scenario = root.string("scenario");
  JsonReader document = root.child("scenario_document");
  document.expect_object();
  r.scenario_document = document.value();
  r.space = read_space(root.child("space"));
  JsonReader shard = root.child("shard");
  shard.expect_object();
  r.shards = static_cast<std::size_t>(shard.integer("count", 1, kMaxSweepPoints));
  r.shard = static_cast<std::size_t>(shard.integer("index", 0, static_cast<std::int64_t>(r.shards) - 1));
  shard.finish();
  r.rank_by = read_metric(root.child("rank_by"));
  r.pareto = read_metric(root.child("pareto_against"));
  JsonReader tokens = root.child("tokens");
  r.tokens = tokens.value().is_null() ? 0.0 : tokens.as_number(Bounds::positive());
  r.refine = static_cast<std::size_t>(root.integer("refine", 0, kMaxSweepPoints));
  r.top = static_cast<std::size_t>(root.integer("top", 0, kMaxSweepPoints));

  const std::size_t size = sweep_size(r.space.axes);
  const std::size_t expected_rows = size / r.shards + (r.shard < size % r.shards ? 1 : 0);
  const std::vector<JsonReader> points = root.child("points").elements(expected_rows, expected_rows);
  for (std::size_t k = 0; k < points.size(); ++k)
    r.rows.push_back(read_row(points[k], r.space.axes, r.shard + k * r.shards));

  // The rest is derived from the above: it must be what search_json writes for it, key by key.
  // Through its text, as the file was: an infinite figure is null there.
  const nlohmann::json again = nlohmann::json::parse(search_json(r).dump());
  for (const auto& [key, value] : json.items()) {
    if (!again.contains(key)) throw InputError(source, "/" + escape_pointer_token(key), "unknown key");
    if (again[key] == value) continue;
    const std::string at = json_first_difference(again[key], value, "/" + escape_pointer_token(key));
    const nlohmann::json::json_pointer p(at);
    throw InputError(source, at,
                     fmt::format("expected {} (what partsim search writes for these points), got {}",
                                 shortened(again.contains(p) ? again.at(p) : nlohmann::json()),
                                 shortened(json.contains(p) ? json.at(p) : nlohmann::json())));
  }
  for (const auto& [key, value] : again.items())
    if (!json.contains(key)) throw InputError(source, "/" + escape_pointer_token(key), "required key is missing");
  return r;
}

} // namespace partsim
