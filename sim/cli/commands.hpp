// The partsim subcommands, each registered on the CLI11 app with its options.
#pragma once

#include "partsim/common/exit_codes.hpp"

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace partsim::cli {

/** A subcommand's action; returns the process exit code. */
using Action = std::function<int()>;

Action add_run_command(CLI::App& app);
Action add_validate_command(CLI::App& app);
Action add_list_command(CLI::App& app);
Action add_sweep_command(CLI::App& app);

} // namespace partsim::cli
