// Search JSON reading for the search view: the core reads it strictly, this turns it into table rows.
#include "search_result.hpp"

#include "partsim/batch/search_space.hpp"
#include "partsim/common/error.hpp"
#include "partsim/input/json_file.hpp"

#include <QStringList>

namespace partsim::gui {

namespace {

constexpr double kJoulesPerMWh = 3.6e9;

std::optional<double> cost_of(const SearchFigures& f, double tokens) {
  if (!f.cost_per_million_tokens) return std::nullopt;
  return tokens > 0.0 ? *f.cost_per_million_tokens * tokens / 1e6 : *f.cost_per_million_tokens;
}

std::optional<double> energy_of(const SearchFigures& f, double tokens) {
  if (!f.energy_per_token) return std::nullopt;
  return tokens > 0.0 ? *f.energy_per_token * tokens / kJoulesPerMWh : *f.energy_per_token;
}

} // namespace

QString SearchOutcome::second_title(SearchSecondFigure figure) const {
  const bool budget = result.tokens > 0.0;
  if (figure == SearchSecondFigure::Cost)
    return budget ? QStringLiteral("cost to train %1 tokens (currency)").arg(result.tokens, 0, 'g', 3)
                  : QStringLiteral("cost per million tokens (currency)");
  return budget ? QStringLiteral("energy to train %1 tokens (MWh)").arg(result.tokens, 0, 'g', 3)
                : QStringLiteral("energy per token (J)");
}

std::optional<double> SearchOutcome::second(std::size_t candidate, SearchSecondFigure figure) const {
  return figure == SearchSecondFigure::Cost ? candidates[candidate].cost : candidates[candidate].energy;
}

std::optional<SearchOutcome> parse_search_json(const QByteArray& text, QString* error) {
  SearchOutcome out;
  try {
    const std::string source = "search.json";
    out.result = search_result_from_json(parse_json_text(text.toStdString(), source), source);
  } catch (const InputError& e) {
    if (error != nullptr) *error = QString::fromStdString(e.what());
    return std::nullopt;
  }
  const SearchResult& r = out.result;
  out.rank_title =
      QString::fromStdString(r.rank_by.unit.empty() ? r.rank_by.name : r.rank_by.name + " (" + r.rank_by.unit + ")");
  out.ranking = rank_rows(r.rows, r.rank_by);
  for (const SearchRow& row : r.rows) {
    SearchCandidate c;
    c.point = row.point.index;
    QStringList settings;
    for (std::size_t a = 0; a < r.space.axes.size() && a < row.point.labels.size(); ++a)
      settings << QString::fromStdString(r.space.axes[a].pointer + "=" + row.point.labels[a]);
    c.settings = settings.join(QStringLiteral(", "));
    c.status = QString::fromStdString(to_string(row.status));
    c.reason = QString::fromStdString(row.reason);
    c.gpus = row.gpus;
    if (row.memory) c.memory_gib = row.memory->total() / 1073741824.0;
    if (const SearchFigures* f = row.figures()) {
      c.rank_value = f->rank_value;
      c.fidelity = QString::fromStdString(f->fidelity);
      c.makespan = f->makespan;
      c.tokens_per_s = f->tokens_per_s;
      c.mfu = f->mfu;
      c.cost = cost_of(*f, r.tokens);
      c.energy = energy_of(*f, r.tokens);
    }
    out.candidates.push_back(std::move(c));
  }
  for (std::size_t k = 0; k < out.ranking.size(); ++k) out.candidates[out.ranking[k]].rank = static_cast<int>(k + 1);
  return out;
}

std::vector<std::size_t> search_front(const SearchOutcome& outcome, SearchSecondFigure figure) {
  // The core's front over the rows, their Pareto figure replaced by this one; rows without it take no part.
  std::vector<SearchRow> rows = outcome.result.rows;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::optional<double> value = outcome.second(i, figure);
    for (std::optional<SearchFigures>* f : {&rows[i].fast, &rows[i].faithful}) {
      if (!f->has_value()) continue;
      if (value)
        (*f)->pareto_value = *value; // the most faithful figures give it: the same for both
      else
        f->reset();
    }
  }
  SearchMetric second;
  second.name = figure == SearchSecondFigure::Cost ? "cost" : "energy";
  second.goal = Goal::Minimise;
  return pareto_front(rows, outcome.result.rank_by, second);
}

std::vector<Override> candidate_overrides(const SearchOutcome& outcome, std::size_t candidate,
                                          const nlohmann::json& document) {
  return point_overrides(document, outcome.result.space, outcome.result.rows[candidate].point);
}

} // namespace partsim::gui
