// SearchOutcome: a `partsim search --json` file read by the core's search_result_from_json (the code `partsim merge`
// reads it with), as the rows of the search view's table and the points of its scatter and Pareto front.
#pragma once

#include "partsim/batch/search.hpp"

#include <QByteArray>
#include <QString>

#include <cstdint>
#include <optional>
#include <vector>

namespace partsim::gui {

/** The scatter's second figure, against the ranking metric: the cost or the energy of training the token budget. */
enum class SearchSecondFigure { Cost, Energy };

/** One point of the search, as the table shows it. */
struct SearchCandidate {
  std::size_t point = 0; ///< its index in the space (and in SearchOutcome::result.rows)
  QString settings;      ///< its axis values: "/strategy/tensor=4, /strategy/pipeline=8"
  QString status;        ///< simulated, excluded, invalid, out_of_memory, failed
  QString reason;        ///< why it was left out (or why its faithful run failed)
  std::int64_t gpus = 0;
  std::optional<double> memory_gib; ///< the planner's memory per GPU
  int rank = 0;                     ///< 1: the best; 0: not ranked (no figures)
  std::optional<double> rank_value; ///< the ranking metric, from its most faithful figures
  QString fidelity;                 ///< of those figures: fast or faithful
  std::optional<double> makespan, tokens_per_s, mfu;
  std::optional<double> cost;   ///< of training the token budget (per million tokens without one)
  std::optional<double> energy; ///< of training the token budget, in MWh (J per token without one)
};

struct SearchOutcome {
  SearchResult result;                     ///< as the core read it
  std::vector<SearchCandidate> candidates; ///< one per point of the search, in point order
  std::vector<std::size_t> ranking;        ///< candidate indices, best first (the search's ranking)
  QString rank_title;                      ///< "time_to_train (s)"

  /** The title of a second figure with its unit: "cost to train 1e+12 tokens (currency)". */
  QString second_title(SearchSecondFigure figure) const;
  /** A candidate's second figure, if it has one. */
  std::optional<double> second(std::size_t candidate, SearchSecondFigure figure) const;
};

/** Reads a search's JSON. @returns nullopt with `error` set (the core's one-line message) when it does not read. */
std::optional<SearchOutcome> parse_search_json(const QByteArray& text, QString* error = nullptr);

/** The candidates no other beats on both the ranking metric and `figure` (the core's pareto_front), by `figure`,
 * lowest first. Candidates without the figure (a GPU profile without power figures) are left out. */
std::vector<std::size_t> search_front(const SearchOutcome& outcome, SearchSecondFigure figure);

/** What loads a candidate into the scenario: the space's fixed values, the candidate's axis values and the derived
 * values evaluated on `document` (the core's point_overrides; a removal for `default`). @throws InputError */
std::vector<Override> candidate_overrides(const SearchOutcome& outcome, std::size_t candidate,
                                          const nlohmann::json& document);

} // namespace partsim::gui
