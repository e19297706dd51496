// How the layout of linear's weights and the pages after them change oneDNN's gemm-based matmul
// (what it runs on CPUs without AVX-512), one thread, in one process (bench/libraries/compare.sh
// builds and runs it, by hand). y [m, n] = x [m, k] * w^T, in microseconds, for:
//
//   program   w [n, k] as a program holds it (w^T column-major), nothing kept
//   plain     w^T [k, n] row-major: the layout oneDNN chooses for `any` on these CPUs
//   padded    w^T [k, n] with rows n + 16 floats apart: what onednn_linear.cc keeps
//   bare      padded, but the 64 KiB after the weights reserved and never touched
//
// Every buffer but the bare one has 64 KiB of present pages after it; onednn_linear.cc says why
// both choices matter.
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

namespace {

using dnnl::memory;
constexpr size_t kTrailing = size_t{64} << 10;

double median_microseconds(const std::function<void()>& f, int calls, int rounds) {
  for (int i = 0; i < 3; ++i) f();
  std::vector<double> t;
  for (int r = 0; r < rounds; ++r) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) f();
    t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / calls);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// A mapping of `floats` floats and kTrailing bytes after them, of which only the floats are
// written (present) unless `touch_trailing`.
float* mapped(size_t floats, float value, bool touch_trailing) {
  const size_t bytes = floats * sizeof(float) + kTrailing;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    std::perror("mmap");
    std::exit(1);
  }
  auto* f = static_cast<float*>(p);
  std::fill(f, f + floats, value);
  if (touch_trailing) std::memset(f + floats, 0, kTrailing);
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  const bool smoke = argc > 1 && std::string(argv[1]) == "--smoke";
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const auto f32 = memory::data_type::f32;
  struct Shape {
    int64_t m, n, k;
  };
  // The products of the model benchmark's transformers (docs/PERFORMANCE.md).
  const std::vector<Shape> shapes = smoke ? std::vector<Shape>{{64, 256, 128}}
                                          : std::vector<Shape>{{128, 1024, 1024}, {128, 2816, 1024}, {128, 1024, 2816},
                                                               {128, 3072, 768},  {128, 768, 3072},  {128, 768, 768},
                                                               {32, 1000, 128},   {32, 352, 128},    {32, 128, 128},
                                                               {64, 256, 128},    {64, 128, 256},    {64, 128, 128}};
  std::printf("%-16s %10s %10s %10s %10s %9s %9s\n", "m x n x k, us", "program", "plain", "padded", "bare",
              "plain/pad", "bare/pad");
  for (const Shape& s : shapes) {
    const memory::desc x_desc({s.m, s.k}, f32, memory::format_tag::ab), y_desc({s.m, s.n}, f32, memory::format_tag::ab);
    const memory::desc layouts[] = {memory::desc({s.k, s.n}, f32, memory::format_tag::ba),
                                    memory::desc({s.k, s.n}, f32, memory::format_tag::ab),
                                    memory::desc({s.k, s.n}, f32, memory::dims{s.n + 16, 1}),
                                    memory::desc({s.k, s.n}, f32, memory::dims{s.n + 16, 1})};
    float* x = mapped(size_t(s.m * s.k), 0.5f, true);
    float* y = mapped(size_t(s.m * s.n), 0.0f, true);
    const int calls = std::max<int>(smoke ? 1 : 3, int(40'000'000 / (s.m * s.n * s.k)));
    double us[4];
    for (int i = 0; i < 4; ++i) {
      float* w = mapped(size_t(s.k * (s.n + 16)), 0.25f, i != 3);
      const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(x_desc, layouts[i], y_desc), engine);
      const dnnl::matmul product(pd);
      memory xm(x_desc, engine, x), wm(layouts[i], engine, w), ym(y_desc, engine, y);
      us[i] = median_microseconds(
          [&] { product.execute(stream, {{DNNL_ARG_SRC, xm}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_DST, ym}}); }, calls,
          smoke ? 1 : 5);
      munmap(w, size_t(s.k * (s.n + 16)) * sizeof(float) + kTrailing);
    }
    const std::string name = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
    std::printf("%-16s %10.1f %10.1f %10.1f %10.1f %9.2f %9.2f\n", name.c_str(), us[0], us[1], us[2], us[3],
                us[1] / us[2], us[3] / us[2]);
    munmap(x, size_t(s.m * s.k) * sizeof(float) + kTrailing);
    munmap(y, size_t(s.m * s.n) * sizeof(float) + kTrailing);
  }
}
