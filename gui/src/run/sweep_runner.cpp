// Running partsim sweep as a child process.
#include "run/sweep_runner.hpp"

#include <QFile>
#include <QRegularExpression>

#include <signal.h>
#include <unistd.h>

namespace partsim::gui {

SweepRunner::SweepRunner(QObject* parent) : QObject(parent) {}

SweepRunner::~SweepRunner() {
  if (process_ != nullptr) {
    process_->disconnect(this);
    if (process_->processId() > 0) ::kill(-static_cast<pid_t>(process_->processId()), SIGKILL);
    process_->kill();
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
  QStringList scenario = request.scenario_args;
  if (!request.scenario_file_text.isEmpty()) {
    const QString path = dir_->filePath(QStringLiteral("scenario.json"));
    QFile file(path);
    if (file.open(QIODevice::WriteOnly)) file.write(request.scenario_file_text);
    scenario.prepend(path);
  }
  args << scenario << QStringLiteral("--vary")
       << request.axis + QLatin1Char('=') + request.values.join(QLatin1Char(',')) << QStringLiteral("--out")
       << dir_->filePath(QStringLiteral("out")) << QStringLiteral("--jobs")
       << QString::number(std::max(1, request.jobs)) << QStringLiteral("--progress=json")
       << QStringLiteral("--error-format=json");
  last_arguments_ = QStringList{request.program} + args;
  process_ = new QProcess(this);
  process_->setStandardOutputFile(QProcess::nullDevice());
  // Its own process group, so that cancel() also stops the point runs partsim sweep has started.
  process_->setChildProcessModifier([] { ::setpgid(0, 0); });
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
  if (process_->processId() > 0) ::kill(-static_cast<pid_t>(process_->processId()), SIGKILL);
  process_->kill();
  connect(process_, &QProcess::finished, process_, &QObject::deleteLater);
  process_ = nullptr;
}

} // namespace partsim::gui
