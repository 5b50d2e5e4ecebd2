// Validation cases, their errors and the tables.
#include "partsim/batch/validation.hpp"

#include "partsim/common/error.hpp"
#include "partsim/common/text.hpp"
#include "partsim/report/report_document.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace partsim {

std::optional<double> ValidationRow::error() const {
  if (!simulated) return std::nullopt;
  return (*simulated - published.value) / published.value;
}

std::vector<std::filesystem::path> validation_cases(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw InputError(dir.string(), "", "expected a folder of validation cases (*.json)");
  std::vector<std::filesystem::path> out;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.is_regular_file() && entry.path().extension() == ".json") out.push_back(entry.path());
  if (ec) throw InputError(dir.string(), "", "cannot list the folder: " + ec.message());
  if (out.empty()) throw InputError(dir.string(), "", "no validation cases (*.json) in this folder");
  std::sort(out.begin(), out.end());
  return out;
}

double report_figure(const nlohmann::json& report, const std::string& pointer, const std::string& source) {
  nlohmann::json::json_pointer at;
  try {
    at = nlohmann::json::json_pointer(pointer);
  } catch (const nlohmann::json::exception&) {
    throw InputError(source, "/published/figure", fmt::format("\"{}\" is not a JSON pointer", pointer));
  }
  const nlohmann::json* value = nullptr;
  try {
    if (report.contains(at)) value = &report.at(at);
  } catch (const nlohmann::json::exception&) {
    value = nullptr;
  }
  if (value == nullptr || !value->is_number())
    throw InputError(source, "/published/figure",
                     fmt::format("the report has no number at {}; expected a figure of report.json "
                                 "(docs/report-reference.md)",
                                 pointer));
  return value->get<double>();
}

std::optional<TimeShares> time_shares(const ReportDocument& report) {
  if (!report.summary || !report.pipeline_stages || report.pipeline_stages->empty()) return std::nullopt;
  const double makespan = report.summary->makespan;
  if (!(makespan > 0.0)) return std::nullopt;
  TimeShares shares;
  double ranks = 0.0;
  for (const ReportStage& stage : *report.pipeline_stages) {
    // A run out of memory reports its stages' memory without their times.
    if (!stage.compute || !stage.ranks) return std::nullopt;
    const auto weight = static_cast<double>(*stage.ranks);
    ranks += weight;
    shares.compute += weight * *stage.compute;
    shares.tensor += weight * stage.tensor_exposed.value_or(0.0);
    shares.context += weight * stage.context_exposed.value_or(0.0);
    shares.expert += weight * stage.expert_exposed.value_or(0.0);
    shares.data += weight * stage.data_exposed.value_or(0.0);
    shares.pipeline += weight * stage.pipeline_exposed.value_or(0.0);
  }
  if (!(ranks > 0.0)) return std::nullopt;
  for (double* share :
       {&shares.compute, &shares.tensor, &shares.context, &shares.expert, &shares.data, &shares.pipeline})
    *share /= ranks * makespan;
  shares.idle = std::max(0.0, 1.0 - shares.compute - shares.tensor - shares.context - shares.expert - shares.data -
                                  shares.pipeline);
  return shares;
}

ValidationSummary summarise(const std::vector<ValidationRow>& rows) {
  ValidationSummary s;
  s.cases = rows.size();
  std::size_t ran = 0;
  for (const ValidationRow& row : rows) {
    const std::optional<double> e = row.error();
    if (!e) {
      ++s.failed;
      continue;
    }
    ++ran;
    s.mean_abs_error += std::abs(*e);
    if (std::abs(*e) >= s.worst_abs_error) {
      s.worst_abs_error = std::abs(*e);
      s.worst_case = row.name;
    }
  }
  if (ran > 0) s.mean_abs_error /= static_cast<double>(ran);
  return s;
}

std::vector<ValidationGroup> summarise_groups(const std::vector<ValidationRow>& rows) {
  const bool grouped =
      std::any_of(rows.begin(), rows.end(), [](const ValidationRow& row) { return !row.published.group.empty(); });
  if (!grouped) return {};
  std::vector<std::string> names;
  for (const ValidationRow& row : rows)
    if (std::find(names.begin(), names.end(), row.published.group) == names.end()) names.push_back(row.published.group);
  std::vector<ValidationGroup> out;
  for (const std::string& name : names) {
    std::vector<ValidationRow> members;
    ValidationGroup g;
    g.name = name;
    bool first = true;
    for (const ValidationRow& row : rows) {
      if (row.published.group != name) continue;
      members.push_back(row);
      const std::optional<double> e = row.error();
      if (!e) continue;
      g.lowest_error = first ? *e : std::min(g.lowest_error, *e);
      g.highest_error = first ? *e : std::max(g.highest_error, *e);
      first = false;
    }
    g.summary = summarise(members);
    out.push_back(std::move(g));
  }
  return out;
}

namespace {

/** A group's name in a table: "(no group)" for the cases that name none. */
std::string group_label(const std::string& name) {
  return name.empty() ? "(no group)" : printable(name, 100);
}

/** `text` in a markdown table cell: its pipes escaped. */
std::string markdown_cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

std::string group_cases(const ValidationSummary& s) {
  return s.failed > 0 ? fmt::format("{} ({} did not run)", s.cases - s.failed, s.failed) : fmt::format("{}", s.cases);
}

std::string group_errors(const ValidationGroup& g) {
  if (g.summary.cases == g.summary.failed) return "-";
  if (g.lowest_error == g.highest_error) return fmt::format("{:+.1f}%", 100 * g.lowest_error);
  return fmt::format("{:+.1f}% .. {:+.1f}%", 100 * g.lowest_error, 100 * g.highest_error);
}

std::string group_mean(const ValidationGroup& g) {
  return g.summary.cases > g.summary.failed ? fmt::format("{:.1f}%", 100 * g.summary.mean_abs_error) : "-";
}

std::string error_text(const std::optional<double>& e) {
  return e ? fmt::format("{:+.1f}%", 100 * *e) : "-";
}

constexpr const char* kSignNote = "error = (simulated - published) / published: on a time (s) too fast is -, on a "
                                  "rate (MFU, bandwidth) too fast is +";

std::string value_text(double v, const std::string& unit) {
  if (unit == "B/s") return fmt::format("{:.1f} GB/s", v / 1e9);
  if (unit == "B") return fmt::format("{:.2f} GB", v / 1e9);
  return fmt::format("{:.4g}{}{}", v, unit.empty() ? "" : " ", unit);
}

std::string summary_line(const ValidationSummary& s) {
  return fmt::format("mean |error| {:.1f}%, worst {:.1f}% ({}) over {} case(s){}", 100 * s.mean_abs_error,
                     100 * s.worst_abs_error, s.worst_case, s.cases - s.failed,
                     s.failed > 0 ? fmt::format("; {} did not run", s.failed) : std::string());
}

/** The case column's width in the terminal tables: the longest name, 4 to 60 characters. */
std::size_t case_width(const std::vector<ValidationRow>& rows) {
  std::size_t width = 4;
  for (const ValidationRow& row : rows) width = std::max(width, row.name.size());
  return std::min<std::size_t>(width, 60);
}

/** The shares' cells in table order (compute, tensor, context, expert, data, pipeline, idle), in percent. */
std::vector<std::string> share_cells(const std::optional<TimeShares>& shares) {
  if (!shares) return std::vector<std::string>(7, "-");
  std::vector<std::string> out;
  for (double share :
       {shares->compute, shares->tensor, shares->context, shares->expert, shares->data, shares->pipeline, shares->idle})
    out.push_back(fmt::format("{:.1f}%", 100 * share));
  return out;
}

constexpr const char* kShareNote =
    "shares of the simulated makespan, averaged over the GPUs: compute, then the communication the compute did not "
    "hide, by kind (pipeline: the wait for the neighbouring stages, the bubble included), then idle (the wait for a "
    "slower stage); a case's error can only come from where its time goes (-: a collective benchmark, a memory "
    "figure, a run out of memory)";

} // namespace

std::string format_validation_table(const std::vector<ValidationRow>& rows) {
  const std::size_t width = case_width(rows);
  std::string out = fmt::format("  {:<{}}  {:>16}  {:>16}  {:>8}\n", "case", width, "simulated", "published", "error");
  for (const ValidationRow& row : rows) {
    out += fmt::format("  {:<{}}  {:>16}  {:>16}  {:>8}\n", printable(row.name, 60), width,
                       row.simulated ? value_text(*row.simulated, row.published.unit) : std::string("failed"),
                       value_text(row.published.value, row.published.unit), error_text(row.error()));
  }
  out += "\n  " + summary_line(summarise(rows)) + "\n";
  if (const std::vector<ValidationGroup> groups = summarise_groups(rows); !groups.empty()) {
    std::size_t group_width = 5;
    for (const ValidationGroup& g : groups) group_width = std::max(group_width, group_label(g.name).size());
    group_width = std::min<std::size_t>(group_width, 80);
    out += fmt::format("\n  {:<{}}  {:>8}  {:>18}  {:>12}\n", "group", group_width, "cases", "errors", "mean |error|");
    for (const ValidationGroup& g : groups)
      out += fmt::format("  {:<{}}  {:>8}  {:>18}  {:>12}\n", group_label(g.name), group_width, group_cases(g.summary),
                         group_errors(g), group_mean(g));
    out += fmt::format("  ({})\n", kSignNote);
  }
  for (const ValidationRow& row : rows)
    if (!row.failure.empty()) out += fmt::format("  {}: {}\n", row.name, printable(row.failure, 300));
  return out;
}

std::string format_validation_markdown(const std::vector<ValidationRow>& rows) {
  std::string out = "| case | figure | simulated | published | error | source |\n|---|---|---|---|---|---|\n";
  for (const ValidationRow& row : rows) {
    out += fmt::format("| `{}` | `{}` | {} | {} | {} | [{}]({}) |\n", row.name, row.published.figure,
                       row.simulated ? value_text(*row.simulated, row.published.unit) : std::string("failed"),
                       value_text(row.published.value, row.published.unit), error_text(row.error()),
                       row.published.source, row.published.url);
  }
  out += "\n" + summary_line(summarise(rows)) + "\n";
  if (const std::vector<ValidationGroup> groups = summarise_groups(rows); !groups.empty()) {
    out += "\n| group | cases | errors | mean \\|error\\| |\n|---|---|---|---|\n";
    for (const ValidationGroup& g : groups)
      out += fmt::format("| {} | {} | {} | {} |\n", markdown_cell(group_label(g.name)), group_cases(g.summary),
                         group_errors(g), group_mean(g));
    out += fmt::format("\n{}.\n", kSignNote);
  }
  return out;
}

std::string format_time_shares_table(const std::vector<ValidationRow>& rows) {
  const std::size_t width = case_width(rows);
  std::string out = fmt::format("  {:<{}}  {:>8}  {:>7}  {:>7}  {:>7}  {:>7}  {:>8}  {:>7}\n", "case", width, "compute",
                                "tensor", "context", "expert", "data", "pipeline", "idle");
  for (const ValidationRow& row : rows) {
    const std::vector<std::string> c = share_cells(row.shares);
    out += fmt::format("  {:<{}}  {:>8}  {:>7}  {:>7}  {:>7}  {:>7}  {:>8}  {:>7}\n", printable(row.name, 60), width,
                       c[0], c[1], c[2], c[3], c[4], c[5], c[6]);
  }
  out += fmt::format("  ({})\n", kShareNote);
  return out;
}

std::string format_time_shares_markdown(const std::vector<ValidationRow>& rows) {
  std::string out = "| case | compute | tensor | context | expert | data | pipeline | idle |\n"
                    "|---|---|---|---|---|---|---|---|\n";
  for (const ValidationRow& row : rows) {
    const std::vector<std::string> c = share_cells(row.shares);
    out += fmt::format("| `{}` | {} | {} | {} | {} | {} | {} | {} |\n", row.name, c[0], c[1], c[2], c[3], c[4], c[5],
                       c[6]);
  }
  out += fmt::format("\n{}.\n", kShareNote);
  return out;
}

} // namespace partsim
