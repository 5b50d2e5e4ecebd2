// Running partsim as a child process; all I/O through QProcess signals, parsing on a worker thread.
#include "run/simulation_runner.hpp"

#include "partsim/common/exit_codes.hpp"

#include <QFile>
#include <QRegularExpression>
#include <QtConcurrent/QtConcurrentRun>

namespace partsim::gui {

QString to_string(RunState state) {
  switch (state) {
  case RunState::Idle:
    return QStringLiteral("idle");
  case RunState::Running:
    return QStringLiteral("running");
  case RunState::Finished:
    return QStringLiteral("finished");
  case RunState::InputError:
    return QStringLiteral("invalid scenario");
  case RunState::Failed:
    return QStringLiteral("failed");
  case RunState::Crashed:
    return QStringLiteral("crashed");
  case RunState::Cancelled:
    return QStringLiteral("cancelled");
  case RunState::NotFound:
    return QStringLiteral("partsim not found");
  }
  return {};
}

SimulationRunner::SimulationRunner(QObject* parent) : QObject(parent) {
  connect(&parse_watcher_, &QFutureWatcher<RunOutcome>::finished, this, [this] {
    if (state_ != RunState::Running || parsing_run_ != run_id_) return; // cancelled or superseded while parsing
    finish(parse_watcher_.result());
  });
}

SimulationRunner::~SimulationRunner() {
  if (process_ != nullptr) {
    process_->disconnect(this);
    process_->kill();
    process_->waitForFinished(1000); // only at shutdown: do not leave a zombie behind
  }
}

void SimulationRunner::start(const RunRequest& request) {
  if (state_ == RunState::Running) {
    cancel();
  }
  ++run_id_;
  stderr_.clear();
  with_trace_ = request.with_trace;
  with_replay_ = request.with_replay;
  state_ = RunState::Running;
  if (request.program.isEmpty()) {
    RunOutcome o;
    o.state = RunState::NotFound;
    o.error.message =
        QStringLiteral("partsim binary not found: set PARTSIM_BIN or put partsim on PATH (it is built as sim/partsim)");
    finish(o);
    return;
  }
  QStringList args{QStringLiteral("run")};
  args << request.scenario_args << QStringLiteral("--json") << QStringLiteral("--progress=json")
       << QStringLiteral("--error-format=json") << QStringLiteral("--no-expect"); // what-ifs move figures on purpose
  stream_ = StreamReader();
  if (request.with_trace || request.with_replay) {
    trace_dir_ = std::make_unique<QTemporaryDir>();
    args << QStringLiteral("--out") << trace_dir_->path() << QStringLiteral("--set")
         << (request.with_trace ? request.trace_set : request.replay_set);
  } else {
    trace_dir_.reset();
    args << QStringLiteral("--no-files");
  }
  last_arguments_ = QStringList{request.program} + args;
  process_ = new QProcess(this);
  connect(process_, &QProcess::readyReadStandardError, this, &SimulationRunner::on_stderr);
  connect(process_, &QProcess::finished, this, &SimulationRunner::on_finished);
  connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
    if (error != QProcess::FailedToStart || state_ != RunState::Running) return;
    RunOutcome o;
    o.state = RunState::NotFound;
    o.error.message = QStringLiteral("cannot start %1: %2").arg(last_arguments_.value(0), process_->errorString());
    process_->deleteLater();
    process_ = nullptr;
    finish(o);
  });
  clock_.start();
  emit started();
  emit progress(-1);
  process_->start(request.program, args);
}

void SimulationRunner::cancel() {
  if (state_ != RunState::Running) return;
  if (process_ != nullptr) {
    process_->disconnect(this);
    process_->kill();
    // Reaped asynchronously: the QProcess deletes itself once the child has exited.
    connect(process_, &QProcess::finished, process_, &QObject::deleteLater);
    process_ = nullptr;
  }
  parse_watcher_.cancel();
  RunOutcome o;
  o.state = RunState::Cancelled;
  o.wall_s = static_cast<double>(clock_.elapsed()) / 1000.0;
  finish(o);
}

void SimulationRunner::on_stderr() {
  const QByteArray chunk = process_->readAllStandardError();
  stderr_ += chunk;
  double last = -1;
  for (const StreamEvent& e : stream_.feed(chunk))
    if (e.kind == StreamEvent::Kind::Progress && e.total > 0)
      last = static_cast<double>(e.done) / static_cast<double>(e.total);
  if (last >= 0) emit progress(last);
}

void SimulationRunner::on_finished(int exit_code, QProcess::ExitStatus status) {
  QProcess* p = process_;
  process_ = nullptr;
  const QByteArray out = p->readAllStandardOutput();
  const QByteArray rest = p->readAllStandardError();
  stderr_ += rest;
  stream_.feed(rest + '\n');
  p->deleteLater();
  const double wall = static_cast<double>(clock_.elapsed()) / 1000.0;
  // Exit code 3: the plan does not fit in GPU memory; partsim still prints its report (verdict out_of_memory).
  if (status == QProcess::CrashExit || (exit_code != kExitOk && exit_code != kExitOutOfMemory)) {
    RunOutcome o;
    o.exit_code = exit_code;
    o.wall_s = wall;
    o.state = status == QProcess::CrashExit  ? RunState::Crashed
              : exit_code == kExitInputError ? RunState::InputError
                                             : RunState::Failed;
    o.error = error_of_child(stream_, stderr_);
    if (o.error.message.isEmpty()) o.error.message = QStringLiteral("partsim exited with code %1").arg(exit_code);
    finish(o);
    return;
  }
  const QString trace_path = with_trace_ && trace_dir_ ? trace_dir_->filePath(QStringLiteral("trace.json")) : QString();
  const QString replay_path =
      with_replay_ && trace_dir_ ? trace_dir_->filePath(QStringLiteral("reliability_trace.json")) : QString();
  // Reports and traces of large runs take longer than a frame to parse: do it on a worker thread.
  parsing_run_ = run_id_;
  parse_watcher_.setFuture(QtConcurrent::run([out, trace_path, replay_path, wall] {
    RunOutcome o;
    o.wall_s = wall;
    QString error;
    std::optional<RunReport> report = parse_report(out, &error);
    if (!report) {
      o.state = RunState::Failed;
      o.error.message = QStringLiteral("cannot read partsim's report: ") + error;
      return o;
    }
    o.state = RunState::Finished;
    o.report = std::move(*report);
    if (!trace_path.isEmpty()) {
      QFile file(trace_path);
      if (file.open(QIODevice::ReadOnly))
        if (std::optional<Trace> trace = parse_trace(file.readAll()))
          o.trace = std::make_shared<const Trace>(std::move(*trace));
    }
    if (!replay_path.isEmpty()) {
      QFile file(replay_path);
      if (file.open(QIODevice::ReadOnly))
        if (std::optional<Trace> replay = parse_trace(file.readAll(), nullptr, false))
          o.replay = std::make_shared<const Trace>(std::move(*replay));
    }
    return o;
  }));
}

void SimulationRunner::finish(RunOutcome outcome) {
  state_ = outcome.state;
  trace_dir_.reset();
  emit finished(outcome);
}

} // namespace partsim::gui
