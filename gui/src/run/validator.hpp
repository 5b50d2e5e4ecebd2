// Validator: checks the edited scenario with partsim_model (the CLI's own parser and planner) off the GUI thread.
#pragma once

#include "run/error_line.hpp"

#include <nlohmann/json.hpp>

#include <QFutureWatcher>
#include <QObject>

#include <cstdint>
#include <string>

namespace partsim::gui {

struct Validation {
  bool ok = false;
  ErrorLine error;                  ///< when not ok: the same line `partsim validate` prints, and its pointer
  std::uint64_t planned_events = 0; ///< messages + executions the run will simulate
  int gpus = 0;
  int gpus_per_node = 1;
  int partitions = 0; ///< of a data-parallel strategy
  QString plan_summary;
};

/** Validates a scenario document as the CLI would (parse_scenario + build_plan). Thread-safe, pure. */
Validation validate_scenario(const nlohmann::json& document, const std::string& source);

/** Runs validate_scenario on a worker thread; only the latest request's answer is delivered. */
class Validator : public QObject {
  Q_OBJECT
 public:
  explicit Validator(QObject* parent = nullptr);
  void validate(const nlohmann::json& document, const std::string& source);
  bool busy() const { return watcher_.isRunning() || pending_; }

 signals:
  void validated(const partsim::gui::Validation& result);

 private:
  void start_next();
  QFutureWatcher<Validation> watcher_;
  bool pending_ = false;
  nlohmann::json pending_document_;
  std::string pending_source_;
};

} // namespace partsim::gui
