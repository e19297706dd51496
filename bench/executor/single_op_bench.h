// What the single-op benchmarks (linear_bench, matmul_bench, conv_bench) share: their float32
// inputs (a fixed pattern in [-scale, scale]), one thread on both
// sides, so the libraries are compared and not their threading (OpenBLAS's threads and oneDNN's
// OpenMP threads wait busily between calls: alternating both on every core made each 10-100x
// slower), and the program loaded as the benchmarks time it (outputs not copied, freed memory
// not poisoned). Prints the error under the benchmark's name and returns null on failure.
#pragma once

#include <cblas.h>

#include <cstdio>
#include <memory>
#include <utility>
#include <vector>

#include "executor/runtime/executor.h"
#include "executor/runtime/intra_op_threads.h"
#include "serializer/open_program.h"

namespace nrt::bench {

inline nrt::exec::Tensor filled(std::vector<int64_t> sizes, float scale) {
  nrt::exec::Tensor t = nrt::exec::Tensor::empty(nrt::ScalarType::FLOAT32, std::move(sizes));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = scale * static_cast<float>((i * 37 + 11) % 201 - 100) / 100.0f;
  return t;
}

inline void one_thread_on_both_sides() {
  nrt::exec::set_intra_op_threads(1);
  openblas_set_num_threads(1);
}

inline std::unique_ptr<nrt::exec::Executor> load_single_op(nrt::ProgramWithWeights program, const char* bench) {
  auto file = nrt::verify_in_memory(std::move(program));
  if (!file) {
    std::fprintf(stderr, "%s: %s\n", bench, file.error().to_string().c_str());
    return nullptr;
  }
  nrt::exec::ExecutorOptions options;
  options.copy_outputs = false;
  options.poison_freed = false;
  auto executor = nrt::exec::Executor::load(std::move(*file), options);
  if (!executor) {
    std::fprintf(stderr, "%s: %s\n", bench, executor.error().to_string().c_str());
    return nullptr;
  }
  return std::move(*executor);
}

}  // namespace nrt::bench
