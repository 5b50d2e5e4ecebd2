// The serving engine: arrivals, stage replicas, shared queues with batching, transfers between pools and the
// orchestration delay per hop, each a SimGrid actor, semaphore or message (docs/serving.md).
#include "partsim/engine/serving_engine.hpp"

#include "partsim/common/error.hpp"
#include "partsim/engine/engine.hpp"
#include "partsim/serving/llm_cost.hpp"
#include "platform.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <simgrid/s4u/Semaphore.hpp>
#include <xbt/log.h>

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace partsim {

namespace {

using ItemId = std::uint32_t;

/** A batch of items travelling between pools (a message's payload) or waiting out the dispatch latency. */
struct Batch {
  std::vector<ItemId> items;
};

struct Item {
  double sent = 0.0;
  int sinks_left = 0;          ///< stages with no successor still to finish it (a graph: answered at 0)
  bool closed = false;         ///< answered or dropped: a graph's other branches hand it on no further
  int client = -1;             ///< closed loop: who waits for it
  bool measured = false;       ///< sent at or after the warm-up
  std::int64_t prompt = 0;     ///< LLM stage: input tokens
  std::int64_t output = 0;     ///< LLM stage: output tokens
  double first_token = 0.0;    ///< LLM stage: when its first output token was produced
  std::int64_t generated = 0;  ///< LLM stage: output tokens produced so far (kept across a preemption)
  bool has_kv = false;         ///< LLM stage: its KV cache is in the replica that admits it (a disaggregated arrival)
  bool waited = false;         ///< LLM stage: its time in the queue was counted (at its first admission)
  std::int64_t trace_row = -1; ///< a trace's request: its row (its token counts, when the trace has them)
  double admitted = -1.0;      ///< LLM stage: when first admitted to a running batch (-1: not yet)
};

/** A request in an LLM replica's running batch. */
struct Running {
  ItemId id = 0;
  std::int64_t context = 0;      ///< tokens in its KV cache
  std::int64_t prefill_left = 0; ///< tokens still to prefill (prompt, or prompt + generated after a preemption)
  std::int64_t chunk = 0;        ///< prefilled in the coming step
};

/** What an LLM replica does: both phases, or one side of a disaggregated stage. */
enum class LlmRole { Both, Prefill, Decode };

/** An LLM replica's GPUs and, on the decode side of a disaggregated stage, its own queue of requests whose KV cache
 * has arrived (and of those it preempted, at the head). */
struct LlmReplica {
  int index = 0; ///< within its stage, prefill replicas first
  std::vector<sg4::Host*> gpus;
  std::deque<ItemId> inbox;
  sg4::SemaphorePtr inbox_count = sg4::Semaphore::create(0);
};

struct StageRun {
  const ServingStage* spec = nullptr;
  std::size_t index = 0;
  ServingStageRaw* raw = nullptr;
  std::deque<ItemId> queue;
  sg4::SemaphorePtr available; ///< one token per queued item not yet claimed by a replica
  sg4::SemaphorePtr room;      ///< `block` queues: a token for each blocked producer when an item is taken
  int blocked_producers = 0;
  std::size_t idle = 0; ///< replicas waiting for a batch's first item: the queue's first `idle` items are theirs
  std::vector<sg4::Host*> node_hosts;
  std::vector<sg4::Mailbox*> ingress; ///< per node, when the previous stage sends bytes
  std::size_t next_node = 0;
  std::deque<std::pair<double, Batch>> delayed; ///< items waiting out the dispatch latency, in order
  sg4::SemaphorePtr delayed_count;
  double queue_changed = 0.0;
  double per_item_overhead = 0.0;
  Xoshiro256StarStar rng{1};
  std::optional<LlmReplicaCost> llm_cost; ///< an LLM stage's prices (one replica)
  std::vector<std::unique_ptr<LlmReplica>> llm_replicas;
  std::vector<LlmReplica*> decoders; ///< disaggregated: the decode pool's replicas
  std::size_t next_decoder = 0;
};

class ServingRun {
 public:
  ServingRun(const ServingWorkload& w, const ClusterSpec& cluster, ServingRunResult& result, std::uint64_t seed)
      : w_(w), result_(result), arrivals_rng_(seed * 0x9e3779b97f4a7c15ULL + 1) {
    result_.window_begin = w.warmup;
    result_.stages.resize(w.stages.size());
    for (ServingStageRaw& raw : result_.stages) {
      raw.queue_over_time = BinnedIntegral(w.warmup);
      raw.busy_over_time = BinnedIntegral(w.warmup);
    }
    for (std::size_t i = 0; i < w.stages.size(); ++i) {
      auto s = std::make_unique<StageRun>();
      s->spec = &w.stages[i];
      s->index = i;
      s->raw = &result_.stages[i];
      s->available = sg4::Semaphore::create(0);
      if (s->spec->capacity && s->spec->when_full == QueueFull::Block) s->room = sg4::Semaphore::create(0);
      s->delayed_count = sg4::Semaphore::create(0);
      s->per_item_overhead = w.stages[i].after.empty() ? 0.0 : w.orchestration.per_item_overhead;
      s->rng = Xoshiro256StarStar(seed * 0x9e3779b97f4a7c15ULL + 2 + i);
      if (const auto& llm = s->spec->llm) {
        s->llm_cost.emplace(llm->model, cluster.gpu, llm->data_type, llm->tensor_parallel, two_level_cost(cluster),
                            llm->workspace_fraction);
        s->raw->kv_capacity_tokens = static_cast<double>(s->llm_cost->kv_capacity_tokens());
        s->raw->kv_bytes_per_token = s->llm_cost->kv_bytes_per_token();
      }
      stages_.push_back(std::move(s));
    }
    all_done_ = sg4::Semaphore::create(0);
  }

  void start(const engine::Platform& platform, int gpus_per_node) {
    for (std::size_t i = 0; i < stages_.size(); ++i) {
      StageRun& s = *stages_[i];
      const ServingStage& spec = *s.spec;
      if (spec.llm) {
        start_llm(s, platform, gpus_per_node);
      } else {
        for (int n = 0; n < spec.nodes; ++n) {
          const int node = spec.first_node + n;
          s.node_hosts.push_back(platform.gpus.at(static_cast<std::size_t>(node * gpus_per_node)));
          for (int r = 0; r < spec.replicas_per_node; ++r) {
            sg4::Host* host = platform.gpus.at(static_cast<std::size_t>(node * gpus_per_node + r % gpus_per_node));
            const int index = n * spec.replicas_per_node + r;
            sg4::Actor::create(fmt::format("{}-{}-{}", spec.name, n, r), host, [this, &s, index] {
              replica(s, index);
            })->daemonize();
          }
        }
      }
      const bool receives_bytes = std::any_of(spec.after.begin(), spec.after.end(),
                                              [&](std::size_t p) { return w_.stages[p].output_bytes > 0; });
      if (receives_bytes)
        for (int n = 0; n < spec.nodes; ++n) {
          sg4::Mailbox* mailbox = sg4::Mailbox::by_name(fmt::format("{}-in-{}", spec.name, n));
          sg4::ActorPtr actor = sg4::Actor::create(fmt::format("{}-in-{}", spec.name, n), s.node_hosts[n],
                                                   [this, &s, mailbox] { ingress(s, mailbox); });
          actor->daemonize();
          mailbox->set_receiver(actor);
          s.ingress.push_back(mailbox);
        }
      if (!spec.after.empty() && w_.orchestration.dispatch_latency > 0)
        sg4::Actor::create(spec.name + "-dispatch", s.node_hosts[0], [this, &s] { dispatcher(s); })->daemonize();
    }
    sg4::Host* entry = stages_.front()->node_hosts.front();
    if (w_.arrivals.open()) {
      sg4::Actor::create("arrivals", entry, [this] { open_source(); });
    } else {
      clients_left_ = w_.arrivals.clients;
      for (int c = 0; c < w_.arrivals.clients; ++c) {
        client_wake_.push_back(sg4::Semaphore::create(0));
        sg4::Actor::create(fmt::format("client-{}", c), entry, [this, c] { client(c); });
      }
    }
    sg4::Actor::create("collector", entry, [this] { all_done_->acquire(); });
  }

 private:
  double now() const { return sg4::Engine::get_clock(); }

  /** An LLM stage's replicas: replica r of a node of T GPUs takes GPUs r T .. r T + T - 1 and runs on the first. A
   * disaggregated stage's prefill pool takes the stage's queue (its nodes receive the stage's input) and its own pool
   * decodes. */
  void start_llm(StageRun& s, const engine::Platform& platform, int gpus_per_node) {
    const ServingStage& spec = *s.spec;
    const int t = spec.llm->tensor_parallel;
    auto make = [&](int first_node, int nodes, int per_node, LlmRole role, const char* label) {
      for (int n = 0; n < nodes; ++n) {
        const int node = first_node + n;
        if (role != LlmRole::Decode)
          s.node_hosts.push_back(platform.gpus.at(static_cast<std::size_t>(node * gpus_per_node)));
        for (int r = 0; r < per_node; ++r) {
          auto replica = std::make_unique<LlmReplica>();
          replica->index = static_cast<int>(s.llm_replicas.size());
          for (int g = 0; g < t; ++g)
            replica->gpus.push_back(
                platform.gpus.at(static_cast<std::size_t>(node * gpus_per_node + (r * t + g) % gpus_per_node)));
          LlmReplica* self = replica.get();
          if (role == LlmRole::Decode) s.decoders.push_back(self);
          s.llm_replicas.push_back(std::move(replica));
          sg4::Actor::create(fmt::format("{}-{}{}-{}", spec.name, label, n, r), self->gpus.front(),
                             [this, &s, role, self] { llm_replica(s, role, *self); })
              ->daemonize();
        }
      }
    };
    if (const auto& pool = spec.llm->prefill_pool) {
      make(pool->first_node, pool->nodes, pool->replicas_per_node, LlmRole::Prefill, "prefill-");
      make(spec.first_node, spec.nodes, spec.replicas_per_node, LlmRole::Decode, "decode-");
    } else {
      make(spec.first_node, spec.nodes, spec.replicas_per_node, LlmRole::Both, "");
    }
  }

  ItemId new_item(int client) {
    const double t = now();
    items_.push_back({t, static_cast<int>(w_.sinks.size()), false, client, t >= w_.warmup});
    enter_.resize(enter_.size() + stages_.size(), 0.0);
    if (w_.dag) joins_.resize(joins_.size() + stages_.size(), 0);
    ++result_.sent;
    if (items_.back().measured) ++result_.measured_sent;
    return static_cast<ItemId>(items_.size() - 1);
  }

  void note_queue(StageRun& s) {
    const double t = now();
    if (t > w_.warmup) {
      s.raw->queue_area += static_cast<double>(s.queue.size()) * (t - std::max(s.queue_changed, w_.warmup));
      s.raw->queue_over_time.add(s.queue_changed, t, static_cast<double>(s.queue.size()));
    }
    s.queue_changed = t;
  }

  /** When request `id` joined stage `s`'s queue. */
  double& entered(ItemId id, const StageRun& s) { return enter_[id * stages_.size() + s.index]; }

  /** A new request goes to every stage that takes the arrivals. */
  void arrive(ItemId id) {
    for (const std::size_t root : w_.roots) enqueue(*stages_[root], id);
  }

  void drop(StageRun& s, ItemId id) {
    if (items_[id].closed) return;
    mark(s, id, ServingMark::Kind::Dropped);
    ++s.raw->dropped;
    ++result_.dropped;
    if (items_[id].measured) ++result_.measured_dropped;
    finish(id);
  }

  void enqueue(StageRun& s, ItemId id) {
    const ServingStage& spec = *s.spec;
    if (items_[id].closed) return; // dropped in another branch of a graph
    if (spec.llm) {
      // The request's lengths; one that no replica could ever serve is refused at once (vLLM refuses a request
      // longer than the model's context; here also one longer than a step's tokens or an empty KV cache).
      Item& item = items_[id];
      const ArrivalTrace* trace = w_.arrivals.trace.get();
      const auto row = static_cast<std::size_t>(item.trace_row);
      item.prompt = trace != nullptr && item.trace_row >= 0 && !trace->input_tokens.empty()
                        ? trace->input_tokens[row]
                        : sample(spec.llm->input_tokens, s.rng);
      item.output = trace != nullptr && item.trace_row >= 0 && !trace->output_tokens.empty()
                        ? trace->output_tokens[row]
                        : sample(spec.llm->output_tokens, s.rng);
      // A stage's own state of the request (an earlier LLM stage may have left its own).
      item.first_token = 0.0;
      item.generated = 0;
      item.has_kv = false;
      item.waited = false;
      item.admitted = -1.0;
      if ((!spec.llm->chunked_prefill && item.prompt > spec.llm->max_num_batched_tokens) ||
          item.prompt + item.output > spec.llm->model.sequence_length ||
          item.prompt + item.output > s.llm_cost->kv_capacity_tokens()) {
        ++s.raw->rejected;
        drop(s, id);
        return;
      }
    }
    // The waiting room holds the queued items beyond those an idle replica is about to take.
    auto full = [&] { return spec.capacity && s.queue.size() >= static_cast<std::size_t>(*spec.capacity) + s.idle; };
    if (full() && spec.when_full == QueueFull::Drop) {
      drop(s, id);
      return;
    }
    while (full()) { // block: wait for a replica to take an item
      ++s.blocked_producers;
      s.room->acquire();
      --s.blocked_producers;
    }
    note_queue(s);
    entered(id, s) = now();
    s.queue.push_back(id);
    s.raw->max_queue = std::max<std::uint64_t>(s.raw->max_queue, s.queue.size());
    s.available->release();
  }

  ItemId take(StageRun& s) {
    note_queue(s);
    const ItemId id = s.queue.front();
    s.queue.pop_front();
    if (s.blocked_producers > 0) s.room->release();
    return id;
  }

  /** Returns a taken item to the front of its queue (an LLM replica that could not admit it). */
  void put_back(StageRun& s, ItemId id) {
    note_queue(s);
    s.queue.push_front(id);
    s.available->release();
  }

  void finish(ItemId id) {
    items_[id].closed = true;
    ++finished_;
    result_.end = now();
    if (items_[id].client >= 0) client_wake_[static_cast<std::size_t>(items_[id].client)]->release();
    check_done();
  }

  void check_done() {
    if (sending_done_ && finished_ == result_.sent && !done_) {
      done_ = true;
      all_done_->release();
    }
  }

  void answer(ItemId id) {
    ++result_.answered;
    const double t = now();
    if (t >= w_.warmup) ++result_.answered_in_window;
    if (items_[id].measured) result_.latency.push_back(t - items_[id].sent);
    finish(id);
  }

  /** Items that finished stage `from` go to each of its successors (over the network when they carry bytes); a stage
   * with none answers those of its requests that no other such stage still holds. */
  void hand_on(StageRun& from, Batch batch) {
    if (w_.dag) std::erase_if(batch.items, [&](ItemId id) { return items_[id].closed; });
    const std::vector<std::size_t>& next = from.spec->next;
    if (next.empty()) {
      for (ItemId id : batch.items)
        if (--items_[id].sinks_left == 0) answer(id);
      return;
    }
    if (batch.items.empty()) return;
    for (std::size_t k = 0; k < next.size(); ++k) {
      StageRun& to = *stages_[next[k]];
      Batch copy = k + 1 < next.size() ? batch : std::move(batch);
      const double bytes = from.spec->output_bytes * static_cast<double>(copy.items.size());
      if (bytes > 0) {
        sg4::Mailbox* mailbox = to.ingress[to.next_node++ % to.ingress.size()];
        mailbox->put_init(new Batch(std::move(copy)), static_cast<std::uint64_t>(bytes))->detach();
        ++result_.messages;
        result_.bytes_sent += static_cast<std::uint64_t>(bytes);
      } else {
        deliver(to, std::move(copy));
      }
    }
  }

  /** Items reaching stage `to` from one of its predecessors: at a join, only those that all its predecessors have now
   * handed on go further; then the orchestration's dispatch latency, then the queue. */
  void deliver(StageRun& to, Batch batch) {
    const std::size_t joined = to.spec->after.size();
    if (joined > 1) {
      std::erase_if(batch.items, [&](ItemId id) { return ++joins_[id * stages_.size() + to.index] < joined; });
      if (batch.items.empty()) return;
    }
    if (!to.spec->after.empty() && w_.orchestration.dispatch_latency > 0) {
      to.delayed.emplace_back(now() + w_.orchestration.dispatch_latency, std::move(batch));
      to.delayed_count->release();
      return;
    }
    for (ItemId id : batch.items) enqueue(to, id);
  }

  void ingress(StageRun& s, sg4::Mailbox* mailbox) {
    for (;;) {
      std::unique_ptr<Batch> batch = mailbox->get_unique<Batch>();
      deliver(s, std::move(*batch));
    }
  }

  void dispatcher(StageRun& s) {
    for (;;) {
      s.delayed_count->acquire();
      const double ready = s.delayed.front().first;
      if (ready > now()) {
        sg4::this_actor::sleep_until(ready);
        ++result_.sleeps;
      }
      Batch batch = std::move(s.delayed.front().second);
      s.delayed.pop_front();
      for (ItemId id : batch.items) enqueue(s, id);
    }
  }

  /** A request that produced its last token leaves the LLM stage: its statistics, then the next stage. */
  void llm_finish(StageRun& s, ItemId id, double end, int replica) {
    const LlmStage& llm = *s.spec->llm;
    ServingStageRaw& raw = *s.raw;
    const Item& item = items_[id];
    ++raw.served;
    trace(s, id, replica, item.admitted < 0 ? end : item.admitted, end);
    if (item.measured) {
      const double ttft = item.first_token - item.sent;
      const double tpot = item.output > 1 ? (end - item.first_token) / static_cast<double>(item.output - 1) : 0.0;
      if (item.output > 1) raw.tpot.push_back(tpot);
      raw.latency.push_back(end - entered(id, s));
      if ((!llm.ttft_target || ttft <= *llm.ttft_target) && (!llm.tpot_target || tpot <= *llm.tpot_target))
        ++raw.slo_met;
    }
  }

  /** Disaggregation: the KV cache of a prefilled request goes from its prefill replica's GPUs to a decode replica's
   * (round robin), one SimGrid communication per GPU of the replica (its shard: context x kv_bytes_per_token); the
   * request's first token reaches the client when the last shard has arrived and it joins the decode replica's
   * queue. Runs as a short-lived actor. */
  void kv_transfer(StageRun& s, const LlmReplica& from, LlmReplica& to, ItemId id) {
    const std::int64_t context = items_[id].prompt + items_[id].generated - 1;
    const double bytes = static_cast<double>(context) * s.llm_cost->kv_bytes_per_token();
    const double begin = now();
    std::vector<sg4::CommPtr> comms;
    for (std::size_t g = 0; g < from.gpus.size(); ++g)
      comms.push_back(sg4::Comm::sendto_async(from.gpus[g], to.gpus[g], static_cast<std::uint64_t>(bytes)));
    for (const sg4::CommPtr& c : comms) c->wait();
    const double end = now();
    Item& item = items_[id]; // after the waits: the items may have moved
    ServingStageRaw& raw = *s.raw;
    result_.messages += comms.size();
    result_.bytes_sent += static_cast<std::uint64_t>(bytes) * comms.size();
    ++raw.kv_transfers;
    raw.kv_transfer_bytes += bytes * static_cast<double>(comms.size());
    if (item.measured) raw.kv_transfer.push_back(end - begin);
    if (item.generated == 1) {
      item.first_token = end;
      if (item.measured) raw.ttft.push_back(end - item.sent);
    }
    if (item.generated >= item.output) { // one output token: nothing to decode
      llm_finish(s, id, end, to.index);
      hand_on(s, Batch{{id}});
      return;
    }
    item.has_kv = true;
    to.inbox.push_back(id);
    to.inbox_count->release();
  }

  /** An LLM server replica: continuous batching at iteration level. Each step first (kv_admission preempt) preempts
   * the most recently admitted requests while the running ones' next KV slots do not fit; then admits requests from
   * its queue in order while the running batch, the step's token budget and the KV cache allow; then prefills (whole
   * prompts, or chunks with chunked_prefill) and decodes one token of every decoding request. A prefill replica of a
   * disaggregated stage sends each prefilled request's KV cache to a decode replica; a decode replica takes requests
   * whose KV cache has arrived. */
  void llm_replica(StageRun& s, LlmRole role, LlmReplica& self) {
    const LlmStage& llm = *s.spec->llm;
    const LlmReplicaCost& cost = *s.llm_cost;
    const std::int64_t capacity = cost.kv_capacity_tokens();
    const bool preempt = llm.kv_admission == KvAdmission::Preempt;
    const bool chunked = llm.chunked_prefill;
    const bool own_queue = role == LlmRole::Decode;
    ServingStageRaw& raw = *s.raw;
    std::vector<Running> running;
    std::vector<std::int64_t> prompts;
    std::vector<LlmReplicaCost::PrefillChunk> chunks;
    std::int64_t reserved = 0; // reserve_full: prompt + output of every running request
    auto queue_empty = [&] { return own_queue ? self.inbox_count->would_block() : s.available->would_block(); };
    auto queue_front = [&] { return own_queue ? self.inbox.front() : s.queue.front(); };
    auto take_front = [&] {
      if (!own_queue) {
        s.available->acquire();
        return take(s);
      }
      self.inbox_count->acquire();
      const ItemId id = self.inbox.front();
      self.inbox.pop_front();
      return id;
    };
    auto put_front = [&](ItemId id) {
      if (!own_queue) {
        put_back(s, id);
        return;
      }
      self.inbox.push_front(id);
      self.inbox_count->release();
    };
    // Tokens to prefill before the request decodes: none when its KV cache is here, else its prompt and the tokens
    // it generated before a preemption.
    auto target = [&](ItemId id) { return items_[id].has_kv ? 0 : items_[id].prompt + items_[id].generated; };
    // KV slots a running request needs in the coming step (preempt).
    auto slots = [](const Running& r) { return r.prefill_left > 0 ? r.context + r.chunk : r.context + 1; };
    for (;;) {
      // Preemption: the running requests' slots for this step (one token per decode) must fit.
      std::int64_t need = 0;
      for (Running& r : running) {
        r.chunk = 0;
        need += slots(r);
      }
      while (preempt && need > capacity && !running.empty()) {
        const Running victim = running.back();
        running.pop_back();
        need -= slots(victim);
        items_[victim.id].has_kv = false;
        ++raw.preemptions;
        mark(s, victim.id, ServingMark::Kind::Preempted);
        put_front(victim.id);
      }
      std::optional<ItemId> taken; // an idle replica's first request, admitted whatever the budget
      if (running.empty()) {
        if (own_queue) {
          taken = take_front();
        } else {
          ++s.idle;
          s.available->acquire();
          --s.idle;
          taken = take(s);
        }
        if (items_[*taken].closed) taken.reset(); // dropped in another branch of a graph meanwhile
      }
      std::int64_t decodes = 0;
      for (const Running& r : running)
        if (r.prefill_left == 0) ++decodes;
      std::int64_t budget = llm.max_num_batched_tokens - decodes;
      if (chunked)
        for (Running& r : running)
          if (r.prefill_left > 0 && budget > 0) {
            r.chunk = std::min(r.prefill_left, budget);
            if (preempt) r.chunk = std::min(r.chunk, capacity - need);
            if (r.chunk <= 0) {
              r.chunk = 0;
              continue;
            }
            need += r.chunk;
            budget -= r.chunk;
          }
      // Admission in order; the first request that does not fit waits, and those behind it with it. A replica with
      // nothing running takes the queue's first request whatever the budget (a recomputation may exceed it).
      auto tokens_of = [&](std::int64_t prefill) {
        return prefill == 0 ? std::int64_t{1} : (chunked ? std::min(prefill, budget) : prefill);
      };
      auto admit = [&](ItemId id, std::int64_t prefill, std::int64_t tokens) {
        Item& item = items_[id];
        if (item.admitted < 0) item.admitted = now();
        if (!preempt) reserved += item.prompt + item.output;
        if (!own_queue && !item.waited) {
          item.waited = true;
          if (item.measured) raw.wait.push_back(now() - entered(id, s));
        }
        const Running r{id, prefill == 0 ? item.prompt + item.generated - 1 : 0, prefill, prefill == 0 ? 0 : tokens};
        need += slots(r);
        budget -= tokens;
        running.push_back(r);
      };
      if (taken) {
        const std::int64_t prefill = target(*taken);
        admit(*taken, prefill, tokens_of(prefill));
      }
      while (running.size() < static_cast<std::size_t>(llm.max_num_seqs) && !queue_empty()) {
        const ItemId next = queue_front();
        const Item& item = items_[next];
        if (item.closed) { // dropped in another branch of a graph: discarded unserved
          const ItemId id = take_front();
          if (id != next) put_front(id);
          continue;
        }
        const std::int64_t prefill = target(next);
        const std::int64_t tokens = tokens_of(prefill);
        if (tokens > budget || tokens <= 0) break;
        const std::int64_t slots_needed = prefill == 0 ? item.prompt + item.generated : tokens;
        const bool fits = preempt ? need + slots_needed <= capacity : reserved + item.prompt + item.output <= capacity;
        if (!fits) {
          ++raw.kv_blocked_steps;
          break;
        }
        const ItemId id = take_front();
        // Another replica of the stage may have taken the request looked at while this one waited for its token:
        // one taken in its place goes back.
        if (id != next) {
          put_front(id);
          break;
        }
        admit(id, prefill, tokens);
      }
      if (running.empty()) continue; // what it took was dropped in another branch of a graph
      prompts.clear();
      chunks.clear();
      double context = 0.0;
      decodes = 0;
      for (const Running& r : running) {
        if (r.prefill_left == 0) {
          ++decodes;
          context += static_cast<double>(r.context);
        } else if (r.chunk > 0) {
          prompts.push_back(r.chunk);
          chunks.push_back({r.context, r.chunk, r.chunk == r.prefill_left});
        }
      }
      double step = 0.0;
      if (chunked && !chunks.empty())
        step = cost.chunked_step_time(chunks, decodes, context);
      else
        step = cost.prefill_time(prompts) + cost.decode_step_time(decodes, context);
      const double begin = now();
      sg4::this_actor::sleep_for(step);
      ++result_.sleeps;
      const double end = now();
      raw.busy += end - begin;
      const double in_window = std::max(0.0, end - std::max(begin, w_.warmup));
      raw.busy_in_window += in_window;
      raw.busy_over_time.add(begin, end, 1.0);
      if (role == LlmRole::Prefill) raw.prefill_busy_in_window += in_window;
      ++raw.steps;
      if (!chunks.empty()) ++raw.prefill_steps;
      const auto batch = static_cast<std::uint64_t>(running.size());
      raw.running_area += static_cast<double>(batch) * (end - begin);
      raw.max_running = std::max(raw.max_running, batch);
      std::uint64_t produced = 0;
      std::int64_t held = 0;
      for (Running& r : running) {
        Item& item = items_[r.id];
        if (r.prefill_left == 0) {
          ++r.context;
          ++item.generated;
          ++produced;
        } else if (r.chunk > 0) {
          (item.generated == 0 ? raw.input_tokens : raw.recomputed_tokens) += static_cast<std::uint64_t>(r.chunk);
          r.context += r.chunk;
          r.prefill_left -= r.chunk;
          if (r.prefill_left == 0) {
            ++item.generated;
            ++produced;
            item.has_kv = true;
            if (item.generated == 1 && role == LlmRole::Both) {
              item.first_token = end;
              if (item.measured) raw.ttft.push_back(end - item.sent);
            }
          }
        }
        held += r.context;
      }
      raw.output_tokens += produced;
      if (end >= w_.warmup) raw.output_tokens_in_window += produced;
      raw.kv_peak_tokens = std::max(raw.kv_peak_tokens, static_cast<std::uint64_t>(held));
      Batch done;
      std::erase_if(running, [&](const Running& r) {
        const Item& item = items_[r.id];
        if (r.prefill_left > 0) return false;
        if (role == LlmRole::Prefill) {
          LlmReplica& to = *s.decoders[s.next_decoder++ % s.decoders.size()];
          const ItemId id = r.id;
          sg4::Actor::create("kv", self.gpus.front(), [this, &s, &self, &to, id] { kv_transfer(s, self, to, id); });
          return true;
        }
        if (item.generated < item.output) return false;
        if (!preempt) reserved -= item.prompt + item.output;
        llm_finish(s, r.id, end, self.index);
        done.items.push_back(r.id);
        return true;
      });
      if (!done.items.empty()) {
        ++raw.batches;
        hand_on(s, std::move(done));
      }
    }
  }

  /** Records request `id`'s span in stage `s` when it is one of the traced requests. */
  void trace(const StageRun& s, ItemId id, int replica, double begin, double end) {
    if (id >= kTracedRequests) return;
    result_.spans.push_back({id, static_cast<std::uint32_t>(s.index), replica, entered(id, s), begin, end});
  }

  /** Records what happened to request `id` now in stage `s` when it is one of the traced requests. */
  void mark(const StageRun& s, ItemId id, ServingMark::Kind kind) {
    if (id < kTracedRequests) result_.marks.push_back({id, static_cast<std::uint32_t>(s.index), kind, now()});
  }

  void replica(StageRun& s, int index) {
    const ServingStage& spec = *s.spec;
    Batch batch;
    for (;;) {
      batch.items.clear();
      ++s.idle;
      s.available->acquire();
      --s.idle;
      // A request dropped in another branch of a graph while queued here is discarded unserved.
      if (const ItemId first = take(s); !items_[first].closed)
        batch.items.push_back(first);
      else
        continue;
      if (spec.max_batch > 1) {
        const double deadline = now() + spec.max_wait;
        while (batch.items.size() < static_cast<std::size_t>(spec.max_batch)) {
          if (!s.available->would_block()) {
            s.available->acquire();
          } else {
            const double remaining = deadline - now();
            if (remaining <= 0 || s.available->acquire_timeout(remaining)) break;
          }
          if (const ItemId id = take(s); !items_[id].closed) batch.items.push_back(id);
        }
      }
      const auto n = static_cast<double>(batch.items.size());
      const double service =
          (spec.batch_service.empty() ? (sample(spec.service, s.rng) + (n - 1) * spec.extra_item_time) / spec.speed
                                      : spec.batch_service[batch.items.size() - 1]) +
          n * s.per_item_overhead;
      const double begin = now();
      for (ItemId id : batch.items)
        if (items_[id].measured) s.raw->wait.push_back(begin - entered(id, s));
      if (service > 0) {
        sg4::this_actor::sleep_for(service);
        ++result_.sleeps;
      }
      const double end = now();
      s.raw->busy += end - begin;
      s.raw->busy_in_window += std::max(0.0, end - std::max(begin, w_.warmup));
      s.raw->busy_over_time.add(begin, end, 1.0);
      s.raw->served += batch.items.size();
      ++s.raw->batches;
      for (ItemId id : batch.items) {
        if (items_[id].measured) s.raw->latency.push_back(end - entered(id, s));
        trace(s, id, index, begin, end);
      }
      hand_on(s, std::move(batch));
      batch = Batch{};
    }
  }

  /** The time until the next arrival of an open loop, or nothing when the trace has no more rows. */
  std::optional<double> next_gap(std::int64_t i) {
    switch (w_.arrivals.process) {
    case ArrivalProcess::Poisson:
      return -std::log(1.0 - arrivals_rng_.uniform()) / w_.arrivals.rate;
    case ArrivalProcess::Gamma:
      return sample(TimeDistribution{DistributionKind::Gamma, 1.0 / w_.arrivals.rate, w_.arrivals.cv, nullptr},
                    arrivals_rng_);
    case ArrivalProcess::Trace: {
      const std::vector<double>& times = w_.arrivals.trace->times;
      if (i >= std::ssize(times)) return std::nullopt;
      return std::max(0.0, times[static_cast<std::size_t>(i)] - now());
    }
    case ArrivalProcess::Closed:
      break;
    }
    PARTSIM_CHECK(false) << "a closed loop has no open source";
    return std::nullopt;
  }

  void open_source() {
    for (std::int64_t i = 0; !w_.requests || i < *w_.requests; ++i) {
      const std::optional<double> gap = next_gap(i);
      if (!gap || (w_.duration && now() + *gap > *w_.duration)) break;
      if (w_.arrivals.trace) {
        const double at = w_.arrivals.trace->times[static_cast<std::size_t>(i)];
        if (at > now()) {
          sg4::this_actor::sleep_until(at);
          ++result_.sleeps;
        }
      } else {
        sg4::this_actor::sleep_for(*gap);
        ++result_.sleeps;
      }
      const ItemId id = new_item(-1);
      if (w_.arrivals.trace) items_[id].trace_row = i;
      arrive(id);
    }
    sending_done_ = true;
    check_done();
  }

  void client(int c) {
    for (;;) {
      if (w_.requests && result_.sent >= static_cast<std::uint64_t>(*w_.requests)) break;
      if (w_.duration && now() >= *w_.duration) break;
      arrive(new_item(c));
      client_wake_[static_cast<std::size_t>(c)]->acquire();
      const double think = sample(w_.arrivals.think_time, arrivals_rng_);
      if (think > 0) {
        sg4::this_actor::sleep_for(think);
        ++result_.sleeps;
      }
    }
    if (--clients_left_ == 0) {
      sending_done_ = true;
      check_done();
    }
  }

  const ServingWorkload& w_;
  ServingRunResult& result_;
  Xoshiro256StarStar arrivals_rng_;
  std::vector<std::unique_ptr<StageRun>> stages_;
  std::vector<Item> items_;
  std::vector<double> enter_;       ///< per request and stage: when it joined the stage's queue
  std::vector<std::uint8_t> joins_; ///< a graph's, per request and stage: predecessors that handed it on
  std::vector<sg4::SemaphorePtr> client_wake_;
  sg4::SemaphorePtr all_done_;
  int clients_left_ = 0;
  std::uint64_t finished_ = 0;
  bool sending_done_ = false;
  bool done_ = false;
};

} // namespace

ServingRunResult simulate_serving(const Scenario& scenario) {
  const auto& workload = std::get<ServingWorkload>(scenario.workload);
  // Events: a service sleep and at most a message or a delay per request and stage, plus its arrival.
  const ArrivalTrace* trace = workload.arrivals.trace.get();
  double requests = workload.requests ? static_cast<double>(*workload.requests) : 0.0;
  if (trace != nullptr && !workload.requests)
    requests = static_cast<double>(trace->times.size());
  else if (!workload.requests && workload.arrivals.open())
    requests = workload.arrivals.rate * *workload.duration;
  double events = requests * (1.0 + 2.0 * static_cast<double>(workload.stages.size()));
  // An LLM stage: one step per output token at worst (a batch of one).
  for (const ServingStage& s : workload.stages)
    if (s.llm) {
      const TokenLengths& out = s.llm->output_tokens;
      double mean = out.kind == LengthKind::Uniform ? 0.5 * static_cast<double>(out.min + out.max) : out.mean;
      if (trace != nullptr && !trace->output_tokens.empty())
        mean = std::accumulate(trace->output_tokens.begin(), trace->output_tokens.end(), 0.0) /
               static_cast<double>(trace->output_tokens.size());
      events += requests * mean;
    }
  if (events > static_cast<double>(scenario.run.max_events))
    throw InputError(scenario.source, workload.requests ? "/workload/requests" : "/workload/duration",
                     fmt::format("the run would simulate about {:.3g} events, more than /run/max_events ({}); expected "
                                 "fewer requests or a larger /run/max_events",
                                 events, scenario.run.max_events));
  xbt_log_control_set("root.thresh:warning xbt_cfg.thresh:warning");
  // Not destroyed: as in simulate(), SimGrid's exit handler does it, and one engine per process anyway.
  auto& engine = engine::new_engine("partsim");
  ServingRunResult result;
  sg4::Actor::on_creation_cb([&result](sg4::Actor&) { ++result.actors; });
  result.network = engine::configure_network(scenario.run.network_model);
  engine::configure_contexts(0); // no guard-page rule here: these runs have far fewer actors
  const engine::Platform platform = engine::build_platform(scenario.cluster, workload.data_type, false);
  // On the heap and never freed: daemons still blocked on its semaphores when the run ends belong to SimGrid, which
  // tears them down at exit; kept reachable until then (keep_until_exit).
  auto* run =
      new ServingRun(workload, scenario.cluster, result, scenario.run.seed); // NOLINT(cppcoreguidelines-owning-memory)
  engine::keep_until_exit(run);
  run->start(platform, scenario.cluster.gpus_per_node);
  bool deadlock = false;
  sg4::Engine::on_deadlock_cb([&deadlock] { deadlock = true; });
  engine.run();
  PARTSIM_CHECK(!deadlock) << "the serving run deadlocked";
  return result;
}

} // namespace partsim
