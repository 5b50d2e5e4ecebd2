// Report writers: report.json (versioned schema), ranks.csv, trace.json (Chrome/Perfetto) and the terminal table.
#pragma once

#include "partsim/engine/engine.hpp"
#include "partsim/input/scenario.hpp"
#include "partsim/report/metrics.hpp"
#include "partsim/report/report_document.hpp"

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>

namespace partsim {

/** partsim's version ("0.1.0"). */
std::string partsim_version();

/** report.json: run metadata, the scenario as validated, headline figures and per-rank rows. Deterministic.
 * to_json(make_report_document(report, scenario)). */
nlohmann::json report_to_json(const Report& report, const Scenario& scenario);

/** ranks.csv: one row per rank with its time breakdown and traffic. */
void write_ranks_csv(std::ostream& out, const Report& report);

/** trace.json in Chrome trace-event format: one process per node, one thread (track) per rank. */
void write_chrome_trace(std::ostream& out, const Scenario& scenario, const Plan& plan, const RunResult& result);

/** The terminal table: headline figures, then per-rank rows (the busiest and idlest first when there are many). */
std::string format_table(const Report& report);

/** The first lines of the terminal table of a report its own engine made (serving, parameter server): the version
 * and scenario name, the description, the strategy line and the engine. */
std::string format_document_heading(const ReportDocument& doc);

/** Seconds as the terminal table writes them: "0 s", "12.3 us", "45.67 ms", "8.192 s". */
std::string human_seconds(double s);

} // namespace partsim
