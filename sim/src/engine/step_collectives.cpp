// Collectives at `steps` fidelity (engine-internal): every transfer of the algorithm's schedule (member_schedule,
// collective_schedule.hpp) as a SimGrid rendezvous communication between the two GPU hosts. See docs/collectives.md.
#include "collective_groups.hpp"

#include "partsim/common/error.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Mailbox.hpp>

#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>
#include <utility>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace partsim::engine {

namespace {

using Group = CollectiveGroup;

/** The transfers a rank posts in one step of an algorithm, waited for together. Each message carries its size, so
 * the receiver counts what arrived. Wait is the time with none of them moving; a transfer moves from its start
 * (both sides posted: SimGrid's start time of a rendezvous comm) to its finish. */
class StepTransfers {
 public:
  /** `wire_factor`: bytes on the links per byte of data (the collective's, wire_factor). */
  StepTransfers(RunContext& ctx, RankTimeline& timeline, double wire_factor)
      : ctx_(ctx), timeline_(timeline), wire_factor_(wire_factor) {}

  /** Sends `bytes` (what the receiver counts) as a transfer of `wire` bytes on the links (default: bytes x the
   * protocol's wire factor). Not
   * detached (which would save the sender's wait): SimGrid 3.32 finds a finished detached comm in one list of all of
   * them, quadratic in the messages in flight (30% slower at 1024 ranks). */
  void send(sg4::Mailbox* to, std::uint64_t bytes, double wire = -1.0, bool background = false) {
    if (!background) mark_posted();
    (background ? background_ : comms_)
        .push_back(to->put_async(std::make_unique<std::uint64_t>(bytes).release(),
                                 wire < 0 ? std::ceil(static_cast<double>(bytes) * wire_factor_) : wire));
    timeline_.bytes_sent += bytes;
    ++timeline_.messages_sent;
    ++ctx_.result.messages;
    ctx_.event_done();
  }

  /** Holds the rank in the collective for `seconds` more (latency the messages do not pay), as communication. */
  void hold(double seconds) {
    if (seconds <= 0) return;
    const double from = sg4::Engine::get_clock();
    sg4::this_actor::sleep_for(seconds);
    timeline_.record(IntervalKind::Communication, from, sg4::Engine::get_clock());
  }

  void receive(sg4::Mailbox* from, bool background = false) {
    if (background) {
      background_received_.push_back(nullptr);
      background_.push_back(from->get_async<std::uint64_t>(&background_received_.back()));
      return;
    }
    mark_posted();
    received_.push_back(nullptr); // a deque: the address SimGrid writes to stays valid
    comms_.push_back(from->get_async<std::uint64_t>(&received_.back()));
  }

  /** Waits for the transfers posted with `background` (they moved beside the steps waited for since, which the
   * timeline already holds as communication or wait): the time it blocks here is communication. */
  void wait_background() {
    const double from = sg4::Engine::get_clock();
    for (const sg4::CommPtr& c : background_) c->wait();
    timeline_.record(IntervalKind::Communication, from, sg4::Engine::get_clock());
    for (std::uint64_t* p : background_received_) {
      const std::unique_ptr<std::uint64_t> arrived(p);
      timeline_.bytes_received += *arrived;
    }
    background_.clear();
    background_received_.clear();
  }

  void wait() {
    if (comms_.empty()) return;
    // One wait per comm: Comm::wait_all waits for any of them over and over, quadratic in their number.
    for (const sg4::CommPtr& c : comms_) c->wait();
    spans_.clear();
    for (const sg4::CommPtr& c : comms_) spans_.emplace_back(c->get_start_time(), c->get_finish_time());
    std::sort(spans_.begin(), spans_.end());
    double cursor = posted_;
    for (const auto& [begin, end] : spans_) {
      if (end <= cursor) continue;
      const double from = std::max(begin, cursor);
      timeline_.record(IntervalKind::Wait, cursor, from);
      timeline_.record(IntervalKind::Communication, from, end);
      cursor = end;
    }
    for (std::uint64_t* p : received_) {
      const std::unique_ptr<std::uint64_t> arrived(p);
      timeline_.bytes_received += *arrived;
    }
    comms_.clear();
    received_.clear();
    posted_ = -1.0;
  }

 private:
  void mark_posted() {
    if (posted_ < 0) posted_ = sg4::Engine::get_clock();
  }

  RunContext& ctx_;
  RankTimeline& timeline_;
  double wire_factor_ = 1.0;
  std::vector<sg4::CommPtr> comms_;
  std::deque<std::uint64_t*> received_;
  std::vector<sg4::CommPtr> background_;
  std::deque<std::uint64_t*> background_received_;
  std::vector<std::pair<double, double>> spans_;
  double posted_ = -1.0;
};

/** Runs a member's schedule (member_schedule) through StepTransfers: each transfer on its connection's mailbox (one
 * per receiver and connection, so that the transfers between two members arrive in order), each round waited for
 * together. A direct all-to-all's and NVLS's connections are every pair: their mailboxes are the receiver's, one of
 * two by parity (peers are at most one round of them apart), the parity taken at a round's first such transfer. A
 * two-hop all-to-all's first round is such a round; its second takes the receiver's `hop` mailbox of the parity the
 * first took (two members that exchange in either round exchange in every all-to-all on the group, so neither is a
 * whole all-to-all ahead of the other's pending receives). */
class MailboxSink final : public ScheduleSink {
 public:
  MailboxSink(StepTransfers& x, Group& g, int pos) : x_(x), g_(g), pos_(pos) {}

  void post(const Post& p) override {
    sg4::Mailbox* box = mailbox(p);
    if (p.send)
      x_.send(box, p.bytes, p.wire, p.background);
    else
      x_.receive(box, p.background);
  }
  void end_round() override {
    x_.wait();
    parity_taken_ = false;
  }
  void wait_background() override { x_.wait_background(); }
  void hold(double seconds) override { x_.hold(seconds); }

 private:
  /** The receiver's mailbox of the connection: the peer's for a send, the member's own for a receive, except the
   * trees', which are the child's (a child sends up to its own, a parent receives from the child's). */
  sg4::Mailbox* mailbox(const Post& p) {
    const auto own = static_cast<std::size_t>(pos_);
    const auto peer = static_cast<std::size_t>(p.peer);
    const std::size_t receiver = p.send ? peer : own;
    const std::size_t child = p.send == (p.lane == Lane::TreeDown || p.lane == Lane::RailDown) ? peer : own;
    switch (p.lane) {
    case Lane::Ring:
      return g_.ring_in[static_cast<std::size_t>(p.index) * static_cast<std::size_t>(g_.size) + receiver];
    case Lane::TreeUp:
      return g_.tree_up[p.index][child];
    case Lane::TreeDown:
      return g_.tree_down[p.index][child];
    case Lane::Intra:
      return g_.intra_in[receiver];
    case Lane::Inter:
      return g_.inter_in[receiver];
    case Lane::Peer:
    case Lane::Switch:
    case Lane::Chain:
      if (!parity_taken_) {
        parity_ = g_.a2a_begun[own]++ & 1;
        parity_taken_ = true;
        parity_set_ = true;
      }
      return g_.a2a_in[parity_][receiver];
    case Lane::Hop: // the second round of a two-hop all-to-all: the parity its first round (Peer) took
      PARTSIM_CHECK(parity_set_) << "a two-hop all-to-all's second round before its first";
      return g_.hop_in[parity_][receiver];
    case Lane::RailUp:
      return g_.rail_up[p.index][child];
    case Lane::RailDown:
      return g_.rail_down[p.index][child];
    }
    PARTSIM_CHECK(false) << "unknown lane";
    return nullptr;
  }

  StepTransfers& x_;
  Group& g_;
  int pos_ = 0;
  std::size_t parity_ = 0;
  bool parity_taken_ = false;
  bool parity_set_ = false; ///< once in the collective (a sink runs one member's schedule of one collective)
};

} // namespace

void run_steps(RunContext& ctx, RankTimeline& timeline, const CollectiveStep& step, CollectiveGroup& g, int pos) {
  StepTransfers x(ctx, timeline, wire_factor(g, step));
  MailboxSink sink(x, g, pos);
  member_schedule(g, step, pos, sink);
}

} // namespace partsim::engine
