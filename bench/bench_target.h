// One machine-readable line per target a benchmark states, which scripts/test_all.sh greps so CI
// can list the targets a run missed. Benchmarks run on shared machines: a missed target is
// reported, never a failure, so nothing here changes a benchmark's exit status.
#pragma once

#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>

namespace nrt::bench {

enum class Goal { kAtLeast, kAtMost };

// Prints "target: NAME VALUE (target >= BOUND): met" or "... MISSED" ("<=" for kAtMost) on one
// stdout line, flushed so it is not lost or split when mixed with other ranks' MPI output; returns
// whether met. A NaN or infinite value is MISSED (a ratio over a zero time proves nothing). NAME is
// <bench>/<what>; whitespace in it becomes '_' so every line splits into the same fields.
inline bool report_target(const std::string& name, double value, Goal goal, double bound) {
  std::string field = name;
  for (char& c : field) {
    if (std::isspace(static_cast<unsigned char>(c))) c = '_';
  }
  const bool met = std::isfinite(value) && (goal == Goal::kAtLeast ? value >= bound : value <= bound);
  std::printf("target: %s %.3g (target %s %.3g): %s\n", field.c_str(), value, goal == Goal::kAtLeast ? ">=" : "<=",
              bound, met ? "met" : "MISSED");
  std::fflush(stdout);
  return met;
}

}  // namespace nrt::bench
