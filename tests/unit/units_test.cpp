// parse_quantity: every dimension, SI and binary prefixes, bits and bytes, spacing, and what it refuses.
#include "partsim/input/units.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace partsim {
namespace {

constexpr double kKi = 1024.0;

/** The message of the std::invalid_argument that parsing `text` throws, or "" when it throws nothing. */
std::string rejection(const std::string& text, Dimension dimension) {
  try {
    parse_quantity(text, dimension);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << "\"" << text << "\" was accepted";
  return "";
}

::testing::AssertionResult contains(const std::string& text, const std::string& fragment) {
  if (text.find(fragment) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << fragment << "\"";
}

TEST(Units, SiUnitNames) {
  EXPECT_EQ(si_unit(Dimension::Time), "s");
  EXPECT_EQ(si_unit(Dimension::Bytes), "bytes");
  EXPECT_EQ(si_unit(Dimension::Bandwidth), "bytes/s");
  EXPECT_EQ(si_unit(Dimension::FlopRate), "flop/s");
  EXPECT_EQ(si_unit(Dimension::Flop), "flop");
}

TEST(Units, TimePrefixes) {
  EXPECT_DOUBLE_EQ(parse_quantity("3s", Dimension::Time), 3.0);
  EXPECT_DOUBLE_EQ(parse_quantity("1.5ms", Dimension::Time), 1.5e-3);
  EXPECT_DOUBLE_EQ(parse_quantity("2us", Dimension::Time), 2e-6);
  EXPECT_DOUBLE_EQ(parse_quantity("7ns", Dimension::Time), 7e-9);
}

TEST(Units, MicroSecondsSpelledThreeWays) {
  const double expected = 2e-6;
  EXPECT_DOUBLE_EQ(parse_quantity("2us", Dimension::Time), expected);
  EXPECT_DOUBLE_EQ(parse_quantity("2 us", Dimension::Time), expected);
  EXPECT_DOUBLE_EQ(parse_quantity("2\xC2\xB5s", Dimension::Time), expected);  // U+00B5 MICRO SIGN
  EXPECT_DOUBLE_EQ(parse_quantity("2 \xC2\xB5s", Dimension::Time), expected); // with a space
}

TEST(Units, SurroundingBlanksAreIgnored) {
  EXPECT_DOUBLE_EQ(parse_quantity("  2us\t", Dimension::Time), 2e-6);
  EXPECT_DOUBLE_EQ(parse_quantity("\t80 GB ", Dimension::Bytes), 80e9);
}

TEST(Units, BareNumbersAreSi) {
  EXPECT_DOUBLE_EQ(parse_quantity("0.25", Dimension::Time), 0.25);
  EXPECT_DOUBLE_EQ(parse_quantity("1e9", Dimension::Bytes), 1e9);
  EXPECT_DOUBLE_EQ(parse_quantity("12.5e9", Dimension::Bandwidth), 12.5e9);
  EXPECT_DOUBLE_EQ(parse_quantity("312e12", Dimension::FlopRate), 312e12);
  EXPECT_DOUBLE_EQ(parse_quantity("42", Dimension::Flop), 42.0);
}

TEST(Units, BytesWithSiPrefixes) {
  EXPECT_DOUBLE_EQ(parse_quantity("5B", Dimension::Bytes), 5.0);
  EXPECT_DOUBLE_EQ(parse_quantity("602kB", Dimension::Bytes), 602e3);
  EXPECT_DOUBLE_EQ(parse_quantity("1KB", Dimension::Bytes), 1e3);
  EXPECT_DOUBLE_EQ(parse_quantity("8MB", Dimension::Bytes), 8e6);
  EXPECT_DOUBLE_EQ(parse_quantity("1.4GB", Dimension::Bytes), 1.4e9);
  EXPECT_DOUBLE_EQ(parse_quantity("2TB", Dimension::Bytes), 2e12);
  EXPECT_DOUBLE_EQ(parse_quantity("3PB", Dimension::Bytes), 3e15);
}

TEST(Units, BytesWithBinaryPrefixes) {
  EXPECT_DOUBLE_EQ(parse_quantity("1KiB", Dimension::Bytes), kKi);
  EXPECT_DOUBLE_EQ(parse_quantity("2MiB", Dimension::Bytes), 2 * kKi * kKi);
  EXPECT_DOUBLE_EQ(parse_quantity("80GiB", Dimension::Bytes), 80 * kKi * kKi * kKi);
  EXPECT_DOUBLE_EQ(parse_quantity("1TiB", Dimension::Bytes), kKi * kKi * kKi * kKi);
  EXPECT_DOUBLE_EQ(parse_quantity("1PiB", Dimension::Bytes), kKi * kKi * kKi * kKi * kKi);
}

TEST(Units, BandwidthInBytes) {
  EXPECT_DOUBLE_EQ(parse_quantity("25GBps", Dimension::Bandwidth), 25e9);
  EXPECT_DOUBLE_EQ(parse_quantity("25GB/s", Dimension::Bandwidth), 25e9);
  EXPECT_DOUBLE_EQ(parse_quantity("3.35TBps", Dimension::Bandwidth), 3.35e12);
  EXPECT_DOUBLE_EQ(parse_quantity("100 Bps", Dimension::Bandwidth), 100.0);
  EXPECT_DOUBLE_EQ(parse_quantity("1GiBps", Dimension::Bandwidth), kKi * kKi * kKi);
  EXPECT_DOUBLE_EQ(parse_quantity("4MiB/s", Dimension::Bandwidth), 4 * kKi * kKi);
}

TEST(Units, BandwidthInBitsIsDividedByEight) {
  EXPECT_DOUBLE_EQ(parse_quantity("400Gbps", Dimension::Bandwidth), 50e9);
  EXPECT_DOUBLE_EQ(parse_quantity("100Mb/s", Dimension::Bandwidth), 100e6 / 8);
  EXPECT_DOUBLE_EQ(parse_quantity("8bps", Dimension::Bandwidth), 1.0);
  EXPECT_DOUBLE_EQ(parse_quantity("1 Kibps", Dimension::Bandwidth), kKi / 8);
}

TEST(Units, FlopRate) {
  EXPECT_DOUBLE_EQ(parse_quantity("312TFLOPs", Dimension::FlopRate), 312e12);
  EXPECT_DOUBLE_EQ(parse_quantity("989.5TFLOPs", Dimension::FlopRate), 989.5e12);
  EXPECT_DOUBLE_EQ(parse_quantity("1PFLOP/s", Dimension::FlopRate), 1e15);
  EXPECT_DOUBLE_EQ(parse_quantity("10 Gflops", Dimension::FlopRate), 10e9);
  EXPECT_DOUBLE_EQ(parse_quantity("5Mflop/s", Dimension::FlopRate), 5e6);
  EXPECT_DOUBLE_EQ(parse_quantity("7FLOPs", Dimension::FlopRate), 7.0);
}

TEST(Units, Flop) {
  EXPECT_DOUBLE_EQ(parse_quantity("4.1GFLOP", Dimension::Flop), 4.1e9);
  EXPECT_DOUBLE_EQ(parse_quantity("2.1TFLOP", Dimension::Flop), 2.1e12);
  EXPECT_DOUBLE_EQ(parse_quantity("3 kflop", Dimension::Flop), 3e3);
  EXPECT_DOUBLE_EQ(parse_quantity("9FLOP", Dimension::Flop), 9.0);
  EXPECT_DOUBLE_EQ(parse_quantity("1EFLOP", Dimension::Flop), 1e18);
}

TEST(Units, RejectsUnknownUnit) {
  const std::string message = rejection("2 parsecs", Dimension::Time);
  EXPECT_TRUE(contains(message, "unknown unit \"parsecs\""));
  EXPECT_TRUE(contains(message, "s, ms, us, ns")); // lists what it accepts
}

TEST(Units, RejectsAUnitOfAnotherDimension) {
  EXPECT_TRUE(contains(rejection("25GBps", Dimension::Time), "unknown unit \"GBps\""));
  EXPECT_TRUE(contains(rejection("2us", Dimension::Bandwidth), "unknown unit \"us\""));
  EXPECT_TRUE(contains(rejection("80GB", Dimension::Flop), "unknown unit \"GB\""));
  EXPECT_TRUE(contains(rejection("1GFLOP", Dimension::FlopRate), "unknown unit \"GFLOP\""));
}

TEST(Units, RejectsMilliBytes) {
  EXPECT_TRUE(contains(rejection("1mB", Dimension::Bytes), "unknown unit \"mB\""));
  EXPECT_TRUE(contains(rejection("1mBps", Dimension::Bandwidth), "unknown unit \"mBps\""));
  EXPECT_TRUE(contains(rejection("1nFLOP", Dimension::Flop), "unknown unit \"nFLOP\""));
}

TEST(Units, RejectsBinaryPrefixOnTime) {
  EXPECT_TRUE(contains(rejection("1Kis", Dimension::Time), "unknown unit \"Kis\""));
  EXPECT_TRUE(contains(rejection("1GiFLOP", Dimension::Flop), "unknown unit \"GiFLOP\""));
}

TEST(Units, RejectsEmptyText) {
  EXPECT_TRUE(contains(rejection("", Dimension::Time), "expected a number with a unit"));
  EXPECT_TRUE(contains(rejection("   ", Dimension::Bytes), "expected a number with a unit"));
}

TEST(Units, RejectsText) {
  EXPECT_TRUE(contains(rejection("abc", Dimension::Bandwidth), "expected a number with a unit"));
  EXPECT_TRUE(contains(rejection("GBps", Dimension::Bandwidth), "got \"GBps\""));
}

TEST(Units, RejectsNan) {
  EXPECT_TRUE(contains(rejection("nan", Dimension::Time), "expected a finite quantity, got \"nan\""));
  EXPECT_TRUE(contains(rejection("NaN GBps", Dimension::Bandwidth), "expected a finite quantity"));
}

TEST(Units, RejectsInfinity) {
  EXPECT_TRUE(contains(rejection("inf", Dimension::Bytes), "expected a finite quantity, got \"inf\""));
  EXPECT_TRUE(contains(rejection("-inf", Dimension::Time), "expected a finite quantity"));
  EXPECT_TRUE(contains(rejection("infinity FLOP", Dimension::Flop), "expected a finite quantity"));
}

TEST(Units, RejectsOverflow) {
  // Out of double range as typed, and out of range once scaled.
  EXPECT_FALSE(rejection("1e999", Dimension::Bytes).empty());
  EXPECT_TRUE(contains(rejection("1e300EB", Dimension::Bytes), "expected a finite quantity"));
}

} // namespace
} // namespace partsim
