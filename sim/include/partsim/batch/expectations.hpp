// Expectations of a scenario (`/expect`): bounds on report.json figures by JSON pointer, checked after a run, so that
// CI fails when a change moves a figure past its bound. Pure: no SimGrid.
#pragma once

#include "partsim/input/scenario.hpp"

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace partsim {

/** One expectation checked against a report. */
struct ExpectationResult {
  std::string figure;   ///< the JSON pointer into report.json
  std::string expected; ///< the bound, in words ("at most 40", "0.5 within 5%", "\"simulated\"")
  std::string actual;   ///< the report's value as JSON text, or "absent"
  bool holds = false;
};

/** Checks every expectation of `scenario` against `report` (report.json as written), in the scenario's order. */
std::vector<ExpectationResult> check_expectations(const Scenario& scenario, const nlohmann::json& report);

/** "FIGURE: expected BOUND, got VALUE" for a failed expectation. */
std::string describe_failure(const ExpectationResult& result);

} // namespace partsim
