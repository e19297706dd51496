// SIGINT and SIGTERM during a tool's repeated runs (`nrt-run --repeat N`): instead of dying with
// every timing collected lost, the run in progress finishes, the loop stops, and the tool reports
// what it measured ("interrupted by SIGINT after 1234 of 1000000 runs"). Watched only in a process
// started without a launcher: under mpirun, SIGTERM belongs to the flight recorder's dumps
// (executor/comm/dump_on_signal.h). A second signal acts as it would without the watch (the
// handler is reset when the first arrives), so a stuck run can still be killed.
#pragma once

#include <csignal>

namespace nrt {

class RunInterruption {
 public:
  RunInterruption();   // installs the handlers
  ~RunInterruption();  // restores the ones before
  RunInterruption(const RunInterruption&) = delete;
  RunInterruption& operator=(const RunInterruption&) = delete;

  // The signal that arrived (SIGINT, SIGTERM), or 0.
  int signal() const;

 private:
  struct sigaction previous_int_ {}, previous_term_ {};
};

}  // namespace nrt
