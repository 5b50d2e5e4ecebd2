// Running partsim search as a child process.
#include "run/search_runner.hpp"

#include "run/child_process.hpp"

#include "partsim/common/exit_codes.hpp"

#include <QFile>
#include <QtConcurrent/QtConcurrentRun>

namespace partsim::gui {

SearchRunner::SearchRunner(QObject* parent) : QObject(parent) {
  connect(&parse_watcher_, &QFutureWatcher<std::pair<std::optional<SearchOutcome>, QString>>::finished, this, [this] {
    const int generation = parse_watcher_.property("generation").toInt();
    if (generation != generation_ || !parsing_) return;
    parsing_ = false;
    auto [outcome, note] = parse_watcher_.result();
    ErrorLine error;
    error.message = note;
    if (!outcome) {
      emit finished(false, {}, error);
      return;
    }
    emit finished(true, *outcome, error);
  });
}

SearchRunner::~SearchRunner() {
  if (process_ != nullptr) {
    process_->disconnect(this);
    kill_group(*process_);
    process_->waitForFinished(1000); // only at shutdown
  }
  parse_watcher_.waitForFinished();
}

void SearchRunner::start(const SearchRequest& request) {
  cancel();
  ++generation_;
  dir_ = std::make_unique<QTemporaryDir>();
  stderr_.clear();
  stream_ = StreamReader();
  QStringList args{QStringLiteral("search")};
  const QStringList scenario = scenario_arguments(*dir_, request.scenario_args, request.scenario_file_text);
  args << scenario;
  for (const QString& axis : request.axes) args << QStringLiteral("--vary") << axis;
  args << QStringLiteral("--rank-by") << request.rank_by << QStringLiteral("--pareto") << request.pareto;
  if (!request.tokens.isEmpty()) args << QStringLiteral("--tokens") << request.tokens;
  args << QStringLiteral("--refine") << QString::number(std::max(0, request.refine)) << QStringLiteral("--jobs")
       << QString::number(std::max(1, request.jobs)) << QStringLiteral("--json")
       << dir_->filePath(QStringLiteral("search.json")) << QStringLiteral("--progress=json")
       << QStringLiteral("--error-format=json");
  last_arguments_ = QStringList{request.program} + args;
  // Its own process group, so that cancel() also stops the point runs partsim search has started.
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
    // Exit code 1 after the outputs: some points failed; the search still holds the others.
    const bool written = status == QProcess::NormalExit && (exit_code == kExitOk || exit_code == kExitFailure) &&
                         QFile::exists(dir_->filePath(QStringLiteral("search.json")));
    if (!written) {
      ErrorLine error = error_of_child(stream_, stderr_);
      if (error.message.isEmpty()) error.message = QStringLiteral("partsim search exited with code %1").arg(exit_code);
      emit finished(false, {}, error);
      return;
    }
    const QString note = exit_code == kExitOk ? QString() : error_of_child(stream_, stderr_).message;
    const QString path = dir_->filePath(QStringLiteral("search.json"));
    parsing_ = true;
    parse_watcher_.setProperty("generation", generation_);
    // A search of a thousand points is a few megabytes of JSON: read it on a worker thread.
    parse_watcher_.setFuture(QtConcurrent::run([path, note] {
      QFile file(path);
      if (!file.open(QIODevice::ReadOnly))
        return std::pair<std::optional<SearchOutcome>, QString>(std::nullopt,
                                                                QStringLiteral("cannot read ") + file.errorString());
      QString why;
      std::optional<SearchOutcome> outcome = parse_search_json(file.readAll(), &why);
      const QString message = outcome ? note : QStringLiteral("cannot read search.json: ") + why;
      return std::pair<std::optional<SearchOutcome>, QString>(std::move(outcome), message);
    }));
  });
  connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
    if (e != QProcess::FailedToStart || process_ == nullptr) return;
    ErrorLine error;
    error.message = QStringLiteral("cannot start %1: %2").arg(last_arguments_.value(0), process_->errorString());
    process_->deleteLater();
    process_ = nullptr;
    emit finished(false, {}, error);
  });
  emit progress(0, 0);
  process_->start(request.program, args);
}

void SearchRunner::cancel() {
  parsing_ = false;
  ++generation_;
  if (process_ == nullptr) return;
  process_->disconnect(this);
  kill_group(*process_);
  connect(process_, &QProcess::finished, process_, &QObject::deleteLater);
  process_ = nullptr;
}

} // namespace partsim::gui
