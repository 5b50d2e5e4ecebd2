// Class-aware splitting of labelled samples into partitions (random, stratified k-fold, stratified with
// oversampling), with the risk of a minority-starved partition from the hypergeometric distribution.
#pragma once

#include "partsim/common/enum_names.hpp"

#include "partsim/input/labels.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace partsim {

/** How samples are dealt to partitions. */
enum class SplitMethod {
  Random,              ///< a seeded uniform shuffle (Fisher-Yates, xoshiro256**), then equal-size chunks
  Stratified,          ///< stratified k-fold: every class is dealt evenly over the partitions
  StratifiedOversample ///< stratified, then minority samples are replicated where a partition has too few
};

template <>
struct EnumNames<SplitMethod> {
  static constexpr std::array<EnumEntry<SplitMethod>, 3> entries{
      {{SplitMethod::Random, "random"},
       {SplitMethod::Stratified, "stratified"},
       {SplitMethod::StratifiedOversample, "stratified_oversample"}}};
};

/** The scenario spelling: "random", "stratified", "stratified_oversample". */
inline std::string_view to_string(SplitMethod method) {
  return enum_name(method);
}
/** The method spelled `name` (as to_string writes it), if any. */
inline std::optional<SplitMethod> parse_split_method(std::string_view name) {
  return enum_value<SplitMethod>(name);
}

/** What to split and how. */
struct SplitOptions {
  SplitMethod method = SplitMethod::Stratified;
  int partitions = 10;    ///< k >= 1
  std::uint64_t seed = 0; ///< the shuffle of `random`; stratified counts do not depend on it
  /** The class whose scarcity matters; default: the class with the fewest samples (ties: the lower index). */
  std::optional<std::size_t> minority_class;
  std::uint64_t starved_threshold = 1; ///< a partition with fewer minority samples than this is starved
  /** stratified_oversample: minority samples every partition is brought up to; 0: starved_threshold. */
  std::uint64_t oversample_target = 0;
};

/** One partition of a split. Counts include the replicas that oversampling added. */
struct PartitionClasses {
  std::uint64_t size = 0;               ///< samples it trains on, replicas included
  std::vector<std::uint64_t> per_class; ///< samples per class, replicas included
  std::uint64_t replicas = 0;           ///< minority samples added by oversampling (copies of existing ones)
  double minority_share = 0;            ///< per_class[minority] / size; 0 for an empty partition
  bool starved = false;                 ///< per_class[minority] < threshold, after oversampling

  /** Samples dealt to it by the split, before oversampling. */
  std::uint64_t original_size() const { return size - replicas; }
};

/** Risk of a starved partition if the same samples were split uniformly at random into k chunks of
 * floor(N/k) or ceil(N/k) samples: the minority count X of a chunk of n samples is
 * Hypergeometric(N, K, n), with N samples of which K are minority.
 *
 * P[at least one starved] is the inclusion-exclusion sum over sets of j partitions, S_1 - S_2 + S_3 - ...,
 * where S_j = sum over j-sets of P[all j starved] (a convolution of the chunks' hypergeometric terms below
 * the threshold). It is summed term by term and is exact (any_lower == any_upper, exact == true) when the
 * remaining terms are provably negligible ((j+1) S_{j+1} <= (k-j) S_j, and the error of a partial sum is at
 * most the next term) or all k terms are summed, with an estimated rounding error below 1e-6. When a term
 * is too large to sum without losing those digits, or the sum would take more than about 0.1 s (large k and
 * threshold), [any_lower, any_upper] bracket it: below, the largest single-chunk probability, the second-moment
 * (Chung-Erdos) bound S_1^2 / (S_1 + 2 S_2) and the even Bonferroni partial sums; above, min(1, S_1) and the odd
 * partial sums. Certain cases are exact without the sum: threshold 0 (never), fewer than k x threshold minority samples
 * (pigeonhole: always). */
struct StarvationRisk {
  std::uint64_t threshold = 1;
  double per_partition = 0;    ///< mean over partitions of P[X < threshold] (expected starved / k)
  double expected_starved = 0; ///< sum over partitions of P[X < threshold]
  double any_lower = 0;        ///< P[at least one partition starved] is at least this
  double any_upper = 0;        ///< ... and at most this
  bool exact = false;          ///< any_lower == any_upper is P[at least one starved]
  int terms = 0;               ///< inclusion-exclusion terms summed
};

/** The preprocessing work of a split, for the engine to turn into coordinator time. */
struct SplitWork {
  std::uint64_t samples_scanned = 0;    ///< samples read once and given a partition: N for every method
  std::uint64_t samples_replicated = 0; ///< copies written by oversampling (extra training samples too)
};

/** The result of split_by_class. */
struct ClassSplit {
  SplitMethod method = SplitMethod::Stratified;
  std::vector<std::string> class_names;
  std::vector<std::uint64_t> class_totals; ///< samples per class in the whole data set, before oversampling
  std::size_t minority_class = 0;
  std::uint64_t threshold = 1;
  std::uint64_t oversample_target = 0; ///< 0 unless method is StratifiedOversample
  std::vector<PartitionClasses> partitions;
  int starved_partitions = 0; ///< partitions with fewer minority samples than threshold, after oversampling
  StarvationRisk random_risk; ///< of a random split of the same samples (whatever `method` is)
  SplitWork work;
};

/** Splits `labels` into `options.partitions` partitions.
 *
 * - Random: partition p gets chunk p of the shuffled samples; chunk sizes come from apportion, so they
 *   differ by at most one (the first N mod k are one larger).
 * - Stratified: class c's n_c samples are apportioned evenly, so each partition gets floor(n_c/k) or
 *   ceil(n_c/k) of them (the class proportions of the whole, to within one sample); the leftover samples
 *   of successive classes are dealt round-robin, continuing where the previous class stopped, so sizes
 *   also differ by at most one.
 * - StratifiedOversample: stratified, then every partition with fewer than the target minority samples
 *   gets copies of minority samples (its own, or from the whole minority class when it has none) up to
 *   the target. With no minority samples at all nothing can be copied and those partitions stay starved.
 *
 * @pre options.partitions >= 1, labels not empty, a given minority_class below labels.class_count(). */
ClassSplit split_by_class(const Labels& labels, const SplitOptions& options);

/** log P[X = x] for X ~ Hypergeometric(population, successes, draws): x successes in `draws` samples taken
 * without replacement from `population` holding `successes`; -infinity outside the support.
 * Computed with log-gamma in long double, so populations of billions are fine.
 * @pre successes <= population and draws <= population. */
double hypergeometric_log_pmf(std::uint64_t x, std::uint64_t population, std::uint64_t successes, std::uint64_t draws);

/** P[X = x], see hypergeometric_log_pmf. */
double hypergeometric_pmf(std::uint64_t x, std::uint64_t population, std::uint64_t successes, std::uint64_t draws);

/** P[X < t] (0 when t = 0): the sum of the pmf over x < t, or 1 minus the sum over x >= t when the mode is
 * below t, taken from x = t by the pmf's ratio recurrence and stopped when the rest of the tail (bounded
 * by log-concavity) is below 1e-18 of the sum, so the cost grows with the standard deviation, not with t. */
double hypergeometric_cdf_below(std::uint64_t t, std::uint64_t population, std::uint64_t successes,
                                std::uint64_t draws);

/** The starvation risk of a uniformly random split of `population` samples, `minority` of them minority,
 * into `partitions` chunks (see StarvationRisk). @pre partitions >= 1, minority <= population. */
StarvationRisk random_split_starvation(std::uint64_t population, std::uint64_t minority, int partitions,
                                       std::uint64_t threshold);

} // namespace partsim
