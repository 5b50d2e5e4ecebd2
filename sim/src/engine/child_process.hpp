// A simulation of its own in a forked child process (engine-internal): SimGrid 3.32 allows one engine per process, so
// a second simulation next to a run's (an injected failure, a checkpoint's writes) runs in a child forked before the
// run's engine exists.
#pragma once

#include <functional>
#include <string>

namespace partsim::engine {

/** Forks, runs `work` in the child (which may create its own SimGrid engine) and returns the text it returned. The
 * child leaves with _exit: no exit handlers. Throws std::runtime_error naming `what` when the fork fails, or when the
 * child throws, dies or writes nothing. */
std::string run_in_child(const std::string& what, const std::function<std::string()>& work);

} // namespace partsim::engine
