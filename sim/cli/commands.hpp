// The partsim subcommands, each registered on the CLI11 app with its options.
#pragma once

#include "partsim/common/exit_codes.hpp"

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace partsim::cli {

/** One error of a command that failed in several places (a sweep's points): what main prints, in the error format
 * asked for (`--error-format`), one line each. */
struct CommandError {
  std::string source;
  std::string pointer;
  std::string message;
};

/** Thrown by a command whose failures are already known one by one; main prints them and exits with `exit_code`. */
struct CommandFailed {
  int exit_code = kExitFailure;
  std::vector<CommandError> errors;
};

/** A subcommand's action; returns the process exit code. */
using Action = std::function<int()>;

Action add_run_command(CLI::App& app);
Action add_validate_command(CLI::App& app);
Action add_list_command(CLI::App& app);
Action add_sweep_command(CLI::App& app);
Action add_search_command(CLI::App& app);
Action add_merge_command(CLI::App& app);
Action add_validation_command(CLI::App& app);
Action add_batch_command(CLI::App& app);
Action add_plan_replicas_command(CLI::App& app);

} // namespace partsim::cli
