// Unit parsing: one table of prefixes, one table of unit symbols per dimension.
#include "partsim/input/units.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace partsim {

namespace {

struct Symbol {
  std::string_view text;
  double scale;
};

constexpr std::array<Symbol, 12> kPrefixes{{{"", 1.0},
                                            {"n", 1e-9},
                                            {"u", 1e-6},
                                            {"\xC2\xB5", 1e-6}, // µ in UTF-8
                                            {"m", 1e-3},
                                            {"k", 1e3},
                                            {"K", 1e3},
                                            {"M", 1e6},
                                            {"G", 1e9},
                                            {"T", 1e12},
                                            {"P", 1e15},
                                            {"E", 1e18}}};
constexpr std::array<Symbol, 5> kBinaryPrefixes{
    {{"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"Ti", 1099511627776.0}, {"Pi", 1125899906842624.0}}};

std::pair<std::string_view, const char*> units_of(Dimension dimension) {
  switch (dimension) {
  case Dimension::Time:
    return {"s", "s, ms, us, ns"};
  case Dimension::Bytes:
    return {"B", "B, kB, MB, GB, TB, KiB, MiB, GiB, TiB"};
  case Dimension::Bandwidth:
    return {"Bps", "Bps or B/s (MBps, GBps, ...) or bits as bps or b/s (Gbps, ...)"};
  case Dimension::FlopRate:
    return {"FLOPs", "FLOPs or FLOP/s (GFLOPs, TFLOPs, PFLOP/s, ...)"};
  case Dimension::Flop:
    return {"FLOP", "FLOP (GFLOP, TFLOP, ...)"};
  case Dimension::Power:
    return {"W", "W, kW"};
  }
  return {"", ""};
}

/** Scale of a unit symbol without its prefix, or 0 when it is not a unit of this dimension. */
double base_unit_scale(std::string_view unit, Dimension dimension) {
  switch (dimension) {
  case Dimension::Time:
    return unit == "s" ? 1.0 : 0.0;
  case Dimension::Bytes:
    return unit == "B" ? 1.0 : 0.0;
  case Dimension::Bandwidth:
    if (unit == "Bps" || unit == "B/s") return 1.0;
    if (unit == "bps" || unit == "b/s") return 1.0 / 8.0;
    return 0.0;
  case Dimension::FlopRate:
    return (unit == "FLOPs" || unit == "FLOP/s" || unit == "flops" || unit == "flop/s") ? 1.0 : 0.0;
  case Dimension::Flop:
    return (unit == "FLOP" || unit == "flop") ? 1.0 : 0.0;
  case Dimension::Power:
    return unit == "W" ? 1.0 : 0.0;
  }
  return 0.0;
}

double unit_scale(std::string_view unit, Dimension dimension) {
  for (const Symbol& prefix : kBinaryPrefixes)
    if (unit.starts_with(prefix.text)) {
      // Binary prefixes only make sense for byte counts and byte rates.
      if (dimension != Dimension::Bytes && dimension != Dimension::Bandwidth) return 0.0;
      const double base = base_unit_scale(unit.substr(prefix.text.size()), dimension);
      return base == 0.0 ? 0.0 : base * prefix.scale;
    }
  for (const Symbol& prefix : kPrefixes) {
    if (prefix.text.empty() || !unit.starts_with(prefix.text)) continue;
    if (prefix.scale < 1.0 && dimension != Dimension::Time)
      continue; // milli-bytes and nano-flops are typos, not quantities

    const double base = base_unit_scale(unit.substr(prefix.text.size()), dimension);
    if (base != 0.0) return base * prefix.scale;
  }
  return base_unit_scale(unit, dimension);
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

} // namespace

std::string_view si_unit(Dimension dimension) {
  switch (dimension) {
  case Dimension::Time:
    return "s";
  case Dimension::Bytes:
    return "bytes";
  case Dimension::Bandwidth:
    return "bytes/s";
  case Dimension::FlopRate:
    return "flop/s";
  case Dimension::Flop:
    return "flop";
  case Dimension::Power:
    return "W";
  }
  return "";
}

PhysicalRange physical_range(Dimension dimension) {
  switch (dimension) {
  case Dimension::Time:
    return {1e-12, 1e9};
  case Dimension::Bytes:
    return {1.0, 1e18};
  case Dimension::Bandwidth:
    return {1e3, 1e15};
  case Dimension::FlopRate:
    return {1e6, 1e18};
  case Dimension::Flop:
    return {1.0, 1e24};
  case Dimension::Power:
    return {1e-3, 1e7};
  }
  return {0.0, 0.0};
}

double parse_quantity(std::string_view text, Dimension dimension) {
  const auto [_, accepted] = units_of(dimension);
  const std::string_view body = trim(text);
  double number = 0.0;
  const auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), number);
  if (ec != std::errc() || end == body.data())
    throw std::invalid_argument("expected a number with a unit (" + std::string(accepted) + "), got \"" +
                                std::string(text) + "\"");
  const std::string_view unit = trim(std::string_view(end, body.data() + body.size() - end));
  double scale = 1.0;
  if (!unit.empty()) {
    scale = unit_scale(unit, dimension);
    if (scale == 0.0)
      throw std::invalid_argument("unknown unit \"" + std::string(unit) + "\" in \"" + std::string(text) +
                                  "\"; expected one of " + std::string(accepted));
  }
  const double value = number * scale;
  if (!std::isfinite(value))
    throw std::invalid_argument("expected a finite quantity, got \"" + std::string(text) + "\"");
  return value;
}

} // namespace partsim
