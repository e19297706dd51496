// Float32 matrix products with a loaded program's weights (linear's y = x * w^T + bias) through a
// oneDNN matmul whose weights are packed once, in the layout it chooses (where that is a plain
// one, with its rows padded: onednn_linear.cc), and kept while their constant storage lives
// (onednn_kept_weights.h): dnnl_sgemm packs them on every call, 12% of BERT-base's 128x768x768
// products and 30% of a small Llama's (docs/PERFORMANCE.md). Products of one row stay on gemv
// (gemm.h), where packing does not pay. Primitives are built once per shape and thread count;
// executing one is thread-safe.
#pragma once

#include <cstdint>
#include <memory>

#include "executor/runtime/storage.h"

namespace nrt::exec::cpu {

// y [m, n] = x [m, k] * w^T + bias (w [n, k], bias [n] or null); all contiguous float32, `w` in
// `weight_storage` (constant). False, having written nothing, where oneDNN has no implementation.
bool onednn_linear(int64_t m, int64_t n, int64_t k, const float* x, const float* w, const float* bias, float* y,
                   const std::shared_ptr<const Storage>& weight_storage);

// The fewest multiply-adds (m * n * k) for which onednn_linear pays for its call against oneDNN's
// sgemm, which packs nothing: 2^19 where oneDNN runs its AVX2 kernels (below, a small Llama's
// 32x64x64 products ran 8% slower in all on a Zen 1 core); 1 where it runs AVX-512 ones, whose
// products on packed weights were faster at every size (Zen 4: llama_tiny 0.217 -> 0.202 ms,
// mistral_tiny 0.444 -> 0.427 at 1 thread; docs/PERFORMANCE.md).
int64_t fewest_packed_multiply_adds();

}  // namespace nrt::exec::cpu
