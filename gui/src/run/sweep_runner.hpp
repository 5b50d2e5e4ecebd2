// SweepRunner: a `partsim sweep` child process over GPU counts, in the background, read back from sweep.csv.
#pragma once

#include "run/error_line.hpp"
#include "sweep_result.hpp"

#include <QObject>
#include <QPointer>
#include <QProcess>
#include <QStringList>
#include <QTemporaryDir>

#include <memory>

namespace partsim::gui {

struct SweepRequest {
  QString program;               ///< the partsim binary
  QStringList scenario_args;     ///< PATH --set P=V ... (a file is required: see scenario_file_text)
  QByteArray scenario_file_text; ///< when not empty, written to a temporary file used as PATH (built-in default)
  QString axis = QStringLiteral("/cluster/nodes");
  QStringList values; ///< e.g. 1,2,4,8
  int jobs = 1;
};

class SweepRunner : public QObject {
  Q_OBJECT
 public:
  explicit SweepRunner(QObject* parent = nullptr);
  ~SweepRunner() override;
  void start(const SweepRequest& request);
  void cancel();
  bool running() const { return process_ != nullptr; }
  QStringList last_arguments() const { return last_arguments_; }

 signals:
  void progress(int done, int total);
  /** ok: `result` holds the rows; else `error` says why (cancelled sweeps emit nothing). */
  void finished(bool ok, const partsim::gui::SweepResult& result, const partsim::gui::ErrorLine& error);

 private:
  QPointer<QProcess> process_;
  std::unique_ptr<QTemporaryDir> dir_;
  QByteArray stderr_;
  StreamReader stream_; ///< the child's --progress=json / --error-format=json lines
  QStringList last_arguments_;
  int total_ = 0;
};

} // namespace partsim::gui
