// partsim search: which points of a space are valid and fit in memory, the metrics that rank the simulated ones, the
// fidelity of each figure, the ranking, the Pareto front and why the winner wins.
#pragma once

#include "partsim/batch/search_space.hpp"
#include "partsim/common/enum_names.hpp"
#include "partsim/model/memory.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace partsim {

enum class Goal { Minimise, Maximise };

/** A figure that ranks the points: one row of kSearchMetrics, or any report.json pointer with `:min` or `:max`. A
 * later metric (cost, energy) is one more row pointing at its report figure. */
struct SearchMetric {
  std::string name;
  std::vector<std::string> pointers; ///< report.json pointers: the first one a report has gives the figure
  Goal goal = Goal::Maximise;
  std::string unit;
  std::string meaning;
  bool per_token_budget = false; ///< the figure is tokens / pointer's value (time to train `--tokens`)
  double budget_total = 0.0; ///< > 0: the figure is the pointer's value x tokens x this (a per-token figure's total)

  /** The metric is a figure of a token budget: it needs `--tokens`. */
  bool needs_tokens() const { return per_token_budget || budget_total > 0.0; }
};

/** The named metrics (`--rank-by NAME`, `--pareto NAME`). */
const std::vector<SearchMetric>& search_metrics();

/** A metric's value in a report.json (its first pointer the report has a number at), scaled to `tokens` where the
 * metric is a budget's figure. @throws InputError(source, pointer, ...) when the report has none. */
double search_metric_value(const SearchMetric& metric, const nlohmann::json& report, const std::string& source,
                           double tokens);

/** A named metric, or `/report/pointer:min` / `:max`. @throws InputError(option, text, ...) */
SearchMetric parse_search_metric(const std::string& text, const std::string& option);

/** What became of a point. */
enum class PointStatus {
  Excluded,    ///< breaks a constraint of the space
  Invalid,     ///< the scenario refuses it (an InputError: divisibility, heads, layers per stage, ...)
  OutOfMemory, ///< the planner's memory model says it cannot fit: pruned before any simulation
  Simulated,   ///< has figures (fast, and faithful when refined)
  Failed,      ///< a child run failed otherwise (a crash): no figures
};
template <>
struct EnumNames<PointStatus> {
  static constexpr std::array<EnumEntry<PointStatus>, 5> entries{{{PointStatus::Excluded, "excluded"},
                                                                  {PointStatus::Invalid, "invalid"},
                                                                  {PointStatus::OutOfMemory, "out_of_memory"},
                                                                  {PointStatus::Simulated, "simulated"},
                                                                  {PointStatus::Failed, "failed"}}};
};
inline std::string to_string(PointStatus status) {
  return std::string(enum_name(status));
}

/** Where a point's time went, from its report: means over the ranks, in s (model parallelism adds its parts). */
struct SearchBreakdown {
  double compute = 0.0;
  double communication = 0.0; ///< exposed transfers
  double wait = 0.0;          ///< blocked on a peer
  double tail_idle = 0.0;     ///< done before the makespan
  std::optional<double> bubble, tensor_exposed, pipeline_exposed, data_exposed, expert_exposed, context_exposed;
};

/** The figures of one simulation of a point, at one fidelity. */
struct SearchFigures {
  std::string fidelity;            ///< "fast" or "faithful"
  std::string collective_fidelity; ///< the levels its collectives ran at ("analytic", "flows+steps"), "-" without
  double rank_value = 0.0;         ///< the --rank-by metric
  double pareto_value = 0.0;       ///< the --pareto metric
  double makespan = 0.0;
  double samples_per_s = 0.0;
  std::optional<double> tokens_per_s, mfu;
  std::optional<double> cost_per_million_tokens; ///< /cost/per_million_tokens, when the report has it
  std::optional<double> energy_per_token;        ///< /energy/per_token_j (J), when the report has it
  SearchBreakdown breakdown;
};

/** One point of the search and what became of it. */
struct SearchRow {
  SweepPoint point;
  PointStatus status = PointStatus::Simulated;
  std::string reason; ///< Excluded: the constraint; Invalid: the error without the point's figures; Failed: why
  std::string detail; ///< Invalid: the whole error, for the example of its reason
  std::int64_t gpus = 0;
  std::optional<MemoryBreakdown> memory; ///< the planner's memory model, when the workload has one
  std::vector<Override> overrides;       ///< what makes the point (fixed, axis and derived values)
  std::optional<SearchFigures> fast, faithful;

  /** The most faithful figures it has, or nullptr. */
  const SearchFigures* figures() const;
};

/** The error of an invalid point with its figures taken out (numbers become N), so that points refused for the same
 * reason count together: "/strategy: data x tensor x pipeline (N x N x N = N) is not the GPU count N". */
std::string invalid_reason(const std::string& pointer, const std::string& detail);

/** Classifies a point without planning or simulating it: Excluded, Invalid, OutOfMemory, or Simulated for a point
 * left to simulate (its figures come later). @throws InputError for a mistake of the space itself (a constraint's
 * pointer absent from the scenario). */
SearchRow classify_point(const nlohmann::json& scenario, const std::string& scenario_path, const SearchSpace& space,
                         const SweepPoint& point, const std::filesystem::path& data_dir);

/** The overrides that run a point at the fast fidelity: every collective analytic (alpha-beta, no network simulation)
 * and a tensor-parallel pass's collectives fused into one (granularity "pass"). Empty when the scenario has nothing to
 * make faster. */
std::vector<Override> fast_fidelity_overrides(const nlohmann::json& point_document);

/** The figures of a simulated report (report.json's value). @throws InputError(source, pointer) when the report lacks
 * a metric's figure. */
SearchFigures search_figures(const nlohmann::json& report, const std::string& source, const SearchMetric& rank_by,
                             const SearchMetric& pareto, double tokens);

/** Indices of the simulated rows, best first: the refined ones by their faithful figure, then the others by their fast
 * one; ties go to the lower point index. */
std::vector<std::size_t> rank_rows(const std::vector<SearchRow>& rows, const SearchMetric& rank_by);

/** The `count` best simulated rows at the fast fidelity (the candidates to refine), best first. */
std::vector<std::size_t> refine_candidates(const std::vector<SearchRow>& rows, const SearchMetric& rank_by,
                                           std::size_t count);

/** Indices of the simulated rows that no other row beats on both metrics (their most faithful figures), by the
 * second metric, best first. */
std::vector<std::size_t> pareto_front(const std::vector<SearchRow>& rows, const SearchMetric& rank_by,
                                      const SearchMetric& pareto);

/** Invalid points counted by reason, most frequent first (then by reason), with the first point of each. */
struct InvalidReason {
  std::string reason;
  std::size_t count = 0;
  std::size_t example = 0; ///< point index
  std::string detail;      ///< the example's whole error
};
std::vector<InvalidReason> count_invalid(const std::vector<SearchRow>& rows);

/** Everything a search reports. */
struct SearchResult {
  std::string scenario;             ///< the scenario's path, as given
  nlohmann::json scenario_document; ///< the scenario file as the search read it (shards compare it)
  SearchSpace space;
  SearchMetric rank_by;
  SearchMetric pareto;
  double tokens = 0.0; ///< --tokens, 0: none
  std::size_t refine = 0;
  std::size_t top = 10;
  std::size_t shard = 0;
  std::size_t shards = 1;
  std::vector<SearchRow> rows; ///< every point of the shard, by index
};

/** The terminal table: counts, invalid reasons, the top points, the Pareto front and why the winner wins. */
std::string format_search_table(const SearchResult& result);

/** One CSV row per point, every status. */
void write_search_csv(std::ostream& out, const SearchResult& result);

/** The whole search as JSON (schema `partsim.search`). */
nlohmann::json search_json(const SearchResult& result);

/** Reads what search_json wrote, strictly: unknown or missing keys, wrong types, points that are not the points of
 * the space's shard in index order, and derived parts (counts, invalid reasons, ranking, winner, Pareto front) that
 * are not what the points give are errors. Only the total and capacity of a point's memory are kept (held in
 * `parameters` and `capacity`); the points' `overrides` are their axis values. @throws InputError(source, pointer,
 * what was expected) */
SearchResult search_result_from_json(const nlohmann::json& json, const std::string& source);

/** Version of the partsim.search schema (2: the scenario's document, the axes' labels, `top`, and each figure's cost
 * and energy). */
inline constexpr int kSearchSchemaVersion = 2;

} // namespace partsim
