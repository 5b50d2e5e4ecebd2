// The replay of a long training run over failures and checkpoints (model/reliability_replay.hpp).
#include "partsim/model/reliability_replay.hpp"

#include "partsim/common/error.hpp"
#include "partsim/common/random.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <queue>
#include <utility>

namespace partsim {

namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

/** The next failure among all units: each unit's next failure time in a heap, drawn from its kind's law. */
class FailureClock {
 public:
  explicit FailureClock(const ReplayInput& in)
      : rng_(in.seed), shape_(in.weibull_shape), weibull_(in.distribution == FailureDistribution::Weibull) {
    for (const ComponentFailures& c : in.components) {
      PARTSIM_CHECK(c.mtbf > 0.0 && c.units >= 0) << c.units << " units of MTBF " << c.mtbf;
      // A Weibull of shape k and scale mtbf / Gamma(1 + 1/k) has mean mtbf.
      const double scale = weibull_ ? c.mtbf / std::tgamma(1.0 + 1.0 / shape_) : c.mtbf;
      kinds_.push_back(Kind{c.component, scale, true});
      const auto kind = static_cast<std::uint32_t>(kinds_.size() - 1);
      for (std::int64_t u = 0; u < c.units; ++u) heap_.emplace(draw(kinds_[kind]), kind);
    }
    if (!in.failure_times.empty()) {
      kinds_.push_back(Kind{FailureComponent::Listed, 0.0, false});
      const auto kind = static_cast<std::uint32_t>(kinds_.size() - 1);
      for (double t : in.failure_times) heap_.emplace(t, kind);
    }
  }

  /** The time of the next failure; +inf when none is left. */
  double next() const { return heap_.empty() ? kNever : heap_.top().first; }

  /** Takes the next failure; its unit is replaced by a new one at that time. */
  FailureComponent take() {
    const auto [time, kind] = heap_.top();
    heap_.pop();
    if (kinds_[kind].renews) heap_.emplace(time + draw(kinds_[kind]), kind);
    return kinds_[kind].component;
  }

 private:
  struct Kind {
    FailureComponent component;
    double scale; ///< s: the mean (exponential) or the Weibull scale
    bool renews;
  };

  double draw(const Kind& kind) {
    const double survival = 1.0 - rng_.uniform(); // in (0, 1]
    const double e = -std::log(survival);         // a unit exponential
    return weibull_ ? kind.scale * std::pow(e, 1.0 / shape_) : kind.scale * e;
  }

  Xoshiro256StarStar rng_;
  double shape_;
  bool weibull_;
  std::vector<Kind> kinds_;
  using Entry = std::pair<double, std::uint32_t>; // (time, kind): ties broken by kind, deterministically
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap_;
};

} // namespace

ReplayResult replay_reliability(const ReplayInput& in) {
  PARTSIM_CHECK(in.iteration_time > 0.0 && in.iterations > 0 && in.checkpoint_every >= 1)
      << in.iteration_time << " s x " << in.iterations << " every " << in.checkpoint_every;
  PARTSIM_CHECK(!in.elastic || (in.replicas >= 1 && in.min_replicas >= 1 && in.min_replicas <= in.replicas))
      << in.min_replicas << " of " << in.replicas << " replicas";
  FailureClock clock(in);
  ReplayResult r;
  const auto iterations = static_cast<double>(in.iterations);
  const auto every = static_cast<double>(in.checkpoint_every);
  double t = 0.0;
  double progress = 0.0;        // iterations trained since the start, less what was rolled back
  double durable = 0.0;         // iterations saved by the last durable checkpoint
  double trained = 0.0;         // s of training behind `progress`
  double trained_durable = 0.0; // s of training behind `durable`
  struct Pending {
    double iteration;
    double durable_at;
    double trained;
  };
  std::optional<Pending> pending; // async: the checkpoint being written
  // Elastic: replicas out of the job, and when each comes back.
  std::int64_t down = 0;
  std::priority_queue<double, std::vector<double>, std::greater<>> rejoins;
  auto step = [&] {
    return in.elastic ? in.iteration_time * static_cast<double>(in.replicas) / static_cast<double>(in.replicas - down)
                      : in.iteration_time;
  };
  auto event = [&](ReplayEvent::Kind kind, double time, FailureComponent component, double iteration) {
    if (r.events.size() < in.max_events)
      r.events.push_back(ReplayEvent{kind, time, component, static_cast<std::int64_t>(iteration)});
  };
  auto settle = [&](double until) {
    if (pending && pending->durable_at <= until) {
      durable = pending->iteration;
      trained_durable = pending->trained;
      event(ReplayEvent::Kind::Durable, pending->durable_at, FailureComponent::Gpu, durable);
      pending.reset();
    }
  };
  // A failure at clock.next() after `cut` s of training in the current segment: roll back, then recover (again on
  // each failure during the recovery).
  auto fail = [&](double cut) {
    double failed_at = clock.next();
    settle(failed_at);
    if (pending) {
      ++r.checkpoints_lost;
      pending.reset();
    }
    r.lost += trained + cut - trained_durable;
    trained = trained_durable;
    progress = durable;
    const double first = failed_at;
    double end = failed_at;
    for (;;) {
      const FailureComponent c = clock.take();
      ++r.failures;
      ++r.failures_by_component[c];
      event(ReplayEvent::Kind::Failure, failed_at, c, durable);
      end = std::max(end, failed_at + in.recovery);
      if (in.elastic) {
        const std::int64_t hit = std::min(in.replicas - down, in.replicas_hit[static_cast<std::size_t>(c)]);
        down += hit;
        for (std::int64_t i = 0; i < hit; ++i) rejoins.push(failed_at + in.repair);
        // Too few replicas left: wait for repairs, and re-form the job with them.
        while (in.replicas - down < in.min_replicas) {
          end = std::max(end, rejoins.top() + in.rejoin);
          rejoins.pop();
          --down;
        }
      }
      if (clock.next() >= end) break;
      failed_at = clock.next();
    }
    r.recovery += end - first;
    t = end;
    event(ReplayEvent::Kind::Resumed, t, FailureComponent::Gpu, durable);
  };

  while (progress < iterations) {
    // Elastic: replicas repaired by now rejoin, with a pause to re-form the job.
    if (in.elastic && !rejoins.empty() && rejoins.top() <= t) {
      while (!rejoins.empty() && rejoins.top() <= t) {
        rejoins.pop();
        --down;
      }
      if (clock.next() < t + in.rejoin) {
        r.recovery += clock.next() - t;
        fail(0.0);
        continue;
      }
      r.recovery += in.rejoin;
      t += in.rejoin;
      settle(t);
    }
    const double target = std::min(iterations, (std::floor(progress / every) + 1.0) * every);
    const double segment = (target - progress) * step();
    const double end = t + segment;
    const double rejoin_at = in.elastic && !rejoins.empty() ? rejoins.top() : kNever;
    if (clock.next() < end && clock.next() <= rejoin_at) {
      fail(clock.next() - t);
      continue;
    }
    if (rejoin_at < end) {
      // Replicas come back during the segment: train up to then at this speed, then at the new one.
      progress += (rejoin_at - t) / step();
      trained += rejoin_at - t;
      t = rejoin_at;
      settle(t);
      continue;
    }
    trained += segment;
    t = end;
    progress = target;
    settle(t);
    if (progress >= iterations) break;
    ++r.checkpoints;
    event(ReplayEvent::Kind::Checkpoint, t, FailureComponent::Gpu, progress);
    // An async checkpoint's copy waits for the previous write to free the host buffer.
    const double start = pending ? std::max(t, pending->durable_at) : t;
    const double block_end = start + in.checkpoint_block;
    if (clock.next() < block_end) {
      r.checkpoint += clock.next() - t;
      ++r.checkpoints_lost;
      fail(0.0);
      continue;
    }
    r.checkpoint += block_end - t;
    t = block_end;
    settle(t);
    if (in.checkpoint_write > 0.0) {
      pending = Pending{progress, t + in.checkpoint_write, trained};
    } else {
      durable = progress;
      trained_durable = trained;
      event(ReplayEvent::Kind::Durable, t, FailureComponent::Gpu, durable);
    }
  }
  r.total = t;
  r.useful = iterations * in.iteration_time;
  // The kept training beyond the full-speed time: iterations run on fewer replicas (elastic).
  r.degraded = in.elastic ? std::max(0.0, trained - r.useful) : 0.0;
  return r;
}

double job_mtbf(const std::vector<ComponentFailures>& components) {
  double rate = 0.0;
  for (const ComponentFailures& c : components) rate += static_cast<double>(c.units) / c.mtbf;
  return rate > 0.0 ? 1.0 / rate : kNever;
}

double young_daly_interval(double checkpoint_cost, double mtbf) {
  return std::sqrt(2.0 * checkpoint_cost * mtbf);
}

double daly_expected_time(double work, double interval, double checkpoint_cost, double recovery, double mtbf) {
  return mtbf * std::exp(recovery / mtbf) * std::expm1((interval + checkpoint_cost) / mtbf) * work / interval;
}

double first_order_overhead(double interval, double checkpoint_cost, double recovery, double mtbf) {
  return checkpoint_cost / interval + (interval + checkpoint_cost) / (2.0 * mtbf) + recovery / mtbf;
}

} // namespace partsim
