// Scenario validation through partsim_model.
#include "run/validator.hpp"

#include "partsim/common/error.hpp"
#include "partsim/common/text.hpp"
#include "partsim/input/data_dir.hpp"
#include "partsim/input/scenario.hpp"
#include "partsim/plan/strategy.hpp"

#include <QtConcurrent/QtConcurrentRun>

namespace partsim::gui {

Validation validate_scenario(const nlohmann::json& document, const std::string& source) {
  Validation v;
  try {
    const Scenario scenario = parse_scenario(document, source, data_dir());
    const Plan plan = build_plan(scenario);
    v.ok = true;
    v.planned_events = plan.planned_messages + plan.planned_executions;
    v.gpus = scenario.cluster.gpu_count();
    v.gpus_per_node = scenario.cluster.gpus_per_node;
    if (const auto* dp = std::get_if<DataParallel>(&scenario.strategy)) v.partitions = dp->partitions;
    v.plan_summary = QString::fromStdString(plan.summary);
  } catch (const InputError& e) {
    // The error's own parts (already one printable line), not a re-parse of its text.
    v.error.message = QString::fromStdString(e.what());
    v.error.pointer = QString::fromStdString(e.pointer());
  } catch (const std::exception& e) {
    const std::string what = printable(e.what());
    v.error.message = QStringLiteral("internal error: %1")
                          .arg(what.empty() ? QStringLiteral("(no message)") : QString::fromStdString(what));
  }
  return v;
}

Validator::Validator(QObject* parent) : QObject(parent) {
  connect(&watcher_, &QFutureWatcher<Validation>::finished, this, [this] {
    const Validation result = watcher_.result();
    if (pending_) {
      start_next(); // a newer document is waiting: this answer is stale
      return;
    }
    emit validated(result);
  });
}

void Validator::validate(const nlohmann::json& document, const std::string& source) {
  pending_document_ = document;
  pending_source_ = source;
  pending_ = true;
  if (!watcher_.isRunning()) start_next();
}

void Validator::start_next() {
  pending_ = false;
  watcher_.setFuture(QtConcurrent::run(validate_scenario, std::move(pending_document_), std::move(pending_source_)));
}

} // namespace partsim::gui
