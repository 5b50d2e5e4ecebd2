// A run's `/reliability` figures: the checkpoint size from the memory model and the strategy's sharding, its write and
// reload times, the interval used against Young/Daly's, and the replay of the training run over failures. Pure
// arithmetic, no SimGrid.
#pragma once

#include "partsim/input/reliability.hpp"
#include "partsim/model/reliability_replay.hpp"
#include "partsim/report/report_reliability.hpp"
#include "partsim/report/run_result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace partsim {

struct Plan;
struct Scenario;

/** The bytes a checkpoint writes: parameters and optimizer states, summed over the ranks that write them. */
struct CheckpointSize {
  double bytes = 0.0;                ///< all writers
  std::int64_t writers = 0;          ///< GPUs that write a part
  double largest_writer_bytes = 0.0; ///< the most one GPU writes (its copy to host memory blocks async checkpoints)
};

/** The checkpoint of a model-training plan: the sum of checkpoint_writes' parts (one copy of every parameter and
 * optimizer state; /reliability/checkpoint/size, when given, scales them to it). */
CheckpointSize checkpoint_size(const Scenario& scenario, const Plan& plan);

/** One writer of a checkpoint: its GPU (= rank) and the bytes it writes. */
struct CheckpointWrite {
  int gpu = 0;
  double bytes = 0.0;
};

/** Who writes what: in a model-parallel split every GPU holds, of its stage's per-GPU memory figures, dense parameters
 * and optimizer states and (a mixture of experts) its routed experts'. It writes its dense parameters when its data
 * rank (data x context index) is 0 or ZeRO >= 3 shards them over the data ranks, its dense optimizer states when its
 * data rank is 0 or ZeRO >= 1 shards them, and its experts' parameters and states when its data rank is in the first
 * expert group (where each expert is held once) or ZeRO shards them over the expert-data group. Otherwise GPU 0
 * writes everything. Scaled so that the parts add up to checkpoint_size's bytes. */
std::vector<CheckpointWrite> checkpoint_writes(const Scenario& scenario, const Plan& plan);

/** `/reliability` of a run. */
struct ReliabilityFigures {
  ReliabilitySpec spec;
  double iteration_time = 0.0; ///< s, simulated
  std::int64_t iterations = 0;
  std::optional<double> tokens; ///< iterations x tokens per iteration
  CheckpointSize size;
  double checkpoint_block = 0.0; ///< s per checkpoint
  double checkpoint_write = 0.0; ///< s, the storage write (simulated on SimGrid when the run did, else the closed form)
  double checkpoint_write_closed_form = 0.0; ///< s, bytes / storage write bandwidth
  bool write_simulated = false;              ///< checkpoint_write is the run's SimGrid simulation of the writes
  double reload = 0.0;                       ///< s, the storage read after a failure
  double recovery = 0.0;                     ///< s per failure
  std::int64_t interval_iterations = 0;
  double interval = 0.0;                    ///< s of training between checkpoints
  std::optional<double> mtbf;               ///< the job's, s (absent with listed failures only)
  std::optional<double> young_daly;         ///< s
  std::optional<double> daly_expected_time; ///< s, Daly's closed form at this interval (exponential)
  std::int64_t replicas = 0;                ///< elastic: data-parallel replicas
  ReplayResult replay;
  std::vector<std::string> assumed;
  std::optional<InjectedFailureOutcome> injected; ///< the run's injected failure (/reliability/inject)
};

/** The figures of a run of `plan` whose simulated iterations took `makespan` s; `simulated_write`: the checkpoint's
 * writes as the run simulated them on SimGrid (RunResult::checkpoint_write), else the closed form. */
ReliabilityFigures reliability_figures(const Scenario& scenario, const Plan& plan, double makespan,
                                       std::optional<double> simulated_write = std::nullopt);

/** report.json's `reliability` of these figures; `seed` is the run's. */
ReportReliability reliability_section(const ReliabilityFigures& figures, std::uint64_t seed);

/** The terminal table's lines (label, value) on these figures. */
std::vector<std::pair<std::string, std::string>> reliability_table_lines(const ReliabilityFigures& figures);

/** reliability_trace.json (Chrome trace format): the replay's timeline over the whole run (days, in microseconds),
 * from its first events (the replay keeps 10,000): failures as instants on a track per component (with the iteration
 * the run rolled back to), each recovery from its failure to training again, each checkpoint from its start to the
 * moment it is durable (sync: its block; async: the copy and the write behind training), and training between. */
std::string reliability_chrome_trace(const std::string& scenario_name, const ReliabilityFigures& figures);

} // namespace partsim
