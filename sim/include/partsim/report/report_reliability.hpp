// report.json's `reliability` section (scenarios with `/reliability`): its field table, walked by report_document.cpp
// like the other sections'.
#pragma once

#include "partsim/input/reliability.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace partsim {

/** `reliability/injected/running_at_failure`: an activity and the ranks running it when the GPUs failed. */
struct ReportInjectedActivity {
  std::string activity;
  std::int64_t ranks = 0;

  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("activity", s.activity, "", "compute, a collective (operation, kind, group size), send, receive, ...");
    f.field("ranks", s.ranks, "", "ranks running it at the failure time");
  }
};

/** `reliability/injected/noticed`: a rank whose running activity failed. */
struct ReportInjectedNotice {
  std::int64_t rank = 0;
  double at = 0.0;
  std::string step;

  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("rank", s.rank, "", "the rank");
    f.field("at_s", s.at, "s", "when SimGrid failed its activity");
    f.field("step", s.step, "", "what it was running (\"stream: ...\": an overlapped collective)");
  }
};

/** `reliability/injected`: one failure injected into the simulated iteration (/reliability/inject). */
struct ReportInjectedFailure {
  std::string method;
  std::string what;
  bool fired = false;
  double at = 0.0;
  double detection = 0.0;
  double stopped = 0.0;
  std::int64_t ranks = 0;
  std::vector<std::int64_t> failed_ranks;
  std::int64_t noticed_ranks = 0;
  std::int64_t hung_ranks = 0;
  std::int64_t finished_ranks = 0;
  std::vector<ReportInjectedActivity> running_at_failure;
  std::vector<ReportInjectedNotice> noticed;
  double lost_gpu_seconds = 0.0;
  double training_again_at = 0.0;
  double iteration_done_at = 0.0;

  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("method", s.method, "", "how the failure was simulated");
    f.field("what", s.what, "",
            "what fails: one GPU, a node's GPUs, one NIC (its link, both ways), or a switch (its NICs' links and its "
            "uplink)");
    f.field("fired", s.fired, "", "false: every rank had finished its program before the failure time");
    f.field("at_s", s.at, "s", "/reliability/inject/at: when SimGrid turned the GPUs off");
    f.field("detection_s", s.detection, "s", "/reliability/recovery/detection_time");
    f.field("stopped_at_s", s.stopped, "s", "at_s + detection_s: the job stops every rank still running");
    f.field("ranks", s.ranks, "", "ranks of the run");
    f.field("failed_ranks", s.failed_ranks, "", "ranks on the failed GPUs (their actors end with their hosts)");
    f.field("noticed_ranks", s.noticed_ranks, "",
            "ranks whose running transfer or collective failed (SimGrid's network failure)");
    f.field("hung_ranks", s.hung_ranks, "",
            "ranks neither failed nor noticing nor finished: blocked on a peer that will never come, until stopped");
    f.field("finished_ranks", s.finished_ranks, "", "ranks that finished their program before the stop");
    f.field("running_at_failure", s.running_at_failure, "", "what the ranks ran at at_s, most ranks first");
    f.field("noticed", s.noticed, "", "the first 64 ranks that noticed, in order of time");
    f.field("lost_gpu_seconds", s.lost_gpu_seconds, "GPU-s",
            "ranks x stopped_at_s: the iteration's work until the stop, lost (the job rolls back)");
    f.field("training_again_at_s", s.training_again_at, "s",
            "at_s + recovery_per_failure_s: the policy's detection, repair or spare, restart and reload");
    f.field("iteration_done_at_s", s.iteration_done_at, "s",
            "training_again_at_s + iteration_time_s: the iteration rerun from a checkpoint taken at its start");
  }
};

/** `reliability`: the training run replayed over failures and checkpoints (docs/failures.md). */
struct ReportReliability {
  std::string method;
  std::uint64_t seed = 0;
  std::int64_t iterations = 0;
  std::optional<double> tokens;
  double iteration_time = 0.0;
  double time_to_finish = 0.0;
  double time_to_finish_days = 0.0;
  double useful = 0.0;
  std::optional<double> degraded;
  double goodput = 0.0;
  double lost_work = 0.0;
  double checkpoint_time = 0.0;
  double recovery_time = 0.0;
  std::int64_t failures = 0;
  std::map<std::string, std::int64_t> failures_by_component;
  std::optional<double> job_mtbf;
  FailureDistribution distribution = FailureDistribution::Exponential;
  double weibull_shape = 1.0;
  RecoveryPolicy policy = RecoveryPolicy::Restart;
  double recovery_per_failure = 0.0;
  CheckpointMode checkpoint_mode = CheckpointMode::Sync;
  double checkpoint_bytes = 0.0;
  std::int64_t checkpoint_writers = 0;
  double checkpoint_block = 0.0;
  double checkpoint_write = 0.0;
  double checkpoint_write_closed_form = 0.0;
  double reload = 0.0;
  std::int64_t checkpoints = 0;
  std::int64_t checkpoints_lost = 0;
  std::int64_t interval_iterations = 0;
  double interval = 0.0;
  std::optional<double> young_daly_interval;
  std::optional<double> interval_over_young_daly;
  std::optional<double> daly_expected_time;
  std::string storage_source;
  std::vector<std::string> assumed;
  std::optional<ReportInjectedFailure> injected;

  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("method", s.method, "", "how the run was replayed (one simulated iteration, then a seeded event process)");
    f.field("seed", s.seed, "", "/run/seed: the failure draws");
    f.field("iterations", s.iterations, "", "to train: /reliability/iterations, or the token budget's");
    f.field("tokens", s.tokens, "tokens", "iterations x tokens per iteration");
    f.field("iteration_time_s", s.iteration_time, "s", "one iteration as simulated (makespan / iterations)");
    f.field("time_to_finish_s", s.time_to_finish, "s", "wall time to train the iterations, failures included");
    f.field("time_to_finish_days", s.time_to_finish_days, "days", "time_to_finish_s / 86400");
    f.field("useful_s", s.useful, "s", "iterations x iteration_time_s");
    f.field("goodput", s.goodput, "", "useful_s / time_to_finish_s");
    f.field("degraded_s", s.degraded, "s",
            "elastic only: training beyond useful_s, for running on fewer replicas than the plan's");
    f.field("lost_work_s", s.lost_work, "s", "training rolled back to a checkpoint by failures");
    f.field("checkpoint_s", s.checkpoint_time, "s",
            "training stopped for checkpoints (sync: the writes; async: the copies and waits for a previous write)");
    f.field("recovery_s", s.recovery_time, "s",
            "from failures to training again: detection, repair or spare, restart, reload");
    f.field("failures", s.failures, "", "failures during the run (during recoveries included)");
    f.field("failures_by_component", s.failures_by_component, "", "gpu, nic, switch, host, listed");
    f.field("job_mtbf_s", s.job_mtbf, "s", "1 / sum of units / MTBF; absent with listed failures only");
    f.field("distribution", s.distribution, "", "each unit's time to failure");
    f.field("weibull_shape", s.weibull_shape, "", "k (1: exponential)");
    f.field("policy", s.policy, "",
            "restart: wait for the repair; spare: a hot spare after a delay; elastic: go on with fewer replicas");
    f.field("recovery_per_failure_s", s.recovery_per_failure, "s",
            "detection + (restart: repair; spare: spare delay; elastic: nothing) + restart + reload");
    f.field("checkpoint_mode", s.checkpoint_mode, "", "sync or async");
    f.field("checkpoint_bytes", s.checkpoint_bytes, "B", "parameters and optimizer states of all writers");
    f.field("checkpoint_writers", s.checkpoint_writers, "", "GPUs that write a part");
    f.field("checkpoint_block_s", s.checkpoint_block, "s",
            "training stopped per checkpoint: sync, the write; async, the largest writer's copy to host memory");
    f.field("checkpoint_write_s", s.checkpoint_write, "s",
            "every writer's part sent at once over the simulated network (SimGrid) to a storage pool of the storage "
            "write bandwidth on the top switch, until the last part is written");
    f.field("checkpoint_write_closed_form_s", s.checkpoint_write_closed_form, "s",
            "checkpoint_bytes / storage write bandwidth: the write without the network");
    f.field("reload_s", s.reload, "s", "checkpoint_bytes / storage read bandwidth");
    f.field("checkpoints", s.checkpoints, "", "checkpoints started");
    f.field("checkpoints_lost", s.checkpoints_lost, "", "checkpoints a failure interrupted before they were durable");
    f.field("interval_iterations", s.interval_iterations, "", "iterations between checkpoints");
    f.field("interval_s", s.interval, "s", "interval_iterations x iteration_time_s");
    f.field("young_daly_interval_s", s.young_daly_interval, "s",
            "sqrt(2 x checkpoint_block_s x job_mtbf_s); with failure rates");
    f.field("interval_over_young_daly", s.interval_over_young_daly, "", "interval_s / young_daly_interval_s");
    f.field("daly_expected_time_s", s.daly_expected_time, "s",
            "Daly's closed form for exponential failures at interval_s (a check on the replay); with failure rates");
    f.field("storage_source", s.storage_source, "", "where the storage bandwidths come from (empty: not given)");
    f.field("assumed", s.assumed, "", "scenario fields that took their default (assumptions)");
    f.field("injected", s.injected, "",
            "with /reliability/inject: one failure injected into the simulated iteration and what it did");
  }
};

} // namespace partsim
