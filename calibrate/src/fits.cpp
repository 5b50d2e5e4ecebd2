// Latency + bandwidth lines, memory bandwidth, launch overhead, GEMM rates and collective bandwidths from samples.
#include "partsim/calibrate/fits.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

namespace partsim::calibrate {

namespace {

/** Weighted least squares of y = a + b·x (centred sums, so sizes spanning 10 decades stay well conditioned). */
struct Line {
  double a = 0.0;
  double b = 0.0;
  double r_squared = 0.0;
};

Line weighted_line(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& w,
                   bool through_origin) {
  double sw = 0.0, swx = 0.0, swy = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sw += w[i];
    swx += w[i] * x[i];
    swy += w[i] * y[i];
  }
  Line line;
  if (through_origin) {
    double sxy = 0.0, sxx = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      sxy += w[i] * x[i] * y[i];
      sxx += w[i] * x[i] * x[i];
    }
    line.b = sxy / sxx;
  } else {
    const double mx = swx / sw;
    const double my = swy / sw;
    double sxy = 0.0, sxx = 0.0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      sxy += w[i] * (x[i] - mx) * (y[i] - my);
      sxx += w[i] * (x[i] - mx) * (x[i] - mx);
    }
    line.b = sxy / sxx;
    line.a = my - line.b * mx;
  }
  const double my = swy / sw;
  double ss_res = 0.0, ss_tot = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double r = y[i] - line.a - line.b * x[i];
    ss_res += w[i] * r * r;
    ss_tot += w[i] * (y[i] - my) * (y[i] - my);
  }
  line.r_squared = ss_tot > 0.0 ? 1.0 - ss_res / ss_tot : 1.0;
  return line;
}

} // namespace

std::vector<SizePoint> size_points(const std::vector<Sample>& samples) {
  std::map<std::int64_t, std::vector<double>> by_size;
  for (const Sample& s : samples) by_size[s.bytes].push_back(s.seconds());
  std::vector<SizePoint> points;
  for (const auto& [bytes, times] : by_size) points.push_back({bytes, summarize(times)});
  return points;
}

LatencyBandwidthFit fit_latency_bandwidth(std::vector<SizePoint> points) {
  std::sort(points.begin(), points.end(), [](const SizePoint& a, const SizePoint& b) { return a.bytes < b.bytes; });
  points.erase(std::unique(points.begin(), points.end(),
                           [](const SizePoint& a, const SizePoint& b) { return a.bytes == b.bytes; }),
               points.end());
  if (points.size() < 2) throw std::invalid_argument("a latency + bandwidth fit needs at least two distinct sizes");
  std::vector<double> x, y, w;
  LatencyBandwidthFit fit;
  for (const SizePoint& p : points) {
    if (!(p.seconds.median > 0.0)) throw std::invalid_argument("a latency + bandwidth fit needs positive times");
    x.push_back(static_cast<double>(p.bytes));
    y.push_back(p.seconds.median);
    w.push_back(1.0 / (p.seconds.median * p.seconds.median));
    fit.samples += p.seconds.count;
    fit.spread = std::max(fit.spread, p.seconds.relative_spread());
  }
  Line line = weighted_line(x, y, w, false);
  if (line.a < 0.0) line = weighted_line(x, y, w, true);
  if (!(line.b > 0.0)) throw std::invalid_argument("the times do not grow with size: no bandwidth can be fitted");
  fit.latency = line.a;
  fit.bandwidth = 1.0 / line.b;
  fit.r_squared = line.r_squared;
  fit.points = std::move(points);
  return fit;
}

LatencyBandwidthFit fit_latency_bandwidth(const std::vector<Sample>& samples) {
  return fit_latency_bandwidth(size_points(samples));
}

MemoryBandwidthFit fit_memory_bandwidth(const std::vector<Sample>& samples) {
  std::vector<SizePoint> traffic = size_points(samples);
  MemoryBandwidthFit fit;
  for (SizePoint& p : traffic) {
    p.bytes *= 2; // read + written
    const double achieved = static_cast<double>(p.bytes) / p.seconds.median;
    if (achieved > fit.best_achieved) {
      fit.best_achieved = achieved;
      fit.best_bytes = p.bytes / 2;
    }
  }
  fit.line = fit_latency_bandwidth(std::move(traffic));
  return fit;
}

LaunchOverheadFit fit_launch_overhead(const std::vector<Sample>& samples) {
  std::map<int, std::vector<const Sample*>> batches;
  for (const Sample& s : samples) batches[s.batch].push_back(&s);
  std::vector<double> intervals, lengths;
  for (auto& [batch, members] : batches) {
    std::sort(members.begin(), members.end(),
              [](const Sample* a, const Sample* b) { return a->start_ns < b->start_ns; });
    for (std::size_t i = 0; i < members.size(); ++i) {
      lengths.push_back(members[i]->seconds());
      if (i > 0) intervals.push_back(static_cast<double>(members[i]->start_ns - members[i - 1]->start_ns) * 1e-9);
    }
  }
  if (intervals.empty())
    throw std::invalid_argument("a launch overhead needs at least two empty kernels launched back to back");
  return {summarize(intervals), summarize(lengths), samples.size()};
}

std::vector<GemmPoint> fit_gemm(const std::vector<Sample>& samples) {
  std::map<std::tuple<std::string, std::int64_t, std::int64_t, std::int64_t>, std::vector<double>> groups;
  for (const Sample& s : samples)
    if (s.kind == SampleKind::Gemm) groups[{s.data_type, s.m, s.n, s.k}].push_back(s.seconds());
  std::vector<GemmPoint> points;
  for (const auto& [key, times] : groups) {
    GemmPoint p;
    std::tie(p.data_type, p.m, p.n, p.k) = key;
    p.seconds = summarize(times);
    const double flops = 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k);
    p.flops_per_second = p.seconds.median > 0.0 ? flops / p.seconds.median : 0.0;
    points.push_back(std::move(p));
  }
  return points;
}

double bus_bandwidth_factor(const std::string& collective, int ranks) {
  if (ranks < 1) throw std::invalid_argument("a collective needs at least one rank");
  const double n = ranks;
  if (collective == "all_reduce") return 2.0 * (n - 1.0) / n;
  if (collective == "all_gather" || collective == "reduce_scatter" || collective == "all_to_all") return (n - 1.0) / n;
  if (collective == "broadcast" || collective == "reduce") return 1.0;
  throw std::invalid_argument("unknown collective \"" + collective +
                              "\"; expected all_reduce, all_gather, reduce_scatter, all_to_all, broadcast or reduce");
}

std::vector<CollectiveFit> fit_collectives(const std::vector<Sample>& samples) {
  std::map<std::pair<std::string, int>, std::vector<Sample>> groups;
  for (const Sample& s : samples)
    if (s.kind == SampleKind::Collective) groups[{s.variant, s.ranks}].push_back(s);
  std::vector<CollectiveFit> fits;
  for (const auto& [key, members] : groups) {
    CollectiveFit fit;
    std::tie(fit.collective, fit.ranks) = key;
    const double factor = bus_bandwidth_factor(fit.collective, fit.ranks);
    std::vector<SizePoint> bus;
    for (const SizePoint& p : size_points(members)) {
      CollectivePoint c{fit.collective, fit.ranks, p.bytes, p.seconds, 0.0, 0.0};
      c.algorithm_bandwidth = static_cast<double>(p.bytes) / p.seconds.median;
      c.bus_bandwidth = c.algorithm_bandwidth * factor;
      fit.points.push_back(c);
      bus.push_back({static_cast<std::int64_t>(std::llround(static_cast<double>(p.bytes) * factor)), p.seconds});
    }
    if (factor > 0.0 && bus.size() >= 2) fit.line = fit_latency_bandwidth(std::move(bus));
    fits.push_back(std::move(fit));
  }
  return fits;
}

std::vector<LinkFit> fit_links(const std::vector<Sample>& samples) {
  std::map<std::tuple<int, std::string, int, int>, std::vector<Sample>> groups;
  for (const Sample& s : samples)
    if (s.kind == SampleKind::HostToDevice || s.kind == SampleKind::DeviceToHost || s.kind == SampleKind::PeerCopy)
      groups[{static_cast<int>(s.kind), s.variant, s.device, s.peer}].push_back(s);
  std::vector<LinkFit> fits;
  for (const auto& [key, members] : groups) {
    LinkFit fit;
    fit.kind = members.front().kind;
    fit.variant = std::get<1>(key);
    fit.device = std::get<2>(key);
    fit.peer = std::get<3>(key);
    fit.line = fit_latency_bandwidth(members);
    fits.push_back(std::move(fit));
  }
  return fits;
}

} // namespace partsim::calibrate
