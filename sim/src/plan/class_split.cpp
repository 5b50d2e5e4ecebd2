// Class-aware splits (random, stratified k-fold, stratified with oversampling) and the hypergeometric risk of
// a minority-starved partition under a random split, exact by inclusion-exclusion or bounded.
#include "partsim/plan/class_split.hpp"

#include "partsim/common/error.hpp"
#include "partsim/common/random.hpp"
#include "partsim/plan/strategy.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

namespace partsim {

namespace {

constexpr long double kMinusInfinity = -std::numeric_limits<long double>::infinity();

/** log C(n, k) for k <= n. */
long double log_choose(std::uint64_t n, std::uint64_t k) {
  return std::lgamma(static_cast<long double>(n) + 1) - std::lgamma(static_cast<long double>(k) + 1) -
         std::lgamma(static_cast<long double>(n - k) + 1);
}

long double log_pmf(std::uint64_t x, std::uint64_t population, std::uint64_t successes, std::uint64_t draws) {
  PARTSIM_CHECK(successes <= population && draws <= population)
      << "Hypergeometric(" << population << ", " << successes << ", " << draws << ")";
  if (x > successes || x > draws || draws - x > population - successes) return kMinusInfinity;
  return log_choose(successes, x) + log_choose(population - successes, draws - x) - log_choose(population, draws);
}

/** log(e^a + e^b) without overflow. */
long double log_add(long double a, long double b) {
  if (a == kMinusInfinity) return b;
  if (b == kMinusInfinity) return a;
  const long double high = std::max(a, b);
  return high + std::log1p(std::exp(-std::fabs(a - b)));
}

/** A polynomial in z kept as the logs of its coefficients. */
using LogPoly = std::vector<long double>;

/** poly x factor, truncated to degree `max_degree`. */
LogPoly multiply(const LogPoly& poly, const LogPoly& factor, std::uint64_t max_degree) {
  const std::size_t size = std::min<std::size_t>(poly.size() + factor.size() - 1, max_degree + 1);
  LogPoly out(size, kMinusInfinity);
  for (std::size_t i = 0; i < poly.size() && i < size; ++i)
    for (std::size_t x = 0; x < factor.size() && i + x < size; ++x)
      out[i + x] = log_add(out[i + x], poly[i] + factor[x]);
  return out;
}

// Inclusion-exclusion stops when its terms cost more than this many multiply steps (about 0.1 s) ...
constexpr double kWorkBudget = 5e6;
// ... or when a term's rounding error could exceed this absolute error in the probability.
constexpr long double kAbsoluteError = 1e-6L;

void deal_random(const Labels& labels, std::uint64_t seed, ClassSplit& split) {
  std::vector<ClassIndex> order = labels.classes;
  Xoshiro256StarStar rng(seed);
  for (std::size_t i = order.size() - 1; i > 0; --i) std::swap(order[i], order[rng.below(i + 1)]);
  const std::vector<std::uint64_t> sizes = apportion(order.size(), std::vector<double>(split.partitions.size(), 1.0));
  std::size_t position = 0;
  for (std::size_t p = 0; p < sizes.size(); ++p)
    for (std::uint64_t i = 0; i < sizes[p]; ++i) ++split.partitions[p].per_class[order[position++]];
}

void deal_stratified(ClassSplit& split) {
  const std::size_t k = split.partitions.size();
  const std::vector<double> equal(k, 1.0);
  std::size_t offset = 0; // where the next leftover sample goes
  for (std::size_t c = 0; c < split.class_totals.size(); ++c) {
    // Equal shares: floor(n/k) each, and the n mod k leftovers go to indices 0, 1, ... (ties to the lower index);
    // rotating by `offset` deals every class's leftovers round-robin after the previous class's.
    const std::vector<std::uint64_t> counts = apportion(split.class_totals[c], equal);
    for (std::size_t p = 0; p < k; ++p) split.partitions[(p + offset) % k].per_class[c] = counts[p];
    offset = (offset + split.class_totals[c] % k) % k;
  }
}

} // namespace

double hypergeometric_log_pmf(std::uint64_t x, std::uint64_t population, std::uint64_t successes, std::uint64_t draws) {
  return static_cast<double>(log_pmf(x, population, successes, draws));
}

double hypergeometric_pmf(std::uint64_t x, std::uint64_t population, std::uint64_t successes, std::uint64_t draws) {
  return static_cast<double>(std::exp(log_pmf(x, population, successes, draws)));
}

double hypergeometric_cdf_below(std::uint64_t t, std::uint64_t population, std::uint64_t successes,
                                std::uint64_t draws) {
  PARTSIM_CHECK(successes <= population && draws <= population)
      << "Hypergeometric(" << population << ", " << successes << ", " << draws << ")";
  const std::uint64_t failures = population - successes;
  const std::uint64_t lowest = draws > failures ? draws - failures : 0;
  const std::uint64_t highest = std::min(successes, draws);
  if (t <= lowest) return 0;
  if (t > highest) return 1;
  // pmf(x + 1) / pmf(x), for lowest <= x < highest.
  const auto ratio_up = [&](std::uint64_t x) {
    return static_cast<long double>(successes - x) * static_cast<long double>(draws - x) /
           (static_cast<long double>(x + 1) * static_cast<long double>(failures - (draws - x) + 1));
  };
  // The pmf is log-concave: it falls on both sides of the mode, by ratios that shrink away from it. Sum the tail
  // that does not hold the mode, from its end at t, until the rest (below term r / (1 - r)) is negligible.
  const long double mode = std::floor(static_cast<long double>(draws + 1) * static_cast<long double>(successes + 1) /
                                      (static_cast<long double>(population) + 2));
  const bool lower_tail = static_cast<long double>(t - 1) <= mode;
  std::uint64_t x = lower_tail ? t - 1 : t;
  long double term = std::exp(log_pmf(x, population, successes, draws));
  long double sum = 0;
  while (term > 0) {
    sum += term;
    if (lower_tail ? x == lowest : x == highest) break;
    const long double r = lower_tail ? 1 / ratio_up(x - 1) : ratio_up(x);
    x = lower_tail ? x - 1 : x + 1;
    term *= r;
    if (r < 1 && term / (1 - r) <= 1e-18L * sum) break;
  }
  return static_cast<double>(std::clamp(lower_tail ? sum : 1 - sum, 0.0L, 1.0L));
}

StarvationRisk random_split_starvation(std::uint64_t population, std::uint64_t minority, int partitions,
                                       std::uint64_t threshold) {
  PARTSIM_CHECK(partitions >= 1) << partitions << " partitions";
  PARTSIM_CHECK(minority <= population) << minority << " minority samples of " << population;
  const auto k = static_cast<std::uint64_t>(partitions);
  const std::uint64_t small = population / k; // k - big chunks of `small` samples, `big` of small + 1
  const std::uint64_t big = population % k;
  const double p_big = big > 0 ? hypergeometric_cdf_below(threshold, population, minority, small + 1) : 0.0;
  const double p_small = big < k ? hypergeometric_cdf_below(threshold, population, minority, small) : 0.0;

  StarvationRisk risk;
  risk.threshold = threshold;
  risk.expected_starved = static_cast<double>(big) * p_big + static_cast<double>(k - big) * p_small;
  risk.per_partition = risk.expected_starved / static_cast<double>(k);
  const double max_p = std::max(p_big, p_small);
  const auto settle = [&risk](long double p) {
    risk.any_lower = risk.any_upper = static_cast<double>(std::clamp(p, 0.0L, 1.0L));
    risk.exact = true;
    return risk;
  };
  if (max_p == 0) return settle(0);                             // the union bound is 0
  if (max_p >= 1 || minority / k < threshold) return settle(1); // pigeonhole: fewer than k x threshold to share
  long double lower = max_p;
  long double upper = std::min(1.0, risk.expected_starved);
  const auto bounded = [&risk, &lower, &upper] {
    risk.any_upper = static_cast<double>(std::clamp(upper, 0.0L, 1.0L));
    risk.any_lower = std::min(static_cast<double>(std::clamp(lower, 0.0L, 1.0L)), risk.any_upper);
    return risk;
  };

  // S_j = sum over j-sets of partitions of P[all j starved]; a set of a big and b small chunks holding s minority
  // samples has P = sum_s c_ab(s) C(N - n_set, K - s) / C(N, K), c_ab(s) the coefficient of z^s in
  // (sum_{x<t} C(small+1, x) z^x)^a (sum_{x<t} C(small, x) z^x)^b, kept in logs.
  const std::uint64_t terms_per_chunk = std::min(threshold, small + 2);
  if (2.0 * static_cast<double>(terms_per_chunk) > kWorkBudget) return bounded();
  LogPoly factor_big(terms_per_chunk, kMinusInfinity);
  LogPoly factor_small(terms_per_chunk, kMinusInfinity);
  for (std::uint64_t x = 0; x < terms_per_chunk; ++x) {
    if (x <= small + 1) factor_big[x] = log_choose(small + 1, x);
    if (x <= small) factor_small[x] = log_choose(small, x);
  }
  const long double log_total = log_choose(population, minority);
  const long double relative_error = 64 * std::max(1.0L, std::lgamma(static_cast<long double>(population) + 1)) *
                                     std::numeric_limits<long double>::epsilon();
  std::vector<LogPoly> previous{LogPoly{0.0L}}; // level j - 1, indexed by a - previous_a_min
  std::uint64_t previous_a_min = 0;
  long double partial = 0;
  long double s1 = 0;
  double work = 0;
  for (std::uint64_t j = 1; j <= k; ++j) {
    const std::uint64_t a_min = j > k - big ? j - (k - big) : 0;
    const std::uint64_t a_max = std::min(j, big);
    const std::uint64_t degree = std::min(threshold - 1 > minority / j ? minority : j * (threshold - 1), minority);
    work +=
        static_cast<double>(a_max - a_min + 1) * static_cast<double>(degree + 1) * static_cast<double>(terms_per_chunk);
    if (work > kWorkBudget) break;
    std::vector<LogPoly> level;
    long double s_j = 0;
    for (std::uint64_t a = a_min; a <= a_max; ++a) {
      const std::uint64_t b = j - a;
      LogPoly poly = b >= 1 ? multiply(previous[a - previous_a_min], factor_small, degree)
                            : multiply(previous[a - 1 - previous_a_min], factor_big, degree);
      const std::uint64_t in_set = a * (small + 1) + b * small;
      long double joint = 0;
      for (std::uint64_t s = 0; s < poly.size(); ++s)
        if (poly[s] != kMinusInfinity && minority - s <= population - in_set)
          joint += std::exp(poly[s] + log_choose(population - in_set, minority - s) - log_total);
      s_j += std::exp(log_choose(big, a) + log_choose(k - big, b)) * joint;
      level.push_back(std::move(poly));
    }
    previous = std::move(level);
    previous_a_min = a_min;
    if (s_j * relative_error > kAbsoluteError) break; // summing on would lose the digits that matter
    ++risk.terms;
    partial += j % 2 == 1 ? s_j : -s_j;
    if (j == 1) s1 = s_j;
    if (j % 2 == 1) upper = std::min(upper, partial);
    if (j % 2 == 0) lower = std::max(lower, partial);
    if (j == 2 && s1 > 0) lower = std::max(lower, s1 * s1 / (s1 + 2 * s_j)); // second moment (Chung-Erdos)
    // (j + 1) S_{j+1} <= (k - j) S_j, and |P - partial| <= S_{j+1} (Bonferroni).
    const long double next_bound = s_j * static_cast<long double>(k - j) / static_cast<long double>(j + 1);
    if (j == k || next_bound <= 1e-13L * partial) return settle(partial);
  }
  return bounded();
}

ClassSplit split_by_class(const Labels& labels, const SplitOptions& options) {
  PARTSIM_CHECK(options.partitions >= 1) << options.partitions << " partitions";
  PARTSIM_CHECK(!labels.classes.empty() && !labels.class_names.empty()) << "no labelled samples";
  ClassSplit split;
  split.method = options.method;
  split.class_names = labels.class_names;
  split.class_totals = labels.class_totals();
  const auto& totals = split.class_totals;
  split.minority_class = options.minority_class.value_or(
      static_cast<std::size_t>(std::min_element(totals.begin(), totals.end()) - totals.begin()));
  PARTSIM_CHECK(split.minority_class < totals.size()) << "minority class " << split.minority_class;
  split.threshold = options.starved_threshold;
  split.partitions.resize(static_cast<std::size_t>(options.partitions));
  for (PartitionClasses& partition : split.partitions) partition.per_class.assign(totals.size(), 0);

  if (options.method == SplitMethod::Random)
    deal_random(labels, options.seed, split);
  else
    deal_stratified(split);

  const std::size_t m = split.minority_class;
  if (options.method == SplitMethod::StratifiedOversample) {
    split.oversample_target = options.oversample_target > 0 ? options.oversample_target : options.starved_threshold;
    if (totals[m] > 0)
      for (PartitionClasses& partition : split.partitions)
        if (partition.per_class[m] < split.oversample_target) {
          partition.replicas = split.oversample_target - partition.per_class[m];
          partition.per_class[m] = split.oversample_target;
          split.work.samples_replicated += partition.replicas;
        }
  }

  for (PartitionClasses& partition : split.partitions) {
    partition.size = std::accumulate(partition.per_class.begin(), partition.per_class.end(), std::uint64_t{0});
    partition.minority_share =
        partition.size == 0 ? 0.0 : static_cast<double>(partition.per_class[m]) / static_cast<double>(partition.size);
    partition.starved = partition.per_class[m] < split.threshold;
    split.starved_partitions += partition.starved ? 1 : 0;
  }
  split.work.samples_scanned = labels.size();
  split.random_risk = random_split_starvation(labels.size(), totals[m], options.partitions, split.threshold);
  return split;
}

} // namespace partsim
