// import-kineto: a PyTorch profiler trace's GEMMs mapped onto a transformer workload, printed as a table, optionally
// written as a JSON report and as a GPU profile with the GEMM curve fitted to the trace.
#include "commands.hpp"

#include "partsim/calibrate/kineto_import.hpp"
#include "partsim/calibrate/profile_writer.hpp"
#include "partsim/common/error.hpp"
#include "partsim/common/output_file.hpp"
#include "partsim/input/data_dir.hpp"
#include "partsim/input/json_file.hpp"
#include "partsim/input/json_reader.hpp"
#include "partsim/input/workload_library.hpp"
#include "partsim/version.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

namespace partsim::calibrate::cli {

namespace fs = std::filesystem;

namespace {

WorkloadSpec load_spec(const std::string& workload) {
  if (workload.ends_with(".json") || workload.find('/') != std::string::npos) {
    const nlohmann::json doc = read_json_file(workload);
    JsonReader reader(doc, workload);
    return parse_workload_spec(reader);
  }
  return load_workload(data_dir(), workload, "--workload", "");
}

void write_json(const std::string& path, const nlohmann::ordered_json& doc) {
  write_file_atomically(path, doc.dump(2) + "\n");
}

} // namespace

int run_import_kineto(const KinetoOptions& o) {
  const KinetoTrace trace = read_kineto_trace(fs::path(o.trace));
  const WorkloadSpec spec = load_spec(o.workload);
  if (!spec.is_transformer())
    throw InputError("--workload", "",
                     fmt::format("\"{}\" is a CNN; import-kineto maps transformer workloads", spec.name));
  TransformerConfig config = std::get<TransformerConfig>(spec.config);
  if (o.sequence_length > 0) config.sequence_length = o.sequence_length;
  // Attention as batched GEMMs (not one fused kernel), so that a trace's score and value products find their op.
  const TransformerModel model(config, kMegatronLm2021Kernels);
  const std::string base_name = !o.base.empty() ? o.base : base_profile_for(trace.device_name);
  if (base_name.empty())
    throw InputError("--base", "",
                     fmt::format("the trace's device \"{}\" matches no shipped GPU profile; expected --base "
                                 "NAME",
                                 trace.device_name));
  const GpuProfile base = load_gpu_profile(data_dir(), base_name, "--base", "");
  const KinetoImport r = import_kineto(trace, spec.name, model, o.micro_batch, base, o.float_as);

  fmt::print(
      "{} on {}: {} kernels, {:.3f} ms of GPU time; GEMMs {:.3f} ms, {:.3f} ms mapped onto {} at micro-batch {}\n",
      o.trace, trace.device_name.empty() ? "an unnamed device" : trace.device_name, r.kernels, r.kernel_seconds * 1e3,
      r.gemm_seconds * 1e3, r.matched_seconds * 1e3, spec.name, r.micro_batch);
  fmt::print("{:<24} {:<16} {:>26} {:<5} {:>5} {:>11} {:>9} {:>7} {:>11}\n", "model op", "pass", "batch x m x n x k",
             "type", "count", "median us", "TFLOP/s", "eff", "partsim us");
  for (const OpMatch& m : r.matched)
    fmt::print("{:<24} {:<16} {:>26} {:<5} {:>5} {:>11.2f} {:>9.1f} {:>7.3f} {:>11.2f}\n", m.model_op,
               to_string(m.pass), fmt::format("{}x{}x{}x{}", m.shape.batch, m.shape.m, m.shape.n, m.shape.k),
               m.data_type, m.seconds.count, m.seconds.median * 1e6, m.flops_per_second / 1e12, m.efficiency,
               m.predicted_seconds * 1e6);
  if (!r.unmatched.empty())
    fmt::print("{} traced GEMM(s) match no product of {} (listed in --report)\n", r.unmatched.size(), spec.name);
  if (r.gemm_kernels_without_shape > 0)
    fmt::print("{} GEMM-like kernel(s) belong to ops without recorded shapes (profile with record_shapes=True)\n",
               r.gemm_kernels_without_shape);
  if (!o.report.empty()) write_json(o.report, kineto_report(r, trace));
  if (!o.out.empty()) {
    const std::string name = fs::path(o.out).stem().string();
    const auto profile = kineto_profile(r, trace, base, name, utc_now(),
                                        fmt::format("partsim-calibrate {} import-kineto", PARTSIM_VERSION));
    const nlohmann::json doc = nlohmann::json::parse(profile.dump());
    JsonReader reader(doc, o.out);
    parse_gpu_profile(reader); // partsim must accept what it is given
    write_json(o.out, profile);
    fmt::print(stderr, "wrote {}\n", o.out);
  }
  return 0;
}

} // namespace partsim::calibrate::cli
