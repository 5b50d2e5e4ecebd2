// Finding the partsim binary.
#include "partsim_locator.hpp"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>

namespace partsim::gui {

QString find_partsim_binary() {
  const QString env = qEnvironmentVariable("PARTSIM_BIN");
  if (!env.isEmpty()) return env;
  const auto executable = [](const QString& path) {
    const QFileInfo info(path);
    return info.isFile() && info.isExecutable();
  };
  const QString build_tree = QStringLiteral(PARTSIM_GUI_BUILD_TREE_PARTSIM);
  if (executable(build_tree)) return build_tree;
  if (QCoreApplication::instance() != nullptr) {
    const QString beside = QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("partsim"));
    if (executable(beside)) return beside;
  }
  return QStandardPaths::findExecutable(QStringLiteral("partsim"));
}

} // namespace partsim::gui
