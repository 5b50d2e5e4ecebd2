// The parameter-server engine: workers pull, compute and push over the simulated network; shards answer pulls and
// apply gradients in arrival order; a gate holds workers as the policy asks (docs/stale-gradients.md).
#include "partsim/engine/ps_engine.hpp"

#include "partsim/common/error.hpp"
#include "partsim/common/random.hpp"
#include "platform.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/ConditionVariable.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <simgrid/s4u/Mutex.hpp>
#include <xbt/log.h>

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace partsim {

namespace {

/** What a worker sends a shard: a pull request, or a gradient computed from the version it pulled. */
struct ToShard {
  bool push = false;
  int worker = 0;
  std::int64_t pulled_version = 0;
};

/** A shard's parameters, as of `version`. */
struct Parameters {
  int shard = 0;
  std::int64_t version = 0;
};

class PsRun {
 public:
  PsRun(const PsPlan& plan, PsRunResult& result, std::uint64_t seed) : plan_(plan), result_(result) {
    const auto workers = static_cast<std::size_t>(plan.workers());
    const auto shards = static_cast<std::size_t>(plan.shards());
    result_.workers.resize(workers);
    result_.shards.resize(shards);
    completed_.assign(workers, 0);
    applied_.assign(workers, std::vector<std::int64_t>(shards, 0));
    pulled_.assign(workers, std::vector<std::int64_t>(shards, 0));
    for (std::int64_t t = 0; t < plan.steps; ++t)
      if (plan.pushes_at(t)) push_steps_.push_back(t);
    for (std::size_t w = 0; w < workers; ++w)
      rngs_.emplace_back(SplitMix64(seed ^ (0x5053'0000'0000'0000ULL + w)).next());
  }

  void start(const engine::Platform& platform) {
    for (int k = 0; k < plan_.shards(); ++k) {
      sg4::Host* host = platform.gpus.at(static_cast<std::size_t>(plan_.shard_gpu[static_cast<std::size_t>(k)]));
      sg4::Mailbox* mailbox = sg4::Mailbox::by_name(fmt::format("ps-shard-{}", k));
      sg4::ActorPtr actor =
          sg4::Actor::create(fmt::format("ps-shard-{}", k), host, [this, k, mailbox] { shard(k, mailbox); });
      actor->daemonize();
      mailbox->set_receiver(actor);
      shard_mailboxes_.push_back(mailbox);
    }
    for (int w = 0; w < plan_.workers(); ++w) {
      sg4::Host* host = platform.gpus.at(static_cast<std::size_t>(plan_.worker_gpu[static_cast<std::size_t>(w)]));
      sg4::Mailbox* mailbox = sg4::Mailbox::by_name(fmt::format("ps-worker-{}", w));
      worker_mailboxes_.push_back(mailbox);
      sg4::ActorPtr actor =
          sg4::Actor::create(fmt::format("ps-worker-{}", w), host, [this, w, mailbox] { worker(w, mailbox); });
      mailbox->set_receiver(actor);
    }
  }

 private:
  static double now() { return sg4::Engine::get_clock(); }

  std::int64_t slowest() const { return *std::min_element(completed_.begin(), completed_.end()); }

  /** The shard's version: gradients applied, or whole steps (rounds) of all workers when the policy aggregates. */
  std::int64_t version(const PsShardRaw& s) const {
    const auto gradients = static_cast<std::int64_t>(s.gradients);
    return plan_.spec.aggregates() ? gradients / plan_.workers() : gradients;
  }

  void shard(int k, sg4::Mailbox* mailbox) {
    PsShardRaw& raw = result_.shards[static_cast<std::size_t>(k)];
    for (;;) {
      const std::unique_ptr<ToShard> message = mailbox->get_unique<ToShard>();
      const auto w = static_cast<std::size_t>(message->worker);
      if (!message->push) {
        raw.bytes_received += plan_.spec.request_bytes;
        raw.bytes_sent += plan_.shard_parameter_bytes();
        ++result_.messages;
        worker_mailboxes_[w]
            ->put_init(new Parameters{k, version(raw)}, static_cast<std::uint64_t>(plan_.shard_parameter_bytes()))
            ->detach();
        continue;
      }
      raw.bytes_received += plan_.shard_gradient_bytes();
      const double update = plan_.shard_update_time();
      if (update > 0) {
        sg4::this_actor::sleep_for(update);
        ++result_.sleeps;
        raw.updating += update;
      }
      PsWorkerRaw& worker = result_.workers[w];
      const std::int64_t staleness = version(raw) - message->pulled_version;
      PARTSIM_CHECK(staleness >= 0) << "a gradient older than nothing: staleness " << staleness;
      const auto index = static_cast<std::size_t>(staleness);
      if (worker.staleness_histogram.size() <= index) worker.staleness_histogram.resize(index + 1, 0);
      ++worker.staleness_histogram[index];
      worker.staleness_sum += static_cast<double>(staleness);
      ++worker.staleness_samples;
      ++raw.gradients;
      raw.version = version(raw);
      std::vector<std::int64_t>& applied = applied_[w];
      ++applied[static_cast<std::size_t>(k)];
      const std::int64_t pushes_done = *std::min_element(applied.begin(), applied.end());
      if (pushes_done > 0) {
        const std::int64_t done =
            plan_.spec.push_interval() == 1 ? pushes_done : push_steps_[static_cast<std::size_t>(pushes_done - 1)] + 1;
        if (done != completed_[w]) {
          completed_[w] = done;
          changed_->notify_all();
        }
      }
    }
  }

  /** Waits until step t may start under the policy's bound; returns the steps it starts ahead of the slowest. */
  /** Waits until step t may start under the policy's bound, or the shared budget is spent. */
  void gate(std::int64_t t, PsWorkerRaw& raw) {
    const int bound = plan_.spec.gate_bound();
    auto may_go = [&] { return budget_spent() || t - slowest() <= bound; };
    if (bound >= 0 && !may_go()) {
      const double begin = now();
      std::unique_lock lock(*mutex_);
      changed_->wait(lock, may_go);
      raw.blocked += now() - begin;
    }
  }

  bool budget_spent() const { return plan_.shares_steps() && claimed_ >= plan_.steps * plan_.workers(); }

  void pull(int w, sg4::Mailbox* mailbox, PsWorkerRaw& raw) {
    const double begin = now();
    for (int k = 0; k < plan_.shards(); ++k) {
      ++result_.messages;
      shard_mailboxes_[static_cast<std::size_t>(k)]
          ->put_init(new ToShard{false, w, 0}, static_cast<std::uint64_t>(plan_.spec.request_bytes))
          ->detach();
    }
    for (int k = 0; k < plan_.shards(); ++k) {
      const std::unique_ptr<Parameters> parameters = mailbox->get_unique<Parameters>();
      pulled_[static_cast<std::size_t>(w)][static_cast<std::size_t>(parameters->shard)] = parameters->version;
    }
    raw.pull += now() - begin;
  }

  void push(int w, PsWorkerRaw& raw) {
    const double begin = now();
    std::vector<sg4::CommPtr> comms;
    for (int k = 0; k < plan_.shards(); ++k) {
      ++result_.messages;
      const std::int64_t pulled = pulled_[static_cast<std::size_t>(w)][static_cast<std::size_t>(k)];
      comms.push_back(shard_mailboxes_[static_cast<std::size_t>(k)]->put_async(
          new ToShard{true, w, pulled}, static_cast<std::uint64_t>(plan_.shard_gradient_bytes())));
    }
    sg4::Comm::wait_all(comms);
    raw.push += now() - begin;
    ++raw.pushes;
  }

  void worker(int w, sg4::Mailbox* mailbox) {
    const auto index = static_cast<std::size_t>(w);
    PsWorkerRaw& raw = result_.workers[index];
    const ComputeJitter* jitter = plan_.spec.jitter ? &*plan_.spec.jitter : nullptr;
    for (std::int64_t t = 0; plan_.shares_steps() || t < plan_.steps; ++t) {
      if (plan_.pulls_at(t)) gate(t, raw);
      if (plan_.shares_steps()) {
        if (budget_spent()) {
          changed_->notify_all(); // workers held by the bound may stop too
          break;
        }
        if (++claimed_ == plan_.steps * plan_.workers()) changed_->notify_all();
      }
      if (plan_.pulls_at(t)) {
        raw.max_lead = std::max(raw.max_lead, t - slowest());
        pull(w, mailbox, raw);
      }
      double compute = plan_.step_time[index];
      if (jitter != nullptr) compute *= sample(TimeDistribution{jitter->kind, 1.0, jitter->cv, nullptr}, rngs_[index]);
      if (compute > 0) {
        sg4::this_actor::sleep_for(compute);
        ++result_.sleeps;
        raw.compute += compute;
      }
      ++raw.steps;
      if (plan_.shares_steps() || plan_.pushes_at(t)) push(w, raw);
    }
    // Done when its last gradient is applied on every shard.
    if (completed_[index] < raw.steps) {
      std::unique_lock lock(*mutex_);
      changed_->wait(lock, [&] { return completed_[index] >= raw.steps; });
    }
    raw.finish = now();
  }

  const PsPlan& plan_;
  PsRunResult& result_;
  std::vector<std::int64_t> completed_;            ///< by worker: steps whose gradients every shard applied
  std::vector<std::vector<std::int64_t>> applied_; ///< by worker and shard: its gradients applied there
  std::vector<std::vector<std::int64_t>> pulled_;  ///< by worker and shard: the version last pulled
  std::vector<std::int64_t> push_steps_;           ///< local_sgd: the steps that end with a push
  std::int64_t claimed_ = 0;                       ///< async and ssp: worker steps taken from the shared budget
  std::vector<Xoshiro256StarStar> rngs_;           ///< by worker: its jitter
  std::vector<sg4::Mailbox*> shard_mailboxes_;
  std::vector<sg4::Mailbox*> worker_mailboxes_;
  sg4::MutexPtr mutex_ = sg4::Mutex::create();
  sg4::ConditionVariablePtr changed_ = sg4::ConditionVariable::create(); ///< a worker completed a step
};

} // namespace

PsRunResult simulate_parameter_server(const Scenario& scenario, const PsPlan& plan) {
  const double events = ps_planned_events(plan);
  if (events > static_cast<double>(scenario.run.max_events))
    throw InputError(scenario.source, "/run/max_events",
                     fmt::format("this run would simulate {:.3g} messages and sleeps, more than the limit of {}; "
                                 "reduce workers, shards or iterations, or raise /run/max_events",
                                 events, scenario.run.max_events));
  xbt_log_control_set("root.thresh:warning xbt_cfg.thresh:warning");
  // Not destroyed: as in simulate(), SimGrid's exit handler does it, and one engine per process anyway.
  auto& engine = engine::new_engine("partsim");
  PsRunResult result;
  sg4::Actor::on_creation_cb([&result](sg4::Actor&) { ++result.actors; });
  result.network = engine::configure_network(scenario.run.network_model);
  engine::configure_contexts(0); // no guard-page rule here: these runs have far fewer actors
  const engine::Platform platform =
      engine::build_platform(scenario.cluster, workload_data_type(scenario.workload), false);
  // On the heap and never freed: the shards, daemons, are still blocked on their mailboxes when the run ends
  // (SimGrid tears them down at exit); kept reachable until then (keep_until_exit).
  auto* run = new PsRun(plan, result, scenario.run.seed); // NOLINT(cppcoreguidelines-owning-memory)
  engine::keep_until_exit(run);
  run->start(platform);
  bool deadlock = false;
  sg4::Engine::on_deadlock_cb([&deadlock] { deadlock = true; });
  engine.run();
  PARTSIM_CHECK(!deadlock) << "the parameter-server run deadlocked";
  for (const PsWorkerRaw& w : result.workers) result.makespan = std::max(result.makespan, w.finish);
  return result;
}

} // namespace partsim
