// Calibration from a PyTorch profiler (Kineto) trace: GPU kernel times of a real training step, tied to the aten ops
// that launched them (External id), GEMM shapes from the recorded input shapes, mapped onto the workload model's ops.
#pragma once

#include "partsim/calibrate/fits.hpp"
#include "partsim/input/hardware.hpp"
#include "partsim/model/compute_op.hpp"
#include "partsim/model/transformer.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace partsim::calibrate {

/** One GPU kernel of the trace (an event with ph "X" and cat "kernel"). */
struct TraceKernel {
  std::string name;
  double start_us = 0.0;
  double duration_us = 0.0;
  std::int64_t external_id = -1; ///< args "External id": the CPU op that launched it; -1 when absent
  int device = 0;
};

/** One CPU op (cat "cpu_op") with the shapes and types the profiler recorded (record_shapes=True). */
struct TraceOp {
  std::string name; ///< "aten::mm", "aten::addmm", ...
  std::int64_t external_id = -1;
  std::vector<std::vector<std::int64_t>> input_dims; ///< args "Input Dims"
  std::vector<std::string> input_types;              ///< args "Input type"
};

/** The parts of a Chrome trace the import uses. */
struct KinetoTrace {
  std::string source;
  std::string device_name; ///< deviceProperties[0].name, when present
  std::vector<TraceKernel> kernels;
  std::map<std::int64_t, TraceOp> ops; ///< by External id
};

/** Reads {"traceEvents": [...], "deviceProperties": [...]}. @throws InputError naming the JSON pointer. */
KinetoTrace read_kineto_trace(const nlohmann::json& doc, const std::string& source);
KinetoTrace read_kineto_trace(const std::filesystem::path& path);

/** (batch, m, n, k) of a matrix-product op from its recorded input shapes: aten::mm, addmm, bmm, baddbmm, matmul,
 * linear (the leading dimensions of a linear or 2-D-weight matmul input fold into m). Nothing for other ops. */
std::optional<GemmShape> gemm_shape(const TraceOp& op);

/** partsim's data type for recorded input types: c10::BFloat16 → bf16, c10::Half → fp16, float → `float_as`
 * ("fp32", or "tf32" when the run allowed TF32), c10::Float8_e4m3fn → fp8. Empty when unknown. */
std::string data_type_of(const TraceOp& op, const std::string& float_as = "fp32");

/** True for kernel names of cuBLAS/CUTLASS matrix products (gemm, xmma, cutlass, nvjet, ...). */
bool looks_like_gemm_kernel(const std::string& name);

/** One GEMM op instance of the trace: its shape, type and GPU time (the sum of its kernels). */
struct TracedGemm {
  std::string op;
  GemmShape shape;
  std::string data_type;
  double seconds = 0.0;
  std::int64_t external_id = -1;
};
std::vector<TracedGemm> traced_gemms(const KinetoTrace& trace, const std::string& float_as = "fp32");

/** Which product of a model op a traced GEMM is (cost_model.hpp: dX = dY·Wᵀ is (m, k, n), dW = Xᵀ·dY is (k, n, m)). */
enum class Pass { Forward, InputGradient, WeightGradient };
std::string_view to_string(Pass pass);

/** The traced instances of one product of one model op. */
struct OpMatch {
  std::string model_op; ///< "qkv_projection", "logits", ...
  Pass pass = Pass::Forward;
  GemmShape shape;  ///< of the product
  std::string also; ///< other model products of the same shape, which these instances may also be
  std::string data_type;
  Summary seconds; ///< per instance (GPU time)
  double flops_per_second = 0.0;
  double efficiency = 0.0;        ///< achieved over the base profile's peak
  double predicted_seconds = 0.0; ///< partsim's cost model on the base profile, launch overhead included
};

struct KinetoImport {
  std::string workload;
  std::int64_t micro_batch = 0;
  std::vector<OpMatch> matched;
  std::vector<TracedGemm> unmatched;          ///< GEMMs whose shape is no product of the model
  std::size_t kernels = 0;                    ///< every GPU kernel of the trace
  std::size_t gemm_kernels_without_shape = 0; ///< GEMM-like kernels whose op recorded no shapes
  double kernel_seconds = 0.0;                ///< GPU time of every kernel
  double gemm_seconds = 0.0;                  ///< GPU time of the traced GEMMs
  double matched_seconds = 0.0;               ///< GPU time of the matched GEMMs
  std::vector<GemmEfficiencyPoint> points;    ///< one per distinct (type, m, n, k) over all traced GEMMs
  std::size_t samples = 0;
  double spread = 0.0; ///< median relative spread over points with more than one instance
};

/** Maps the trace's GEMMs onto `model` at `micro_batch` sequences (0: the micro-batch under 1024 whose shapes cover
 * the most GEMM time) and prices them on `base`. @throws InputError when the trace has no GEMM with shapes. */
KinetoImport import_kineto(const KinetoTrace& trace, const std::string& workload, const TransformerModel& model,
                           std::int64_t micro_batch, const GpuProfile& base, const std::string& float_as = "fp32");

/** The import as JSON (per-op table, unmatched shapes, totals). */
nlohmann::ordered_json kineto_report(const KinetoImport& import, const KinetoTrace& trace);

/** `base` with the GEMM efficiency of the traced data types measured: their table points are removed (a trace holds
 * no full grid) and the default curve's saturated efficiency for them is fitted to the traced points at the base's
 * half dimension, with `measured` provenance (device from the trace, tool "partsim-calibrate import-kineto"). */
nlohmann::ordered_json kineto_profile(const KinetoImport& import, const KinetoTrace& trace, const GpuProfile& base,
                                      const std::string& name, const std::string& date, const std::string& tool);

} // namespace partsim::calibrate
