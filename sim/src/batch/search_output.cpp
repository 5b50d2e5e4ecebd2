// partsim search's outputs: the terminal table, the CSV (one row per point) and the JSON (schema partsim.search).
#include "partsim/batch/search.hpp"

#include "partsim/common/text.hpp"
#include "partsim/report/report_writers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace partsim {

namespace {

constexpr const char* kFastFidelity =
    "fast: every collective analytic (alpha-beta, no network simulation), a tensor-parallel pass's collectives fused";
constexpr const char* kFaithfulFidelity = "faithful: the collectives as the scenario asks (auto: the most faithful "
                                          "level whose message count keeps the run fast)";

std::string goal_name(Goal goal) {
  return goal == Goal::Maximise ? "max" : "min";
}

std::size_t count(const std::vector<SearchRow>& rows, PointStatus status) {
  return static_cast<std::size_t>(
      std::count_if(rows.begin(), rows.end(), [status](const SearchRow& r) { return r.status == status; }));
}

std::size_t refined(const std::vector<SearchRow>& rows) {
  return static_cast<std::size_t>(
      std::count_if(rows.begin(), rows.end(), [](const SearchRow& r) { return r.faithful.has_value(); }));
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string optional_number(const std::optional<double>& value) {
  return value ? fmt::format("{}", *value) : std::string();
}

std::string settings(const SearchResult& result, const SearchRow& row) {
  std::vector<std::string> parts;
  for (std::size_t a = 0; a < result.space.axes.size() && a < row.point.labels.size(); ++a)
    parts.push_back(result.space.axes[a].pointer + "=" + row.point.labels[a]);
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string metric_title(const SearchMetric& m) {
  return m.unit.empty() ? m.name : fmt::format("{} ({})", m.name, m.unit);
}

/** Counts rows of one status by their reason, most frequent first. */
std::vector<std::pair<std::string, std::size_t>> by_reason(const std::vector<SearchRow>& rows, PointStatus status) {
  std::map<std::string, std::size_t> counts;
  for (const SearchRow& r : rows)
    if (r.status == status) ++counts[r.reason];
  std::vector<std::pair<std::string, std::size_t>> out(counts.begin(), counts.end());
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

std::string why_the_winner_wins(const SearchResult& result, const SearchRow& w, const SearchRow& r) {
  const SearchFigures& a = *w.figures();
  const SearchFigures& b = *r.figures();
  const std::string fidelity = a.fidelity == b.fidelity
                                   ? a.fidelity + " figures"
                                   : fmt::format("the winner's figures {}, the runner-up's {}", a.fidelity, b.fidelity);
  std::string out =
      fmt::format("\n  why point {} wins over the runner-up, point {} ({}):\n", w.point.index, r.point.index, fidelity);
  std::vector<std::string> differ;
  for (std::size_t i = 0; i < result.space.axes.size() && i < w.point.labels.size(); ++i)
    if (w.point.labels[i] != r.point.labels[i])
      differ.push_back(
          fmt::format("{} {} instead of {}", result.space.axes[i].pointer, w.point.labels[i], r.point.labels[i]));
  if (!differ.empty()) out += fmt::format("    it differs in: {}\n", fmt::join(differ, "; "));
  out += fmt::format("    {:<34} {:>14} {:>14} {:>14}\n", "", "winner", "runner-up", "difference");
  const auto line = [&out](const std::string& name, double x, double y) {
    // Sums over ranks in another order differ in their last bits: no difference, not 1e-15.
    const double difference = std::abs(x - y) <= 1e-9 * std::max(std::abs(x), std::abs(y)) ? 0.0 : x - y;
    out += fmt::format("    {:<34} {:>14.6g} {:>14.6g} {:>+14.6g}\n", name, x, y, difference);
  };
  line(metric_title(result.rank_by), a.rank_value, b.rank_value);
  line("makespan (s)", a.makespan, b.makespan);
  line("gpus", static_cast<double>(w.gpus), static_cast<double>(r.gpus));
  if (w.memory && r.memory)
    line("memory per GPU (GiB)", w.memory->total() / 1073741824.0, r.memory->total() / 1073741824.0);
  struct Part {
    const char* name;
    double winner, runner_up;
  };
  std::vector<Part> parts{{"compute per rank (s)", a.breakdown.compute, b.breakdown.compute},
                          {"communication per rank (s)", a.breakdown.communication, b.breakdown.communication},
                          {"wait per rank (s)", a.breakdown.wait, b.breakdown.wait},
                          {"idle at the end per rank (s)", a.breakdown.tail_idle, b.breakdown.tail_idle}};
  const auto optional_part = [&parts](const char* name, const std::optional<double>& x,
                                      const std::optional<double>& y) {
    if (x || y) parts.push_back({name, x.value_or(0.0), y.value_or(0.0)});
  };
  optional_part("  of which pipeline bubble (s)", a.breakdown.bubble, b.breakdown.bubble);
  optional_part("  tensor-parallel exposed (s)", a.breakdown.tensor_exposed, b.breakdown.tensor_exposed);
  optional_part("  pipeline exposed (s)", a.breakdown.pipeline_exposed, b.breakdown.pipeline_exposed);
  optional_part("  data-parallel exposed (s)", a.breakdown.data_exposed, b.breakdown.data_exposed);
  optional_part("  expert all-to-all exposed (s)", a.breakdown.expert_exposed, b.breakdown.expert_exposed);
  optional_part("  context exchange exposed (s)", a.breakdown.context_exposed, b.breakdown.context_exposed);
  for (const Part& p : parts) line(p.name, p.winner, p.runner_up);
  // The largest of the four exclusive parts (compute, communication, wait, idle) in the makespan's difference.
  const Part* largest = nullptr;
  for (std::size_t i = 0; i < 4; ++i)
    if (largest == nullptr ||
        std::abs(parts[i].winner - parts[i].runner_up) > std::abs(largest->winner - largest->runner_up))
      largest = &parts[i];
  if (largest != nullptr && largest->winner != largest->runner_up)
    out += fmt::format("    the largest difference per rank: {} {:+.6g} s\n", largest->name,
                       largest->winner - largest->runner_up);
  return out;
}

} // namespace

std::string format_search_table(const SearchResult& result) {
  const std::vector<SearchRow>& rows = result.rows;
  std::string out = fmt::format("partsim search: {}: {} points", result.scenario, rows.size());
  if (result.shards > 1) out += fmt::format(" (shard {} of {})", result.shard, result.shards);
  out += "\n";
  for (const std::string& note : result.space.notes) out += fmt::format("  note: {}\n", note);
  out += fmt::format("  {} excluded by a constraint, {} invalid, {} pruned (do not fit in GPU memory by the planner's "
                     "memory model, not simulated), {} simulated at the fast fidelity, {} refined at the faithful "
                     "fidelity, {} failed\n",
                     count(rows, PointStatus::Excluded), count(rows, PointStatus::Invalid),
                     count(rows, PointStatus::OutOfMemory), count(rows, PointStatus::Simulated), refined(rows),
                     count(rows, PointStatus::Failed));
  out += fmt::format("  {}\n  {}\n", kFastFidelity, kFaithfulFidelity);
  if (const auto invalid = count_invalid(rows); !invalid.empty()) {
    out += "\n  invalid points by reason:\n";
    for (const InvalidReason& r : invalid)
      out += fmt::format("  {:>6}  {} (e.g. point {})\n", r.count, printable(r.reason, 200), r.example);
  }
  if (const auto excluded = by_reason(rows, PointStatus::Excluded); !excluded.empty()) {
    out += "\n  points excluded by a constraint:\n";
    for (const auto& [reason, n] : excluded) out += fmt::format("  {:>6}  {}\n", n, printable(reason, 200));
  }
  for (const SearchRow& r : rows)
    if (r.status == PointStatus::Failed)
      out += fmt::format("  point {} failed: {}\n", r.point.index, printable(r.reason, 300));

  const std::vector<std::size_t> ranking = rank_rows(rows, result.rank_by);
  if (ranking.empty()) return out + "\n  no point was simulated\n";
  out += fmt::format("\n  top {} by {}, {}:\n", std::min(result.top, ranking.size()), metric_title(result.rank_by),
                     result.rank_by.goal == Goal::Maximise ? "highest first" : "lowest first");
  out += fmt::format("  {:>4} {:>6}", "rank", "point");
  for (const SweepAxis& a : result.space.axes) out += fmt::format(" {:>18}", printable(a.pointer, 18));
  out += fmt::format(" {:>6} {:>14} {:>12} {:>8} {:>8} {:>9}  {}\n", "gpus", printable(result.rank_by.name, 14),
                     "makespan_s", "mfu", "mem_GiB", "fidelity", "collectives");
  for (std::size_t k = 0; k < ranking.size() && k < result.top; ++k) {
    const SearchRow& r = rows[ranking[k]];
    const SearchFigures& f = *r.figures();
    out += fmt::format("  {:>4} {:>6}", k + 1, r.point.index);
    for (const std::string& label : r.point.labels) out += fmt::format(" {:>18}", printable(label, 18));
    out += fmt::format(" {:>6} {:>14.6g} {:>12.6g} {:>8} {:>8} {:>9}  {}\n", r.gpus, f.rank_value, f.makespan,
                       f.mfu ? fmt::format("{:.1f}%", *f.mfu * 100) : "-",
                       r.memory ? fmt::format("{:.1f}", r.memory->total() / 1073741824.0) : "-", f.fidelity,
                       f.collective_fidelity);
  }
  const std::vector<std::size_t> front = pareto_front(rows, result.rank_by, result.pareto);
  out += fmt::format("\n  Pareto front of {} against {} ({} point(s) no other point beats on both):\n",
                     result.rank_by.name, metric_title(result.pareto), front.size());
  for (std::size_t i : front) {
    const SearchRow& r = rows[i];
    out += fmt::format("    point {:>6}: {} {:.6g}, {} {:.6g} ({}) {}\n", r.point.index, result.pareto.name,
                       r.figures()->pareto_value, result.rank_by.name, r.figures()->rank_value, r.figures()->fidelity,
                       printable(settings(result, r), 200));
  }
  const SearchRow& winner = rows[ranking[0]];
  out += fmt::format("\n  best: point {} ({}): {} {:.6g}{} at the {} fidelity\n", winner.point.index,
                     printable(settings(result, winner), 300), result.rank_by.name, winner.figures()->rank_value,
                     result.rank_by.unit.empty() ? "" : " " + result.rank_by.unit, winner.figures()->fidelity);
  if (ranking.size() > 1) out += why_the_winner_wins(result, winner, rows[ranking[1]]);
  return out;
}

void write_search_csv(std::ostream& out, const SearchResult& result) {
  const std::vector<std::size_t> ranking = rank_rows(result.rows, result.rank_by);
  std::map<std::size_t, std::size_t> rank_of;
  for (std::size_t k = 0; k < ranking.size(); ++k) rank_of[ranking[k]] = k + 1;
  out << "point";
  for (const SweepAxis& a : result.space.axes) out << ',' << csv_field(a.pointer);
  out << ",status,reason,gpus,memory_per_gpu_bytes,rank," << csv_field(result.rank_by.name) << ','
      << csv_field(result.rank_by.name + "_fast") << ",fidelity,collective_fidelity," << csv_field(result.pareto.name)
      << ",makespan_s,tokens_per_s,throughput_samples_per_s,mfu,compute_s,communication_s,wait_s,tail_idle_s\n";
  for (std::size_t i = 0; i < result.rows.size(); ++i) {
    const SearchRow& r = result.rows[i];
    out << r.point.index;
    for (const std::string& label : r.point.labels) out << ',' << csv_field(label);
    out << ',' << to_string(r.status) << ',' << csv_field(r.reason) << ',' << r.gpus << ','
        << (r.memory ? fmt::format("{}", r.memory->total()) : std::string());
    const SearchFigures* f = r.figures();
    if (f == nullptr) {
      out << ",,,,,,,,,,,,,,\n";
      continue;
    }
    const SearchBreakdown& b = f->breakdown;
    out << fmt::format(",{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", rank_of[i], f->rank_value,
                       r.fast ? fmt::format("{}", r.fast->rank_value) : std::string(), f->fidelity,
                       f->collective_fidelity, f->pareto_value, f->makespan, optional_number(f->tokens_per_s),
                       f->samples_per_s, optional_number(f->mfu), b.compute, b.communication, b.wait, b.tail_idle);
  }
}

namespace {

nlohmann::json figures_json(const SearchFigures& f) {
  nlohmann::json j{{"fidelity", f.fidelity},
                   {"collective_fidelity", f.collective_fidelity},
                   {"rank_value", f.rank_value},
                   {"pareto_value", f.pareto_value},
                   {"makespan_s", f.makespan},
                   {"throughput_samples_per_s", f.samples_per_s},
                   {"tokens_per_s", f.tokens_per_s ? nlohmann::json(*f.tokens_per_s) : nlohmann::json()},
                   {"mfu", f.mfu ? nlohmann::json(*f.mfu) : nlohmann::json()},
                   {"cost_per_million_tokens",
                    f.cost_per_million_tokens ? nlohmann::json(*f.cost_per_million_tokens) : nlohmann::json()},
                   {"energy_per_token_j", f.energy_per_token ? nlohmann::json(*f.energy_per_token) : nlohmann::json()}};
  const SearchBreakdown& b = f.breakdown;
  nlohmann::json breakdown{
      {"compute_s", b.compute}, {"communication_s", b.communication}, {"wait_s", b.wait}, {"tail_idle_s", b.tail_idle}};
  const auto optional = [&breakdown](const char* key, const std::optional<double>& v) {
    if (v) breakdown[key] = *v;
  };
  optional("bubble_s", b.bubble);
  optional("tensor_exposed_s", b.tensor_exposed);
  optional("pipeline_exposed_s", b.pipeline_exposed);
  optional("data_exposed_s", b.data_exposed);
  optional("expert_exposed_s", b.expert_exposed);
  optional("context_exposed_s", b.context_exposed);
  j["breakdown_per_rank"] = breakdown;
  return j;
}

nlohmann::json metric_json(const SearchMetric& m) {
  return {{"name", m.name},
          {"pointers", m.pointers},
          {"goal", goal_name(m.goal)},
          {"unit", m.unit},
          {"meaning", m.meaning}};
}

nlohmann::json index_or_null(const std::vector<std::size_t>& ranking, const std::vector<SearchRow>& rows,
                             std::size_t k) {
  return k < ranking.size() ? nlohmann::json(rows[ranking[k]].point.index) : nlohmann::json();
}

} // namespace

nlohmann::json search_json(const SearchResult& result) {
  const std::vector<SearchRow>& rows = result.rows;
  nlohmann::json space{{"axes", nlohmann::json::array()},
                       {"set", nlohmann::json::object()},
                       {"derived", nlohmann::json::object()},
                       {"constraints", nlohmann::json::array()},
                       {"notes", result.space.notes}};
  for (const SweepAxis& a : result.space.axes)
    space["axes"].push_back({{"pointer", a.pointer}, {"values", a.values}, {"labels", a.labels}});
  for (const Override& o : result.space.sets) space["set"][o.pointer] = o.value;
  for (const DerivedValue& d : result.space.derived) space["derived"][d.pointer] = d.text;
  for (const SearchConstraint& c : result.space.constraints) space["constraints"].push_back(c.text);
  nlohmann::json reasons = nlohmann::json::array();
  for (const InvalidReason& r : count_invalid(rows))
    reasons.push_back(
        {{"reason", r.reason}, {"count", r.count}, {"example_point", r.example}, {"example_error", r.detail}});
  const std::vector<std::size_t> ranking = rank_rows(rows, result.rank_by);
  nlohmann::json ranked = nlohmann::json::array();
  for (std::size_t i : ranking) ranked.push_back(rows[i].point.index);
  nlohmann::json front = nlohmann::json::array();
  for (std::size_t i : pareto_front(rows, result.rank_by, result.pareto)) front.push_back(rows[i].point.index);
  nlohmann::json points = nlohmann::json::array();
  for (const SearchRow& r : rows) {
    nlohmann::json values = nlohmann::json::object();
    for (std::size_t a = 0; a < result.space.axes.size() && a < r.point.overrides.size(); ++a)
      values[result.space.axes[a].pointer] = r.point.overrides[a].value;
    nlohmann::json p{{"point", r.point.index}, {"values", values}, {"status", to_string(r.status)}, {"gpus", r.gpus}};
    if (!r.reason.empty()) p["reason"] = r.reason;
    if (!r.detail.empty()) p["error"] = r.detail;
    if (r.memory) p["memory_per_gpu_bytes"] = r.memory->total();
    if (r.memory) p["memory_capacity_bytes"] = r.memory->capacity;
    if (r.fast) p["fast"] = figures_json(*r.fast);
    if (r.faithful) p["faithful"] = figures_json(*r.faithful);
    points.push_back(std::move(p));
  }
  return {{"schema", "partsim.search"},
          {"schema_version", kSearchSchemaVersion},
          {"partsim_version", partsim_version()},
          {"scenario", result.scenario},
          {"scenario_document", result.scenario_document},
          {"space", space},
          {"shard", {{"index", result.shard}, {"count", result.shards}}},
          {"rank_by", metric_json(result.rank_by)},
          {"pareto_against", metric_json(result.pareto)},
          {"tokens", result.tokens > 0.0 ? nlohmann::json(result.tokens) : nlohmann::json()},
          {"refine", result.refine},
          {"top", result.top},
          {"fidelities", {{"fast", kFastFidelity}, {"faithful", kFaithfulFidelity}}},
          {"counts",
           {{"points", rows.size()},
            {"excluded", count(rows, PointStatus::Excluded)},
            {"invalid", count(rows, PointStatus::Invalid)},
            {"pruned_out_of_memory", count(rows, PointStatus::OutOfMemory)},
            {"simulated_fast", count(rows, PointStatus::Simulated)},
            {"refined_faithful", refined(rows)},
            {"failed", count(rows, PointStatus::Failed)}}},
          {"invalid_reasons", reasons},
          {"ranking", ranked},
          {"winner", index_or_null(ranking, rows, 0)},
          {"runner_up", index_or_null(ranking, rows, 1)},
          {"pareto_front", front},
          {"points", points}};
}

} // namespace partsim
