// The serving workload: its distributions, orchestration presets and parser.
#include "partsim/serving/serving_spec.hpp"

#include "partsim/common/error.hpp"
#include "partsim/input/csv.hpp"
#include "partsim/input/json_reader.hpp"
#include "partsim/input/scenario.hpp"
#include "partsim/input/workload_library.hpp"
#include "partsim/model/training.hpp"
#include "partsim/serving/llm_cost.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <numbers>

namespace partsim {

namespace {

/** Replicas over all stages, at most (each is a SimGrid actor with its own stack). */
constexpr std::int64_t kMaxServingReplicas = 65536;

/** A standard normal value (Box-Muller; the second value of the pair is not kept). */
double standard_normal(Xoshiro256StarStar& rng) {
  const double u1 = 1.0 - rng.uniform(); // (0, 1]
  const double u2 = rng.uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

/** Gamma of shape k and scale 1 (Marsaglia and Tsang 2000; shape < 1 by Gamma(k + 1) x U^(1/k)). */
double standard_gamma(double k, Xoshiro256StarStar& rng) {
  if (k < 1.0) {
    const double u = 1.0 - rng.uniform();
    return standard_gamma(k + 1.0, rng) * std::pow(u, 1.0 / k);
  }
  const double d = k - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    const double z = standard_normal(rng);
    const double t = 1.0 + c * z;
    if (t <= 0.0) continue;
    const double v = t * t * t;
    const double u = 1.0 - rng.uniform();
    if (std::log(u) < 0.5 * z * z + d - d * v + d * std::log(v)) return d * v;
  }
}

/** The whole of `text` as a number (no spaces, no unit), or nothing. */
std::optional<double> parse_number(std::string_view text) {
  double value = 0.0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

/** An empirical time's values: the CSV column `column` (seconds, numbers >= 0), with their mean and cv. */
TimeDistribution read_empirical(const std::filesystem::path& path, const std::string& column) {
  auto values = std::make_shared<std::vector<double>>();
  read_csv_columns(
      path, {column},
      [&](const CsvRow& row) {
        const auto v = parse_number(row.fields[0]);
        if (!v || !std::isfinite(*v) || *v < 0 || *v > 1e6)
          throw csv_error(path, row.line,
                          fmt::format("'{}' in column '{}'; expected a time in seconds (a number from 0 to 1e6)",
                                      row.fields[0], column));
        values->push_back(*v);
      },
      "file of times");
  if (values->empty()) throw InputError(path.string(), "", "no times after the header; expected one row each");
  double sum = 0.0;
  for (double v : *values) sum += v;
  const double n = static_cast<double>(values->size());
  const double mean = sum / n;
  double squares = 0.0;
  for (double v : *values) squares += (v - mean) * (v - mean);
  TimeDistribution d;
  d.kind = DistributionKind::Empirical;
  d.mean = mean;
  d.cv = mean > 0 ? std::sqrt(squares / n) / mean : 0.0;
  d.values = std::move(values);
  return d;
}

TimeDistribution parse_distribution(JsonReader reader) {
  TimeDistribution d;
  d.kind = reader.enum_choice<DistributionKind>("distribution");
  if (d.kind == DistributionKind::Empirical) {
    for (const char* key : {"mean", "cv"})
      if (reader.has(key))
        throw InputError(reader.source(), reader.pointer() + "/" + key,
                         "an empirical time's mean and cv are those of its values; expected no such key");
    const std::filesystem::path path = path_from_scenario(reader.source(), reader.string("csv"));
    const std::string column = reader.string("column");
    reader.finish();
    try {
      return read_empirical(path, column);
    } catch (const CsvMissingColumn& e) {
      throw InputError(reader.source(), reader.pointer() + "/column", e.what());
    } catch (const InputError& e) {
      throw InputError(reader.source(), reader.pointer() + "/csv", e.what());
    }
  }
  for (const char* key : {"csv", "column"})
    if (reader.has(key))
      throw InputError(reader.source(), reader.pointer() + "/" + key,
                       fmt::format("only an empirical time is read from a file; expected no such key with \"{}\"",
                                   enum_name(d.kind)));
  d.mean = reader.quantity("mean");
  const bool shaped = d.kind == DistributionKind::LogNormal || d.kind == DistributionKind::Gamma;
  if (shaped) {
    d.cv = reader.number("cv");
  } else if (reader.has("cv")) {
    throw InputError(
        reader.source(), reader.pointer() + "/cv",
        fmt::format("a {} time has no cv to set (fixed: 0, exponential: 1); expected no such key", enum_name(d.kind)));
  } else {
    d.cv = d.kind == DistributionKind::Exponential ? 1.0 : 0.0;
  }
  if (d.kind != DistributionKind::Fixed && d.mean <= 0.0)
    throw InputError(reader.source(), reader.pointer() + "/mean",
                     fmt::format("a {} time needs a mean > 0", enum_name(d.kind)));
  reader.finish();
  return d;
}

TokenLengths parse_lengths(JsonReader reader) {
  TokenLengths d;
  d.kind = reader.enum_choice<LengthKind>("distribution");
  const bool uniform = d.kind == LengthKind::Uniform;
  const bool shaped = d.kind == LengthKind::LogNormal || d.kind == LengthKind::Gamma;
  if (!uniform) d.mean = reader.number("mean");
  if (shaped) d.cv = reader.number("cv");
  if (uniform || reader.has("min")) d.min = reader.integer("min");
  if (uniform || reader.has("max")) d.max = reader.integer("max");
  if (uniform && reader.has("mean"))
    throw InputError(reader.source(), reader.pointer() + "/mean",
                     "a uniform length has its mean from `min` and `max`; expected no such key");
  if (!shaped && reader.has("cv"))
    throw InputError(reader.source(), reader.pointer() + "/cv",
                     fmt::format("a {} length has no cv to set; expected no such key", enum_name(d.kind)));
  if (d.kind == LengthKind::Fixed && (reader.has("min") || reader.has("max")))
    throw InputError(reader.source(), reader.pointer() + (reader.has("min") ? "/min" : "/max"),
                     "a fixed length is its mean; expected no min or max");
  if (d.max > 0 && d.max < d.min)
    throw InputError(reader.source(), reader.pointer() + "/max",
                     fmt::format("expected a max at least the min ({})", d.min));
  reader.finish();
  return d;
}

/** The longest a length can be: its max, or its mean for a fixed one; 0 when unbounded. */
std::int64_t longest(const TokenLengths& d) {
  if (d.kind == LengthKind::Fixed) return std::max<std::int64_t>(1, std::llround(d.mean));
  return d.max;
}

/** `/workload/arrivals/trace`: the CSV (relative to the scenario's folder) and its columns. */
std::shared_ptr<const ArrivalTrace> parse_trace(JsonReader reader) {
  const std::filesystem::path path = path_from_scenario(reader.source(), reader.string("csv"));
  const std::string time_column = reader.string("time_column");
  const std::string input_column = reader.string_or("input_tokens_column", "");
  const std::string output_column = reader.string_or("output_tokens_column", "");
  const double speed = reader.number("speed");
  reader.finish();
  try {
    ArrivalTrace trace = read_arrival_trace(path, time_column, input_column, output_column);
    trace.speed = speed;
    for (double& t : trace.times) t /= speed;
    return std::make_shared<const ArrivalTrace>(std::move(trace));
  } catch (const CsvMissingColumn& e) {
    // The key that names the missing column (the columns asked for: time, then those given of input and output).
    std::vector<std::string> keys{"time_column"};
    if (!input_column.empty()) keys.emplace_back("input_tokens_column");
    if (!output_column.empty()) keys.emplace_back("output_tokens_column");
    throw InputError(reader.source(), reader.pointer() + "/" + keys.at(e.column()), e.what());
  } catch (const InputError& e) {
    // The CSV's own error (file, line) plus where the scenario names that file.
    throw InputError(reader.source(), reader.pointer() + "/csv", e.what());
  }
}

/** Days from 1970-01-01 to the civil date y-m-d (proleptic Gregorian; H. Hinnant's days_from_civil). */
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

/** Seconds of an arrival time: a number, or "YYYY-MM-DD HH:MM:SS[.fraction]" (seconds since 1970, no time zone). */
std::optional<double> parse_time(const std::string& text) {
  if (text.empty()) return std::nullopt;
  if (const auto n = parse_number(text)) return std::isfinite(*n) ? n : std::nullopt;
  int y = 0;
  unsigned mo = 0;
  unsigned d = 0;
  unsigned h = 0;
  unsigned mi = 0;
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2u-%2u%*1[ T]%2u:%2u:%n", &y, &mo, &d, &h, &mi, &consumed) != 5 || consumed == 0)
    return std::nullopt;
  const auto seconds = parse_number(text.substr(static_cast<std::size_t>(consumed)));
  if (!seconds || *seconds < 0 || *seconds >= 61 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59)
    return std::nullopt;
  return static_cast<double>(days_from_civil(y, mo, d)) * 86400.0 + h * 3600.0 + mi * 60.0 + *seconds;
}

} // namespace

ArrivalTrace read_arrival_trace(const std::filesystem::path& path, const std::string& time_column,
                                const std::string& input_column, const std::string& output_column) {
  ArrivalTrace trace;
  trace.source = path.string();
  std::vector<std::string> columns{time_column};
  if (!input_column.empty()) columns.push_back(input_column);
  if (!output_column.empty()) columns.push_back(output_column);
  double first = 0.0;
  double last = 0.0;
  read_csv_columns(
      path, columns,
      [&](const CsvRow& row) {
        const auto t = parse_time(row.fields[0]);
        if (!t)
          throw csv_error(path, row.line,
                          fmt::format("'{}' in column '{}'; expected an arrival time in seconds or a datetime "
                                      "\"YYYY-MM-DD HH:MM:SS[.fraction]\"",
                                      row.fields[0], time_column));
        if (trace.times.empty()) first = *t;
        if (*t < last && !trace.times.empty())
          throw csv_error(path, row.line,
                          fmt::format("arrival time {} is before the previous row's; expected the rows in time order",
                                      row.fields[0]));
        last = *t;
        trace.times.push_back(*t - first);
        std::size_t k = 1;
        for (auto* tokens : {&trace.input_tokens, &trace.output_tokens}) {
          const std::string& column = tokens == &trace.input_tokens ? input_column : output_column;
          if (column.empty()) continue;
          const auto n = parse_number(row.fields[k]);
          if (!n || *n < 1 || *n > 1e9 || *n != std::floor(*n))
            throw csv_error(path, row.line,
                            fmt::format("'{}' in column '{}'; expected a token count (a whole number from 1 to 1e9)",
                                        row.fields[k], column));
          tokens->push_back(static_cast<std::int64_t>(*n));
          ++k;
        }
      },
      "arrival trace");
  if (trace.times.empty()) throw InputError(trace.source, "", "no requests after the header; expected one row each");
  return trace;
}

namespace {

LlmStage parse_llm(JsonReader& reader, const ServingStage& stage, int& next_node, const ClusterSpec& cluster,
                   const std::filesystem::path& data_dir) {
  LlmStage l;
  {
    JsonReader model = reader.child("model");
    const WorkloadSpec spec = load_workload(data_dir, model.as_string(), model.source(), model.pointer());
    if (!spec.is_transformer() ||
        std::get<TransformerConfig>(spec.config).architecture != TransformerArchitecture::Decoder)
      throw model.error(
          fmt::format("\"{}\" is not a decoder transformer; expected one (an LLM generates tokens)", spec.name));
    l.model_name = spec.name;
    l.model = TransformerModel(std::get<TransformerConfig>(spec.config)).config();
    // Serving prices every layer alike and caches each head's keys and values.
    if (l.model.mla.enabled() || l.model.experts.first_dense > 0 || l.model.window.enabled())
      throw model.error(fmt::format("serving \"{}\" ({}) is not modelled; expected a model without them", spec.name,
                                    l.model.mla.enabled() ? "multi-head latent attention, whose cache holds latents"
                                    : l.model.window.enabled()
                                        ? "a sliding attention window, whose layers cache only the window"
                                        : "first dense layers before its experts"));
  }
  l.data_type = reader.choice("data_type");
  if (!cluster.gpu.peak_flops.contains(l.data_type))
    throw InputError(reader.source(), reader.pointer() + "/data_type",
                     fmt::format("GPU profile \"{}\" has no peak rate for {}", cluster.gpu.name, l.data_type));
  l.tensor_parallel = static_cast<int>(reader.integer("tensor_parallel"));
  const int t = l.tensor_parallel;
  if (l.model.heads % t != 0 || l.model.kv_heads % t != 0 || l.model.ffn % t != 0)
    throw InputError(reader.source(), reader.pointer() + "/tensor_parallel",
                     fmt::format("expected a degree dividing the model's heads ({}), kv_heads ({}) and ffn_size ({})",
                                 l.model.heads, l.model.kv_heads, l.model.ffn));
  if (static_cast<std::int64_t>(t) * stage.replicas_per_node > cluster.gpus_per_node)
    throw InputError(reader.source(), reader.pointer() + "/tensor_parallel",
                     fmt::format("{} replicas per node of {} GPUs each need {} GPUs, the nodes have {} "
                                 "(/cluster/gpus_per_node)",
                                 stage.replicas_per_node, t, stage.replicas_per_node * t, cluster.gpus_per_node));
  l.max_num_seqs = reader.integer("max_num_seqs");
  l.max_num_batched_tokens =
      reader.integer_or("max_num_batched_tokens", std::max<std::int64_t>(l.model.sequence_length, 2048));
  l.workspace_fraction = reader.number("workspace_fraction");
  l.input_tokens = parse_lengths(reader.child("input_tokens"));
  l.output_tokens = parse_lengths(reader.child("output_tokens"));
  if (reader.has("ttft_target")) l.ttft_target = reader.quantity("ttft_target");
  if (reader.has("tpot_target")) l.tpot_target = reader.quantity("tpot_target");
  l.kv_admission = reader.enum_choice_or("kv_admission", KvAdmission::Preempt);
  l.chunked_prefill = reader.boolean_or("chunked_prefill", false);
  if (auto pool = reader.optional_child("prefill_pool")) {
    LlmPrefillPool& p = l.prefill_pool.emplace();
    p.nodes = static_cast<int>(pool->integer("nodes"));
    p.replicas_per_node = static_cast<int>(pool->integer("replicas_per_node"));
    p.first_node = next_node;
    if (static_cast<std::int64_t>(t) * p.replicas_per_node > cluster.gpus_per_node)
      throw InputError(pool->source(), pool->pointer() + "/replicas_per_node",
                       fmt::format("{} replicas per node of {} GPUs each need {} GPUs, the nodes have {} "
                                   "(/cluster/gpus_per_node)",
                                   p.replicas_per_node, t, p.replicas_per_node * t, cluster.gpus_per_node));
    if (next_node + p.nodes > cluster.nodes)
      throw InputError(pool->source(), pool->pointer() + "/nodes",
                       fmt::format("the prefill pool takes the nodes after the stage's pool: it needs nodes {} to {}, "
                                   "the cluster has {} (/cluster/nodes)",
                                   next_node, next_node + p.nodes - 1, cluster.nodes));
    next_node += p.nodes;
    pool->finish();
  }
  reader.finish();
  const LlmReplicaCost cost(l.model, cluster.gpu, l.data_type, t, two_level_cost(cluster), l.workspace_fraction);
  if (cost.kv_capacity_tokens() < 1)
    throw InputError(reader.source(), reader.pointer() + "/model",
                     fmt::format("{}'s weights ({:.3g} GB per GPU at tensor parallel {}) and the workspace ({:g} of "
                                 "{:.3g} GB) leave no room for a KV cache; expected a larger tensor_parallel, a "
                                 "smaller model or a smaller workspace_fraction",
                                 l.model_name, cost.weight_bytes() / 1e9, t, l.workspace_fraction,
                                 cluster.gpu.memory_capacity.value / 1e9));
  const std::int64_t in = longest(l.input_tokens);
  if (!l.chunked_prefill && in > l.max_num_batched_tokens)
    throw InputError(
        reader.source(), reader.pointer() + "/max_num_batched_tokens",
        fmt::format("expected at least the longest prompt ({} tokens): a prompt is prefilled in one step", in));
  return l;
}

/** `model_service`: the forward pass of a model of models/workloads at each batch size up to the stage's largest,
 * priced by the training cost model (training_cost's forward: each op's roofline with the GPU profile's GEMM
 * efficiencies, flash attention and fused elementwise kernels) on the cluster's GPU profile. */
void parse_model_service(JsonReader& reader, ServingStage& s, const ClusterSpec& cluster,
                         const std::filesystem::path& data_dir) {
  ModelTraining t;
  {
    JsonReader model = reader.child("model");
    t.model = load_workload(data_dir, model.as_string(), model.source(), model.pointer());
  }
  if (reader.has("sequence_length")) {
    if (!t.model.is_transformer())
      throw InputError(reader.source(), reader.pointer() + "/sequence_length",
                       "only a transformer has a sequence length; expected no sequence_length for a CNN");
    std::get<TransformerConfig>(t.model.config).sequence_length = reader.integer("sequence_length");
  }
  t.data_type = reader.choice("data_type");
  if (!cluster.gpu.peak_flops.contains(t.data_type))
    throw InputError(reader.source(), reader.pointer() + "/data_type",
                     fmt::format("GPU profile \"{}\" has no peak rate for {}", cluster.gpu.name, t.data_type));
  reader.finish();
  s.service_model = t.model.name;
  if (t.model.is_transformer())
    s.service_model += fmt::format(" ({} tokens)", std::get<TransformerConfig>(t.model.config).sequence_length);
  s.batch_service.clear();
  for (int n = 1; n <= s.max_batch; ++n) {
    t.micro_batch = n;
    t.global_batch = n;
    s.batch_service.push_back(training_cost(t, cluster.gpu).forward_time());
  }
}

/** A stage's `after`: the names of earlier stages, resolved to their indices; absent: the stage before. */
std::vector<std::size_t> parse_after(JsonReader& reader, const std::vector<ServingStage>& earlier) {
  if (!reader.has("after")) {
    if (earlier.empty()) return {};
    return {earlier.size() - 1};
  }
  std::vector<std::size_t> after;
  for (const JsonReader& item : reader.child("after").elements(0, earlier.size() + 1)) {
    const std::string name = item.as_string();
    const auto it = std::find_if(earlier.begin(), earlier.end(), [&](const ServingStage& e) { return e.name == name; });
    if (it == earlier.end())
      throw InputError(item.source(), item.pointer(),
                       fmt::format("no earlier stage is named \"{}\"; expected the name of a stage listed before this "
                                   "one (list the stages so that each comes after those it takes from)",
                                   name));
    const auto index = static_cast<std::size_t>(it - earlier.begin());
    if (std::find(after.begin(), after.end(), index) != after.end())
      throw InputError(item.source(), item.pointer(),
                       fmt::format("\"{}\" is named twice; expected each earlier stage at most once", name));
    after.push_back(index);
  }
  return after;
}

ServingStage parse_stage(JsonReader& reader, int& next_node, const ClusterSpec& cluster,
                         const std::filesystem::path& data_dir, const std::vector<ServingStage>& earlier) {
  ServingStage s;
  s.name = reader.string("name");
  if (s.name.empty()) throw InputError(reader.source(), reader.pointer() + "/name", "expected a non-empty name");
  s.after = parse_after(reader, earlier);
  {
    JsonReader pool = reader.child("pool");
    s.device = pool.enum_choice_or("device", PoolDevice::Gpu);
    s.nodes = static_cast<int>(pool.integer("nodes"));
    s.replicas_per_node = static_cast<int>(pool.integer("replicas_per_node"));
    if (pool.has("cores")) {
      s.cores = static_cast<int>(pool.integer("cores"));
      if (s.replicas_per_node > *s.cores)
        throw InputError(pool.source(), pool.pointer() + "/replicas_per_node",
                         fmt::format("a node of this pool has {} cores (`cores`), each replica takes one; expected at "
                                     "most {} replicas per node, got {}",
                                     *s.cores, *s.cores, s.replicas_per_node));
    }
    s.speed = pool.number("speed");
    if (s.speed != 1.0 && (reader.has("llm") || reader.has("model_service")))
      throw InputError(pool.source(), pool.pointer() + "/speed",
                       "an LLM stage's or `model_service` stage's time comes from the cluster's GPU profile; expected "
                       "no speed factor (give the cluster's `gpu` instead)");
    s.first_node = next_node;
    if (next_node + s.nodes > cluster.nodes)
      throw InputError(pool.source(), pool.pointer() + "/nodes",
                       fmt::format("the stages' pools take the cluster's nodes in order: this one needs nodes {} to "
                                   "{}, the cluster has {} (/cluster/nodes)",
                                   next_node, next_node + s.nodes - 1, cluster.nodes));
    next_node += s.nodes;
    pool.finish();
  }
  if (reader.has("llm")) {
    for (const char* key : {"service", "batching"})
      if (reader.has(key))
        throw InputError(reader.source(), reader.pointer() + "/" + key,
                         "an LLM stage's service comes from its model (prefill and decode steps, continuous "
                         "batching); expected no such key with `llm`");
    if (s.device != PoolDevice::Gpu)
      throw InputError(reader.source(), reader.pointer() + "/pool/device", "an LLM stage runs on GPUs; expected gpu");
    JsonReader llm = reader.child("llm");
    s.llm = parse_llm(llm, s, next_node, cluster, data_dir);
  } else if (reader.has("model_service")) {
    if (reader.has("service"))
      throw InputError(reader.source(), reader.pointer() + "/service",
                       "a stage's service is `service` or `model_service`, not both; expected one");
    if (s.device != PoolDevice::Gpu)
      throw InputError(reader.source(), reader.pointer() + "/pool/device",
                       "`model_service` prices the model on the cluster's GPU profile; expected gpu");
  } else {
    s.service = parse_distribution(reader.child("service"));
  }
  if (auto batching = reader.optional_child("batching")) {
    s.max_batch = static_cast<int>(batching->integer("max_size"));
    s.max_wait = batching->quantity("max_wait");
    if (reader.has("model_service") && batching->has("extra_item_time"))
      throw InputError(batching->source(), batching->pointer() + "/extra_item_time",
                       "`model_service` prices every batch size from the model; expected no extra_item_time");
    s.extra_item_time = batching->quantity("extra_item_time");
    batching->finish();
  }
  if (reader.has("model_service")) {
    JsonReader m = reader.child("model_service");
    parse_model_service(m, s, cluster, data_dir);
  }
  s.output_bytes = reader.quantity("output_bytes");
  if (auto queue = reader.optional_child("queue")) {
    if (queue->has("capacity")) s.capacity = queue->integer("capacity");
    s.when_full = queue->enum_choice_or("when_full", QueueFull::Drop);
    queue->finish();
  }
  reader.finish();
  return s;
}

/** The stages' graph: successors, roots, sinks, and which stages may hold a request at the same time (neither is an
 * ancestor of the other). Two LLM stages may not: a request's LLM state (its tokens, its KV cache) is one per request.
 */
void resolve_graph(ServingWorkload& w, const JsonReader& reader) {
  const std::size_t n = w.stages.size();
  std::vector<std::vector<bool>> ancestor(n, std::vector<bool>(n, false)); // ancestor[i][j]: j comes before i
  for (std::size_t i = 0; i < n; ++i) {
    ServingStage& s = w.stages[i];
    if (s.after.empty()) w.roots.push_back(i);
    if (s.after != (i == 0 ? std::vector<std::size_t>{} : std::vector<std::size_t>{i - 1})) w.dag = true;
    for (const std::size_t p : s.after) {
      w.stages[p].next.push_back(i);
      ancestor[i][p] = true;
      for (std::size_t j = 0; j < n; ++j)
        if (ancestor[p][j]) ancestor[i][j] = true;
    }
  }
  for (std::size_t i = 0; i < n; ++i)
    if (w.stages[i].next.empty()) w.sinks.push_back(i);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < i; ++j) {
      if (ancestor[i][j]) continue;
      w.stages[i].parallel = w.stages[j].parallel = true;
      if (w.stages[i].llm && w.stages[j].llm)
        throw InputError(reader.source(), fmt::format("{}/stages/{}/after", reader.pointer(), i),
                         fmt::format("the LLM stages \"{}\" and \"{}\" would serve a request at the same time (neither "
                                     "comes after the other); expected one LLM stage after the other",
                                     w.stages[j].name, w.stages[i].name));
    }
}

} // namespace

double sample(const TimeDistribution& d, Xoshiro256StarStar& rng) {
  switch (d.kind) {
  case DistributionKind::Fixed:
    return d.mean;
  case DistributionKind::Exponential:
    return -d.mean * std::log(1.0 - rng.uniform());
  case DistributionKind::LogNormal: {
    const double sigma2 = std::log1p(d.cv * d.cv);
    return std::exp(std::log(d.mean) - 0.5 * sigma2 + std::sqrt(sigma2) * standard_normal(rng));
  }
  case DistributionKind::Gamma: {
    const double shape = 1.0 / (d.cv * d.cv);
    return standard_gamma(shape, rng) * d.mean / shape;
  }
  case DistributionKind::Empirical: {
    const std::vector<double>& v = *d.values;
    const auto i = static_cast<std::size_t>(rng.uniform() * static_cast<double>(v.size()));
    return v[std::min(i, v.size() - 1)];
  }
  }
  return d.mean;
}

std::int64_t sample(const TokenLengths& d, Xoshiro256StarStar& rng) {
  std::int64_t n = 0;
  switch (d.kind) {
  case LengthKind::Fixed:
    return std::max<std::int64_t>(1, std::llround(d.mean));
  case LengthKind::Uniform:
    n = d.min + static_cast<std::int64_t>(rng.uniform() * static_cast<double>(d.max - d.min + 1));
    return std::min(n, d.max);
  case LengthKind::Exponential:
    n = std::llround(sample(TimeDistribution{DistributionKind::Exponential, d.mean, 1.0, nullptr}, rng));
    break;
  case LengthKind::LogNormal:
    n = std::llround(sample(TimeDistribution{DistributionKind::LogNormal, d.mean, d.cv, nullptr}, rng));
    break;
  case LengthKind::Gamma:
    n = std::llround(sample(TimeDistribution{DistributionKind::Gamma, d.mean, d.cv, nullptr}, rng));
    break;
  }
  n = std::max(n, std::max<std::int64_t>(d.min, 1));
  return d.max > 0 ? std::min(n, d.max) : n;
}

Orchestration orchestration_preset(OrchestrationPreset preset) {
  Orchestration o;
  o.preset = preset;
  switch (preset) {
  case OrchestrationPreset::None:
    break;
  case OrchestrationPreset::RayActorCall:
    // Ray's own microbenchmark (`ray microbenchmark`, Ray 0.7.6 on an m4.16xlarge, published in Ray's
    // doc/source/ray-contribute/profiling.rst): "1:1 actor calls sync per second 1595.47" (627 us per round trip)
    // and "1:1 direct actor calls async per second 7233.63" (138 us of the runtime per call when calls overlap).
    // Per item: 138 us of replica time; the rest of a lone call's round trip, 627 - 138 = 489 us, is latency.
    o.per_item_overhead = 1.0 / 7233.63;
    o.dispatch_latency = 1.0 / 1595.47 - 1.0 / 7233.63;
    break;
  case OrchestrationPreset::KubeflowPipelineStep:
    // An assumption, not a measurement: every Kubeflow Pipelines step is a pod; scheduling it, its launcher and
    // driver containers and the container start take seconds with images already on the node (a 2018 report of
    // about 6 s to create and 6 s to run a TFJob pod: caicloud/ciao issue 24). Taken as 10 s per hop; the
    // artefacts' bytes are the stage's `output_bytes`, the per-item cost is left at 0.
    o.dispatch_latency = 10.0;
    break;
  }
  return o;
}

ServingWorkload parse_serving_workload(JsonReader& reader, const ClusterSpec& cluster,
                                       const std::filesystem::path& data_dir) {
  ServingWorkload w;
  {
    JsonReader stages = reader.child("stages");
    int next_node = 0;
    std::int64_t replicas = 0;
    for (JsonReader& stage : stages.elements(1, 64)) {
      w.stages.push_back(parse_stage(stage, next_node, cluster, data_dir, w.stages));
      replicas += w.stages.back().replicas();
      // Each replica is an actor with its own stack: a bound, not memory exhaustion.
      if (replicas > kMaxServingReplicas)
        throw InputError(
            reader.source(), fmt::format("{}/stages/{}/pool/replicas_per_node", reader.pointer(), w.stages.size() - 1),
            fmt::format("expected at most {} replicas over all stages, got {}", kMaxServingReplicas, replicas));
    }
    for (std::size_t i = 0; i < w.stages.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (w.stages[i].name == w.stages[j].name)
          throw InputError(reader.source(), fmt::format("{}/stages/{}/name", reader.pointer(), i),
                           fmt::format("stage names must differ: \"{}\" is also stage {}", w.stages[i].name, j));
    resolve_graph(w, reader);
  }
  {
    JsonReader arrivals = reader.child("arrivals");
    const ArrivalProcess process = arrivals.enum_choice<ArrivalProcess>("process");
    w.arrivals.process = process;
    // Every key given is read (and checked) first; then what does not belong to the process is refused.
    const bool rated = process == ArrivalProcess::Poisson || process == ArrivalProcess::Gamma;
    if (arrivals.has("rate") || rated) w.arrivals.rate = arrivals.number("rate");
    if (arrivals.has("cv") || process == ArrivalProcess::Gamma) w.arrivals.cv = arrivals.number("cv");
    if (arrivals.has("clients") || process == ArrivalProcess::Closed)
      w.arrivals.clients = static_cast<int>(arrivals.integer("clients"));
    if (arrivals.has("think_time")) w.arrivals.think_time = parse_distribution(arrivals.child("think_time"));
    if (arrivals.has("trace") || process == ArrivalProcess::Trace)
      w.arrivals.trace = parse_trace(arrivals.child("trace"));
    const std::string name(enum_name(process));
    auto refuse = [&](const char* key, const std::string& why) {
      if (arrivals.has(key)) throw InputError(arrivals.source(), arrivals.pointer() + "/" + key, why);
    };
    if (process != ArrivalProcess::Closed)
      for (const char* key : {"clients", "think_time"})
        refuse(key,
               fmt::format("only a closed loop has clients and a think time; expected no such key with \"{}\"", name));
    if (process == ArrivalProcess::Closed)
      refuse("rate", "a closed loop's rate follows from its clients and think time; expected no such key");
    if (process == ArrivalProcess::Trace)
      refuse("rate", "a trace's requests arrive at its own times; expected no rate with \"trace\"");
    if (process != ArrivalProcess::Gamma)
      refuse("cv", fmt::format("only gamma arrivals have a cv; expected no such key with \"{}\"", name));
    if (process != ArrivalProcess::Trace)
      refuse("trace", fmt::format("only process \"trace\" replays a trace; expected no such key with \"{}\"", name));
    arrivals.finish();
  }
  if (reader.has("requests")) w.requests = reader.integer("requests");
  if (reader.has("duration")) w.duration = reader.quantity("duration");
  if (!w.requests && !w.duration && w.arrivals.process != ArrivalProcess::Trace)
    throw InputError(reader.source(), reader.pointer() + "/requests",
                     "expected how long to run: `requests` (a count) or `duration` (a time), or both");
  if (const auto& trace = w.arrivals.trace; trace && w.requests && *w.requests > std::ssize(trace->times))
    throw InputError(reader.source(), reader.pointer() + "/requests",
                     fmt::format("the trace {} has {} requests; expected at most that many, or no `requests` to replay "
                                 "it all",
                                 trace->source, trace->times.size()));
  if (!w.requests && w.arrivals.process == ArrivalProcess::Closed && w.arrivals.think_time.mean == 0.0 &&
      std::all_of(w.stages.begin(), w.stages.end(),
                  [](const ServingStage& s) { return s.service.mean == 0.0 && !s.llm; }))
    throw InputError(reader.source(), reader.pointer() + "/requests",
                     "a closed loop whose requests take no time (think time and every service time 0) never reaches "
                     "its duration; expected a request count");
  w.warmup = reader.quantity("warmup");
  if (reader.has("latency_target")) w.latency_target = reader.quantity("latency_target");
  if (w.duration && w.warmup >= *w.duration)
    throw InputError(reader.source(), reader.pointer() + "/warmup",
                     fmt::format("expected a warm-up shorter than the duration ({:g} s)", *w.duration));
  // The GPU hosts need a speed, though nothing is executed on them: bf16's peak, or the profile's first.
  if (!cluster.gpu.peak_flops.contains(w.data_type)) w.data_type = cluster.gpu.peak_flops.begin()->first;
  if (auto o = reader.optional_child("orchestration")) {
    w.orchestration = orchestration_preset(o->enum_choice_or("preset", OrchestrationPreset::None));
    w.orchestration.dispatch_latency = o->quantity_or("dispatch_latency", w.orchestration.dispatch_latency);
    w.orchestration.per_item_overhead = o->quantity_or("per_item_overhead", w.orchestration.per_item_overhead);
    o->finish();
  }
  return w;
}

std::string describe(const ServingWorkload& w) {
  std::string out = w.dag ? "serving graph " : "serving pipeline ";
  for (std::size_t i = 0; i < w.stages.size(); ++i) {
    const ServingStage& s = w.stages[i];
    out += fmt::format("{}{}({}x{} {}", i == 0 ? "" : (w.dag ? ", " : " -> "), s.name, s.nodes, s.replicas_per_node,
                       enum_name(s.device));
    if (w.dag) {
      std::vector<std::string> from;
      for (const std::size_t p : s.after) from.push_back(w.stages[p].name);
      out += from.empty() ? ", from the arrivals" : fmt::format(", after {}", fmt::join(from, " + "));
    }
    if (s.llm) {
      out += fmt::format(", {} tp{}", s.llm->model_name, s.llm->tensor_parallel);
      if (const auto& p = s.llm->prefill_pool) out += fmt::format(", prefill on {}x{}", p->nodes, p->replicas_per_node);
    }
    if (!s.batch_service.empty())
      out += fmt::format(", {}: {:.4g} ms alone, {:.4g} ms for {}", s.service_model, s.batch_service.front() * 1e3,
                         s.batch_service.back() * 1e3, s.batch_service.size());
    out += ")";
  }
  if (w.arrivals.process == ArrivalProcess::Poisson)
    out += fmt::format("; poisson {:g}/s", w.arrivals.rate);
  else if (w.arrivals.process == ArrivalProcess::Gamma)
    out += fmt::format("; gamma {:g}/s cv {:g}", w.arrivals.rate, w.arrivals.cv);
  else if (w.arrivals.trace)
    out += fmt::format("; trace of {} requests{}", w.arrivals.trace->times.size(),
                       w.arrivals.trace->speed == 1.0 ? "" : fmt::format(" at {:g}x", w.arrivals.trace->speed));
  else
    out += fmt::format("; closed loop of {} clients", w.arrivals.clients);
  if (w.requests) out += fmt::format(", {} requests", *w.requests);
  if (w.duration) out += fmt::format(", {:g} s", *w.duration);
  return out;
}

} // namespace partsim
