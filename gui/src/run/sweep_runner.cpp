// Running partsim sweep as a child process.
#include "run/sweep_runner.hpp"

#include "run/child_process.hpp"

#include <QFile>
#include <QRegularExpression>

namespace partsim::gui {

SweepRunner::SweepRunner(QObject* parent) : QObject(parent) {}

SweepRunner::~SweepRunner() {
  if (process_ != nullptr) {
    process_->disconnect(this);
    kill_group(*process_);
    process_->waitForFinished(1000); // only at shutdown
  }
}

void SweepRunner::start(const SweepRequest& request) {
  cancel();
  dir_ = std::make_unique<QTemporaryDir>();
  stderr_.clear();
  stream_ = StreamReader();
  total_ = static_cast<int>(request.values.size());
  QStringList args{QStringLiteral("sweep")};
  const QStringList scenario = scenario_arguments(*dir_, request.scenario_args, request.scenario_file_text);
  args << scenario << QStringLiteral("--vary")
       << request.axis + QLatin1Char('=') + request.values.join(QLatin1Char(',')) << QStringLiteral("--out")
       << dir_->filePath(QStringLiteral("out")) << QStringLiteral("--jobs")
       << QString::number(std::max(1, request.jobs)) << QStringLiteral("--progress=json")
       << QStringLiteral("--error-format=json");
  last_arguments_ = QStringList{request.program} + args;
  // Its own process group, so that cancel() also stops the point runs partsim sweep has started.
  process_ = group_process(this);
  connect(process_, &QProcess::readyReadStandardError, this, [this] {
    const QByteArray chunk = process_->readAllStandardError();
    stderr_ += chunk;
    for (const StreamEvent& e : stream_.feed(chunk))
      if (e.kind == StreamEvent::Kind::SweepProgress)
        emit progress(static_cast<int>(e.done), static_cast<int>(e.total));
  });
  connect(process_, &QProcess::finished, this, [this](int exit_code, QProcess::ExitStatus status) {
    QProcess* p = process_;
    process_ = nullptr;
    const QByteArray rest = p->readAllStandardError();
    stderr_ += rest;
    stream_.feed(rest + '\n');
    p->deleteLater();
    ErrorLine error;
    if (status != QProcess::NormalExit || exit_code != 0) {
      error = error_of_child(stream_, stderr_);
      if (error.message.isEmpty()) error.message = QStringLiteral("partsim sweep exited with code %1").arg(exit_code);
      emit finished(false, {}, error);
      return;
    }
    // sweep.csv is a few lines per point: reading it here is quick.
    QFile csv(dir_->filePath(QStringLiteral("out/sweep.csv")));
    QString why;
    std::optional<SweepResult> result;
    if (csv.open(QIODevice::ReadOnly)) result = parse_sweep_csv(csv.readAll(), &why);
    if (!result) {
      error.message = QStringLiteral("cannot read sweep.csv: ") + (why.isEmpty() ? csv.errorString() : why);
      emit finished(false, {}, error);
      return;
    }
    emit finished(true, *result, error);
  });
  connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
    if (e != QProcess::FailedToStart || process_ == nullptr) return;
    ErrorLine error;
    error.message = QStringLiteral("cannot start %1: %2").arg(last_arguments_.value(0), process_->errorString());
    process_->deleteLater();
    process_ = nullptr;
    emit finished(false, {}, error);
  });
  emit progress(0, total_);
  process_->start(request.program, args);
}

void SweepRunner::cancel() {
  if (process_ == nullptr) return;
  process_->disconnect(this);
  kill_group(*process_);
  connect(process_, &QProcess::finished, process_, &QObject::deleteLater);
  process_ = nullptr;
}

} // namespace partsim::gui
