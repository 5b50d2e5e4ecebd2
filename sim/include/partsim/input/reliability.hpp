// The scenario's `/reliability` section: a failure process over the cluster's components, a recovery policy and
// checkpoints (docs/failures.md). Parsed once with the scenario; replayed by model/reliability_replay.hpp.
#pragma once

#include "partsim/common/enum_names.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace partsim {

/** The law of each component's time to failure. */
enum class FailureDistribution : std::uint8_t { Exponential, Weibull };

/** What failed. `Listed`: a failure time given in `/reliability/failures/times`. */
enum class FailureComponent : std::uint8_t { Gpu, Nic, Switch, Host, Listed };

/** What the job does after a failure. Both roll back to the last durable checkpoint. */
enum class RecoveryPolicy : std::uint8_t {
  Restart, ///< wait for the failed part's repair or replacement, then relaunch
  Spare,   ///< a hot spare takes the failed part's place after a delay; the repair goes on off the job
  Elastic  ///< go on with the data-parallel replicas left; the failed ones rejoin after their repair
};

/** How a checkpoint blocks training. */
enum class CheckpointMode : std::uint8_t {
  Sync, ///< training stops while the checkpoint is written to storage
  Async ///< training stops while the state is copied to host memory; the storage write goes on behind training
};

template <>
struct EnumNames<FailureDistribution> {
  static constexpr std::array<EnumEntry<FailureDistribution>, 2> entries{
      {{FailureDistribution::Exponential, "exponential"}, {FailureDistribution::Weibull, "weibull"}}};
};
template <>
struct EnumNames<FailureComponent> {
  static constexpr std::array<EnumEntry<FailureComponent>, 5> entries{{{FailureComponent::Gpu, "gpu"},
                                                                       {FailureComponent::Nic, "nic"},
                                                                       {FailureComponent::Switch, "switch"},
                                                                       {FailureComponent::Host, "host"},
                                                                       {FailureComponent::Listed, "listed"}}};
};
template <>
struct EnumNames<RecoveryPolicy> {
  static constexpr std::array<EnumEntry<RecoveryPolicy>, 3> entries{
      {{RecoveryPolicy::Restart, "restart"}, {RecoveryPolicy::Spare, "spare"}, {RecoveryPolicy::Elastic, "elastic"}}};
};
template <>
struct EnumNames<CheckpointMode> {
  static constexpr std::array<EnumEntry<CheckpointMode>, 2> entries{
      {{CheckpointMode::Sync, "sync"}, {CheckpointMode::Async, "async"}}};
};

/** One kind of component that fails: how many the cluster has and the mean time between failures of one. */
struct ComponentFailures {
  FailureComponent component = FailureComponent::Gpu;
  std::int64_t units = 0; ///< GPUs, NICs, switches or nodes of the cluster
  double mtbf = 0.0;      ///< s, of one unit
};

/** Which level of the network an injected switch failure is at: `first`, the switches the NICs hang from (a star's
 * one, a fat tree's leaves, a rail network's rails); `pod`, a 3-level fat tree's pod aggregation; `top`, the switch
 * above the others (a fat tree's core, a rail network's spine). */
enum class SwitchLevel { First, Pod, Top };

template <>
struct EnumNames<SwitchLevel> {
  static constexpr std::array<EnumEntry<SwitchLevel>, 3> entries{
      {{SwitchLevel::First, "first"}, {SwitchLevel::Pod, "pod"}, {SwitchLevel::Top, "top"}}};
};

inline std::string_view to_string(SwitchLevel level) {
  return enum_name(level);
}

/** `/reliability`, resolved against the cluster. Times in s, sizes in bytes, bandwidths in bytes/s. */
/** One failure injected into the simulated iteration itself (`/reliability/inject`): the GPUs turned off in
 * SimGrid at `at` seconds into the iteration (one GPU, or every GPU of a node). */
struct FailureInjection {
  std::vector<int> gpus;
  /** NICs instead (node, its index in the node): their links to the first switch turned off, every GPU left running
   * (a NIC, or the NICs below a failed switch). */
  std::vector<std::pair<int, int>> nics;
  /** Switch uplinks turned off too (the failed switch's own, or those below a failed pod or top switch): fat_tree
   * leaves' and pods', rails' to the spine. */
  std::vector<int> leaf_uplinks;
  std::vector<int> pod_uplinks;
  std::vector<int> rail_uplinks;
  std::string what; ///< "GPU 5", "node 1 (GPUs 8 to 15)", "NIC 3 of node 1", "leaf switch 2 (nodes 8 to 11)"
  double at = 0.0;
};

struct ReliabilitySpec {
  std::optional<std::int64_t> iterations; ///< to train; absent: the token budget's
  FailureDistribution distribution = FailureDistribution::Exponential;
  double weibull_shape = 1.0;                ///< k; the scale makes the mean equal the MTBF
  std::vector<ComponentFailures> components; ///< those with a rate (MTBF > 0)
  std::vector<double> failure_times;         ///< s from the start, increasing; replaces the rates when given
  RecoveryPolicy policy = RecoveryPolicy::Restart;
  double detection_time = 0.0;    ///< from the failure to the job knowing it
  double restart_time = 0.0;      ///< relaunch: scheduling, process start, communicator set-up
  double repair_time = 0.0;       ///< `restart`: the failed part repaired or replaced before the relaunch
  double spare_delay = 0.0;       ///< `spare`: a hot spare swapped in
  std::int64_t min_replicas = 1;  ///< `elastic`: fewer replicas left, the job waits for repairs
  std::optional<double> interval; ///< s of training between checkpoints; absent: see below
  std::optional<std::int64_t> interval_iterations; ///< iterations between checkpoints; neither: auto (Young/Daly)
  std::optional<double> checkpoint_bytes;          ///< given; absent: from the memory model
  double write_bandwidth = 0.0;                    ///< storage, all writers together
  double read_bandwidth = 0.0;                     ///< storage, all readers together (the reload)
  CheckpointMode mode = CheckpointMode::Sync;
  double host_copy_bandwidth = 0.0;   ///< async: per GPU, device to host memory
  std::string bandwidth_source;       ///< where the storage figures come from
  std::vector<std::string> defaulted; ///< pointers of the fields that took their default
  std::optional<FailureInjection> inject;
};

class JsonReader;
struct ClusterSpec;

/** Parses `/reliability` (through the scenario schema; `finish`es the reader): component counts from the cluster
 * (GPUs, NICs = nodes x NICs per node, the topology's switches, nodes). */
ReliabilitySpec parse_reliability(JsonReader reader, const ClusterSpec& cluster);

} // namespace partsim
