// Float32 convolution through oneDNN (Debian's libdnnl, docs/PERFORMANCE.md): its direct
// convolutions (brgconv, brdgmm for depthwise) on the CPU's widest vectors run 2-3x faster than
// im2col + OpenBLAS on the same shapes, even counting the reorders of input, weights and output
// between nrt's contiguous NCDHW tensors and the blocked layouts oneDNN picks. Pointwise (1x1)
// convolutions stay on the plain layouts, where oneDNN runs them as one matrix product.
// Primitives are built once per shape and kept (a mutex-guarded cache); executing one is
// thread-safe. oneDNN threads through OpenMP: N threads when a run set intra_op_threads() to N,
// else one (onednn_threads.h).
#pragma once

#include <cstdint>
#include <limits>
#include <memory>

#include "executor/kernels/cpu/output_clamp.h"
#include "executor/runtime/storage.h"

namespace nrt::exec::cpu {

// The activation a fused convolution node applies last (executor/runtime/convolution_fusion.h):
// oneDNN applies relu and clip as it writes each output block (a post-op), except on the plain
// layouts of pointwise convolutions, where its matrix-product implementation runs post-ops 2-10x
// slower than the convolution (16->96 channels at 112x112: 6.6 ms against 0.66): the caller
// applies them there, and silu everywhere (its own loop is faster than oneDNN's swish post-op).
struct ConvolutionActivation {
  enum class Kind { kNone, kRelu, kClip, kSilu };  // kClip: hardtanh(min, max)
  Kind kind = Kind::kNone;
  double min = 0, max = 0;
};

// The clamp nrt's own kernels apply for relu and hardtanh; none for the others (silu: the caller's).
inline OutputClamp output_clamp_of(const ConvolutionActivation& activation) {
  using Kind = ConvolutionActivation::Kind;
  if (activation.kind == Kind::kRelu) return {true, 0.0f, std::numeric_limits<float>::infinity()};
  if (activation.kind == Kind::kClip) return {true, static_cast<float>(activation.min), static_cast<float>(activation.max)};
  return {};
}

struct OneDnnConvolution {
  int64_t batches, channels, out_channels, groups;
  int64_t in[3], kernel[3], out[3];
  int64_t stride[3], dilation[3], pad_begin[3], pad_end[3];
  ConvolutionActivation activation;
  // Depth-1 convolutions only: the input, or the output, is channels-last (NHWC in memory) rather
  // than contiguous. Either makes oneDNN run on NHWC, which its kernels take without reorders at
  // the speed of the blocked layouts (docs/PERFORMANCE.md).
  bool input_channels_last = false, output_channels_last = false;
};

// Canonical 3-D form: input [N, C, D, H, W], weight [OC, C/groups, KD, KH, KW], bias [OC] or
// null, output [N, OC, OD, OH, OW]; all float32, contiguous but for the channels-last flags.
// Refused, having written nothing, where oneDNN has no implementation for the shape (the caller
// then uses its own). `weight_storage`, when the weights lie in a constant storage
// (Storage::constant(), a loaded program's weights), lets their reordered copy be kept while that
// storage lives instead of reordered on every call (resnet18's 512-channel 3x3 weights: 0.8 ms a
// call); null otherwise.
enum class OneDnnOutcome {
  kRefused,                 // nothing written
  kDone,                    // the output holds the convolution and its activation
  kActivationLeftToCaller,  // the output holds the convolution only
};
OneDnnOutcome onednn_convolution_forward(const OneDnnConvolution& shape, const float* input, const float* weight,
                                         const float* bias, float* output,
                                         const std::shared_ptr<const Storage>& weight_storage = nullptr);

// Pointwise convolutions with a loaded program's weights (`weight_storage` non-null), on a CPU with
// AVX-512, run on pointwise_product.h's products, the weights packed once (kept as oneDNN's
// Acdb16a): over at most kFewPositions positions, the input's rows channels-last (or one position)
// and the output in either layout (NCHW for one image), streamed faster than oneDNN's
// brgconv_1x1; over more, both channels-last.
bool pointwise_product_takes(const OneDnnConvolution& shape, const std::shared_ptr<const Storage>& weight_storage);
// Refused, having written nothing, where pointwise_product_takes does not hold. relu and hardtanh
// are applied over more than kFewPositions positions; other activations are left to the caller.
OneDnnOutcome pointwise_product_convolution_forward(const OneDnnConvolution& shape, const float* input,
                                                    const float* weight, const float* bias, float* output,
                                                    const std::shared_ptr<const Storage>& weight_storage);

// Depthwise convolutions (one channel per group, one output each) of depth 1 and dilation 1, input
// and output channels-last, on a CPU with AVX-512: on channels_last_depthwise.h's rows
// (channels_last_depthwise.cc). Refused, having written nothing, elsewhere; silu is left to the
// caller.
bool depthwise_convolution_takes(const OneDnnConvolution& shape);
OneDnnOutcome depthwise_convolution_forward(const OneDnnConvolution& shape, const float* input, const float* weight,
                                            const float* bias, float* output,
                                            const std::shared_ptr<const Storage>& weight_storage);

}  // namespace nrt::exec::cpu
