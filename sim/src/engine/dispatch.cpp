// Run-time balancing on SimGrid: workers request work from a dispatcher actor on the coordinator host; requests
// and work items are real messages, the dispatch overhead is time on the coordinator, and work stealing moves
// samples between GPU hosts. Policies: static, work_queue, measured_rate, work_stealing (see docs/engine.md).
#include "dispatch.hpp"

#include "program.hpp"

#include "partsim/common/error.hpp"

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
  Balancer(RunContext& c, const DynamicWork& w) : ctx(c), work(w) {}

  RunContext& ctx;
  const DynamicWork& work;
  sg4::Mailbox* coordinator_inbox = nullptr;
  std::vector<sg4::Host*> hosts;     ///< per rank
  std::vector<std::uint64_t> queue;  ///< work stealing: samples each rank still holds
  std::vector<double> measured_rate; ///< samples/s of each rank's last chunk, 0 until measured
  std::uint64_t taken = 0;           ///< work stealing: samples taken from a queue for computing
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

/** Chunk for `rank` under the policy, given the samples not yet handed out. 0: nothing more for this rank. */
std::uint64_t next_chunk(Balancer& b, int rank, std::uint64_t remaining, std::vector<std::uint64_t>& static_left,
                         const std::vector<bool>& active) {
  const Balancing& policy = b.work.balancing;
  switch (policy.policy) {
  case BalancingPolicy::Static:
  case BalancingPolicy::WorkStealing: {
    const std::uint64_t chunk = static_left[static_cast<std::size_t>(rank)];
    static_left[static_cast<std::size_t>(rank)] = 0;
    return chunk;
  }
  case BalancingPolicy::WorkQueue:
    return std::min(policy.chunk_samples, remaining);
  case BalancingPolicy::MeasuredRate: {
    // A rank not yet measured gets one small probe chunk. Then weighted guided self-scheduling: half of this
    // rank's share of what is left, by current measured rates (nominal rates for ranks still unmeasured), never
    // below chunk_samples.
    if (b.measured_rate[static_cast<std::size_t>(rank)] <= 0) return std::min(policy.chunk_samples, remaining);
    auto rate = [&](std::size_t r) { return b.measured_rate[r] > 0 ? b.measured_rate[r] : b.work.nominal_rate[r]; };
    double total = 0.0;
    double fastest = 0.0;
    for (std::size_t r = 0; r < active.size(); ++r)
      if (active[r]) {
        total += rate(r);
        fastest = std::max(fastest, rate(r));
      }
    const double mine = rate(static_cast<std::size_t>(rank));
    const auto chunk = static_cast<std::uint64_t>(std::ceil(static_cast<double>(remaining) * mine / total / 2.0));
    // The smallest chunk is chunk_samples for the fastest rank and proportionally less for slower ones, so that
    // the last chunks take the same time everywhere.
    const auto smallest = std::max<std::uint64_t>(
        1, static_cast<std::uint64_t>(std::llround(static_cast<double>(policy.chunk_samples) * mine / fastest)));
    return std::min(remaining, std::max(chunk, smallest));
  }
  }
  return 0;
}

void dispatcher(Balancer& b) {
  const std::size_t n = b.ctx.plan.ranks.size();
  std::vector<std::uint64_t> static_left = b.work.static_samples;
  std::vector<bool> active(n, true);
  std::uint64_t remaining = b.work.total_samples;
  std::size_t running = n;
  std::vector<std::unique_ptr<Request>> pending;
  while (running > 0) {
    // Take every request that is waiting: the measured-rate policy serves the fastest measured worker first.
    pending.push_back(b.coordinator_inbox->get_unique<Request>());
    while (b.coordinator_inbox->ready()) pending.push_back(b.coordinator_inbox->get_unique<Request>());
    for (const auto& request : pending) {
      b.stats.bytes_received += b.request_size();
      if (request->samples_done > 0 && request->compute_time > 0)
        b.measured_rate[static_cast<std::size_t>(request->rank)] =
            static_cast<double>(request->samples_done) / request->compute_time;
    }
    if (b.work.balancing.policy == BalancingPolicy::MeasuredRate)
      std::stable_sort(pending.begin(), pending.end(), [&](const auto& x, const auto& y) {
        return b.measured_rate[static_cast<std::size_t>(x->rank)] > b.measured_rate[static_cast<std::size_t>(y->rank)];
      });
    for (const auto& request : pending) {
      const int rank = request->rank;
      std::uint64_t chunk = next_chunk(b, rank, remaining, static_left, active);
      chunk = std::min(chunk, remaining);
      if (chunk > 0 && b.work.balancing.dispatch_overhead > 0) {
        sg4::this_actor::sleep_for(b.work.balancing.dispatch_overhead);
        b.stats.coordinator_busy += b.work.balancing.dispatch_overhead;
      }
      // An assignment: `chunk` samples (none means "no more work"), sized by the samples' bytes.
      const std::uint64_t size = chunk > 0 ? b.bytes_of(chunk) : b.request_size();
      send_eager(b.ctx.mailboxes[static_cast<std::size_t>(rank)], size, chunk);
      b.stats.bytes_sent += size;
      ++b.ctx.result.messages;
      b.ctx.event_done();
      remaining -= chunk;
      if (chunk > 0) ++b.stats.dispatches;
      // Work stealing: after its initial share a worker never asks again.
      if (chunk == 0 || b.work.balancing.policy == BalancingPolicy::WorkStealing) {
        active[static_cast<std::size_t>(rank)] = false;
        --running;
      }
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
  const auto victim = static_cast<std::size_t>(std::max_element(b.queue.begin(), b.queue.end()) - b.queue.begin());
  if (b.queue[victim] == 0) return 0;
  const std::uint64_t stolen = (b.queue[victim] + 1) / 2;
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
  PARTSIM_CHECK(ctx.plan.dynamic.has_value()) << "no dynamic work in the plan";
  PARTSIM_CHECK(platform.coordinator != nullptr) << "no coordinator host";
  const std::size_t n = ctx.plan.ranks.size();
  // Owned by the engine's run: the actors finish before simulate() returns and reads the stats.
  auto balancer = std::make_shared<Balancer>(ctx, *ctx.plan.dynamic);
  balancer->coordinator_inbox = sg4::Mailbox::by_name("coordinator");
  balancer->queue.assign(n, 0);
  balancer->measured_rate.assign(n, 0.0);
  balancer->stats.policy = to_string(ctx.plan.dynamic->balancing.policy);
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
