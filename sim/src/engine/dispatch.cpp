// Run-time balancing on SimGrid: workers request work from a dispatcher actor on the coordinator host; requests
// and work items are real messages, the dispatch overhead is time on the coordinator, and work stealing moves
// samples between GPU hosts. Policies: static, work_queue, measured_rate, work_stealing (see docs/engine.md).
#include "dispatch.hpp"

#include "program.hpp"

#include "partsim/common/error.hpp"
#include "partsim/plan/dispatch_policy.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/ConditionVariable.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <simgrid/s4u/Mutex.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
#include <numeric>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace partsim::engine {

namespace {

/** A worker asks for work and reports how its last chunk went. */
struct Request {
  int rank = 0;
  std::uint64_t samples_done = 0;
  double compute_time = 0.0;
};

/** State of the balancing shared by the dispatcher and the workers. */
struct Balancer {
  Balancer(RunContext& c, const DynamicWork& w) : ctx(c), work(w), policy(w) {}

  RunContext& ctx;
  const DynamicWork& work;
  sg4::Mailbox* coordinator_inbox = nullptr;
  std::vector<sg4::Host*> hosts;    ///< per rank
  DispatchPolicy policy;            ///< the dispatcher's decisions (pure)
  std::vector<std::uint64_t> queue; ///< work stealing: samples each rank still holds
  std::uint64_t taken = 0;          ///< work stealing: samples taken from a queue for computing
  sg4::MutexPtr mutex = sg4::Mutex::create();
  sg4::ConditionVariablePtr refilled = sg4::ConditionVariable::create(); ///< a queue got samples
  BalancingStats stats;

  std::uint64_t bytes_of(std::uint64_t samples) const {
    return static_cast<std::uint64_t>(std::llround(static_cast<double>(samples) * work.balancing.sample_bytes));
  }
  std::uint64_t request_size() const { return static_cast<std::uint64_t>(std::llround(work.balancing.request_bytes)); }
};

/** Runs `samples` on the calling worker's GPU. */
void compute(Balancer& b, RankTimeline& timeline, std::uint64_t samples, std::uint64_t& done, double& took) {
  const double begin = sg4::Engine::get_clock();
  if (samples > 0 && b.work.amount_per_sample > 0) execute(static_cast<double>(samples) * b.work.amount_per_sample);
  const double end = sg4::Engine::get_clock();
  timeline.record(IntervalKind::Compute, begin, end);
  timeline.samples += samples;
  done = samples;
  took = end - begin;
  ++b.ctx.result.executions;
  b.ctx.event_done();
}

void dispatcher(Balancer& b) {
  std::vector<std::unique_ptr<Request>> pending;
  while (b.policy.running() > 0) {
    // Take every request that is waiting; the policy says in which order they are served.
    pending.push_back(b.coordinator_inbox->get_unique<Request>());
    while (b.coordinator_inbox->ready()) pending.push_back(b.coordinator_inbox->get_unique<Request>());
    for (const auto& request : pending) {
      b.stats.bytes_received += b.request_size();
      b.policy.record(request->rank, request->samples_done, request->compute_time);
    }
    std::stable_sort(pending.begin(), pending.end(),
                     [&](const auto& x, const auto& y) { return b.policy.serves_before(x->rank, y->rank); });
    for (const auto& request : pending) {
      const std::uint64_t chunk = b.policy.assign(request->rank);
      if (chunk > 0 && b.work.balancing.dispatch_overhead > 0) {
        sg4::this_actor::sleep_for(b.work.balancing.dispatch_overhead);
        b.stats.coordinator_busy += b.work.balancing.dispatch_overhead;
      }
      // An assignment: `chunk` samples (none means "no more work"), sized by the samples' bytes.
      const std::uint64_t size = chunk > 0 ? b.bytes_of(chunk) : b.request_size();
      send_eager(b.ctx.mailboxes[static_cast<std::size_t>(request->rank)], size, chunk);
      b.stats.bytes_sent += size;
      ++b.ctx.result.messages;
      b.ctx.event_done();
      if (chunk > 0) ++b.stats.dispatches;
    }
    pending.clear();
  }
}

void send_request(Balancer& b, int rank, RankTimeline& timeline, std::uint64_t done, double took) {
  auto request = std::make_unique<Request>(Request{rank, done, took});
  b.coordinator_inbox->put_init(request.release(), b.request_size())->detach();
  timeline.bytes_sent += b.request_size();
  ++timeline.messages_sent;
  ++b.ctx.result.messages;
  b.ctx.event_done();
}

/** Work stealing: take half of the most loaded rank's remaining samples. Returns 0 when nobody has any left. */
std::uint64_t steal(Balancer& b, int rank, RankTimeline& timeline) {
  const Steal choice = choose_steal(b.queue);
  if (choice.samples == 0) return 0;
  const std::size_t victim = choice.victim;
  const std::uint64_t stolen = choice.samples;
  b.queue[victim] -= stolen;
  RankTimeline& victim_timeline = b.ctx.result.ranks[victim];
  sg4::Host* thief = b.hosts[static_cast<std::size_t>(rank)];
  // The steal request, the victim's handling, then the samples themselves, all on the platform.
  double begin = sg4::Engine::get_clock();
  sg4::Comm::sendto(thief, b.hosts[victim], b.request_size());
  timeline.record(IntervalKind::Communication, begin, sg4::Engine::get_clock());
  timeline.bytes_sent += b.request_size();
  victim_timeline.bytes_received += b.request_size();
  begin = sg4::Engine::get_clock();
  sg4::this_actor::sleep_for(b.work.balancing.dispatch_overhead);
  timeline.record(IntervalKind::Wait, begin, sg4::Engine::get_clock());
  begin = sg4::Engine::get_clock();
  sg4::Comm::sendto(b.hosts[victim], thief, b.bytes_of(stolen));
  timeline.record(IntervalKind::Communication, begin, sg4::Engine::get_clock());
  victim_timeline.bytes_sent += b.bytes_of(stolen);
  timeline.bytes_received += b.bytes_of(stolen);
  ++timeline.messages_sent;
  ++victim_timeline.messages_sent;
  b.ctx.result.messages += 2;
  ++b.stats.steals;
  return stolen;
}

void worker(Balancer& b, int rank) {
  RankTimeline& timeline = b.ctx.result.ranks[static_cast<std::size_t>(rank)];
  const auto me = static_cast<std::size_t>(rank);
  std::uint64_t done = 0;
  double took = 0.0;
  if (b.work.balancing.policy == BalancingPolicy::WorkStealing) {
    // Refills happen under the mutex, so that a rank that found nothing to steal cannot miss one before waiting.
    auto refill = [&](std::uint64_t samples) {
      const std::unique_lock lock(*b.mutex);
      b.queue[me] += samples;
      b.refilled->notify_all();
    };
    send_request(b, rank, timeline, 0, 0.0);
    refill(receive_eager(b.ctx.mailboxes[me], timeline)->samples);
    const std::uint64_t chunk = b.work.balancing.chunk_samples;
    while (true) {
      if (b.queue[me] == 0) {
        const std::uint64_t stolen = steal(b, rank, timeline);
        if (stolen > 0) {
          refill(stolen);
        } else {
          // Nothing to steal now. Samples still on their way (a share not yet delivered, a steal in flight) will
          // land in some queue: wait for that, unless everything has been taken.
          std::unique_lock lock(*b.mutex);
          const std::uint64_t queued = std::accumulate(b.queue.begin(), b.queue.end(), std::uint64_t{0});
          if (b.taken + queued == b.work.total_samples) break;
          const double begin = sg4::Engine::get_clock();
          b.refilled->wait(lock);
          timeline.record(IntervalKind::Wait, begin, sg4::Engine::get_clock());
          continue;
        }
      }
      const std::uint64_t take = std::min(chunk, b.queue[me]);
      b.queue[me] -= take;
      b.taken += take;
      compute(b, timeline, take, done, took);
    }
  } else {
    while (true) {
      send_request(b, rank, timeline, done, took);
      const auto assignment = receive_eager(b.ctx.mailboxes[me], timeline);
      if (assignment->samples == 0) break;
      compute(b, timeline, assignment->samples, done, took);
    }
  }
  timeline.finish = sg4::Engine::get_clock();
}

} // namespace

void start_balancing(RunContext& ctx, const Platform& platform) {
  PARTSIM_CHECK(ctx.plan.dynamic() != nullptr) << "no dynamic work in the plan";
  PARTSIM_CHECK(platform.coordinator != nullptr) << "no coordinator host";
  const std::size_t n = ctx.plan.ranks.size();
  // Owned by the engine's run: the actors finish before simulate() returns and reads the stats.
  auto balancer = std::make_shared<Balancer>(ctx, *ctx.plan.dynamic());
  balancer->coordinator_inbox = sg4::Mailbox::by_name("coordinator");
  balancer->queue.assign(n, 0);
  balancer->stats.policy = to_string(ctx.plan.dynamic()->balancing.policy);
  for (const RankProgram& program : ctx.plan.ranks)
    balancer->hosts.push_back(platform.gpus.at(static_cast<std::size_t>(program.gpu)));

  // Requests and assignments are sent eagerly: each mailbox has a permanent receiver, so a message flows to its
  // host as soon as it is sent rather than when the receiver asks for it (rendezvous).
  create_receiving_actor("dispatcher", platform.coordinator, balancer->coordinator_inbox, [balancer] {
    dispatcher(*balancer);
    balancer->ctx.result.balancing = balancer->stats;
  });
  for (std::size_t r = 0; r < n; ++r)
    create_receiving_actor("rank-" + std::to_string(r), balancer->hosts[r], ctx.mailboxes[r], [balancer, r] {
      worker(*balancer, static_cast<int>(r));
      balancer->ctx.result.balancing = balancer->stats; // the last actor to finish leaves the final figures
    });
}

} // namespace partsim::engine
