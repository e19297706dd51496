#include "executor/kernels/cpu/onednn_linear.h"

#include <array>
#include <map>
#include <mutex>
#include <unordered_map>

#include <oneapi/dnnl/dnnl.h>

#include "executor/kernels/cpu/onednn_kept_weights.h"
#include "executor/kernels/cpu/onednn_threads.h"
#include "executor/runtime/intra_op_threads.h"

namespace nrt::exec::cpu {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

struct Product {
  memory::desc x, bias, y;
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul matmul;
  WeightLayout weights;  // the program's w as pd wants it (kept_weights)
};

// Where oneDNN chooses a plain layout for the weights (its gemm-based matmul, on CPUs without
// AVX-512), rows of w^T [k, n] are n + this many floats apart. With rows a multiple of 4 KiB apart
// (n = 1024, 3072) they fall in the same cache sets, and the gemm's copy of them ran 1.2-1.4x as
// long: 128x1024x1024 took 9.8 ms with rows of 1024 floats, 7.3 ms with 1040, and no shape
// measured was slower padded (docs/PERFORMANCE.md).
constexpr int64_t kPlainRowPadding = 16;

// Bytes present after each kept weight buffer. oneDNN's gemm prefetches up to ~48 KiB past the
// weights' end; where those pages were not present (a buffer of 128 KiB or more is a mapping of
// its own), every call paid for page walks that failed: a 64x256x128 product (m x n x k) took
// 2.7x as long, and whisper's 128->256 linear 0.20 ms rather than 0.13 ms (docs/PERFORMANCE.md).
constexpr size_t kWeightTrailingBytes = size_t{64} << 10;

// The thread count is part of the key, as for convolutions (onednn_convolution.cc).
using Key = std::array<int64_t, 5>;

std::shared_ptr<const Product> build(int64_t m, int64_t n, int64_t k, bool has_bias) {
  const auto f32 = memory::data_type::f32;
  auto p = std::make_shared<Product>();
  p->x = memory::desc({m, k}, f32, Tag::ab);
  const memory::desc user_weights({k, n}, f32, Tag::ba);  // w [n, k] row-major is w^T column-major
  p->bias = memory::desc({1, n}, f32, Tag::ab);
  p->y = memory::desc({m, n}, f32, Tag::ab);
  auto primitive_desc = [&](const memory::desc& weights) {
    const auto desc = has_bias ? dnnl::matmul::desc(p->x, weights, p->bias, p->y) : dnnl::matmul::desc(p->x, weights, p->y);
    return dnnl::matmul::primitive_desc(desc, onednn_attributes(), onednn_engine());
  };
  p->pd = primitive_desc(memory::desc({k, n}, f32, Tag::any));
  if (p->pd.weights_desc().data.format_desc.blocking.inner_nblks == 0) {
    p->pd = primitive_desc(memory::desc({k, n}, f32, memory::dims{n + kPlainRowPadding, 1}));
  }
  p->matmul = dnnl::matmul(p->pd);
  p->weights = weight_layout(user_weights, p->pd.weights_desc(), kWeightTrailingBytes);
  return p;
}

// Built once per shape; a shape oneDNN refused is remembered as null.
std::shared_ptr<const Product> product_for(int64_t m, int64_t n, int64_t k, bool has_bias, int threads) {
  static std::mutex mutex;
  static std::map<Key, std::shared_ptr<const Product>> cache;
  const Key key{m, n, k, has_bias ? 1 : 0, threads};
  std::lock_guard<std::mutex> lock(mutex);
  auto found = cache.find(key);
  if (found != cache.end()) return found->second;
  std::shared_ptr<const Product> built;
  try {
    built = build(m, n, k, has_bias);
  } catch (const dnnl::error&) {
    built = nullptr;
  }
  cache.emplace(key, built);
  return built;
}

}  // namespace

int64_t fewest_packed_multiply_adds() {
  static const int64_t fewest =
      (dnnl_get_effective_cpu_isa() & dnnl_cpu_isa_avx512_core) == dnnl_cpu_isa_avx512_core ? 1 : int64_t{1} << 19;
  return fewest;
}

bool onednn_linear(int64_t m, int64_t n, int64_t k, const float* x, const float* w, const float* bias, float* y,
                   const std::shared_ptr<const Storage>& weight_storage) {
  const int threads = use_onednn_threads(intra_op_threads());
  const auto p = product_for(m, n, k, bias != nullptr, threads);
  if (!p) return false;
  try {
    const LaidOutWeights weights = kept_weights(p->weights, w, weight_storage);
    dnnl::engine& engine = onednn_engine();
    dnnl::stream stream(engine);
    // oneDNN takes non-const handles; it reads the inputs only.
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, memory(p->x, engine, const_cast<float*>(x))},
                                         {DNNL_ARG_WEIGHTS, weights.memory},
                                         {DNNL_ARG_DST, memory(p->y, engine, y)}};
    if (bias != nullptr) args.emplace(DNNL_ARG_BIAS, memory(p->bias, engine, const_cast<float*>(bias)));
    args.emplace(DNNL_ARG_SCRATCHPAD, onednn_scratchpad(p->pd.scratchpad_desc()));
    p->matmul.execute(stream, args);
    stream.wait();
  } catch (const dnnl::error&) {
    return false;
  }
  return true;
}

}  // namespace nrt::exec::cpu
