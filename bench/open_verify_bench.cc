// Opening an .nrt file (mmap, container header, FlatBuffers verifier, nrt's semantic checks) of a
// 100k-node program, against nlohmann::json parsing the same program as torch.export JSON, which
// is how PyTorch's nativert reads model.json before it builds its graph. Both run in this process
// on the same machine state; the closing line states the ratio. Teardown (munmap, freeing the
// JSON DOM) is excluded from both.
//
//   open_verify_bench [--smoke] [Google Benchmark flags]
//   --smoke or NRT_BENCH_SMOKE=1: 10k nodes and one repetition, for CI.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include "bench/bench_target.h"
#include "bench/bench_timing.h"
#include "bench/scratch_dir.h"
#include "bench/synthetic_program.h"
#include "serializer/program_file.h"
#include "serializer/write_program.h"

namespace {

struct Config {
  uint32_t nodes = 100'000;
  int repetitions = 5;
  bool smoke = false;
};

// Removes --smoke from argv (Google Benchmark rejects flags it does not know).
Config parse_config(int* argc, char** argv) {
  Config config;
  config.smoke = nrt::bench::take_smoke_flag(argc, argv);
  if (config.smoke) {
    config.nodes = 10'000;
    config.repetitions = 1;
  }
  return config;
}

std::string node_label(uint32_t nodes) {
  return nodes % 1000 == 0 ? std::to_string(nodes / 1000) + "k" : std::to_string(nodes);
}

double elapsed_ms(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// CPU time of this thread: less sensitive than wall time to other processes on a shared machine.
double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

struct Sample {
  double wall_ms = 0;
  double cpu_ms = 0;
};

double median(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  return n % 2 == 1 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
}

// One timed open; nullopt (after printing why) when the file does not open.
std::optional<Sample> time_open(const std::string& path) {
  const double cpu_start = thread_cpu_ms();
  const auto start = std::chrono::steady_clock::now();
  auto file = nrt::ProgramFile::open(path);
  const Sample sample{elapsed_ms(start), thread_cpu_ms() - cpu_start};
  if (!file) {
    std::fprintf(stderr, "open failed: %s\n", file.error().to_string().c_str());
    return std::nullopt;
  }
  benchmark::DoNotOptimize(file->program());
  return sample;
}

std::optional<Sample> time_parse(const std::string& text) {
  const double cpu_start = thread_cpu_ms();
  const auto start = std::chrono::steady_clock::now();
  nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  const Sample sample{elapsed_ms(start), thread_cpu_ms() - cpu_start};
  if (json.is_discarded()) {
    std::fprintf(stderr, "nlohmann::json rejected the torch.export JSON\n");
    return std::nullopt;
  }
  benchmark::DoNotOptimize(json);
  return sample;
}

void register_benchmarks(const Config& config, const std::string& path, const std::string& text) {
  const std::string label = node_label(config.nodes);
  auto* open = benchmark::RegisterBenchmark(("nrt_open_verify/" + label + "_nodes").c_str(),
                                            [path](benchmark::State& state) {
                                              std::optional<nrt::Result<nrt::ProgramFile>> opened;
                                              for (auto _ : state) {
                                                opened.emplace(nrt::ProgramFile::open(path));
                                                if (!*opened) {
                                                  state.SkipWithError(opened->error().message.c_str());
                                                  break;
                                                }
                                                benchmark::DoNotOptimize((*opened)->program());
                                                state.PauseTiming();
                                                opened.reset();  // munmap is teardown, not opening
                                                state.ResumeTiming();
                                              }
                                            });
  auto* parse = benchmark::RegisterBenchmark(("nlohmann_parse/" + label + "_nodes").c_str(),
                                             [&text](benchmark::State& state) {
                                               for (auto _ : state) {
                                                 nlohmann::json json = nlohmann::json::parse(text, nullptr, false);
                                                 benchmark::DoNotOptimize(json);
                                                 state.PauseTiming();
                                                 json = nullptr;
                                                 state.ResumeTiming();
                                               }
                                               state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                                                                       static_cast<int64_t>(text.size()));
                                             });
  for (auto* b : {open, parse}) {
    b->Unit(benchmark::kMillisecond)->UseRealTime();
    if (config.smoke) b->Iterations(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Config config = parse_config(&argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;

  nrt::bench::ScratchDir dir("open_verify_bench");
  if (dir.path().empty()) {
    std::fprintf(stderr, "cannot create a scratch directory\n");
    return 2;
  }
  const std::string path = dir.file("ladder.nrt");
  {
    const std::vector<uint8_t> weight(nrt::bench::kLadderWeightBytes, 0x3f);
    const std::span<const uint8_t> spans[] = {weight};
    if (auto s = nrt::write_program_file(path, nrt::bench::make_ladder_program(config.nodes), spans); !s) {
      std::fprintf(stderr, "write failed: %s\n", s.error().to_string().c_str());
      return 2;
    }
  }
  const std::string text = nrt::bench::make_ladder_torch_json(config.nodes);

  // Both forms must hold the same graph, or the comparison means nothing.
  uint32_t nrt_nodes = 0;
  uint64_t nrt_bytes = 0;
  uint64_t flatbuffer_bytes = 0;
  {
    auto file = nrt::ProgramFile::open(path);
    if (!file) {
      std::fprintf(stderr, "the written program does not open: %s\n", file.error().to_string().c_str());
      return 1;
    }
    nrt_nodes = file->program().graphs()->Get(0)->nodes()->size();
    nrt_bytes = file->file_bytes().size();
    flatbuffer_bytes = file->layout().flatbuffer_size;
  }
  {
    const nlohmann::json json = nlohmann::json::parse(text, nullptr, false);
    if (json.is_discarded()) {
      std::fprintf(stderr, "nlohmann::json rejected the generated torch.export JSON\n");
      return 1;
    }
    const size_t json_nodes = json["graph_module"]["graph"]["nodes"].size();
    if (nrt_nodes != config.nodes || json_nodes != config.nodes) {
      std::fprintf(stderr, "node counts differ: asked %u, .nrt %u, JSON %zu\n", config.nodes, nrt_nodes, json_nodes);
      return 1;
    }
  }

  register_benchmarks(config, path, text);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  std::vector<double> open_ms, parse_ms, open_cpu_ms, parse_cpu_ms;
  for (int r = 0; r < config.repetitions; ++r) {
    auto o = time_open(path);
    auto p = time_parse(text);
    if (!o || !p) return 1;
    open_ms.push_back(o->wall_ms);
    parse_ms.push_back(p->wall_ms);
    open_cpu_ms.push_back(o->cpu_ms);
    parse_cpu_ms.push_back(p->cpu_ms);
  }
  const double open = median(open_ms);
  const double parse = median(parse_ms);
  const double open_cpu = median(open_cpu_ms);
  const double parse_cpu = median(parse_cpu_ms);
  std::printf(".nrt file: %.1f MB (FlatBuffer %.1f MB); torch.export JSON: %.1f MB; median of %d\n",
              static_cast<double>(nrt_bytes) / 1e6, static_cast<double>(flatbuffer_bytes) / 1e6,
              static_cast<double>(text.size()) / 1e6, config.repetitions);
  std::printf("thread CPU time: open+verify %.2f ms; nlohmann parse %.2f ms; ratio %.1f x\n", open_cpu, parse_cpu,
              parse_cpu / open_cpu);
  std::printf("open+verify %s nodes: %.2f ms; nlohmann parse: %.2f ms; ratio: %.1f x (target >= 50x)\n",
              node_label(config.nodes).c_str(), open, parse, parse / open);
  // The target is on the wall-time ratio printed last (the thread CPU ratio above is for context).
  nrt::bench::report_target("open_verify_bench/nlohmann_parse_over_open", parse / open, nrt::bench::Goal::kAtLeast,
                            50.0);
  return 0;
}
