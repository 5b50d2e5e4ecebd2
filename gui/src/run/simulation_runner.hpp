// SimulationRunner: one `partsim run` child process at a time, with progress, cancel and an asynchronous parse.
#pragma once

#include "run/error_line.hpp"
#include "run_report.hpp"
#include "trace.hpp"

#include <QElapsedTimer>
#include <QFutureWatcher>
#include <QObject>
#include <QPointer>
#include <QProcess>
#include <QStringList>
#include <QTemporaryDir>

#include <memory>
#include <optional>

namespace partsim::gui {

/** How a run ended (hotspot maps its child's exit codes to an enum the same way). */
enum class RunState {
  Idle,
  Running,
  Finished,   ///< exit 0 and a report
  InputError, ///< exit 2: the scenario is wrong (the message names the field)
  Failed,     ///< another exit code, or an unreadable report
  Crashed,    ///< killed by a signal we did not send
  Cancelled,  ///< the user cancelled (the child was killed)
  NotFound,   ///< no partsim binary
};

QString to_string(RunState state);

struct RunOutcome {
  RunState state = RunState::Idle;
  int exit_code = 0;
  ErrorLine error;                    ///< InputError / Failed / Crashed / NotFound
  RunReport report;                   ///< Finished
  std::shared_ptr<const Trace> trace; ///< Finished with a trace requested; may be null
  /** Finished with a /reliability section: reliability_trace.json, the replayed run's timeline; may be null. */
  std::shared_ptr<const Trace> replay;
  double wall_s = 0; ///< wall time of the child
};

struct RunRequest {
  QString program;           ///< the partsim binary
  QStringList scenario_args; ///< [PATH] --set P=V ...
  bool with_trace = false;   ///< also write trace.json to a temporary folder and read it for the timeline
  /** The override that selects trace.json alone (its parent /run must exist in the scenario); with a /reliability
   * section it brings reliability_trace.json too. */
  QString trace_set = QStringLiteral("/run/outputs=[\"trace\"]");
  /** The scenario has a /reliability section: write reliability_trace.json (small) to the temporary folder and read
   * it, with `replay_set` when there is no trace. */
  bool with_replay = false;
  QString replay_set = QStringLiteral("/run/outputs=[\"reliability_trace\"]");
};

class SimulationRunner : public QObject {
  Q_OBJECT
 public:
  explicit SimulationRunner(QObject* parent = nullptr);
  ~SimulationRunner() override;

  /** Starts a run; a run in progress is cancelled first (its outcome is dropped). */
  void start(const RunRequest& request);
  /** Kills the child; emits finished() with RunState::Cancelled. No-op when idle. */
  void cancel();
  bool running() const { return state_ == RunState::Running; }
  RunState state() const { return state_; }
  /** The child process, for tests (null when idle). */
  QProcess* process() const { return process_; }
  /** The command line of the last run, for the status bar and docs. */
  QStringList last_arguments() const { return last_arguments_; }

 signals:
  void started();
  /** `fraction` in [0, 1], or -1 while unknown (partsim reports progress every 0.5 s of wall time). */
  void progress(double fraction);
  void finished(const partsim::gui::RunOutcome& outcome);

 private:
  void on_stderr();
  void on_finished(int exit_code, QProcess::ExitStatus status);
  void finish(RunOutcome outcome);

  QPointer<QProcess> process_;
  std::unique_ptr<QTemporaryDir> trace_dir_;
  QFutureWatcher<RunOutcome> parse_watcher_;
  RunState state_ = RunState::Idle;
  QByteArray stderr_;
  StreamReader stream_; ///< the child's --progress=json / --error-format=json lines
  QStringList last_arguments_;
  QElapsedTimer clock_;
  bool with_trace_ = false;
  bool with_replay_ = false;
  quint64 run_id_ = 0;      ///< increases with every start()
  quint64 parsing_run_ = 0; ///< the run whose report is being parsed
};

} // namespace partsim::gui
