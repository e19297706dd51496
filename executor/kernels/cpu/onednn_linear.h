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

}  // namespace nrt::exec::cpu
