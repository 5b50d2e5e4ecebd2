// Search points: classification before simulation, the fast fidelity, metrics, ranking and the Pareto front.
#include "partsim/batch/search.hpp"

#include "partsim/common/error.hpp"
#include "partsim/plan/strategy.hpp"
#include "partsim/report/report_document.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace partsim {

const std::vector<SearchMetric>& search_metrics() {
  static const std::vector<SearchMetric> metrics{
      {"throughput",
       {"/summary/tokens_per_s", "/summary/throughput_samples_per_s"},
       Goal::Maximise,
       "tokens/s",
       "tokens per second (samples per second for a workload without tokens)"},
      {"tokens_per_s", {"/summary/tokens_per_s"}, Goal::Maximise, "tokens/s", "tokens per second"},
      {"samples_per_s", {"/summary/throughput_samples_per_s"}, Goal::Maximise, "samples/s", "samples per second"},
      {"time_to_train",
       {"/summary/tokens_per_s"},
       Goal::Minimise,
       "s",
       "time to train --tokens tokens at the point's throughput",
       true},
      {"makespan", {"/summary/makespan_s"}, Goal::Minimise, "s", "the simulated iterations' makespan"},
      {"mfu", {"/summary/mfu"}, Goal::Maximise, "", "model FLOP utilisation"},
      {"gpus", {"/summary/gpus"}, Goal::Minimise, "GPUs", "GPUs of the point"},
      {"memory", {"/memory_per_gpu/total_bytes"}, Goal::Minimise, "B", "memory per GPU (the peak stage's)"},
      {"cost_to_train",
       {"/cost/per_million_tokens"},
       Goal::Minimise,
       "currency",
       "cost of training --tokens tokens at the point's cost per million tokens (the scenario's /cost)",
       false,
       1e-6},
      {"energy_to_train",
       {"/energy/per_token_j"},
       Goal::Minimise,
       "J",
       "facility energy of training --tokens tokens at the point's energy per token (the scenario's /energy)",
       false,
       1.0},
      {"cost_per_million_tokens",
       {"/cost/per_million_tokens"},
       Goal::Minimise,
       "currency",
       "cost per million tokens trained"},
      {"energy_per_token", {"/energy/per_token_j"}, Goal::Minimise, "J", "facility energy per token trained"},
  };
  return metrics;
}

SearchMetric parse_search_metric(const std::string& text, const std::string& option) {
  for (const SearchMetric& m : search_metrics())
    if (m.name == text) return m;
  const auto colon = text.rfind(':');
  if (!text.empty() && text[0] == '/' && colon != std::string::npos) {
    const std::string goal = text.substr(colon + 1);
    if (goal == "min" || goal == "max")
      return {text, {text.substr(0, colon)}, goal == "min" ? Goal::Minimise : Goal::Maximise, "", "report figure"};
  }
  std::vector<std::string> names;
  for (const SearchMetric& m : search_metrics()) names.push_back(m.name);
  throw InputError(option, "",
                   fmt::format("expected {} or a report pointer with :min or :max (/summary/idle_share:min), got "
                               "\"{}\"",
                               fmt::join(names, ", "), text));
}

const SearchFigures* SearchRow::figures() const {
  if (faithful) return &*faithful;
  return fast ? &*fast : nullptr;
}

std::string invalid_reason(const std::string& pointer, const std::string& detail) {
  std::string out = pointer.empty() ? std::string() : pointer + ": ";
  for (std::size_t i = 0; i < detail.size();) {
    const char c = detail[i];
    const bool glued = i > 0 && (std::isalnum(static_cast<unsigned char>(detail[i - 1])) != 0 || detail[i - 1] == '-' ||
                                 detail[i - 1] == '_' || detail[i - 1] == '/');
    if (std::isdigit(static_cast<unsigned char>(c)) == 0 || glued) {
      out += c;
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < detail.size() && (std::isdigit(static_cast<unsigned char>(detail[j])) != 0 || detail[j] == '.' ||
                                 (detail[j] == ',' && j + 1 < detail.size() &&
                                  std::isdigit(static_cast<unsigned char>(detail[j + 1])) != 0)))
      ++j;
    if (j < detail.size() && (detail[j] == 'e' || detail[j] == 'E') && j + 1 < detail.size() &&
        (std::isdigit(static_cast<unsigned char>(detail[j + 1])) != 0 || detail[j + 1] == '+' ||
         detail[j + 1] == '-')) {
      j += 2;
      while (j < detail.size() && std::isdigit(static_cast<unsigned char>(detail[j])) != 0) ++j;
    }
    // A trailing dot ends the sentence, not the number.
    if (detail[j - 1] == '.') --j;
    out += 'N';
    i = j;
  }
  return out;
}

namespace {

std::int64_t document_gpus(const nlohmann::json& document) {
  const nlohmann::json* cluster = document.contains("cluster") ? &document["cluster"] : nullptr;
  if (cluster == nullptr || !cluster->is_object()) return 0;
  const auto integer = [&](const char* key, std::int64_t otherwise) {
    return cluster->contains(key) && (*cluster)[key].is_number_integer() ? (*cluster)[key].get<std::int64_t>()
                                                                         : otherwise;
  };
  return integer("nodes", 0) * integer("gpus_per_node", 1);
}

} // namespace

SearchRow classify_point(const nlohmann::json& scenario, const std::string& scenario_path, const SearchSpace& space,
                         const SweepPoint& point, const std::filesystem::path& data_dir) {
  SearchRow row;
  row.point = point;
  row.overrides = point_overrides(scenario, space, point);
  nlohmann::json document = scenario;
  apply_overrides(document, row.overrides);
  row.gpus = document_gpus(document);
  if (const auto broken = broken_constraint(space, document)) {
    row.status = PointStatus::Excluded;
    row.reason = space.constraints[*broken].text;
    return row;
  }
  try {
    const Scenario parsed = parse_scenario(document, scenario_path, data_dir);
    row.gpus = parsed.cluster.gpu_count();
    row.memory = planned_memory(parsed);
  } catch (const InputError& e) {
    row.status = PointStatus::Invalid;
    row.reason = invalid_reason(e.pointer(), e.detail());
    row.detail = e.what();
    return row;
  }
  row.status = row.memory && !row.memory->fits() ? PointStatus::OutOfMemory : PointStatus::Simulated;
  return row;
}

std::vector<Override> fast_fidelity_overrides(const nlohmann::json& document) {
  std::vector<Override> out;
  if (!document.contains("strategy") || !document["strategy"].is_object()) return out;
  const nlohmann::json& strategy = document["strategy"];
  const std::string kind = strategy.value("kind", "");
  const bool training = document.contains("workload") && document["workload"].is_object() &&
                        document["workload"].value("kind", "") == "model_training";
  if (kind == "collective") {
    out.push_back({"/strategy/fidelity", "analytic"});
    return out;
  }
  // The gradient all-reduces: absent (a model's default, all_reduce), "all_reduce", "ring_allreduce" or an object.
  const nlohmann::json sync = strategy.contains("gradient_sync") ? strategy["gradient_sync"] : nlohmann::json();
  if (sync.is_object()) {
    nlohmann::json fast = sync;
    fast["fidelity"] = "analytic";
    out.push_back({"/strategy/gradient_sync", fast});
  } else if (sync == "ring_allreduce") {
    out.push_back({"/strategy/gradient_sync", {{"algorithm", "ring"}, {"fidelity", "analytic"}}});
  } else if (sync == "all_reduce" || (sync.is_null() && training)) {
    out.push_back({"/strategy/gradient_sync", {{"fidelity", "analytic"}}});
  }
  if (kind == "model_parallel") {
    nlohmann::json tensor = strategy.contains("tensor_collectives") && strategy["tensor_collectives"].is_object()
                                ? strategy["tensor_collectives"]
                                : nlohmann::json::object();
    tensor["fidelity"] = "analytic";
    tensor["granularity"] = "pass";
    out.push_back({"/strategy/tensor_collectives", tensor});
  }
  return out;
}

double search_metric_value(const SearchMetric& metric, const nlohmann::json& report, const std::string& source,
                           double tokens) {
  for (const std::string& pointer : metric.pointers) {
    const nlohmann::json::json_pointer p(pointer);
    if (!report.contains(p) || !report.at(p).is_number()) continue;
    const double value = report.at(p).get<double>();
    if (metric.budget_total > 0.0) return value * tokens * metric.budget_total;
    if (!metric.per_token_budget) return value;
    return value > 0.0 ? tokens / value : std::numeric_limits<double>::infinity();
  }
  throw InputError(source, metric.pointers.front(),
                   fmt::format("the report has no number here for the metric {}; expected a report figure "
                               "(docs/report-reference.md)",
                               metric.name));
}

namespace {

bool better(double a, double b, Goal goal) {
  return goal == Goal::Maximise ? a > b : a < b;
}

template <typename Value>
std::vector<std::size_t> sorted_by(const std::vector<std::size_t>& indices, const Value& value) {
  std::vector<std::size_t> out = indices;
  std::stable_sort(out.begin(), out.end(), [&](std::size_t a, std::size_t b) { return value(a, b); });
  return out;
}

} // namespace

SearchFigures search_figures(const nlohmann::json& report, const std::string& source, const SearchMetric& rank_by,
                             const SearchMetric& pareto, double tokens) {
  const ReportDocument document = report_document_from_json(report, source);
  PARTSIM_CHECK(document.summary) << "search_figures of a report without a summary: " << source;
  SearchFigures f;
  f.rank_value = search_metric_value(rank_by, report, source, tokens);
  f.pareto_value = search_metric_value(pareto, report, source, tokens);
  const ReportSummary& s = *document.summary;
  f.makespan = s.makespan;
  f.samples_per_s = s.throughput;
  f.tokens_per_s = s.tokens_per_s;
  f.mfu = s.mfu;
  const auto number_at = [&report](const char* pointer) -> std::optional<double> {
    const nlohmann::json::json_pointer p(pointer);
    return report.contains(p) && report.at(p).is_number() ? std::optional<double>(report.at(p).get<double>())
                                                          : std::nullopt;
  };
  f.cost_per_million_tokens = number_at("/cost/per_million_tokens");
  f.energy_per_token = number_at("/energy/per_token_j");
  std::set<std::string> levels;
  for (const ReportCollective& c : document.collectives.value_or(std::vector<ReportCollective>{}))
    levels.insert(to_string(c.fidelity));
  f.collective_fidelity = levels.empty() ? "-" : fmt::format("{}", fmt::join(levels, "+"));
  SearchBreakdown& b = f.breakdown;
  const double n = document.ranks.empty() ? 1.0 : static_cast<double>(document.ranks.size());
  const auto add = [n](std::optional<double>& sum, const std::optional<double>& value) {
    if (value) sum = sum.value_or(0.0) + *value / n;
  };
  for (const ReportRank& r : document.ranks) {
    b.compute += r.compute / n;
    b.communication += r.communication / n;
    b.wait += r.wait / n;
    b.tail_idle += r.tail_idle / n;
    add(b.bubble, r.bubble);
    add(b.tensor_exposed, r.tensor_exposed);
    add(b.pipeline_exposed, r.pipeline_exposed);
    add(b.data_exposed, r.data_exposed);
    add(b.expert_exposed, r.expert_exposed);
    add(b.context_exposed, r.context_exposed);
  }
  return f;
}

std::vector<std::size_t> rank_rows(const std::vector<SearchRow>& rows, const SearchMetric& rank_by) {
  std::vector<std::size_t> simulated;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i].figures() != nullptr) simulated.push_back(i);
  return sorted_by(simulated, [&](std::size_t a, std::size_t b) {
    const bool ra = rows[a].faithful.has_value();
    const bool rb = rows[b].faithful.has_value();
    if (ra != rb) return ra;
    return better(rows[a].figures()->rank_value, rows[b].figures()->rank_value, rank_by.goal);
  });
}

std::vector<std::size_t> refine_candidates(const std::vector<SearchRow>& rows, const SearchMetric& rank_by,
                                           std::size_t count) {
  std::vector<std::size_t> simulated;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i].fast) simulated.push_back(i);
  std::vector<std::size_t> out = sorted_by(simulated, [&](std::size_t a, std::size_t b) {
    return better(rows[a].fast->rank_value, rows[b].fast->rank_value, rank_by.goal);
  });
  if (out.size() > count) out.resize(count);
  return out;
}

std::vector<std::size_t> pareto_front(const std::vector<SearchRow>& rows, const SearchMetric& rank_by,
                                      const SearchMetric& pareto) {
  std::vector<std::size_t> simulated;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i].figures() != nullptr) simulated.push_back(i);
  std::vector<std::size_t> front;
  for (std::size_t i : simulated) {
    const SearchFigures& a = *rows[i].figures();
    const bool dominated = std::any_of(simulated.begin(), simulated.end(), [&](std::size_t j) {
      const SearchFigures& b = *rows[j].figures();
      const bool no_worse =
          !better(a.rank_value, b.rank_value, rank_by.goal) && !better(a.pareto_value, b.pareto_value, pareto.goal);
      return j != i && no_worse &&
             (better(b.rank_value, a.rank_value, rank_by.goal) || better(b.pareto_value, a.pareto_value, pareto.goal));
    });
    if (!dominated) front.push_back(i);
  }
  return sorted_by(front, [&](std::size_t a, std::size_t b) {
    return better(rows[a].figures()->pareto_value, rows[b].figures()->pareto_value, pareto.goal);
  });
}

std::vector<InvalidReason> count_invalid(const std::vector<SearchRow>& rows) {
  std::map<std::string, InvalidReason> by_reason;
  for (const SearchRow& r : rows) {
    if (r.status != PointStatus::Invalid) continue;
    auto [it, added] = by_reason.try_emplace(r.reason, InvalidReason{r.reason, 0, r.point.index, r.detail});
    ++it->second.count;
  }
  std::vector<InvalidReason> out;
  for (auto& [reason, entry] : by_reason) out.push_back(std::move(entry));
  std::stable_sort(out.begin(), out.end(),
                   [](const InvalidReason& a, const InvalidReason& b) { return a.count > b.count; });
  return out;
}

} // namespace partsim
