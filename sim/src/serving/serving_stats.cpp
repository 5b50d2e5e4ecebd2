// Latency statistics with batch-means confidence intervals, and the queueing closed forms.
#include "partsim/serving/serving_result.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace partsim {

namespace {

/** Student's t quantile for a two-sided 95% interval, by degrees of freedom (1..30; beyond, the normal's 1.96). */
double student_t95(int df) {
  static constexpr std::array<double, 30> t{12.706, 4.303, 2.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                            2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                            2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (df < 1) return 0.0;
  return df <= 30 ? t[static_cast<std::size_t>(df - 1)] : 1.96;
}

/** Half-width of the 95% interval of the mean of `figures` (one per batch). */
double half_width(const std::vector<double>& figures) {
  const auto k = static_cast<int>(figures.size());
  if (k < 2) return 0.0;
  double mean = 0.0;
  for (double f : figures) mean += f;
  mean /= k;
  double ss = 0.0;
  for (double f : figures) ss += (f - mean) * (f - mean);
  return student_t95(k - 1) * std::sqrt(ss / (k - 1) / k);
}

} // namespace

double quantile_of_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0.0;
  const double at = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(at));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (at - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

std::vector<double> percent_quantiles(const std::vector<double>& values) {
  if (values.empty()) return {};
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  std::vector<double> out;
  out.reserve(101);
  for (int i = 0; i <= 100; ++i) out.push_back(quantile_of_sorted(sorted, i / 100.0));
  return out;
}

LatencySummary summarize_latency(const std::vector<double>& values, int batches) {
  LatencySummary s;
  s.count = values.size();
  if (values.empty()) return s;
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  double sum = 0.0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(values.size());
  s.p50 = quantile_of_sorted(sorted, 0.50);
  s.p90 = quantile_of_sorted(sorted, 0.90);
  s.p95 = quantile_of_sorted(sorted, 0.95);
  s.p99 = quantile_of_sorted(sorted, 0.99);
  s.max = sorted.back();
  const auto k = static_cast<std::size_t>(std::min<std::uint64_t>(batches, values.size() / 10));
  if (k < 2) return s;
  std::array<std::vector<double>, 5> figures; // mean, p50, p90, p95, p99 of each batch
  const std::size_t per = values.size() / k;
  std::vector<double> batch;
  for (std::size_t b = 0; b < k; ++b) {
    batch.assign(values.begin() + static_cast<std::ptrdiff_t>(b * per),
                 values.begin() + static_cast<std::ptrdiff_t>((b + 1) * per));
    double batch_sum = 0.0;
    for (double v : batch) batch_sum += v;
    figures[0].push_back(batch_sum / static_cast<double>(per));
    std::sort(batch.begin(), batch.end());
    figures[1].push_back(quantile_of_sorted(batch, 0.50));
    figures[2].push_back(quantile_of_sorted(batch, 0.90));
    figures[3].push_back(quantile_of_sorted(batch, 0.95));
    figures[4].push_back(quantile_of_sorted(batch, 0.99));
  }
  s.mean_ci = half_width(figures[0]);
  s.p50_ci = half_width(figures[1]);
  s.p90_ci = half_width(figures[2]);
  s.p95_ci = half_width(figures[3]);
  s.p99_ci = half_width(figures[4]);
  return s;
}

namespace queueing {

double mm1_time_in_system(double lambda, double mu) {
  return 1.0 / (mu - lambda);
}

double erlang_c(int c, double lambda, double mu) {
  const double a = lambda / mu; // offered load in erlangs
  const double rho = a / c;
  // sum_{k<c} a^k / k!, and a^c / c!, accumulated term by term.
  double term = 1.0;
  double sum = 0.0;
  for (int k = 0; k < c; ++k) {
    sum += term;
    term *= a / (k + 1);
  }
  const double top = term / (1.0 - rho);
  return top / (sum + top);
}

double mmc_time_in_system(int c, double lambda, double mu) {
  return erlang_c(c, lambda, mu) / (c * mu - lambda) + 1.0 / mu;
}

double md1_time_in_system(double lambda, double mu) {
  const double rho = lambda / mu;
  return 1.0 / mu + rho / (2.0 * mu * (1.0 - rho));
}

double mm1k_loss(int k, double lambda, double mu) {
  const double rho = lambda / mu;
  if (std::abs(rho - 1.0) < 1e-12) return 1.0 / (k + 1);
  return (1.0 - rho) * std::pow(rho, k) / (1.0 - std::pow(rho, k + 1));
}

double interactive_response_time(int clients, double throughput, double think_time) {
  return clients / throughput - think_time;
}

double gm1_gamma_time_in_system(double lambda, double cv, double mu) {
  const double c2 = cv * cv;
  const auto transform = [&](double s) { return std::pow(1.0 + s * c2 / lambda, -1.0 / c2); };
  // sigma = A*(mu (1 - sigma)) by bisection on f(sigma) = A*(mu (1 - sigma)) - sigma, which falls from A*(mu) > 0 at 0
  // and has its root below 1 when lambda < mu.
  double lo = 0.0;
  double hi = 1.0 - 1e-15;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (transform(mu * (1.0 - mid)) - mid > 0 ? lo : hi) = mid;
  }
  return 1.0 / (mu * (1.0 - 0.5 * (lo + hi)));
}

} // namespace queueing

} // namespace partsim
