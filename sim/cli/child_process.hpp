// Runs partsim child processes in parallel (SimGrid allows one simulation per process).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace partsim::cli {

struct ChildResult {
  int exit_code = -1; ///< exit status, or 128 + signal
  std::string out;
  std::string err;
};

/** Runs each argument vector (argv[0] is the program path) with at most `jobs` at once; `on_done(i)` is called as
 * each finishes. Results are in input order. */
std::vector<ChildResult> run_children(const std::vector<std::vector<std::string>>& commands, std::size_t jobs,
                                      const std::function<void(std::size_t)>& on_done);

/** What a child run with `--error-format=json` said went wrong: its error event (source, pointer, message), else its
 * first stderr line, else its exit code. */
struct ChildError {
  std::string source;
  std::string pointer;
  std::string message;
};
ChildError child_error(const ChildResult& result);

/** Path of the running executable (/proc/self/exe). */
std::string self_executable();

/** `partsim run SCENARIO` (this executable) as a child of sweep, search, batch or validation: report.json on stdout, no
 * files, no progress, errors as JSON lines (child_error), expectations left to the parent; `--set` for each of `sets`,
 * `--unset` for each of `unsets`. */
std::vector<std::string> child_run_command(const std::string& scenario, const std::vector<std::string>& sets = {},
                                           const std::vector<std::string>& unsets = {});

/** Children run at once: `requested`, or one per core when 0. */
std::size_t job_count(std::size_t requested);

} // namespace partsim::cli
