// The partsim subcommands, each registered on the CLI11 app with its options.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace partsim::cli {

/** A subcommand's action; returns the process exit code. */
using Action = std::function<int()>;

/** Exit code of `partsim run` when the scenario does not fit in GPU memory (reported, not simulated). */
inline constexpr int kExitOutOfMemory = 3;

Action add_run_command(CLI::App& app);
Action add_validate_command(CLI::App& app);
Action add_list_command(CLI::App& app);
Action add_sweep_command(CLI::App& app);

} // namespace partsim::cli
