// SearchRunner: a `partsim search` child process over a space of the current scenario, in the background, with
// progress, read back from its search.json on a worker thread.
#pragma once

#include "run/error_line.hpp"
#include "search_result.hpp"

#include <QFutureWatcher>
#include <QObject>
#include <QPointer>
#include <QProcess>
#include <QStringList>
#include <QTemporaryDir>

#include <memory>
#include <optional>

namespace partsim::gui {

struct SearchRequest {
  QString program;               ///< the partsim binary
  QStringList scenario_args;     ///< PATH --set P=V ... (the edits: fixed values of every point)
  QByteArray scenario_file_text; ///< when not empty, written to a temporary file used as PATH (built-in default)
  QStringList axes;              ///< `--vary` texts: /pointer=v1,v2,...
  QString rank_by = QStringLiteral("throughput");
  QString pareto = QStringLiteral("gpus");
  QString tokens; ///< the token budget (--tokens), empty for none
  int refine = 3;
  int jobs = 1;
};

class SearchRunner : public QObject {
  Q_OBJECT
 public:
  explicit SearchRunner(QObject* parent = nullptr);
  ~SearchRunner() override;
  void start(const SearchRequest& request);
  void cancel();
  bool running() const { return process_ != nullptr || parsing_; }
  QStringList last_arguments() const { return last_arguments_; }

 signals:
  /** Simulations done of those planned (the fast runs, then the refined ones). */
  void progress(int done, int total);
  /** ok: `outcome` holds the search (exit code 1, some points failed, still gives one: `error` says so); else `error`
   * says why. A cancelled search emits nothing. */
  void finished(bool ok, const partsim::gui::SearchOutcome& outcome, const partsim::gui::ErrorLine& error);

 private:
  QPointer<QProcess> process_;
  std::unique_ptr<QTemporaryDir> dir_;
  QByteArray stderr_;
  StreamReader stream_;
  QStringList last_arguments_;
  QFutureWatcher<std::pair<std::optional<SearchOutcome>, QString>> parse_watcher_;
  bool parsing_ = false;
  int generation_ = 0; ///< a parse of an earlier (cancelled) search is ignored
};

} // namespace partsim::gui
