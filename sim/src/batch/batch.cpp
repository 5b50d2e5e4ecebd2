// Batch runs: scenarios, baseline comparison and the JUnit, markdown and JSON summaries.
#include "partsim/batch/batch.hpp"

#include "partsim/common/error.hpp"
#include "partsim/common/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace partsim {

namespace fs = std::filesystem;

std::vector<fs::path> batch_scenarios(const std::vector<std::string>& arguments) {
  if (arguments.empty()) throw InputError("partsim batch", "", "expected a folder or scenario files");
  std::vector<fs::path> files;
  for (const std::string& argument : arguments) {
    const fs::path path(argument);
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      std::vector<fs::path> found;
      for (const fs::directory_entry& entry : fs::directory_iterator(path, ec))
        if (entry.path().extension() == ".json" && entry.is_regular_file(ec)) found.push_back(entry.path());
      if (ec) throw InputError(argument, "", fmt::format("cannot list the folder: {}", ec.message()));
      if (found.empty()) throw InputError(argument, "", "expected scenario files (*.json) in this folder; found none");
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::is_regular_file(path, ec)) {
      files.push_back(path);
    } else {
      throw InputError(argument, "", "expected a scenario file or a folder of them; there is no such file");
    }
  }
  std::map<std::string, fs::path> by_name;
  for (const fs::path& file : files) {
    const auto [it, fresh] = by_name.emplace(file.stem().string(), file);
    if (!fresh)
      throw InputError(file.string(), "",
                       fmt::format("a case is named by its file name, and {} has the same one; expected distinct "
                                   "file names",
                                   it->second.string()));
  }
  return files;
}

double Tolerances::of(const std::string& figure) const {
  for (auto it = by_figure.rbegin(); it != by_figure.rend(); ++it)
    if (it->first == figure) return it->second;
  return all;
}

void add_tolerance(Tolerances& tolerances, const std::string& text) {
  const auto eq = text.find('=');
  const std::string figure = eq == std::string::npos ? "" : text.substr(0, eq);
  const std::string number = eq == std::string::npos ? text : text.substr(eq + 1);
  if (eq != std::string::npos && (figure.empty() || figure[0] != '/'))
    throw InputError("--tolerance", "", fmt::format("expected REL or /json/pointer=REL, got \"{}\"", printable(text)));
  double value = 0.0;
  std::size_t used = 0;
  try {
    value = std::stod(number, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != number.size() || !std::isfinite(value) || value < 0)
    throw InputError("--tolerance", figure,
                     fmt::format("expected a relative tolerance >= 0 (0.01 is 1%), got \"{}\"", printable(number)));
  if (figure.empty())
    tolerances.all = value;
  else
    tolerances.by_figure.emplace_back(figure, value);
}

namespace {

/** The numbers under /summary and the verdict, by pointer. */
std::map<std::string, nlohmann::json> figures(const nlohmann::json& report) {
  std::map<std::string, nlohmann::json> out;
  if (!report.is_object()) return out;
  if (report.contains("verdict")) out["/verdict"] = report["verdict"];
  for (const char* section : {"summary", "memory_per_gpu"})
    if (report.contains(section) && report[section].is_object()) {
      const nlohmann::json flat = report[section].flatten(); // items() of a temporary would dangle
      for (const auto& [pointer, value] : flat.items())
        if (value.is_number()) out[fmt::format("/{}{}", section, pointer)] = value;
    }
  return out;
}

bool moved(const nlohmann::json& before, const nlohmann::json& after, double tolerance) {
  if (before.is_number() && after.is_number()) {
    const double b = before.get<double>();
    const double a = after.get<double>();
    // Past the tolerance, and past rounding: a figure that is zero in exact arithmetic (a CV of equal loads) comes
    // out as 0 or 1e-16 depending on summation order.
    // From zero, a move is 100% of the new value: a tolerance of 1 or more accepts it.
    const double scale = b != 0 ? std::abs(b) : std::abs(a);
    return std::abs(a - b) > tolerance * scale && std::abs(a - b) > 1e-12;
  }
  return before != after;
}

} // namespace

std::vector<FigureChange> compare_reports(const nlohmann::json& before, const nlohmann::json& after,
                                          const Tolerances& tolerances) {
  const auto old_figures = figures(before);
  const auto new_figures = figures(after);
  std::set<std::string> pointers;
  for (const auto& [p, v] : old_figures) pointers.insert(p);
  for (const auto& [p, v] : new_figures) pointers.insert(p);
  std::vector<FigureChange> changes;
  for (const std::string& p : pointers) {
    FigureChange c;
    c.figure = p;
    c.tolerance = tolerances.of(p);
    if (auto it = old_figures.find(p); it != old_figures.end()) c.before = it->second;
    if (auto it = new_figures.find(p); it != new_figures.end()) c.after = it->second;
    if (!moved(c.before, c.after, c.tolerance)) continue;
    if (c.before.is_number() && c.after.is_number() && c.before.get<double>() != 0)
      c.relative = (c.after.get<double>() - c.before.get<double>()) / std::abs(c.before.get<double>());
    changes.push_back(std::move(c));
  }
  return changes;
}

std::size_t BatchCase::failed_expectations() const {
  return static_cast<std::size_t>(
      std::count_if(expectations.begin(), expectations.end(), [](const ExpectationResult& r) { return !r.holds; }));
}

BatchCase::Outcome BatchCase::outcome() const {
  if (!error.empty()) return Outcome::Error;
  return failed_expectations() > 0 || !changes.empty() ? Outcome::Failed : Outcome::Passed;
}

std::vector<BatchCase> failures_last(std::vector<BatchCase> cases) {
  std::stable_sort(cases.begin(), cases.end(), [](const BatchCase& a, const BatchCase& b) {
    if (a.outcome() != b.outcome()) return a.outcome() < b.outcome();
    return a.name < b.name;
  });
  return cases;
}

int batch_exit_code(const std::vector<BatchCase>& cases) {
  int code = 0;
  for (const BatchCase& c : cases) {
    if (c.outcome() == BatchCase::Outcome::Error && c.exit_code == 2) return 2;
    if (c.outcome() != BatchCase::Outcome::Passed) code = 1;
  }
  return code;
}

namespace {

const char* outcome_name(BatchCase::Outcome o) {
  switch (o) {
  case BatchCase::Outcome::Passed:
    return "passed";
  case BatchCase::Outcome::Failed:
    return "failed";
  case BatchCase::Outcome::Error:
    return "error";
  }
  return "error";
}

std::string value_text(const nlohmann::json& v) {
  if (v.is_null()) return "absent";
  if (v.is_number_float()) return fmt::format("{:.6g}", v.get<double>());
  return v.dump();
}

std::string change_text(const FigureChange& c) {
  if (c.relative) return fmt::format("{:+.2f}%", 100 * *c.relative);
  if (c.before.is_null()) return "new";
  if (c.before.is_number() && c.before.get<double>() == 0) return "from 0";
  if (c.after.is_null()) return "gone";
  return "changed";
}

std::string describe_change(const FigureChange& c) {
  return fmt::format("{} moved from {} to {} ({}, tolerance {}%)", c.figure, value_text(c.before), value_text(c.after),
                     change_text(c), 100 * c.tolerance);
}

/** Why a case did not pass, one line per reason. */
std::vector<std::string> reasons(const BatchCase& c) {
  std::vector<std::string> out;
  if (!c.error.empty()) out.push_back(fmt::format("exit code {}: {}", c.exit_code, c.error));
  for (const ExpectationResult& r : c.expectations)
    if (!r.holds) out.push_back("expectation " + describe_failure(r));
  for (const FigureChange& change : c.changes) out.push_back("baseline: " + describe_change(change));
  return out;
}

std::string xml(const std::string& text) {
  std::string out;
  for (const char ch : printable(text)) {
    switch (ch) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&apos;";
      break;
    default:
      out += ch;
    }
  }
  return out;
}

/** A JUnit test case: self-closed when it passed, else with its failure or error element. */
std::string testcase(const std::string& suite, const std::string& name, const std::string& body) {
  if (body.empty()) return fmt::format("    <testcase classname=\"{}\" name=\"{}\"/>\n", xml(suite), xml(name));
  return fmt::format("    <testcase classname=\"{}\" name=\"{}\">\n{}    </testcase>\n", xml(suite), xml(name), body);
}

std::string cell(const std::string& text) {
  std::string out;
  for (const char ch : printable(text)) {
    if (ch == '|') out += '\\';
    out += ch;
  }
  return out;
}

std::string makespan_text(const BatchCase& c) {
  return c.makespan ? fmt::format("{:.6g} s", *c.makespan) : "-";
}

std::string expectations_text(const BatchCase& c) {
  if (c.expectations.empty()) return "-";
  return fmt::format("{} of {} hold", c.expectations.size() - c.failed_expectations(), c.expectations.size());
}

std::size_t count(const std::vector<BatchCase>& cases, BatchCase::Outcome o) {
  return static_cast<std::size_t>(
      std::count_if(cases.begin(), cases.end(), [o](const BatchCase& c) { return c.outcome() == o; }));
}

} // namespace

std::string format_junit(const std::vector<BatchCase>& cases) {
  std::size_t tests = 0, failures = 0, errors = 0;
  std::string suites;
  for (const BatchCase& c : cases) {
    std::size_t suite_tests = 1, suite_failures = 0, suite_errors = c.error.empty() ? 0 : 1;
    std::string body = testcase(c.name, "run",
                                c.error.empty() ? ""
                                                : fmt::format("      <error message=\"{}\" type=\"exit code {}\"/>\n",
                                                              xml(c.error), c.exit_code));
    for (const ExpectationResult& r : c.expectations) {
      ++suite_tests;
      if (!r.holds) ++suite_failures;
      body += testcase(
          c.name, "expect " + r.figure,
          r.holds ? ""
                  : fmt::format("      <failure message=\"{}\" type=\"expectation\"/>\n", xml(describe_failure(r))));
    }
    if (c.has_baseline) {
      ++suite_tests;
      std::string failure;
      if (!c.changes.empty()) {
        ++suite_failures;
        std::string text;
        for (const FigureChange& change : c.changes) text += describe_change(change) + "\n";
        failure = fmt::format("      <failure message=\"{} figures moved past their tolerance\" "
                              "type=\"regression\">{}</failure>\n",
                              c.changes.size(), xml(text));
      }
      body += testcase(c.name, "baseline", failure);
    }
    suites += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"0\">\n",
                          xml(c.name), suite_tests, suite_failures, suite_errors);
    suites += fmt::format("    <properties><property name=\"scenario\" value=\"{}\"/></properties>\n", xml(c.path));
    suites += body + "  </testsuite>\n";
    tests += suite_tests;
    failures += suite_failures;
    errors += suite_errors;
  }
  return fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                     "<testsuites name=\"partsim batch\" tests=\"{}\" failures=\"{}\" errors=\"{}\">\n{}"
                     "</testsuites>\n",
                     tests, failures, errors, suites);
}

std::string format_batch_markdown(const std::vector<BatchCase>& cases) {
  std::string out = "# partsim batch\n\n";
  out += fmt::format("{} scenarios: {} passed, {} failed, {} errors.\n\n", cases.size(),
                     count(cases, BatchCase::Outcome::Passed), count(cases, BatchCase::Outcome::Failed),
                     count(cases, BatchCase::Outcome::Error));
  out += "| Scenario | Result | Verdict | Makespan | Expectations | Baseline |\n";
  out += "|---|---|---|---|---|---|\n";
  for (const BatchCase& c : cases)
    out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", cell(c.name), outcome_name(c.outcome()),
                       c.verdict.empty() ? "-" : cell(c.verdict), makespan_text(c), expectations_text(c),
                       !c.has_baseline     ? "-"
                       : c.changes.empty() ? "unchanged"
                                           : fmt::format("{} moved", c.changes.size()));
  bool any_failure = false;
  for (const BatchCase& c : cases) {
    const auto why = reasons(c);
    if (why.empty()) continue;
    if (!any_failure) out += "\n## Failures\n\n";
    any_failure = true;
    out += fmt::format("- **{}** ({})\n", cell(c.name), cell(c.path));
    for (const std::string& line : why) out += fmt::format("  - {}\n", cell(line));
  }
  bool any_change = false;
  for (const BatchCase& c : cases)
    for (const FigureChange& change : c.changes) {
      if (!any_change)
        out += "\n## Figures that moved past their tolerance\n\n| Scenario | Figure | Before | After | Change | "
               "Tolerance |\n|---|---|---|---|---|---|\n";
      any_change = true;
      out += fmt::format("| {} | `{}` | {} | {} | {} | {}% |\n", cell(c.name), cell(change.figure),
                         cell(value_text(change.before)), cell(value_text(change.after)), change_text(change),
                         100 * change.tolerance);
    }
  return out;
}

nlohmann::json batch_summary_json(const std::vector<BatchCase>& cases) {
  nlohmann::json out;
  out["schema"] = "partsim.batch";
  out["schema_version"] = 1;
  out["exit_code"] = batch_exit_code(cases);
  out["counts"] = {{"scenarios", cases.size()},
                   {"passed", count(cases, BatchCase::Outcome::Passed)},
                   {"failed", count(cases, BatchCase::Outcome::Failed)},
                   {"errors", count(cases, BatchCase::Outcome::Error)}};
  out["cases"] = nlohmann::json::array();
  for (const BatchCase& c : cases) {
    nlohmann::json j;
    j["name"] = c.name;
    j["scenario"] = c.path;
    j["outcome"] = outcome_name(c.outcome());
    j["exit_code"] = c.exit_code;
    if (!c.error.empty()) j["error"] = {{"source", c.error_source}, {"pointer", c.error_pointer}, {"message", c.error}};
    j["verdict"] = c.verdict.empty() ? nlohmann::json() : nlohmann::json(c.verdict);
    j["makespan_s"] = c.makespan ? nlohmann::json(*c.makespan) : nlohmann::json();
    j["expectations"] = nlohmann::json::array();
    for (const ExpectationResult& r : c.expectations)
      j["expectations"].push_back(
          {{"figure", r.figure}, {"expected", r.expected}, {"actual", r.actual}, {"holds", r.holds}});
    j["baseline"] = c.has_baseline ? nlohmann::json("compared") : nlohmann::json();
    j["changes"] = nlohmann::json::array();
    for (const FigureChange& change : c.changes)
      j["changes"].push_back({{"figure", change.figure},
                              {"before", change.before},
                              {"after", change.after},
                              {"relative", change.relative ? nlohmann::json(*change.relative) : nlohmann::json()},
                              {"tolerance", change.tolerance}});
    out["cases"].push_back(std::move(j));
  }
  return out;
}

std::string format_batch_table(const std::vector<BatchCase>& cases) {
  std::size_t width = 8;
  for (const BatchCase& c : cases) width = std::max(width, printable(c.name).size());
  std::string out = fmt::format("  {:<{}}  {:<7}  {:<15}  {:>14}  {:<14}  {}\n", "scenario", width, "result", "verdict",
                                "makespan", "expectations", "baseline");
  for (const BatchCase& c : cases)
    out += fmt::format("  {:<{}}  {:<7}  {:<15}  {:>14}  {:<14}  {}\n", printable(c.name), width,
                       outcome_name(c.outcome()), c.verdict.empty() ? "-" : printable(c.verdict), makespan_text(c),
                       expectations_text(c),
                       !c.has_baseline     ? "-"
                       : c.changes.empty() ? "unchanged"
                                           : fmt::format("{} moved", c.changes.size()));
  for (const BatchCase& c : cases)
    for (const std::string& line : reasons(c))
      out += fmt::format("  {} {}: {}\n", outcome_name(c.outcome()), printable(c.name), printable(line));
  out += fmt::format("\n  {} scenarios: {} passed, {} failed, {} errors\n", cases.size(),
                     count(cases, BatchCase::Outcome::Passed), count(cases, BatchCase::Outcome::Failed),
                     count(cases, BatchCase::Outcome::Error));
  return out;
}

} // namespace partsim
