// sweep.csv reading: columns found by name, so new columns do not break it.
#include "sweep_result.hpp"

#include <QList>
#include <QStringList>

#include <algorithm>

namespace partsim::gui {

namespace {
/** Splits one CSV line (RFC 4180 quotes, no line breaks inside fields: sweep labels have none). */
QStringList split_csv_line(const QString& line) {
  QStringList out;
  QString field;
  bool quoted = false;
  for (qsizetype i = 0; i < line.size(); ++i) {
    const QChar c = line[i];
    if (quoted) {
      if (c == QLatin1Char('"') && i + 1 < line.size() && line[i + 1] == QLatin1Char('"')) {
        field += c;
        ++i;
      } else if (c == QLatin1Char('"')) {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == QLatin1Char('"')) {
      quoted = true;
    } else if (c == QLatin1Char(',')) {
      out << field;
      field.clear();
    } else {
      field += c;
    }
  }
  out << field;
  return out;
}
} // namespace

std::optional<SweepResult> parse_sweep_csv(const QByteArray& text, QString* error) {
  const QStringList lines = QString::fromUtf8(text).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
  auto fail = [&](const QString& why) -> std::optional<SweepResult> {
    if (error != nullptr) *error = why;
    return std::nullopt;
  };
  if (lines.isEmpty()) return fail(QStringLiteral("sweep.csv is empty"));
  const QStringList header = split_csv_line(lines[0].trimmed());
  const qsizetype gpus_column = header.indexOf(QStringLiteral("gpus"));
  if (gpus_column < 2) return fail(QStringLiteral("sweep.csv has no gpus column after the varied axis"));
  SweepResult result;
  result.axis = header[1];
  auto column = [&](const char* name) { return header.indexOf(QLatin1String(name)); };
  const qsizetype makespan = column("makespan_s"), single = column("single_gpu_time_s"), speedup = column("speedup"),
                  efficiency = column("parallel_efficiency"), kf = column("karp_flatt_serial_fraction"),
                  pf = column("parallel_fraction"), amdahl = column("amdahl_speedup_bound"),
                  comm = column("communication_overhead"), imbalance = column("load_imbalance_max_over_mean");
  for (qsizetype i = 1; i < lines.size(); ++i) {
    const QStringList f = split_csv_line(lines[i].trimmed());
    if (f.size() != header.size()) return fail(QStringLiteral("sweep.csv line %1: wrong field count").arg(i + 1));
    // A point that does not fit in GPU memory has no figures to plot.
    if (const qsizetype verdict = column("verdict"); verdict >= 0 && f[verdict] == QLatin1String("out_of_memory"))
      continue;
    auto value = [&](qsizetype c) { return c >= 0 ? f[c].toDouble() : 0.0; };
    SweepPointRow row;
    row.label = f[1];
    row.gpus = f[gpus_column].toInt();
    row.makespan = value(makespan);
    row.single_gpu_time = value(single);
    row.speedup = value(speedup);
    row.efficiency = value(efficiency);
    row.karp_flatt = value(kf);
    row.parallel_fraction = value(pf);
    row.amdahl_bound = value(amdahl);
    row.communication_overhead = value(comm);
    row.imbalance = value(imbalance);
    result.rows.push_back(row);
  }
  std::stable_sort(result.rows.begin(), result.rows.end(),
                   [](const SweepPointRow& a, const SweepPointRow& b) { return a.gpus < b.gpus; });
  return result;
}

} // namespace partsim::gui
