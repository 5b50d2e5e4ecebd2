// SimGrid S4U engine: one actor per rank executing its program; collectives as point-to-point messages.
#include "partsim/engine.hpp"

#include "dispatch.hpp"
#include "partsim/error.hpp"
#include "platform.hpp"
#include "run_context.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <simgrid/version.h>
#include <xbt/log.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <memory>
#include <string>

namespace sg4 = simgrid::s4u;

namespace partsim {

namespace {

using engine::RunContext;

void run_compute(RunContext& ctx, RankTimeline& timeline, const ComputeStep& step) {
  timeline.samples += step.samples;
  if (step.amount <= 0.0) return;
  const double begin = sg4::Engine::get_clock();
  sg4::this_actor::execute(step.amount);
  timeline.record(IntervalKind::Compute, begin, sg4::Engine::get_clock());
  ++ctx.result.executions;
  ctx.event_done();
}

/** Records [posted, end of both transfers] as communication while either transfer moves data, wait otherwise. */
void record_transfers(RankTimeline& timeline, double posted, std::pair<double, double> a, std::pair<double, double> b) {
  if (b.first < a.first) std::swap(a, b);
  timeline.record(IntervalKind::Wait, posted, a.first);
  if (b.first <= a.second) {
    timeline.record(IntervalKind::Communication, a.first, std::max(a.second, b.second));
  } else {
    timeline.record(IntervalKind::Communication, a.first, a.second);
    timeline.record(IntervalKind::Wait, a.second, b.first);
    timeline.record(IntervalKind::Communication, b.first, b.second);
  }
}

/** Ring all-reduce: n-1 reduce-scatter then n-1 all-gather steps; in each step every rank sends one chunk to its
 * right neighbour and receives one from its left. Chunks are the gradient cut into n near-equal integer sizes. */
void run_ring_allreduce(RunContext& ctx, int rank, RankTimeline& timeline, const RingAllReduceStep& step) {
  const auto& group = ctx.plan.groups[static_cast<std::size_t>(step.group)];
  const auto n = static_cast<int>(group.size());
  const int pos = ctx.positions[static_cast<std::size_t>(step.group)][static_cast<std::size_t>(rank)];
  PARTSIM_CHECK(pos >= 0) << "rank " << rank << " is not in group " << step.group;
  if (n < 2) return;
  const int right = group[static_cast<std::size_t>((pos + 1) % n)];
  const int left = group[static_cast<std::size_t>((pos - 1 + n) % n)];
  auto& posted_at = ctx.ring_posted[static_cast<std::size_t>(step.group)];
  std::uint64_t& steps_begun = ctx.ring_steps[static_cast<std::size_t>(step.group)][static_cast<std::size_t>(rank)];
  sg4::Mailbox* outbox = ctx.mailboxes[static_cast<std::size_t>(right)];
  sg4::Mailbox* inbox = ctx.mailboxes[static_cast<std::size_t>(rank)];

  const std::uint64_t base = step.bytes / static_cast<std::uint64_t>(n);
  const std::uint64_t extra = step.bytes % static_cast<std::uint64_t>(n);
  auto chunk_size = [&](int chunk) { return base + (static_cast<std::uint64_t>(chunk) < extra ? 1 : 0); };

  for (int s = 0; s < 2 * (n - 1); ++s) {
    // Reduce-scatter step s sends chunk (pos - s); all-gather step s' = s - (n - 1) sends chunk (pos - s' + 1).
    const int offset = s < n - 1 ? s : s - (n - 1) - 1;
    const int send_chunk = ((pos - offset) % n + n) % n;
    // The chunk's size travels as the message's content, owned by the message: the receiver counts what arrived.
    const std::uint64_t size = chunk_size(send_chunk);
    const double posted = sg4::Engine::get_clock();
    const std::size_t slot = steps_begun++ & 1;
    posted_at[static_cast<std::size_t>(rank)][slot] = posted;
    sg4::CommPtr put = outbox->put_async(std::make_unique<std::uint64_t>(size).release(), size);
    std::uint64_t* received = nullptr;
    sg4::CommPtr get = inbox->get_async<std::uint64_t>(&received);
    put->wait();
    get->wait();
    const double put_done = put->get_finish_time();
    const double get_done = get->get_finish_time();
    // A transfer moves data once the neighbour is there too: the put when the right one posts its receive, the get
    // when the left one posts its send. Time with neither transfer moving is waiting.
    const double put_moving = std::max(posted, posted_at[static_cast<std::size_t>(right)][slot]);
    const double get_moving = std::max(posted, posted_at[static_cast<std::size_t>(left)][slot]);
    record_transfers(timeline, posted, {put_moving, put_done}, {get_moving, get_done});
    const std::unique_ptr<std::uint64_t> arrived(received);
    timeline.bytes_sent += size;
    timeline.bytes_received += *arrived;
    ++timeline.messages_sent;
    ++timeline.messages_received;
    ++ctx.result.messages;
    ctx.event_done();
  }
}

void run_rank(RunContext& ctx, int rank) {
  RankTimeline& timeline = ctx.result.ranks[static_cast<std::size_t>(rank)];
  const RankProgram& program = ctx.plan.ranks[static_cast<std::size_t>(rank)];
  for (std::int64_t it = 0; it < ctx.plan.iterations; ++it)
    for (const Step& step : program.steps) {
      if (const auto* compute = std::get_if<ComputeStep>(&step))
        run_compute(ctx, timeline, *compute);
      else if (const auto* ring = std::get_if<RingAllReduceStep>(&step))
        run_ring_allreduce(ctx, rank, timeline, *ring);
    }
  timeline.finish = sg4::Engine::get_clock();
}

NetworkConfig configure_network(NetworkModel model) {
  NetworkConfig config;
  if (model == NetworkModel::CM02) {
    // CM02 without cross-traffic: a message takes latency + size / bandwidth on an idle path and links are shared
    // max-min fairly under contention. This fits RDMA fabrics (NVLink, InfiniBand, RoCE) whose transfers have no TCP
    // window or ACK traffic, and makes closed forms (alpha-beta ring all-reduce) exact. The TCP window bound
    // (network/TCP-gamma) is lifted for the same reason: RDMA has no such window.
    sg4::Engine::set_config("network/model:CM02");
    sg4::Engine::set_config("network/crosstraffic:0");
    sg4::Engine::set_config("network/TCP-gamma:1e30");
    config = {"CM02", false, "alpha-beta per message, max-min sharing, no TCP window, no ACK cross-traffic"};
  } else {
    // SimGrid's default, calibrated on TCP over Ethernet: latency x13.01, bandwidth x0.97, reverse ACK traffic.
    sg4::Engine::set_config("network/model:LV08");
    config = {"LV08", true, "SimGrid's TCP-calibrated default: latency x13.01, bandwidth x0.97, ACK cross-traffic"};
  }
  return config;
}

} // namespace

std::string simgrid_version() {
  return std::to_string(SIMGRID_VERSION_MAJOR) + "." + std::to_string(SIMGRID_VERSION_MINOR) +
         (SIMGRID_VERSION_PATCH > 0 ? "." + std::to_string(SIMGRID_VERSION_PATCH) : "");
}

RunResult simulate(const Scenario& scenario, const Plan& plan, const EngineOptions& options) {
  xbt_log_control_set("root.thresh:warning xbt_cfg.thresh:warning");
  sg4::Engine engine("partsim");
  RunResult result;
  result.network = configure_network(scenario.run.network_model);
  // Actors only run flat loops: small stacks keep thousands of them cache-friendly.
  sg4::Engine::set_config("contexts/stack-size:128");

  const auto& job = std::get<DataJob>(scenario.workload);
  const engine::Platform platform =
      engine::build_platform(scenario.cluster, job.data_type, /*with_coordinator=*/plan.dynamic.has_value());

  const std::size_t ranks = plan.ranks.size();
  result.ranks.resize(ranks);
  for (RankTimeline& t : result.ranks) t.keep_all = options.record_all_intervals;
  RunContext ctx(plan, result, options);
  ctx.events_planned = plan.planned_messages + plan.planned_executions;
  ctx.mailboxes.reserve(ranks);
  for (std::size_t r = 0; r < ranks; ++r) ctx.mailboxes.push_back(sg4::Mailbox::by_name("rank-" + std::to_string(r)));
  ctx.positions.assign(plan.groups.size(), std::vector<int>(ranks, -1));
  for (std::size_t g = 0; g < plan.groups.size(); ++g)
    for (std::size_t i = 0; i < plan.groups[g].size(); ++i)
      ctx.positions[g][static_cast<std::size_t>(plan.groups[g][i])] = static_cast<int>(i);
  ctx.ring_posted.assign(plan.groups.size(), std::vector<std::array<double, 2>>(ranks, {0.0, 0.0}));
  ctx.ring_steps.assign(plan.groups.size(), std::vector<std::uint64_t>(ranks, 0));

  if (plan.dynamic) {
    engine::start_balancing(ctx, platform);
  } else {
    for (std::size_t r = 0; r < ranks; ++r) {
      sg4::Host* host = platform.gpus.at(static_cast<std::size_t>(plan.ranks[r].gpu));
      sg4::Actor::create("rank-" + std::to_string(r), host, [&ctx, r] { run_rank(ctx, static_cast<int>(r)); });
    }
  }
  const double baseline_total = plan.baseline_amount * static_cast<double>(plan.iterations);
  sg4::Actor::create("baseline", platform.baseline, [&result, baseline_total] {
    if (baseline_total > 0) sg4::this_actor::execute(baseline_total);
    result.baseline_time = sg4::Engine::get_clock();
  });

  bool deadlock = false;
  sg4::Engine::on_deadlock_cb([&deadlock] { deadlock = true; });
  engine.run();
  PARTSIM_CHECK(!deadlock) << "the simulation deadlocked: a collective's ranks did not all arrive";

  for (const RankTimeline& t : result.ranks) result.makespan = std::max(result.makespan, t.finish);
  return result;
}

} // namespace partsim
