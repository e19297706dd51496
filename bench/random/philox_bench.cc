// Philox draws against a memset of the same output buffer, in the same run: ratio = memset time /
// draw time (1 = as fast as writing the bytes), on one thread and on every core (each thread
// draws its own range of elements, as shards do; memset splits the same way). Target: >= 0.5 for
// uniform float32 on every core (issue 26). Also reported: normal float32 (glibc's log, sqrt,
// sin and cos per pair: the bits torch gives), uniform float64, and the block loop alone (the
// widest of AVX-512, AVX2 this CPU has) against the scalar one.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "bench/bench_target.h"
#include "bench/bench_timing.h"
#include "executor/random/philox_blocks.h"
#include "executor/random/torch_philox.h"

int main(int argc, char** argv) {
  using namespace nrt;
  const bool smoke = bench::smoke_requested(argc, argv);
  const int64_t n = smoke ? (1 << 18) : (1 << 24);  // elements (4 bytes each for float32)
  const int repetitions = smoke ? 5 : 15;
  std::vector<uint8_t> buffer(static_cast<size_t>(n) * 8);
  const random::TorchPhiloxKey key{2026, 12};

  auto time_memset = [&](size_t bytes) {
    return bench::median_seconds(repetitions, [&] {
      std::memset(buffer.data(), static_cast<int>(buffer[0] + 1), bytes);
      asm volatile("" : : "r"(buffer.data()) : "memory");
    });
  };
  const double memset4 = time_memset(static_cast<size_t>(n) * 4);
  const double memset8 = time_memset(static_cast<size_t>(n) * 8);
  const double uniform32 = bench::median_seconds(
      repetitions, [&] { random::torch_uniform(key, ScalarType::FLOAT32, 0.0, 1.0, 0, n, buffer.data()); });
  const double normal32 = bench::median_seconds(
      repetitions, [&] { random::torch_normal(key, ScalarType::FLOAT32, 0.0, 1.0, 0, n, buffer.data()); });
  const double uniform64 = bench::median_seconds(
      repetitions, [&] { random::torch_uniform(key, ScalarType::FLOAT64, 0.0, 1.0, 0, n, buffer.data()); });
  auto* words = reinterpret_cast<uint32_t*>(buffer.data());
  const double blocks_best = bench::median_seconds(repetitions, [&] { random::philox_blocks(7, 0, n / 4, words); });
  const double blocks_scalar =
      bench::median_seconds(repetitions, [&] { random::detail::philox_blocks_scalar(7, 0, n / 4, words); });

  // The same work on every core: thread t takes elements [t n / T, (t + 1) n / T).
  const int threads = static_cast<int>(std::max(1u, std::min(8u, std::thread::hardware_concurrency())));
  auto on_every_core = [&](auto&& part) {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back([&, t] { part(n * t / threads, n * (t + 1) / threads); });
    for (auto& thread : pool) thread.join();
  };
  const double memset4_all = bench::median_seconds(repetitions, [&] {
    on_every_core([&](int64_t begin, int64_t end) {
      std::memset(buffer.data() + 4 * begin, static_cast<int>(buffer[0] + 1), static_cast<size_t>(4 * (end - begin)));
    });
    asm volatile("" : : "r"(buffer.data()) : "memory");
  });
  const double uniform32_all = bench::median_seconds(repetitions, [&] {
    on_every_core([&](int64_t begin, int64_t end) {
      random::torch_uniform(key, ScalarType::FLOAT32, 0.0, 1.0, begin, end - begin, buffer.data() + 4 * begin);
    });
  });

  std::printf("philox_bench: %lld elements, one thread%s\n", static_cast<long long>(n), smoke ? " (smoke)" : "");
  std::printf("  memset f32-sized   %8.2f ms  %6.2f GB/s\n", memset4 * 1e3, n * 4 / memset4 / 1e9);
  std::printf("  uniform f32        %8.2f ms  %6.2f G/s   ratio to memset %.2f\n", uniform32 * 1e3, n / uniform32 / 1e9,
              memset4 / uniform32);
  std::printf("  normal f32         %8.2f ms  %6.2f G/s   ratio to memset %.2f\n", normal32 * 1e3, n / normal32 / 1e9,
              memset4 / normal32);
  std::printf("  uniform f64        %8.2f ms  %6.2f G/s   ratio to memset %.2f\n", uniform64 * 1e3, n / uniform64 / 1e9,
              memset8 / uniform64);
  std::printf("  blocks %s %8.2f ms, scalar %8.2f ms: %.2fx\n", random::detail::cpu_has_avx512() ? "(avx512)"
                                                                                : random::detail::cpu_has_avx2() ? "(avx2)  "
                                                                                                                 : "(scalar)",
              blocks_best * 1e3, blocks_scalar * 1e3, blocks_scalar / blocks_best);
  std::printf("  on %d threads: memset %.2f ms, uniform f32 %.2f ms: ratio to memset %.2f\n", threads,
              memset4_all * 1e3, uniform32_all * 1e3, memset4_all / uniform32_all);
  bench::report_target("philox_bench/uniform_f32_vs_memset_all_cores", memset4_all / uniform32_all,
                       bench::Goal::kAtLeast, 0.5);
  return 0;
}
