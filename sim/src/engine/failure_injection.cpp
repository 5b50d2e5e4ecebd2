// A failure injected into the simulated iteration (failure_injection.hpp).
#include "failure_injection.hpp"

#include "child_process.hpp"

#include "partsim/common/error.hpp"
#include "platform.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/Mailbox.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace partsim::engine {

namespace {

constexpr std::size_t kNoticesKept = 64;

nlohmann::json to_json(const InjectedFailureOutcome& o) {
  nlohmann::json j;
  j["fired"] = o.fired;
  j["at"] = o.at;
  j["stopped"] = o.stopped;
  j["ranks"] = o.ranks;
  j["failed_ranks"] = o.failed_ranks;
  j["noticed_count"] = o.noticed_count;
  j["finished"] = o.finished;
  j["hung"] = o.hung;
  j["noticed"] = nlohmann::json::array();
  for (const InjectedFailureNotice& n : o.noticed) j["noticed"].push_back({n.rank, n.at, n.step});
  j["running"] = nlohmann::json::array();
  for (const auto& [what, count] : o.running_at_failure) j["running"].push_back({what, count});
  return j;
}

InjectedFailureOutcome from_json(const nlohmann::json& j) {
  InjectedFailureOutcome o;
  o.fired = j.at("fired").get<bool>();
  o.at = j.at("at").get<double>();
  o.stopped = j.at("stopped").get<double>();
  o.ranks = j.at("ranks").get<std::int64_t>();
  o.failed_ranks = j.at("failed_ranks").get<std::vector<int>>();
  o.noticed_count = j.at("noticed_count").get<std::int64_t>();
  o.finished = j.at("finished").get<std::int64_t>();
  o.hung = j.at("hung").get<std::int64_t>();
  for (const nlohmann::json& n : j.at("noticed"))
    o.noticed.push_back({n.at(0).get<int>(), n.at(1).get<double>(), n.at(2).get<std::string>()});
  for (const nlohmann::json& r : j.at("running"))
    o.running_at_failure.emplace_back(r.at(0).get<std::string>(), r.at(1).get<std::int64_t>());
  return o;
}

} // namespace

std::string describe_step(const Plan& plan, const Step& step) {
  if (std::holds_alternative<ComputeStep>(step)) return "compute";
  if (const auto* c = std::get_if<CollectiveStep>(&step))
    return fmt::format("{} ({}, {} ranks)", to_string(c->op), to_string(c->kind),
                       plan.groups.at(static_cast<std::size_t>(c->group)).size());
  if (std::holds_alternative<StreamSyncStep>(step)) return "waiting for its communication stream";
  if (const auto* s = std::get_if<SendStep>(&step)) return fmt::format("send to rank {}", s->peer);
  if (std::holds_alternative<HostStep>(step)) return "loading its data";
  const auto& r = std::get<RecvStep>(step);
  return fmt::format("receive from rank {}", r.peer);
}

void notice_failure(RunContext& ctx, int rank, const Step* running, bool stream) {
  InjectedFailureOutcome& out = *ctx.result.injected;
  ++out.noticed_count;
  ctx.failure_state[static_cast<std::size_t>(rank)] = RunContext::kNoticed;
  const std::string what = running == nullptr ? "its program" : describe_step(ctx.plan, *running);
  out.noticed.push_back({rank, sg4::Engine::get_clock(), stream ? "stream: " + what : what});
}

void start_failure_injection(RunContext& ctx, const FailureInjection& injection, double detection, sg4::Host* where) {
  ctx.result.injected.emplace();
  ctx.result.injected->ranks = static_cast<std::int64_t>(ctx.plan.ranks.size());
  ctx.running.assign(ctx.plan.ranks.size(), nullptr);
  ctx.failure_state.assign(ctx.plan.ranks.size(), RunContext::kRunning);
  sg4::Actor::create("failure", where, [&ctx, injection, detection] {
    sg4::this_actor::sleep_until(injection.at);
    InjectedFailureOutcome& out = *ctx.result.injected;
    const auto ranks = ctx.plan.ranks.size();
    std::map<std::string, std::int64_t> running;
    std::size_t finished = 0;
    for (std::size_t r = 0; r < ranks; ++r) {
      if (ctx.failure_state[r] == RunContext::kFinished) {
        ++finished;
        ++running["finished"];
      } else {
        ++running[ctx.running[r] == nullptr ? "not started" : describe_step(ctx.plan, *ctx.running[r])];
      }
    }
    if (finished == ranks) return; // the iteration ended first: nothing to fail
    out.fired = true;
    out.at = sg4::Engine::get_clock();
    out.stopped = out.at + detection;
    for (const auto& entry : running) out.running_at_failure.emplace_back(entry);
    std::stable_sort(out.running_at_failure.begin(), out.running_at_failure.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    for (std::size_t r = 0; r < ranks; ++r)
      if (std::find(injection.gpus.begin(), injection.gpus.end(), ctx.plan.ranks[r].gpu) != injection.gpus.end()) {
        out.failed_ranks.push_back(static_cast<int>(r));
        ctx.failure_state[r] = RunContext::kFailed;
      }
    // A pipeline mailbox received by a failed rank stops being its (a permanent receiver's): SimGrid would start the
    // next transfer to it at once, towards a host that is off (an assertion, not a failure). Its sends now wait in
    // the mailbox, as a send to a dead peer's queue pair does until the job stops.
    for (const auto& [key, mailbox] : ctx.p2p_mailboxes)
      if (ctx.failure_state[static_cast<std::size_t>(std::get<1>(key))] == RunContext::kFailed)
        mailbox->set_receiver(nullptr);
    for (const int gpu : injection.gpus) ctx.platform.gpus.at(static_cast<std::size_t>(gpu))->turn_off();
    // Both directions of each failed link, named as platform.cpp names them: a NIC's link to its first switch
    // ("nic-<node>-<k>"), a leaf's, pod's or rail's uplink ("leaf-<i>-up", "pod-<i>-up", "rail-<i>-up").
    std::vector<std::string> links;
    for (const auto& [node, k] : injection.nics) links.push_back(fmt::format("nic-{}-{}", node, k));
    for (const int leaf : injection.leaf_uplinks) links.push_back(fmt::format("leaf-{}-up", leaf));
    for (const int pod : injection.pod_uplinks) links.push_back(fmt::format("pod-{}-up", pod));
    for (const int rail : injection.rail_uplinks) links.push_back(fmt::format("rail-{}-up", rail));
    for (const std::string& base : links)
      for (const char* side : {"_UP", "_DOWN"}) {
        sg4::Link* link = sg4::Link::by_name_or_null(base + side);
        PARTSIM_CHECK(link != nullptr) << "no link " << base << side;
        link->turn_off();
      }
    sg4::this_actor::sleep_until(out.stopped);
    sg4::Actor::kill_all();
  });
}

void finish_failure_injection(RunContext& ctx) {
  InjectedFailureOutcome& out = *ctx.result.injected;
  for (const char state : ctx.failure_state) {
    out.finished += state == RunContext::kFinished ? 1 : 0;
    out.hung += state == RunContext::kRunning && out.fired ? 1 : 0;
  }
  std::stable_sort(out.noticed.begin(), out.noticed.end(),
                   [](const auto& a, const auto& b) { return a.at < b.at || (a.at == b.at && a.rank < b.rank); });
  if (out.noticed.size() > kNoticesKept) out.noticed.resize(kNoticesKept);
}

InjectedFailureOutcome simulate_injection_in_child(const Scenario& scenario, const Plan& plan,
                                                   const EngineOptions& options) {
  return from_json(nlohmann::json::parse(run_in_child("the failure-injection run", [&] {
    EngineOptions child = options;
    child.injecting = true;
    child.progress = nullptr;
    child.record_all_intervals = false;
    const RunResult result = simulate(scenario, plan, child);
    return result.injected ? to_json(*result.injected).dump() : std::string();
  })));
}

} // namespace partsim::engine
