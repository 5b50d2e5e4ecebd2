// Passive groups (engine-internal): analytic and flows collectives whose members' communication streams have no actor;
// arrival is a counter, the end (a kernel timer, or the group's daemon flow drivers) moves every member's stream on.
// See docs/engine.md ("Lean engine").
#include "collective_groups.hpp"
#include "collectives.hpp"
#include "failure_injection.hpp"

#include "partsim/common/error.hpp"
#include "program.hpp"

#include <simgrid/Exception.hpp>
#include <simgrid/kernel/Timer.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Semaphore.hpp>
#include <simgrid/simix.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace partsim::engine {

namespace {

using Group = CollectiveGroup;

Group& group_of(RunContext& ctx, const CollectiveStep& step) {
  return ctx.collectives->groups[static_cast<std::size_t>(step.group)];
}

/** The running instance of passive group `g` ends now (in the kernel): every simulated member records its part on
 * its stream's timeline, the instance its statistics, and each member's stream moves on (which may begin the next
 * instance of this group: its state is reset first). */
void end_passive(RunContext& ctx, Group& g) {
  auto& p = g.passive;
  const CollectiveStep& step = *p.step;
  for (int pos : p.live) {
    const auto rank = static_cast<std::size_t>(g.ranks[static_cast<std::size_t>(pos)]);
    account(ctx, ctx.result.streams[rank], step, g, pos, p.arrival[static_cast<std::size_t>(pos)], p.begin);
  }
  record_collective(ctx, step, sg4::Engine::get_clock() - p.begin);
  p.step = nullptr;
  for (int pos : p.live) passive_collective_done(ctx, g.ranks[static_cast<std::size_t>(pos)]);
}

/** Driver `d` of passive group `g` (a daemon actor): drives each flows instance's flows of its members with the
 * group's other drivers; the last one done ends the instance (in the kernel). Same schedule as member by member. */
void drive_passive(RunContext& ctx, Group& g, int d) {
  auto& p = g.passive;
  const int first = d * p.per_driver;
  const int last = std::min(first + p.per_driver, g.size);
  while (true) {
    p.start->acquire();
    drive_phases(ctx, g, *p.step, first, last, p.drivers, p.phase_waiting, *p.phase,
                 [&] { simgrid::kernel::actor::simcall_answered([&] { end_passive(ctx, g); }); });
  }
}

/** Whether `step` can run without its members waiting in an actor: analytic, or flows whose flows all carry bytes. */
bool passive_capable(const Group& g, const CollectiveStep& step) {
  return g.size >= 2 && step.stream != 0 &&
         (step.fidelity == Fidelity::Analytic ||
          (step.fidelity == Fidelity::Flows && every_flow_carries_bytes(g, step)));
}

} // namespace

namespace {

/** An injected failure failed a flow of driver `d`: the members it drives (those still running) notice it on their
 * communication streams. */
void notice_driven_failure(RunContext& ctx, const Group& g, int d) {
  const int first = d * g.passive.per_driver;
  const int last = std::min(g.size, first + g.passive.per_driver);
  for (int pos = first; pos < last; ++pos) {
    const int rank = g.ranks[static_cast<std::size_t>(pos)];
    if (ctx.failure_state[static_cast<std::size_t>(rank)] != RunContext::kRunning) continue;
    if (g.passive.step == nullptr) {
      notice_failure(ctx, rank, nullptr, true);
    } else {
      const Step step{*g.passive.step};
      notice_failure(ctx, rank, &step, true);
    }
  }
}

} // namespace

void prepare_passive_streams(RunContext& ctx, const std::vector<char>& simulated) {
  if (!ctx.lean_engine) return;
  const auto& plan = ctx.plan;
  auto& groups = ctx.collectives->groups;
  // One pass over the programs: which groups take only passive-capable collectives, the groups each stream queues
  // on, and the members per flow driver of each group (the smallest over its flows collectives; 0: none).
  std::vector<char> group_ok(groups.size(), 1);
  std::vector<int> per_driver(groups.size(), 0);
  std::vector<std::vector<int>> queued_on(plan.ranks.size());
  // Each program's distinct collectives once (ranks may share a program, relabeled: Plan::steps_of).
  std::vector<std::vector<CollectiveStep>> distinct(plan.ranks.size());
  for (std::size_t q = 0; q < plan.ranks.size(); ++q)
    if (plan.ranks[q].like < 0) distinct[q] = distinct_collectives(plan.ranks[q].own_steps);
  for (std::size_t r = 0; r < plan.ranks.size(); ++r) {
    for (CollectiveStep step : distinct[static_cast<std::size_t>(plan.owner(static_cast<int>(r)))]) {
      step.group = plan.ranks[r].group(step.group);
      const auto gi = static_cast<std::size_t>(step.group);
      group_ok[gi] = group_ok[gi] && passive_capable(groups[gi], step);
      if (step.fidelity == Fidelity::Flows) {
        const int k = members_per_driver(groups[gi], step);
        per_driver[gi] = per_driver[gi] == 0 ? k : std::min(per_driver[gi], k);
      }
      if (step.stream != 0) queued_on[r].push_back(step.group);
    }
    std::sort(queued_on[r].begin(), queued_on[r].end());
    queued_on[r].erase(std::unique(queued_on[r].begin(), queued_on[r].end()), queued_on[r].end());
  }
  // A stream is passive when it queues something and only on passive groups; a group when all its members' streams
  // are (an actor-run stream would wait in it): repeat until both agree.
  std::vector<char> stream_ok(plan.ranks.size(), 0);
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t r = 0; r < plan.ranks.size(); ++r)
      stream_ok[r] = !queued_on[r].empty() && std::all_of(queued_on[r].begin(), queued_on[r].end(), [&](int gi) {
        return group_ok[static_cast<std::size_t>(gi)] != 0;
      });
    for (std::size_t gi = 0; gi < groups.size(); ++gi)
      if (group_ok[gi] && std::any_of(plan.groups[gi].begin(), plan.groups[gi].end(),
                                      [&](int rank) { return !stream_ok[static_cast<std::size_t>(rank)]; })) {
        group_ok[gi] = 0;
        changed = true;
      }
  }
  for (std::size_t r = 0; r < plan.ranks.size(); ++r) {
    if (!stream_ok[r] || !simulated[r]) continue;
    CommStream& stream = ctx.streams[r];
    stream.passive = true;
    stream.idle = sg4::Semaphore::create(0);
    ctx.result.streams[r].keep_all = ctx.options.record_all_intervals;
  }
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    if (!group_ok[gi]) continue;
    Group& g = groups[gi];
    auto& p = g.passive;
    p.on = true;
    p.arrival.assign(static_cast<std::size_t>(g.size), 0.0);
    for (int pos = 0; pos < g.size; ++pos)
      if (simulated[static_cast<std::size_t>(g.ranks[static_cast<std::size_t>(pos)])]) p.live.push_back(pos);
    if (p.live.empty() || per_driver[gi] == 0) continue; // folded away, or no flows to drive
    // A flows group is one replica (folding.hpp): all its members run or none does.
    PARTSIM_CHECK(p.live.size() == static_cast<std::size_t>(g.size))
        << "flows collectives on group " << gi << " with " << p.live.size() << " of " << g.size << " members simulated";
    p.per_driver = per_driver[gi];
    p.drivers = (g.size + p.per_driver - 1) / p.per_driver;
    for (int d = 0; d < p.drivers; ++d)
      sg4::Actor::create(fmt::format("flows-{}-{}", gi, d), g.hosts[static_cast<std::size_t>(d * p.per_driver)],
                         [&ctx, &g, d] {
                           try {
                             drive_passive(ctx, g, d);
                           } catch (const simgrid::Exception&) { // an injected failure: its flows end here
                             if (!ctx.injecting()) throw;
                             notice_driven_failure(ctx, g, d);
                           }
                         })
          ->daemonize();
  }
}

void arrive_passively(RunContext& ctx, int rank, const CollectiveStep& step) {
  Group& g = group_of(ctx, step);
  auto& p = g.passive;
  PARTSIM_CHECK(p.on) << "rank " << rank << " arrives passively at a collective on active group " << step.group;
  stream_kernel(ctx, rank, true); // its kernel holds its SMs from its launch, waiting for the group included
  const int pos = ctx.position(step.group, rank);
  p.arrival[static_cast<std::size_t>(pos)] = sg4::Engine::get_clock();
  if (++p.arrived < ctx.simulated_members[static_cast<std::size_t>(step.group)]) return;
  p.arrived = 0;
  p.step = &step;
  p.begin = sg4::Engine::get_clock();
  // One simcall from an actor (none from the kernel): an analytic instance ends by a kernel timer at its closed form,
  // a flows one when its drivers are done.
  simgrid::kernel::actor::simcall_answered([&ctx, &g] {
    auto& q = g.passive;
    if (q.step->fidelity == Fidelity::Analytic)
      simgrid::kernel::timer::Timer::set(q.begin + analytic_time(g, *q.step), [&ctx, &g] { end_passive(ctx, g); });
    else
      for (int d = 0; d < q.drivers; ++d) q.start->release();
  });
}

} // namespace partsim::engine
