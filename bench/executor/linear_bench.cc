// Batch-1 linear at the memory's speed (issue 30): one `aten::linear.default` node, f32
// x[1, K] @ W[N, K]^T + b, reads every weight once, so its limit is the memory bandwidth. Measured
// in the same run, alternating, median of the repetitions:
//   executor:  the node through Executor::run, as GB/s of weights streamed (N * K * 4 bytes / time)
//   memcpy:    a memcpy of the same bytes, as GB/s copied
//   sgemm M=1: OpenBLAS's sgemm with one row, what the executor called before it took gemv
//   ratio = executor GB/s / memcpy GB/s     target >= 0.8
// Usage: linear_bench [--smoke]   (--smoke or NRT_BENCH_SMOKE=1: 1024 -> 1024, 3 repetitions;
// otherwise alexnet's 9216 -> 4096 layer, 151 MB of weights)
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_target.h"
#include "bench/bench_timing.h"
#include "bench/executor/single_op_bench.h"
#include "executor/runtime/executor.h"
#include "serializer/open_program.h"
#include "testdata/program_builder.h"

namespace {

using nrt::ScalarType;
using nrt::exec::Tensor;
namespace arg = nrt::testdata::arg;
using Args = std::vector<std::pair<std::string, nrt::fb::ArgumentUnion>>;

nrt::ProgramWithWeights linear_program(int64_t in, int64_t out) {
  nrt::testdata::ProgramBuilder p("linear_bench: batch-1 linear");
  const uint32_t linear = p.op("aten::linear", "default");
  auto g = p.graph("main", true);
  const uint32_t x = g.tensor("x", ScalarType::FLOAT32, {1, in});
  const uint32_t w = g.tensor("w", ScalarType::FLOAT32, {out, in});
  const uint32_t b = g.tensor("b", ScalarType::FLOAT32, {out});
  const uint32_t y = g.tensor("y", ScalarType::FLOAT32, {1, out});
  g.user_input(arg::tensor(x));
  g.user_input(arg::tensor(w));
  g.user_input(arg::tensor(b));
  g.node("linear", linear, Args{{"input", arg::tensor(x)}, {"weight", arg::tensor(w)}, {"bias", arg::tensor(b)}}, {},
         {arg::tensor(y)});
  g.user_output(arg::tensor(y));
  return p.finish();
}

}  // namespace

int main(int argc, char** argv) {
  nrt::bench::one_thread_on_both_sides();
  const bool smoke = nrt::bench::smoke_requested(argc, argv);
  const int64_t in = smoke ? 1024 : 9216, out = smoke ? 1024 : 4096;
  const int repetitions = smoke ? 3 : 15;

  auto executor = nrt::bench::load_single_op(linear_program(in, out), "linear_bench");
  if (!executor) return 1;
  const Tensor x = nrt::bench::filled({1, in}, 1.0f), w = nrt::bench::filled({out, in}, 0.01f), b = nrt::bench::filled({out}, 0.5f);
  const nrt::exec::NamedInputs inputs = {{"x", x}, {"w", w}, {"b", b}};
  Tensor copy = Tensor::empty(ScalarType::FLOAT32, {out, in});
  Tensor row = Tensor::empty(ScalarType::FLOAT32, {1, out});
  const size_t bytes = static_cast<size_t>(w.nbytes());

  bool ok = true;
  Tensor result;
  auto through_executor = [&] {
    auto y = executor->run(inputs);
    ok &= y.ok();
    if (y.ok()) result = std::get<Tensor>((*y)[0].value);
  };
  auto copy_weights = [&] { std::memcpy(copy.raw_data(), w.raw_data(), bytes); };
  auto sgemm_one_row = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, 1, static_cast<int>(out), static_cast<int>(in), 1.0f,
                x.data<float>(), static_cast<int>(in), w.data<float>(), static_cast<int>(in), 0.0f, row.data<float>(),
                static_cast<int>(out));
  };
  through_executor();  // warm up (pages of the copy, BLAS buffers)
  copy_weights();
  sgemm_one_row();
  if (!ok) {
    std::fprintf(stderr, "linear_bench: the executor run failed\n");
    return 1;
  }
  double max_diff = 0;  // the executor against sgemm plus the bias
  for (int64_t j = 0; j < out; ++j) {
    max_diff = std::max(max_diff, std::fabs(static_cast<double>(result.data<float>()[j]) -
                                            (row.data<float>()[j] + b.data<float>()[j])));
  }
  std::vector<double> exec_times, copy_times, sgemm_times;
  for (int r = 0; r < repetitions; ++r) {
    exec_times.push_back(nrt::bench::median_seconds(1, through_executor));
    copy_times.push_back(nrt::bench::median_seconds(1, copy_weights));
    sgemm_times.push_back(nrt::bench::median_seconds(1, sgemm_one_row));
  }
  const double exec_s = nrt::bench::median(exec_times), copy_s = nrt::bench::median(copy_times),
               sgemm_s = nrt::bench::median(sgemm_times);
  const double gb = static_cast<double>(bytes) / 1e9;
  std::printf("linear f32 [1, %lld] x [%lld, %lld]^T, %.1f MB of weights, median of %d (max |executor - sgemm| = %.3g)\n",
              static_cast<long long>(in), static_cast<long long>(out), static_cast<long long>(in), gb * 1e3, repetitions,
              max_diff);
  std::printf("  executor:    %8.3f ms  (%6.2f GB/s of weights)\n", exec_s * 1e3, gb / exec_s);
  std::printf("  memcpy:      %8.3f ms  (%6.2f GB/s copied)\n", copy_s * 1e3, gb / copy_s);
  std::printf("  sgemm M=1:   %8.3f ms  (%6.2f GB/s; what a batch-1 linear cost through gemm)\n", sgemm_s * 1e3, gb / sgemm_s);
  const double ratio = copy_s / exec_s;
  std::printf("linear ratio (executor GB/s / memcpy GB/s): %.3f  (target >= 0.8)\n", ratio);
  nrt::bench::report_target("linear_bench/weights_streamed_over_memcpy", ratio, nrt::bench::Goal::kAtLeast, 0.8);
  return ok && max_diff < 1e-2 ? 0 : 1;
}
