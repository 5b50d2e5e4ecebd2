// partsim-calibrate: measures this machine's GPUs through CUPTI and writes a partsim hardware profile; also refits
// raw samples and imports PyTorch profiler (Kineto) traces. Exit codes: 0 done, 1 no GPU or a measurement failed,
// 2 bad input.
#include "commands.hpp"

#include "partsim/common/error.hpp"
#include "partsim/common/exit_codes.hpp"
#include "partsim/common/output_file.hpp"
#include "partsim/common/text.hpp"
#include "partsim/version.hpp"

#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>
#include <stdexcept>

namespace cal = partsim::calibrate::cli;

namespace {

void add_output_options(CLI::App& app, cal::OutputOptions& o) {
  app.add_option("--out", o.out, "GPU profile to write (default h200-measured.json etc. from the base profile)");
  app.add_option("--raw-csv", o.raw_csv, "raw samples CSV (default: next to --out, NAME.samples.csv)");
  app.add_option("--summary", o.summary, "every fit as JSON (default: next to --out, NAME.calibration.json)");
  app.add_option("--link-out", o.link_out, "link profile from peer copies, with 2+ GPUs (default NAME-p2p.json)");
  app.add_option("--base", o.base,
                 "datasheet profile under models/hardware giving the peak rates (default: by "
                 "device name, e.g. h200-sxm-141gb for an NVIDIA H200)");
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"partsim-calibrate " PARTSIM_VERSION ": measure GEMMs, memory, launches, copies and collectives on this "
               "machine's GPUs (CUPTI activity records) and write a partsim hardware profile"};
  app.set_version_flag("--version", PARTSIM_VERSION);
  cal::MeasureOptions measure;
  add_output_options(app, measure.output);
  app.add_flag("--quick", measure.quick, "small grid: under a minute on one H100/H200 (full: under ten)");
  app.add_option("--device", measure.device, "CUDA device index to measure")->check(CLI::NonNegativeNumber);
  app.add_flag("--check", measure.check, "probe the GPU, CUPTI and libraries, print the device, measure nothing");

  cal::RefitOptions refit;
  CLI::App* refit_app = app.add_subcommand("refit", "fit a profile again from a raw samples CSV (no GPU needed)");
  refit_app->add_option("SAMPLES", refit.samples, "raw samples CSV written by a measurement")->required();
  add_output_options(*refit_app, refit.output);

  cal::KinetoOptions kineto;
  CLI::App* kineto_app =
      app.add_subcommand("import-kineto", "map a PyTorch profiler trace's GEMM times onto a workload model's ops");
  kineto_app->add_option("TRACE", kineto.trace, "Chrome trace from torch.profiler (record_shapes=True)")->required();
  kineto_app->add_option("--workload", kineto.workload, "transformer under models/workloads, or a .json file")
      ->required();
  kineto_app->add_option("--micro-batch", kineto.micro_batch, "sequences per step in the trace (default: found)")
      ->check(CLI::NonNegativeNumber);
  kineto_app->add_option("--sequence-length", kineto.sequence_length, "tokens per sequence if not the model's")
      ->check(CLI::NonNegativeNumber);
  kineto_app->add_option("--base", kineto.base, "GPU profile giving the peak rates (default: by the trace's device)");
  kineto_app->add_option("--float-as", kineto.float_as, "data type of float32 GEMMs: fp32, or tf32 if TF32 was on")
      ->check(CLI::IsMember({"fp32", "tf32"}));
  kineto_app->add_option("--out", kineto.out, "write a GPU profile with the GEMM curve fitted to the trace");
  kineto_app->add_option("--report", kineto.report, "write the per-op report as JSON");
  app.require_subcommand(0, 1);

  CLI11_PARSE(app, argc, argv);
  try {
    if (*refit_app) return cal::run_refit(refit);
    if (*kineto_app) return cal::run_import_kineto(kineto);
    return cal::run_measure(measure);
  } catch (const partsim::InputError& e) {
    std::cerr << "partsim-calibrate: error: " << e.what() << "\n";
    return partsim::kExitInputError;
  } catch (const std::invalid_argument& e) {
    // The fitting code refuses samples it cannot fit ("nothing was measured", "a fit needs two sizes"): samples come
    // from the user's files or from what the user asked to measure, so these are input errors.
    std::cerr << "partsim-calibrate: error: " << partsim::printable(e.what()) << "\n";
    return partsim::kExitInputError;
  } catch (const partsim::OutputError& e) {
    std::cerr << "partsim-calibrate: error: " << e.what() << "\n";
    return partsim::kExitOutputError;
  } catch (const std::exception& e) {
    std::cerr << "partsim-calibrate: error: " << partsim::printable(e.what()) << "\n";
    return partsim::kExitFailure;
  }
}
