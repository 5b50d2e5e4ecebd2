// report.json's `stragglers` section (scenarios with `/cluster/stragglers`): the simulated iteration times, the
// slowed GPU-iterations and the tail effect against the GPU count; its field table is walked by report_document.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace partsim {

struct Scenario;
struct Plan;
struct RunResult;

/** One row of the tail effect: a synchronous job on `gpus` GPUs under the first-order model. */
struct ReportStragglerTail {
  std::int64_t gpus = 0;
  double straggler_probability = 0.0;
  double expected_iteration = 0.0;
  double over_nominal = 0.0;

  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("gpus", s.gpus, "", "N: 1, 2, 4, ... and the run's own GPU count");
    f.field("straggler_probability", s.straggler_probability, "",
            "1 - (1 - p)^N: the chance that an iteration has at least one straggler");
    f.field("expected_iteration_s", s.expected_iteration, "s",
            "closed form: nominal_iteration_s + straggler_probability x compute_per_iteration_s x "
            "(mean_stretch - fixed_stretch)");
    f.field("over_nominal", s.over_nominal, "", "expected_iteration_s / nominal_iteration_s");
  }
};

/** `stragglers`: what the slowed GPUs cost the run (docs/stragglers.md). */
struct ReportStragglers {
  std::string method;
  std::uint64_t seed = 0;
  std::int64_t gpus = 0;
  std::int64_t fixed_stragglers = 0;
  double fixed_stretch = 1.0;
  double probability = 0.0;
  std::string slowdown;
  double mean_stretch = 1.0;
  std::int64_t iterations = 0;
  double mean_iteration = 0.0;
  double p50_iteration = 0.0;
  double p99_iteration = 0.0;
  double max_iteration = 0.0;
  std::int64_t slowed_gpu_iterations = 0;
  std::int64_t slowed_iterations = 0;
  double slowed_iteration_fraction = 0.0;
  double expected_slowed_iteration_fraction = 0.0;
  double compute_per_iteration = 0.0;
  double nominal_iteration = 0.0;
  std::int64_t nominal_iterations = 0;
  double expected_iteration = 0.0;
  std::string tail_note;
  std::vector<ReportStragglerTail> tail;

  template <typename Self, typename Fields>
  static void fields(Self& s, Fields& f) {
    f.field("method", s.method, "", "how the slow-downs were applied");
    f.field("seed", s.seed, "", "/run/seed: the random stragglers' draws");
    f.field("gpus", s.gpus, "", "N: the GPUs that run the plan's ranks");
    f.field("fixed_stragglers", s.fixed_stragglers, "", "of them, GPUs slowed for the whole run");
    f.field("fixed_stretch", s.fixed_stretch, "", "1 / the slowest fixed straggler's factor (1: none)");
    f.field("probability", s.probability, "", "p: the chance that a GPU is a straggler in an iteration");
    f.field("slowdown", s.slowdown, "", "a random straggler's speed factor f (its law)");
    f.field("mean_stretch", s.mean_stretch, "",
            "E[max(1/f, fixed_stretch)]: a random straggler's compute time over nominal (closed form)");
    f.field("iterations", s.iterations, "", "iterations simulated");
    f.field("mean_iteration_s", s.mean_iteration, "s",
            "simulated: iteration i lasts from the end of iteration i - 1 (the last rank's) to its end");
    f.field("p50_iteration_s", s.p50_iteration, "s", "median of the simulated iteration times");
    f.field("p99_iteration_s", s.p99_iteration, "s", "99th percentile (linear between order statistics)");
    f.field("max_iteration_s", s.max_iteration, "s", "the longest simulated iteration");
    f.field("slowed_gpu_iterations", s.slowed_gpu_iterations, "", "(GPU, iteration) pairs with a random straggler");
    f.field("slowed_iterations", s.slowed_iterations, "", "iterations with at least one random straggler");
    f.field("slowed_iteration_fraction", s.slowed_iteration_fraction, "", "slowed_iterations / iterations");
    f.field("expected_slowed_iteration_fraction", s.expected_slowed_iteration_fraction, "", "1 - (1 - p)^gpus");
    f.field("compute_per_iteration_s", s.compute_per_iteration, "s",
            "the busiest rank's compute per iteration at its GPU's nominal speed (the plan's figures)");
    f.field("nominal_iteration_s", s.nominal_iteration, "s",
            "the iteration time without random stragglers: the mean of the simulated iterations that had none; "
            "when every iteration had one, a first-order estimate: the mean of the simulated times less "
            "compute_per_iteration_s x (the iteration's largest stretch - fixed_stretch)");
    f.field("nominal_iterations", s.nominal_iterations, "",
            "iterations without a random straggler, averaged by nominal_iteration_s (0: it is the estimate)");
    f.field("expected_iteration_s", s.expected_iteration, "s",
            "the closed form at this run's GPU count, to set against mean_iteration_s");
    f.field("tail_note", s.tail_note, "", "what the tail rows are");
    f.field("tail", s.tail, "", "the tail effect by GPU count (closed form; empty without random stragglers)");
  }
};

/** The section of a run of `plan` on `result` (scenario.cluster.stragglers set, result.iteration_end filled). */
ReportStragglers stragglers_section(const Scenario& scenario, const Plan& plan, const RunResult& result);

/** The terminal table's lines for the section: (label, value). */
std::vector<std::pair<std::string, std::string>> stragglers_table_lines(const ReportStragglers& s);

} // namespace partsim
