// Fits from timed samples to the figures of a hardware profile: latency + bandwidth lines for copies, achieved
// memory bandwidth, kernel launch overhead, achieved GEMM rates, and collective bus bandwidth as nccl-tests defines it.
#pragma once

#include "partsim/calibrate/samples.hpp"
#include "partsim/calibrate/statistics.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace partsim::calibrate {

/** One size of a size sweep: the payload and the summary of its repeated timings (s). */
struct SizePoint {
  std::int64_t bytes = 0;
  Summary seconds;
};

/** t = latency + bytes / bandwidth, fitted to the median time of each size. */
struct LatencyBandwidthFit {
  double latency = 0.0;    ///< s, >= 0
  double bandwidth = 0.0;  ///< bytes/s
  double r_squared = 0.0;  ///< of the weighted fit, on the relative residuals
  std::size_t samples = 0; ///< timings behind the fit
  double spread = 0.0;     ///< largest relative spread (IQR / median) over the sizes
  std::vector<SizePoint> points;
};

/** Groups samples by `bytes` (sorted) and summarises each group's durations. */
std::vector<SizePoint> size_points(const std::vector<Sample>& samples);

/** Least-squares fit of t = a + b·x to the medians of `points` (x = bytes, b = 1 / bandwidth), weighted by 1 / t²
 * so that every size counts by its relative error (an unweighted fit lets the largest sizes decide the latency).
 * A negative intercept is not physical: then the fit is redone through the origin (latency 0).
 * @throws std::invalid_argument with fewer than two distinct sizes or a non-positive slope. */
LatencyBandwidthFit fit_latency_bandwidth(std::vector<SizePoint> points);

/** fit_latency_bandwidth(size_points(samples)). */
LatencyBandwidthFit fit_latency_bandwidth(const std::vector<Sample>& samples);

/** Achieved memory bandwidth of a memory-bound kernel counted as bytes read plus written: the line
 * t = a + traffic / bandwidth fitted over the sizes, with traffic = 2·bytes (a copy or an elementwise kernel reads
 * and writes `bytes` each). Also the best achieved figure at one size: 2·bytes / median time, the largest over sizes.
 */
struct MemoryBandwidthFit {
  LatencyBandwidthFit line;   ///< over traffic (bytes read + written)
  double best_achieved = 0.0; ///< bytes/s, read + written, at the best size
  std::int64_t best_bytes = 0;
};
MemoryBandwidthFit fit_memory_bandwidth(const std::vector<Sample>& samples);

/** Kernel launch overhead: the median interval between the starts of consecutive empty kernels launched back to
 * back (same `batch`), i.e. the time per kernel when kernels do nothing; also the empty kernels' own duration. */
struct LaunchOverheadFit {
  Summary interval; ///< s between consecutive starts
  Summary duration; ///< s from start to end of one empty kernel
  std::size_t samples = 0;
};
/** @throws std::invalid_argument without two empty kernels in one batch. */
LaunchOverheadFit fit_launch_overhead(const std::vector<Sample>& samples);

/** Achieved rate of one GEMM shape and data type. */
struct GemmPoint {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::string data_type;
  Summary seconds;
  double flops_per_second = 0.0; ///< 2·m·n·k / median time
};

/** One point per (data type, m, n, k), sorted by data type then m, n, k. */
std::vector<GemmPoint> fit_gemm(const std::vector<Sample>& samples);

/** The bus-bandwidth factor of nccl-tests (doc/PERFORMANCE.md): all_reduce 2(n-1)/n; all_gather, reduce_scatter and
 * all_to_all (n-1)/n; broadcast and reduce 1. @throws std::invalid_argument for another name or ranks < 1. */
double bus_bandwidth_factor(const std::string& collective, int ranks);

/** One collective at one size: algbw = size / t, busbw = algbw · factor (nccl-tests' definitions). */
struct CollectivePoint {
  std::string collective;
  int ranks = 0;
  std::int64_t bytes = 0;
  Summary seconds;
  double algorithm_bandwidth = 0.0; ///< bytes/s
  double bus_bandwidth = 0.0;       ///< bytes/s
};

/** A collective over sizes: per-size points and the line t = latency + size / bandwidth · ... fitted on bus bytes
 * (size · factor), so that `line.bandwidth` is the bus bandwidth a link model can use directly. */
struct CollectiveFit {
  std::string collective;
  int ranks = 0;
  std::vector<CollectivePoint> points;
  LatencyBandwidthFit line; ///< x = size · bus factor
};

/** One fit per (collective, ranks). */
std::vector<CollectiveFit> fit_collectives(const std::vector<Sample>& samples);

/** Copies between a pair of end points, one line per (kind, variant, device, peer): host↔device per memory kind,
 * peer copies per ordered GPU pair. */
struct LinkFit {
  SampleKind kind = SampleKind::HostToDevice;
  std::string variant; ///< "pinned"/"pageable" for host copies
  int device = 0;
  int peer = -1;
  LatencyBandwidthFit line;
};
std::vector<LinkFit> fit_links(const std::vector<Sample>& samples);

} // namespace partsim::calibrate
