// Dumps on SIGTERM and SIGUSR1 (docs/COLLECTIVES.md): the signal handler only writes the signal's
// number into a pipe; a thread reads it and calls `dump` with the reason ("SIGTERM", "SIGUSR1"),
// outside the handler, where writing JSON and files is allowed. After SIGTERM's dump the process
// waits `linger` and then ends as SIGTERM would have ended it; SIGUSR1 dumps and goes on. (Under a
// launcher, the first rank to die of the SIGTERM makes it SIGKILL the rest at once: lingering lets
// every rank finish its dump first; the launcher's own SIGKILL still ends the job.) One
// installation per process: a later call replaces the dump function and the linger.
#pragma once

#include <chrono>
#include <functional>

#include "core/error.h"

namespace nrt::exec {

Status dump_on_signals(std::function<void(const char* reason)> dump,
                       std::chrono::milliseconds linger = std::chrono::milliseconds(0));

}  // namespace nrt::exec
