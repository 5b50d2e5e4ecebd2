// What a serving run returns (raw, from the engine) and the statistics drawn from it: latency percentiles with
// batch-means confidence intervals, utilisation, queue lengths, the bottleneck; and the queueing closed forms the
// tests hold the engine to.
#pragma once

#include "partsim/report/run_result.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace partsim {

/** Integrals of a quantity over time (item-seconds of queue, replica-seconds of service) in bins of equal width from
 * `origin`. The run's length is not known in advance: when a value falls beyond the last of kMaxBins bins, pairs of
 * bins merge and the width doubles (exact: the integrals add), so a run keeps between kMaxBins / 2 and kMaxBins. */
class BinnedIntegral {
 public:
  static constexpr std::size_t kMaxBins = 128;
  explicit BinnedIntegral(double origin = 0.0, double width = 1e-3) : origin_(origin), width_(width) {}

  /** Adds `value` x the time of [from, to) into the bins it overlaps (nothing before the origin). */
  void add(double from, double to, double value) {
    from = std::max(from, origin_);
    if (!(to > from) || value == 0.0) return;
    while (to - origin_ > width_ * static_cast<double>(kMaxBins)) coarsen();
    auto first = static_cast<std::size_t>((from - origin_) / width_);
    auto last = std::min(kMaxBins - 1, static_cast<std::size_t>((to - origin_) / width_));
    if (bins_.size() <= last) bins_.resize(last + 1, 0.0);
    for (std::size_t b = first; b <= last; ++b) {
      const double lo = std::max(from, origin_ + width_ * static_cast<double>(b));
      const double hi = b == last ? to : std::min(to, origin_ + width_ * static_cast<double>(b + 1));
      if (hi > lo) bins_[b] += value * (hi - lo);
    }
  }
  /** Merges pairs of bins until the width is at least `width` (another series' width, to align them). */
  void coarsen_to(double width) {
    while (width_ < width) coarsen();
  }
  double origin() const { return origin_; }
  double width() const { return width_; }
  const std::vector<double>& bins() const { return bins_; }

 private:
  void coarsen() {
    std::vector<double> merged((bins_.size() + 1) / 2, 0.0);
    for (std::size_t b = 0; b < bins_.size(); ++b) merged[b / 2] += bins_[b];
    bins_ = std::move(merged);
    width_ *= 2.0;
  }
  double origin_;
  double width_;
  std::vector<double> bins_;
};

/** One stage's raw figures. Times "in the window" are those from the warm-up's end to the run's end. */
struct ServingStageRaw {
  BinnedIntegral queue_over_time; ///< item-seconds queued per bin, over the window
  BinnedIntegral busy_over_time;  ///< replica-seconds of service per bin, over the window
  std::vector<double> latency;    ///< s, time in the stage (queue, batching wait, service) of measured items
  std::vector<double> wait;       ///< s, time in the queue of measured items
  double busy_in_window = 0.0;    ///< replica-seconds of service within the window
  double queue_area = 0.0;        ///< integral of the queue length over the window (item-seconds)
  std::uint64_t max_queue = 0;    ///< longest queue seen
  std::uint64_t served = 0;       ///< items served (all)
  std::uint64_t batches = 0;      ///< batches served (all)
  double busy = 0.0;              ///< replica-seconds of service (all)
  std::uint64_t dropped = 0;      ///< items dropped at this stage's full queue
  // An LLM stage's figures (docs/serving.md#llm-serving-stage).
  std::vector<double> ttft;                  ///< s, from sending to the first output token, measured requests
  std::vector<double> tpot;                  ///< s, (last token - first token) / (output - 1), measured, output > 1
  std::uint64_t slo_met = 0;                 ///< measured requests within the TTFT and TPOT targets
  std::uint64_t input_tokens = 0;            ///< prompt tokens prefilled (all)
  std::uint64_t output_tokens = 0;           ///< tokens generated (all)
  std::uint64_t output_tokens_in_window = 0; ///< tokens generated within the window
  std::uint64_t steps = 0;                   ///< iterations of all replicas
  std::uint64_t prefill_steps = 0;           ///< iterations that prefilled a prompt
  std::uint64_t rejected = 0;                ///< requests longer than the model, a step or an empty KV cache
  std::uint64_t kv_blocked_steps = 0;        ///< steps after which the queue's first request waited for KV room
  std::uint64_t max_running = 0;             ///< most requests in one replica's batch
  double running_area = 0.0;                 ///< integral over steps of the batch size x step time (all)
  double kv_capacity_tokens = 0.0;           ///< per replica
  double kv_bytes_per_token = 0.0;           ///< per GPU of a replica
  std::uint64_t kv_peak_tokens = 0;          ///< most KV tokens held by one replica
  std::uint64_t preemptions = 0;             ///< requests preempted (kv_admission preempt)
  std::uint64_t recomputed_tokens = 0;       ///< tokens prefilled again after a preemption
  std::vector<double> kv_transfer;           ///< s, disaggregated: KV transfers of measured requests
  std::uint64_t kv_transfers = 0;            ///< disaggregated: requests whose KV cache was sent (all)
  double kv_transfer_bytes = 0.0;            ///< their bytes
  double prefill_busy_in_window = 0.0;       ///< disaggregated: replica-seconds of the prefill pool's steps
};

/** One traced request's time in one stage (trace.json): it joined the stage's queue at `enter`, a replica began its
 * service at `begin` (an LLM stage: first admitted to a running batch) and it left the stage at `end`. */
struct ServingSpan {
  std::uint32_t request = 0; ///< in sending order, from 0
  std::uint32_t stage = 0;
  std::int32_t replica = 0; ///< within the stage (an LLM stage: the replica it finished on)
  double enter = 0.0, begin = 0.0, end = 0.0;
};

/** What happened to a traced request at an instant: dropped at a stage's full queue, or preempted from an LLM
 * replica's running batch (its KV cache freed, to be recomputed). */
struct ServingMark {
  enum class Kind : std::uint8_t { Dropped, Preempted };
  std::uint32_t request = 0;
  std::uint32_t stage = 0;
  Kind kind = Kind::Dropped;
  double time = 0.0;
};

/** Requests whose spans a run records: the first this many sent (a trace of every request of a long run would be
 * gigabytes; these show the stages' batching and queueing at the start, warm-up included). */
constexpr std::uint32_t kTracedRequests = 1000;

struct ServingRunResult {
  std::vector<ServingStageRaw> stages;
  std::vector<ServingSpan> spans;  ///< the first kTracedRequests requests' stages, in the order they left them
  std::vector<ServingMark> marks;  ///< the same requests' drops and preemptions, in time order
  std::vector<double> latency;     ///< s, end to end, measured items, in completion order
  std::uint64_t sent = 0;          ///< requests sent
  std::uint64_t answered = 0;      ///< requests through every stage
  std::uint64_t dropped = 0;       ///< requests dropped at some stage
  std::uint64_t measured_sent = 0; ///< sent at or after the warm-up
  std::uint64_t measured_dropped = 0;
  std::uint64_t answered_in_window = 0; ///< answered at or after the warm-up
  double window_begin = 0.0;            ///< s: the warm-up's end
  double end = 0.0;                     ///< s: the last answer or drop
  std::uint64_t messages = 0;           ///< SimGrid communications between pools
  std::uint64_t bytes_sent = 0;         ///< their bytes
  std::uint64_t sleeps = 0;             ///< services and delays simulated as sleeps
  std::uint64_t actors = 0;
  NetworkConfig network;
};

/** A latency sample's summary; every "_ci" is the half-width of a 95% confidence interval from batch means (the
 * values in completion order cut into `batches` consecutive batches, Student's t on the batches' figures). */
struct LatencySummary {
  std::uint64_t count = 0;
  double mean = 0.0, mean_ci = 0.0;
  double p50 = 0.0, p50_ci = 0.0;
  double p90 = 0.0, p90_ci = 0.0;
  double p95 = 0.0, p95_ci = 0.0;
  double p99 = 0.0, p99_ci = 0.0;
  double max = 0.0;
};

/** Batches of the batch-means intervals (fewer when there are fewer than 10 values per batch). */
inline constexpr int kLatencyBatches = 20;

/** The q-quantile (0..1) of `sorted` by linear interpolation between order statistics; 0 when empty. */
double quantile_of_sorted(const std::vector<double>& sorted, double q);

/** The CDF of `values` as 101 quantiles, at q = 0, 0.01, .., 1 (the smallest, each percentile, the largest); empty
 * when `values` is. */
std::vector<double> percent_quantiles(const std::vector<double>& values);

/** Summarises `values` (in completion order). */
LatencySummary summarize_latency(const std::vector<double>& values, int batches = kLatencyBatches);

/** Queueing closed forms (arrival rate lambda, service rate mu per server, in 1/s). */
namespace queueing {
/** M/M/1 mean time in system, 1 / (mu - lambda). */
double mm1_time_in_system(double lambda, double mu);
/** Erlang C: the probability that an arrival waits in M/M/c. */
double erlang_c(int c, double lambda, double mu);
/** M/M/c mean time in system: C / (c mu - lambda) + 1 / mu. */
double mmc_time_in_system(int c, double lambda, double mu);
/** M/D/1 mean time in system by Pollaczek-Khinchine: 1/mu + rho / (2 mu (1 - rho)). */
double md1_time_in_system(double lambda, double mu);
/** M/M/1/K: the probability that an arrival finds K in the system (and is lost); K counts the one in service. */
double mm1k_loss(int k, double lambda, double mu);
/** GI/M/1 with gamma gaps between arrivals (rate lambda, coefficient of variation cv) and exponential service at mu
 * (Kleinrock, Queueing Systems I, 6.4): W = 1 / (mu (1 - sigma)), sigma the root in (0, 1) of
 * sigma = A*(mu (1 - sigma)), A*(s) = (1 + s cv^2 / lambda)^(-1 / cv^2) the gaps' Laplace transform. cv = 1 is M/M/1.
 */
double gm1_gamma_time_in_system(double lambda, double cv, double mu);
/** The interactive response-time law: R = N / X - Z. */
double interactive_response_time(int clients, double throughput, double think_time);
} // namespace queueing

} // namespace partsim
