// Expectations of a scenario against its report.
#include "partsim/batch/expectations.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>

namespace partsim {

namespace {

std::string number_text(double v) {
  return fmt::format("{:.6g}", v);
}

std::string bound_text(const Expectation& e) {
  if (e.equals) return e.equals->dump();
  std::vector<std::string> parts;
  if (e.value)
    parts.push_back(e.tolerance > 0 ? fmt::format("{} within {}%", number_text(*e.value), 100 * e.tolerance)
                                    : number_text(*e.value));
  if (e.min) parts.push_back("at least " + number_text(*e.min));
  if (e.max) parts.push_back("at most " + number_text(*e.max));
  return fmt::format("{}", fmt::join(parts, " and "));
}

bool holds(const Expectation& e, const nlohmann::json& value) {
  if (e.equals) return value == *e.equals;
  if (!value.is_number()) return false;
  const double v = value.get<double>();
  if (!std::isfinite(v)) return false;
  if (e.min && v < *e.min) return false;
  if (e.max && v > *e.max) return false;
  if (e.value && std::abs(v - *e.value) > e.tolerance * std::abs(*e.value)) return false;
  return true;
}

} // namespace

std::vector<ExpectationResult> check_expectations(const Scenario& scenario, const nlohmann::json& report) {
  std::vector<ExpectationResult> results;
  for (const Expectation& e : scenario.expectations) {
    ExpectationResult r;
    r.figure = e.figure;
    r.expected = bound_text(e);
    const nlohmann::json::json_pointer pointer(e.figure); // checked when the scenario was read
    if (report.contains(pointer)) {
      const nlohmann::json& value = report.at(pointer);
      r.actual = value.is_number_float() ? number_text(value.get<double>()) : value.dump();
      r.holds = holds(e, value);
    } else {
      r.actual = "absent";
    }
    results.push_back(std::move(r));
  }
  return results;
}

std::string describe_failure(const ExpectationResult& result) {
  return fmt::format("{}: expected {}, got {}", result.figure, result.expected, result.actual);
}

} // namespace partsim
