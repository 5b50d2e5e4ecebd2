// Splitting partsim error lines.
#include "error_line.hpp"

#include <QRegularExpression>
#include <QStringList>

namespace partsim::gui {

ErrorLine parse_error_line(const QString& text) {
  static const QString prefix = QStringLiteral("partsim: error: ");
  QString line;
  for (const QString& l : text.split(QLatin1Char('\n'))) {
    const QString trimmed = l.section(QLatin1Char('\r'), -1).trimmed();
    if (trimmed.startsWith(prefix)) {
      line = trimmed.mid(prefix.size());
      break;
    }
    if (line.isEmpty() && !trimmed.isEmpty() && !trimmed.startsWith(QStringLiteral("partsim: simulating")))
      line = trimmed;
  }
  ErrorLine out;
  out.message = line;
  static const QRegularExpression pointer(QStringLiteral(R"(: (/[^\s:]*): )"));
  const QRegularExpressionMatch m = pointer.match(line);
  if (m.hasMatch()) out.pointer = m.captured(1);
  return out;
}

} // namespace partsim::gui
