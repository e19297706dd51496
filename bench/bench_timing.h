// Timing and flags shared by the benchmarks: median wall time of repeated calls, and the smoke
// switch (--smoke or NRT_BENCH_SMOKE=1) that shrinks every benchmark to seconds.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

namespace nrt::bench {

inline bool smoke_requested(int argc, char** argv) {
  const char* env = std::getenv("NRT_BENCH_SMOKE");
  bool smoke = env != nullptr && std::strcmp(env, "1") == 0;
  for (int i = 1; i < argc; ++i) smoke = smoke || std::strcmp(argv[i], "--smoke") == 0;
  return smoke;
}

// smoke_requested, and --smoke removed from argv (Google Benchmark rejects flags it does not know).
inline bool take_smoke_flag(int* argc, char** argv) {
  const bool smoke = smoke_requested(*argc, argv);
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    if (std::strcmp(argv[i], "--smoke") != 0) argv[kept++] = argv[i];
  }
  *argc = kept;
  return smoke;
}

// The middle of `samples` (the upper middle of an even count); samples must not be empty.
inline double median(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

template <typename F>
double median_seconds(int repetitions, F&& f) {
  std::vector<double> times;
  for (int i = 0; i < repetitions; ++i) {
    const auto start = std::chrono::steady_clock::now();
    f();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return median(std::move(times));
}

}  // namespace nrt::bench
