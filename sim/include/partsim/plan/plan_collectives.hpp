// The collectives of a plan, planned the same way by every planner: each group's shape on the cluster, the `auto`
// algorithm (the smallest closed form, as NCCL's tuner picks, chosen once per distinct case), the run's `auto`
// fidelity, and the events (messages, executions) the rank programs make the engine simulate. Pure, no SimGrid.
#pragma once

#include "partsim/input/scenario.hpp"
#include "partsim/model/collective_cost.hpp"
#include "partsim/plan/plan.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

namespace partsim {

/** A collective group on the cluster (ranks are GPUs). */
struct GroupLayout {
  int members = 1;
  int nodes = 1;    ///< nodes its members span
  int per_node = 1; ///< members per node, rounded up
  bool even = true; ///< the same number of members on every node it spans (what a hierarchical all-reduce needs)
  int ports = 1;    ///< distinct NICs its members on its first node send through (ring_channels)
  LinkCost slowest; ///< the slowest hop between its members
};

class PlanCollectives {
 public:
  explicit PlanCollectives(const ClusterSpec& cluster);

  /** Sets the plan's stream_compute_share to (S - C) / S, S the GPU's sm_count, C the SMs its stream collectives hold,
   * and says so in its summary (nothing without a stream collective, sm_count or `sync.comm_sms`). C: the most over
   * the stream collectives of: inside one node `sync.comm_sms`; across nodes one SM per channel, NCCL running each
   * ring it finds twice (ncclTopoPostset duplicates the channels: 2 x ring_channels, 2 for a group with one member
   * per node on one NIC), at most `sync.comm_sms`. Call once the programs are made. */
  void set_stream_contention(Plan& plan, const GpuProfile& gpu, const GradientSyncSpec& sync) const;

  /** Takes the shapes of the plan's groups; call once its groups are made. */
  void set_groups(const std::vector<std::vector<int>>& groups);
  const GroupLayout& shape(int group) const { return shapes_.at(static_cast<std::size_t>(group)); }
  /** Whether groups `a` and `b` lie alike on the cluster (every choice and count above is then the same). */
  bool same_shape(int a, int b) const;

  /** A collective of `op` on `bytes` over `group`: the choice's algorithm, or the `auto` one; the choice's fidelity,
   * or Steps until resolve_auto_fidelity settles it; the choice's protocol, or the `auto` one for the algorithm. */
  CollectiveStep step(CollectiveOp op, std::uint64_t bytes, int group, const CollectiveChoice& choice, CommKind kind,
                      int stream);

  /** Gives every collective that `is_auto` selects the run's `auto` fidelity: one level from the messages they
   * would cost at steps and at flows over the plan's iterations (choose_fidelity); returns it. */
  Fidelity resolve_auto_fidelity(Plan& plan, const std::function<bool(const CollectiveStep&)>& is_auto) const;

  /** Messages one instance of `step` makes the engine simulate. */
  std::uint64_t messages(const CollectiveStep& step) const;

  /** Adds the rank programs' events over the plan's iterations to planned_executions (compute steps with work) and
   * planned_messages (sends, and each collective once, at its group's first member). */
  void count_events(Plan& plan) const;

 private:
  const ClusterSpec& cluster_;
  TwoLevelCost links_;
  std::vector<GroupLayout> shapes_;
  std::map<std::tuple<CollectiveOp, std::uint64_t, int, int, std::optional<CollectiveAlgorithm>,
                      std::optional<CollectiveProtocol>>,
           CollectiveMethod>
      methods_;
};

} // namespace partsim
