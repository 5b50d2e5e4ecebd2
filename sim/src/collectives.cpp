// Collectives on SimGrid (engine-internal).
#include "collectives.hpp"

#include "partsim/error.hpp"

#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Mailbox.hpp>

#include <algorithm>
#include <memory>

namespace sg4 = simgrid::s4u;

namespace partsim::engine {

namespace {

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
void run_ring_allreduce(RunContext& ctx, int rank, RankTimeline& timeline, const CollectiveStep& step) {
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

void run_collective(RunContext& ctx, int rank, RankTimeline& timeline, const CollectiveStep& step) {
  PARTSIM_CHECK(step.op == CollectiveOp::AllReduce && step.algorithm == CollectiveAlgorithm::Ring &&
                step.fidelity == Fidelity::Steps)
      << to_string(step.op) << " " << to_string(step.algorithm) << " at fidelity " << to_string(step.fidelity)
      << " is not implemented";
  run_ring_allreduce(ctx, rank, timeline, step);
}

} // namespace partsim::engine
