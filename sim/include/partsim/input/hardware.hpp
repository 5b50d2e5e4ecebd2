// Hardware profiles: GPU figures (peak rate per data type, memory bandwidth and capacity, launch overhead, power,
// GEMM efficiency table), each with its provenance.
#pragma once

#include "partsim/common/enum_names.hpp"
#include "partsim/input/units.hpp"

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace partsim {

class JsonReader;
struct Bounds;

/** Where a figure came from: a datasheet (with its source), a measurement (device, driver, tool, date,
 * samples), an assumption (a stated reasoning in `note`, optionally a `source` it rests on), or the scenario itself
 * (an inline figure typed by the user). */
struct Provenance {
  std::string kind;                          ///< "datasheet", "measured", "assumption" or "scenario"
  std::map<std::string, std::string> fields; ///< source, note, device, driver, cuda, cupti, date, tool, samples, ...
};

/** One figure in SI units with its provenance. */
struct Figure {
  double value = 0.0;
  Provenance provenance;
};

/** Board power: the thermal design power (the most the board draws) and the power of an idle board. */
struct PowerFigures {
  Figure tdp;  ///< W
  Figure idle; ///< W, at most tdp
};

/** One measured or assumed GEMM efficiency: C[m,n] = A[m,k] · B[k,n] in `data_type` ran at `efficiency` x peak. */
struct GemmEfficiencyPoint {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::string data_type;
  double efficiency = 0.0; ///< achieved fraction of the dense peak, in (0, 1]
};

/** The efficiency points of one data type on a full grid: every (m, n, k) of the three axes has one value. */
struct GemmEfficiencyGrid {
  std::vector<std::int64_t> m;    ///< sorted, distinct
  std::vector<std::int64_t> n;    ///< sorted, distinct
  std::vector<std::int64_t> k;    ///< sorted, distinct
  std::vector<double> efficiency; ///< m.size() x n.size() x k.size(), k fastest

  double at(std::size_t im, std::size_t in, std::size_t ik) const {
    return efficiency[(im * n.size() + in) * k.size() + ik];
  }
};

/** A closed-form efficiency: saturated_efficiency[type] · Π over x in (m, n, k) of x / (x + half_dimension).
 * Prices data types the table has no points for, and is what a datasheet profile filled its table from. */
struct GemmEfficiencyCurve {
  double half_dimension = 0.0;                        ///< the dimension at which one factor is 1/2
  std::map<std::string, double> saturated_efficiency; ///< per data type, in (0, 1]; covers every peak data type
  Provenance provenance;
};

/** How a table's points are laid out ("layout" in the profile):
 * - `grid`: every (m, n, k) of three axes has one point (a benchmark sweep); read by trilinear interpolation;
 * - `scattered`: any shapes, such as the GEMMs timed inside real models; read by inverse-distance weighting of the
 *   nearest points. */
enum class GemmPointLayout : std::uint8_t { Grid, Scattered };

template <>
struct EnumNames<GemmPointLayout> {
  static constexpr std::array<EnumEntry<GemmPointLayout>, 2> entries{
      {{GemmPointLayout::Grid, "grid"}, {GemmPointLayout::Scattered, "scattered"}}};
};

/** The efficiency points of one data type at arbitrary shapes, in log space. */
struct GemmEfficiencyScatter {
  std::vector<std::array<double, 3>> log_shape; ///< (ln m, ln n, ln k) of each point
  std::vector<double> efficiency;               ///< of each point
  std::array<double, 3> log_min{};              ///< the smallest ln m, ln n, ln k of the points
  std::array<double, 3> log_max{};              ///< the largest
};

/** Achieved fraction of peak per GEMM shape: points (a full grid or scattered shapes, per data type) and the default
 * curve. */
struct GemmEfficiencyTable {
  Provenance provenance; ///< of the points
  GemmPointLayout layout = GemmPointLayout::Grid;
  std::vector<GemmEfficiencyPoint> points;               ///< as given in the profile
  std::map<std::string, GemmEfficiencyGrid> grids;       ///< grid layout: the points per data type, built by the parser
  std::map<std::string, GemmEfficiencyScatter> scatters; ///< scattered layout: the same
  GemmEfficiencyCurve default_curve;
};

/** One measured throughput of a fused attention kernel (FlashAttention): forward + backward of `sequence_length`
 * tokens at `head_dim`, causal or not, ran at `efficiency` x the dense peak of the profile's attention data type.
 * Counted as the FlashAttention benchmarks count it: forward 4·b·s²·heads·d flop (halved when causal), backward
 * 2.5x the forward (it recomputes the scores). */
struct AttentionEfficiencyPoint {
  std::int64_t sequence_length = 0;
  std::int64_t head_dim = 0;
  bool causal = true;
  double efficiency = 0.0; ///< achieved fraction of the dense peak, in (0, 1]
};

/** Measured fused-attention throughput per shape; `data_type` is the type it was measured in (bf16 or fp16). */
struct AttentionEfficiencyTable {
  Provenance provenance;
  std::string data_type;
  std::vector<AttentionEfficiencyPoint> points;
};

/** Kernel launch overhead assumed when a profile gives none (the same assumption as the shipped profiles). */
inline constexpr double kDefaultKernelLaunchOverhead = 3e-6;
/** Default GEMM efficiency curve for a profile without one: x / (x + 64) per dimension, saturating at 0.7. */
inline constexpr double kDefaultGemmHalfDimension = 64.0;
inline constexpr double kDefaultGemmSaturatedEfficiency = 0.7;

/** A GPU model as the simulator sees it. */
struct GpuProfile {
  std::string name;
  std::string description;
  std::map<std::string, Figure> peak_flops; ///< dense peak flop/s per data type ("bf16", "fp32", ...)
  Figure memory_bandwidth;                  ///< bytes/s
  /** Fraction of memory_bandwidth that memory-bound kernels reach (a stream benchmark's triad over the datasheet
   * figure); 1 with provenance "assumption" when the profile gives none. */
  Figure memory_efficiency;
  Figure memory_capacity; ///< bytes
  /** s added to every kernel; kDefaultKernelLaunchOverhead (provenance "assumption") when the profile gives none. */
  Figure kernel_launch_overhead;
  std::optional<PowerFigures> power; ///< absent when the profile gives none
  /** Streaming multiprocessors (compute units); absent when the profile gives none. What an overlapped collective
   * that holds some of them takes from a GEMM (tensor-parallel communication overlap). */
  std::optional<Figure> sm_count;
  /** Fraction of its kernel-at-a-time rate that tensor-core work keeps under a sustained load (a GEMM loop at the
   * board's power limit lowers the clock); multiplies the measured GEMM tables (grid, points) and the fused-attention
   * efficiency, both measured a kernel at a time, not the default curve (sustained loops' best: MAMF, or GEMMs traced
   * inside a training run). Absent: 1 (nothing lowered); `partsim-calibrate` measures it. */
  std::optional<Figure> sustained_compute;
  /** Always set: without `gemm_efficiency` in the profile, no points and the default curve (kDefaultGemm...). */
  GemmEfficiencyTable gemm_efficiency;
  /** Measured fused-attention throughput; absent: a fused attention kernel is priced as its two batched products at
   * the GEMM efficiency of their shapes (see cost_model.hpp). */
  std::optional<AttentionEfficiencyTable> attention_efficiency;
  /** Measured throughput of the Triton FlashAttention kernel (the `flash_triton` attention); absent: that kernel is
   * priced from attention_efficiency. */
  std::optional<AttentionEfficiencyTable> attention_efficiency_triton;
  /** Bytes/s that memory-bound kernels reach: memory_bandwidth x memory_efficiency. */
  double achieved_memory_bandwidth() const { return memory_bandwidth.value * memory_efficiency.value; }
  /** The factor on the GEMM and attention efficiencies: sustained_compute, or 1 when the profile gives none. */
  double sustained_compute_factor() const { return sustained_compute ? sustained_compute->value : 1.0; }

  /** Peak flop/s for a data type. @throws std::out_of_range when the profile has no figure for it. */
  double peak(const std::string& data_type) const { return peak_flops.at(data_type).value; }
};

/** Current version of the hardware profile format. */
inline constexpr int kHardwareSchemaVersion = 1;

/** A numeric type: its size, and whether training keeps weights, gradients and activations in it. */
struct DataTypeInfo {
  std::string name;
  double element_bytes;
  bool trainable; ///< false for int8 and fp4: inference formats, no training stack keeps its state in them
};

/** The one table of data types (fp64, fp32, tf32, bf16, fp16, fp8, int8, fp4); nullptr for an unknown name. */
const DataTypeInfo* find_data_type(const std::string& name);

/** Data types a profile may list peak rates for (every type of the table). */
const std::vector<std::string>& known_data_types();

/** Data types model training can run in (the table's trainable ones). */
const std::vector<std::string>& training_data_types();

/** Reads a provenance object: {"kind": "datasheet", "source", "note"?}, {"kind": "measured", "device", "date",
 * "tool", ...} or {"kind": "assumption", "note", "source"?}. */
Provenance parse_provenance(JsonReader reader);

/** Reads a profile figure {"value": QUANTITY, "provenance": {...}} with `value` in `bounds`. */
Figure parse_figure(JsonReader reader, Dimension dimension, const Bounds& bounds);

/** Reads a dimensionless profile figure {"value": NUMBER, "provenance": {...}} (an efficiency) with `value` in
 * `bounds`. */
Figure parse_fraction_figure(JsonReader reader, const Bounds& bounds);
/** {"value": V, "provenance": {...}}: a figure as profile files and reports write it. */
nlohmann::json to_json(const Figure& figure);

/** Reads a GPU profile object (a file's root, or an inline `cluster/gpu` object). */
GpuProfile parse_gpu_profile(JsonReader& reader);

/** An inline `cluster/gpu` object {"base": NAME, FIGURE: VALUE, ...}: the profile NAME of `DIR/models/hardware` with
 * the figures given beside it replaced as an inline profile reads them (bare values, provenance `scenario`):
 * sustained_compute, memory_efficiency, memory_capacity, kernel_launch_overhead. A what-if on a shipped or calibrated
 * profile without copying its tables. @throws InputError at the pointer of any other key, or when none is given. */
GpuProfile parse_gpu_profile_over_base(JsonReader& reader, const std::filesystem::path& data_dir);

/** Loads `DIR/models/hardware/NAME.json`. @throws InputError naming `source`/`pointer` when absent. */
GpuProfile load_gpu_profile(const std::filesystem::path& data_dir, const std::string& name, const std::string& source,
                            const std::string& pointer);

/** Names of the GPU profiles under `DIR/models/hardware`, sorted. */
std::vector<std::string> list_gpu_profiles(const std::filesystem::path& data_dir);

/** Serialises a profile back to JSON (for reports: the run says which figures it used). */
nlohmann::json to_json(const GpuProfile& profile);

} // namespace partsim
