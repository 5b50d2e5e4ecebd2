// Physical quantities at the edge: "25GBps", "2us", "80GiB", "312TFLOPs" to SI doubles.
#pragma once

#include <string>
#include <string_view>

namespace partsim {

/** What a quantity measures; decides which unit symbols are accepted. */
enum class Dimension {
  Time,      ///< seconds: s, ms, us (or µs), ns
  Bytes,     ///< bytes: B with SI (kB, MB, GB, TB, PB) or binary (KiB, MiB, GiB, TiB) prefixes
  Bandwidth, ///< bytes/s: Bps or B/s with prefixes; bits: bps or b/s (divided by 8)
  FlopRate,  ///< flop/s: FLOPs, FLOP/s, flops, flop/s with SI prefixes
  Flop,      ///< flop: FLOP, flop with SI prefixes
  Power,     ///< watts: W with SI prefixes (kW, MW)
};

/** The magnitudes a real machine can have in a dimension: a quantity is 0 or between `smallest` and `largest`.
 * Every quantity read from a scenario or a profile is held to it, on top of the field's own bounds, so that
 * no denormal or astronomic figure reaches the simulation (SimGrid aborts on durations that are not finite). */
struct PhysicalRange {
  double smallest; ///< the smallest non-zero magnitude
  double largest;
};

/** Time 1 ps to 1e9 s (31.7 years); bytes 1 B to 1e18 B (1 EB); bandwidth 1 kB/s to 1 PB/s; flop rate 1 Mflop/s to
 * 1e18 flop/s (1 Eflop/s); flop 1 to 1e24; power 1 mW to 10 MW. */
PhysicalRange physical_range(Dimension dimension);

/** Name of the SI unit of a dimension, for messages: "s", "bytes", "bytes/s", "flop/s", "flop", "W". */
std::string_view si_unit(Dimension dimension);

/** Parses "<number><unit>" (spaces allowed between). A bare number is taken in SI units.
 * @throws std::invalid_argument with a message listing the accepted units. */
double parse_quantity(std::string_view text, Dimension dimension);

} // namespace partsim
