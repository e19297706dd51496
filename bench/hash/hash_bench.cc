// Hashing speed (issue: canonical hashing):
//  - weights digest throughput per thread count, against a plain single-core read of the same
//    mapped bytes (sum of 64-bit words), measured in the same run: ratio = (hash GB/s / threads)
//    / read GB/s; target >= 0.5 per thread;
//  - structure digest of a 100k-node program: median milliseconds; target <= 50 ms.
// Usage: hash_bench [--smoke]   (--smoke or NRT_BENCH_SMOKE=1: 64 MiB, 10k nodes, for CI)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "bench/bench_target.h"
#include "bench/bench_timing.h"
#include "bench/scratch_dir.h"
#include "bench/synthetic_program.h"
#include "serializer/program_file.h"
#include "serializer/structure_hash.h"
#include "serializer/weights_hash.h"
#include "serializer/write_program.h"

namespace {

using Clock = std::chrono::steady_clock;

template <typename F>
double median_seconds(int repetitions, F&& f) {
  std::vector<double> times;
  for (int i = 0; i < repetitions; ++i) {
    const auto start = Clock::now();
    f();
    times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

uint64_t sum_words(const nrt::ProgramFile& file) {
  uint64_t sum = 0;
  for (uint32_t s = 0; s < file.program().storages()->size(); ++s) {
    const auto bytes = file.storage_bytes(s);
    const auto* words = reinterpret_cast<const uint64_t*>(bytes.data());
    const size_t n = bytes.size() / 8;
    for (size_t i = 0; i < n; ++i) sum += words[i];
  }
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  const bool smoke = nrt::bench::smoke_requested(argc, argv);
  const uint32_t storages = smoke ? 4 : 16;
  const uint64_t storage_bytes = uint64_t{16} << 20;  // 16 MiB each: 256 MiB full, 64 MiB smoke
  const uint32_t nodes = smoke ? 10'000 : 100'000;
  const int repetitions = smoke ? 1 : 5;

  nrt::bench::ScratchDir dir("hash_bench");
  const std::string path = dir.file("weights.nrt");
  std::vector<uint8_t> pattern(storage_bytes);
  for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<uint8_t>(i * 131 + (i >> 12));
  std::vector<std::span<const uint8_t>> spans(storages, std::span<const uint8_t>(pattern));
  if (nrt::Status s = nrt::write_program_file(path, nrt::bench::make_weighted_program(storages, storage_bytes), spans); !s) {
    std::fprintf(stderr, "hash_bench: %s\n", s.error().to_string().c_str());
    return 1;
  }
  auto file = nrt::ProgramFile::open(path);
  if (!file) {
    std::fprintf(stderr, "hash_bench: %s\n", file.error().to_string().c_str());
    return 1;
  }
  const double total = static_cast<double>(storages) * static_cast<double>(storage_bytes);
  volatile uint64_t sink = sum_words(*file);  // page the mapping in before timing anything
  const double read_s = median_seconds(repetitions, [&] { sink = sink + sum_words(*file); });
  const double read_gbs = total / read_s / 1e9;
  std::printf("weights: %.0f MiB in %u storages; single-core read (sum of u64 words): %.2f GB/s\n", total / (1 << 20),
              storages, read_gbs);
  std::printf("%8s %12s %14s %22s\n", "threads", "hash GB/s", "GB/s/thread", "per-thread / read");
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned threads = 1; threads <= std::max(2u, hw); threads *= 2) {
    const double s = median_seconds(repetitions, [&] { nrt::hash_weights(*file, {nrt::HashAlgorithm::kXxh3, threads, nullptr}); });
    const double gbs = total / s / 1e9;
    std::printf("%8u %12.2f %14.2f %21.2fx%s\n", threads, gbs, gbs / threads, gbs / threads / read_gbs,
                threads > hw ? "  (more threads than cores)" : "");
    // The per-thread target is reported for one thread: more threads share memory bandwidth (and
    // CI's cores), so their per-thread share says more about the machine than about the hash.
    if (threads == 1) {
      nrt::bench::report_target("hash_bench/hash_per_thread_over_read_1_thread", gbs / threads / read_gbs,
                                nrt::bench::Goal::kAtLeast, 0.5);
    }
  }
  const double sha_s = median_seconds(1, [&] { nrt::hash_weights(*file, {nrt::HashAlgorithm::kSha256, hw, nullptr}); });
  std::printf("sha256 with %u threads: %.2f GB/s\n", hw, total / sha_s / 1e9);

  // Structure digest of the ladder program (written and verified like any file).
  auto ladder = nrt::bench::make_ladder_program(nodes);
  std::vector<uint8_t> weight(nrt::bench::kLadderWeightBytes);
  const std::vector<std::span<const uint8_t>> ladder_spans = {std::span<const uint8_t>(weight)};
  auto bytes = nrt::serialize_program(std::move(ladder), ladder_spans);
  auto ladder_file = bytes ? nrt::ProgramFile::from_bytes(std::move(*bytes)) : nrt::Result<nrt::ProgramFile>(bytes.error());
  if (!ladder_file) {
    std::fprintf(stderr, "hash_bench: %s\n", ladder_file.error().to_string().c_str());
    return 1;
  }
  const double structure_s =
      median_seconds(repetitions, [&] { nrt::hash_structure(ladder_file->program(), nrt::HashAlgorithm::kXxh3); });
  std::printf("structure digest of a %u-node program: %.1f ms (target <= 50 ms for 100k nodes)\n", nodes,
              structure_s * 1e3);
  // The 50 ms target is for 100k nodes; the digest is linear in nodes, so a smaller program (smoke:
  // 10k) is scaled to milliseconds per 100k nodes.
  nrt::bench::report_target("hash_bench/structure_digest_ms_per_100k_nodes",
                            structure_s * 1e3 * 100'000.0 / static_cast<double>(nodes), nrt::bench::Goal::kAtMost,
                            50.0);
  return 0;
}
