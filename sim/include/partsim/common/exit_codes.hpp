// The exit codes of partsim's commands, shared by the CLI, the sweep's children and the GUI that runs them.
#pragma once

namespace partsim {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;     ///< anything else: an internal error (a bug) or a crashed child
inline constexpr int kExitInputError = 2;  ///< InputError: the scenario, a profile or the command line is wrong
inline constexpr int kExitOutOfMemory = 3; ///< a verdict: the plan does not fit in GPU memory (reported, not run)
inline constexpr int kExitOutputError = 4; ///< OutputError: an output could not be written (disk full, read-only, ...)
inline constexpr int kExitExpectationFailed = 5; ///< the run's report breaks a bound of the scenario's `/expect`

} // namespace partsim
