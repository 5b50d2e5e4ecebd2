// A failure injected into the simulated iteration (`/reliability/inject`, docs/failures.md): SimGrid turns the
// failing GPUs' hosts off mid-run, so that their actors end and the transfers to and from them fail as they would;
// the ranks that see an activity fail record it, the others hang until the job's detection time stops the run. Run
// on an engine of its own, in a child process (one SimGrid engine per process). Engine-internal.
#pragma once

#include "partsim/engine/engine.hpp"
#include "run_context.hpp"

#include <string>

namespace simgrid::s4u {
class Host;
}

namespace partsim::engine {

/** Simulates the scenario with its injected failure in a forked child process and returns what the failure did.
 * Throws std::runtime_error when the child fails. */
InjectedFailureOutcome simulate_injection_in_child(const Scenario& scenario, const Plan& plan,
                                                   const EngineOptions& options);

/** In the injecting engine: an actor on `where` that turns the failing GPUs off at the injection time (when a rank
 * still runs), notes what every rank runs then, and stops every actor the detection time later. */
void start_failure_injection(RunContext& ctx, const FailureInjection& injection, double detection,
                             simgrid::s4u::Host* where);

/** After the injecting engine's run: the ranks that finished and those left hanging, the notices in order of time
 * (the first kNoticesKept). */
void finish_failure_injection(RunContext& ctx);

/** Rank `rank` saw its running activity fail (`stream`: an overlapped collective of its communication stream). */
void notice_failure(RunContext& ctx, int rank, const Step* running, bool stream);

/** One line for a step: "compute", "all_reduce (data, 64 ranks)", "send to rank 3", "stream sync". */
std::string describe_step(const Plan& plan, const Step& step);

} // namespace partsim::engine
