// Export to files.
#include "exporter.hpp"

#include <QFile>
#include <QPainter>
#include <QPixmap>
#include <QSvgGenerator>
#include <QWidget>

namespace partsim::gui {

QString save_png(QWidget* widget, const QString& path) {
  const QPixmap pixmap = widget->grab();
  if (pixmap.isNull()) return QStringLiteral("nothing to render");
  if (!pixmap.save(path, "PNG")) return QStringLiteral("cannot write %1").arg(path);
  return {};
}

QString save_svg(QWidget* widget, const QString& path, const QString& title) {
  QSvgGenerator generator;
  generator.setFileName(path);
  generator.setSize(widget->size());
  generator.setViewBox(widget->rect());
  generator.setTitle(title);
  generator.setDescription(QStringLiteral("partsim-gui"));
  QPainter painter;
  if (!painter.begin(&generator)) return QStringLiteral("cannot write %1").arg(path);
  widget->render(&painter);
  painter.end();
  return QFile::exists(path) ? QString() : QStringLiteral("cannot write %1").arg(path);
}

QString save_bytes(const QByteArray& bytes, const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate))
    return QStringLiteral("cannot write %1: %2").arg(path, file.errorString());
  if (file.write(bytes) != bytes.size()) return QStringLiteral("error while writing %1").arg(path);
  return {};
}

} // namespace partsim::gui
