// Matmul through the executor (issue 5): one `aten::mm.default` node, f32 1024 x 1024 x 1024,
// run with Executor::run, against OpenBLAS's cblas_sgemm called directly on the same data.
// Both measured in the same run, alternating, median of the repetitions:
//   ratio = direct sgemm time / executor time     target >= 0.9
// It also prints the executor's GFLOP/s as a share of the core's peak (bench/cpu_peak.h).
// Usage: matmul_bench [--smoke]   (--smoke or NRT_BENCH_SMOKE=1: 256^3, 3 repetitions)
#include <cblas.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/bench_target.h"
#include "bench/bench_timing.h"
#include "bench/executor/single_op_bench.h"
#include "bench/cpu_peak.h"
#include "serializer/open_program.h"
#include "executor/runtime/executor.h"
#include "testdata/program_builder.h"

namespace {

using nrt::ScalarType;
using nrt::exec::Tensor;
namespace arg = nrt::testdata::arg;
using Args = std::vector<std::pair<std::string, nrt::fb::ArgumentUnion>>;

nrt::ProgramWithWeights mm_program(int64_t n) {
  nrt::testdata::ProgramBuilder p("matmul_bench: mm");
  const uint32_t mm = p.op("aten::mm", "default");
  auto g = p.graph("main", true);
  const uint32_t a = g.tensor("a", ScalarType::FLOAT32, {n, n});
  const uint32_t b = g.tensor("b", ScalarType::FLOAT32, {n, n});
  const uint32_t c = g.tensor("c", ScalarType::FLOAT32, {n, n});
  g.user_input(arg::tensor(a));
  g.user_input(arg::tensor(b));
  g.node("mm", mm, Args{{"self", arg::tensor(a)}, {"mat2", arg::tensor(b)}}, {}, {arg::tensor(c)});
  g.user_output(arg::tensor(c));
  return p.finish();
}

}  // namespace

int main(int argc, char** argv) {
  nrt::bench::one_thread_on_both_sides();
  const bool smoke = nrt::bench::smoke_requested(argc, argv);
  const int64_t n = smoke ? 256 : 1024;
  const int repetitions = smoke ? 3 : 15;

  auto executor = nrt::bench::load_single_op(mm_program(n), "matmul_bench");
  if (!executor) return 1;
  const Tensor a = nrt::bench::filled({n, n}, 1.0f), b = nrt::bench::filled({n, n}, 0.5f);
  const nrt::exec::NamedInputs inputs = {{"a", a}, {"b", b}};
  Tensor c = Tensor::empty(ScalarType::FLOAT32, {n, n});

  bool ok = true;
  Tensor result;
  auto through_executor = [&] {
    auto out = executor->run(inputs);
    ok &= out.ok();
    if (out.ok()) result = std::get<Tensor>((*out)[0].value);
  };
  const int dim = static_cast<int>(n);
  auto direct = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, dim, dim, dim, 1.0f, a.data<float>(), dim, b.data<float>(),
                dim, 0.0f, c.data<float>(), dim);
  };
  through_executor();  // warm up both (thread pool, pages)
  direct();
  if (!ok) {
    std::fprintf(stderr, "matmul_bench: the executor run failed\n");
    return 1;
  }
  double max_diff = 0;
  for (int64_t i = 0; i < n * n; ++i) {
    max_diff = std::max(max_diff, static_cast<double>(std::fabs(result.data<float>()[i] - c.data<float>()[i])));
  }
  std::vector<double> exec_times, direct_times;
  for (int r = 0; r < repetitions; ++r) {
    exec_times.push_back(nrt::bench::median_seconds(1, through_executor));
    direct_times.push_back(nrt::bench::median_seconds(1, direct));
  }
  const double exec_s = nrt::bench::median(exec_times);
  const double direct_s = nrt::bench::median(direct_times);
  const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  std::printf("mm f32 %lld^3, median of %d (max |executor - sgemm| = %.3g)\n", static_cast<long long>(n), repetitions,
              max_diff);
  std::printf("  executor:     %8.3f ms  (%6.1f GFLOP/s)\n", exec_s * 1e3, flops / exec_s / 1e9);
  std::printf("  cblas_sgemm:  %8.3f ms  (%6.1f GFLOP/s)\n", direct_s * 1e3, flops / direct_s / 1e9);
  const nrt::bench::CpuPeak peak = nrt::bench::float32_core_peak();
  std::printf("  core peak:    %s\n", peak.derivation.c_str());
  if (peak.gflops > 0) std::printf("  executor of peak: %.2f\n", flops / exec_s / 1e9 / peak.gflops);
  std::printf("matmul ratio (sgemm time / executor time): %.3f  (target >= 0.9)\n", direct_s / exec_s);
  nrt::bench::report_target("matmul_bench/sgemm_over_executor", direct_s / exec_s, nrt::bench::Goal::kAtLeast, 0.9);
  return ok ? 0 : 1;
}
