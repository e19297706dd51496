// The CUDA backend against the limits and libraries of its device, each measured in the same run:
//   - element-wise: f32 add over 256M elements through nrt's kernel, as bandwidth (3 tensors
//     moved) against the 4.3 TB/s an H200 moves and against a device-to-device copy timed here;
//   - matrix products: bf16 8192^3 and f32 4096^3 through nrt's aten::mm kernel against the same
//     product through cuBLASLt called directly (target >= 0.95);
//   - attention: scaled_dot_product_attention's time at [4, 16, 1024, 64] bf16 (gpu_check.sh
//     times torch's at the same shape);
//   - copies from the host: 1 GiB through the allocator's pinned staging against one cudaMemcpy;
//   - launch overhead per node: a chain of 1000 tiny adds through the executor on cuda:0, against
//     the same launches made directly, and against those launches replayed as one CUDA graph
//     (what nrt-run --cuda-graph would approach; it is not built yet: docs/CUDA.md).
// --smoke shrinks every size. Without a CUDA device it says so and exits 0 (tagged gpu: CI does
// not run it; scripts/gpu_check.sh does).
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/bench_target.h"
#include "bench/bench_timing.h"
#include "executor/cuda/cuda_context.h"
#include "executor/kernels/cuda/elementwise_launch.h"
#include "executor/runtime/allocator.h"
#include "executor/runtime/executor.h"
#include "executor/runtime/kernel.h"
#include "serializer/open_program.h"
#include "testdata/program_builder.h"

namespace {

using nrt::ScalarType;
using nrt::exec::Device;
using nrt::exec::DeviceKind;
using nrt::exec::KernelContext;
using nrt::exec::NamedValue;
using nrt::exec::RuntimeValue;
using nrt::exec::Tensor;
namespace arg = nrt::testdata::arg;
using Args = std::vector<std::pair<std::string, nrt::fb::ArgumentUnion>>;

const Device kCuda{DeviceKind::kCuda, 0};

// Median milliseconds of `reps` runs of f, timed with CUDA events on `stream` after one warm-up.
template <typename F>
double device_ms(cudaStream_t stream, int reps, F&& f) {
  f();
  cudaStreamSynchronize(stream);
  std::vector<double> times;
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  for (int r = 0; r < reps; ++r) {
    cudaEventRecord(start, stream);
    f();
    cudaEventRecord(stop, stream);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    times.push_back(ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Calls the registered CUDA kernel of `target` with `args`, writing into `outputs`.
bool call(const std::string& target, const std::vector<std::pair<std::string, RuntimeValue>>& args,
          std::vector<RuntimeValue>& outputs, nrt::exec::cuda::CudaContext* context) {
  const auto* kernel = nrt::exec::KernelRegistry::global().find(target, DeviceKind::kCuda);
  if (kernel == nullptr) return false;
  std::vector<NamedValue> inputs;
  for (const auto& [name, value] : args) inputs.push_back({name, &value});
  KernelContext ctx(target, inputs, outputs, kCuda);
  ctx.set_device_context(context);
  auto s = kernel->fn(ctx);
  if (!s) std::fprintf(stderr, "cuda_bench: %s\n", s.error().to_string().c_str());
  return s.ok();
}

// 1 GiB of pageable host memory to the device: one cudaMemcpy, against the allocator's copy (the
// weights' path at load: two pinned staging buffers in turn).
void host_to_device(bool smoke) {
  const int64_t n = smoke ? (int64_t{64} << 20) : (int64_t{1} << 30);
  Tensor host = Tensor::empty(ScalarType::UINT8, {n});
  Tensor device = Tensor::empty(ScalarType::UINT8, {n}, kCuda);
  const int reps = smoke ? 2 : 5;
  const double direct_s = nrt::bench::median_seconds(reps, [&] {
    cudaMemcpy(device.raw_data(), host.raw_data(), static_cast<size_t>(n), cudaMemcpyHostToDevice);
  });
  bool ok = true;
  const double staged_s = nrt::bench::median_seconds(reps, [&] {
    ok &= nrt::exec::copy_storage_bytes(*device.storage(), 0, *host.storage(), 0, static_cast<size_t>(n)).ok();
  });
  const double gb = static_cast<double>(n) / 1e9;
  std::printf("host to device %lld MiB (pageable): cudaMemcpy %.1f GB/s, nrt's staged copy %.1f GB/s, ratio %.2f%s\n",
              static_cast<long long>(n >> 20), gb / direct_s, gb / staged_s, direct_s / staged_s, ok ? "" : " (FAILED)");
  nrt::bench::report_target("cuda_bench/staged_host_to_device_vs_cudamemcpy", direct_s / staged_s, nrt::bench::Goal::kAtLeast, 1.0);
}

void elementwise(nrt::exec::cuda::CudaContext* c, bool smoke) {
  const int64_t n = smoke ? (int64_t{1} << 24) : (int64_t{1} << 28);
  Tensor a = Tensor::empty(ScalarType::FLOAT32, {n}, kCuda), b = Tensor::empty(ScalarType::FLOAT32, {n}, kCuda);
  std::vector<RuntimeValue> out{Tensor::empty(ScalarType::FLOAT32, {n}, kCuda)};
  const std::vector<std::pair<std::string, RuntimeValue>> args{{"self", a}, {"other", b}};
  bool ok = true;
  const double add_ms = device_ms(c->stream, smoke ? 3 : 10, [&] { ok &= call("aten::add.Tensor", args, out, c); });
  const double copy_ms = device_ms(c->stream, smoke ? 3 : 10, [&] {
    cudaMemcpyAsync(std::get<Tensor>(out[0]).raw_data(), a.raw_data(), a.nbytes(), cudaMemcpyDeviceToDevice, c->stream);
  });
  const double add_gbs = 3.0 * static_cast<double>(a.nbytes()) / (add_ms * 1e-3) / 1e9;
  const double copy_gbs = 2.0 * static_cast<double>(a.nbytes()) / (copy_ms * 1e-3) / 1e9;
  std::printf("elementwise add f32[%lld]: %.3f ms, %.0f GB/s = %.2f of 4300 GB/s; device copy %.0f GB/s; ratio %.3f%s\n",
              static_cast<long long>(n), add_ms, add_gbs, add_gbs / 4300.0, copy_gbs, add_gbs / copy_gbs, ok ? "" : " (FAILED)");
  nrt::bench::report_target("cuda_bench/elementwise_add_vs_device_copy", add_gbs / copy_gbs, nrt::bench::Goal::kAtLeast, 0.85);
}

// The same product through cuBLASLt directly: row-major C = A B as column-major C^T = B^T A^T.
double direct_lt_ms(nrt::exec::cuda::CudaContext* c, ScalarType dtype, const Tensor& a, const Tensor& b, Tensor& out,
                    int64_t m, int64_t n, int64_t k, int reps) {
  const cudaDataType_t type = dtype == ScalarType::BFLOAT16 ? CUDA_R_16BF : CUDA_R_32F;
  const nrt::exec::cuda::CublasLt& lt = *c->lt;
  cublasLtMatmulDesc_t desc;
  lt.matmul_desc_create(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  cublasLtMatrixLayout_t la, lb, lc;
  lt.matrix_layout_create(&la, type, n, k, n);
  lt.matrix_layout_create(&lb, type, k, m, k);
  lt.matrix_layout_create(&lc, type, n, m, n);
  cublasLtMatmulPreference_t pref;
  lt.matmul_preference_create(&pref);
  const uint64_t ws = c->blas_workspace_bytes;
  lt.matmul_preference_set_attribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
  cublasLtMatmulHeuristicResult_t h{};
  int found = 0;
  lt.matmul_algo_get_heuristic(c->blas, desc, la, lb, lc, lc, pref, 1, &h, &found);
  const float alpha = 1, beta = 0;
  const double ms = found == 0 ? -1 : device_ms(c->stream, reps, [&] {
    lt.matmul(c->blas, desc, &alpha, b.raw_data(), la, a.raw_data(), lb, &beta, out.raw_data(), lc, out.raw_data(), lc,
              &h.algo, c->blas_workspace, c->blas_workspace_bytes, c->stream);
  });
  lt.matmul_preference_destroy(pref);
  lt.matrix_layout_destroy(la);
  lt.matrix_layout_destroy(lb);
  lt.matrix_layout_destroy(lc);
  lt.matmul_desc_destroy(desc);
  return ms;
}

void matmul(nrt::exec::cuda::CudaContext* c, ScalarType dtype, int64_t size, bool smoke) {
  const int64_t m = size, n = size, k = size;
  Tensor a = Tensor::empty(dtype, {m, k}, kCuda), b = Tensor::empty(dtype, {k, n}, kCuda);
  std::vector<RuntimeValue> out{Tensor::empty(dtype, {m, n}, kCuda)};
  const std::vector<std::pair<std::string, RuntimeValue>> args{{"self", a}, {"mat2", b}};
  bool ok = true;
  const int reps = smoke ? 3 : 10;
  const double nrt_ms = device_ms(c->stream, reps, [&] { ok &= call("aten::mm.default", args, out, c); });
  Tensor direct_out = Tensor::empty(dtype, {m, n}, kCuda);
  const double lt_ms = direct_lt_ms(c, dtype, a, b, direct_out, m, n, k, reps);
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  std::printf("mm %s %lld^3: nrt %.3f ms (%.1f TFLOP/s), cuBLASLt direct %.3f ms (%.1f TFLOP/s), ratio %.3f%s\n",
              std::string(nrt::short_name(dtype)).c_str(), static_cast<long long>(size), nrt_ms, flops / (nrt_ms * 1e-3) / 1e12,
              lt_ms, flops / (lt_ms * 1e-3) / 1e12, lt_ms / nrt_ms, ok ? "" : " (FAILED)");
  nrt::bench::report_target("cuda_bench/mm_" + std::string(nrt::short_name(dtype)) + "_vs_cublaslt", lt_ms / nrt_ms,
                            nrt::bench::Goal::kAtLeast, 0.95);
}

void attention(nrt::exec::cuda::CudaContext* c, bool smoke) {
  const int64_t B = 4, H = 16, L = smoke ? 256 : 1024, E = 64;
  Tensor q = Tensor::empty(ScalarType::BFLOAT16, {B, H, L, E}, kCuda);
  std::vector<RuntimeValue> out{Tensor::empty(ScalarType::BFLOAT16, {B, H, L, E}, kCuda)};
  const std::vector<std::pair<std::string, RuntimeValue>> args{{"query", q}, {"key", q}, {"value", q}};
  bool ok = true;
  const double ms = device_ms(c->stream, smoke ? 3 : 10, [&] {
    ok &= call("aten::scaled_dot_product_attention.default", args, out, c);
  });
  std::printf("sdpa bf16 [%lld, %lld, %lld, %lld] (math path): %.3f ms%s\n", static_cast<long long>(B),
              static_cast<long long>(H), static_cast<long long>(L), static_cast<long long>(E), ms, ok ? "" : " (FAILED)");
}

nrt::ProgramWithWeights add_chain(int nodes, int64_t elements) {
  nrt::testdata::ProgramBuilder p("cuda_bench: add chain");
  const uint32_t add = p.op("aten::add", "Tensor");
  p.weight("c", p.storage(nrt::testdata::pattern_f32(elements, 0.01f)),
           nrt::testdata::tensor_meta(ScalarType::FLOAT32, {elements}), true);
  auto g = p.graph("main", true);
  const uint32_t c = g.tensor("p_c", ScalarType::FLOAT32, {elements});
  const uint32_t x = g.tensor("x", ScalarType::FLOAT32, {elements});
  g.input(arg::tensor(c), nrt::fb::InputKind::PARAMETER, "c");
  g.user_input(arg::tensor(x));
  uint32_t prev = x;
  for (int i = 0; i < nodes; ++i) {
    const std::string name = "add_" + std::to_string(i);
    const uint32_t next = g.tensor(name, ScalarType::FLOAT32, {elements});
    g.node(name, add, Args{{"self", arg::tensor(prev)}, {"other", arg::tensor(c)}}, {}, {arg::tensor(next)});
    prev = next;
  }
  g.user_output(arg::tensor(prev));
  return p.finish();
}

void launch_overhead(nrt::exec::cuda::CudaContext* c, bool smoke) {
  const int nodes = smoke ? 100 : 1000;
  const int64_t elements = 256;
  auto file = nrt::verify_in_memory(add_chain(nodes, elements));
  if (!file) return (void)std::fprintf(stderr, "cuda_bench: %s\n", file.error().to_string().c_str());
  nrt::exec::ExecutorOptions options;
  options.device = kCuda;
  options.poison_freed = false;
  auto executor = nrt::exec::Executor::load(std::move(*file), options);
  if (!executor) return (void)std::fprintf(stderr, "cuda_bench: %s\n", executor.error().to_string().c_str());
  Tensor x = Tensor::empty(ScalarType::FLOAT32, {elements});
  const nrt::exec::NamedInputs inputs{{"x", x}};
  bool ok = true;
  const int reps = smoke ? 3 : 20;
  // Host wall time of a whole run (input copy, every node, output copy back).
  const double run_s = nrt::bench::median_seconds(reps, [&] { ok &= (*executor)->run(inputs).ok(); });
  // The same launches made directly: the generic kernel on two ping-pong buffers.
  Tensor bufs[2] = {Tensor::empty(ScalarType::FLOAT32, {elements}, kCuda), Tensor::empty(ScalarType::FLOAT32, {elements}, kCuda)};
  Tensor cw = Tensor::empty(ScalarType::FLOAT32, {elements}, kCuda);
  auto launch_all = [&] {
    for (int i = 0; i < nodes; ++i) {
      nrt::exec::cuda::ElementwiseLaunch l;
      l.numel = elements;
      l.contiguous = true;
      l.out = bufs[(i + 1) % 2].raw_data();
      l.in[0] = bufs[i % 2].raw_data();
      l.in[1] = cw.raw_data();
      l.in_dtype = l.out_dtype = ScalarType::FLOAT32;
      ok &= nrt::exec::cuda::launch_binary(nrt::exec::cuda::BinaryOp::kAdd, l, c->stream) == cudaSuccess;
    }
  };
  const double direct_s = nrt::bench::median_seconds(reps, [&] {
    launch_all();
    cudaStreamSynchronize(c->stream);
  });
  // The same launches captured once and replayed as a graph.
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t instance = nullptr;
  cudaStreamBeginCapture(c->stream, cudaStreamCaptureModeThreadLocal);
  launch_all();
  cudaStreamEndCapture(c->stream, &graph);
  const bool graphed = graph != nullptr && cudaGraphInstantiate(&instance, graph, 0) == cudaSuccess;
  const double graph_s = !graphed ? -1 : nrt::bench::median_seconds(reps, [&] {
    cudaGraphLaunch(instance, c->stream);
    cudaStreamSynchronize(c->stream);
  });
  if (instance) cudaGraphExecDestroy(instance);
  if (graph) cudaGraphDestroy(graph);
  std::printf("launch overhead, chain of %d adds on f32[%lld]: executor %.2f us/node, direct launches %.2f us/node, "
              "one CUDA graph %.2f us/node%s\n",
              nodes, static_cast<long long>(elements), run_s * 1e6 / nodes, direct_s * 1e6 / nodes, graph_s * 1e6 / nodes,
              ok ? "" : " (FAILED)");
  nrt::bench::report_target("cuda_bench/executor_vs_direct_launch_per_node", run_s / direct_s, nrt::bench::Goal::kAtMost, 2.0);
}

}  // namespace

int main(int argc, char** argv) {
  const bool smoke = nrt::bench::smoke_requested(argc, argv);
  auto context = nrt::exec::cuda::cuda_context(0);
  if (!context) {
    std::printf("cuda_bench: skipped, no CUDA device: %s\n", context.error().to_string().c_str());
    return 0;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  std::printf("cuda_bench on %s (%d SMs)%s\n", prop.name, prop.multiProcessorCount, smoke ? ", smoke sizes" : "");
  host_to_device(smoke);
  elementwise(*context, smoke);
  matmul(*context, ScalarType::BFLOAT16, smoke ? 2048 : 8192, smoke);
  matmul(*context, ScalarType::FLOAT32, smoke ? 1024 : 4096, smoke);
  attention(*context, smoke);
  launch_overhead(*context, smoke);
  return 0;
}
