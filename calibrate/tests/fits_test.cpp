// Fits recover the figures that synthetic samples were generated from: latency + bandwidth lines, memory bandwidth
// counted as bytes read + written, launch overhead, GEMM rates, nccl-tests bus bandwidth, links per pair.
#include "partsim/calibrate/fits.hpp"

#include "synthetic_backend.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

namespace partsim::calibrate {
namespace {

using testing::SplitMix;
using testing::SyntheticBackend;
using testing::SyntheticGpu;

/** Samples of t = latency + bytes / bandwidth with multiplicative noise of ±noise/2, sizes 4 KiB to 1 GiB by 4. */
std::vector<Sample> line_samples(double latency, double bandwidth, double noise, int repeats = 10) {
  SplitMix rng(42);
  std::vector<Sample> samples;
  std::uint64_t clock = 0;
  for (std::int64_t bytes = 4096; bytes <= (std::int64_t{1} << 30); bytes *= 4)
    for (int i = 0; i < repeats; ++i) {
      Sample s;
      s.kind = SampleKind::HostToDevice;
      s.variant = "pinned";
      s.bytes = bytes;
      s.repeat = i;
      const double t = (latency + static_cast<double>(bytes) / bandwidth) * (1.0 + noise * (rng.uniform() - 0.5));
      s.start_ns = clock;
      s.end_ns = clock + static_cast<std::uint64_t>(std::llround(t * 1e9));
      clock = s.end_ns + 100;
      samples.push_back(s);
    }
  return samples;
}

TEST(LatencyBandwidthFit, RecoversFiveMicrosecondsAndTwoHundredGBpsFromNoisySamples) {
  const LatencyBandwidthFit fit = fit_latency_bandwidth(line_samples(5e-6, 2e11, 0.04));
  EXPECT_NEAR(fit.bandwidth, 2e11, 0.02 * 2e11);
  EXPECT_NEAR(fit.latency, 5e-6, 0.1 * 5e-6);
  EXPECT_EQ(fit.points.size(), 10u);
  EXPECT_EQ(fit.samples, 100u);
  EXPECT_GT(fit.r_squared, 0.99);
  EXPECT_GT(fit.spread, 0.0);
  EXPECT_LT(fit.spread, 0.04);
}

TEST(LatencyBandwidthFit, IsExactWithoutNoise) {
  const LatencyBandwidthFit fit = fit_latency_bandwidth(line_samples(5e-6, 2e11, 0.0, 3));
  // Only the rounding of times to whole nanoseconds remains.
  EXPECT_NEAR(fit.bandwidth / 2e11, 1.0, 1e-4);
  EXPECT_NEAR(fit.latency, 5e-6, 2e-9);
  EXPECT_DOUBLE_EQ(fit.spread, 0.0);
}

TEST(LatencyBandwidthFit, UnweightedFitWouldMissTheLatencyTheWeightedOneFinds) {
  // With 4% noise on a 1 GiB copy (5.4 ms ± 100 us), an unweighted fit's intercept is lost in the noise of the largest
  // sizes; weighting by 1/t^2 keeps the small sizes, where the latency shows, in charge of it.
  const LatencyBandwidthFit fit = fit_latency_bandwidth(line_samples(5e-6, 2e11, 0.04));
  EXPECT_NEAR(fit.latency, 5e-6, 0.5e-6);
}

TEST(LatencyBandwidthFit, NegativeInterceptIsRefittedThroughTheOrigin) {
  std::vector<SizePoint> points;
  for (auto [bytes, t] : {std::pair{10000, 0.9e-6}, {20000, 1.9e-6}, {40000, 3.9e-6}})
    points.push_back({bytes, summarize({t})});
  const LatencyBandwidthFit fit = fit_latency_bandwidth(points);
  EXPECT_DOUBLE_EQ(fit.latency, 0.0);
  // Through the origin, weighted by 1/t^2: 1/B = Σ(x/t) / Σ(x/t)^2.
  double sum = 0.0, sum_sq = 0.0;
  for (const SizePoint& p : points) {
    const double r = static_cast<double>(p.bytes) / p.seconds.median;
    sum += r;
    sum_sq += r * r;
  }
  EXPECT_NEAR(fit.bandwidth, sum_sq / sum, 1e-6 * fit.bandwidth);
  EXPECT_LT(fit.bandwidth, 1.11e10); // between the slowest and fastest size's achieved rate
  EXPECT_GT(fit.bandwidth, 1.02e10);
}

TEST(LatencyBandwidthFit, RefusesOneSizeAndShrinkingTimes) {
  EXPECT_THROW(fit_latency_bandwidth(std::vector<SizePoint>{{4096, summarize({1e-6})}}), std::invalid_argument);
  EXPECT_THROW(
      fit_latency_bandwidth(std::vector<SizePoint>{{4096, summarize({1e-6, 1.1e-6})}, {4096, summarize({1e-6})}}),
      std::invalid_argument);
  EXPECT_THROW(fit_latency_bandwidth(std::vector<SizePoint>{{4096, summarize({2e-6})}, {8192, summarize({1e-6})}}),
               std::invalid_argument);
}

TEST(MemoryBandwidthFit, CountsBytesReadPlusWritten) {
  SyntheticBackend backend;
  std::vector<Sample> samples;
  for (std::int64_t bytes = 4096; bytes <= (std::int64_t{4} << 30); bytes *= 4) {
    auto s = backend.device_copy(bytes, {0, 10});
    samples.insert(samples.end(), s.begin(), s.end());
  }
  const MemoryBandwidthFit fit = fit_memory_bandwidth(samples);
  EXPECT_NEAR(fit.line.bandwidth, 4.2e12, 0.02 * 4.2e12);
  EXPECT_NEAR(fit.line.latency, 2e-6, 0.2e-6);
  EXPECT_EQ(fit.line.points.front().bytes, 2 * 4096); // traffic: read + written
  EXPECT_EQ(fit.best_bytes, std::int64_t{4} << 30);
  const double at_4gib = 2.0 * 4294967296.0 / (2e-6 + 2.0 * 4294967296.0 / 4.2e12);
  EXPECT_NEAR(fit.best_achieved, at_4gib, 0.01 * at_4gib);
}

TEST(LaunchOverheadFit, IsTheIntervalBetweenBackToBackEmptyKernels) {
  SyntheticBackend backend;
  const LaunchOverheadFit fit = fit_launch_overhead(backend.empty_kernels(3, 100));
  EXPECT_NEAR(fit.interval.median, 2.5e-6, 0.02 * 2.5e-6);
  EXPECT_NEAR(fit.duration.median, 1.2e-6, 0.02 * 1.2e-6);
  EXPECT_EQ(fit.interval.count, 3u * 99u); // batches are not chained to each other
  EXPECT_EQ(fit.samples, 300u);
  EXPECT_THROW(fit_launch_overhead(backend.empty_kernels(3, 1)), std::invalid_argument);
}

TEST(GemmFit, OnePointPerShapeAndTypeAtTheMedianTime) {
  SyntheticGpu gpu;
  gpu.noise = 0.0;
  SyntheticBackend backend(gpu);
  std::vector<Sample> samples = backend.gemm({4096, 4096, 4096}, "bf16", {0, 5});
  auto more = backend.gemm({4096, 4096, 4096}, "fp16", {0, 3});
  samples.insert(samples.end(), more.begin(), more.end());
  samples[0].end_ns += 1'000'000; // one slow outlier does not move the median
  const std::vector<GemmPoint> points = fit_gemm(samples);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].data_type, "bf16");
  EXPECT_EQ(points[0].seconds.count, 5u);
  const double t = gpu.gemm_seconds("bf16", 4096, 4096, 4096);
  EXPECT_NEAR(points[0].flops_per_second, 2.0 * 4096.0 * 4096.0 * 4096.0 / t, 1e-6 * points[0].flops_per_second);
  EXPECT_NEAR(points[0].flops_per_second / gpu.peak.at("bf16"), gpu.achieved_efficiency("bf16", 4096, 4096, 4096),
              1e-6);
  EXPECT_EQ(points[1].data_type, "fp16");
}

TEST(CollectiveFit, BusBandwidthFactorsAreNcclTests) {
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor("all_reduce", 8), 1.75);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor("all_reduce", 2), 1.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor("all_gather", 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor("reduce_scatter", 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor("all_to_all", 2), 0.5);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor("broadcast", 8), 1.0);
  EXPECT_THROW(bus_bandwidth_factor("all_scatter", 8), std::invalid_argument);
  EXPECT_THROW(bus_bandwidth_factor("all_reduce", 0), std::invalid_argument);
}

TEST(CollectiveFit, AlgorithmAndBusBandwidthPerSizeAndTheBusLine) {
  SyntheticGpu gpu;
  gpu.gpus = 8;
  SyntheticBackend backend(gpu);
  std::vector<Sample> samples;
  for (const char* name : {"all_reduce", "all_gather"})
    for (std::int64_t bytes = 65536; bytes <= (std::int64_t{1} << 30); bytes *= 4) {
      auto s = backend.collective(name, 8, bytes, {0, 10});
      samples.insert(samples.end(), s.begin(), s.end());
    }
  const std::vector<CollectiveFit> fits = fit_collectives(samples);
  ASSERT_EQ(fits.size(), 2u);
  const CollectiveFit& all_gather = fits[0];
  const CollectiveFit& all_reduce = fits[1];
  EXPECT_EQ(all_reduce.collective, "all_reduce");
  EXPECT_EQ(all_reduce.ranks, 8);
  for (const CollectivePoint& p : all_reduce.points) {
    EXPECT_DOUBLE_EQ(p.algorithm_bandwidth, static_cast<double>(p.bytes) / p.seconds.median);
    EXPECT_DOUBLE_EQ(p.bus_bandwidth, p.algorithm_bandwidth * 1.75);
  }
  // At 1 GiB the latency is negligible: busbw is close to the link's bus bandwidth.
  EXPECT_NEAR(all_reduce.points.back().bus_bandwidth, 3.6e11, 0.02 * 3.6e11);
  EXPECT_NEAR(all_reduce.line.bandwidth, 3.6e11, 0.02 * 3.6e11);
  EXPECT_NEAR(all_reduce.line.latency, 20e-6, 2e-6);
  EXPECT_NEAR(all_gather.line.bandwidth, 3.6e11, 0.02 * 3.6e11);
}

TEST(LinkFit, OneLinePerKindMemoryAndGpuPair) {
  SyntheticBackend backend;
  std::vector<Sample> samples;
  for (std::int64_t bytes = 4096; bytes <= (std::int64_t{1} << 30); bytes *= 4) {
    for (bool pinned : {true, false}) {
      auto s = backend.host_copy(true, pinned, bytes, {0, 5});
      samples.insert(samples.end(), s.begin(), s.end());
    }
    for (auto [from, to] : {std::pair{0, 1}, std::pair{1, 0}}) {
      auto s = backend.peer_copy(from, to, bytes, {0, 5});
      samples.insert(samples.end(), s.begin(), s.end());
    }
  }
  const std::vector<LinkFit> fits = fit_links(samples);
  ASSERT_EQ(fits.size(), 4u);
  EXPECT_EQ(fits[0].kind, SampleKind::HostToDevice);
  EXPECT_EQ(fits[0].variant, "pageable");
  EXPECT_NEAR(fits[0].line.bandwidth, 0.4 * 5.5e10, 0.02 * 0.4 * 5.5e10);
  EXPECT_EQ(fits[1].variant, "pinned");
  EXPECT_NEAR(fits[1].line.bandwidth, 5.5e10, 0.02 * 5.5e10);
  EXPECT_NEAR(fits[1].line.latency, 5e-6, 0.5e-6);
  EXPECT_EQ(fits[2].kind, SampleKind::PeerCopy);
  EXPECT_EQ(fits[2].device, 0);
  EXPECT_EQ(fits[2].peer, 1);
  EXPECT_NEAR(fits[2].line.bandwidth, 4e11, 0.02 * 4e11);
  EXPECT_NEAR(fits[2].line.latency, 8e-6, 0.8e-6);
  EXPECT_EQ(fits[3].device, 1);
}

} // namespace
} // namespace partsim::calibrate
