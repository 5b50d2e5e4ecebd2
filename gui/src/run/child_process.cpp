// Child processes of the sweep and search runners.
#include "run/child_process.hpp"

#include <QFile>

#include <signal.h>
#include <unistd.h>

namespace partsim::gui {

QStringList scenario_arguments(const QTemporaryDir& dir, const QStringList& args, const QByteArray& text) {
  QStringList scenario = args;
  if (!text.isEmpty()) {
    const QString path = dir.filePath(QStringLiteral("scenario.json"));
    QFile file(path);
    if (file.open(QIODevice::WriteOnly)) file.write(text);
    scenario.prepend(path);
  }
  return scenario;
}

QProcess* group_process(QObject* parent) {
  auto* process = new QProcess(parent);
  process->setStandardOutputFile(QProcess::nullDevice());
  process->setChildProcessModifier([] { ::setpgid(0, 0); });
  return process;
}

void kill_group(QProcess& process) {
  if (process.processId() > 0) ::kill(-static_cast<pid_t>(process.processId()), SIGKILL);
  process.kill();
}

} // namespace partsim::gui
