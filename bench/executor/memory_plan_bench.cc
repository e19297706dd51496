// Planned memory of a transformer block (issue 5): the arena the planner lays out (planned
// peak) against the naive sum of every intermediate tensor, and the live peak (the largest total
// live at one node: a lower bound no plan can beat). Also the time of one run, for scale.
//   ratio = arena / naive sum (lower is better); efficiency = live peak / arena (1.0 is optimal)
// Usage: memory_plan_bench [--smoke]   (--smoke or NRT_BENCH_SMOKE=1: the test-size block only)
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/bench_target.h"
#include "bench/bench_timing.h"
#include "serializer/open_program.h"
#include "executor/runtime/executor.h"
#include "io/random_inputs.h"
#include "tests/executor/transformer_block_program.h"

int main(int argc, char** argv) {
  const bool smoke = nrt::bench::smoke_requested(argc, argv);
  std::vector<nrt::testing::TransformerBlockShape> shapes = {{2, 8, 32, 4, 64}};
  if (!smoke) {
    shapes.push_back({1, 128, 256, 8, 1024});
    shapes.push_back({4, 256, 512, 8, 2048});
  }
  std::printf("%-26s %12s %12s %12s %8s %10s %10s\n", "transformer block", "arena B", "naive B", "live peak B",
              "ratio", "efficiency", "run ms");
  for (const auto& shape : shapes) {
    auto file = nrt::verify_in_memory(nrt::testing::transformer_block_program(shape));
    if (!file) {
      std::fprintf(stderr, "memory_plan_bench: %s\n", file.error().to_string().c_str());
      return 1;
    }
    nrt::exec::ExecutorOptions options;
    options.copy_outputs = false;
    auto executor = nrt::exec::Executor::load(std::move(*file), options);
    if (!executor) {
      std::fprintf(stderr, "memory_plan_bench: %s\n", executor.error().to_string().c_str());
      return 1;
    }
    auto inputs = nrt::exec::random_inputs((*executor)->user_inputs(), 0);
    if (!inputs) {
      std::fprintf(stderr, "memory_plan_bench: %s\n", inputs.error().to_string().c_str());
      return 1;
    }
    bool ok = true;
    const double seconds =
        nrt::bench::median_seconds(smoke ? 1 : 5, [&] { ok &= (*executor)->run(*inputs).ok(); });
    if (!ok) {
      std::fprintf(stderr, "memory_plan_bench: the run failed\n");
      return 1;
    }
    const auto& m = (*executor)->memory_plan();
    char label[64];
    std::snprintf(label, sizeof label, "B%lld T%lld D%lld H%lld F%lld", static_cast<long long>(shape.batch),
                  static_cast<long long>(shape.seq), static_cast<long long>(shape.dim),
                  static_cast<long long>(shape.heads), static_cast<long long>(shape.hidden));
    const double arena_over_naive = static_cast<double>(m.arena_bytes) / static_cast<double>(m.naive_bytes);
    const double efficiency = static_cast<double>(m.live_peak_bytes) / static_cast<double>(m.arena_bytes);
    std::printf("%-26s %12llu %12llu %12llu %8.3f %10.3f %10.3f\n", label,
                static_cast<unsigned long long>(m.arena_bytes), static_cast<unsigned long long>(m.naive_bytes),
                static_cast<unsigned long long>(m.live_peak_bytes), arena_over_naive, efficiency, seconds * 1e3);
    // Neither this file nor docs/EXECUTOR.md states a number, so these are the weak claims the
    // planner exists for: reusing memory never needs more than the naive sum, and the arena stays
    // within twice the live peak (the lower bound no plan can beat).
    std::string shape_name = label;
    std::replace(shape_name.begin(), shape_name.end(), ' ', '_');
    nrt::bench::report_target("memory_plan_bench/arena_over_naive_" + shape_name, arena_over_naive,
                              nrt::bench::Goal::kAtMost, 1.0);
    nrt::bench::report_target("memory_plan_bench/efficiency_" + shape_name, efficiency, nrt::bench::Goal::kAtLeast,
                              0.5);
  }
  return 0;
}
