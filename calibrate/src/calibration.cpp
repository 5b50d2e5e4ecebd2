// Quick and full plans, driving a backend through a plan, and fitting every figure from the samples.
#include "partsim/calibrate/calibration.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <exception>

namespace partsim::calibrate {

namespace {

constexpr std::int64_t KiB = 1024;
constexpr std::int64_t MiB = 1024 * KiB;
constexpr std::int64_t GiB = 1024 * MiB;

std::vector<std::int64_t> geometric(std::int64_t from, std::int64_t to, std::int64_t factor) {
  std::vector<std::int64_t> sizes;
  for (std::int64_t s = from; s <= to; s *= factor) sizes.push_back(s);
  return sizes;
}

/** Runs `step`; a failure becomes a warning naming `what`, so one broken measurement does not lose the others. */
template <typename Step>
void guarded(CalibrationResult& result, const std::string& what, Step&& step) {
  try {
    step();
  } catch (const std::exception& e) {
    result.warnings.push_back(fmt::format("{}: {}", what, e.what()));
  }
}

void append(std::vector<Sample>& to, std::vector<Sample> from) {
  to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

} // namespace

CalibrationPlan quick_plan() {
  CalibrationPlan plan;
  plan.gemm_axes = {{128, 1024, 4096, 8192}, {128, 1024, 4096, 8192}, {128, 1024, 4096, 8192}};
  plan.gemm_data_types = {"bf16", "fp16", "tf32", "fp32", "fp8"};
  plan.memory_sizes = geometric(64 * KiB, 1 * GiB, 16);
  plan.host_copy_sizes = geometric(4 * KiB, 256 * MiB, 16);
  plan.peer_copy_sizes = geometric(4 * KiB, 256 * MiB, 16);
  plan.collective_sizes = geometric(64 * KiB, 256 * MiB, 16);
  plan.collectives = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"};
  plan.launch_batches = 3;
  plan.launches_per_batch = 100;
  plan.gemm_repeats = {2, 5};
  plan.transfer_repeats = {2, 5};
  plan.power_seconds = 3.0;
  return plan;
}

CalibrationPlan full_plan() {
  CalibrationPlan plan;
  const std::vector<std::int64_t> axis{16, 64, 256, 1024, 4096, 16384};
  plan.gemm_axes = {axis, axis, axis};
  plan.gemm_data_types = {"bf16", "fp16", "tf32", "fp32", "fp8"};
  plan.memory_sizes = geometric(4 * KiB, 4 * GiB, 4);
  plan.host_copy_sizes = geometric(4 * KiB, 1 * GiB, 4);
  plan.peer_copy_sizes = geometric(4 * KiB, 1 * GiB, 4);
  plan.collective_sizes = geometric(4 * KiB, 1 * GiB, 4);
  plan.collectives = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"};
  plan.launch_batches = 5;
  plan.launches_per_batch = 200;
  plan.gemm_repeats = {3, 10};
  plan.transfer_repeats = {3, 10};
  plan.power_seconds = 10.0;
  return plan;
}

CalibrationResult fit_samples(DeviceInfo device, std::vector<Sample> samples, std::optional<PowerMeasurement> power) {
  CalibrationResult result;
  result.device = std::move(device);
  result.samples = std::move(samples);
  result.power = std::move(power);
  const std::vector<Sample>& all = result.samples;
  guarded(result, "GEMM", [&] { result.gemm = fit_gemm(all); });
  if (auto copies = of_kind(all, SampleKind::DeviceCopy); !copies.empty())
    guarded(result, "device copy bandwidth", [&] { result.device_copy = fit_memory_bandwidth(copies); });
  if (auto kernels = of_kind(all, SampleKind::Elementwise); !kernels.empty())
    guarded(result, "elementwise kernel bandwidth", [&] { result.elementwise = fit_memory_bandwidth(kernels); });
  if (auto empty = of_kind(all, SampleKind::EmptyKernel); !empty.empty())
    guarded(result, "kernel launch overhead", [&] { result.launch = fit_launch_overhead(empty); });
  for (SampleKind kind : {SampleKind::HostToDevice, SampleKind::DeviceToHost, SampleKind::PeerCopy}) {
    const std::vector<Sample> copies = of_kind(all, kind);
    if (!copies.empty())
      guarded(result, std::string(to_string(kind)), [&] {
        for (LinkFit& fit : fit_links(copies)) result.links.push_back(std::move(fit));
      });
  }
  if (auto collectives = of_kind(all, SampleKind::Collective); !collectives.empty())
    guarded(result, "collectives", [&] { result.collectives = fit_collectives(collectives); });
  if (result.power && result.power->busy_gemm_seconds.count > 0) {
    const PowerMeasurement& p = *result.power;
    const auto grid = std::find_if(result.gemm.begin(), result.gemm.end(), [&](const GemmPoint& g) {
      return g.m == p.shape.m && g.n == p.shape.n && g.k == p.shape.k && g.data_type == p.data_type;
    });
    if (grid == result.gemm.end()) {
      result.warnings.push_back(fmt::format("sustained compute: the GEMM grid has no {} {}x{}x{} point to compare "
                                            "the power loop's GEMMs with; not written",
                                            p.data_type, p.shape.m, p.shape.n, p.shape.k));
    } else if (p.busy_gemm_seconds.median <= 0.0 || grid->seconds.median <= 0.0) {
      result.warnings.push_back(fmt::format("sustained compute: a {} {}x{}x{} GEMM timed at {:.3g} s in the power "
                                            "loop and {:.3g} s in the grid, not both positive; not written",
                                            p.data_type, p.shape.m, p.shape.n, p.shape.k, p.busy_gemm_seconds.median,
                                            grid->seconds.median));
    } else {
      SustainedComputeFit fit;
      fit.shape = p.shape;
      fit.data_type = p.data_type;
      fit.kernel_at_a_time_seconds = grid->seconds.median;
      fit.sustained_seconds = p.busy_gemm_seconds;
      fit.ratio = fit.kernel_at_a_time_seconds / p.busy_gemm_seconds.median;
      fit.clamped = fit.ratio > 1.0;
      fit.ratio = std::min(fit.ratio, 1.0);
      result.sustained_compute = fit;
    }
  }
  return result;
}

GemmShape3 power_gemm_shape(const GemmAxes& axes) {
  constexpr std::int64_t kLargest = 8192;
  std::optional<std::int64_t> best;
  for (std::int64_t d : axes.m) {
    const auto on = [d](const std::vector<std::int64_t>& axis) {
      return std::find(axis.begin(), axis.end(), d) != axis.end();
    };
    if (d <= kLargest && on(axes.n) && on(axes.k) && (!best || d > *best)) best = d;
  }
  const std::int64_t d = best.value_or(kLargest);
  return {d, d, d};
}

CalibrationResult run_calibration(MeasurementBackend& backend, const CalibrationPlan& plan,
                                  const ProgressFn& progress) {
  const auto say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  CalibrationResult failures; // warnings of failed measurements, merged into the fitted result
  std::vector<Sample> samples;
  const DeviceInfo device = backend.device_info();

  const std::vector<std::string> supported = backend.gemm_data_types();
  const std::vector<GemmShape3> shapes = grid_shapes(plan.gemm_axes);
  for (const std::string& type : plan.gemm_data_types) {
    if (std::find(supported.begin(), supported.end(), type) == supported.end()) {
      failures.warnings.push_back(fmt::format("GEMM {}: not supported on {}; skipped", type, device.name));
      continue;
    }
    say(fmt::format("GEMM {}: {} shapes", type, shapes.size()));
    guarded(failures, "GEMM " + type, [&] {
      for (const GemmShape3& shape : shapes) append(samples, backend.gemm(shape, type, plan.gemm_repeats));
    });
  }

  say(fmt::format("memory bandwidth: device copy and elementwise kernel, {} sizes", plan.memory_sizes.size()));
  guarded(failures, "device copy", [&] {
    for (std::int64_t bytes : plan.memory_sizes) append(samples, backend.device_copy(bytes, plan.transfer_repeats));
  });
  guarded(failures, "elementwise kernel", [&] {
    for (std::int64_t bytes : plan.memory_sizes) append(samples, backend.elementwise(bytes, plan.transfer_repeats));
  });

  say(fmt::format("kernel launch overhead: {} x {} empty kernels", plan.launch_batches, plan.launches_per_batch));
  guarded(failures, "empty kernels",
          [&] { append(samples, backend.empty_kernels(plan.launch_batches, plan.launches_per_batch)); });

  say(fmt::format("host copies: pinned and pageable, both directions, {} sizes", plan.host_copy_sizes.size()));
  for (bool to_device : {true, false})
    for (bool pinned : {true, false})
      guarded(failures, fmt::format("{} {} copy", pinned ? "pinned" : "pageable", to_device ? "H2D" : "D2H"), [&] {
        for (std::int64_t bytes : plan.host_copy_sizes)
          append(samples, backend.host_copy(to_device, pinned, bytes, plan.transfer_repeats));
      });

  const int peers = backend.peer_devices();
  if (peers >= 2) {
    say(fmt::format("peer copies and collectives over {} GPUs", peers));
    for (int other = 1; other < peers; ++other)
      for (const auto& [from, to] : {std::pair{0, other}, std::pair{other, 0}})
        guarded(failures, fmt::format("peer copy {} -> {}", from, to), [&] {
          for (std::int64_t bytes : plan.peer_copy_sizes)
            append(samples, backend.peer_copy(from, to, bytes, plan.transfer_repeats));
        });
    for (const std::string& name : plan.collectives)
      guarded(failures, "NCCL " + name, [&] {
        for (std::int64_t bytes : plan.collective_sizes)
          append(samples, backend.collective(name, peers, bytes, plan.transfer_repeats));
      });
  } else {
    say("one GPU: no peer copies or collectives");
  }

  std::optional<PowerMeasurement> power;
  if (plan.power_seconds > 0.0) {
    // bf16 where it runs, else the first type the grid measured (so the loop can be set against the grid), else
    // the first the GPU runs (power only).
    const auto runs = [&](const std::string& t) {
      return std::find(supported.begin(), supported.end(), t) != supported.end();
    };
    std::string type = runs("bf16") ? "bf16" : "";
    for (const std::string& t : plan.gemm_data_types)
      if (type.empty() && runs(t)) type = t;
    if (type.empty() && !supported.empty()) type = supported.front();
    if (!type.empty()) {
      const GemmShape3 shape = power_gemm_shape(plan.gemm_axes);
      say(fmt::format("power and sustained compute: idle, then {} {}x{}x{} GEMMs in a loop for {:g} s", type, shape.m,
                      shape.n, shape.k, plan.power_seconds));
      guarded(failures, "power", [&] { power = backend.power(shape, type, plan.power_seconds); });
    }
  }

  say(fmt::format("fitting {} samples", samples.size()));
  CalibrationResult result = fit_samples(device, std::move(samples), std::move(power));
  result.warnings.insert(result.warnings.begin(), failures.warnings.begin(), failures.warnings.end());
  return result;
}

} // namespace partsim::calibrate
