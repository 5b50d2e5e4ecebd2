// Export: charts as PNG or SVG, the report as JSON or CSV, the edited scenario as JSON.
#pragma once

#include <QByteArray>
#include <QString>

class QWidget;

namespace partsim::gui {

/** Renders a widget (a chart view, the whole window) to a PNG file. Returns an error message or "". */
QString save_png(QWidget* widget, const QString& path);
/** Renders a widget to an SVG file through QSvgGenerator (vector output for charts). */
QString save_svg(QWidget* widget, const QString& path, const QString& title);
/** Writes bytes to a file. */
QString save_bytes(const QByteArray& bytes, const QString& path);

} // namespace partsim::gui
