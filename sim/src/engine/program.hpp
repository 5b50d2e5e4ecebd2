// Running one step of a rank's program (engine-internal).
#pragma once

#include "run_context.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace simgrid::s4u {
class Host;
}

namespace partsim::engine {

/** this_actor::execute(flops) in two simcalls instead of five: the execution is created by the calling actor (which
 * owns it), set up and started by one kernel call, then waited for. Every simcall is a round trip through the
 * maestro, and a large run spends most of its time switching between actors' stacks. */
void execute(double flops);

/** Makes the calling actor the permanent receiver of `rank`'s incoming pipeline mailboxes (so transfers start when
 * sent, as a posted receive lets them). Call once, in the rank's actor, before its first step. */
void prepare_receiver(RunContext& ctx, int rank);

/** Runs `step` for `rank` in the calling actor, recording its intervals in `timeline`. */
void run_step(RunContext& ctx, int rank, RankTimeline& timeline, const Step& step);

/** Queues `step` on the rank's communication stream (starting the stream's actor on first use) and returns. */
void enqueue_on_stream(RunContext& ctx, int rank, const CollectiveStep& step);

/** For a passive stream (RunContext::CommStream::passive): the collective the rank was in has ended; it arrives at
 * its next queued one, or wakes its program if that waits for the stream. Runs in the kernel (maestro). */
void passive_collective_done(RunContext& ctx, int rank);

/** A collective of `rank`'s communication stream starts (`running`) or ends: with stream contention
 * (RunContext::stream_kernels), its GPU runs at power state 1 while any does. From an actor or the kernel. */
void stream_kernel(RunContext& ctx, int rank, bool running);

/** Adds one collective instance of `duration` (last arrival to last completion) to the run's statistics, weighted by
 * the instances of the unfolded run it stands for. */
void record_collective(RunContext& ctx, const CollectiveStep& step, double duration);

/** Blocks until the rank's communication stream has at most `pending` collectives queued or running (0: idle); the
 * time blocked is exposed communication. */
void sync_stream(RunContext& ctx, int rank, RankTimeline& timeline, std::uint32_t pending = 0);

/** At the end of a rank's program: waits for its stream (exposed communication) and lets the stream's actor exit. */
void close_stream(RunContext& ctx, int rank, RankTimeline& timeline);

/** A message sent eagerly to a mailbox with a permanent receiver: its size, when it left, and the samples it
 * hands over (run-time balancing; 0 elsewhere). */
struct Envelope {
  std::uint64_t bytes = 0;
  double sent_at = 0.0;
  std::uint64_t samples = 0;
};

/** Creates an actor that owns `inbox` as its permanent receiver (eager messages) while `body` runs. */
void create_receiving_actor(const std::string& name, simgrid::s4u::Host* host, simgrid::s4u::Mailbox* inbox,
                            std::function<void()> body);

/** Sends an Envelope of `bytes` without waiting for it to arrive. */
void send_eager(simgrid::s4u::Mailbox* to, std::uint64_t bytes, std::uint64_t samples = 0);

/** Receives the next Envelope: waiting until it was sent, communication while it arrives. */
std::unique_ptr<Envelope> receive_eager(simgrid::s4u::Mailbox* from, RankTimeline& timeline);

} // namespace partsim::engine
