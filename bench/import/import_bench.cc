// torch.export JSON import throughput: parsing with simdjson and building the whole nrt program
// (every value, node, argument and metadata entry in the object API), against nlohmann::json
// parsing the same bytes alone (how PyTorch's nativert reads model.json before building its
// graph). Both run in this process on the same bytes; the closing lines state MB/s and the
// ratio for a synthetic 100k-node program and for each conformance program found. Teardown
// (freeing the program, freeing the DOM) is excluded from both.
//
//   import_bench [--smoke] [Google Benchmark flags]
//   --smoke or NRT_BENCH_SMOKE=1: 10k nodes and one repetition, for CI.
//   Conformance programs: $NRT_CONFORMANCE_DIR/torch_export/*.json, else
//   ../shared/conformance or /work/shared/conformance.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include "bench/bench_target.h"
#include "bench/bench_timing.h"
#include "bench/import/torch_json_ladder.h"
#include "serializer/torch_export/import_json.h"

namespace {

namespace fs = std::filesystem;

struct Config {
  uint32_t nodes = 100'000;
  int repetitions = 5;
  bool smoke = false;
};

struct Input {
  std::string label;
  std::string text;
  size_t nodes = 0;
};

Config parse_config(int* argc, char** argv) {
  Config config;
  config.smoke = nrt::bench::take_smoke_flag(argc, argv);
  if (config.smoke) {
    config.nodes = 10'000;
    config.repetitions = 1;
  }
  return config;
}

std::string conformance_dir() {
  if (const char* env = std::getenv("NRT_CONFORMANCE_DIR"); env != nullptr && fs::is_directory(env)) return env;
  for (const char* dir : {"../shared/conformance", "/work/shared/conformance"}) {
    if (fs::is_directory(dir)) return dir;
  }
  return "";
}

std::vector<Input> conformance_inputs() {
  std::vector<Input> inputs;
  const std::string dir = conformance_dir();
  if (dir.empty() || !fs::is_directory(dir + "/torch_export")) return inputs;
  for (const auto& entry : fs::directory_iterator(dir + "/torch_export")) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    inputs.push_back({entry.path().stem().string(), text.str()});
  }
  std::sort(inputs.begin(), inputs.end(), [](const Input& a, const Input& b) { return a.label < b.label; });
  return inputs;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  return n % 2 == 1 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
}

// Seconds to build the result, teardown (freeing the program or the DOM) excluded on both sides;
// nullopt after printing why when the input is refused.
std::optional<double> import_seconds(const std::string& text) {
  const auto start = std::chrono::steady_clock::now();
  auto imported = nrt::torch_export::import_torch_json(text);
  const double seconds = seconds_since(start);
  if (!imported) {
    std::fprintf(stderr, "import failed: %s\n", imported.error().to_string().c_str());
    return std::nullopt;
  }
  benchmark::DoNotOptimize(imported->program.program.graphs.data());
  return seconds;
}

std::optional<double> parse_seconds(const std::string& text) {
  const auto start = std::chrono::steady_clock::now();
  nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  const double seconds = seconds_since(start);
  if (json.is_discarded()) {
    std::fprintf(stderr, "nlohmann::json rejected the input\n");
    return std::nullopt;
  }
  benchmark::DoNotOptimize(json);
  return seconds;
}

// Median over `repetitions` samples; each sample averages runs until 20 ms are measured (small
// inputs take microseconds).
std::optional<double> time_per_run(int repetitions, std::optional<double> (*run)(const std::string&),
                                   const std::string& text) {
  std::vector<double> samples;
  for (int r = 0; r < repetitions; ++r) {
    double total = 0;
    int iterations = 0;
    do {
      auto seconds = run(text);
      if (!seconds) return std::nullopt;
      total += *seconds;
      ++iterations;
    } while (total < 0.02);
    samples.push_back(total / iterations);
  }
  return median(samples);
}

void register_benchmarks(const Config& config, const std::vector<Input>& inputs) {
  for (const Input& input : inputs) {
    const std::string* text = &input.text;
    auto* import = benchmark::RegisterBenchmark(("nrt_torch_import/" + input.label).c_str(),
                                                [text](benchmark::State& state) {
                                                  for (auto _ : state) {
                                                    auto imported = nrt::torch_export::import_torch_json(*text);
                                                    if (!imported) {
                                                      state.SkipWithError("import failed");
                                                      break;
                                                    }
                                                    benchmark::DoNotOptimize(imported->program.program.graphs.data());
                                                    state.PauseTiming();
                                                    imported = nrt::Error{};  // teardown is not importing
                                                    state.ResumeTiming();
                                                  }
                                                  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                                                                          static_cast<int64_t>(text->size()));
                                                });
    auto* parse = benchmark::RegisterBenchmark(("nlohmann_parse/" + input.label).c_str(),
                                               [text](benchmark::State& state) {
                                                 for (auto _ : state) {
                                                   nlohmann::json json = nlohmann::json::parse(*text, nullptr, false);
                                                   benchmark::DoNotOptimize(json);
                                                   state.PauseTiming();
                                                   json = nullptr;
                                                   state.ResumeTiming();
                                                 }
                                                 state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                                                                         static_cast<int64_t>(text->size()));
                                               });
    for (auto* b : {import, parse}) {
      b->Unit(benchmark::kMillisecond)->UseRealTime();
      if (config.smoke) b->Iterations(1);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Config config = parse_config(&argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;

  std::vector<Input> inputs;
  const std::string ladder_label = config.nodes % 1000 == 0 ? std::to_string(config.nodes / 1000) + "k_nodes"
                                                            : std::to_string(config.nodes) + "_nodes";
  inputs.push_back({"ladder_" + ladder_label, nrt::bench::make_torch_json_ladder(config.nodes), config.nodes});
  const auto conformance = conformance_inputs();
  inputs.insert(inputs.end(), conformance.begin(), conformance.end());

  // Both sides must read the same program, or the comparison means nothing.
  for (Input& input : inputs) {
    auto imported = nrt::torch_export::import_torch_json(input.text);
    if (!imported) {
      std::fprintf(stderr, "%s does not import: %s\n", input.label.c_str(), imported.error().to_string().c_str());
      return 1;
    }
    const nlohmann::json json = nlohmann::json::parse(input.text, nullptr, false);
    const size_t json_nodes = json.is_discarded() ? 0 : json["graph_module"]["graph"]["nodes"].size();
    const size_t nrt_nodes = imported->program.program.graphs[0]->nodes.size();
    if (json_nodes != nrt_nodes || (input.nodes != 0 && nrt_nodes != input.nodes)) {
      std::fprintf(stderr, "%s: node counts differ (JSON %zu, nrt %zu)\n", input.label.c_str(), json_nodes, nrt_nodes);
      return 1;
    }
    input.nodes = nrt_nodes;
  }

  register_benchmarks(config, inputs);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  if (conformance.empty()) std::printf("no conformance directory found: only the synthetic program was measured\n");
  bool all_ok = true;
  for (const Input& input : inputs) {
    const auto import = time_per_run(config.repetitions, import_seconds, input.text);
    const auto parse = time_per_run(config.repetitions, parse_seconds, input.text);
    if (!import || !parse) return 1;
    const double mb = static_cast<double>(input.text.size()) / 1e6;
    std::printf("%-36s %8.2f MB %6zu nodes: nrt import %8.1f MB/s (%8.3f ms), nlohmann parse alone %7.1f MB/s "
                "(%8.3f ms), ratio %5.2f x (target >= 3x)\n",
                input.label.c_str(), mb, input.nodes, mb / *import, *import * 1e3, mb / *parse, *parse * 1e3,
                *parse / *import);
    // One target per input, the one each line above states (ratio >= 3x).
    nrt::bench::report_target("import_bench/nlohmann_parse_over_import_" + input.label, *parse / *import,
                              nrt::bench::Goal::kAtLeast, 3.0);
    all_ok &= *parse / *import > 0;
  }
  return all_ok ? 0 : 1;
}
