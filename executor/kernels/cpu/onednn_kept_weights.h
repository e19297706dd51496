// What the oneDNN kernels share: the CPU engine, scratchpads, and weights in the layout a primitive chose kept
// while the constant storage they came from lives (Storage::constant(): a loaded program's
// weights), so that a convolution or a matrix product reorders them once rather than on every call
// (resnet18's 512-channel 3x3 weights: 0.8 ms a call; BERT's 768x3072 products 12% faster packed).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "executor/runtime/storage.h"

namespace nrt::exec::cpu {

dnnl::engine& onednn_engine();

// Primitives are built with a user scratchpad (onednn_attributes) and given this one, the calling
// thread's, on every call: with the library's own (the default), one primitive executed from two
// threads at once shares a scratchpad and gives wrong answers (concurrent_runs_test found it).
// Valid until the thread's next call.
dnnl::primitive_attr onednn_attributes();
dnnl::memory onednn_scratchpad(const dnnl::memory::desc& desc);
// `count` floats of that scratchpad, for nrt's own kernels' buffers (Winograd's transforms, the
// 1-D convolutions' padded rows); valid until the thread's next use of it.
float* scratch_floats(int64_t count);

// Weights in a primitive's layout, and the buffer that holds them: keep it for as long as `memory`
// is used.
struct LaidOutWeights {
  std::shared_ptr<void> buffer;
  dnnl::memory memory;
};

// How a primitive wants its weights: from `user` to `chosen`, with `trailing_bytes` of zeros after
// them in the buffer, written so that their pages are present (onednn_linear.cc says why a product
// needs them). `id` is the same for equal layouts: kept_weights keys its copies by it, so the
// primitives of one weight for each row count and thread count share one copy. Made once per
// primitive (weight_layout compares the descriptors then, not on every call).
struct WeightLayout {
  dnnl::memory::desc user, chosen;
  size_t trailing_bytes = 0;
  uint64_t id = 0;
};
WeightLayout weight_layout(const dnnl::memory::desc& user, const dnnl::memory::desc& chosen, size_t trailing_bytes = 0);

// `weight`'s bytes in `layout`, kept per weight address and layout while `storage` lives
// (kept_by_storage.h; at most 1 GiB in all, past it reordered for the call). Once kept, the
// weights' own pages are released (Storage::release_pages: where they are a file mapping).
LaidOutWeights kept_weights(const WeightLayout& layout, const float* weight, const std::shared_ptr<const Storage>& storage);

// [out][in] float32 weights (a pointwise convolution's, a linear's) packed in blocks of 16 outputs,
// [ceil(out / 16)][in][16] with zeros past `out` (oneDNN's Acdb16a: pointwise_product.h and
// small_product.h read them so), kept as above.
LaidOutWeights pointwise_packed_weights(int64_t out, int64_t in, const float* weight,
                                       const std::shared_ptr<const Storage>& weight_storage);
// A 1-D convolution's float32 weights [out][in][taps] packed the same way with each output's
// weights tap-major, [ceil(out / 16)][taps][in][16] (oneDNN's Acdb16a of [out, in, 1, taps]:
// row_convolution.h reads them so), kept as above. taps 1 is pointwise_packed_weights.
LaidOutWeights tap_major_packed_weights(int64_t out, int64_t in, int64_t taps, const float* weight,
                                        const std::shared_ptr<const Storage>& weight_storage);

// A depthwise convolution's float32 weights [channels, 1, kh, kw] as [kh * kw][channels]
// (channels_last_depthwise.h's taps), kept as above.
LaidOutWeights depthwise_kept_taps(int64_t channels, int64_t taps, const float* weight,
                                   const std::shared_ptr<const Storage>& weight_storage);

// A depthwise convolution's taps as depthwise_kept_taps lays them out: kept where the weights are
// a program's (`weight_storage` non-null; efficientnet's 1152 channels of 5x5 taps took 20 us a
// call to transpose), else, or where oneDNN refuses the layout, transposed for the call.
class DepthwiseTaps {
 public:
  DepthwiseTaps(int64_t channels, int64_t kh, int64_t kw, const float* weight,
                const std::shared_ptr<const Storage>& weight_storage);
  const float* data() const {
    return transposed_.empty() ? static_cast<const float*>(kept_.memory.get_data_handle()) : transposed_.data();
  }

 private:
  LaidOutWeights kept_;
  std::vector<float> transposed_;
};

// The bytes kept_weights holds now, in all (tests, diagnostics).
size_t kept_weights_bytes();

}  // namespace nrt::exec::cpu
