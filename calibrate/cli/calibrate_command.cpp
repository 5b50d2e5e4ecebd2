// The measurement command and the refit of raw samples: both end in the same files (profile, raw samples, summary,
// link profile) and the same short table on stdout.
#include "commands.hpp"

#include "partsim/calibrate/profile_writer.hpp"
#include "partsim/calibrate/samples_csv.hpp"
#include "partsim/common/error.hpp"
#include "partsim/common/output_file.hpp"
#include "partsim/input/data_dir.hpp"
#include "partsim/input/json_reader.hpp"
#include "partsim/input/link_profile.hpp"
#include "partsim/version.hpp"

#ifdef PARTSIM_CALIBRATE_HAVE_CUPTI
#include "cupti_backend.hpp"
#endif

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <optional>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace partsim::calibrate::cli {

namespace fs = std::filesystem;

std::string utc_now() {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::chrono::system_clock::now()));
}

namespace {

/** Output paths: the profile's stem names everything else. */
struct Paths {
  fs::path profile, raw_csv, summary, link;
  std::string name;
};

Paths resolve_paths(const OutputOptions& o, const std::string& base) {
  Paths p;
  const std::string family = base.substr(0, base.find('-'));
  p.profile = !o.out.empty() ? fs::path(o.out) : fs::path((family.empty() ? "gpu" : family) + "-measured.json");
  p.name = p.profile.stem().string();
  const fs::path dir = p.profile.parent_path();
  p.raw_csv = !o.raw_csv.empty() ? fs::path(o.raw_csv) : dir / (p.name + ".samples.csv");
  p.summary = !o.summary.empty() ? fs::path(o.summary) : dir / (p.name + ".calibration.json");
  p.link = !o.link_out.empty() ? fs::path(o.link_out) : dir / (p.name + "-p2p.json");
  return p;
}

std::string choose_base(const std::string& requested, const std::string& device_name) {
  if (!requested.empty()) return requested;
  const std::string base = base_profile_for(device_name);
  if (base.empty())
    throw InputError("--base", "",
                     fmt::format("no shipped GPU profile matches \"{}\"; expected --base NAME, one of {}", device_name,
                                 fmt::join(list_gpu_profiles(data_dir()), ", ")));
  return base;
}

void write_text(const fs::path& path, const std::string& text) {
  if (!path.parent_path().empty()) create_output_dir(path.parent_path());
  write_file_atomically(path, text);
}

/** A profile that partsim would refuse is a bug here: check with partsim's own parsers before writing. */
void check_parses(const nlohmann::ordered_json& profile, const fs::path& path, bool link) {
  const nlohmann::json doc = nlohmann::json::parse(profile.dump());
  JsonReader reader(doc, path.string());
  try {
    if (link)
      parse_link_profile(reader);
    else
      parse_gpu_profile(reader);
  } catch (const InputError& e) {
    throw std::runtime_error(
        fmt::format("the profile written does not parse (a bug in partsim-calibrate): {}", e.what()));
  }
}

void print_table(const CalibrationResult& r) {
  fmt::print("  device                           {} ({} SMs, compute {}, {:.1f} GiB)\n", r.device.name,
             r.device.multiprocessors, r.device.compute_capability, r.device.memory_bytes / 1073741824.0);
  std::map<std::string, const GemmPoint*> best;
  for (const GemmPoint& p : r.gemm)
    if (!best[p.data_type] || p.flops_per_second > best[p.data_type]->flops_per_second) best[p.data_type] = &p;
  for (const auto& [type, p] : best)
    fmt::print("  best GEMM {:<5}                  {:.1f} TFLOP/s at {}x{}x{}\n", type, p->flops_per_second / 1e12,
               p->m, p->n, p->k);
  for (const auto& [fit, name] : {std::pair{&r.device_copy, "device copy"}, std::pair{&r.elementwise, "elementwise"}})
    if (fit->has_value())
      fmt::print("  {:<12} (read + written)     {:.3f} TB/s fitted, {:.3f} TB/s best at {} MiB\n", name,
                 (*fit)->line.bandwidth / 1e12, (*fit)->best_achieved / 1e12, (*fit)->best_bytes >> 20);
  if (r.launch)
    fmt::print("  kernel launch overhead           {:.2f} us (empty kernel {:.2f} us)\n",
               r.launch->interval.median * 1e6, r.launch->duration.median * 1e6);
  for (const LinkFit& l : r.links)
    fmt::print("  {:<32} {:.2f} GB/s, latency {:.2f} us\n",
               l.kind == SampleKind::PeerCopy ? fmt::format("peer copy {} -> {}", l.device, l.peer)
                                              : fmt::format("{} {}", to_string(l.kind), l.variant),
               l.line.bandwidth / 1e9, l.line.latency * 1e6);
  for (const CollectiveFit& c : r.collectives)
    if (!c.points.empty())
      fmt::print("  NCCL {:<14} x{:<2}            busbw {:.1f} GB/s at {} MiB\n", c.collective, c.ranks,
                 c.points.back().bus_bandwidth / 1e9, c.points.back().bytes >> 20);
  if (r.power)
    fmt::print("  power                            idle {:.0f} W, GEMM {:.0f} W, limit {:.0f} W{}\n",
               r.power->idle_watts.median, r.power->busy_watts.median, r.power->limit_watts,
               r.power->busy_sm_clock_mhz.count > 0 ? "; " + sm_clock_text(*r.power) : std::string());
  if (const auto& s = r.sustained_compute)
    fmt::print("  sustained compute                {:.3f} of the kernel-at-a-time rate ({} {}x{}x{} in a loop)\n",
               s->ratio, s->data_type, s->shape.m, s->shape.n, s->shape.k);
  for (const std::string& w : r.warnings) fmt::print("  warning: {}\n", w);
}

int write_outputs(const CalibrationResult& r, const OutputOptions& o, bool write_samples) {
  const std::string base_name = choose_base(o.base, r.device.name);
  const GpuProfile base = load_gpu_profile(data_dir(), base_name, "--base", "");
  const Paths paths = resolve_paths(o, base_name);
  const ProfileOptions options{paths.name, "", r.device.date, r.device.tool};
  // The raw samples first: they are the measurement, whole on their own, and a refit can start from them.
  if (write_samples) {
    if (!paths.raw_csv.parent_path().empty()) create_output_dir(paths.raw_csv.parent_path());
    write_samples_csv(paths.raw_csv, r.device, r.samples);
    fmt::print(stderr, "wrote {} ({} samples)\n", paths.raw_csv.string(), r.samples.size());
  }
  // The rest is derived and checked before its first file is written: samples that cannot be fitted leave no
  // partial set behind.
  const std::string summary = calibration_summary(r, options).dump(2) + "\n";
  const nlohmann::ordered_json profile = measured_gpu_profile(r, base, options);
  check_parses(profile, paths.profile, false);
  std::optional<nlohmann::ordered_json> link;
  ProfileOptions link_options = options;
  if (std::any_of(r.links.begin(), r.links.end(), [](const LinkFit& l) { return l.kind == SampleKind::PeerCopy; })) {
    link_options.name = paths.link.stem().string();
    link = measured_link_profile(r, link_options);
    check_parses(*link, paths.link, true);
  }
  write_text(paths.summary, summary);
  fmt::print(stderr, "wrote {}\n", paths.summary.string());
  write_text(paths.profile, profile.dump(2) + "\n");
  fmt::print(stderr, "wrote {} (peak rates from {})\n", paths.profile.string(), base_name);
  if (link) {
    write_text(paths.link, link->dump(2) + "\n");
    fmt::print(stderr, "wrote {}\n", paths.link.string());
  }
  print_table(r);
  return 0;
}

} // namespace

int run_measure(const MeasureOptions& options) {
#ifdef PARTSIM_CALIBRATE_HAVE_CUPTI
  const GpuAvailability gpus = probe_gpus();
  if (gpus.devices == 0) {
    std::cerr << "partsim-calibrate: " << gpus.problem << "\n";
    return 1;
  }
  if (options.device >= gpus.devices)
    throw InputError("--device", "",
                     fmt::format("expected a CUDA device index below {}, got {}", gpus.devices, options.device));
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  std::unique_ptr<MeasurementBackend> backend = make_cupti_backend(options.device);
  DeviceInfo device = backend->device_info();
  device.date = utc_now();
  device.tool = fmt::format("partsim-calibrate {} ({})", PARTSIM_VERSION, cupti_backend_description());
  if (options.check) {
    fmt::print("{}: {} GPU(s); measuring device {}: {} (compute {}, {} SMs, {:.1f} GiB), driver {}, CUDA {}, {}\n",
               "partsim-calibrate", gpus.devices, options.device, device.name, device.compute_capability,
               device.multiprocessors, device.memory_bytes / 1073741824.0, device.driver, device.cuda, device.tool);
    fmt::print("GEMM data types: {}\n", fmt::join(backend->gemm_data_types(), ", "));
    return 0;
  }
  choose_base(options.output.base, device.name); // refuse an unknown GPU before measuring for minutes
  const CalibrationPlan plan = options.quick ? quick_plan() : full_plan();
  CalibrationResult result = run_calibration(
      *backend, plan, [&](const std::string& line) { fmt::print(stderr, "[{:6.1f} s] {}\n", elapsed(), line); });
  result.device.date = device.date;
  result.device.tool = device.tool;
  result.device.driver = device.driver;
  fmt::print(stderr, "[{:6.1f} s] measured\n", elapsed());
  return write_outputs(result, options.output, true);
#else
  (void)options;
  std::cerr << "partsim-calibrate: built without CUDA (the CUDA toolkit or nvcc was not found at configure time): it "
               "cannot measure; refit and import-kineto work\n";
  return 1;
#endif
}

int run_refit(const RefitOptions& options) {
  SampleFile file = read_samples_csv(fs::path(options.samples));
  if (file.device.date.empty()) file.device.date = utc_now();
  file.device.tool =
      fmt::format("partsim-calibrate {} refit of {}{}", PARTSIM_VERSION, fs::path(options.samples).filename().string(),
                  file.device.tool.empty() ? "" : " (measured with " + file.device.tool + ")");
  const CalibrationResult result = fit_samples(file.device, std::move(file.samples));
  OutputOptions output = options.output;
  if (output.raw_csv.empty()) output.raw_csv = options.samples; // not rewritten
  return write_outputs(result, output, false);
}

} // namespace partsim::calibrate::cli
