// apportion: integer counts that sum to the total, each within one item of its exact share (largest remainder).
#include "partsim/plan/strategy.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

namespace partsim {
namespace {

using Counts = std::vector<std::uint64_t>;

std::uint64_t sum(const Counts& counts) {
  return std::accumulate(counts.begin(), counts.end(), std::uint64_t{0});
}

/** Checks the documented contract: one count per share, summing to `total`, each within one item of
 * total x share / sum(shares), computed in long double. */
void expect_fair(std::uint64_t total, const std::vector<double>& shares) {
  SCOPED_TRACE(::testing::Message() << "total " << total << ", " << shares.size() << " shares");
  const Counts counts = apportion(total, shares);
  ASSERT_EQ(counts.size(), shares.size());
  EXPECT_EQ(sum(counts), total);
  long double share_sum = 0;
  for (double s : shares) share_sum += s;
  for (std::size_t i = 0; i < shares.size(); ++i) {
    const long double exact = static_cast<long double>(total) * shares[i] / share_sum;
    EXPECT_LT(std::fabs(static_cast<long double>(counts[i]) - exact), 1.0L)
        << "share " << i << ": count " << counts[i] << ", exact " << static_cast<double>(exact);
  }
}

TEST(Apportion, ExactSplits) {
  EXPECT_EQ(apportion(100, {0.5, 0.25, 0.25}), (Counts{50, 25, 25}));
  EXPECT_EQ(apportion(10, {0.1, 0.2, 0.3, 0.4}), (Counts{1, 2, 3, 4}));
}

TEST(Apportion, LargestRemaindersGetTheMissingItems) {
  // Exact shares 10 x (0.125, 0.375, 0.5) = 1.25, 3.75, 5: floors sum to 9, the 0.75 remainder takes the tenth.
  EXPECT_EQ(apportion(10, {0.125, 0.375, 0.5}), (Counts{1, 4, 5}));
  // 7 x (0.5, 0.25, 0.25) = 3.5, 1.75, 1.75: floors 3, 1, 1; the two 0.75 remainders take the missing two.
  EXPECT_EQ(apportion(7, {0.5, 0.25, 0.25}), (Counts{3, 2, 2}));
}

TEST(Apportion, TiesGoToTheLowerIndex) {
  // Exact shares 1.5, 1.5, 1: one item is missing and both 0.5 remainders tie.
  EXPECT_EQ(apportion(4, {0.375, 0.375, 0.25}), (Counts{2, 1, 1}));
  // 10 items in 4 equal shares: 2.5 each, the two missing items go to partitions 0 and 1.
  EXPECT_EQ(apportion(10, {0.25, 0.25, 0.25, 0.25}), (Counts{3, 3, 2, 2}));
  EXPECT_EQ(apportion(1, {0.5, 0.5}), (Counts{1, 0}));
}

TEST(Apportion, ZeroSharesGetNothing) {
  EXPECT_EQ(apportion(7, {0.0, 1.0, 0.0}), (Counts{0, 7, 0}));
  EXPECT_EQ(apportion(5, {0.5, 0.0, 0.5}), (Counts{3, 0, 2}));
}

TEST(Apportion, SharesNeedNotBeNormalised) {
  EXPECT_EQ(apportion(8, {1.0, 1.0, 2.0}), (Counts{2, 2, 4}));
  EXPECT_EQ(apportion(6, {3.0, 2.0, 1.0}), (Counts{3, 2, 1}));
}

TEST(Apportion, ZeroTotal) {
  EXPECT_EQ(apportion(0, {0.3, 0.7}), (Counts{0, 0}));
}

TEST(Apportion, OneShareTakesEverything) {
  EXPECT_EQ(apportion(12345, {1.0}), Counts{12345});
  EXPECT_EQ(apportion(0, {1.0}), Counts{0});
  EXPECT_EQ(apportion(1'000'000'000'000'000ULL, {0.7}), Counts{1'000'000'000'000'000ULL});
}

TEST(Apportion, FewerItemsThanShares) {
  expect_fair(3, std::vector<double>(10, 0.1));
  EXPECT_EQ(apportion(3, std::vector<double>(5, 0.2)), (Counts{1, 1, 1, 0, 0}));
}

TEST(Apportion, SkewedSharesOfTheSeedScenario) {
  // 10M samples, one partition of 30%, nine of 70%/9: 3,000,000 and 777,777.7... each.
  std::vector<double> shares(10, 0.7 / 9);
  shares[0] = 0.3;
  const Counts counts = apportion(10'000'000, shares);
  EXPECT_EQ(sum(counts), 10'000'000u);
  EXPECT_EQ(counts[0], 3'000'000u);
  // The nine small partitions get 777,777 or 777,778 (seven of them: 9 x 777,777 = 6,999,993).
  int rounded_up = 0;
  for (std::size_t i = 1; i < counts.size(); ++i) {
    EXPECT_TRUE(counts[i] == 777'777u || counts[i] == 777'778u) << i << ": " << counts[i];
    rounded_up += counts[i] == 777'778u;
  }
  EXPECT_EQ(rounded_up, 7);
  expect_fair(10'000'000, shares);
}

TEST(Apportion, HugeTotal) {
  std::vector<double> shares(10, 0.7 / 9);
  shares[3] = 0.3;
  expect_fair(1'000'000'000'000'000ULL, shares); // 1e15
  expect_fair(1'000'000'000'000'001ULL, std::vector<double>(10, 0.1));
  expect_fair(999'999'999'999'999ULL, {0.1, 0.2, 0.3, 0.15, 0.05, 0.05, 0.05, 0.04, 0.03, 0.03});
}

TEST(Apportion, LargestScenarioTotal) {
  // A scenario allows up to 1e15 samples per iteration: shares with no finite binary expansion still come out fair.
  expect_fair(1'000'000'000'000'000ULL, std::vector<double>(7, 1.0 / 7));
  expect_fair(999'999'999'999'999ULL, {1.0 / 3, 1.0 / 3, 1.0 / 3});
  expect_fair(1'000'000'000'000'000ULL, {0.999999, 0.000001});
}

TEST(Apportion, ManyDeterministicCases) {
  // A fixed linear congruential generator, so the cases are the same on every run and every standard library.
  std::uint64_t state = 12345;
  auto next = [&state] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 33;
  };
  for (int c = 0; c < 500; ++c) {
    const std::size_t k = 1 + next() % 16;
    std::vector<double> shares(k);
    for (double& s : shares) s = static_cast<double>(next() % 1000); // some zero
    if (std::accumulate(shares.begin(), shares.end(), 0.0) == 0.0) shares[0] = 1.0;
    const std::uint64_t total = next() % 100'000;
    expect_fair(total, shares);
  }
}

} // namespace
} // namespace partsim
