// Op cost model: GEMM efficiency lookup (grid interpolation or curve) and the roofline time of an op.
#include "partsim/model/cost_model.hpp"

#include "partsim/common/error.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

namespace partsim {

namespace {

/** Where x falls on an axis: the two grid indices around it and the log-space fraction t from lo to hi. */
struct Bracket {
  std::size_t lo = 0;
  std::size_t hi = 0;
  double t = 0.0;
};

Bracket bracket(const std::vector<std::int64_t>& axis, double x) {
  const std::size_t last = axis.size() - 1;
  if (x <= static_cast<double>(axis.front())) return {0, 0, 0.0};
  if (x >= static_cast<double>(axis.back())) return {last, last, 0.0};
  // axis[lo] <= x < axis[hi]
  const auto it = std::upper_bound(axis.begin(), axis.end(), x, [](double value, std::int64_t element) {
    return value < static_cast<double>(element);
  });
  const std::size_t hi = static_cast<std::size_t>(it - axis.begin());
  const std::size_t lo = hi - 1;
  const double x0 = std::log(static_cast<double>(axis[lo]));
  const double x1 = std::log(static_cast<double>(axis[hi]));
  return {lo, hi, (std::log(x) - x0) / (x1 - x0)};
}

double interpolate(const GemmEfficiencyGrid& grid, double m, double n, double k) {
  const Bracket bm = bracket(grid.m, m);
  const Bracket bn = bracket(grid.n, n);
  const Bracket bk = bracket(grid.k, k);
  double sum = 0.0;
  for (int cm = 0; cm < 2; ++cm)
    for (int cn = 0; cn < 2; ++cn)
      for (int ck = 0; ck < 2; ++ck) {
        const double weight = (cm ? bm.t : 1.0 - bm.t) * (cn ? bn.t : 1.0 - bn.t) * (ck ? bk.t : 1.0 - bk.t);
        if (weight == 0.0) continue;
        sum += weight * grid.at(cm ? bm.hi : bm.lo, cn ? bn.hi : bn.lo, ck ? bk.hi : bk.lo);
      }
  return sum;
}

double rows(const GemmShape& shape) {
  return static_cast<double>(std::max<std::int64_t>(shape.batch, 1)) * static_cast<double>(shape.m);
}

/** Fp32 vector rate for the flops of ops that do not run on tensor cores. */
double vector_rate(const GpuProfile& gpu, const std::string& data_type) {
  const auto fp32 = gpu.peak_flops.find("fp32");
  return fp32 != gpu.peak_flops.end() ? fp32->second.value : gpu.peak(data_type);
}

/** Points weighed for a shape between scattered measurements. */
constexpr std::size_t kScatterNeighbours = 8;

double inverse_distance_weighted(const GemmEfficiencyScatter& scatter, const std::array<double, 3>& x) {
  // Squared distances in log space to every point; an exact match is its own value.
  std::vector<std::pair<double, double>> nearest; // (d², efficiency)
  nearest.reserve(scatter.efficiency.size());
  for (std::size_t i = 0; i < scatter.efficiency.size(); ++i) {
    double d2 = 0.0;
    for (std::size_t a = 0; a < 3; ++a) d2 += (scatter.log_shape[i][a] - x[a]) * (scatter.log_shape[i][a] - x[a]);
    if (d2 < 1e-18) return scatter.efficiency[i];
    nearest.emplace_back(d2, scatter.efficiency[i]);
  }
  const std::size_t count = std::min(kScatterNeighbours, nearest.size());
  std::partial_sort(nearest.begin(), nearest.begin() + static_cast<std::ptrdiff_t>(count), nearest.end());
  double weights = 0.0;
  double sum = 0.0;
  for (std::size_t i = 0; i < count; ++i) {
    weights += 1.0 / nearest[i].first;
    sum += nearest[i].second / nearest[i].first;
  }
  return sum / weights;
}

/** Below the smallest measured value of an axis, the factor x / (x + h) of the default curve relative to the edge:
 * fewer tiles along that dimension keep fewer tensor cores busy; the measured edge sets the level. 1 inside. */
double below_edge_factor(double half_dimension, double x, double edge) {
  return x >= edge ? 1.0 : (x / (x + half_dimension)) / (edge / (edge + half_dimension));
}

} // namespace

double curve_efficiency(const GemmEfficiencyCurve& curve, const GemmShape& shape, const std::string& data_type) {
  const auto saturated = curve.saturated_efficiency.find(data_type);
  PARTSIM_CHECK(saturated != curve.saturated_efficiency.end()) << "no GEMM efficiency curve for " << data_type;
  double efficiency = saturated->second;
  for (double x : {rows(shape), static_cast<double>(shape.n), static_cast<double>(shape.k)}) {
    x = std::max(x, 1.0);
    efficiency *= x / (x + curve.half_dimension);
  }
  return efficiency;
}

namespace {

/** Whether the profile measured GEMMs of `data_type` (grid or scattered points). */
bool measured(const GemmEfficiencyTable& table, const std::string& data_type) {
  return table.grids.contains(data_type) || table.scatters.contains(data_type);
}

/** gemm_efficiency of a measured table (grid or scattered points), as it was measured: a kernel at a time, before
 * the sustained-compute factor; nullopt when the profile measured no GEMM that prices `data_type`. */
std::optional<double> table_efficiency(const GpuProfile& gpu, const GemmShape& shape, const std::string& data_type) {
  const GemmEfficiencyTable& table = gpu.gemm_efficiency;
  // FP8 without fp8 measurements, on a GPU whose fp8 peak is twice its bf16 one: the measured bf16 efficiency of the
  // same rows and columns at half the depth (see gemm_efficiency).
  if (data_type == "fp8" && !measured(table, "fp8") && measured(table, "bf16") && gpu.peak_flops.contains("bf16") &&
      std::abs(gpu.peak("fp8") - 2.0 * gpu.peak("bf16")) <= 1e-9 * gpu.peak("fp8"))
    return table_efficiency(gpu, {shape.batch, shape.m, shape.n, (shape.k + 1) / 2, shape.row_groups}, "bf16");
  const std::array<double, 3> x{std::max(rows(shape), 1.0), std::max(static_cast<double>(shape.n), 1.0),
                                std::max(static_cast<double>(shape.k), 1.0)};
  const double h = table.default_curve.half_dimension;
  if (const auto grid = table.grids.find(data_type); grid != table.grids.end()) {
    const GemmEfficiencyGrid& g = grid->second;
    double factor = 1.0;
    const std::array<const std::vector<std::int64_t>*, 3> axes{&g.m, &g.n, &g.k};
    for (std::size_t a = 0; a < 3; ++a) factor *= below_edge_factor(h, x[a], static_cast<double>(axes[a]->front()));
    return factor * interpolate(g, x[0], x[1], x[2]);
  }
  if (const auto scatter = table.scatters.find(data_type); scatter != table.scatters.end()) {
    const GemmEfficiencyScatter& s = scatter->second;
    std::array<double, 3> log_x{};
    double factor = 1.0;
    for (std::size_t a = 0; a < 3; ++a) {
      factor *= below_edge_factor(h, x[a], std::exp(s.log_min[a]));
      log_x[a] = std::clamp(std::log(x[a]), s.log_min[a], s.log_max[a]);
    }
    return factor * inverse_distance_weighted(s, log_x);
  }
  return std::nullopt;
}

} // namespace

double gemm_efficiency(const GpuProfile& gpu, const GemmShape& shape, const std::string& data_type) {
  PARTSIM_CHECK(gpu.peak_flops.contains(data_type)) << "GPU profile " << gpu.name << " has no peak for " << data_type;
  // A measured table ran a kernel at a time: lowered to what a sustained load keeps. The default curve is not: its
  // saturated efficiency is MAMF's best of sustained loops (every shipped profile's curve cites it).
  if (const std::optional<double> measured_rate = table_efficiency(gpu, shape, data_type))
    return gpu.sustained_compute_factor() * *measured_rate;
  return curve_efficiency(gpu.gemm_efficiency.default_curve, shape, data_type);
}

double kernel_time(const GpuProfile& gpu, double flops, double rate, double bytes) {
  PARTSIM_CHECK(rate > 0.0 && flops >= 0.0 && bytes >= 0.0)
      << "flops " << flops << " rate " << rate << " bytes " << bytes;
  return std::max(flops / rate, bytes / gpu.achieved_memory_bandwidth()) + gpu.kernel_launch_overhead.value;
}

double attention_efficiency(const AttentionEfficiencyTable& table, const AttentionShape& shape) {
  // The points of the kernel's causality (all of them when the table has none), then those of the nearest head
  // dimension (in log space), then linear in ln(sequence length) between the two around it, the edge value outside.
  std::vector<const AttentionEfficiencyPoint*> same;
  for (const AttentionEfficiencyPoint& p : table.points)
    if (p.causal == shape.causal) same.push_back(&p);
  if (same.empty())
    for (const AttentionEfficiencyPoint& p : table.points) same.push_back(&p);
  PARTSIM_CHECK(!same.empty()) << "attention efficiency table without points";
  const double d = std::log(static_cast<double>(std::max<std::int64_t>(shape.head_dim, 1)));
  std::int64_t nearest = same.front()->head_dim;
  for (const AttentionEfficiencyPoint* p : same)
    if (std::abs(std::log(static_cast<double>(p->head_dim)) - d) < std::abs(std::log(static_cast<double>(nearest)) - d))
      nearest = p->head_dim;
  std::vector<std::pair<double, double>> curve; // (ln s, efficiency)
  for (const AttentionEfficiencyPoint* p : same)
    if (p->head_dim == nearest) curve.emplace_back(std::log(static_cast<double>(p->sequence_length)), p->efficiency);
  std::sort(curve.begin(), curve.end());
  const double x = std::log(static_cast<double>(std::max<std::int64_t>(shape.efficiency_length(), 1)));
  if (x <= curve.front().first) return curve.front().second;
  if (x >= curve.back().first) return curve.back().second;
  const auto hi = std::upper_bound(curve.begin(), curve.end(), std::make_pair(x, 2.0));
  const auto lo = hi - 1;
  const double f = (x - lo->first) / (hi->first - lo->first);
  return lo->second + f * (hi->second - lo->second);
}

namespace {

/** The Triton kernel's products over its head tile against the head's own: flash_attn_triton.py (Tri Dao's, and
 * MPT's copy of it) tiles the head dimension as BLOCK_HEADDIM = max(next_power_of_2(d), 16), its padding masked on
 * load but multiplied, so a head of 112 runs the products of 128; 1 for a power of two. */
double triton_head_tile_share(const AttentionShape& a) {
  auto tile = [](std::int64_t d) {
    return static_cast<double>(
        std::max<std::uint64_t>(std::bit_ceil(static_cast<std::uint64_t>(std::max<std::int64_t>(d, 1))), 16));
  };
  return (tile(a.head_dim) + tile(a.values())) / static_cast<double>(a.head_dim + a.values());
}

} // namespace

double attention_time(const ComputeOp& op, const GpuProfile& gpu, const std::string& data_type,
                      double bytes_per_element, bool backward) {
  PARTSIM_CHECK(op.attention.has_value()) << "attention op " << op.name << " without a shape";
  const AttentionShape& a = *op.attention;
  // The forward's products as the kernel runs them (a Triton kernel over its padded head tile).
  const double all = a.executed_forward_flops() * (a.triton ? triton_head_tile_share(a) : 1.0);
  const double executed = all * (backward ? kAttentionBackwardWork : 1.0);
  const double bytes = backward ? op.backward_bytes(bytes_per_element) : op.forward_bytes(bytes_per_element);
  const double peak = gpu.peak(data_type);
  const auto& table =
      a.triton && gpu.attention_efficiency_triton ? gpu.attention_efficiency_triton : gpu.attention_efficiency;
  if (table && gpu.peak(table->data_type) == peak) // measured at this data type's rate (bf16 and fp16 share one)
    return kernel_time(gpu, executed, peak * gpu.sustained_compute_factor() * attention_efficiency(*table, a), bytes);
  // No measurement: the kernel's products at the GEMM efficiency of their shapes, one launch. Forward: the scores
  // (s x s x d) and the product with V (s x d x s); backward: the scores again, then dV, dP, dQ and dK.
  // A banded kernel's products reach over its window's key tiles only: keys min(s, 2w) (see efficiency_length).
  const std::int64_t keys = a.banded() ? std::min(a.sequence_length, 2 * a.window) : a.sequence_length;
  const GemmShape scores{a.batch_heads, a.query_block(), keys, a.head_dim};
  const GemmShape values{a.batch_heads, a.query_block(), a.values(), keys};
  // Forward: each product's flops in proportion to its head dimension (d for the scores, d_v for V). Backward: five
  // products, two of the scores' shape (the scores again and dP) and three of the values' (dV, dQ, dK), each a fifth
  // of kAttentionBackwardWork x the forward's flops.
  const double scores_share = static_cast<double>(a.head_dim) / static_cast<double>(a.head_dim + a.values());
  const double e_scores = gemm_efficiency(gpu, scores, data_type);
  const double e_values = gemm_efficiency(gpu, values, data_type);
  const double compute = backward ? kAttentionBackwardWork * all * (0.4 / e_scores + 0.6 / e_values) / peak
                                  : all * (scores_share / e_scores + (1.0 - scores_share) / e_values) / peak;
  return std::max(compute, bytes / gpu.achieved_memory_bandwidth()) + gpu.kernel_launch_overhead.value;
}

namespace {

/** The data type an op's products run in: fp8 for an FP8 GEMM (ComputeOp::fp8), else the training's. */
const std::string& product_type(const ComputeOp& op, const std::string& data_type) {
  static const std::string fp8 = "fp8";
  return op.fp8 ? fp8 : data_type;
}

} // namespace

double op_time(const ComputeOp& op, const GpuProfile& gpu, const std::string& training_type, double bytes_per_element,
               bool backward) {
  const std::string& data_type = product_type(op, training_type);
  PARTSIM_CHECK(gpu.peak_flops.contains(data_type)) << "GPU profile " << gpu.name << " has no peak for " << data_type;
  const double flops = backward ? op.backward_flops : op.forward_flops;
  const double bytes = backward ? op.backward_bytes(bytes_per_element) : op.forward_bytes(bytes_per_element);
  if (flops == 0.0 && bytes == 0.0) return 0.0;
  if (op.kind == OpKind::Attention) return attention_time(op, gpu, data_type, bytes_per_element, backward);
  if (op.kind != OpKind::Gemm) return kernel_time(gpu, flops, vector_rate(gpu, data_type), bytes);

  PARTSIM_CHECK(op.gemm.has_value()) << "GEMM op " << op.name << " without a shape";
  const GemmShape& s = *op.gemm;
  const double peak = gpu.peak(data_type);
  if (!backward) return kernel_time(gpu, flops, peak * gemm_efficiency(gpu, s, data_type), bytes);
  const GemmBackwardTimes parts = gemm_backward_times(op, gpu, training_type, bytes_per_element);
  return parts.input_gradient + parts.weight_gradient;
}

GemmBackwardTimes gemm_backward_times(const ComputeOp& op, const GpuProfile& gpu, const std::string& training_type,
                                      double bytes_per_element) {
  PARTSIM_CHECK(op.kind == OpKind::Gemm && op.gemm.has_value()) << "op " << op.name << " is not a GEMM";
  const std::string& data_type = product_type(op, training_type);
  PARTSIM_CHECK(gpu.peak_flops.contains(data_type)) << "GPU profile " << gpu.name << " has no peak for " << data_type;
  GemmBackwardTimes parts;
  const double flops = op.backward_flops;
  const double bytes = op.backward_bytes(bytes_per_element);
  if (flops == 0.0 && bytes == 0.0) return parts;
  const GemmShape& s = *op.gemm;
  const double peak = gpu.peak(data_type);
  const double share = op.input_gradient ? 0.5 : 1.0;
  if (op.input_gradient) // dX = dY · Wᵀ
    parts.input_gradient = kernel_time(gpu, flops * share,
                                       peak * gemm_efficiency(gpu, {s.batch, s.m, s.k, s.n}, data_type), bytes * share);
  // dW = Xᵀ · dY (a grouped GEMM's per group, over its own rows: the reduction the groups cannot share)
  parts.weight_gradient =
      kernel_time(gpu, flops * share, peak * gemm_efficiency(gpu, weight_gradient_shape(s), data_type), bytes * share);
  return parts;
}

} // namespace partsim
