// The CUPTI measurement backend: every timing is the GPU-side span of the CUPTI kernel or memcpy records issued under
// one measurement id; host clocks only pace the power readings.
#include "cupti_backend.hpp"

#include "activity_recorder.hpp"
#include "cuda_check.hpp"
#include "device_buffers.hpp"
#include "gemm_runner.hpp"
#include "kernels.cuh"
#include "nvml_power.hpp"
#ifdef PARTSIM_CALIBRATE_HAVE_NCCL
#include "nccl_collectives.hpp"
#endif

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <optional>
#include <thread>

namespace partsim::calibrate {

namespace {

using namespace partsim::calibrate::cuda;
using Clock = std::chrono::steady_clock;

std::string uuid_string(const cudaUUID_t& uuid) {
  std::string hex;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) hex += '-';
    hex += fmt::format("{:02x}", static_cast<unsigned char>(uuid.bytes[i]));
  }
  return "GPU-" + hex;
}

std::string version_string(int v) {
  return fmt::format("{}.{}", v / 1000, v % 1000 / 10);
}

class CuptiBackend final : public MeasurementBackend {
 public:
  explicit CuptiBackend(int device) : device_(device) {
    recorder_ = std::make_unique<ActivityRecorder>(); // before the context, so that nothing is missed
    CUDA_CHECK(cudaSetDevice(device_));
    CUDA_CHECK(cudaFree(nullptr)); // creates the context
    CUDA_CHECK(cudaGetDeviceProperties(&props_, device_));
    CUDA_CHECK(cudaGetDeviceCount(&device_count_));
    stream_ = std::make_unique<Stream>();
  }

  ~CuptiBackend() override {
    gemm_.reset();
#ifdef PARTSIM_CALIBRATE_HAVE_NCCL
    nccl_.reset();
#endif
    stream_.reset();
    recorder_.reset();
  }

  DeviceInfo device_info() override {
    DeviceInfo d;
    d.name = props_.name;
    d.uuid = uuid_string(props_.uuid);
    int driver = 0, runtime = 0;
    CUDA_CHECK(cudaDriverGetVersion(&driver));
    CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    const NvmlPower nvml(d.uuid);
    d.driver = nvml.driver_version().value_or(version_string(driver) + " (CUDA driver API)");
    d.cuda = version_string(runtime);
    d.cupti = cupti_version();
    d.compute_capability = fmt::format("{}.{}", props_.major, props_.minor);
    d.memory_bytes = static_cast<std::int64_t>(props_.totalGlobalMem);
    d.multiprocessors = props_.multiProcessorCount;
    d.device_count = device_count_;
    d.index = device_;
    return d;
  }

  std::vector<std::string> gemm_data_types() override {
    return GemmRunner::data_types(props_.major, props_.minor);
  }

  std::vector<Sample> gemm(const GemmShape3& shape, const std::string& type, const Repeats& r) override {
    GemmRunner& runner = gemm_runner(std::max({shape.m, shape.n, shape.k}));
    if (!clocks_warm_) warm_clocks(runner, type);
    runner.prepare(shape.m, shape.n, shape.k, type);
    Sample proto;
    proto.kind = SampleKind::Gemm;
    proto.data_type = type;
    proto.m = shape.m;
    proto.n = shape.n;
    proto.k = shape.k;
    return timed(proto, r, [&] { runner.run(); });
  }

  std::vector<Sample> device_copy(std::int64_t bytes, const Repeats& r) override {
    const auto size = static_cast<std::size_t>(bytes);
    const DevicePtr from = device_alloc(size), to = device_alloc(size);
    CUDA_CHECK(kernels::fill_random(from.get(), size / 4, kernels::Element::F32, 3, stream_->get()));
    Sample proto;
    proto.kind = SampleKind::DeviceCopy;
    proto.bytes = bytes;
    return timed(proto, r, [&] {
      CUDA_CHECK(cudaMemcpyAsync(to.get(), from.get(), size, cudaMemcpyDeviceToDevice, stream_->get()));
    });
  }

  std::vector<Sample> elementwise(std::int64_t bytes, const Repeats& r) override {
    const auto size = static_cast<std::size_t>(bytes);
    const DevicePtr x = device_alloc(size), y = device_alloc(size);
    CUDA_CHECK(kernels::fill_random(x.get(), size / 4, kernels::Element::F32, 5, stream_->get()));
    Sample proto;
    proto.kind = SampleKind::Elementwise;
    proto.data_type = "fp32";
    proto.bytes = bytes;
    return timed(proto, r, [&] {
      CUDA_CHECK(kernels::axpb(static_cast<const float*>(x.get()), static_cast<float*>(y.get()), size / 4, 1.5f, 0.25f,
                               stream_->get()));
    });
  }

  std::vector<Sample> empty_kernels(int batches, int per_batch) override {
    for (int i = 0; i < 100; ++i) CUDA_CHECK(kernels::empty(stream_->get()));
    stream_->synchronize();
    recorder_->collect();
    std::vector<std::pair<std::uint64_t, std::pair<int, int>>> ids;
    for (int b = 0; b < batches; ++b) {
      for (int i = 0; i < per_batch; ++i) {
        ids.push_back({recorder_->begin(), {b, i}});
        CUDA_CHECK(kernels::empty(stream_->get()));
        recorder_->end();
      }
      stream_->synchronize(); // batches start from an idle GPU, like a step after a synchronisation
    }
    const auto intervals = recorder_->collect();
    std::vector<Sample> samples;
    for (const auto& [id, where] : ids) {
      Sample s;
      s.kind = SampleKind::EmptyKernel;
      s.batch = where.first;
      s.repeat = where.second;
      fill_times(s, intervals, id);
      samples.push_back(std::move(s));
    }
    return samples;
  }

  std::vector<Sample> host_copy(bool to_device, bool pinned, std::int64_t bytes, const Repeats& r) override {
    const auto size = static_cast<std::size_t>(bytes);
    const DevicePtr device = device_alloc(size);
    PinnedPtr pinned_host;
    PageablePtr pageable_host;
    void* host = nullptr;
    if (pinned) {
      pinned_host = pinned_alloc(size);
      host = pinned_host.get();
      std::fill_n(static_cast<unsigned char*>(host), size, static_cast<unsigned char>(0x5a));
    } else {
      pageable_host = pageable_alloc(size);
      host = pageable_host.get();
    }
    Sample proto;
    proto.kind = to_device ? SampleKind::HostToDevice : SampleKind::DeviceToHost;
    proto.variant = pinned ? "pinned" : "pageable";
    proto.bytes = bytes;
    return timed(proto, r, [&] {
      if (to_device)
        CUDA_CHECK(cudaMemcpyAsync(device.get(), host, size, cudaMemcpyHostToDevice, stream_->get()));
      else
        CUDA_CHECK(cudaMemcpyAsync(host, device.get(), size, cudaMemcpyDeviceToHost, stream_->get()));
    });
  }

  int peer_devices() override {
    return device_count_;
  }

  std::vector<Sample> peer_copy(int from, int to, std::int64_t bytes, const Repeats& r) override {
    const auto size = static_cast<std::size_t>(bytes);
    enable_peer_access(from, to);
    CUDA_CHECK(cudaSetDevice(to));
    const DevicePtr destination = device_alloc(size);
    CUDA_CHECK(cudaSetDevice(from));
    const DevicePtr source = device_alloc(size);
    std::vector<Sample> samples;
    {
      const Stream stream; // on `from`
      Sample proto;
      proto.kind = SampleKind::PeerCopy;
      proto.bytes = bytes;
      proto.device = from;
      proto.peer = to;
      samples = timed(
          proto, r,
          [&] { CUDA_CHECK(cudaMemcpyPeerAsync(destination.get(), to, source.get(), from, size, stream.get())); },
          &stream);
    }
    CUDA_CHECK(cudaSetDevice(device_));
    return samples;
  }

  std::vector<Sample> collective(const std::string& name, int ranks, std::int64_t bytes, const Repeats& r) override {
#ifdef PARTSIM_CALIBRATE_HAVE_NCCL
    constexpr std::int64_t kMinCapacity = std::int64_t{1} << 30;
    if (!nccl_ || nccl_ranks_ != ranks || nccl_capacity_ < bytes) {
      nccl_.reset();
      nccl_capacity_ = std::max(bytes, kMinCapacity);
      nccl_ranks_ = ranks;
      nccl_ = std::make_unique<NcclCollectives>(ranks, static_cast<std::size_t>(nccl_capacity_));
    }
    std::vector<Sample> samples = nccl_->run(name, bytes, r, *recorder_);
    CUDA_CHECK(cudaSetDevice(device_));
    return samples;
#else
    (void)name, (void)ranks, (void)bytes, (void)r;
    throw std::runtime_error("built without NCCL (libnccl and nccl.h were not found at configure time)");
#endif
  }

  std::optional<PowerMeasurement> power(const GemmShape3& shape, const std::string& type, double seconds) override {
    const NvmlPower nvml(uuid_string(props_.uuid));
    if (!nvml.available()) throw std::runtime_error("NVML: " + nvml.problem());
    PowerMeasurement p;
    p.workload = fmt::format("{} GEMM {}x{}x{} in a loop", type, shape.m, shape.n, shape.k);
    p.limit_watts = nvml.limit_watts().value_or(0.0);
    p.max_sm_clock_mhz = nvml.max_sm_clock_mhz().value_or(0.0);
    std::vector<double> idle, busy, clocks;
    const auto idle_until = Clock::now() + std::chrono::duration<double>(std::min(seconds / 2.0, 3.0));
    while (Clock::now() < idle_until) {
      if (auto w = nvml.watts()) idle.push_back(*w);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    GemmRunner& runner = gemm_runner(std::max({shape.m, shape.n, shape.k}));
    runner.prepare(shape.m, shape.n, shape.k, type);
    p.shape = shape;
    p.data_type = type;
    // Batches of at least ~50 ms of GEMMs between host synchronisations, so the GPU stays loaded (a batch of 4 for
    // the size of one, then as many as the first batch's time per GEMM says).
    int batch = 4;
    std::vector<double> gemm_seconds;
    const auto start = Clock::now();
    const auto busy_from = start + std::chrono::duration<double>(seconds / 2.0); // let power and clocks settle
    const auto busy_until = start + std::chrono::duration<double>(seconds);
    bool sized = false;
    while (Clock::now() < busy_until) {
      const bool settled = Clock::now() >= busy_from;
      std::vector<std::uint64_t> ids;
      const auto batch_start = Clock::now();
      for (int i = 0; i < batch; ++i) {
        if (settled) ids.push_back(recorder_->begin());
        runner.run();
        if (settled) recorder_->end();
      }
      stream_->synchronize();
      if (!sized) {
        const double per_gemm = std::chrono::duration<double>(Clock::now() - batch_start).count() / batch;
        batch = static_cast<int>(std::clamp(std::ceil(0.05 / std::max(per_gemm, 1e-6)), 4.0, 4096.0));
        sized = true;
      }
      const auto intervals = recorder_->collect(); // also drops the unsettled half's records
      for (std::uint64_t id : ids)
        if (const auto it = intervals.find(id); it != intervals.end() && it->second.end > it->second.start)
          gemm_seconds.push_back(static_cast<double>(it->second.end - it->second.start) * 1e-9);
      if (settled) {
        if (auto w = nvml.watts()) busy.push_back(*w);
        if (auto mhz = nvml.sm_clock_mhz()) clocks.push_back(*mhz);
        if (auto capped = nvml.power_capped()) {
          ++p.reason_readings;
          if (*capped) ++p.power_capped_readings;
        }
      }
    }
    if (idle.empty() || busy.empty()) throw std::runtime_error("NVML: no power readings (nvmlDeviceGetPowerUsage)");
    p.idle_watts = summarize(idle);
    p.busy_watts = summarize(busy);
    if (!gemm_seconds.empty()) p.busy_gemm_seconds = summarize(gemm_seconds);
    if (!clocks.empty()) p.busy_sm_clock_mhz = summarize(clocks);
    return p;
  }

 private:
  GemmRunner& gemm_runner(std::int64_t largest_dimension) {
    constexpr std::int64_t kMinCapacity = 16384;
    if (!gemm_ || gemm_capacity_ < largest_dimension) {
      gemm_.reset();
      gemm_capacity_ = std::max(largest_dimension, kMinCapacity);
      gemm_ = std::make_unique<GemmRunner>(gemm_capacity_, gemm_capacity_, gemm_capacity_, stream_->get());
    }
    return *gemm_;
  }

  /** Half a second of large GEMMs first, so the first shapes are not timed at idle clocks. */
  void warm_clocks(GemmRunner& runner, const std::string& type) {
    runner.prepare(8192, 8192, 8192, type);
    const auto until = Clock::now() + std::chrono::milliseconds(500);
    while (Clock::now() < until) {
      for (int i = 0; i < 4; ++i) runner.run();
      stream_->synchronize();
    }
    recorder_->collect();
    clocks_warm_ = true;
  }

  void enable_peer_access(int from, int to) {
    for (const auto& [a, b] : {std::pair{from, to}, std::pair{to, from}}) {
      int can = 0;
      CUDA_CHECK(cudaDeviceCanAccessPeer(&can, a, b));
      if (!can) continue; // the copy still works, staged through the host
      CUDA_CHECK(cudaSetDevice(a));
      const cudaError_t e = cudaDeviceEnablePeerAccess(b, 0);
      if (e == cudaErrorPeerAccessAlreadyEnabled)
        cudaGetLastError(); // clear it
      else
        CUDA_CHECK(e);
    }
    CUDA_CHECK(cudaSetDevice(device_));
  }

  void fill_times(Sample& s, const std::map<std::uint64_t, ActivityInterval>& intervals, std::uint64_t id) const {
    const auto it = intervals.find(id);
    if (it == intervals.end())
      throw std::runtime_error(fmt::format("no CUPTI kernel or memcpy record for a {} measurement", to_string(s.kind)));
    s.label = it->second.names;
    s.start_ns = it->second.start;
    s.end_ns = it->second.end;
  }

  /** Warm-up runs, then `repeats` timed runs issued back to back, each under its own measurement id. */
  std::vector<Sample> timed(const Sample& proto, const Repeats& r, const std::function<void()>& op,
                            const Stream* stream = nullptr) {
    const Stream& s = stream != nullptr ? *stream : *stream_;
    for (int i = 0; i < r.warmup; ++i) op();
    s.synchronize();
    recorder_->collect();
    std::vector<std::uint64_t> ids;
    for (int i = 0; i < r.repeats; ++i) {
      ids.push_back(recorder_->begin());
      op();
      recorder_->end();
    }
    s.synchronize();
    const auto intervals = recorder_->collect();
    std::vector<Sample> samples;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      Sample sample = proto;
      sample.repeat = static_cast<int>(i);
      fill_times(sample, intervals, ids[i]);
      samples.push_back(std::move(sample));
    }
    return samples;
  }

  int device_ = 0;
  int device_count_ = 0;
  cudaDeviceProp props_{};
  std::unique_ptr<ActivityRecorder> recorder_;
  std::unique_ptr<Stream> stream_;
  std::unique_ptr<GemmRunner> gemm_;
  std::int64_t gemm_capacity_ = 0;
  bool clocks_warm_ = false;
#ifdef PARTSIM_CALIBRATE_HAVE_NCCL
  std::unique_ptr<NcclCollectives> nccl_;
  int nccl_ranks_ = 0;
  std::int64_t nccl_capacity_ = 0;
#endif
};

} // namespace

GpuAvailability probe_gpus() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess)
    return {0, fmt::format("no NVIDIA GPU/driver: cudaGetDeviceCount returned {} ({}: {})", static_cast<int>(e),
                           cudaGetErrorName(e), cudaGetErrorString(e))};
  if (count == 0) return {0, "no NVIDIA GPU/driver: cudaGetDeviceCount found no CUDA device"};
  return {count, ""};
}

std::unique_ptr<MeasurementBackend> make_cupti_backend(int device) {
  return std::make_unique<CuptiBackend>(device);
}

std::string cupti_backend_description() {
  const std::size_t lt = cublasLtGetVersion();
  std::string text =
      fmt::format("CUPTI activity API {}, cuBLASLt {}.{}.{}", cupti_version(), lt / 10000, lt / 100 % 100, lt % 100);
#ifdef PARTSIM_CALIBRATE_HAVE_NCCL
  text += ", " + NcclCollectives::version();
#endif
  return text;
}

} // namespace partsim::calibrate
