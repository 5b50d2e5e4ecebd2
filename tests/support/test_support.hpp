// Shared helpers for partsim tests: small scenarios built in code, one-call simulation, running the CLI.
#pragma once

#include "partsim/common/error.hpp"
#include "partsim/engine/engine.hpp"
#include "partsim/input/scenario.hpp"
#include "partsim/model/compute_op.hpp"
#include "partsim/plan/plan.hpp"
#include "partsim/report/metrics.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace partsim::test {

/** The repository root (holds models/ and scenarios/). */
std::filesystem::path source_dir();

/** A valid scenario: `nodes` x `gpus_per_node` GPUs with an inline 100 TFLOP/s GPU, 25 GB/s 2 us network,
 * 300 GB/s 1 us intra-node link, a balanced data job of 1000 samples of 1 GFLOP each, no sync. */
nlohmann::json base_scenario(int nodes = 4, int gpus_per_node = 1);

/** An inline decoder transformer for small simulations: 2 layers, h 256, 4 heads, gated MLP of 512, vocabulary 1000,
 * rotary, RMSNorm, no biases, untied; `sequence_length` tokens; each key of `extra` added or replaced ("experts",
 * "kv_heads"). */
nlohmann::json tiny_transformer(const std::string& name, int sequence_length,
                                const nlohmann::json& extra = nlohmann::json::object());

/** A hand-built rank: GPU `gpu` running `steps`, its own program. */
inline RankProgram own_program(int gpu, std::vector<Step> steps) {
  RankProgram p;
  p.gpu = gpu;
  p.own_steps = std::move(steps);
  return p;
}

/** Parses a scenario document as if read from `source`. */
Scenario parse(const nlohmann::json& document, const std::string& source = "test.json");

struct Outcome {
  Scenario scenario;
  Plan plan;
  RunResult result;
  Report report;
};

/** Parses, plans, simulates and reports. Call at most once per test process (one SimGrid engine per process). */
Outcome simulate_document(const nlohmann::json& document);

/** The report's accounting of a run: every rank's busy + idle time is the makespan, and the bytes sent are the bytes
 * received in the report's totals and, where every transfer is between ranks (`between_ranks`; not with a
 * coordinator, which is no rank), summed over the ranks. */
void expect_accounting(const Outcome& o, bool between_ranks = true);

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

/** Runs the built `partsim` binary with `args` in folder `cwd` (default: a fresh temporary folder). */
CliResult run_cli(const std::vector<std::string>& args, const std::filesystem::path& cwd = {});

/** The same through `sh -c`, after the shell commands `shell_prefix` ("ulimit -f 1; trap '' XFSZ;"), with standard
 * output sent to the file `stdout_to` when it is not empty ("/dev/full"). */
CliResult run_cli_in_shell(const std::vector<std::string>& args, const std::filesystem::path& cwd,
                           const std::string& shell_prefix, const std::string& stdout_to);

/** `partsim run scenarios/<scenario> --json --no-files --no-progress`, with `--set` for each of `sets`: the report,
 * or an empty object (and a test failure naming stderr) when the run fails. */
nlohmann::json run_scenario_json(const std::string& scenario, const std::vector<std::string>& sets);

/** Expects every figure of report `a` to equal report `b`'s, except the JSON pointers in `skipped` (a whole
 * subtree, or a key) and floats, which may differ by `tolerance(pointer)` relative or by `absolute` (in the figure's
 * own unit: for figures that are differences of nearly equal times, 0 in one run and rounding in the other). */
void expect_same_report(const nlohmann::json& a, const nlohmann::json& b, const std::vector<std::string>& skipped,
                        const std::function<double(const std::string&)>& tolerance, double absolute = 0.0);

/** Runs `action`, which must throw an InputError, and returns the error (a test failure when nothing is thrown). */
template <typename Action>
InputError input_error(Action&& action) {
  try {
    action();
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "expected an InputError, but nothing was thrown";
  return InputError("<nothing thrown>", "<nothing thrown>", "<nothing thrown>");
}

/** The names of `ops`, in order. */
std::vector<std::string> op_names(const std::vector<ComputeOp>& ops);
/** A copy of the op of `ops` named `name` (a copy: the lists are often temporaries); throws when there is none. */
ComputeOp find_op(const std::vector<ComputeOp>& ops, const std::string& name);

/** A fresh, empty temporary folder. */
std::filesystem::path temp_dir();

/** The whole content of a file. */
std::string read_file(const std::filesystem::path& path);

} // namespace partsim::test
