// Coordinated iterations on SimGrid (seed situations 6 and 7): per iteration the coordinator executes the serial
// part, spends its per-partition coordination time and sends each rank a start message carrying its partitions'
// input; ranks compute (and run any collective of their program), exchange halos with the ranks holding
// neighbouring partitions, and send a result message back. Start and result messages are eager (mailboxes with
// permanent receivers); halos are rendezvous messages between the two GPU hosts.
#include "coordinator.hpp"

#include "partsim/common/error.hpp"
#include "program.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Mailbox.hpp>

#include <algorithm>
#include <memory>
#include <string>

namespace sg4 = simgrid::s4u;

namespace partsim::engine {

namespace {

struct Coordinated {
  Coordinated(RunContext& c, const CoordinatedWork& w) : ctx(c), work(w) {}

  RunContext& ctx;
  const CoordinatedWork& work;
  sg4::Mailbox* inbox = nullptr;                    ///< the coordinator's
  std::vector<sg4::Mailbox*> start_boxes;           ///< per rank: start messages (eager, never the ring's)
  std::vector<std::vector<sg4::Mailbox*>> halo_out; ///< [rank][i]: to halo peer i
  std::vector<std::vector<sg4::Mailbox*>> halo_in;  ///< [rank][i]: from halo peer i
  std::vector<double> halo_posted;                  ///< when each rank posted this iteration's halo
  CoordinatorStats stats;
};

void coordinator(Coordinated& c) {
  const std::size_t n = c.ctx.plan.ranks.size();
  RankTimeline& timeline = c.stats.timeline;
  if (c.work.setup_time > 0) {
    sg4::this_actor::sleep_for(c.work.setup_time);
    timeline.record(IntervalKind::Overhead, 0.0, sg4::Engine::get_clock());
    c.stats.setup = c.work.setup_time;
  }
  for (std::int64_t it = 0; it < c.ctx.plan.iterations; ++it) {
    if (c.work.serial_amount > 0) {
      const double begin = sg4::Engine::get_clock();
      execute(c.work.serial_amount);
      timeline.record(IntervalKind::Compute, begin, sg4::Engine::get_clock());
      c.stats.serial_compute += sg4::Engine::get_clock() - begin;
      ++c.ctx.result.executions;
      c.ctx.event_done();
    }
    for (std::size_t r = 0; r < n; ++r) {
      const double coordination = c.work.per_partition * c.work.partitions_of_rank[r];
      if (coordination > 0) {
        const double begin = sg4::Engine::get_clock();
        sg4::this_actor::sleep_for(coordination);
        timeline.record(IntervalKind::Overhead, begin, sg4::Engine::get_clock());
        c.stats.coordination += coordination;
      }
      send_eager(c.start_boxes[r], c.work.start_bytes[r]);
      c.stats.bytes_sent += c.work.start_bytes[r];
      ++c.ctx.result.messages;
      c.ctx.event_done();
    }
    const double waiting = sg4::Engine::get_clock();
    for (std::size_t r = 0; r < n; ++r) {
      const auto result = c.inbox->get_unique<Envelope>();
      c.stats.bytes_received += result->bytes;
    }
    timeline.record(IntervalKind::Wait, waiting, sg4::Engine::get_clock());
  }
  timeline.finish = sg4::Engine::get_clock();
}

/** Exchanges this iteration's halos with every peer: wait until some peer is there, communication after. */
void exchange_halos(Coordinated& c, int rank, RankTimeline& timeline) {
  const auto me = static_cast<std::size_t>(rank);
  const auto& peers = c.work.halo[me];
  if (peers.empty()) return;
  const double posted = sg4::Engine::get_clock();
  c.halo_posted[me] = posted;
  std::vector<sg4::CommPtr> comms;
  std::vector<std::uint64_t*> received(peers.size(), nullptr);
  for (std::size_t i = 0; i < peers.size(); ++i) {
    comms.push_back(
        c.halo_out[me][i]->put_async(std::make_unique<std::uint64_t>(peers[i].second).release(), peers[i].second));
    comms.push_back(c.halo_in[me][i]->get_async<std::uint64_t>(&received[i]));
  }
  sg4::Comm::wait_all(comms);
  // A peer that posted later than this rank has posted for this iteration by now (its halo is part of it).
  double first_peer = sg4::Engine::get_clock();
  for (const auto& [peer, bytes] : peers)
    first_peer = std::min(first_peer, c.halo_posted[static_cast<std::size_t>(peer)]);
  const double moving = std::max(posted, first_peer);
  timeline.record(IntervalKind::Wait, posted, moving);
  timeline.record(IntervalKind::Communication, moving, sg4::Engine::get_clock());
  for (std::size_t i = 0; i < peers.size(); ++i) {
    const std::unique_ptr<std::uint64_t> arrived(received[i]);
    timeline.bytes_sent += peers[i].second;
    timeline.bytes_received += *arrived;
    ++timeline.messages_sent;
    ++c.ctx.result.messages;
    c.ctx.event_done();
  }
}

void rank_actor(Coordinated& c, int rank) {
  const auto me = static_cast<std::size_t>(rank);
  RankTimeline& timeline = c.ctx.result.ranks[me];
  for (std::int64_t it = 0; it < c.ctx.plan.iterations; ++it) {
    receive_eager(c.start_boxes[me], timeline);
    c.ctx.begin_iteration(rank, it);
    for (const Step& step : c.ctx.steps(rank)) run_step(c.ctx, rank, timeline, step);
    exchange_halos(c, rank, timeline);
    send_eager(c.inbox, c.work.result_bytes[me]);
    timeline.bytes_sent += c.work.result_bytes[me];
    ++timeline.messages_sent;
    ++c.ctx.result.messages;
    c.ctx.event_done();
    c.ctx.end_iteration(it, sg4::Engine::get_clock());
  }
  timeline.finish = sg4::Engine::get_clock();
}

} // namespace

void start_coordinated(RunContext& ctx, const Platform& platform) {
  PARTSIM_CHECK(ctx.plan.coordinated() != nullptr) << "no coordinated work in the plan";
  PARTSIM_CHECK(platform.coordinator != nullptr) << "no coordinator host";
  const std::size_t n = ctx.plan.ranks.size();
  auto c = std::make_shared<Coordinated>(ctx, *ctx.plan.coordinated());
  c->inbox = sg4::Mailbox::by_name("coordinator");
  c->halo_posted.assign(n, 0.0);
  c->halo_out.resize(n);
  // Start messages get mailboxes of their own: with a permanent receiver they are eager, and the ring all-reduce
  // in the ranks' program must keep its rendezvous mailboxes.
  for (std::size_t r = 0; r < n; ++r) c->start_boxes.push_back(sg4::Mailbox::by_name("start-" + std::to_string(r)));
  c->halo_in.resize(n);
  c->stats.timeline.keep_all = ctx.options.record_all_intervals;
  for (std::size_t r = 0; r < n; ++r)
    for (const auto& [peer, bytes] : c->work.halo[r]) {
      c->halo_out[r].push_back(sg4::Mailbox::by_name("halo-" + std::to_string(r) + "-" + std::to_string(peer)));
      c->halo_in[r].push_back(sg4::Mailbox::by_name("halo-" + std::to_string(peer) + "-" + std::to_string(r)));
    }

  create_receiving_actor("coordinator", platform.coordinator, c->inbox, [c] {
    coordinator(*c);
    c->ctx.result.coordinator = c->stats;
  });
  for (std::size_t r = 0; r < n; ++r)
    create_receiving_actor("rank-" + std::to_string(r),
                           platform.gpus.at(static_cast<std::size_t>(ctx.plan.ranks[r].gpu)), c->start_boxes[r],
                           [c, r] { rank_actor(*c, static_cast<int>(r)); });
}

} // namespace partsim::engine
