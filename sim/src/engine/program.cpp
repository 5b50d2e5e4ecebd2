// Rank program steps on SimGrid (engine-internal): compute executions, collectives, the communication stream.
#include "program.hpp"

#include "collectives.hpp"
#include "failure_injection.hpp"
#include "platform.hpp"

#include "partsim/common/error.hpp"

#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <simgrid/s4u/Semaphore.hpp>
#include <simgrid/simix.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <set>
#include <tuple>

namespace sg4 = simgrid::s4u;

namespace partsim::engine {

namespace {

/** Starts `amount` on the rank's GPU without waiting for it (ComputeStep::beside_next): an execution, or where the
 * rank computes alone the time it will end. */
void start_beside(RunContext& ctx, int rank, double amount, std::uint32_t label, bool contended) {
  RunContext::BesideCompute& b = ctx.beside[static_cast<std::size_t>(rank)];
  PARTSIM_CHECK(!b.active) << "rank " << rank << " starts a compute beside another";
  b.active = true;
  b.label = label;
  b.contended = contended;
  b.begin = sg4::Engine::get_clock();
  sg4::Host* host = sg4::this_actor::get_host();
  if (ctx.compute_alone[static_cast<std::size_t>(rank)] != 0) {
    // Contended, it ends later: run_beside folds the collective's share of the SMs in once that has ended.
    b.exec = nullptr;
    b.amount = amount;
    b.end = b.begin + amount / host->get_speed();
    ++ctx.result.executions_as_sleeps;
    return;
  }
  b.exec = sg4::Exec::init();
  simgrid::kernel::actor::simcall_answered(
      [exec = b.exec, host, amount] { exec->set_flops_amount(amount)->set_host(host)->start(); });
}

/** Runs `collective` beside the rank's started compute (start_beside) and waits for both: the compute is compute on
 * the timeline, the collective's part after it communication (tensor, exposed), the part before hidden. */
void run_beside(RunContext& ctx, int rank, RankTimeline& timeline, const CollectiveStep& collective);

void run_compute(RunContext& ctx, int rank, RankTimeline& timeline, const ComputeStep& step) {
  timeline.samples += step.samples;
  if (step.amount <= 0.0) return;
  const double begin = sg4::Engine::get_clock();
  // A straggler computes at factor x its speed: the same work takes 1 / factor as long.
  const double amount =
      ctx.stragglers != nullptr ? step.amount / ctx.straggle[static_cast<std::size_t>(rank)] : step.amount;
  if (step.beside_next) {
    start_beside(ctx, rank, amount, step.label, step.contended);
    return;
  }
  if (ctx.compute_alone[static_cast<std::size_t>(rank)] != 0) {
    sg4::this_actor::sleep_for(amount / sg4::this_actor::get_host()->get_speed());
    ++ctx.result.executions_as_sleeps;
  } else {
    execute(amount);
  }
  timeline.record(IntervalKind::Compute, begin, sg4::Engine::get_clock(), step.label);
  ++ctx.result.executions;
  ctx.event_done();
}

/** Runs a collective and times its instance across the group: from the last arrival to the last completion. */
void timed_collective(RunContext& ctx, int rank, RankTimeline& timeline, const CollectiveStep& step) {
  const auto group = static_cast<std::size_t>(step.group);
  if (ctx.open_collectives.empty()) {
    ctx.open_collectives.resize(ctx.plan.groups.size());
    ctx.collectives_begun.resize(ctx.plan.groups.size());
  }
  auto& begun = ctx.collectives_begun[group];
  if (begun.empty()) begun.assign(ctx.plan.groups[group].size(), 0);
  const int pos = ctx.position(step.group, rank);
  PARTSIM_CHECK(pos >= 0) << "rank " << rank << " is not in group " << step.group;
  const std::uint64_t instance = begun[static_cast<std::size_t>(pos)]++;
  const double begin = sg4::Engine::get_clock();
  run_collective(ctx, pos, timeline, step);
  const double end = sg4::Engine::get_clock();
  auto& open = ctx.open_collectives[group];
  RunContext::CollectiveInstance& times = open[instance];
  times.last_arrival = std::max(times.last_arrival, begin);
  times.last_end = std::max(times.last_end, end);
  if (++times.done < ctx.simulated_members[group]) return;
  const double duration = times.last_end - times.last_arrival;
  open.erase(instance);
  record_collective(ctx, step, duration);
}

void run_beside(RunContext& ctx, int rank, RankTimeline& timeline, const CollectiveStep& collective) {
  RunContext::BesideCompute& b = ctx.beside[static_cast<std::size_t>(rank)];
  // The collective on a timeline of its own: its intervals overlap the compute's.
  RankTimeline side;
  side.keep_all = false;
  // A contended collective's kernel holds its SMs from its launch to its end, waiting for the group included (as a
  // communication-stream collective's: stream_kernel), the compute beside it running on the others meanwhile.
  const bool switch_state = b.contended && b.exec;
  if (switch_state) stream_kernel(ctx, rank, true);
  timed_collective(ctx, rank, side, collective);
  if (switch_state) stream_kernel(ctx, rank, false);
  const double collective_end = sg4::Engine::get_clock();
  if (b.exec) {
    b.exec->wait();
    b.end = b.exec->get_finish_time(); // it may have ended before the collective
  } else {
    if (b.contended) {
      // Alone on its GPU at a constant speed v: share s of it until the collective's end, all of it after (what the
      // power states give an execution).
      const double v = sg4::this_actor::get_host()->get_speed();
      const double s = ctx.plan.stream_compute_share;
      const double slowed = s * v * (collective_end - b.begin);
      b.end = slowed >= b.amount ? b.begin + b.amount / (s * v) : collective_end + (b.amount - slowed) / v;
    }
    if (b.end > collective_end) sg4::this_actor::sleep_until(b.end);
  }
  b.active = false;
  b.exec = nullptr;
  timeline.record(IntervalKind::Compute, b.begin, b.end, b.label);
  ++ctx.result.executions;
  ctx.event_done();
  const double exposed = std::max(0.0, collective_end - b.end);
  if (exposed > 0.0) timeline.record(IntervalKind::Communication, b.end, collective_end);
  timeline.blocked_by_kind[static_cast<std::size_t>(collective.kind)] += exposed;
  timeline.hidden += std::max(0.0, std::min(collective_end, b.end) - b.begin);
  timeline.bytes_sent += side.bytes_sent;
  timeline.bytes_received += side.bytes_received;
  timeline.messages_sent += side.messages_sent;
}

/** The mailbox of transfers from `from` to `to` on `channel`, looked up by name once (formatting the name and
 * finding it per transfer was a tenth of a 1024-rank pipeline run). */
sg4::Mailbox* p2p_mailbox(RunContext& ctx, int from, int to, int channel) {
  auto [it, fresh] = ctx.p2p_mailboxes.try_emplace(std::tuple{from, to, channel}, nullptr);
  if (fresh) it->second = sg4::Mailbox::by_name(fmt::format("p2p-{}-{}-{}", from, to, channel));
  return it->second;
}

void run_send(RunContext& ctx, int rank, RankTimeline& timeline, const SendStep& step) {
  send_eager(p2p_mailbox(ctx, rank, step.peer, step.channel), step.bytes);
  timeline.bytes_sent += step.bytes;
  ++timeline.messages_sent;
  ++ctx.result.messages;
  ctx.event_done();
}

void run_recv(RunContext& ctx, int rank, RankTimeline& timeline, const RecvStep& step) {
  const double wait_before = timeline.total(IntervalKind::Wait);
  const double begin = sg4::Engine::get_clock();
  receive_eager(p2p_mailbox(ctx, step.peer, rank, step.channel), timeline);
  if (step.kind == CommKind::Pipeline) timeline.bubble += timeline.total(IntervalKind::Wait) - wait_before;
  timeline.blocked_by_kind[static_cast<std::size_t>(step.kind)] += sg4::Engine::get_clock() - begin;
}

} // namespace

void prepare_receiver(RunContext& ctx, int rank) {
  std::set<std::pair<int, int>> sources;
  for (const Step& step : ctx.steps(rank))
    if (const auto* recv = std::get_if<RecvStep>(&step)) sources.emplace(recv->peer, recv->channel);
  for (const auto& [peer, channel] : sources) p2p_mailbox(ctx, peer, rank, channel)->set_receiver(sg4::Actor::self());
}

void record_collective(RunContext& ctx, const CollectiveStep& step, double duration) {
  const auto group = static_cast<std::size_t>(step.group);
  const auto members = static_cast<int>(ctx.plan.groups[group].size());
  const auto weight = static_cast<std::uint64_t>(ctx.group_weight[group]);
  auto& all = ctx.result.collectives;
  auto it = std::find_if(all.begin(), all.end(), [&](const CollectiveStats& c) {
    return c.op == step.op && c.algorithm == step.algorithm && c.protocol == step.protocol &&
           c.fidelity == step.fidelity && c.kind == step.kind && c.ranks == members && c.bytes == step.bytes;
  });
  if (it == all.end()) {
    all.push_back({step.op, step.algorithm, step.protocol, step.fidelity, step.kind, members, step.bytes, 0, 0.0,
                   duration, duration});
    it = all.end() - 1;
  }
  it->count += weight;
  it->total_time += static_cast<double>(weight) * duration;
  it->min_time = std::min(it->min_time, duration);
  it->max_time = std::max(it->max_time, duration);
}

void execute(double flops) {
  const sg4::ExecPtr exec = sg4::Exec::init();
  sg4::Host* host = sg4::this_actor::get_host();
  simgrid::kernel::actor::simcall_answered(
      [&exec, host, flops] { exec->set_flops_amount(flops)->set_host(host)->start(); });
  exec->wait();
}

void enqueue_on_stream(RunContext& ctx, int rank, const CollectiveStep& step) {
  CommStream& stream = ctx.streams[static_cast<std::size_t>(rank)];
  if (stream.passive) {
    if (stream.pending++ == 0)
      arrive_passively(ctx, rank, step);
    else
      stream.queue.push_back(&step);
    return;
  }
  if (!stream.work) {
    stream.work = sg4::Semaphore::create(0);
    stream.idle = sg4::Semaphore::create(0);
    RankTimeline& overlapped = ctx.result.streams[static_cast<std::size_t>(rank)];
    overlapped.keep_all = ctx.options.record_all_intervals;
    sg4::Actor::create("stream-" + std::to_string(rank), sg4::this_actor::get_host(),
                       [&ctx, &stream, &overlapped, rank] {
                         while (true) {
                           stream.work->acquire();
                           if (stream.queue.empty()) break; // the close token
                           const CollectiveStep* next = stream.queue.front();
                           stream.queue.pop_front();
                           stream_kernel(ctx, rank, true);
                           try {
                             timed_collective(ctx, rank, overlapped, *next);
                           } catch (const simgrid::Exception&) { // an injected failure (failure_injection.hpp)
                             if (!ctx.injecting()) throw;
                             const Step step{*next};
                             notice_failure(ctx, rank, &step, true);
                             return;
                           }
                           stream_kernel(ctx, rank, false);
                           if (stream.finished_one()) stream.idle->release();
                         }
                         overlapped.finish = sg4::Engine::get_clock();
                       });
  }
  stream.queue.push_back(&step);
  ++stream.pending;
  stream.work->release();
}

void stream_kernel(RunContext& ctx, int rank, bool running) {
  if (ctx.stream_kernels.empty()) return;
  const auto gpu = static_cast<std::size_t>(ctx.plan.ranks[static_cast<std::size_t>(rank)].gpu);
  int& count = ctx.stream_kernels[gpu];
  const int before = count;
  count += running ? 1 : -1;
  PARTSIM_CHECK(count >= 0) << "GPU " << gpu << " ends a stream collective it did not start";
  if ((before == 0) != (count == 0)) ctx.platform.gpus[gpu]->set_pstate(count > 0 ? 1 : 0);
}

void passive_collective_done(RunContext& ctx, int rank) {
  stream_kernel(ctx, rank, false);
  CommStream& stream = ctx.streams[static_cast<std::size_t>(rank)];
  const bool resume = stream.finished_one();
  if (!stream.queue.empty()) {
    const CollectiveStep* next = stream.queue.front();
    stream.queue.pop_front();
    arrive_passively(ctx, rank, *next);
  }
  if (resume) stream.idle->release();
}

void sync_stream(RunContext& ctx, int rank, RankTimeline& timeline, std::uint32_t pending) {
  CommStream& stream = ctx.streams[static_cast<std::size_t>(rank)];
  if (!stream.idle) return;
  const double begin = sg4::Engine::get_clock();
  if (stream.pending > pending) {
    stream.program_waits = pending;
    stream.idle->acquire();
  }
  const double end = sg4::Engine::get_clock();
  timeline.record(IntervalKind::Communication, begin, end);
  timeline.stream_wait += end - begin;
  timeline.blocked_by_kind[static_cast<std::size_t>(CommKind::Data)] += end - begin;
}

void close_stream(RunContext& ctx, int rank, RankTimeline& timeline) {
  sync_stream(ctx, rank, timeline);
  CommStream& stream = ctx.streams[static_cast<std::size_t>(rank)];
  if (stream.passive)
    ctx.result.streams[static_cast<std::size_t>(rank)].finish = sg4::Engine::get_clock();
  else if (stream.work)
    stream.work->release();
}

void create_receiving_actor(const std::string& name, sg4::Host* host, sg4::Mailbox* inbox, std::function<void()> body) {
  const auto actor = sg4::Actor::create(name, host, [inbox, body = std::move(body)] {
    body();
    inbox->set_receiver(nullptr); // lets SimGrid free what the mailbox still buffers
  });
  inbox->set_receiver(actor);
}

void send_eager(sg4::Mailbox* to, std::uint64_t bytes, std::uint64_t samples) {
  auto envelope = std::make_unique<Envelope>(Envelope{bytes, sg4::Engine::get_clock(), samples});
  to->put_init(envelope.release(), bytes)->detach();
}

std::unique_ptr<Envelope> receive_eager(sg4::Mailbox* from, RankTimeline& timeline) {
  const double posted = sg4::Engine::get_clock();
  auto envelope = from->get_unique<Envelope>();
  const double moving = std::max(posted, envelope->sent_at);
  timeline.record(IntervalKind::Wait, posted, moving);
  timeline.record(IntervalKind::Communication, moving, sg4::Engine::get_clock());
  timeline.bytes_received += envelope->bytes;
  return envelope;
}

void run_step(RunContext& ctx, int rank, RankTimeline& timeline, const Step& step) {
  if (const auto* compute = std::get_if<ComputeStep>(&step)) {
    run_compute(ctx, rank, timeline, *compute);
  } else if (const auto* collective = std::get_if<CollectiveStep>(&step)) {
    if (collective->stream == 0 && ctx.beside[static_cast<std::size_t>(rank)].active) {
      run_beside(ctx, rank, timeline, *collective);
    } else if (collective->stream == 0) {
      const double begin = sg4::Engine::get_clock();
      timed_collective(ctx, rank, timeline, *collective);
      timeline.blocked_by_kind[static_cast<std::size_t>(collective->kind)] += sg4::Engine::get_clock() - begin;
    } else {
      enqueue_on_stream(ctx, rank, *collective);
    }
  } else if (const auto* sync = std::get_if<StreamSyncStep>(&step)) {
    sync_stream(ctx, rank, timeline, sync->pending);
  } else if (const auto* send = std::get_if<SendStep>(&step)) {
    run_send(ctx, rank, timeline, *send);
  } else if (const auto* recv = std::get_if<RecvStep>(&step)) {
    run_recv(ctx, rank, timeline, *recv);
  } else if (const auto* host = std::get_if<HostStep>(&step)) {
    const double begin = sg4::Engine::get_clock();
    sg4::this_actor::sleep_for(host->seconds);
    timeline.record(IntervalKind::DataLoading, begin, sg4::Engine::get_clock());
  }
}

} // namespace partsim::engine
