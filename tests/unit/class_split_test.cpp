// Class-aware splitting: stratified counts, oversampling, random splits against the hypergeometric closed forms.
#include "partsim/plan/class_split.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <vector>

namespace partsim {
namespace {

using Counts = std::vector<std::uint64_t>;

/** Labels with `totals[c]` samples of class c, classes interleaved (sample i has class i mod classes while
 * every class still has samples left). */
Labels make_labels(const Counts& totals) {
  Labels labels;
  for (std::size_t c = 0; c < totals.size(); ++c) labels.class_names.push_back("c" + std::to_string(c));
  Counts left = totals;
  for (bool more = true; more;) {
    more = false;
    for (std::size_t c = 0; c < totals.size(); ++c)
      if (left[c] > 0) {
        labels.classes.push_back(static_cast<ClassIndex>(c));
        --left[c];
        more = true;
      }
  }
  return labels;
}

SplitOptions options(SplitMethod method, int partitions, std::uint64_t threshold = 1, std::uint64_t seed = 0) {
  SplitOptions o;
  o.method = method;
  o.partitions = partitions;
  o.starved_threshold = threshold;
  o.seed = seed;
  return o;
}

/** The contract of a stratified split without oversampling. */
void expect_stratified(const Counts& totals, int k) {
  SCOPED_TRACE(::testing::Message() << "k " << k << ", " << totals.size() << " classes, first " << totals[0]);
  const ClassSplit split = split_by_class(make_labels(totals), options(SplitMethod::Stratified, k));
  ASSERT_EQ(split.partitions.size(), static_cast<std::size_t>(k));
  const std::uint64_t n = std::accumulate(totals.begin(), totals.end(), std::uint64_t{0});
  std::uint64_t smallest = n;
  std::uint64_t largest = 0;
  std::uint64_t size_sum = 0;
  for (const PartitionClasses& p : split.partitions) {
    ASSERT_EQ(p.per_class.size(), totals.size());
    for (std::size_t c = 0; c < totals.size(); ++c) {
      // Within one sample of the exact share n_c / k: |k count - n_c| < k.
      const auto diff = static_cast<std::int64_t>(k * p.per_class[c]) - static_cast<std::int64_t>(totals[c]);
      EXPECT_LT(std::abs(diff), k) << "class " << c << ": " << p.per_class[c] << " of " << totals[c];
    }
    EXPECT_EQ(p.size, std::accumulate(p.per_class.begin(), p.per_class.end(), std::uint64_t{0}));
    EXPECT_EQ(p.replicas, 0u);
    EXPECT_EQ(p.starved, p.per_class[split.minority_class] < split.threshold);
    smallest = std::min(smallest, p.size);
    largest = std::max(largest, p.size);
    size_sum += p.size;
  }
  EXPECT_LE(largest - smallest, 1u);
  EXPECT_EQ(size_sum, n);
  for (std::size_t c = 0; c < totals.size(); ++c) {
    std::uint64_t sum = 0;
    for (const PartitionClasses& p : split.partitions) sum += p.per_class[c];
    EXPECT_EQ(sum, totals[c]) << "class " << c;
  }
}

TEST(ClassSplit, MethodNames) {
  for (const auto method : {SplitMethod::Random, SplitMethod::Stratified, SplitMethod::StratifiedOversample})
    EXPECT_EQ(parse_split_method(to_string(method)), method);
  EXPECT_EQ(to_string(SplitMethod::StratifiedOversample), "stratified_oversample");
  EXPECT_EQ(parse_split_method("stratifed"), std::nullopt);
}

TEST(ClassSplit, StratifiedSeedScenario) {
  // 0.5% of 1,000,000 positive, 10 partitions: 500 positives and 99,500 negatives each, exactly.
  const ClassSplit split = split_by_class(make_labels({995'000, 5'000}), options(SplitMethod::Stratified, 10));
  EXPECT_EQ(split.minority_class, 1u);
  for (const PartitionClasses& p : split.partitions) {
    EXPECT_EQ(p.per_class, (Counts{99'500, 500}));
    EXPECT_DOUBLE_EQ(p.minority_share, 0.005);
  }
  EXPECT_EQ(split.work.samples_scanned, 1'000'000u);
  EXPECT_EQ(split.work.samples_replicated, 0u);
}

TEST(ClassSplit, StratifiedSpreadsLeftoversSoSizesStayBalanced) {
  // 13 and 7 samples in 4 partitions: class 0 is 3 each plus one leftover (partition 0); class 1 is 1 each plus
  // three leftovers, dealt after class 0's (partitions 1, 2, 3). Sizes 5, 5, 5, 5; without the rotation they
  // would be 6, 5, 5, 4.
  const ClassSplit split = split_by_class(make_labels({13, 7}), options(SplitMethod::Stratified, 4));
  const std::vector<Counts> expected{{4, 1}, {3, 2}, {3, 2}, {3, 2}};
  for (std::size_t p = 0; p < 4; ++p) {
    EXPECT_EQ(split.partitions[p].per_class, expected[p]) << p;
    EXPECT_EQ(split.partitions[p].size, 5u);
  }
}

TEST(ClassSplit, StratifiedCountsExactToOnePerClass) {
  expect_stratified({1, 1}, 3); // more partitions than samples
  expect_stratified({999'995, 5}, 10);
  // A fixed linear congruential generator, so the cases are the same on every run and platform.
  std::uint64_t state = 2718;
  auto next = [&state] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 33;
  };
  for (int c = 0; c < 300; ++c) {
    Counts totals(2 + next() % 4);
    for (std::uint64_t& t : totals) t = next() % 5000;
    totals[next() % totals.size()] = next() % 12; // a tiny minority
    totals[0] += 1;                               // at least one sample
    expect_stratified(totals, 1 + static_cast<int>(next() % 16));
  }
}

TEST(ClassSplit, OversampleReachesTheTarget) {
  // K = 5 minority samples in k = 10 partitions: stratified gives 5 partitions one and 5 none. Target T = 3:
  // closed form for the replicas (k - K mod k)(T - floor(K/k)) + (K mod k)(T - ceil(K/k)) = 5 x 3 + 5 x 2.
  constexpr std::uint64_t kTarget = 3;
  SplitOptions o = options(SplitMethod::StratifiedOversample, 10, 2);
  o.oversample_target = kTarget;
  const ClassSplit plain = split_by_class(make_labels({995, 5}), options(SplitMethod::Stratified, 10, 2));
  const ClassSplit split = split_by_class(make_labels({995, 5}), o);
  EXPECT_EQ(plain.starved_partitions, 10); // every partition has 0 or 1 < 2
  EXPECT_EQ(split.starved_partitions, 0);
  EXPECT_EQ(split.oversample_target, kTarget);
  std::uint64_t replicas = 0;
  for (std::size_t p = 0; p < 10; ++p) {
    const PartitionClasses& before = plain.partitions[p];
    const PartitionClasses& after = split.partitions[p];
    EXPECT_EQ(after.per_class[1], kTarget);
    EXPECT_EQ(after.replicas, kTarget - before.per_class[1]);
    EXPECT_EQ(after.per_class[0], before.per_class[0]);
    EXPECT_EQ(after.size, before.size + after.replicas);
    EXPECT_EQ(after.original_size(), before.size);
    EXPECT_DOUBLE_EQ(after.minority_share, 3.0 / static_cast<double>(after.size));
    EXPECT_FALSE(after.starved);
    replicas += after.replicas;
  }
  EXPECT_EQ(replicas, 5u * 3 + 5u * 2);
  EXPECT_EQ(split.work.samples_replicated, replicas);
  EXPECT_EQ(split.work.samples_scanned, 1000u);
}

TEST(ClassSplit, OversampleLeavesFullPartitionsAloneAndDefaultsToTheThreshold) {
  // 975 and 25 samples in 10 partitions: class 0's five leftovers go to partitions 0-4 (98 each, 97 elsewhere),
  // class 1's five after them to partitions 5-9 (3 each, 2 elsewhere). Threshold 3, no target: partitions 0-4
  // get one replica each, 5-9 none.
  const ClassSplit split = split_by_class(make_labels({975, 25}), options(SplitMethod::StratifiedOversample, 10, 3));
  EXPECT_EQ(split.oversample_target, 3u);
  EXPECT_EQ(split.work.samples_replicated, 5u);
  for (std::size_t p = 0; p < 10; ++p) {
    EXPECT_EQ(split.partitions[p].per_class, (Counts{p < 5 ? 98u : 97u, 3})) << p;
    EXPECT_EQ(split.partitions[p].replicas, p < 5 ? 1u : 0u) << p;
    EXPECT_EQ(split.partitions[p].original_size(), 100u);
  }
}

TEST(ClassSplit, NoMinorityNothingToReplicate) {
  Labels labels = generate_labels(500, 0.0, 1);
  const ClassSplit split = split_by_class(labels, options(SplitMethod::StratifiedOversample, 5, 1));
  EXPECT_EQ(split.minority_class, 1u); // the empty class is the least frequent
  EXPECT_EQ(split.starved_partitions, 5);
  EXPECT_EQ(split.work.samples_replicated, 0u);
  EXPECT_TRUE(split.random_risk.exact);
  EXPECT_EQ(split.random_risk.any_lower, 1.0);
}

TEST(ClassSplit, MinorityClassCanBeChosen) {
  SplitOptions o = options(SplitMethod::Stratified, 4, 30);
  o.minority_class = 0;
  const ClassSplit split = split_by_class(make_labels({100, 20}), o);
  EXPECT_EQ(split.minority_class, 0u);
  EXPECT_EQ(split.starved_partitions, 4); // 25 < 30 of class 0 in each
  EXPECT_EQ(split_by_class(make_labels({100, 20}), options(SplitMethod::Stratified, 4)).minority_class, 1u);
}

TEST(ClassSplit, RandomSplitIsEqualChunksOfAShuffle) {
  const Labels labels = make_labels({1000, 23});
  const ClassSplit a = split_by_class(labels, options(SplitMethod::Random, 10, 1, 9));
  const ClassSplit b = split_by_class(labels, options(SplitMethod::Random, 10, 1, 9));
  // 1023 samples: the first 1023 mod 10 = 3 chunks have 103, the rest 102.
  std::uint64_t minority = 0;
  bool differs_from_other_seeds = false;
  for (std::size_t p = 0; p < 10; ++p) {
    EXPECT_EQ(a.partitions[p].size, p < 3 ? 103u : 102u);
    EXPECT_EQ(a.partitions[p].per_class, b.partitions[p].per_class);
    minority += a.partitions[p].per_class[1];
  }
  EXPECT_EQ(minority, 23u);
  for (std::uint64_t seed = 10; seed < 20; ++seed) {
    const ClassSplit other = split_by_class(labels, options(SplitMethod::Random, 10, 1, seed));
    for (std::size_t p = 0; p < 10; ++p)
      differs_from_other_seeds |= other.partitions[p].per_class != a.partitions[p].per_class;
  }
  EXPECT_TRUE(differs_from_other_seeds);
}

/** C(N - m, K) / C(N, K) = prod_{i<K} (N - m - i) / (N - i): no minority sample in m given samples. */
double none_in(std::uint64_t population, std::uint64_t minority, std::uint64_t m) {
  double p = 1;
  for (std::uint64_t i = 0; i < minority; ++i)
    p *= static_cast<double>(population - m - i) / static_cast<double>(population - i);
  return p;
}

double choose(std::uint64_t n, std::uint64_t k) {
  double c = 1;
  for (std::uint64_t i = 1; i <= k; ++i) c = c * static_cast<double>(n - k + i) / static_cast<double>(i);
  return c;
}

struct Observed {
  double starved_rate = 0; ///< starved partitions / (seeds x k)
  double any_rate = 0;     ///< splits with a starved partition / seeds
};

Observed random_splits(const Labels& labels, int k, std::uint64_t threshold, int seeds) {
  Observed observed;
  for (int seed = 0; seed < seeds; ++seed) {
    const ClassSplit split =
        split_by_class(labels, options(SplitMethod::Random, k, threshold, static_cast<std::uint64_t>(seed)));
    observed.starved_rate += split.starved_partitions;
    observed.any_rate += split.starved_partitions > 0 ? 1 : 0;
  }
  observed.starved_rate /= static_cast<double>(seeds) * k;
  observed.any_rate /= seeds;
  return observed;
}

TEST(ClassSplit, RandomSplitStarvesAtTheHypergeometricRate) {
  // N = 200 samples, K = 20 minority, k = 10 chunks of n = 20, threshold 1 (starved: no minority sample).
  constexpr std::uint64_t kN = 200, kK = 20, kChunk = 20;
  constexpr int kParts = 10, kSeeds = 2000;
  const double p0 = none_in(kN, kK, kChunk);      // P[X = 0], X ~ Hypergeometric(200, 20, 20)
  const double p00 = none_in(kN, kK, 2 * kChunk); // both of two given chunks empty
  double any = 0;                                 // inclusion-exclusion over j empty chunks
  for (int j = 1; j <= kParts; ++j) any += (j % 2 == 1 ? 1 : -1) * choose(kParts, j) * none_in(kN, kK, j * kChunk);
  const Observed observed = random_splits(make_labels({kN - kK, kK}), kParts, 1, kSeeds);

  // Z = starved chunks of one split: E[Z] = k p0, E[Z^2] = k p0 + k (k - 1) p00; splits are independent.
  const double var_z = kParts * p0 + kParts * (kParts - 1) * p00 - kParts * p0 * kParts * p0;
  const double rate_se = std::sqrt(var_z / kSeeds) / kParts;
  const double any_se = std::sqrt(any * (1 - any) / kSeeds);
  EXPECT_LT(std::fabs(observed.starved_rate - p0), 4 * rate_se) << observed.starved_rate << " vs " << p0;
  EXPECT_LT(std::fabs(observed.any_rate - any), 4 * any_se) << observed.any_rate << " vs " << any;
  std::printf("[ starved ] t=1: per partition %.4f observed vs %.4f closed form (4 se %.4f); "
              "any %.4f observed vs %.4f (4 se %.4f)\n",
              observed.starved_rate, p0, 4 * rate_se, observed.any_rate, any, 4 * any_se);

  const StarvationRisk risk = random_split_starvation(kN, kK, kParts, 1);
  EXPECT_NEAR(risk.per_partition, p0, 1e-12);
  EXPECT_NEAR(risk.expected_starved, kParts * p0, 1e-11);
  EXPECT_TRUE(risk.exact);
  EXPECT_NEAR(risk.any_lower, any, 1e-10);
  EXPECT_EQ(risk.any_lower, risk.any_upper);
}

TEST(ClassSplit, RandomSplitBelowThresholdTwo) {
  // N = 300, K = 30, k = 10 chunks of n = 30, threshold 2: P[X < 2] = P[X = 0] + P[X = 1], with
  // P[X = 1] / P[X = 0] = K C(N - K, n - 1) / C(N - K, n) = K n / (N - K - n + 1).
  constexpr std::uint64_t kN = 300, kK = 30, kChunk = 30;
  constexpr int kParts = 10, kSeeds = 2000;
  const double p0 = none_in(kN, kK, kChunk);
  const double p = p0 + p0 * static_cast<double>(kK * kChunk) / static_cast<double>(kN - kK - kChunk + 1);
  const StarvationRisk risk = random_split_starvation(kN, kK, kParts, 2);
  EXPECT_NEAR(risk.per_partition, p, 1e-12);
  ASSERT_TRUE(risk.exact);
  const Observed observed = random_splits(make_labels({kN - kK, kK}), kParts, 2, kSeeds);
  // Binomial bands; for the per-partition rate the k partitions of a split are negatively correlated (their
  // minority counts sum to K), so treating the seeds x k partitions as independent gives a wider band.
  const double rate_se = std::sqrt(p * (1 - p) / (kSeeds * kParts));
  const double any_se = std::sqrt(risk.any_lower * (1 - risk.any_lower) / kSeeds);
  EXPECT_LT(std::fabs(observed.starved_rate - p), 4 * rate_se) << observed.starved_rate << " vs " << p;
  EXPECT_LT(std::fabs(observed.any_rate - risk.any_lower), 4 * any_se) << observed.any_rate;
  std::printf("[ starved ] t=2: per partition %.4f observed vs %.4f closed form (4 se %.4f); "
              "any %.4f observed vs %.4f inclusion-exclusion (4 se %.4f)\n",
              observed.starved_rate, p, 4 * rate_se, observed.any_rate, risk.any_lower, 4 * any_se);
}

TEST(Hypergeometric, PmfMatchesHandComputedCases) {
  // N = 10, K = 3, n = 4: C(3, x) C(7, 4 - x) / C(10, 4) = 35, 105, 63, 7 out of 210.
  EXPECT_NEAR(hypergeometric_pmf(0, 10, 3, 4), 35.0 / 210, 1e-15);
  EXPECT_NEAR(hypergeometric_pmf(1, 10, 3, 4), 105.0 / 210, 1e-15);
  EXPECT_NEAR(hypergeometric_pmf(2, 10, 3, 4), 63.0 / 210, 1e-15);
  EXPECT_NEAR(hypergeometric_pmf(3, 10, 3, 4), 7.0 / 210, 1e-15);
  EXPECT_NEAR(hypergeometric_cdf_below(2, 10, 3, 4), 140.0 / 210, 1e-15);
  // Aces in a poker hand: C(48, 5) = 1,712,304 and 48 of C(52, 5) = 2,598,960 hands.
  EXPECT_NEAR(hypergeometric_pmf(0, 52, 4, 5), 1'712'304.0 / 2'598'960, 1e-15);
  EXPECT_NEAR(hypergeometric_pmf(4, 52, 4, 5), 48.0 / 2'598'960, 1e-19);
  EXPECT_NEAR(hypergeometric_log_pmf(4, 52, 4, 5), std::log(48.0 / 2'598'960), 1e-12);
}

TEST(Hypergeometric, OutsideTheSupportIsZero) {
  EXPECT_EQ(hypergeometric_pmf(4, 10, 3, 4), 0.0); // more successes than exist
  EXPECT_EQ(hypergeometric_pmf(5, 10, 8, 4), 0.0); // more than drawn
  EXPECT_EQ(hypergeometric_pmf(0, 10, 8, 4), 0.0); // only 2 failures to draw 4 from
  EXPECT_EQ(hypergeometric_log_pmf(0, 10, 8, 4), -INFINITY);
  EXPECT_NEAR(hypergeometric_pmf(2, 10, 8, 4), 28.0 / 210, 1e-15); // C(8, 2) C(2, 2)
  EXPECT_EQ(hypergeometric_cdf_below(0, 10, 3, 4), 0.0);
  EXPECT_NEAR(hypergeometric_cdf_below(100, 10, 3, 4), 1.0, 1e-15);
}

TEST(Hypergeometric, PmfSumsToOneWithTheClosedFormMoments) {
  struct Case {
    std::uint64_t population, successes, draws;
  };
  for (const Case c : {Case{10, 3, 4}, Case{200, 20, 20}, Case{1000, 999, 500}, Case{10'000'000, 50'000, 1'000'000}}) {
    SCOPED_TRACE(::testing::Message() << c.population << ", " << c.successes << ", " << c.draws);
    long double sum = 0, mean = 0, square = 0;
    for (std::uint64_t x = 0; x <= c.successes; ++x) {
      const long double p = hypergeometric_pmf(x, c.population, c.successes, c.draws);
      sum += p;
      mean += p * x;
      square += p * x * x;
    }
    const double n = c.draws, big_n = c.population, k = c.successes;
    const double expected_mean = n * k / big_n;
    const double expected_var = n * k / big_n * (big_n - k) / big_n * (big_n - n) / (big_n - 1);
    EXPECT_NEAR(static_cast<double>(sum), 1.0, 1e-9);
    EXPECT_NEAR(static_cast<double>(mean), expected_mean, 1e-8 * std::max(1.0, expected_mean));
    EXPECT_NEAR(static_cast<double>(square - mean * mean), expected_var, 1e-6 * std::max(1.0, expected_var));
  }
}

TEST(Hypergeometric, CdfOfEitherTailMatchesThePmfSum) {
  struct Case {
    std::uint64_t population, successes, draws;
  };
  for (const Case c : {Case{10, 3, 4}, Case{10, 8, 4}, Case{200, 20, 20}, Case{10'000'000, 50'000, 1'000'000}}) {
    const std::uint64_t top = std::min(c.successes, c.draws) + 2;
    // log-gamma of 10^7 is about 1.5e8: its last bits make each pmf off by about 1e-11 relative (the pmf of the
    // large case sums to 1 + 1.4e-11), so the two sums can agree no better than that.
    const double tolerance = c.population > 1'000'000 ? 1e-10 : 1e-13;
    long double below = 0; // sum of pmf(x) for x < t
    for (std::uint64_t t = 0; t <= top; ++t) {
      if (t < 4 || t + 4 > top || t % 50 == 0) { // the large case: thresholds across the mode at 5000
        EXPECT_NEAR(hypergeometric_cdf_below(t, c.population, c.successes, c.draws), static_cast<double>(below),
                    tolerance)
            << c.population << ", " << c.successes << ", " << c.draws << ", t " << t;
      }
      below += hypergeometric_pmf(t, c.population, c.successes, c.draws);
    }
  }
}

TEST(Hypergeometric, EmptyChunkOfAHugeDataSet) {
  // P[X = 0] = C(N - n, K) / C(N, K) for N = 10^9, K = 12, n = 10^8: about 0.9^12.
  const double expected = none_in(1'000'000'000, 12, 100'000'000);
  EXPECT_NEAR(hypergeometric_cdf_below(1, 1'000'000'000, 12, 100'000'000), expected, 1e-9 * expected);
  const StarvationRisk risk = random_split_starvation(1'000'000'000, 12, 10, 1);
  EXPECT_NEAR(risk.per_partition, expected, 1e-9 * expected);
}

/** P[some chunk of a random split has fewer than t minority], by enumerating every placement of the K minority
 * samples among N <= 20 positions; chunk p holds positions [start_p, start_p + size_p), sizes as apportion. */
double brute_force_any(std::uint64_t population, std::uint64_t minority, int k, std::uint64_t t) {
  std::vector<int> chunk_of;
  for (int p = 0; p < k; ++p) {
    const std::uint64_t size = population / k + (static_cast<std::uint64_t>(p) < population % k ? 1 : 0);
    chunk_of.insert(chunk_of.end(), size, p);
  }
  std::uint64_t starved = 0, placements = 0;
  for (std::uint32_t mask = 0; mask < (1u << population); ++mask) {
    if (static_cast<std::uint64_t>(std::popcount(mask)) != minority) continue;
    std::vector<std::uint64_t> per_chunk(k, 0);
    for (std::uint64_t i = 0; i < population; ++i)
      if ((mask >> i) & 1u) ++per_chunk[chunk_of[i]];
    ++placements;
    starved += std::any_of(per_chunk.begin(), per_chunk.end(), [t](std::uint64_t x) { return x < t; }) ? 1 : 0;
  }
  return static_cast<double>(starved) / static_cast<double>(placements);
}

TEST(Hypergeometric, AnyStarvedMatchesEnumeration) {
  struct Case {
    std::uint64_t population, minority;
    int k;
    std::uint64_t t;
  };
  for (const Case c : {Case{12, 4, 3, 1}, Case{12, 6, 3, 2}, Case{11, 6, 3, 2}, Case{10, 6, 4, 1}, Case{17, 9, 4, 2},
                       Case{16, 12, 5, 2}, Case{14, 7, 2, 3}}) {
    SCOPED_TRACE(::testing::Message() << "N " << c.population << ", K " << c.minority << ", k " << c.k << ", t "
                                      << c.t);
    const StarvationRisk risk = random_split_starvation(c.population, c.minority, c.k, c.t);
    const double expected = brute_force_any(c.population, c.minority, c.k, c.t);
    ASSERT_TRUE(risk.exact);
    EXPECT_NEAR(risk.any_lower, expected, 1e-12);
    EXPECT_EQ(risk.any_upper, risk.any_lower);
    EXPECT_GT(expected, 0.0); // the cases are chosen so that starvation can happen but need not
    EXPECT_LT(expected, 1.0);
  }
}

TEST(Hypergeometric, CertainAndImpossibleStarvation) {
  // 15 minority samples cannot give 10 partitions 2 each (pigeonhole); a threshold of 0 starves nobody.
  const StarvationRisk certain = random_split_starvation(1000, 15, 10, 2);
  EXPECT_TRUE(certain.exact);
  EXPECT_EQ(certain.any_lower, 1.0);
  const StarvationRisk never = random_split_starvation(1000, 15, 10, 0);
  EXPECT_TRUE(never.exact);
  EXPECT_EQ(never.any_upper, 0.0);
  // 0.5% of 10^7 in 10 partitions: P[X = 0] is about 0.9^50000, far below the smallest double.
  const StarvationRisk seed = random_split_starvation(10'000'000, 50'000, 10, 1);
  EXPECT_TRUE(seed.exact);
  EXPECT_EQ(seed.any_upper, 0.0);
}

TEST(Hypergeometric, BoundsWhenInclusionExclusionCannotFinish) {
  // 200 chunks of 30 with 3 minority samples each on average, threshold 3: about 42% of chunks are starved, the
  // inclusion-exclusion terms reach C(200, j) x 0.42^j, far too large to sum, so the result is a bracket.
  constexpr std::uint64_t kN = 6000, kK = 600;
  constexpr int kParts = 200;
  const StarvationRisk risk = random_split_starvation(kN, kK, kParts, 3);
  EXPECT_FALSE(risk.exact);
  EXPECT_LE(risk.any_lower, risk.any_upper);
  EXPECT_GE(risk.any_lower, risk.per_partition); // at least one chunk's own probability
  EXPECT_LE(risk.any_upper, std::min(1.0, risk.expected_starved));
  const Observed observed = random_splits(make_labels({kN - kK, kK}), kParts, 3, 200);
  EXPECT_GE(observed.any_rate, risk.any_lower - 4 * std::sqrt(risk.any_lower * (1 - risk.any_lower) / 200));
  EXPECT_LE(observed.any_rate, risk.any_upper);
  std::printf("[ starved ] bounds: %.6f <= P[any] <= %.6f after %d terms; observed %.4f\n", risk.any_lower,
              risk.any_upper, risk.terms, observed.any_rate);
}

} // namespace
} // namespace partsim
