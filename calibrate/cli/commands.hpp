// The partsim-calibrate commands: measure (the default), refit of a raw samples CSV, import of a Kineto trace.
#pragma once

#include <cstdint>
#include <string>

namespace partsim::calibrate::cli {

/** Output files; empty: next to the profile (NAME.samples.csv, NAME.calibration.json, NAME-p2p.json). */
struct OutputOptions {
  std::string out; ///< the GPU profile; its stem is the profile's name
  std::string raw_csv;
  std::string summary;
  std::string link_out;
  std::string base; ///< the datasheet profile giving peak rates; empty: chosen by device name
};

struct MeasureOptions {
  OutputOptions output;
  bool quick = false;
  bool check = false; ///< only probe the GPU, CUPTI and the libraries, print the device, measure nothing
  int device = 0;
};

struct RefitOptions {
  OutputOptions output;
  std::string samples; ///< a raw samples CSV written by a measurement
};

struct KinetoOptions {
  std::string trace;
  std::string workload;         ///< a name under models/workloads, or a .json file
  std::int64_t micro_batch = 0; ///< 0: found from the trace
  std::int64_t sequence_length = 0;
  std::string base;
  std::string float_as = "fp32";
  std::string out;    ///< a GPU profile with the fitted curve; empty: none
  std::string report; ///< the JSON report; empty: none
};

/** Each returns the process exit code: 0 done, 1 no GPU or a measurement failed; InputError propagates (exit 2). */
int run_measure(const MeasureOptions& options);
int run_refit(const RefitOptions& options);
int run_import_kineto(const KinetoOptions& options);

/** Shared by the commands: "2026-12-01T10:00:00Z". */
std::string utc_now();

} // namespace partsim::calibrate::cli
