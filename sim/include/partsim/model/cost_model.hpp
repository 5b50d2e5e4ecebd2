// The op cost model: how long one op of a workload (a GEMM, a norm, ...) takes on a GPU profile: a roofline with
// the profile's GEMM efficiency and kernel launch overhead.
#pragma once

#include "partsim/input/hardware.hpp"
#include "partsim/model/compute_op.hpp"

#include <string>

namespace partsim {

/** Achieved fraction of the dense peak for a GEMM of `shape` in `data_type`, in (0, 1].
 *
 * A batched product is looked up as one product of batch·m rows (the batch fills the GPU as more rows would; n and
 * k still set the width and depth of each tile).
 *
 * - The profile has grid points for `data_type`: trilinear interpolation in (ln m, ln n, ln k) between the 8 grid
 *   points around the shape. Each coordinate is first clamped to its axis, so the result is exactly the table value
 *   at a grid point and always lies between the values of the surrounding points.
 * - The profile has scattered points for `data_type` (GEMMs timed inside real models): the average of the 8 points
 *   nearest in (ln m, ln n, ln k), each weighted by 1 / distance² (inverse-distance weighting, as OpenXLA's matmul
 *   interpolator reads its measured table); exactly the point's value at a measured shape. Coordinates are clamped to
 *   the range of the points first.
 * - Either way, above the largest measured value of an axis the edge value holds (large GEMMs saturate); below the
 *   smallest, the edge value is scaled by the default curve's factor x / (x + half_dimension) relative to the edge
 *   (fewer tiles along that dimension, fewer busy tensor cores): a head dimension of 64 against a table that starts
 *   at 256 is priced below the table's edge, not at it.
 * - fp8 on a profile without fp8 points but with bf16 ones, whose fp8 peak is twice its bf16 peak (Hopper, Ada,
 *   Blackwell, CDNA3): the bf16 efficiency of (m, n, k/2). An FP8 tensor-core instruction covers twice the depth of a
 *   bf16 one at the same issue rate (Hopper's wgmma: k 32 against 16), so an FP8 GEMM of depth k runs the main loop
 *   of a bf16 GEMM of depth k/2, reads the same operand bytes (k one-byte columns against k/2 two-byte ones) and
 *   writes the same output: the same time, at twice the flop rate (docs/training.md compares it with published FP8
 *   GEMM measurements).
 * - Otherwise: the profile's default curve (see curve_efficiency), which for a profile without a table is partsim's
 *   built-in curve (kDefaultGemmSaturatedEfficiency, kDefaultGemmHalfDimension), never 1.
 * - A measured table's value (grid, points, or the bf16 points for fp8) times the profile's sustained_compute factor
 *   (1 when it has none): the tables are measured a kernel at a time. The default curve is not lowered: its saturated
 *   efficiency already comes from sustained loops (MAMF) or from GEMMs traced inside a training run.
 *
 * The data type must be one the profile has a peak rate for (checked: a broken invariant aborts). */
double gemm_efficiency(const GpuProfile& gpu, const GemmShape& shape, const std::string& data_type);

/** saturated_efficiency[data_type] · Π over x in (batch·m, n, k) of x / (x + half_dimension). */
double curve_efficiency(const GemmEfficiencyCurve& curve, const GemmShape& shape, const std::string& data_type);

/** The backward pass of a fused attention kernel runs 2.5x the forward's products (FlashAttention: it recomputes the
 * scores, then dV, dP, dQ and dK: five products against two), as the FlashAttention benchmarks count it. */
inline constexpr double kAttentionBackwardWork = 2.5;

/** Achieved fraction of the attention data type's peak for a fused attention kernel of `shape`: the table's points of
 * the same causality, at the head dimension nearest to the shape's (in log space), linear in ln(sequence length)
 * between the two points around it; the edge value outside. The length looked up is a kernel call's queries
 * (AttentionShape::query_block: s/C under context parallelism, whose kernels run on the rank's blocks; an
 * assumption, the table measuring whole sequences). */
double attention_efficiency(const AttentionEfficiencyTable& table, const AttentionShape& shape);

/** Time of one fused attention kernel (OpKind::Attention) in s. Flops as the kernel runs them
 * (AttentionShape::executed_forward_flops, x kAttentionBackwardWork backward):
 * - with the profile's attention_efficiency, for a data type with the peak of the table's (bf16 and fp16 on every
 *   shipped GPU): at peak x attention_efficiency(). The table measures
 *   forward + backward together (3.5x the forward's flops); both directions are priced at that one rate, an
 *   assumption (FlashAttention-2's backward is a little slower than its forward);
 * - without: each product at the GEMM efficiency of its shape (scores s x s x d, values s x d x s), one launch.
 * The memory side reads Q, K, V and writes the output (the scores never reach memory). */
double attention_time(const ComputeOp& op, const GpuProfile& gpu, const std::string& data_type,
                      double bytes_per_element, bool backward);

/** Time of one kernel in s: max(flops / rate, bytes / achieved memory bandwidth) + the profile's kernel launch
 * overhead. The achieved bandwidth is memory_bandwidth x memory_efficiency (a stream benchmark's figure). */
double kernel_time(const GpuProfile& gpu, double flops, double rate, double bytes);

/** Time of one op in s, forward (`backward` false) or backward, its data at `bytes_per_element`.
 *
 * - GEMM, forward: one kernel, flops at peak(data_type) x gemm_efficiency(shape); an FP8 GEMM (ComputeOp::fp8) at
 *   peak(fp8) x gemm_efficiency(shape, fp8), whatever the training's data type.
 * - GEMM, backward: two kernels, the input gradient dX[m,k] = dY[m,n]·Wᵀ (shape m, k, n) and the weight gradient
 *   dW[k,n] = Xᵀ·dY (shape k, n, m), each with half the op's backward flops and bytes and its own efficiency; only the
 *   weight gradient when the op has no input gradient.
 * - Any other op (norm, softmax, elementwise, lookup, pool, loss): one kernel whose flops run on the vector units at
 *   the profile's fp32 peak (the data type's peak when it has no fp32 figure) with efficiency 1, and whose bytes move
 *   at the achieved memory bandwidth: these ops are memory bound, so bytes / bandwidth decides.
 *
 * - A fused attention kernel: attention_time().
 *
 * The bandwidth is the profile's achieved figure (memory_bandwidth x memory_efficiency): a calibrated profile's
 * measured one, or the datasheet's times a published stream benchmark's fraction. An op with neither flops nor bytes
 * launches nothing: 0. */
double op_time(const ComputeOp& op, const GpuProfile& gpu, const std::string& data_type, double bytes_per_element,
               bool backward);

/** A GEMM op's backward as op_time prices it, its two kernels apart: the input gradient (0 when the op has none) and
 * the weight gradient. Their sum is op_time(op, ..., true). */
struct GemmBackwardTimes {
  double input_gradient = 0.0;
  double weight_gradient = 0.0;
};
GemmBackwardTimes gemm_backward_times(const ComputeOp& op, const GpuProfile& gpu, const std::string& data_type,
                                      double bytes_per_element);

} // namespace partsim
