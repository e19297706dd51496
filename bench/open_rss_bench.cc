// What opening an .nrt costs in memory when its weights are large. Writes a program with 1 GiB of
// weights (16 storages of 64 MiB, streamed from one buffer), evicts the file from the page cache,
// then reads VmRSS before and after ProgramFile::open and after walking the program's metadata:
// opening maps the file and verifies the header, FlatBuffer and storage table, so it must not
// fault weight pages in. Deep verification (VerifyOptions::deep, XXH3-128 of every storage) is
// what reads them; it is timed from a cold and from a warm page cache.
//
//   open_rss_bench [--smoke] [Google Benchmark flags]
//   --smoke or NRT_BENCH_SMOKE=1: 64 MiB of weights, one iteration per benchmark, for CI.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "bench/bench_target.h"
#include "bench/bench_timing.h"
#include "bench/resident_memory.h"
#include "bench/scratch_dir.h"
#include "bench/synthetic_program.h"
#include "serializer/program_file.h"
#include "serializer/write_program.h"

namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint32_t kStorages = 16;

struct Config {
  uint64_t weight_bytes = 1024 * kMiB;
  bool smoke = false;
};

// Removes --smoke from argv (Google Benchmark rejects flags it does not know).
Config parse_config(int* argc, char** argv) {
  Config config;
  config.smoke = nrt::bench::take_smoke_flag(argc, argv);
  if (config.smoke) config.weight_bytes = 64 * kMiB;
  return config;
}

std::string size_label(uint64_t bytes) {
  return bytes % (1024 * kMiB) == 0 ? std::to_string(bytes / (1024 * kMiB)) + " GiB"
                                    : std::to_string(bytes / kMiB) + " MiB";
}

// Drops the file's clean pages from the page cache, so nothing is resident until read again.
bool evict_from_page_cache(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::fdatasync(fd) == 0 && ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0;
  ::close(fd);
  return ok;
}

// Pages of `bytes` (page-aligned start) that are in the page cache.
std::optional<uint64_t> resident_pages(std::span<const uint8_t> bytes) {
  const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t pages = (bytes.size() + page - 1) / page;
  std::vector<unsigned char> residency(pages);
  if (pages == 0) return 0;
  if (::mincore(const_cast<uint8_t*>(bytes.data()), bytes.size(), residency.data()) != 0) return std::nullopt;
  uint64_t resident = 0;
  for (unsigned char r : residency) resident += r & 1u;
  return resident;
}

// Reads every metadata field a loader would: graph structure, weight names and shapes, storage
// sizes. Returns the total storage size, which must equal the bytes written.
uint64_t walk_metadata(const nrt::fb::Program& program) {
  uint64_t names = 0;
  for (const auto* graph : *program.graphs()) {
    for (const auto* value : *graph->values()) names += value->name()->size() + value->tensor()->sizes()->size();
    for (const auto* node : *graph->nodes()) names += node->name()->size() + node->inputs()->size();
  }
  for (const auto* weight : *program.weights()) names += weight->fqn()->size() + weight->meta()->sizes()->size();
  benchmark::DoNotOptimize(names);
  uint64_t storage_bytes = 0;
  for (const auto* storage : *program.storages()) storage_bytes += storage->size();
  return storage_bytes;
}

double mib_between(uint64_t before_kib, uint64_t after_kib) {
  return (static_cast<double>(after_kib) - static_cast<double>(before_kib)) / 1024.0;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Writes the program, streaming 16 views of one buffer: the process never holds 1 GiB.
nrt::Status write_weighted_file(const std::string& path, uint64_t weight_bytes) {
  const uint64_t storage_bytes = weight_bytes / kStorages;
  std::vector<uint8_t> buffer(storage_bytes);
  for (size_t i = 0; i < buffer.size(); ++i) buffer[i] = static_cast<uint8_t>((i * 2654435761u) >> 13);
  const std::vector<std::span<const uint8_t>> spans(kStorages, std::span<const uint8_t>(buffer));
  return nrt::write_program_file(path, nrt::bench::make_weighted_program(kStorages, storage_bytes), spans);
}

// Opens with `deep` from the current page-cache state; prints throughput. False on failure.
bool time_deep_open(const std::string& path, uint64_t weight_bytes, const char* cache_state) {
  const auto start = std::chrono::steady_clock::now();
  auto file = nrt::ProgramFile::open(path, nrt::VerifyOptions{.deep = true});
  const double seconds = seconds_since(start);
  if (!file) {
    std::fprintf(stderr, "deep open failed: %s\n", file.error().to_string().c_str());
    return false;
  }
  std::printf("open --deep (%s page cache, reads and checksums %s): %.1f ms, %.2f GB/s\n", cache_state,
              size_label(weight_bytes).c_str(), seconds * 1e3, static_cast<double>(weight_bytes) / seconds / 1e9);
  return true;
}

void register_benchmarks(const Config& config, const std::string& path) {
  const std::string label = size_label(config.weight_bytes);
  std::string suffix = label;
  suffix.erase(suffix.find(' '), 1);
  for (const bool deep : {false, true}) {
    auto* b = benchmark::RegisterBenchmark(
        ((deep ? "nrt_open_deep/" : "nrt_open/") + suffix + "_weights").c_str(),
        [path, deep, bytes = config.weight_bytes](benchmark::State& state) {
          std::optional<nrt::Result<nrt::ProgramFile>> opened;
          for (auto _ : state) {
            opened.emplace(nrt::ProgramFile::open(path, nrt::VerifyOptions{.deep = deep}));
            if (!*opened) {
              state.SkipWithError(opened->error().message.c_str());
              break;
            }
            benchmark::DoNotOptimize((*opened)->program());
            state.PauseTiming();
            opened.reset();
            state.ResumeTiming();
          }
          if (deep) state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
        });
    b->Unit(benchmark::kMillisecond)->UseRealTime();
    if (config.smoke) b->Iterations(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Config config = parse_config(&argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  const std::string label = size_label(config.weight_bytes);

  nrt::bench::ScratchDir dir("open_rss_bench");
  if (dir.path().empty()) {
    std::fprintf(stderr, "cannot create a scratch directory\n");
    return 2;
  }
  const std::string path = dir.file("weighted.nrt");
  if (auto s = write_weighted_file(path, config.weight_bytes); !s) {
    std::fprintf(stderr, "write failed: %s\n", s.error().to_string().c_str());
    return 2;
  }
  if (!evict_from_page_cache(path)) {
    std::fprintf(stderr, "cannot evict '%s' from the page cache: %s\n", path.c_str(), std::strerror(errno));
    return 2;
  }

  const auto baseline = nrt::bench::vm_rss_kib();
  if (!baseline) {
    std::fprintf(stderr, "/proc/self/status has no VmRSS line\n");
    return 2;
  }
  {
    auto file = nrt::ProgramFile::open(path);
    if (!file) {
      std::fprintf(stderr, "open failed: %s\n", file.error().to_string().c_str());
      return 1;
    }
    const uint64_t after_open = nrt::bench::vm_rss_kib().value_or(0);
    const uint64_t storage_bytes = walk_metadata(file->program());
    const uint64_t after_walk = nrt::bench::vm_rss_kib().value_or(0);
    if (storage_bytes != config.weight_bytes) {
      std::fprintf(stderr, "storages hold %llu bytes, %llu were written\n",
                   static_cast<unsigned long long>(storage_bytes),
                   static_cast<unsigned long long>(config.weight_bytes));
      return 1;
    }
    const auto segment = file->file_bytes().subspan(file->layout().segment_offset, file->layout().segment_size);
    const auto resident = resident_pages(segment);
    std::printf("file: %.1f MiB (FlatBuffer %llu bytes, weight segment %.1f MiB in %u storages)\n",
                static_cast<double>(file->file_bytes().size()) / kMiB,
                static_cast<unsigned long long>(file->layout().flatbuffer_size),
                static_cast<double>(segment.size()) / kMiB, kStorages);
    std::printf("VmRSS baseline %.2f MiB; after open %+.2f MiB; after walking metadata %+.2f MiB\n",
                static_cast<double>(*baseline) / 1024.0, mib_between(*baseline, after_open),
                mib_between(*baseline, after_walk));
    if (resident) {
      std::printf("weight segment pages in the page cache after open: %llu of %llu\n",
                  static_cast<unsigned long long>(*resident),
                  static_cast<unsigned long long>((segment.size() + 4095) / 4096));
    }
    const double rss_growth_mib = mib_between(*baseline, std::max(after_open, after_walk));
    std::printf("RSS above baseline after open of %s weights: %.2f MiB (target < 16 MiB)\n", label.c_str(),
                rss_growth_mib);
    // Opening must not fault weight pages in: the growth stays far below the weights (64 MiB in
    // smoke, 1 GiB full) whatever their size.
    nrt::bench::report_target("open_rss_bench/rss_growth_mib_after_open", rss_growth_mib, nrt::bench::Goal::kAtMost,
                              16.0);
  }

  if (!evict_from_page_cache(path) || !time_deep_open(path, config.weight_bytes, "cold") ||
      !time_deep_open(path, config.weight_bytes, "warm")) {
    return 1;
  }

  register_benchmarks(config, path);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;  // ~ScratchDir deletes the file
}
