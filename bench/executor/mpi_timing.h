// Timing across ranks for the benchmarks run under mpirun: a collective or a sharded run ends when
// its slowest rank does, so every rank reports the slowest rank's median.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "bench/bench_timing.h"

namespace nrt::bench {

// Median over `iterations` of one call, every rank starting together (a barrier before each);
// `ok` is and-ed with every call's result.
inline double slowest_median_seconds(int iterations, const std::function<bool()>& call, bool& ok) {
  std::vector<double> times;
  for (int i = 0; i < iterations; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    times.push_back(median_seconds(1, [&] { ok &= call(); }));
  }
  std::sort(times.begin(), times.end());
  double mine = times[times.size() / 2], slowest = 0;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

}  // namespace nrt::bench
