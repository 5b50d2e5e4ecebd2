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

std::vector<StreamEvent> StreamReader::feed(const QByteArray& chunk) {
  pending_ += chunk;
  std::vector<StreamEvent> events;
  qsizetype start = 0;
  for (qsizetype end = pending_.indexOf('\n'); end >= 0; end = pending_.indexOf('\n', start)) {
    const QByteArray line = pending_.mid(start, end - start);
    start = end + 1;
    if (std::optional<StreamEvent> e = parse_stream_line(std::string_view(line.constData(), line.size()))) {
      if (e->kind == StreamEvent::Kind::Error) error_ = *e;
      events.push_back(std::move(*e));
    }
  }
  pending_.remove(0, start);
  return events;
}

ErrorLine error_of_child(const StreamReader& reader, const QByteArray& all_stderr) {
  if (const auto& e = reader.error()) return {QString::fromStdString(e->message), QString::fromStdString(e->pointer)};
  return parse_error_line(QString::fromUtf8(all_stderr));
}

} // namespace partsim::gui
