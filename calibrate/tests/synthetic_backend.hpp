// A MeasurementBackend with no GPU: times come from known closed forms with seeded multiplicative noise, so tests can
// check that the fits recover the figures the samples were made from.
#pragma once

#include "partsim/calibrate/fits.hpp"
#include "partsim/calibrate/measurement_backend.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace partsim::calibrate::testing {

/** splitmix64: a small seeded generator, the same on every standard library. */
class SplitMix {
 public:
  explicit SplitMix(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /** Uniform in [0, 1). */
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  std::uint64_t state_;
};

/** The figures a synthetic GPU has; samples are drawn from them. */
struct SyntheticGpu {
  std::map<std::string, double> peak{
      {"bf16", 989.5e12}, {"fp16", 989.5e12}, {"tf32", 494.5e12}, {"fp32", 67e12}, {"fp8", 1979e12}};
  std::map<std::string, double> saturated{{"bf16", 0.78}, {"fp16", 0.77}, {"tf32", 0.6}, {"fp32", 0.85}, {"fp8", 0.65}};
  double half_dimension = 96.0;
  double gemm_floor = 2e-6; ///< s added to every GEMM (a GPU does not finish a tiny product in nanoseconds)
  double copy_latency = 2e-6, copy_bandwidth = 4.2e12;     // over bytes read + written
  double kernel_latency = 3e-6, kernel_bandwidth = 4.0e12; // over bytes read + written
  double launch_interval = 2.5e-6, empty_kernel = 1.2e-6;
  double h2d_latency = 5e-6, h2d_bandwidth = 5.5e10, pageable_factor = 0.4;
  double d2h_latency = 5e-6, d2h_bandwidth = 5.3e10;
  double peer_latency = 8e-6, peer_bandwidth = 4e11;
  double collective_latency = 20e-6, bus_bandwidth = 3.6e11;
  double noise = 0.02; ///< each time is multiplied by 1 + noise·(u - 1/2)
  /** The fraction of its kernel-at-a-time rate a GEMM keeps in the power loop (the clock lowered at the power limit);
   * 0: the loop's GEMMs are not timed (a backend that cannot). */
  double sustained = 0.85;
  int gpus = 2;

  double gemm_efficiency(const std::string& type, std::int64_t m, std::int64_t n, std::int64_t k) const {
    double e = saturated.at(type);
    for (double x : {double(m), double(n), double(k)}) e *= x / (x + half_dimension);
    return e;
  }
  double gemm_seconds(const std::string& type, std::int64_t m, std::int64_t n, std::int64_t k) const {
    const double flops = 2.0 * double(m) * double(n) * double(k);
    return flops / (peak.at(type) * gemm_efficiency(type, m, n, k)) + gemm_floor;
  }
  /** What the calibrator should find: achieved rate over peak, the floor included. */
  double achieved_efficiency(const std::string& type, std::int64_t m, std::int64_t n, std::int64_t k) const {
    return 2.0 * double(m) * double(n) * double(k) / (peak.at(type) * gemm_seconds(type, m, n, k));
  }
};

class SyntheticBackend : public MeasurementBackend {
 public:
  explicit SyntheticBackend(SyntheticGpu gpu = {}, std::uint64_t seed = 7) : gpu_(std::move(gpu)), rng_(seed) {}

  std::vector<std::string> failing; ///< steps that throw: "gemm", "device_copy", ...

  DeviceInfo device_info() override {
    DeviceInfo d;
    d.name = "NVIDIA H200";
    d.uuid = "GPU-00000000-1111-2222-3333-444444444444";
    d.driver = "580.159.04";
    d.cuda = "13.0";
    d.cupti = "130000";
    d.compute_capability = "9.0";
    d.memory_bytes = 143771LL * 1024 * 1024;
    d.multiprocessors = 132;
    d.device_count = gpu_.gpus;
    return d;
  }
  std::vector<std::string> gemm_data_types() override { return {"bf16", "fp16", "tf32", "fp32", "fp8"}; }

  std::vector<Sample> gemm(const GemmShape3& s, const std::string& type, const Repeats& r) override {
    fail_if("gemm");
    Sample proto;
    proto.kind = SampleKind::Gemm;
    proto.label =
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off";
    proto.data_type = type;
    proto.m = s.m;
    proto.n = s.n;
    proto.k = s.k;
    return timed(proto, gpu_.gemm_seconds(type, s.m, s.n, s.k), r);
  }
  std::vector<Sample> device_copy(std::int64_t bytes, const Repeats& r) override {
    fail_if("device_copy");
    return timed(proto(SampleKind::DeviceCopy, bytes), gpu_.copy_latency + 2.0 * double(bytes) / gpu_.copy_bandwidth,
                 r);
  }
  std::vector<Sample> elementwise(std::int64_t bytes, const Repeats& r) override {
    fail_if("elementwise");
    Sample p = proto(SampleKind::Elementwise, bytes);
    p.data_type = "fp32";
    return timed(p, gpu_.kernel_latency + 2.0 * double(bytes) / gpu_.kernel_bandwidth, r);
  }
  std::vector<Sample> empty_kernels(int batches, int per_batch) override {
    fail_if("empty_kernels");
    std::vector<Sample> out;
    for (int b = 0; b < batches; ++b) {
      clock_ += 1'000'000;
      for (int i = 0; i < per_batch; ++i) {
        Sample s = proto(SampleKind::EmptyKernel, 0);
        s.batch = b;
        s.repeat = i;
        s.start_ns = clock_;
        s.end_ns = clock_ + ns(gpu_.empty_kernel * jitter());
        clock_ += ns(gpu_.launch_interval * jitter());
        out.push_back(s);
      }
    }
    return out;
  }
  std::vector<Sample> host_copy(bool to_device, bool pinned, std::int64_t bytes, const Repeats& r) override {
    fail_if("host_copy");
    Sample p = proto(to_device ? SampleKind::HostToDevice : SampleKind::DeviceToHost, bytes);
    p.variant = pinned ? "pinned" : "pageable";
    const double bw = (to_device ? gpu_.h2d_bandwidth : gpu_.d2h_bandwidth) * (pinned ? 1.0 : gpu_.pageable_factor);
    return timed(p, (to_device ? gpu_.h2d_latency : gpu_.d2h_latency) + double(bytes) / bw, r);
  }
  int peer_devices() override { return gpu_.gpus; }
  std::vector<Sample> peer_copy(int from, int to, std::int64_t bytes, const Repeats& r) override {
    fail_if("peer_copy");
    Sample p = proto(SampleKind::PeerCopy, bytes);
    p.device = from;
    p.peer = to;
    return timed(p, gpu_.peer_latency + double(bytes) / gpu_.peer_bandwidth, r);
  }
  std::vector<Sample> collective(const std::string& name, int ranks, std::int64_t bytes, const Repeats& r) override {
    fail_if("collective");
    Sample p = proto(SampleKind::Collective, bytes);
    p.variant = name;
    p.ranks = ranks;
    p.label = "ncclDevKernel_" + name;
    return timed(p, gpu_.collective_latency + double(bytes) * bus_bandwidth_factor(name, ranks) / gpu_.bus_bandwidth,
                 r);
  }
  std::optional<PowerMeasurement> power(const GemmShape3& shape, const std::string& type, double) override {
    fail_if("power");
    PowerMeasurement p;
    p.idle_watts = summarize({74.0, 75.0, 76.0});
    p.busy_watts = summarize({640.0, 650.0, 660.0});
    p.limit_watts = 700.0;
    p.busy_sm_clock_mhz = summarize({1740.0, 1755.0, 1770.0});
    p.max_sm_clock_mhz = 1980.0;
    p.power_capped_readings = 2;
    p.reason_readings = 3;
    p.workload = fmt::format("{} GEMM {}x{}x{} in a loop", type, shape.m, shape.n, shape.k);
    p.shape = shape;
    p.data_type = type;
    if (gpu_.sustained > 0.0) {
      std::vector<double> times;
      for (int i = 0; i < 50; ++i)
        times.push_back(gpu_.gemm_seconds(type, shape.m, shape.n, shape.k) / gpu_.sustained * jitter());
      p.busy_gemm_seconds = summarize(times);
    } else if (gpu_.sustained < 0.0) { // a broken timer: spans of zero length
      p.busy_gemm_seconds = summarize(std::vector<double>(50, 0.0));
    }
    return p;
  }

  const SyntheticGpu& gpu() const { return gpu_; }

 private:
  void fail_if(const std::string& step) const {
    for (const std::string& f : failing)
      if (f == step) throw std::runtime_error(step + ": synthetic failure");
  }
  static Sample proto(SampleKind kind, std::int64_t bytes) {
    Sample s;
    s.kind = kind;
    s.bytes = bytes;
    s.label = std::string(to_string(kind));
    return s;
  }
  double jitter() { return 1.0 + gpu_.noise * (rng_.uniform() - 0.5); }
  static std::uint64_t ns(double seconds) { return static_cast<std::uint64_t>(std::llround(seconds * 1e9)); }
  std::vector<Sample> timed(const Sample& proto, double seconds, const Repeats& r) {
    std::vector<Sample> out;
    for (int i = 0; i < r.repeats; ++i) {
      Sample s = proto;
      s.repeat = i;
      s.start_ns = clock_;
      s.end_ns = clock_ + std::max<std::uint64_t>(1, ns(seconds * jitter()));
      clock_ = s.end_ns + 1000;
      out.push_back(s);
    }
    return out;
  }

  SyntheticGpu gpu_;
  SplitMix rng_;
  std::uint64_t clock_ = 1'000'000'000;
};

} // namespace partsim::calibrate::testing
