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
  double stage_enter = 0.0; ///< when it joined its current stage's queue
  int client = -1;          ///< closed loop: who waits for it
  bool measured = false;    ///< sent at or after the warm-up
  std::int64_t prompt = 0;  ///< LLM stage: input tokens
  std::int64_t output = 0;  ///< LLM stage: output tokens
  double first_token = 0.0; ///< LLM stage: when its first output token was produced
};

/** A request in an LLM replica's running batch. */
struct Running {
  ItemId id = 0;
  std::int64_t context = 0;   ///< tokens in its KV cache
  std::int64_t generated = 0; ///< output tokens produced
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
};

class ServingRun {
 public:
  ServingRun(const ServingWorkload& w, const ClusterSpec& cluster, ServingRunResult& result, std::uint64_t seed)
      : w_(w), result_(result), arrivals_rng_(seed * 0x9e3779b97f4a7c15ULL + 1) {
    result_.window_begin = w.warmup;
    result_.stages.resize(w.stages.size());
    for (std::size_t i = 0; i < w.stages.size(); ++i) {
      auto s = std::make_unique<StageRun>();
      s->spec = &w.stages[i];
      s->index = i;
      s->raw = &result_.stages[i];
      s->available = sg4::Semaphore::create(0);
      if (s->spec->capacity && s->spec->when_full == QueueFull::Block) s->room = sg4::Semaphore::create(0);
      s->delayed_count = sg4::Semaphore::create(0);
      s->per_item_overhead = i > 0 ? w.orchestration.per_item_overhead : 0.0;
      s->rng = Xoshiro256StarStar(seed * 0x9e3779b97f4a7c15ULL + 2 + i);
      if (const auto& llm = s->spec->llm) {
        s->llm_cost.emplace(llm->model, cluster.gpu, llm->data_type, llm->tensor_parallel,
                            two_level_cost(cluster).intra, llm->workspace_fraction);
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
      for (int n = 0; n < spec.nodes; ++n) {
        const int node = spec.first_node + n;
        s.node_hosts.push_back(platform.gpus.at(static_cast<std::size_t>(node * gpus_per_node)));
        // An LLM replica of T GPUs takes GPUs r T .. r T + T - 1 of its node and runs on the first.
        const int stride = spec.llm ? spec.llm->tensor_parallel : 1;
        for (int r = 0; r < spec.replicas_per_node; ++r) {
          sg4::Host* host =
              platform.gpus.at(static_cast<std::size_t>(node * gpus_per_node + (r * stride) % gpus_per_node));
          sg4::Actor::create(fmt::format("{}-{}-{}", spec.name, n, r), host, [this, &s] { replica(s); })->daemonize();
        }
      }
      const bool receives_bytes = i > 0 && w_.stages[i - 1].output_bytes > 0;
      if (receives_bytes)
        for (int n = 0; n < spec.nodes; ++n) {
          sg4::Mailbox* mailbox = sg4::Mailbox::by_name(fmt::format("{}-in-{}", spec.name, n));
          sg4::ActorPtr actor = sg4::Actor::create(fmt::format("{}-in-{}", spec.name, n), s.node_hosts[n],
                                                   [this, &s, mailbox] { ingress(s, mailbox); });
          actor->daemonize();
          mailbox->set_receiver(actor);
          s.ingress.push_back(mailbox);
        }
      if (i > 0 && w_.orchestration.dispatch_latency > 0)
        sg4::Actor::create(spec.name + "-dispatch", s.node_hosts[0], [this, &s] { dispatcher(s); })->daemonize();
    }
    sg4::Host* entry = stages_.front()->node_hosts.front();
    if (w_.arrivals.process == ArrivalProcess::Poisson) {
      sg4::Actor::create("arrivals", entry, [this] { poisson_source(); });
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

  ItemId new_item(int client) {
    const double t = now();
    items_.push_back({t, t, client, t >= w_.warmup});
    ++result_.sent;
    if (items_.back().measured) ++result_.measured_sent;
    return static_cast<ItemId>(items_.size() - 1);
  }

  void note_queue(StageRun& s) {
    const double t = now();
    if (t > w_.warmup)
      s.raw->queue_area += static_cast<double>(s.queue.size()) * (t - std::max(s.queue_changed, w_.warmup));
    s.queue_changed = t;
  }

  void drop(StageRun& s, ItemId id) {
    ++s.raw->dropped;
    ++result_.dropped;
    if (items_[id].measured) ++result_.measured_dropped;
    finish(id);
  }

  void enqueue(StageRun& s, ItemId id) {
    const ServingStage& spec = *s.spec;
    if (spec.llm) {
      // The request's lengths; one that no replica could ever serve is refused at once (vLLM refuses a request
      // longer than the model's context; here also one longer than a step's tokens or an empty KV cache).
      Item& item = items_[id];
      item.prompt = sample(spec.llm->input_tokens, s.rng);
      item.output = sample(spec.llm->output_tokens, s.rng);
      if (item.prompt > spec.llm->max_num_batched_tokens ||
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
    items_[id].stage_enter = now();
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

  /** Items that finished stage `from` go to the next stage (over the network when they carry bytes). */
  void hand_on(StageRun& from, Batch batch) {
    if (from.index + 1 == stages_.size()) {
      for (ItemId id : batch.items) answer(id);
      return;
    }
    StageRun& to = *stages_[from.index + 1];
    const double bytes = from.spec->output_bytes * static_cast<double>(batch.items.size());
    if (bytes > 0) {
      sg4::Mailbox* mailbox = to.ingress[to.next_node++ % to.ingress.size()];
      mailbox->put_init(new Batch(std::move(batch)), static_cast<std::uint64_t>(bytes))->detach();
      ++result_.messages;
      result_.bytes_sent += static_cast<std::uint64_t>(bytes);
    } else {
      deliver(to, std::move(batch));
    }
  }

  void deliver(StageRun& to, Batch batch) {
    if (to.index > 0 && w_.orchestration.dispatch_latency > 0) {
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

  /** An LLM server replica: continuous batching at iteration level. Each step admits requests from the stage's queue
   * in order while the running batch, the step's token budget and the KV cache (each request reserves its prompt and
   * output tokens) allow, prefills them and decodes one token of every running request; finished requests leave
   * after the step. */
  void llm_replica(StageRun& s) {
    const LlmStage& llm = *s.spec->llm;
    const LlmReplicaCost& cost = *s.llm_cost;
    const std::int64_t capacity = cost.kv_capacity_tokens();
    ServingStageRaw& raw = *s.raw;
    std::vector<Running> running;
    std::vector<ItemId> admitted;
    std::vector<std::int64_t> prompts;
    std::int64_t reserved = 0;
    for (;;) {
      admitted.clear();
      prompts.clear();
      std::int64_t budget = llm.max_num_batched_tokens - static_cast<std::int64_t>(running.size());
      auto admit = [&](ItemId id) {
        const Item& item = items_[id];
        admitted.push_back(id);
        prompts.push_back(item.prompt);
        reserved += item.prompt + item.output;
        budget -= item.prompt;
        if (item.measured) raw.wait.push_back(now() - item.stage_enter);
      };
      if (running.empty()) {
        ++s.idle;
        s.available->acquire();
        --s.idle;
        admit(take(s));
      }
      while (running.size() + admitted.size() < static_cast<std::size_t>(llm.max_num_seqs) &&
             !s.available->would_block()) {
        const Item& next = items_[s.queue.front()];
        if (next.prompt > budget) break;
        if (reserved + next.prompt + next.output > capacity) {
          ++raw.kv_blocked_steps;
          break;
        }
        s.available->acquire();
        // Another replica of the stage may have taken the request looked at while this one waited for the token:
        // the one taken is checked again and put back when it does not fit.
        const ItemId id = take(s);
        const Item& taken = items_[id];
        if (taken.prompt > budget || reserved + taken.prompt + taken.output > capacity) {
          put_back(s, id);
          break;
        }
        admit(id);
      }
      double context = 0.0;
      for (const Running& r : running) context += static_cast<double>(r.context);
      const double step =
          cost.prefill_time(prompts) + cost.decode_step_time(static_cast<std::int64_t>(running.size()), context);
      const double begin = now();
      sg4::this_actor::sleep_for(step);
      ++result_.sleeps;
      const double end = now();
      const auto batch = static_cast<std::uint64_t>(running.size() + admitted.size());
      raw.busy += end - begin;
      raw.busy_in_window += std::max(0.0, end - std::max(begin, w_.warmup));
      ++raw.steps;
      if (!prompts.empty()) ++raw.prefill_steps;
      raw.running_area += static_cast<double>(batch) * (end - begin);
      raw.max_running = std::max(raw.max_running, batch);
      raw.output_tokens += batch;
      if (end >= w_.warmup) raw.output_tokens_in_window += batch;
      for (std::int64_t p : prompts) raw.input_tokens += static_cast<std::uint64_t>(p);
      for (Running& r : running) {
        ++r.context;
        ++r.generated;
      }
      for (ItemId id : admitted) {
        Item& item = items_[id];
        item.first_token = end;
        if (item.measured) raw.ttft.push_back(end - item.sent);
        running.push_back({id, item.prompt, 1});
      }
      std::int64_t held = 0;
      for (const Running& r : running) held += r.context;
      raw.kv_peak_tokens = std::max(raw.kv_peak_tokens, static_cast<std::uint64_t>(held));
      Batch done;
      std::erase_if(running, [&](const Running& r) {
        const Item& item = items_[r.id];
        if (r.generated < item.output) return false;
        reserved -= item.prompt + item.output;
        ++raw.served;
        if (item.measured) {
          const double ttft = item.first_token - item.sent;
          const double tpot = item.output > 1 ? (end - item.first_token) / static_cast<double>(item.output - 1) : 0.0;
          if (item.output > 1) raw.tpot.push_back(tpot);
          raw.latency.push_back(end - item.stage_enter);
          if ((!llm.ttft_target || ttft <= *llm.ttft_target) && (!llm.tpot_target || tpot <= *llm.tpot_target))
            ++raw.slo_met;
        }
        done.items.push_back(r.id);
        return true;
      });
      if (!done.items.empty()) {
        ++raw.batches;
        hand_on(s, std::move(done));
      }
    }
  }

  void replica(StageRun& s) {
    const ServingStage& spec = *s.spec;
    if (spec.llm) {
      llm_replica(s);
      return;
    }
    Batch batch;
    for (;;) {
      batch.items.clear();
      ++s.idle;
      s.available->acquire();
      --s.idle;
      batch.items.push_back(take(s));
      if (spec.max_batch > 1) {
        const double deadline = now() + spec.max_wait;
        while (batch.items.size() < static_cast<std::size_t>(spec.max_batch)) {
          if (!s.available->would_block()) {
            s.available->acquire();
          } else {
            const double remaining = deadline - now();
            if (remaining <= 0 || s.available->acquire_timeout(remaining)) break;
          }
          batch.items.push_back(take(s));
        }
      }
      const auto n = static_cast<double>(batch.items.size());
      const double service = sample(spec.service, s.rng) + (n - 1) * spec.extra_item_time + n * s.per_item_overhead;
      const double begin = now();
      for (ItemId id : batch.items)
        if (items_[id].measured) s.raw->wait.push_back(begin - items_[id].stage_enter);
      if (service > 0) {
        sg4::this_actor::sleep_for(service);
        ++result_.sleeps;
      }
      const double end = now();
      s.raw->busy += end - begin;
      s.raw->busy_in_window += std::max(0.0, end - std::max(begin, w_.warmup));
      s.raw->served += batch.items.size();
      ++s.raw->batches;
      for (ItemId id : batch.items)
        if (items_[id].measured) s.raw->latency.push_back(end - items_[id].stage_enter);
      hand_on(s, std::move(batch));
      batch = Batch{};
    }
  }

  void poisson_source() {
    StageRun& first = *stages_.front();
    for (std::int64_t i = 0; !w_.requests || i < *w_.requests; ++i) {
      const double gap = -std::log(1.0 - arrivals_rng_.uniform()) / w_.arrivals.rate;
      if (w_.duration && now() + gap > *w_.duration) break;
      sg4::this_actor::sleep_for(gap);
      ++result_.sleeps;
      enqueue(first, new_item(-1));
    }
    sending_done_ = true;
    check_done();
  }

  void client(int c) {
    StageRun& first = *stages_.front();
    for (;;) {
      if (w_.requests && result_.sent >= static_cast<std::uint64_t>(*w_.requests)) break;
      if (w_.duration && now() >= *w_.duration) break;
      enqueue(first, new_item(c));
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
  double requests = workload.requests ? static_cast<double>(*workload.requests) : 0.0;
  if (!workload.requests && workload.arrivals.process == ArrivalProcess::Poisson)
    requests = workload.arrivals.rate * *workload.duration;
  double events = requests * (1.0 + 2.0 * static_cast<double>(workload.stages.size()));
  // An LLM stage: one step per output token at worst (a batch of one).
  for (const ServingStage& s : workload.stages)
    if (s.llm) {
      const TokenLengths& out = s.llm->output_tokens;
      events += requests * (out.kind == LengthKind::Uniform ? 0.5 * static_cast<double>(out.min + out.max) : out.mean);
    }
  if (events > static_cast<double>(scenario.run.max_events))
    throw InputError(scenario.source, workload.requests ? "/workload/requests" : "/workload/duration",
                     fmt::format("the run would simulate about {:.3g} events, more than /run/max_events ({}); expected "
                                 "fewer requests or a larger /run/max_events",
                                 events, scenario.run.max_events));
  xbt_log_control_set("root.thresh:warning xbt_cfg.thresh:warning");
  // Not destroyed: as in simulate(), SimGrid's exit handler does it, and one engine per process anyway.
  auto& engine = *new sg4::Engine("partsim"); // NOLINT(cppcoreguidelines-owning-memory)
  ServingRunResult result;
  sg4::Actor::on_creation_cb([&result](sg4::Actor&) { ++result.actors; });
  result.network = engine::configure_network(scenario.run.network_model);
  sg4::Engine::set_config("contexts/stack-size:128");
  const engine::Platform platform = engine::build_platform(scenario.cluster, workload.data_type, false);
  // On the heap and never freed: daemons still blocked on its semaphores when the run ends belong to SimGrid.
  auto* run =
      new ServingRun(workload, scenario.cluster, result, scenario.run.seed); // NOLINT(cppcoreguidelines-owning-memory)
  run->start(platform, scenario.cluster.gpus_per_node);
  bool deadlock = false;
  sg4::Engine::on_deadlock_cb([&deadlock] { deadlock = true; });
  engine.run();
  PARTSIM_CHECK(!deadlock) << "the serving run deadlocked";
  return result;
}

} // namespace partsim
