// Convolution through the executor (issue 30): one `aten::conv2d.default` node, f32, resnet's
// 3x3 convolution 64 -> 64 channels at 56x56, stride 1, padding 1, with bias, run with
// Executor::run (Winograd's F(2x2, 3x3) on these NCHW tensors, winograd_convolution.h), against
// oneDNN's direct convolution on the same data (what the executor ran before it) and against
// im2col into a [C*9, H*W] matrix with OpenBLAS's cblas_sgemm, bias added after (what it ran
// before oneDNN). Same data, same run, alternating, medians:
//   ratio = oneDNN time / executor time             target >= 1.2
//   ratio = im2col + sgemm time / executor time     target >= 1.0
// and GFLOP/s counted as the direct sum's (2 * C * K * 9 per output), as a share of the core's peak
// (bench/cpu_peak.h): Winograd's exceed the peak's share of the products it runs.
// Usage: conv_bench [--smoke]   (--smoke or NRT_BENCH_SMOKE=1: 3 repetitions of the same shape.
// A smaller smoke, 32 channels at 28x28, timed one 0.2 ms call at a time, read 0.9-1.35x of
// oneDNN's speed where a loop of such calls reads 1.38x.)
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/bench_target.h"
#include "bench/bench_timing.h"
#include "bench/executor/single_op_bench.h"
#include "bench/cpu_peak.h"
#include "executor/kernels/cpu/onednn_convolution.h"
#include "executor/runtime/executor.h"
#include "serializer/open_program.h"
#include "testdata/program_builder.h"

namespace {

using nrt::ScalarType;
using nrt::exec::Tensor;
namespace arg = nrt::testdata::arg;
using Args = std::vector<std::pair<std::string, nrt::fb::ArgumentUnion>>;

nrt::ProgramWithWeights conv_program(int64_t channels, int64_t side) {
  nrt::testdata::ProgramBuilder p("conv_bench: 3x3 conv2d");
  const uint32_t conv = p.op("aten::conv2d", "default");
  auto g = p.graph("main", true);
  const uint32_t x = g.tensor("x", ScalarType::FLOAT32, {1, channels, side, side});
  const uint32_t w = g.tensor("w", ScalarType::FLOAT32, {channels, channels, 3, 3});
  const uint32_t b = g.tensor("b", ScalarType::FLOAT32, {channels});
  const uint32_t y = g.tensor("y", ScalarType::FLOAT32, {1, channels, side, side});
  g.user_input(arg::tensor(x));
  g.user_input(arg::tensor(w));
  g.user_input(arg::tensor(b));
  g.node("conv", conv,
         Args{{"input", arg::tensor(x)}, {"weight", arg::tensor(w)}, {"bias", arg::tensor(b)},
              {"stride", arg::integers({1, 1})}, {"padding", arg::integers({1, 1})}},
         {}, {arg::tensor(y)});
  g.user_output(arg::tensor(y));
  return p.finish();
}

// The baseline: 3x3, stride 1, padding 1, one image.
void im2col_sgemm(const float* x, const float* w, const float* b, int channels, int side, float* columns, float* y) {
  const int positions = side * side;
  for (int c = 0; c < channels; ++c) {
    for (int ky = 0; ky < 3; ++ky) {
      for (int kx = 0; kx < 3; ++kx) {
        float* row = columns + ((c * 3 + ky) * 3 + kx) * positions;
        for (int oy = 0; oy < side; ++oy) {
          const int iy = oy + ky - 1;
          for (int ox = 0; ox < side; ++ox) {
            const int ix = ox + kx - 1;
            row[oy * side + ox] = iy >= 0 && iy < side && ix >= 0 && ix < side ? x[(c * side + iy) * side + ix] : 0.0f;
          }
        }
      }
    }
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, channels, positions, channels * 9, 1.0f, w, channels * 9,
              columns, positions, 0.0f, y, positions);
  for (int oc = 0; oc < channels; ++oc) {
    for (int i = 0; i < positions; ++i) y[oc * positions + i] += b[oc];
  }
}

}  // namespace

int main(int argc, char** argv) {
  nrt::bench::one_thread_on_both_sides();
  const bool smoke = nrt::bench::smoke_requested(argc, argv);
  const int64_t channels = 64, side = 56;
  const int repetitions = smoke ? 3 : 15;

  auto executor = nrt::bench::load_single_op(conv_program(channels, side), "conv_bench");
  if (!executor) return 1;
  const Tensor x = nrt::bench::filled({1, channels, side, side}, 1.0f), w = nrt::bench::filled({channels, channels, 3, 3}, 0.1f);
  const Tensor b = nrt::bench::filled({channels}, 0.5f);
  const nrt::exec::NamedInputs inputs = {{"x", x}, {"w", w}, {"b", b}};
  std::vector<float> columns(static_cast<size_t>(channels * 9 * side * side));
  std::vector<float> baseline(static_cast<size_t>(channels * side * side));

  bool ok = true;
  Tensor result;
  auto through_executor = [&] {
    auto out = executor->run(inputs);
    ok &= out.ok();
    if (out.ok()) result = std::get<Tensor>((*out)[0].value);
  };
  std::vector<float> direct(baseline.size());
  nrt::exec::cpu::OneDnnConvolution shape{1, channels, channels, 1, {1, side, side}, {1, 3, 3}, {1, side, side},
                                          {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}, {}};
  auto through_onednn = [&] {
    ok &= nrt::exec::cpu::onednn_convolution_forward(shape, x.data<float>(), w.data<float>(), b.data<float>(),
                                                     direct.data()) == nrt::exec::cpu::OneDnnOutcome::kDone;
  };
  auto before = [&] {
    im2col_sgemm(x.data<float>(), w.data<float>(), b.data<float>(), static_cast<int>(channels), static_cast<int>(side),
                 columns.data(), baseline.data());
  };
  through_executor();  // warm up all three (primitive cache, thread pools, pages)
  through_onednn();
  before();
  if (!ok) {
    std::fprintf(stderr, "conv_bench: the executor run failed\n");
    return 1;
  }
  double max_diff = 0;
  for (size_t i = 0; i < baseline.size(); ++i) {
    max_diff = std::max(max_diff, static_cast<double>(std::fabs(result.data<float>()[i] - baseline[i])));
    max_diff = std::max(max_diff, static_cast<double>(std::fabs(direct[i] - baseline[i])));
  }
  std::vector<double> exec_times, onednn_times, before_times;
  for (int r = 0; r < repetitions; ++r) {
    exec_times.push_back(nrt::bench::median_seconds(1, through_executor));
    onednn_times.push_back(nrt::bench::median_seconds(1, through_onednn));
    before_times.push_back(nrt::bench::median_seconds(1, before));
  }
  const double exec_s = nrt::bench::median(exec_times), before_s = nrt::bench::median(before_times);
  const double onednn_s = nrt::bench::median(onednn_times);
  const double flops = 2.0 * static_cast<double>(channels * channels * 9 * side * side);
  const nrt::bench::CpuPeak peak = nrt::bench::float32_core_peak();
  std::printf("conv2d f32 3x3 %lld -> %lld at %lldx%lld, median of %d (max |executor or oneDNN - im2col+sgemm| = %.3g)\n",
              static_cast<long long>(channels), static_cast<long long>(channels), static_cast<long long>(side),
              static_cast<long long>(side), repetitions, max_diff);
  std::printf("  executor (Winograd):  %8.3f ms  (%6.1f GFLOP/s of the direct sum)\n", exec_s * 1e3, flops / exec_s / 1e9);
  std::printf("  oneDNN direct:        %8.3f ms  (%6.1f GFLOP/s)\n", onednn_s * 1e3, flops / onednn_s / 1e9);
  std::printf("  im2col + cblas_sgemm: %8.3f ms  (%6.1f GFLOP/s)\n", before_s * 1e3, flops / before_s / 1e9);
  std::printf("  core peak: %s\n", peak.derivation.c_str());
  if (peak.gflops > 0) {
    std::printf("  of peak: executor %.2f (the direct sum's FLOPs), oneDNN %.2f\n", flops / exec_s / 1e9 / peak.gflops,
                flops / onednn_s / 1e9 / peak.gflops);
  }
  std::printf("conv ratio (oneDNN time / executor time): %.3f  (target >= 1.2)\n", onednn_s / exec_s);
  std::printf("conv ratio (im2col + sgemm time / executor time): %.3f  (target >= 1.0)\n", before_s / exec_s);
  nrt::bench::report_target("conv_bench/onednn_over_executor", onednn_s / exec_s, nrt::bench::Goal::kAtLeast, 1.2);
  nrt::bench::report_target("conv_bench/im2col_sgemm_over_executor", before_s / exec_s, nrt::bench::Goal::kAtLeast, 1.0);
  return ok && max_diff < 1e-2 ? 0 : 1;
}
