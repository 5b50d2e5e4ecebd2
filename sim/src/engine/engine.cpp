// SimGrid S4U engine: one actor per rank executing its program; collectives as point-to-point messages.
#include "partsim/engine/engine.hpp"

#include "checkpoint_write.hpp"
#include "collectives.hpp"
#include "coordinator.hpp"
#include "dispatch.hpp"
#include "failure_injection.hpp"
#include "folding.hpp"
#include "partsim/common/error.hpp"
#include "partsim/plan/strategy.hpp"
#include "platform.hpp"
#include "program.hpp"
#include "run_context.hpp"

#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <simgrid/version.h>
#include <xbt/log.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <string>

namespace sg4 = simgrid::s4u;

namespace partsim {

namespace {

using engine::RunContext;

void run_rank(RunContext& ctx, int rank) {
  RankTimeline& timeline = ctx.result.ranks[static_cast<std::size_t>(rank)];
  const std::vector<Step>& steps = ctx.steps(rank);
  engine::prepare_receiver(ctx, rank);
  const auto r = static_cast<std::size_t>(rank);
  const bool injecting = ctx.injecting();
  // The marked rank stamps the clock at its pass boundaries in the first iteration (Plan::unit_marks).
  const std::vector<UnitMark>& marks = ctx.plan.unit_marks;
  std::size_t next_mark = rank == ctx.plan.marked_rank ? 0 : marks.size();
  std::uint32_t done = 0;
  auto stamp = [&] {
    for (; next_mark < marks.size() && marks[next_mark].steps == done; ++next_mark)
      timeline.marks.push_back(sg4::Engine::get_clock());
  };
  try {
    for (std::int64_t it = 0; it < ctx.plan.iterations; ++it) {
      ctx.begin_iteration(rank, it);
      stamp();
      for (const Step& step : steps) {
        if (injecting) ctx.running[r] = &step;
        engine::run_step(ctx, rank, timeline, step);
        if (next_mark < marks.size()) {
          ++done;
          stamp();
        }
      }
      next_mark = marks.size(); // the first iteration only
      ctx.end_iteration(it, sg4::Engine::get_clock());
    }
    engine::close_stream(ctx, rank, timeline);
  } catch (const simgrid::Exception&) {
    // An injected failure turned a peer's GPU off under a transfer: the rank stops here (NCCL's watchdog would
    // abort it); the job stops the rest at its detection time.
    if (!injecting) throw;
    engine::notice_failure(ctx, rank, ctx.running[r], false);
    return;
  }
  if (injecting) ctx.failure_state[r] = RunContext::kFinished;
  timeline.finish = sg4::Engine::get_clock();
}

} // namespace

namespace engine {

sg4::Engine& new_engine(const char* name) {
#if defined(__SANITIZE_ADDRESS__)
  // The context factory is chosen when the engine starts: only its command line can set it.
  static char program[] = "partsim";
  static char factory[] = "--cfg=contexts/factory:thread";
  int argc = 2;
  char* argv[] = {program, factory, nullptr};
  (void)name;
  return *new sg4::Engine(&argc, argv); // NOLINT(cppcoreguidelines-owning-memory)
#else
  return *new sg4::Engine(name); // NOLINT(cppcoreguidelines-owning-memory)
#endif
}

void keep_until_exit(const void* object) {
  // Volatile: the optimizer drops the stores to a static that is only ever written.
  [[maybe_unused]] static const void* volatile kept = nullptr;
  kept = object;
}

void configure_contexts(std::size_t actors) {
#if !defined(__SANITIZE_ADDRESS__)
  sg4::Engine::set_config("contexts/stack-size:128");
  if (actors > 8192) sg4::Engine::set_config("contexts/guard-size:0");
#else
  (void)actors;                  // threads with their default stacks (see new_engine)
#endif
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
    config = {"CM02", false, "alpha-beta per message, max-min sharing, no TCP window, no ACK cross-traffic", ""};
  } else {
    // SimGrid's default, calibrated on TCP over Ethernet: latency x13.01, bandwidth x0.97, reverse ACK traffic.
    sg4::Engine::set_config("network/model:LV08");
    config = {"LV08", true, "SimGrid's TCP-calibrated default: latency x13.01, bandwidth x0.97, ACK cross-traffic", ""};
  }
  config.simgrid_version = simgrid_version();
  return config;
}

} // namespace engine

std::string simgrid_version() {
  return std::to_string(SIMGRID_VERSION_MAJOR) + "." + std::to_string(SIMGRID_VERSION_MINOR) +
         (SIMGRID_VERSION_PATCH > 0 ? "." + std::to_string(SIMGRID_VERSION_PATCH) : "");
}

RunResult simulate(const Scenario& scenario, const Plan& plan, const EngineOptions& options) {
  // An injected failure runs first, on an engine of its own in a child process; this one runs the clean iteration.
  const FailureInjection* injection =
      scenario.reliability && scenario.reliability->inject ? &*scenario.reliability->inject : nullptr;
  std::optional<InjectedFailureOutcome> injected;
  if (injection != nullptr && !std::holds_alternative<ProgramRun>(plan.mode))
    throw InputError(scenario.source, "/reliability/inject",
                     "an injected failure runs in a strategy of fixed programs; this one dispatches or coordinates "
                     "work at run time");
  if (injection != nullptr && !options.injecting)
    injected = engine::simulate_injection_in_child(scenario, plan, options);
  // With /reliability, a checkpoint's writes on an engine of their own too (the injecting child needs none).
  std::optional<double> checkpoint_write;
  if (scenario.reliability && !options.injecting && std::holds_alternative<ProgramRun>(plan.mode))
    checkpoint_write = engine::simulate_checkpoint_write_in_child(scenario, checkpoint_writes(scenario, plan),
                                                                  scenario.reliability->write_bandwidth);
  const bool injecting = injection != nullptr && options.injecting;
  xbt_log_control_set(injecting ? "root.thresh:critical xbt_cfg.thresh:warning"
                                : "root.thresh:warning xbt_cfg.thresh:warning");
  // Not destroyed here: that frees every host, link, mailbox and actor one by one (0.4 s of a 1.2 s run at 16,384
  // GPUs). SimGrid's exit handler does it at process exit, which the partsim CLI skips (_Exit once its output is
  // written). SimGrid 3.32 allows one engine per process anyway.
  auto& engine = engine::new_engine("partsim");
  RunResult result;
  sg4::Actor::on_creation_cb([&result](sg4::Actor&) { ++result.actors; });
  result.network = engine::configure_network(scenario.run.network_model);
  engine::configure_contexts(plan.ranks.size());

  const engine::Platform platform = engine::build_platform(
      scenario.cluster, workload_data_type(scenario.workload),
      /*with_coordinator=*/!std::holds_alternative<ProgramRun>(plan.mode), plan.stream_compute_share);

  const std::size_t ranks = plan.ranks.size();
  result.ranks.resize(ranks);
  result.streams.resize(ranks);
  for (RankTimeline& t : result.ranks) t.keep_all = options.record_all_intervals;
  // On the heap: a run stopped midway leaves it to the process's end (its groups hold semaphores SimGrid's actors
  // still wait on, which SimGrid refuses to destroy).
  auto ctx_owner = std::make_unique<RunContext>(plan, result, options, scenario.cluster, platform);
  RunContext& ctx = *ctx_owner;
  ctx.streams.resize(ranks);
  ctx.lean_engine = scenario.run.lean_engine;
  std::optional<StragglerDraws> stragglers;
  if (scenario.cluster.stragglers) {
    stragglers.emplace(*scenario.cluster.stragglers, scenario.run.seed, scenario.cluster.gpu_count());
    ctx.stragglers = &*stragglers;
    ctx.straggle.assign(ranks, 1.0);
    result.iteration_end.assign(static_cast<std::size_t>(plan.iterations), 0.0);
  }
  {
    std::vector<int> ranks_on_gpu(platform.gpus.size(), 0);
    for (const RankProgram& p : plan.ranks) ++ranks_on_gpu.at(static_cast<std::size_t>(p.gpu));
    // With stream contention a rank whose program queues on its communication stream changes speed while those
    // collectives run: its executions must be SimGrid's. (A compute beside a collective that takes SMs from it,
    // ComputeStep::contended, is folded in by run_beside.)
    std::vector<char> streams(ranks, 0);
    if (plan.stream_compute_share < 1.0)
      for (std::size_t r = 0; r < ranks; ++r) {
        streams[r] = queues_on_stream(plan.ranks[static_cast<std::size_t>(plan.owner(static_cast<int>(r)))].own_steps);
      }
    ctx.compute_alone.resize(ranks);
    for (std::size_t r = 0; r < ranks; ++r) {
      const auto gpu = static_cast<std::size_t>(plan.ranks[r].gpu);
      ctx.compute_alone[r] =
          scenario.run.lean_engine && ranks_on_gpu[gpu] == 1 && streams[r] == 0 &&
          platform.speed_change[static_cast<std::size_t>(platform.node_of(plan.ranks[r].gpu))] == nullptr;
    }
    if (plan.stream_compute_share < 1.0) ctx.stream_kernels.assign(platform.gpus.size(), 0);
    ctx.beside.resize(ranks); // sized with compute_alone: run_step reads it for every blocking collective
  }
  ctx.events_planned = plan.planned_messages + plan.planned_executions;
  if (plan.dynamic() != nullptr) { // the dispatcher's assignments
    ctx.mailboxes.reserve(ranks);
    for (std::size_t r = 0; r < ranks; ++r) ctx.mailboxes.push_back(sg4::Mailbox::by_name("rank-" + std::to_string(r)));
  }
  ctx.memberships.resize(ranks);
  for (std::size_t g = 0; g < plan.groups.size(); ++g)
    for (std::size_t i = 0; i < plan.groups[g].size(); ++i)
      ctx.memberships.at(static_cast<std::size_t>(plan.groups[g][i]))
          .emplace_back(static_cast<int>(g), static_cast<int>(i));
  engine::prepare_collectives(ctx);
  // Every rank simulated when a failure is injected: the failed GPU's peers differ from its replica's.
  const engine::Folding folding = engine::fold_replicas(ctx, scenario.run.fold_replicas && !injecting);
  ctx.group_weight = folding.group_weight;
  ctx.simulated_members.assign(plan.groups.size(), 0);
  for (std::size_t g = 0; g < plan.groups.size(); ++g)
    for (int rank : plan.groups[g]) ctx.simulated_members[g] += folding.simulated[static_cast<std::size_t>(rank)];
  ctx.relabeled.resize(ranks);
  for (std::size_t r = 0; r < ranks; ++r)
    if (folding.simulated[r] != 0 && plan.ranks[r].like >= 0)
      ctx.relabeled[r] = resolved_steps(plan, static_cast<int>(r));
  engine::prepare_passive_streams(ctx, folding.simulated);
  result.folding = folding.note;
  result.simulated_ranks = folding.simulated_ranks;
  if (folding.active) {
    // Progress counts what is simulated: the planned events of the simulated ranks.
    ctx.events_planned =
        static_cast<std::uint64_t>(static_cast<double>(ctx.events_planned) *
                                   static_cast<double>(folding.simulated_ranks) / static_cast<double>(ranks));
  }

  if (plan.dynamic() != nullptr) {
    engine::start_balancing(ctx, platform);
  } else if (plan.coordinated() != nullptr) {
    engine::start_coordinated(ctx, platform);
  } else {
    for (std::size_t r = 0; r < ranks; ++r) {
      if (folding.simulated[r] == 0) continue;
      sg4::Host* host = platform.gpus.at(static_cast<std::size_t>(plan.ranks[r].gpu));
      sg4::Actor::create("rank-" + std::to_string(r), host, [&ctx, r] { run_rank(ctx, static_cast<int>(r)); });
    }
  }
  const double baseline_total = plan.baseline_amount * static_cast<double>(plan.iterations);
  const double baseline_host = plan.baseline_host * static_cast<double>(plan.iterations);
  if (injecting)
    engine::start_failure_injection(ctx, *injection, scenario.reliability->detection_time, platform.baseline);
  else
    sg4::Actor::create("baseline", platform.baseline, [&result, baseline_total, baseline_host] {
      if (baseline_total > 0) engine::execute(baseline_total);
      if (baseline_host > 0) sg4::this_actor::sleep_for(baseline_host);
      result.baseline_time = sg4::Engine::get_clock();
    });

  bool deadlock = false;
  sg4::Engine::on_deadlock_cb([&deadlock] { deadlock = true; });
  // Periodic speed profiles tick for as long as the run lasts, which the planner could only estimate: a daemon stops
  // the run where they pass what is left of the event budget (a daemon ends with the last rank, so a run that ends in
  // time never sees it; Engine::run_until would go on replaying the profiles to the limit).
  const double budget_left = static_cast<double>(scenario.run.max_events) -
                             static_cast<double>(plan.planned_messages + plan.planned_executions);
  const double profile_limit = speed_profile_horizon(scenario.cluster, budget_left);
  bool over_budget = false;
  if (std::isfinite(profile_limit)) {
    sg4::Actor::create("event-budget", platform.baseline, [&over_budget, profile_limit] {
      sg4::this_actor::sleep_until(profile_limit);
      over_budget = true;
      sg4::Actor::kill_all();
    })->daemonize();
    --result.actors; // not part of the simulated system
  }
  engine.run();
  if (over_budget) {
    static_cast<void>(ctx_owner.release()); // NOLINT(bugprone-unused-return-value): see above
    throw InputError(scenario.source, "/run/max_events",
                     fmt::format("the periodic speed profiles of /cluster/speed_changes made {:.3g} events by {:.3g} s "
                                 "of simulated time and the run had not ended, more than the limit of {} with the "
                                 "plan's {} messages and executions; lengthen the periods or raise /run/max_events",
                                 speed_profile_events(scenario.cluster, profile_limit), profile_limit,
                                 scenario.run.max_events, plan.planned_messages + plan.planned_executions));
  }
  if (injecting) {
    // The failure's outcome is all the child reports; the run stopped midway, so ctx stays (see over_budget).
    static_cast<void>(ctx_owner.release()); // NOLINT(bugprone-unused-return-value)
    engine::finish_failure_injection(ctx);
    return result;
  }
  PARTSIM_CHECK(!deadlock) << "the simulation deadlocked: actors wait for messages that never come";
  engine::unfold_results(ctx, folding, result);
  result.injected = std::move(injected);
  result.checkpoint_write = checkpoint_write;

  for (const RankTimeline& t : result.ranks) result.makespan = std::max(result.makespan, t.finish);
  if (result.coordinator) result.makespan = std::max(result.makespan, result.coordinator->timeline.finish);
  return result;
}

} // namespace partsim
