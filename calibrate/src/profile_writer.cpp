// Measured GPU and link profiles in partsim's formats, and the summary of every fit.
#include "partsim/calibrate/profile_writer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>

namespace partsim::calibrate {

using ordered_json = nlohmann::ordered_json;

namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

/** Four significant digits are plenty for a spread. */
double rounded(double value, int digits = 4) {
  if (value == 0.0 || !std::isfinite(value)) return value;
  const double scale = std::pow(10.0, digits - 1 - static_cast<int>(std::floor(std::log10(std::fabs(value)))));
  return std::round(value * scale) / scale;
}

ordered_json provenance_json(const Provenance& p) {
  ordered_json out = {{"kind", p.kind}};
  for (const auto& [key, value] : p.fields) out[key] = value;
  return out;
}

ordered_json figure_json(const Figure& f) {
  return {{"value", f.value}, {"provenance", provenance_json(f.provenance)}};
}

ordered_json figure_json(double value, ordered_json provenance) {
  return {{"value", value}, {"provenance", std::move(provenance)}};
}

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 4) {
    bytes /= 1024.0;
    ++u;
  }
  return fmt::format("{:g} {}", bytes, units[u]);
}

ordered_json summary_json(const Summary& s) {
  return {{"count", s.count}, {"min", s.min}, {"q1", s.q1},     {"median", s.median},
          {"q3", s.q3},       {"max", s.max}, {"mean", s.mean}, {"relative_spread", rounded(s.relative_spread())}};
}

ordered_json line_json(const LatencyBandwidthFit& fit) {
  ordered_json points = ordered_json::array();
  for (const SizePoint& p : fit.points)
    points.push_back({{"bytes", p.bytes},
                      {"seconds", summary_json(p.seconds)},
                      {"achieved_bandwidth", static_cast<double>(p.bytes) / p.seconds.median}});
  return {{"latency_s", fit.latency}, {"bandwidth_Bps", fit.bandwidth}, {"r_squared", fit.r_squared},
          {"samples", fit.samples},   {"spread", rounded(fit.spread)},  {"points", points}};
}

std::string size_range(const LatencyBandwidthFit& fit) {
  return fmt::format("{} sizes from {} to {}", fit.points.size(),
                     human_bytes(static_cast<double>(fit.points.front().bytes)),
                     human_bytes(static_cast<double>(fit.points.back().bytes)));
}

std::map<std::string, double> peak_values(const GpuProfile& base) {
  std::map<std::string, double> peaks;
  for (const auto& [type, figure] : base.peak_flops) peaks[type] = figure.value;
  return peaks;
}

/** The better of the two memory-bound measurements (the higher fitted bandwidth), with a note naming both. */
std::optional<ordered_json> memory_bandwidth_figure(const CalibrationResult& r, const ProfileOptions& options) {
  const MemoryBandwidthFit* best = nullptr;
  std::string best_name, other;
  for (const auto& [fit, name] : {std::pair{&r.device_copy, "device-to-device copy (cudaMemcpyAsync)"},
                                  std::pair{&r.elementwise, "elementwise kernel (y = a*x + b, fp32)"}}) {
    if (!fit->has_value()) continue;
    if (best == nullptr || (*fit)->line.bandwidth > best->line.bandwidth) {
      if (best != nullptr) other = fmt::format("; the {} reached {:.4g} B/s", best_name, best->line.bandwidth);
      best = &**fit;
      best_name = name;
    } else {
      other = fmt::format("; the {} reached {:.4g} B/s", name, (*fit)->line.bandwidth);
    }
  }
  if (best == nullptr) return std::nullopt;
  const std::string note = fmt::format(
      "bytes read + written per second of the {}: slope of t = a + traffic / B fitted by least squares weighted by "
      "1/t^2 over {} (a = {:.3g} s, R^2 = {:.4f}); best single size {:.4g} B/s at {}{}",
      best_name, size_range(best->line), best->line.latency, best->line.r_squared, best->best_achieved,
      human_bytes(static_cast<double>(best->best_bytes)), other);
  return figure_json(best->line.bandwidth,
                     measured_provenance(r.device, options, best->line.samples, best->line.spread, note));
}

/** The base profile's figures that no calibration measures, as partsim itself writes them (to_json of the profile):
 * the streaming multiprocessors (what an overlapped collective takes from a GEMM) and the fused-attention tables of
 * the CUDA and the Triton kernels. Without them a written profile would price attention as its products and refuse
 * tensor-parallel overlap. */
void copy_unmeasured_figures(const GpuProfile& base, ordered_json& out) {
  const nlohmann::json written = to_json(base);
  for (const char* key : {"sm_count", "attention_efficiency", "attention_efficiency_triton"})
    if (written.contains(key)) out[key] = ordered_json(written.at(key));
}

} // namespace

std::string base_profile_for(const std::string& device_name) {
  const std::string name = lower(device_name);
  const std::pair<const char*, const char*> known[] = {{"h200", "h200-sxm-141gb"}, {"h100", "h100-sxm5-80gb"},
                                                       {"a100", "a100-sxm4-80gb"}, {"b200", "b200"},
                                                       {"l40s", "l40s"},           {"mi300x", "mi300x"}};
  for (const auto& [key, profile] : known)
    if (name.find(key) != std::string::npos) return profile;
  return "";
}

ordered_json profile_file_json(const GpuProfile& gpu) {
  ordered_json out;
  out["schema_version"] = kHardwareSchemaVersion;
  out["kind"] = "gpu";
  out["name"] = gpu.name;
  out["description"] = gpu.description;
  ordered_json peaks = ordered_json::object();
  for (const std::string& type : known_data_types())
    if (gpu.peak_flops.contains(type)) peaks[type] = figure_json(gpu.peak_flops.at(type));
  out["peak_flops"] = peaks;
  out["memory_bandwidth"] = figure_json(gpu.memory_bandwidth);
  out["memory_capacity"] = figure_json(gpu.memory_capacity);
  out["kernel_launch_overhead"] = figure_json(gpu.kernel_launch_overhead);
  if (gpu.power) out["power"] = {{"tdp", figure_json(gpu.power->tdp)}, {"idle", figure_json(gpu.power->idle)}};
  if (gpu.sustained_compute) out["sustained_compute"] = figure_json(*gpu.sustained_compute);
  out["memory_efficiency"] = figure_json(gpu.memory_efficiency);
  copy_unmeasured_figures(gpu, out);
  const GemmEfficiencyTable& t = gpu.gemm_efficiency;
  ordered_json points = ordered_json::array();
  for (const GemmEfficiencyPoint& p : t.points)
    points.push_back({{"m", p.m}, {"n", p.n}, {"k", p.k}, {"data_type", p.data_type}, {"efficiency", p.efficiency}});
  out["gemm_efficiency"] = {{"provenance", provenance_json(t.provenance)},
                            {"layout", enum_name(t.layout)},
                            {"default_curve",
                             {{"half_dimension", t.default_curve.half_dimension},
                              {"saturated_efficiency", t.default_curve.saturated_efficiency},
                              {"provenance", provenance_json(t.default_curve.provenance)}}},
                            {"points", points}};
  return out;
}

ordered_json measured_provenance(const DeviceInfo& device, const ProfileOptions& options, std::size_t samples,
                                 double spread, const std::string& note) {
  ordered_json p = {{"kind", "measured"}, {"device", device.name}};
  if (!device.uuid.empty()) p["uuid"] = device.uuid;
  if (!device.driver.empty()) p["driver"] = device.driver;
  if (!device.cuda.empty()) p["cuda"] = device.cuda;
  if (!device.cupti.empty()) p["cupti"] = device.cupti;
  p["date"] = options.date;
  p["tool"] = options.tool;
  p["samples"] = samples;
  p["spread"] = rounded(spread);
  if (!note.empty()) p["note"] = note;
  return p;
}

ordered_json measured_gpu_profile(const CalibrationResult& r, const GpuProfile& base, const ProfileOptions& options) {
  ordered_json out;
  out["schema_version"] = kHardwareSchemaVersion;
  out["kind"] = "gpu";
  out["name"] = options.name;
  out["description"] = !options.description.empty()
                           ? options.description
                           : fmt::format("{} measured by {} on {}; peak rates from the {} profile", r.device.name,
                                         options.tool, options.date, base.name);
  ordered_json peaks = ordered_json::object();
  for (const std::string& type : known_data_types())
    if (base.peak_flops.contains(type)) peaks[type] = figure_json(base.peak_flops.at(type));
  out["peak_flops"] = peaks;

  bool measured_any = false;
  if (auto bandwidth = memory_bandwidth_figure(r, options)) {
    out["memory_bandwidth"] = *bandwidth;
    measured_any = true;
  } else {
    // The datasheet figure and the fraction of it that memory-bound kernels reach, both the base's; a measured
    // bandwidth is the achieved one already.
    out["memory_bandwidth"] = figure_json(base.memory_bandwidth);
    out["memory_efficiency"] = figure_json(base.memory_efficiency);
  }
  if (r.device.memory_bytes > 0)
    out["memory_capacity"] = figure_json(
        static_cast<double>(r.device.memory_bytes),
        measured_provenance(r.device, options, 1, 0.0, "total device memory (cudaDeviceProp::totalGlobalMem)"));
  else
    out["memory_capacity"] = figure_json(base.memory_capacity);

  if (r.launch) {
    const std::string note = fmt::format(
        "median interval between the GPU start times of consecutive empty kernels launched back to back on one stream "
        "({} kernels): the time each kernel adds when it does no work. An empty kernel itself runs {:.3g} s (median)",
        r.launch->samples, r.launch->duration.median);
    out["kernel_launch_overhead"] =
        figure_json(r.launch->interval.median, measured_provenance(r.device, options, r.launch->interval.count,
                                                                   r.launch->interval.relative_spread(), note));
    measured_any = true;
  } else {
    out["kernel_launch_overhead"] = figure_json(base.kernel_launch_overhead);
  }

  if (r.power && r.power->limit_watts > 0.0 && r.power->idle_watts.median <= r.power->limit_watts) {
    const PowerMeasurement& p = *r.power;
    out["power"] = {
        {"tdp",
         figure_json(p.limit_watts,
                     measured_provenance(
                         r.device, options, 1, 0.0,
                         "enforced board power limit reported by NVML; the "
                         "board drew " +
                             fmt::format("{:.4g} W (median) during {}{}", p.busy_watts.median, p.workload,
                                         p.busy_sm_clock_mhz.count > 0 ? ", " + sm_clock_text(p) : std::string())))},
        {"idle", figure_json(p.idle_watts.median,
                             measured_provenance(r.device, options, p.idle_watts.count, p.idle_watts.relative_spread(),
                                                 "median board power reported by NVML with no work on the GPU"))}};
    measured_any = true;
  } else if (base.power) {
    out["power"] = {{"tdp", figure_json(base.power->tdp)}, {"idle", figure_json(base.power->idle)}};
  }

  if (const auto& s = r.sustained_compute) {
    std::string note = fmt::format(
        "{} GEMM {}x{}x{}: median GPU time {:.4g} s issued a kernel at a time (the GEMM grid's repeats), {:.4g} s "
        "(median of {}) in the settled second half of a loop that keeps the GPU busy{}: the fraction of its rate that "
        "tensor-core work keeps under a sustained load; multiplies this profile's measured GEMM table and attention "
        "efficiency, not its default curve",
        s->data_type, s->shape.m, s->shape.n, s->shape.k, s->kernel_at_a_time_seconds, s->sustained_seconds.median,
        s->sustained_seconds.count,
        r.power && r.power->limit_watts > 0.0
            ? fmt::format(" (board at {:.4g} W of its {:.4g} W limit{})", r.power->busy_watts.median,
                          r.power->limit_watts,
                          r.power->busy_sm_clock_mhz.count > 0 ? ", " + sm_clock_text(*r.power) : std::string())
            : std::string());
    if (s->clamped) note += "; the loop ran faster than the grid, so 1 is written";
    out["sustained_compute"] = figure_json(s->ratio, measured_provenance(r.device, options, s->sustained_seconds.count,
                                                                         s->sustained_seconds.relative_spread(), note));
    measured_any = true;
  } else if (base.sustained_compute) {
    out["sustained_compute"] = figure_json(*base.sustained_compute);
  }
  copy_unmeasured_figures(base, out);

  const EfficiencyTable table = efficiency_table(r.gemm, peak_values(base));
  if (table.points.empty()) {
    if (!measured_any) throw std::invalid_argument("nothing was measured: no figure of the profile could be written");
    out["gemm_efficiency"] = profile_file_json(base)["gemm_efficiency"];
    return out;
  }

  std::vector<std::string> types;
  for (const GemmEfficiencyPoint& p : table.points)
    if (std::find(types.begin(), types.end(), p.data_type) == types.end()) types.push_back(p.data_type);
  const double h = base.gemm_efficiency.default_curve.half_dimension;
  const CurveFit curve = fit_efficiency_curve(table.points, h);
  std::map<std::string, double> saturated = base.gemm_efficiency.default_curve.saturated_efficiency;
  std::vector<std::string> kept;
  for (const auto& [type, s] : saturated)
    if (!curve.saturated_efficiency.contains(type)) kept.push_back(type);
  for (const auto& [type, s] : curve.saturated_efficiency) saturated[type] = s;

  std::string note = fmt::format(
      "achieved flop/s (2mnk / median GPU time of the library call, CUPTI kernel records) over the peak rate of the "
      "{} profile, on the full grid of each of {}; inputs uniform random in [-1, 1]. Spread: median over points of "
      "IQR / median time (largest {:.3g})",
      base.name, fmt::join(types, ", "), table.max_spread);
  if (!table.clamped.empty()) note += fmt::format(". Above the peak, clamped to 1: {}", fmt::join(table.clamped, "; "));
  if (!table.dropped_types.empty()) note += fmt::format(". Not written: {}", fmt::join(table.dropped_types, "; "));
  const std::string curve_note = fmt::format(
      "saturated efficiency of {} fitted by least squares to the measured points at the half dimension {:g} of the {} "
      "profile (rms residual {:.3g}){}",
      fmt::join(types, ", "), h, base.name, curve.rms_residual,
      kept.empty() ? std::string()
                   : fmt::format("; {} not measured, kept from the {} profile ({})", fmt::join(kept, ", "), base.name,
                                 base.gemm_efficiency.default_curve.provenance.kind));
  ordered_json points = ordered_json::array();
  for (const GemmEfficiencyPoint& p : table.points)
    points.push_back({{"m", p.m}, {"n", p.n}, {"k", p.k}, {"data_type", p.data_type}, {"efficiency", p.efficiency}});
  out["gemm_efficiency"] = {
      {"provenance", measured_provenance(r.device, options, table.samples, table.spread, note)},
      {"default_curve",
       {{"half_dimension", h},
        {"saturated_efficiency", saturated},
        {"provenance", measured_provenance(r.device, options, table.samples, table.spread, curve_note)}}},
      {"points", points}};
  return out;
}

ordered_json measured_link_profile(const CalibrationResult& r, const ProfileOptions& options) {
  const LinkFit* fit = nullptr;
  for (const LinkFit& l : r.links)
    if (l.kind == SampleKind::PeerCopy &&
        (fit == nullptr || std::pair{l.device, l.peer} < std::pair{fit->device, fit->peer}))
      fit = &l;
  if (fit == nullptr) throw std::invalid_argument("no peer copies were measured (one GPU): no link profile");
  const std::string note = fmt::format(
      "t = latency + bytes / bandwidth fitted by least squares weighted by 1/t^2 to the median GPU times of "
      "cudaMemcpyPeerAsync from GPU {} to GPU {} over {} (R^2 = {:.4f}); one direction of one GPU pair",
      fit->device, fit->peer, size_range(fit->line), fit->line.r_squared);
  ordered_json provenance = measured_provenance(r.device, options, fit->line.samples, fit->line.spread, note);
  return {{"schema_version", kLinkSchemaVersion},
          {"kind", "link"},
          {"name", options.name},
          {"description", !options.description.empty()
                              ? options.description
                              : fmt::format("GPU-to-GPU copies between two {} measured by {} on {}", r.device.name,
                                            options.tool, options.date)},
          {"scope", "intra_node"},
          {"bandwidth_per", "gpu"},
          {"bandwidth", figure_json(fit->line.bandwidth, provenance)},
          {"latency", figure_json(fit->line.latency, provenance)}};
}

ordered_json calibration_summary(const CalibrationResult& r, const ProfileOptions& options) {
  ordered_json out;
  out["schema"] = "partsim.calibration";
  out["version"] = 1;
  out["device"] = {{"name", r.device.name},
                   {"uuid", r.device.uuid},
                   {"driver", r.device.driver},
                   {"cuda", r.device.cuda},
                   {"cupti", r.device.cupti},
                   {"compute_capability", r.device.compute_capability},
                   {"memory_bytes", r.device.memory_bytes},
                   {"multiprocessors", r.device.multiprocessors},
                   {"device_count", r.device.device_count},
                   {"index", r.device.index}};
  out["date"] = options.date;
  out["tool"] = options.tool;
  out["samples"] = r.samples.size();
  ordered_json gemm = ordered_json::array();
  for (const GemmPoint& p : r.gemm)
    gemm.push_back({{"data_type", p.data_type},
                    {"m", p.m},
                    {"n", p.n},
                    {"k", p.k},
                    {"seconds", summary_json(p.seconds)},
                    {"flops_per_second", p.flops_per_second}});
  out["gemm"] = gemm;
  for (const auto& [fit, key] : {std::pair{&r.device_copy, "device_copy"}, std::pair{&r.elementwise, "elementwise"}})
    if (fit->has_value())
      out[key] = {{"line_over_bytes_read_and_written", line_json((*fit)->line)},
                  {"best_achieved_Bps", (*fit)->best_achieved},
                  {"best_bytes", (*fit)->best_bytes}};
  if (r.launch)
    out["launch_overhead"] = {{"interval_s", summary_json(r.launch->interval)},
                              {"empty_kernel_s", summary_json(r.launch->duration)}};
  ordered_json links = ordered_json::array();
  for (const LinkFit& l : r.links)
    links.push_back({{"kind", std::string(to_string(l.kind))},
                     {"variant", l.variant},
                     {"device", l.device},
                     {"peer", l.peer},
                     {"fit", line_json(l.line)}});
  out["links"] = links;
  ordered_json collectives = ordered_json::array();
  for (const CollectiveFit& c : r.collectives) {
    ordered_json points = ordered_json::array();
    for (const CollectivePoint& p : c.points)
      points.push_back({{"bytes", p.bytes},
                        {"seconds", summary_json(p.seconds)},
                        {"algbw_Bps", p.algorithm_bandwidth},
                        {"busbw_Bps", p.bus_bandwidth}});
    ordered_json entry = {{"collective", c.collective}, {"ranks", c.ranks}, {"points", points}};
    if (!c.line.points.empty()) entry["line_over_bus_bytes"] = line_json(c.line);
    collectives.push_back(entry);
  }
  out["collectives"] = collectives;
  if (r.power)
    out["power"] = {{"idle_W", summary_json(r.power->idle_watts)},
                    {"busy_W", summary_json(r.power->busy_watts)},
                    {"limit_W", r.power->limit_watts},
                    {"workload", r.power->workload}};
  if (r.power && r.power->busy_sm_clock_mhz.count > 0)
    out["power"]["busy_sm_clock_MHz"] = summary_json(r.power->busy_sm_clock_mhz);
  if (r.power && r.power->max_sm_clock_mhz > 0.0) out["power"]["max_sm_clock_MHz"] = r.power->max_sm_clock_mhz;
  if (r.power && r.power->reason_readings > 0)
    out["power"]["power_capped_readings"] = {{"capped", r.power->power_capped_readings},
                                             {"of", r.power->reason_readings}};
  if (const auto& s = r.sustained_compute)
    out["sustained_compute"] = {{"data_type", s->data_type},
                                {"m", s->shape.m},
                                {"n", s->shape.n},
                                {"k", s->shape.k},
                                {"kernel_at_a_time_s", s->kernel_at_a_time_seconds},
                                {"sustained_s", summary_json(s->sustained_seconds)},
                                {"ratio", s->ratio},
                                {"clamped", s->clamped}};
  out["warnings"] = r.warnings;
  return out;
}

std::string sm_clock_text(const PowerMeasurement& power) {
  if (power.busy_sm_clock_mhz.count == 0) return "";
  std::string text =
      fmt::format("SM clock {:.0f} MHz (median of {})", power.busy_sm_clock_mhz.median, power.busy_sm_clock_mhz.count);
  if (power.max_sm_clock_mhz > 0.0)
    text += fmt::format(" of its {:.0f} MHz maximum, {:.3f}", power.max_sm_clock_mhz,
                        power.busy_sm_clock_mhz.median / power.max_sm_clock_mhz);
  if (power.reason_readings > 0)
    text += fmt::format("; the power cap held the clock at {} of {} readings", power.power_capped_readings,
                        power.reason_readings);
  return text;
}

} // namespace partsim::calibrate
