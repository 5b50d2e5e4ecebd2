// Sweep axes, expansion, sharding and output.
#include "partsim/batch/sweep.hpp"

#include "partsim/common/error.hpp"
#include "partsim/common/text.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace partsim {

namespace {
std::vector<std::string> split_top_level(const std::string& text) {
  std::vector<std::string> parts;
  std::string current;
  int depth = 0;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '\\' && i + 1 < text.size()) {
        current += c;
        current += text[++i];
        continue;
      }
      quoted = c != '"';
    } else if (c == '"') {
      quoted = true;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if (c == ']' || c == '}') {
      --depth;
    } else if (c == ',' && depth == 0) {
      parts.push_back(current);
      current.clear();
      continue;
    }
    current += c;
  }
  parts.push_back(current);
  return parts;
}
} // namespace

SweepAxis parse_vary(const std::string& text) {
  const auto eq = text.find('=');
  if (text.empty() || text[0] != '/' || eq == std::string::npos || eq + 1 == text.size())
    throw InputError("--vary", "", fmt::format("expected /json/pointer=v1,v2,..., got \"{}\"", text));
  SweepAxis axis;
  axis.pointer = text.substr(0, eq);
  for (const std::string& label : split_top_level(text.substr(eq + 1))) {
    if (label.empty()) throw InputError("--vary", axis.pointer, fmt::format("empty value in \"{}\"", text));
    // Reuse the --set parser so that both read values the same way.
    axis.values.push_back(parse_override(axis.pointer + "=" + label).value);
    axis.labels.push_back(label);
  }
  return axis;
}

std::size_t sweep_size(const std::vector<SweepAxis>& axes) {
  std::size_t size = 1;
  for (const SweepAxis& axis : axes) {
    if (axis.values.empty()) return 0;
    if (axis.values.size() > kMaxSweepPoints / size) return kMaxSweepPoints + 1;
    size *= axis.values.size();
  }
  return size;
}

std::vector<SweepPoint> expand_sweep(const std::vector<SweepAxis>& axes) {
  if (sweep_size(axes) > kMaxSweepPoints) {
    std::vector<std::string> sizes;
    for (const SweepAxis& axis : axes) sizes.push_back(std::to_string(axis.values.size()));
    throw InputError("--vary", "",
                     fmt::format("the axes make {} points, more than the limit of {}; expected fewer values or axes",
                                 fmt::join(sizes, " x "), kMaxSweepPoints));
  }
  std::vector<SweepPoint> points(1);
  for (const SweepAxis& axis : axes) {
    std::vector<SweepPoint> next;
    next.reserve(points.size() * axis.values.size());
    for (const SweepPoint& p : points)
      for (std::size_t v = 0; v < axis.values.size(); ++v) {
        SweepPoint q = p;
        q.overrides.push_back({axis.pointer, axis.values[v]});
        q.labels.push_back(axis.labels[v]);
        next.push_back(std::move(q));
      }
    points = std::move(next);
  }
  for (std::size_t i = 0; i < points.size(); ++i) points[i].index = i;
  return points;
}

std::pair<std::size_t, std::size_t> parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  try {
    if (slash != std::string::npos && slash > 0) {
      std::size_t used = 0;
      const auto shard = std::stoul(text.substr(0, slash), &used);
      const bool whole_first = used == slash;
      const std::string rest = text.substr(slash + 1);
      const auto shards = std::stoul(rest, &used);
      if (whole_first && used == rest.size() && shards > 0 && shard < shards) return {shard, shards};
    }
  } catch (const std::exception&) {
    // fall through to the error below
  }
  throw InputError("--shard", "", fmt::format("expected I/N with 0 <= I < N, got \"{}\"", text));
}

std::vector<SweepPoint> select_shard(const std::vector<SweepPoint>& points, std::size_t shard, std::size_t shards) {
  std::vector<SweepPoint> out;
  for (const SweepPoint& p : points)
    if (p.index % shards == shard) out.push_back(p);
  return out;
}

SweepRow sweep_row(const SweepPoint& point, const ReportDocument& report) {
  SweepRow row;
  row.point = point;
  row.gpus = static_cast<int>(report.gpus());
  if (report.out_of_memory() || !report.summary) {
    row.out_of_memory = true;
    return row;
  }
  const ReportSummary& s = *report.summary;
  row.makespan = s.makespan;
  row.single_gpu_time = s.single_gpu_time;
  row.speedup = s.speedup;
  row.efficiency = s.parallel_efficiency;
  row.karp_flatt = s.karp_flatt;
  row.parallel_fraction = s.parallel_fraction;
  row.amdahl_bound = s.amdahl_speedup_bound;
  row.communication_overhead = s.communication_overhead;
  row.imbalance = s.imbalance_max_over_mean;
  row.throughput = s.throughput;
  row.samples = s.throughput * s.makespan;
  return row;
}

namespace {
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}
} // namespace

void write_sweep_csv(std::ostream& out, const std::vector<SweepAxis>& axes, const std::vector<SweepRow>& rows) {
  out << "point";
  for (const SweepAxis& a : axes) out << ',' << csv_field(a.pointer);
  out << ",gpus,makespan_s,single_gpu_time_s,speedup,parallel_efficiency,karp_flatt_serial_fraction,"
         "parallel_fraction,amdahl_speedup_bound,communication_overhead,load_imbalance_max_over_mean,"
         "throughput_samples_per_s,verdict\n";
  for (const SweepRow& r : rows) {
    out << r.point.index;
    for (const std::string& label : r.point.labels) out << ',' << csv_field(label);
    if (r.out_of_memory) { // no figures: the point was not simulated
      out << fmt::format(",{},,,,,,,,,,,out_of_memory\n", r.gpus);
      continue;
    }
    out << fmt::format(",{},{},{},{},{},{},{},{},{},{},{},simulated\n", r.gpus, r.makespan, r.single_gpu_time,
                       r.speedup, r.efficiency, r.karp_flatt, r.parallel_fraction, r.amdahl_bound,
                       r.communication_overhead, r.imbalance, r.throughput);
  }
}

SweepRanking sweep_ranking(const std::vector<SweepRow>& rows) {
  const SweepRow* first = nullptr;
  for (const SweepRow& r : rows) {
    if (r.out_of_memory) continue;
    if (first == nullptr) first = &r;
    // The same work up to rounding (throughput x makespan is not exact).
    if (std::abs(r.samples - first->samples) > 1e-9 * std::max(std::abs(first->samples), 1.0))
      return SweepRanking::Throughput;
  }
  return SweepRanking::Makespan;
}

std::size_t best_row(const std::vector<SweepRow>& rows) {
  const bool by_throughput = sweep_ranking(rows) == SweepRanking::Throughput;
  std::size_t best = rows.size();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].out_of_memory) continue;
    const bool better = best == rows.size() || (by_throughput ? rows[i].throughput > rows[best].throughput
                                                              : rows[i].makespan < rows[best].makespan);
    if (better) best = i;
  }
  return best;
}

std::string format_sweep_table(const std::vector<SweepAxis>& axes, const std::vector<SweepRow>& rows) {
  std::string out = fmt::format("  {:>5}", "point");
  for (const SweepAxis& a : axes) out += fmt::format(" {:>18}", a.pointer);
  out += fmt::format(" {:>6} {:>12} {:>12} {:>9} {:>8} {:>11} {:>9} {:>9} {:>9}\n", "gpus", "makespan_s", "samples/s",
                     "speedup", "effic.", "karp-flatt", "par.frac", "amdahl", "comm");
  if (rows.empty()) return out;
  const std::size_t best = best_row(rows);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const SweepRow& r = rows[i];
    out += fmt::format("{} {:>5}", i == best ? "*" : " ", r.point.index);
    for (const std::string& label : r.point.labels) out += fmt::format(" {:>18}", printable(label, 18));
    if (r.out_of_memory) {
      out += fmt::format(" {:>6} {:>12}\n", r.gpus, "out of memory");
      continue;
    }
    out += fmt::format(" {:>6} {:>12.6g} {:>12.6g} {:>9.3f} {:>7.1f}% {:>11.4f} {:>9.4f} {:>9.3f} {:>8.1f}%\n", r.gpus,
                       r.makespan, r.throughput, r.speedup, r.efficiency * 100, r.karp_flatt, r.parallel_fraction,
                       r.amdahl_bound, r.communication_overhead * 100);
  }
  const auto does_not_fit = std::count_if(rows.begin(), rows.end(), [](const SweepRow& r) { return r.out_of_memory; });
  if (does_not_fit > 0)
    out += fmt::format("\n  {} of {} points do not fit in GPU memory (verdict out_of_memory in the CSV)\n",
                       does_not_fit, rows.size());
  if (best == rows.size()) return out;
  const SweepRow& b = rows[best];
  std::vector<std::string> settings;
  for (std::size_t a = 0; a < axes.size() && a < b.point.labels.size(); ++a)
    settings.push_back(axes[a].pointer + "=" + b.point.labels[a]);
  if (sweep_ranking(rows) == SweepRanking::Makespan) {
    out += fmt::format("\n  fastest (*): point {} ({}): makespan {:.6g} s, speedup {:.3f} on {} GPUs\n", b.point.index,
                       fmt::join(settings, ", "), b.makespan, b.speedup, b.gpus);
    out += fmt::format("  ranked by makespan: every point does the same work ({:.6g} samples)\n", b.samples);
    return out;
  }
  out += fmt::format("\n  best (*): point {} ({}): {:.6g} samples/s, makespan {:.6g} s on {} GPUs\n", b.point.index,
                     fmt::join(settings, ", "), b.throughput, b.makespan, b.gpus);
  out += "  ranked by throughput (samples/s): the points do different amounts of work, so the shortest makespan is "
         "not the best\n";
  return out;
}

} // namespace partsim
