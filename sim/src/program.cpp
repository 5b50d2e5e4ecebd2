// Rank program steps on SimGrid (engine-internal): compute executions and the step-by-step ring all-reduce.
#include "program.hpp"

#include "partsim/error.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mailbox.hpp>

#include <algorithm>
#include <memory>

namespace sg4 = simgrid::s4u;

namespace partsim::engine {

namespace {

void run_compute(RunContext& ctx, RankTimeline& timeline, const ComputeStep& step) {
  timeline.samples += step.samples;
  if (step.amount <= 0.0) return;
  const double begin = sg4::Engine::get_clock();
  sg4::this_actor::execute(step.amount);
  timeline.record(IntervalKind::Compute, begin, sg4::Engine::get_clock());
  ++ctx.result.executions;
  ctx.event_done();
}

/** Records [posted, end of both transfers] as communication while either transfer (begin, end) moves data, and as
 * wait otherwise. */
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
    ++ctx.result.messages;
    ctx.event_done();
  }
}

} // namespace

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
  if (const auto* compute = std::get_if<ComputeStep>(&step))
    run_compute(ctx, timeline, *compute);
  else if (const auto* ring = std::get_if<RingAllReduceStep>(&step))
    run_ring_allreduce(ctx, rank, timeline, *ring);
}

} // namespace partsim::engine
