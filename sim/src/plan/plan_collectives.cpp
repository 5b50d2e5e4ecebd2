// Group shapes, `auto` algorithms and fidelity, and event counts of a plan's collectives.
#include "partsim/plan/plan_collectives.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace partsim {

PlanCollectives::PlanCollectives(const ClusterSpec& cluster) : cluster_(cluster), links_(two_level_cost(cluster)) {}

void PlanCollectives::set_groups(const std::vector<std::vector<int>>& groups) {
  shapes_.clear();
  for (const std::vector<int>& group : groups) {
    GroupLayout s;
    s.members = static_cast<int>(group.size());
    std::map<int, int> per_node;
    for (int rank : group) ++per_node[rank / cluster_.gpus_per_node];
    s.nodes = static_cast<int>(per_node.size());
    s.per_node = (s.members + s.nodes - 1) / s.nodes;
    for (const auto& [node, count] : per_node) s.even = s.even && count == per_node.begin()->second;
    std::set<int> nics;
    for (int rank : group)
      if (rank / cluster_.gpus_per_node == per_node.begin()->first)
        nics.insert(cluster_.network.nic_of(rank % cluster_.gpus_per_node, cluster_.gpus_per_node));
    s.ports = std::max<int>(1, static_cast<int>(nics.size()));
    s.slowest = slowest_link(links_, s.per_node, s.nodes);
    shapes_.push_back(s);
  }
}

void PlanCollectives::set_stream_contention(Plan& plan, const GpuProfile& gpu, const GradientSyncSpec& sync) const {
  if (sync.comm_sms <= 0 || !gpu.sm_count) return;
  int held = 0;
  for (const RankProgram& p : plan.ranks)
    for (std::size_t k = 0; k < p.own_steps.size(); ++k) {
      const auto* c = std::get_if<CollectiveStep>(&p.own_steps[k]);
      if (c == nullptr) continue;
      // On the communication stream, or beside a compute it takes SMs from (ComputeStep::contended).
      const auto* before = k > 0 ? std::get_if<ComputeStep>(&p.own_steps[k - 1]) : nullptr;
      const bool contends = before != nullptr && before->beside_next && before->contended;
      if (c->stream == 0 && !contends) continue;
      const GroupLayout& s = shape(c->group);
      const int channels =
          s.nodes == 1
              ? sync.comm_sms
              : std::min(sync.comm_sms, 2 * ring_channels(CollectiveOp::ReduceScatter, CollectiveAlgorithm::Ring,
                                                          s.per_node, s.nodes, s.ports, c->channels));
      held = std::max(held, channels);
    }
  if (held == 0) return;
  const double sms = gpu.sm_count->value;
  plan.stream_compute_share = (sms - held) / sms;
  plan.summary += fmt::format("; overlapped collectives hold {} of the GPU's {:g} SMs (assumed: one per NCCL channel, "
                              "at most {}), the compute beside them at {:.1f}% of its rate",
                              held, sms, sync.comm_sms, 100.0 * plan.stream_compute_share);
}

CollectiveStep PlanCollectives::step(CollectiveOp op, std::uint64_t bytes, int group, const CollectiveChoice& choice,
                                     CommKind kind, int stream) {
  CollectiveStep step;
  step.group = group;
  step.op = op;
  step.bytes = bytes;
  step.kind = kind;
  step.stream = static_cast<std::int8_t>(stream);
  const GroupLayout& s = shape(group);
  const auto [it, added] = methods_.try_emplace({op, bytes, s.members, s.nodes, choice.algorithm, choice.protocol});
  if (added)
    it->second =
        choose_method(op, s.members, s.nodes, static_cast<double>(bytes), links_, choice.algorithm, choice.protocol);
  step.algorithm = it->second.algorithm;
  step.protocol = it->second.protocol;
  step.fidelity = choice.fidelity.value_or(Fidelity::Steps);
  step.channels = choice.channels.value_or(0);
  return step;
}

std::uint64_t PlanCollectives::messages(const CollectiveStep& step) const {
  const GroupLayout& s = shape(step.group);
  TwoLevelCost links = links_;
  links.ports_per_node = s.ports;
  links.channels = step.channels;
  const int channels = step.algorithm == CollectiveAlgorithm::Tree
                           ? tree_channels(s.per_node, s.nodes, s.ports)
                           : ring_channels(step.op, step.algorithm, s.per_node, s.nodes, s.ports, step.channels);
  return planned_messages(step, s.members, s.nodes, s.slowest, channels,
                          protocol_wire_factor(step.op, step.algorithm, step.protocol, s.per_node, s.nodes, links));
}

bool PlanCollectives::same_shape(int a, int b) const {
  const GroupLayout& x = shape(a);
  const GroupLayout& y = shape(b);
  return x.members == y.members && x.nodes == y.nodes && x.per_node == y.per_node && x.even == y.even &&
         x.ports == y.ports && x.slowest.latency == y.slowest.latency && x.slowest.bandwidth == y.slowest.bandwidth;
}

namespace {

/** Per program (a rank whose own_steps others may share): `tally` summed per group of its collectives, in group order.
 * A rank then takes its program's sums under its own group names (RankProgram::group), so shared programs are read
 * once, not once per rank. */
template <typename Sum, typename Tally>
std::vector<std::vector<std::pair<int, Sum>>> per_program_groups(const Plan& plan, const Tally& tally) {
  std::vector<std::vector<std::pair<int, Sum>>> sums(plan.ranks.size());
  for (std::size_t q = 0; q < plan.ranks.size(); ++q) {
    if (plan.ranks[q].like >= 0) continue;
    std::map<int, Sum> by_group;
    for (const Step& step : plan.ranks[q].own_steps)
      if (const auto* c = std::get_if<CollectiveStep>(&step)) tally(by_group[c->group], *c);
    sums[q].assign(by_group.begin(), by_group.end());
  }
  return sums;
}

} // namespace

Fidelity PlanCollectives::resolve_auto_fidelity(Plan& plan,
                                                const std::function<bool(const CollectiveStep&)>& is_auto) const {
  // Each collective once, at its group's first member.
  using Messages = std::pair<std::uint64_t, std::uint64_t>; // at steps, at flows
  const auto sums = per_program_groups<Messages>(plan, [&](Messages& m, const CollectiveStep& c) {
    if (!is_auto(c)) return;
    CollectiveStep probe = c;
    probe.fidelity = Fidelity::Steps;
    m.first += messages(probe);
    probe.fidelity = Fidelity::Flows;
    m.second += messages(probe);
  });
  std::uint64_t steps = 0;
  std::uint64_t flows = 0;
  for (std::size_t r = 0; r < plan.ranks.size(); ++r)
    for (const auto& [g, m] : sums[static_cast<std::size_t>(plan.owner(static_cast<int>(r)))])
      if (plan.groups[static_cast<std::size_t>(plan.ranks[r].group(g))].front() == static_cast<int>(r)) {
        steps += m.first;
        flows += m.second;
      }
  const auto iterations = static_cast<std::uint64_t>(plan.iterations);
  const Fidelity fidelity = choose_fidelity(steps * iterations, flows * iterations);
  for (RankProgram& program : plan.ranks)
    for (Step& step : program.own_steps)
      if (auto* c = std::get_if<CollectiveStep>(&step); c != nullptr && is_auto(*c)) c->fidelity = fidelity;
  return fidelity;
}

void PlanCollectives::count_events(Plan& plan) const {
  const auto iterations = static_cast<std::uint64_t>(plan.iterations);
  const auto sums =
      per_program_groups<std::uint64_t>(plan, [&](std::uint64_t& m, const CollectiveStep& c) { m += messages(c); });
  std::vector<std::pair<std::uint64_t, std::uint64_t>> point(plan.ranks.size()); // per program: executions, sends
  for (std::size_t q = 0; q < plan.ranks.size(); ++q)
    for (const Step& step : plan.ranks[q].own_steps) {
      if (const auto* compute = std::get_if<ComputeStep>(&step); compute != nullptr && compute->amount > 0)
        ++point[q].first;
      else if (std::holds_alternative<SendStep>(step))
        ++point[q].second;
    }
  for (std::size_t r = 0; r < plan.ranks.size(); ++r) {
    const auto q = static_cast<std::size_t>(plan.owner(static_cast<int>(r)));
    plan.planned_executions += iterations * point[q].first;
    plan.planned_messages += iterations * point[q].second;
    for (const auto& [g, m] : sums[q])
      if (plan.groups[static_cast<std::size_t>(plan.ranks[r].group(g))].front() == static_cast<int>(r))
        plan.planned_messages += iterations * m;
  }
}

} // namespace partsim
