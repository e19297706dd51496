// Convolution (1-D, 2-D and 3-D). Float32 (and float16/bfloat16, computed in float32) goes to
// oneDNN (onednn_convolution.h) where it has an implementation for the shape. Otherwise, and for
// float64: im2col + BLAS, per batch element and group (the input patches of one group form a
// [C/g * kd * kh * kw, od * oh * ow] matrix that the group's weights [oc/g, C/g * kd * kh * kw]
// multiply), and depthwise convolutions (one input channel per group) directly. 1-D and 2-D run
// as 3-D with depth (and height) 1. Floating dtypes only. Transposed convolution is not supported.
// nrt::convolution_with_epilogue runs a fused node (executor/runtime/convolution_fusion.h): the
// batch norm folded into weights and bias (batch_norm_folding.h), the activation last.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "executor/kernels/cpu/batch_norm_folding.h"
#include "executor/kernels/cpu/broadcast.h"
#include "executor/kernels/cpu/channels_last_layout.h"
#include "executor/kernels/cpu/dtype_dispatch.h"
#include "executor/kernels/cpu/expanded_depthwise.h"
#include "executor/kernels/cpu/projected_depthwise.h"
#include "executor/kernels/cpu/float_activation_loops.h"
#include "executor/kernels/cpu/gemm.h"
#include "executor/kernels/cpu/onednn_kept_weights.h"
#include "executor/kernels/cpu/onednn_convolution.h"
#include "executor/kernels/cpu/row_convolution.h"
#include "executor/kernels/cpu/winograd_convolution.h"
#include "executor/runtime/constant_arguments.h"
#include "executor/runtime/convolution_epilogue.h"
#include "executor/runtime/intra_op_threads.h"
#include "executor/kernels/cpu/output_slot.h"
#include "executor/kernels/cpu/tensor_copy.h"

namespace nrt::exec::cpu {
namespace {

constexpr size_t kSpatial = 3;  // the canonical form's spatial dims: depth, height, width

struct ConvParams {
  int64_t stride[kSpatial] = {1, 1, 1};
  int64_t pad_begin[kSpatial] = {0, 0, 0};
  int64_t pad_end[kSpatial] = {0, 0, 0};
  int64_t dilation[kSpatial] = {1, 1, 1};
  int64_t groups = 1;
};

// Extents of the canonical spatial dims: in (input), kernel, out.
struct Extents {
  int64_t in[kSpatial], kernel[kSpatial], out[kSpatial];
};

// Output positions [lo, hi) whose tap at kernel offset `k` reads inside an input of `extent`.
std::pair<int64_t, int64_t> valid_outputs(int64_t extent, int64_t out, int64_t k, int64_t stride, int64_t pad,
                                          int64_t dilation) {
  const int64_t first = k * dilation - pad;  // input index of output 0's tap
  const int64_t lo = first >= 0 ? 0 : (-first + stride - 1) / stride;
  const int64_t hi = extent - 1 - first < 0 ? 0 : std::min(out, (extent - 1 - first) / stride + 1);
  return {std::min(lo, hi), hi};
}

// The column matrix [channels * taps, positions]: row (c, kz, ky, kx) holds, per output position,
// the input its tap reads (0 in the padding). Rows are independent: they are filled in parallel
// over the intra-op threads, each row line by line, the valid outputs of a line found once
// (valid_outputs) and copied as one run at stride 1.
template <class C>
void im2col(const C* image, int64_t channels, const Extents& e, const ConvParams& p, C* columns) {
  const int64_t positions = e.out[0] * e.out[1] * e.out[2];
  const int64_t taps = e.kernel[0] * e.kernel[1] * e.kernel[2];
  const int64_t rows = channels * taps;
  parallel_for(rows, std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(positions, 1)), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t c = r / taps, tap = r % taps;
      const int64_t kz = tap / (e.kernel[1] * e.kernel[2]), ky = tap / e.kernel[2] % e.kernel[1], kx = tap % e.kernel[2];
      const C* volume = image + c * e.in[0] * e.in[1] * e.in[2];
      C* row = columns + r * positions;
      std::fill(row, row + positions, C(0));
      const auto [z_lo, z_hi] = valid_outputs(e.in[0], e.out[0], kz, p.stride[0], p.pad_begin[0], p.dilation[0]);
      const auto [y_lo, y_hi] = valid_outputs(e.in[1], e.out[1], ky, p.stride[1], p.pad_begin[1], p.dilation[1]);
      const auto [x_lo, x_hi] = valid_outputs(e.in[2], e.out[2], kx, p.stride[2], p.pad_begin[2], p.dilation[2]);
      const int64_t first = kx * p.dilation[2] - p.pad_begin[2];  // input x of output 0
      const int64_t step = p.stride[2];
      for (int64_t oz = z_lo; oz < z_hi; ++oz) {
        const int64_t z = oz * p.stride[0] - p.pad_begin[0] + kz * p.dilation[0];
        for (int64_t oy = y_lo; oy < y_hi; ++oy) {
          const int64_t y = oy * p.stride[1] - p.pad_begin[1] + ky * p.dilation[1];
          const C* line = volume + (z * e.in[1] + y) * e.in[2];
          C* cell = row + (oz * e.out[1] + oy) * e.out[2];
          if (step == 1) {
            std::copy(line + x_lo + first, line + x_hi + first, cell + x_lo);
          } else {
            for (int64_t ox = x_lo; ox < x_hi; ++ox) cell[ox] = line[ox * step + first];
          }
        }
      }
    }
  });
}

// Depthwise convolution (one input channel per group, as MobileNet's), computed directly: each
// output plane accumulates its channel's taps along output rows, the padding handled by the range
// of valid outputs rather than per element. im2col + GEMM would build a patch matrix per channel
// for a product of one row, which is where mobile CNNs spent their time.
template <class C>
void depthwise_forward(const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvParams& p,
                       const Extents& e, const Tensor& out) {
  const int64_t batches = input.sizes()[0], channels = input.sizes()[1], out_channels = weight.sizes()[0];
  const int64_t multiplier = out_channels / channels;
  const int64_t in_volume = e.in[0] * e.in[1] * e.in[2], out_volume = e.out[0] * e.out[1] * e.out[2];
  const int64_t taps = e.kernel[0] * e.kernel[1] * e.kernel[2];
  const C* in = input.data<C>();
  const C* w = weight.data<C>();
  C* o = out.data<C>();
  // Output planes are independent: split over the intra-op threads.
  auto plane_of = [&](int64_t index) {
    const int64_t n = index / out_channels, oc = index % out_channels;
    const C* plane = in + (n * channels + oc / multiplier) * in_volume;
    const C* kernel = w + oc * taps;
    C* target = o + (n * out_channels + oc) * out_volume;
    std::fill(target, target + out_volume, bias.defined() ? bias.data<C>()[oc] : C(0));
    for (int64_t kz = 0; kz < e.kernel[0]; ++kz) {
      const auto [z_lo, z_hi] = valid_outputs(e.in[0], e.out[0], kz, p.stride[0], p.pad_begin[0], p.dilation[0]);
      for (int64_t ky = 0; ky < e.kernel[1]; ++ky) {
        const auto [y_lo, y_hi] = valid_outputs(e.in[1], e.out[1], ky, p.stride[1], p.pad_begin[1], p.dilation[1]);
        for (int64_t kx = 0; kx < e.kernel[2]; ++kx) {
          const auto [x_lo, x_hi] = valid_outputs(e.in[2], e.out[2], kx, p.stride[2], p.pad_begin[2], p.dilation[2]);
          const C tap = kernel[(kz * e.kernel[1] + ky) * e.kernel[2] + kx];
          for (int64_t oz = z_lo; oz < z_hi; ++oz) {
            const int64_t z = oz * p.stride[0] - p.pad_begin[0] + kz * p.dilation[0];
            for (int64_t oy = y_lo; oy < y_hi; ++oy) {
              const int64_t y = oy * p.stride[1] - p.pad_begin[1] + ky * p.dilation[1];
              const C* line = plane + (z * e.in[1] + y) * e.in[2];
              const int64_t first = kx * p.dilation[2] - p.pad_begin[2];  // input x of output 0
              C* row = target + (oz * e.out[1] + oy) * e.out[2];
              const int64_t step = p.stride[2];
              if (step == 1) {
                for (int64_t ox = x_lo; ox < x_hi; ++ox) row[ox] += tap * line[ox + first];
              } else {
                for (int64_t ox = x_lo; ox < x_hi; ++ox) row[ox] += tap * line[ox * step + first];
              }
            }
          }
        }
      }
    }
  };
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(out_volume * taps, 1));
  parallel_for(batches * out_channels, grain, [&](int64_t begin, int64_t end) {
    for (int64_t index = begin; index < end; ++index) plane_of(index);
  });
}

// im2col + BLAS, per batch element and group.
template <class C>
void im2col_forward(const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvParams& p,
                    const Extents& e, bool pointwise, const Tensor& out) {
  const int64_t batches = input.sizes()[0], channels = input.sizes()[1], out_channels = weight.sizes()[0];
  const int64_t volume = e.in[0] * e.in[1] * e.in[2];
  const int64_t group_channels = channels / p.groups, group_out = out_channels / p.groups;
  const int64_t patch = group_channels * e.kernel[0] * e.kernel[1] * e.kernel[2];
  const int64_t positions = e.out[0] * e.out[1] * e.out[2];
  Tensor columns = pointwise ? Tensor() : Tensor::empty(out.dtype(), {patch, positions});
  for (int64_t n = 0; n < batches; ++n) {
    for (int64_t g = 0; g < p.groups; ++g) {
      const int64_t input_offset = input.storage_offset() + (n * channels + g * group_channels) * volume;
      Tensor cols;
      if (pointwise) {
        cols = input.as_strided({patch, positions}, {positions, 1}, input_offset);
      } else {
        im2col(input.data<C>() + (input_offset - input.storage_offset()), group_channels, e, p, columns.data<C>());
        cols = columns;
      }
      const Tensor w = weight.as_strided({group_out, patch}, {patch, 1}, weight.storage_offset() + g * group_out * patch);
      const Tensor o = out.as_strided({group_out, positions}, {positions, 1},
                                      out.storage_offset() + (n * out_channels + g * group_out) * positions);
      gemm(w, cols, o, 1.0, 0.0);
    }
    if (bias.defined()) {
      C* o = out.data<C>() + n * out_channels * positions;
      const C* b = bias.data<C>();
      for (int64_t oc = 0; oc < out_channels; ++oc) {
        for (int64_t i = 0; i < positions; ++i) o[oc * positions + i] += b[oc];
      }
    }
  }
}

// A fused node's epilogue after the convolution, in place over `out`'s memory in its own order
// (contiguous or channels-last): out = activation(out + addend), without the add where `addend`
// (a residual laid out as `out`) is null. One pass where the add and the activation were nodes.
template <class C>
void apply_activation(const ConvolutionActivation& activation, const Tensor& out, const C* addend = nullptr) {
  C* values = out.data<C>();
  const int64_t count = out.numel();
  auto each = [&](auto f) {
    if (addend != nullptr) {
      for (int64_t i = 0; i < count; ++i) values[i] = f(values[i] + addend[i]);
    } else {
      for (int64_t i = 0; i < count; ++i) values[i] = f(values[i]);
    }
  };
  const auto low = static_cast<C>(activation.min), high = static_cast<C>(activation.max);
  switch (activation.kind) {
    case ConvolutionActivation::Kind::kRelu: each([](C v) { return v < C(0) ? C(0) : v; }); break;  // NaN stays
    case ConvolutionActivation::Kind::kClip: each([&](C v) { return v < low ? low : (v > high ? high : v); }); break;
    case ConvolutionActivation::Kind::kSilu:
      if constexpr (std::is_same_v<C, float>) {
        if (addend != nullptr) each([](C v) { return v; });
        run_float_activation(FloatActivation::kSilu, values, values, count);  // silu's own loop
      } else {
        each([](C v) { return v / (C(1) + std::exp(-v)); });
      }
      break;
    case ConvolutionActivation::Kind::kNone:
      if (addend != nullptr) each([](C v) { return v; });
      break;
  }
}

// A fused node's residual, brought to `out`'s layout first where its own differs, then added
// before the activation.
template <class C>
void add_residual(const Tensor& out, const Tensor& residual, const ConvolutionActivation& activation) {
  Tensor aligned = residual;
  if (residual.strides() != out.strides() || residual.dtype() != out.dtype()) {
    aligned = Tensor::empty(out.dtype(), {out.numel()}).as_strided(out.sizes(), out.strides(), 0);
    copy_into(aligned, residual);
  }
  apply_activation<C>(activation, out, aligned.data<C>());
}

// input [N, C, D, H, W], weight [OC, C/g, KD, KH, KW], bias [OC] or undefined, out
// [N, OC, OD, OH, OW]; contiguous, compute dtype, except that a float32 input or output may be
// channels-last (2-D, depth 1), which oneDNN reads and writes as it is and the fallback computes
// on contiguous copies. `activation` comes last.
template <class C>
void conv_forward(const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvParams& p,
                  const ConvolutionActivation& activation, const Tensor& out, bool input_channels_last = false,
                  bool output_channels_last = false) {
  const int64_t batches = input.sizes()[0], channels = input.sizes()[1];
  const int64_t out_channels = weight.sizes()[0];
  Extents e{};
  bool pointwise = true;  // 1x1x1, stride 1, no padding: the input is already the column matrix
  for (size_t i = 0; i < kSpatial; ++i) {
    e.in[i] = input.sizes()[2 + i];
    e.kernel[i] = weight.sizes()[2 + i];
    e.out[i] = out.sizes()[2 + i];
    pointwise = pointwise && e.kernel[i] == 1 && p.stride[i] == 1 && p.pad_begin[i] == 0 && p.pad_end[i] == 0;
  }
  if constexpr (std::is_same_v<C, float>) {
    OneDnnConvolution shape{batches, channels, out_channels, p.groups, {}, {}, {}, {}, {}, {}, {},
                            activation, input_channels_last, output_channels_last};
    for (size_t i = 0; i < kSpatial; ++i) {
      shape.in[i] = e.in[i];
      shape.kernel[i] = e.kernel[i];
      shape.out[i] = e.out[i];
      shape.stride[i] = p.stride[i];
      shape.dilation[i] = p.dilation[i];
      shape.pad_begin[i] = p.pad_begin[i];
      shape.pad_end[i] = p.pad_end[i];
    }
    // A loaded program's weights: oneDNN may keep their reordered copy, Winograd their transform
    // (onednn_convolution.h, winograd_convolution.h).
    const std::shared_ptr<const Storage> weight_storage =
        weight.storage()->constant() ? std::shared_ptr<const Storage>(weight.storage()) : nullptr;
    // One position per image (a squeeze-excitation block's 1x1 convolutions of a pooled
    // [N, C, 1, 1]) is a matrix-vector product. On a program's weights pointwise_product.h's four
    // streams take it below (efficientnet_b0_64's 32: 0.183 -> 0.170 ms against gemv); else gemv,
    // as oneDNN's convolution primitive took 15-30 us for efficientnet's 96 -> 4 (a call and
    // reorders) and gemv 1-2. NCHW and NHWC are one layout here.
    const bool one_position = pointwise && p.groups == 1 && e.in[0] * e.in[1] * e.in[2] == 1;
    if (one_position && !pointwise_product_takes(shape, weight_storage)) {
      im2col_forward<C>(input, weight, bias, p, e, true, out);
      apply_activation<C>(activation, out);
      return;
    }
    // 3x3 convolutions of stride 1 by Winograd's minimal filtering where it beats oneDNN's direct
    // ones (winograd_convolution.h), channels-last pointwise and depthwise ones and 1-D ones on
    // nrt's own (pointwise_product.h, channels_last_depthwise.h, row_convolution.h); the rest
    // through oneDNN.
    auto forward = onednn_convolution_forward;
    if (winograd_takes(shape)) forward = winograd_convolution_forward;
    else if (pointwise_product_takes(shape, weight_storage)) forward = pointwise_product_convolution_forward;
    else if (depthwise_convolution_takes(shape)) forward = depthwise_convolution_forward;
    else if (row_convolution_takes(shape, weight_storage)) forward = row_convolution_forward;
    const OneDnnOutcome outcome =
        forward(shape, input.data<float>(), weight.data<float>(), bias.defined() ? bias.data<float>() : nullptr,
                out.data<float>(), weight_storage);
    if (outcome == OneDnnOutcome::kActivationLeftToCaller) apply_activation<C>(activation, out);  // NHWC is dense too
    if (outcome != OneDnnOutcome::kRefused) return;
    if (input_channels_last || output_channels_last) {
      const Tensor contiguous_out = output_channels_last ? Tensor::empty(ScalarType::FLOAT32, out.sizes()) : out;
      conv_forward<float>(contiguous_as(input, ScalarType::FLOAT32), weight, bias, p, activation, contiguous_out);
      if (output_channels_last) copy_into(out, contiguous_out);
      return;
    }
  }
  if (channels == p.groups && p.groups > 1) {
    depthwise_forward<C>(input, weight, bias, p, e, out);
  } else {
    im2col_forward<C>(input, weight, bias, p, e, pointwise, out);
  }
  apply_activation<C>(activation, out);
}

// A list argument of length 1 or `count` (a length-1 list repeats).
Result<std::vector<int64_t>> expand_list(const KernelContext& ctx, std::string_view name, int position,
                                         std::vector<int64_t> fallback, size_t count) {
  NRT_TRY(values, ctx.int_list(name, position, fallback));
  if (values->size() == 1) values->assign(count, (*values)[0]);
  if (values->size() != count) {
    return ctx.error(std::string(name) + " must have " + std::to_string(count) + " values, got " +
                     shape_string(*values));
  }
  return values;
}

// A fused node's expansion (convolution_epilogue.h's kExpansionWeight): a 1x1 convolution with its
// batch norm and activation, whose result the node convolves.
struct Expansion {
  Tensor weight;
  std::optional<Tensor> bias;
  std::optional<BatchNormParameters> batch_norm;
  ConvolutionActivation activation;
};

// A fused node's depthwise convolution (convolution_epilogue.h's kDepthwiseWeight): 2-D, one input
// channel per group, with its batch norm and activation, whose result the node projects.
struct DepthwiseStage {
  Tensor weight;
  std::optional<Tensor> bias;
  std::vector<int64_t> stride, padding;  // 2 each
  std::optional<BatchNormParameters> batch_norm;
  ConvolutionActivation activation;
};

struct ConvolutionCall {
  Tensor input, weight;
  std::optional<Tensor> bias;
  std::vector<int64_t> stride, dilation;
  std::vector<int64_t> pad_begin, pad_end;
  int64_t groups = 1;
  size_t spatial = 2;    // 1, 2 or 3 spatial dims
  bool batched = true;   // false: input lacks the batch dim
  // A fused node's epilogue (executor/runtime/convolution_fusion.h).
  std::optional<BatchNormParameters> batch_norm;
  std::optional<Tensor> residual;  // added before the activation
  std::optional<Tensor> input_scale;  // [N or 1, C, 1, 1]: multiplies the input per channel first
  ConvolutionActivation activation;
  bool channels_last_output = false;  // only convolutions read the output (the plan checked)
  std::optional<Expansion> expansion;  // computed first: `input` is its input (expanded_depthwise.h)
  std::optional<DepthwiseStage> depthwise;  // computed first: `input` is its input (projected_depthwise.h)
};

// to[i] = from[i] * factors[i] and to[i] = from[i] * factor, i < n: scaled_input's rows, in
// functions of their own that GCC vectorises (inlined into run_convolution, the loops stayed scalar:
// 6% of efficientnet_b0_64's time).
[[gnu::noinline]] void multiply_row(const float* __restrict from, const float* __restrict factors,
                                    float* __restrict to, int64_t n) {
  for (int64_t i = 0; i < n; ++i) to[i] = from[i] * factors[i];
}
[[gnu::noinline]] void scale_row(const float* __restrict from, float factor, float* __restrict to, int64_t n) {
  for (int64_t i = 0; i < n; ++i) to[i] = from[i] * factor;
}

// A fresh float32 [N, C, H, W] laid out channels-last where `channels_last`, else contiguous; its
// callers write every element.
Tensor empty_image(const std::vector<int64_t>& sizes, bool channels_last) {
  const Tensor storage = Tensor::empty_for_overwrite(ScalarType::FLOAT32, sizes);
  return channels_last ? storage.as_strided(sizes, channels_last_strides(sizes), 0) : storage;
}

// input * scale per channel (scale [N or 1, C, 1, 1]) as a fused squeeze-excitation mul would
// have written it, one float32 product an element, in the input's layout where that is
// channels-last (the next convolution then reads it without a reorder), else contiguous.
Tensor scaled_input(const Tensor& input, const Tensor& scale) {
  const int64_t n = input.sizes()[0], c = input.sizes()[1], positions = input.sizes()[2] * input.sizes()[3];
  const bool nhwc = is_channels_last(input) && !input.is_contiguous();
  const Tensor x = nhwc ? input : contiguous_as(input, ScalarType::FLOAT32);
  const Tensor s = contiguous_as(scale, ScalarType::FLOAT32);
  const Tensor result = empty_image(input.sizes(), nhwc);
  const float* from = x.data<float>();
  float* to = result.data<float>();
  for (int64_t image = 0; image < n; ++image) {
    const float* factors = s.data<float>() + (scale.sizes()[0] == 1 ? 0 : image * c);
    const int64_t first = image * c * positions;
    if (nhwc) {
      for (int64_t p = 0; p < positions; ++p) multiply_row(from + first + p * c, factors, to + first + p * c, c);
    } else {
      for (int64_t k = 0; k < c; ++k) {
        scale_row(from + first + k * positions, factors[k], to + first + k * positions, positions);
      }
    }
  }
  return result;
}

// `t` in the canonical 5-D form: a batch dim of 1 added where `add_batch`, and `missing` spatial
// dims of 1 (depth, and height for 1-D) before the others.
Tensor canonical_form(const Tensor& t, bool add_batch, size_t missing) {
  std::vector<int64_t> sizes = t.sizes(), strides = t.strides();
  if (add_batch) {
    sizes.insert(sizes.begin(), 1);
    strides.insert(strides.begin(), 0);
  }
  sizes.insert(sizes.begin() + 2, missing, 1);
  strides.insert(strides.begin() + 2, missing, 0);
  return t.as_strided(sizes, strides, t.storage_offset());
}

// Folds a fused batch norm into contiguous weights `k` [OC, ...] and bias `b` (or undefined),
// its parameters checked first.
Status fold_into(const KernelContext& ctx, const BatchNormParameters& batch_norm, Tensor& k, Tensor& b) {
  const int64_t out_channels = k.sizes()[0];
  for (const Tensor* t : {batch_norm.weight ? &*batch_norm.weight : nullptr, batch_norm.bias ? &*batch_norm.bias : nullptr,
                          &batch_norm.running_mean, &batch_norm.running_var}) {
    if (t == nullptr) continue;
    if (!is_floating_dtype(t->dtype()) || t->sizes() != std::vector<int64_t>{out_channels}) {
      return ctx.error("the fused batch norm's parameter " + t->type_string() + " must be floating with " +
                       std::to_string(out_channels) + " elements");
    }
  }
  FoldedConvolution folded = fold_batch_norm(k, b, batch_norm);
  k = std::move(folded.weight);
  b = std::move(folded.bias);
  return Status::Ok();
}

// `call`'s weights (in canonical form, kSpatial spatial dims) and bias, contiguous in `compute`,
// its batch norm folded: as run_convolution and a kept call (PreparedConvolution) both take them,
// so that both reach the same kept folded weights.
Status folded_weights(const KernelContext& ctx, const ConvolutionCall& call, ScalarType compute, Tensor& k, Tensor& b) {
  k = contiguous_as(canonical_form(call.weight, false, kSpatial - call.spatial), compute);
  b = call.bias ? contiguous_as(*call.bias, compute) : Tensor();
  return call.batch_norm ? fold_into(ctx, *call.batch_norm, k, b) : Status::Ok();
}

// A fused residual of `dtype` and the output's sizes, else the error saying so.
Status check_residual(const KernelContext& ctx, const std::optional<Tensor>& residual, ScalarType dtype,
                      const std::vector<int64_t>& out_sizes) {
  if (!residual || (residual->dtype() == dtype && residual->sizes() == out_sizes)) return Status::Ok();
  return ctx.error("the fused residual " + residual->type_string() + " must have the output's dtype and sizes " +
                   shape_string(out_sizes));
}

Status run_expanded(KernelContext& ctx, ConvolutionCall call);
Status run_projected(KernelContext& ctx, ConvolutionCall call);

Status run_convolution(KernelContext& ctx, ConvolutionCall call) {
  if (call.expansion) return run_expanded(ctx, std::move(call));
  if (call.depthwise) return run_projected(ctx, std::move(call));
  const Tensor& weight = call.weight;
  if (!is_floating_dtype(call.input.dtype())) return unsupported_dtype(ctx, call.input.dtype());
  if (weight.dtype() != call.input.dtype() || (call.bias && call.bias->dtype() != call.input.dtype())) {
    return ctx.error("input, weight and bias must share one dtype");
  }
  if (call.input_scale) {
    const Tensor& scale = *call.input_scale;
    const bool fits = call.spatial == 2 && call.batched && call.input.dtype() == ScalarType::FLOAT32 &&
                      call.input.dim() == 4 && scale.dtype() == ScalarType::FLOAT32 && scale.dim() == 4 &&
                      (scale.sizes()[0] == 1 || scale.sizes()[0] == call.input.sizes()[0]) &&
                      scale.sizes()[1] == call.input.sizes()[1] && scale.sizes()[2] == 1 && scale.sizes()[3] == 1;
    if (!fits) {
      return ctx.error("the fused input scale " + scale.type_string() + " must be float32 [N or 1, C, 1, 1] for the float32 input " +
                       call.input.type_string() + " of a 2-D convolution");
    }
    call.input = scaled_input(call.input, scale);
  }
  const auto rank = static_cast<int64_t>(call.spatial + 2);
  if (weight.dim() != rank || call.input.dim() != rank - (call.batched ? 0 : 1)) {
    return ctx.error("input " + shape_string(call.input.sizes()) + " and weight " + shape_string(weight.sizes()) +
                     " do not describe a " + std::to_string(call.spatial) + "-D convolution");
  }
  const size_t missing = kSpatial - call.spatial;  // leading spatial slots of size 1
  auto canonical = [&](const Tensor& t, bool add_batch) { return canonical_form(t, add_batch, missing); };
  const Tensor input = canonical(call.input, !call.batched), w = canonical(weight, false);
  ConvParams p;
  p.groups = call.groups;
  for (size_t i = 0; i < call.spatial; ++i) {
    p.stride[missing + i] = call.stride[i];
    p.dilation[missing + i] = call.dilation[i];
    p.pad_begin[missing + i] = call.pad_begin[i];
    p.pad_end[missing + i] = call.pad_end[i];
  }
  const int64_t channels = input.sizes()[1], out_channels = w.sizes()[0];
  if (p.groups <= 0 || channels % p.groups != 0 || out_channels % p.groups != 0 || w.sizes()[1] * p.groups != channels) {
    return ctx.error("input channels " + std::to_string(channels) + ", weight " + shape_string(weight.sizes()) +
                     " and groups " + std::to_string(p.groups) + " do not fit");
  }
  if (call.bias && call.bias->sizes() != std::vector<int64_t>{out_channels}) {
    return ctx.error("bias " + shape_string(call.bias->sizes()) + " must have " + std::to_string(out_channels) + " elements");
  }
  std::vector<int64_t> canonical_out{input.sizes()[0], out_channels};
  for (size_t i = 0; i < kSpatial; ++i) {
    if (p.stride[i] <= 0 || p.dilation[i] <= 0 || p.pad_begin[i] < 0 || p.pad_end[i] < 0) {
      return ctx.error("stride and dilation must be positive and padding non-negative");
    }
    const int64_t extent = input.sizes()[2 + i] + p.pad_begin[i] + p.pad_end[i] - p.dilation[i] * (w.sizes()[2 + i] - 1) - 1;
    if (extent < 0) return ctx.error("the kernel is larger than the padded input");
    canonical_out.push_back(extent / p.stride[i] + 1);
  }
  std::vector<int64_t> out_sizes(canonical_out.begin() + (call.batched ? 0 : 1), canonical_out.begin() + 2);
  out_sizes.insert(out_sizes.end(), canonical_out.end() - static_cast<int64_t>(call.spatial), canonical_out.end());
  const ScalarType compute = call.input.dtype() == ScalarType::FLOAT64 ? ScalarType::FLOAT64 : ScalarType::FLOAT32;
  // NHWC sides of a batched 2-D float32 convolution: an input that is (written so by the
  // convolution before), and the output when the plan asked for it.
  const bool nhwc_capable = call.spatial == 2 && call.batched && call.input.dtype() == ScalarType::FLOAT32;
  const bool input_channels_last = nhwc_capable && is_channels_last(call.input) && !call.input.is_contiguous();
  const bool output_channels_last = nhwc_capable && call.channels_last_output;
  const Tensor x = input_channels_last ? input : contiguous_as(input, compute);
  Tensor k, b;
  NRT_RETURN_IF_ERROR(folded_weights(ctx, call, compute, k, b));
  NRT_RETURN_IF_ERROR(check_residual(ctx, call.residual, call.input.dtype(), out_sizes));
  // With a residual, the activation comes after the add.
  const ConvolutionActivation activation = call.residual ? ConvolutionActivation{} : call.activation;
  if (output_channels_last) {
    NRT_TRY(out, bind_channels_last_output(ctx, 0, out_sizes));
    conv_forward<float>(x, k, b, p, activation, canonical(*out, false), input_channels_last, true);
    if (call.residual) add_residual<float>(*out, *call.residual, call.activation);
    return Status::Ok();
  }
  NRT_TRY(slot, OutputSlot::bind(ctx, 0, call.input.dtype(), out_sizes));
  Tensor staging = slot->staging(compute);
  const Tensor y = staging.as_strided(canonical_out, Tensor::contiguous_strides(canonical_out), staging.storage_offset());
  if (compute == ScalarType::FLOAT64) {
    conv_forward<double>(x, k, b, p, activation, y);
  } else {
    conv_forward<float>(x, k, b, p, activation, y, input_channels_last, false);
  }
  if (call.residual) {
    const Tensor result = staging.as_strided(out_sizes, Tensor::contiguous_strides(out_sizes), staging.storage_offset());
    if (compute == ScalarType::FLOAT64) {
      add_residual<double>(result, *call.residual, call.activation);
    } else {
      add_residual<float>(result, *call.residual, call.activation);
    }
  }
  slot->commit();
  return Status::Ok();
}

// The fused pass of an expansion and a depthwise convolution (expanded_depthwise.h), where both
// are float32 with a program's weights, the input and output channels-last: false, having done
// nothing, elsewhere. `k`, `b`: the expansion's weights and bias, its batch norm folded.
Result<bool> run_expanded_pass(KernelContext& ctx, const ConvolutionCall& call, const Expansion& e, const Tensor& k,
                               const Tensor& b) {
  const Tensor& x = call.input;
  const Tensor& w = call.weight;
  const int64_t channels = k.sizes()[0];
  bool fits = expanded_depthwise_available() && call.channels_last_output && is_channels_last(x) && !call.residual &&
              !call.input_scale && w.dtype() == ScalarType::FLOAT32 && w.dim() == 4 && w.sizes()[0] == channels &&
              w.sizes()[1] == 1 && call.groups == channels && k.storage()->constant() &&
              (!call.bias || (call.bias->dtype() == ScalarType::FLOAT32 && call.bias->sizes() == std::vector<int64_t>{channels}));
  for (size_t i = 0; fits && i < 2; ++i) {
    fits = call.dilation[i] == 1 && call.stride[i] > 0 && call.pad_begin[i] >= 0 && call.pad_end[i] >= 0 &&
           x.sizes()[2 + i] + call.pad_begin[i] + call.pad_end[i] >= w.sizes()[2 + i];
  }
  if (!fits) return false;
  Tensor taps_weight = contiguous_as(w, ScalarType::FLOAT32), bias = call.bias ? contiguous_as(*call.bias, ScalarType::FLOAT32) : Tensor();
  if (call.batch_norm) NRT_RETURN_IF_ERROR(fold_into(ctx, *call.batch_norm, taps_weight, bias));
  const int64_t kh = w.sizes()[2], kw = w.sizes()[3];
  const int64_t out_h = (x.sizes()[2] + call.pad_begin[0] + call.pad_end[0] - kh) / call.stride[0] + 1;
  const int64_t out_w = (x.sizes()[3] + call.pad_begin[1] + call.pad_end[1] - kw) / call.stride[1] + 1;
  LaidOutWeights packed;
  try {
    packed = pointwise_packed_weights(channels, x.sizes()[1], k.data<float>(), k.storage());
  } catch (const dnnl::error&) {
    return false;
  }
  const DepthwiseTaps taps(channels, kh, kw, taps_weight.data<float>(),
                           taps_weight.storage()->constant() ? taps_weight.storage() : nullptr);
  NRT_TRY(out, bind_channels_last_output(ctx, 0, {x.sizes()[0], channels, out_h, out_w}));
  ExpandedDepthwise block;
  block.batches = x.sizes()[0];
  block.height = x.sizes()[2];
  block.width = x.sizes()[3];
  block.in_channels = x.sizes()[1];
  block.channels = channels;
  block.packed = static_cast<const float*>(packed.memory.get_data_handle());
  block.expand_bias = b.defined() ? b.data<float>() : nullptr;
  block.expand_clamp = output_clamp_of(e.activation);
  block.expand_silu = e.activation.kind == ConvolutionActivation::Kind::kSilu;
  block.window = {{kh, kw}, {call.stride[0], call.stride[1]}, {call.pad_begin[0], call.pad_begin[1]}, x.sizes()[3], out_w, channels};
  block.out_h = out_h;
  block.taps = taps.data();
  block.bias = bias.defined() ? bias.data<float>() : nullptr;
  block.clamp = output_clamp_of(call.activation);
  expanded_depthwise(block, x.data<float>(), out->data<float>());
  if (call.activation.kind == ConvolutionActivation::Kind::kSilu) apply_activation<float>(call.activation, *out);
  return true;
}

// A convolution whose input is an expansion's result (convolution_epilogue.h's kExpansionWeight):
// in one pass where run_expanded_pass applies, else the expansion's result computed into a
// tensor of its own (channels-last where the input is), then the convolution on it.
Status run_expanded(KernelContext& ctx, ConvolutionCall call) {
  const Expansion e = std::move(*call.expansion);
  call.expansion.reset();
  const Tensor& x = call.input;
  const Tensor& weight = e.weight;
  if (x.dtype() != ScalarType::FLOAT32 || weight.dtype() != ScalarType::FLOAT32 || x.dim() != 4 || weight.dim() != 4 ||
      weight.sizes()[1] != x.sizes()[1] || weight.sizes()[2] != 1 || weight.sizes()[3] != 1 || call.spatial != 2 ||
      !call.batched) {
    return ctx.error("the fused expansion " + weight.type_string() + " must be a float32 1x1 convolution of the float32 input " +
                     x.type_string());
  }
  const int64_t channels = weight.sizes()[0];
  if (e.bias && (e.bias->dtype() != ScalarType::FLOAT32 || e.bias->sizes() != std::vector<int64_t>{channels})) {
    return ctx.error("the fused expansion's bias " + e.bias->type_string() + " must be float32 with " +
                     std::to_string(channels) + " elements");
  }
  Tensor k = contiguous_as(weight, ScalarType::FLOAT32), b = e.bias ? contiguous_as(*e.bias, ScalarType::FLOAT32) : Tensor();
  if (e.batch_norm) NRT_RETURN_IF_ERROR(fold_into(ctx, *e.batch_norm, k, b));
  NRT_TRY(done, run_expanded_pass(ctx, call, e, k, b));
  if (*done) return Status::Ok();
  const bool nhwc = is_channels_last(x) && !x.is_contiguous();
  const Tensor input = nhwc ? x : contiguous_as(x, ScalarType::FLOAT32);
  const Tensor expanded = empty_image({x.sizes()[0], channels, x.sizes()[2], x.sizes()[3]}, nhwc);
  conv_forward<float>(canonical_form(input, false, 1), canonical_form(k, false, 1), b, ConvParams{}, e.activation,
                      canonical_form(expanded, false, 1), nhwc, nhwc);
  call.input = expanded;
  return run_convolution(ctx, std::move(call));
}

// The fused pass of a depthwise convolution and its projection (projected_depthwise.h), where
// both are float32 with a program's projection weights, the input and output channels-last:
// false, having done nothing, elsewhere. `taps_weight`, `taps_bias`: the depthwise convolution's,
// its batch norm folded; out_h and out_w its result's.
Result<bool> run_projected_pass(KernelContext& ctx, const ConvolutionCall& call, const DepthwiseStage& d,
                                const Tensor& taps_weight, const Tensor& taps_bias, int64_t out_h, int64_t out_w) {
  const Tensor& x = call.input;
  const Tensor& w = call.weight;
  const int64_t channels = x.sizes()[1];
  bool fits = projected_depthwise_available() && call.channels_last_output && is_channels_last(x) &&
              !call.input_scale && w.dtype() == ScalarType::FLOAT32 && w.dim() == 4 && w.sizes()[1] == channels &&
              w.sizes()[2] == 1 && w.sizes()[3] == 1 && call.groups == 1 && w.storage()->constant() &&
              call.activation.kind != ConvolutionActivation::Kind::kSilu &&
              (!call.bias || (call.bias->dtype() == ScalarType::FLOAT32 && call.bias->sizes() == std::vector<int64_t>{w.sizes()[0]}));
  for (size_t i = 0; fits && i < 2; ++i) {
    fits = call.stride[i] == 1 && call.dilation[i] == 1 && call.pad_begin[i] == 0 && call.pad_end[i] == 0;
  }
  if (!fits) return false;
  const int64_t out_channels = w.sizes()[0];
  std::vector<int64_t> out_sizes{x.sizes()[0], out_channels, out_h, out_w};
  NRT_RETURN_IF_ERROR(check_residual(ctx, call.residual, ScalarType::FLOAT32, out_sizes));
  Tensor k = contiguous_as(w, ScalarType::FLOAT32), b = call.bias ? contiguous_as(*call.bias, ScalarType::FLOAT32) : Tensor();
  if (call.batch_norm) NRT_RETURN_IF_ERROR(fold_into(ctx, *call.batch_norm, k, b));
  if (!k.storage()->constant()) return false;
  LaidOutWeights packed;
  try {
    packed = pointwise_packed_weights(out_channels, channels, k.data<float>(), k.storage());
  } catch (const dnnl::error&) {
    return false;
  }
  const int64_t kh = taps_weight.sizes()[2], kw = taps_weight.sizes()[3];
  const DepthwiseTaps taps(channels, kh, kw, taps_weight.data<float>(),
                           taps_weight.storage()->constant() ? taps_weight.storage() : nullptr);
  NRT_TRY(out, bind_channels_last_output(ctx, 0, out_sizes));
  ProjectedDepthwise block;
  block.batches = x.sizes()[0];
  block.height = x.sizes()[2];
  block.window = {{kh, kw}, {d.stride[0], d.stride[1]}, {d.padding[0], d.padding[1]}, x.sizes()[3], out_w, channels};
  block.out_h = out_h;
  block.taps = taps.data();
  block.bias = taps_bias.defined() ? taps_bias.data<float>() : nullptr;
  block.clamp = output_clamp_of(d.activation);
  block.silu = d.activation.kind == ConvolutionActivation::Kind::kSilu;
  block.out_channels = out_channels;
  block.packed = static_cast<const float*>(packed.memory.get_data_handle());
  block.project_bias = b.defined() ? b.data<float>() : nullptr;
  // With a residual, the activation comes after the add, as run_convolution applies it.
  block.project_clamp = call.residual ? OutputClamp{} : output_clamp_of(call.activation);
  projected_depthwise(block, x.data<float>(), out->data<float>());
  if (call.residual) add_residual<float>(*out, *call.residual, call.activation);
  return true;
}

// A convolution whose input is a depthwise convolution's result (convolution_epilogue.h's
// kDepthwiseWeight): in one pass where run_projected_pass applies, else the depthwise result
// computed into a tensor of its own (channels-last where the input is), then the convolution on it.
Status run_projected(KernelContext& ctx, ConvolutionCall call) {
  const DepthwiseStage d = std::move(*call.depthwise);
  call.depthwise.reset();
  const Tensor& x = call.input;
  const Tensor& weight = d.weight;
  if (x.dtype() != ScalarType::FLOAT32 || weight.dtype() != ScalarType::FLOAT32 || x.dim() != 4 || weight.dim() != 4 ||
      weight.sizes()[0] != x.sizes()[1] || weight.sizes()[1] != 1 || call.spatial != 2 || !call.batched ||
      d.stride.size() != 2 || d.padding.size() != 2) {
    return ctx.error("the fused depthwise convolution " + weight.type_string() + " must be a float32 2-D convolution of " +
                     "one input channel per group of the float32 input " + x.type_string());
  }
  const int64_t channels = weight.sizes()[0];
  if (d.bias && (d.bias->dtype() != ScalarType::FLOAT32 || d.bias->sizes() != std::vector<int64_t>{channels})) {
    return ctx.error("the fused depthwise convolution's bias " + d.bias->type_string() + " must be float32 with " +
                     std::to_string(channels) + " elements");
  }
  int64_t out[2];
  for (size_t i = 0; i < 2; ++i) {
    // Padding past a 32-bit count is no image's (and would overflow the extent).
    if (d.padding[i] < 0 || d.padding[i] > INT32_MAX) {
      return ctx.error("the fused depthwise convolution's padding " + std::to_string(d.padding[i]) + " is out of range");
    }
    const int64_t extent = x.sizes()[2 + i] + 2 * d.padding[i] - weight.sizes()[2 + i];
    if (d.stride[i] <= 0 || extent < 0) {
      return ctx.error("the fused depthwise convolution's stride, padding and kernel do not fit the input " +
                       x.type_string());
    }
    out[i] = extent / d.stride[i] + 1;
  }
  Tensor k = contiguous_as(weight, ScalarType::FLOAT32), b = d.bias ? contiguous_as(*d.bias, ScalarType::FLOAT32) : Tensor();
  if (d.batch_norm) NRT_RETURN_IF_ERROR(fold_into(ctx, *d.batch_norm, k, b));
  NRT_TRY(done, run_projected_pass(ctx, call, d, k, b, out[0], out[1]));
  if (*done) return Status::Ok();
  const bool nhwc = is_channels_last(x) && !x.is_contiguous();
  const Tensor input = nhwc ? x : contiguous_as(x, ScalarType::FLOAT32);
  const Tensor convolved = empty_image({x.sizes()[0], channels, out[0], out[1]}, nhwc);
  ConvParams p;
  p.groups = channels;
  for (size_t i = 0; i < 2; ++i) {
    p.stride[1 + i] = d.stride[i];
    p.pad_begin[1 + i] = d.padding[i];
    p.pad_end[1 + i] = d.padding[i];
  }
  conv_forward<float>(canonical_form(input, false, 1), canonical_form(k, false, 1), b, p, d.activation,
                      canonical_form(convolved, false, 1), nhwc, nhwc);
  call.input = convolved;
  return run_convolution(ctx, std::move(call));
}

// convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding,
//             SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups)
Result<ConvolutionCall> read_convolution(const KernelContext& ctx) {
  ConvolutionCall call;
  NRT_TRY(input, ctx.tensor("input", 0));
  NRT_TRY(weight, ctx.tensor("weight", 1));
  NRT_TRY(bias, ctx.optional_tensor("bias", 2));
  NRT_TRY(transposed, ctx.boolean("transposed", 6, false));
  if (*transposed) return ctx.error("transposed convolution is not supported");
  if (weight->dim() < 3 || weight->dim() > 5) {
    return ctx.error("only 1-D, 2-D and 3-D convolutions are supported, weight is " + shape_string(weight->sizes()));
  }
  call.spatial = static_cast<size_t>(weight->dim() - 2);
  call.batched = input->dim() == weight->dim();
  NRT_TRY(stride, expand_list(ctx, "stride", 3, {1}, call.spatial));
  NRT_TRY(padding, expand_list(ctx, "padding", 4, {0}, call.spatial));
  NRT_TRY(dilation, expand_list(ctx, "dilation", 5, {1}, call.spatial));
  NRT_TRY(groups, ctx.int64("groups", 8, 1));
  call.input = std::move(*input);
  call.weight = std::move(*weight);
  call.bias = std::move(*bias);
  call.stride = std::move(*stride);
  call.dilation = std::move(*dilation);
  call.pad_begin = *padding;
  call.pad_end = *padding;
  call.groups = *groups;
  return call;
}

// conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, SymInt[2] padding=0,
//        SymInt[2] dilation=1, SymInt groups=1); conv1d and conv3d likewise; the .padding overloads take
// padding as "valid" or "same" (stride 1; an odd total pads one more at the end, as torch does).
Result<ConvolutionCall> read_conv_nd(const KernelContext& ctx, size_t spatial, bool string_padding) {
  ConvolutionCall call;
  call.spatial = spatial;
  NRT_TRY(input, ctx.tensor("input", 0));
  NRT_TRY(weight, ctx.tensor("weight", 1));
  NRT_TRY(bias, ctx.optional_tensor("bias", 2));
  call.batched = input->dim() == static_cast<int64_t>(spatial + 2);
  NRT_TRY(stride, expand_list(ctx, "stride", 3, {1}, spatial));
  NRT_TRY(dilation, expand_list(ctx, "dilation", 5, {1}, spatial));
  NRT_TRY(groups, ctx.int64("groups", 6, 1));
  if (string_padding) {
    const RuntimeValue* v = ctx.find("padding", 4);
    const auto* mode = v ? std::get_if<std::string>(v) : nullptr;
    const std::string padding = mode ? *mode : "valid";
    call.pad_begin.assign(spatial, 0);
    call.pad_end.assign(spatial, 0);
    if (padding == "same") {
      if (weight->dim() != static_cast<int64_t>(spatial + 2)) return ctx.error("weight " + shape_string(weight->sizes()) + " has the wrong rank");
      for (size_t i = 0; i < spatial; ++i) {
        if ((*stride)[i] != 1) return ctx.error("padding='same' needs stride 1");
        const int64_t total = (*dilation)[i] * (weight->sizes()[2 + i] - 1);
        call.pad_begin[i] = total / 2;
        call.pad_end[i] = total - total / 2;
      }
    } else if (padding != "valid") {
      return ctx.error("padding must be 'valid' or 'same', got '" + padding + "'");
    }
  } else {
    NRT_TRY(padding, expand_list(ctx, "padding", 4, {0}, spatial));
    call.pad_begin = *padding;
    call.pad_end = *padding;
  }
  call.input = std::move(*input);
  call.weight = std::move(*weight);
  call.bias = std::move(*bias);
  call.stride = std::move(*stride);
  call.dilation = std::move(*dilation);
  call.groups = *groups;
  return call;
}

// The convolution overloads: how each reads its arguments.
struct ConvolutionForm {
  const char* target;
  size_t spatial;  // 0: aten::convolution (the weight's rank says)
  bool string_padding;
};
constexpr ConvolutionForm kForms[] = {
    {"aten::convolution.default", 0, false}, {"aten::conv2d.default", 2, false}, {"aten::conv2d.padding", 2, true},
    {"aten::conv1d.default", 1, false},      {"aten::conv1d.padding", 1, true},  {"aten::conv3d.default", 3, false},
    {"aten::conv3d.padding", 3, true}};

Result<ConvolutionCall> read_call(const KernelContext& ctx, const ConvolutionForm& form) {
  return form.spatial == 0 ? read_convolution(ctx) : read_conv_nd(ctx, form.spatial, form.string_padding);
}

// What a convolution node keeps between runs (kernel_state.h): its call with the batch norm
// folded into the weights as run_convolution folds it, less its per-run tensors, and where those
// lie among its arguments. In a program of 42 tiny convolutions a node's fixed cost was 2.2 us,
// a third of it reading the arguments by name into tensors and finding the folded weights.
struct PreparedConvolution final : KernelState {
  ConstantArguments constants;
  ConvolutionCall call;
  int input = -1, residual = -1, input_scale = -1;  // argument indices, -1: the node has none
  bool had_residual = false, had_input_scale = false;  // tensors when kept (else None or absent)
};

// The arguments a call reads afresh: the node's per-run tensors.
constexpr std::string_view kPerCall[] = {"input", convolution_epilogue::kResidual, convolution_epilogue::kInputScale};

// The index of the argument holding `value` (KernelContext::find's), or -1.
int argument_index(const KernelContext& ctx, const RuntimeValue* value) {
  const std::span<const NamedValue> arguments = ctx.inputs();
  for (size_t i = 0; value != nullptr && i < arguments.size(); ++i) {
    if (arguments[i].value == value) return static_cast<int>(i);
  }
  return -1;
}

// The tensor argument `index` holds, or nullptr (no such argument, or None).
const Tensor* tensor_argument(const KernelContext& ctx, int index) {
  return index < 0 ? nullptr : std::get_if<Tensor>(ctx.inputs()[static_cast<size_t>(index)].value);
}

// What `call` leaves to keep where its parts besides the per-run tensors are constant
// (constant_arguments.h): a float32 call without an expansion or depthwise stage, whose weights'
// rank and bias fit. nullptr otherwise; the call then runs as read, which reports what is wrong.
std::unique_ptr<PreparedConvolution> prepare(const KernelContext& ctx, const ConvolutionCall& call) {
  const Tensor& weight = call.weight;
  if (call.input.dtype() != ScalarType::FLOAT32 || weight.dtype() != ScalarType::FLOAT32 ||
      (call.bias && call.bias->dtype() != ScalarType::FLOAT32) || call.expansion || call.depthwise ||
      weight.dim() != static_cast<int64_t>(call.spatial + 2) ||
      (call.bias && call.bias->sizes() != std::vector<int64_t>{weight.sizes()[0]})) {
    return nullptr;
  }
  auto constants = ConstantArguments::of(ctx, kPerCall);
  if (!constants) return nullptr;
  auto prepared = std::make_unique<PreparedConvolution>();
  prepared->constants = std::move(*constants);
  prepared->input = argument_index(ctx, ctx.find("input", 0));
  prepared->residual = argument_index(ctx, ctx.find(convolution_epilogue::kResidual, -1));
  prepared->input_scale = argument_index(ctx, ctx.find(convolution_epilogue::kInputScale, -1));
  if (prepared->input < 0) return nullptr;
  prepared->had_residual = call.residual.has_value();
  prepared->had_input_scale = call.input_scale.has_value();
  ConvolutionCall kept = call;
  kept.input = Tensor();
  kept.residual.reset();
  kept.input_scale.reset();
  if (kept.batch_norm) {
    Tensor k, b;
    if (!folded_weights(ctx, call, ScalarType::FLOAT32, k, b)) return nullptr;
    kept.weight = k.as_strided(weight.sizes(), Tensor::contiguous_strides(weight.sizes()), k.storage_offset());
    kept.bias = b.defined() ? std::optional<Tensor>(b) : std::nullopt;
    kept.batch_norm.reset();
  }
  prepared->call = std::move(kept);
  return prepared;
}

// The call `prepared` keeps, with this run's tensors, where ctx's constant arguments are the ones
// it was kept from and the per-run ones are of the kinds they were (a tensor, or None where the
// kept call had none) and the input of the rank it had; else nullopt.
std::optional<ConvolutionCall> kept_call(const KernelContext& ctx, const PreparedConvolution& prepared) {
  if (!prepared.constants.match(ctx)) return std::nullopt;
  const Tensor* input = tensor_argument(ctx, prepared.input);
  const Tensor* residual = tensor_argument(ctx, prepared.residual);
  const Tensor* input_scale = tensor_argument(ctx, prepared.input_scale);
  const ConvolutionCall& call = prepared.call;
  if (input == nullptr || input->dtype() != ScalarType::FLOAT32 ||
      (input->dim() == call.weight.dim()) != call.batched || (residual != nullptr) != prepared.had_residual ||
      (input_scale != nullptr) != prepared.had_input_scale) {
    return std::nullopt;
  }
  ConvolutionCall now = call;
  now.input = *input;
  if (residual != nullptr) now.residual = *residual;
  if (input_scale != nullptr) now.input_scale = *input_scale;
  return now;
}

// Runs a convolution node: from what it kept where that still applies (kept_call), else from its
// arguments as `read` reads them, keeping them for the next run once the call succeeded.
template <class Read>
Status run_node(KernelContext& ctx, Read read) {
  KernelStateSlot* slot = ctx.kernel_state();
  if (slot != nullptr && *slot != nullptr) {
    const auto* prepared = dynamic_cast<const PreparedConvolution*>(slot->get());
    if (prepared != nullptr) {
      if (auto call = kept_call(ctx, *prepared)) return run_convolution(ctx, std::move(*call));
    }
    slot->reset();
  }
  NRT_TRY(call, read(ctx));
  std::unique_ptr<PreparedConvolution> prepared = slot != nullptr ? prepare(ctx, *call) : nullptr;
  NRT_RETURN_IF_ERROR(run_convolution(ctx, std::move(*call)));
  if (prepared != nullptr) *slot = std::move(prepared);
  return Status::Ok();
}

template <size_t kForm>
Status convolution(KernelContext& ctx) {
  return run_node(ctx, [](const KernelContext& c) { return read_call(c, kForms[kForm]); });
}

// A fused node's batch norm and activation under `names` (its own, or its expansion's).
Status read_batch_norm_and_activation(const KernelContext& ctx, const convolution_epilogue::EpilogueNames& names,
                                      std::optional<BatchNormParameters>& batch_norm, ConvolutionActivation& activation) {
  if (ctx.find(names.batch_norm_mean, -1) != nullptr) {
    BatchNormParameters parameters;
    NRT_TRY(weight, ctx.optional_tensor(names.batch_norm_weight, -1));
    NRT_TRY(bias, ctx.optional_tensor(names.batch_norm_bias, -1));
    NRT_TRY(mean, ctx.tensor(names.batch_norm_mean, -1));
    NRT_TRY(var, ctx.tensor(names.batch_norm_var, -1));
    NRT_TRY(eps, ctx.real(names.batch_norm_eps, -1));
    parameters.weight = std::move(*weight);
    parameters.bias = std::move(*bias);
    parameters.running_mean = std::move(*mean);
    parameters.running_var = std::move(*var);
    parameters.eps = *eps;
    batch_norm = std::move(parameters);
  }
  const RuntimeValue* kind = ctx.find(names.activation, -1);
  if (kind == nullptr) return Status::Ok();
  const auto* name = std::get_if<std::string>(kind);
  using Kind = ConvolutionActivation::Kind;
  if (name != nullptr && *name == "relu") {
    activation.kind = Kind::kRelu;
  } else if (name != nullptr && *name == "silu") {
    activation.kind = Kind::kSilu;
  } else if (name != nullptr && *name == "hardtanh") {
    NRT_TRY(low, ctx.real(names.activation_min, -1, -1.0));  // hardtanh's defaults
    NRT_TRY(high, ctx.real(names.activation_max, -1, 1.0));
    activation = {Kind::kClip, *low, *high};
  } else {
    return ctx.error("a fused convolution's activation must be relu, hardtanh or silu");
  }
  return Status::Ok();
}

// A fused node's depthwise convolution (convolution_epilogue.h's kDepthwiseWeight), where it has one.
Status read_depthwise_stage(const KernelContext& ctx, ConvolutionCall& call) {
  namespace names = convolution_epilogue;
  if (ctx.find(names::kDepthwiseWeight, -1) == nullptr) return Status::Ok();
  DepthwiseStage stage;
  NRT_TRY(weight, ctx.tensor(names::kDepthwiseWeight, -1));
  NRT_TRY(bias, ctx.optional_tensor(names::kDepthwiseBias, -1));
  NRT_TRY(stride, expand_list(ctx, names::kDepthwiseStride, -1, {1}, 2));
  NRT_TRY(padding, expand_list(ctx, names::kDepthwisePadding, -1, {0}, 2));
  stage.weight = std::move(*weight);
  stage.bias = std::move(*bias);
  stage.stride = std::move(*stride);
  stage.padding = std::move(*padding);
  NRT_RETURN_IF_ERROR(read_batch_norm_and_activation(ctx, names::kDepthwiseEpilogue, stage.batch_norm, stage.activation));
  call.depthwise = std::move(stage);
  return Status::Ok();
}

// The epilogue arguments of a fused node (executor/runtime/convolution_epilogue.h).
Status read_epilogue(const KernelContext& ctx, ConvolutionCall& call) {
  namespace names = convolution_epilogue;
  NRT_RETURN_IF_ERROR(read_batch_norm_and_activation(ctx, names::kOwnEpilogue, call.batch_norm, call.activation));
  NRT_TRY(residual, ctx.optional_tensor(names::kResidual, -1));
  call.residual = std::move(*residual);
  NRT_TRY(input_scale, ctx.optional_tensor(names::kInputScale, -1));
  call.input_scale = std::move(*input_scale);
  NRT_TRY(channels_last, ctx.boolean(names::kChannelsLastOutput, -1, false));
  call.channels_last_output = *channels_last;
  NRT_RETURN_IF_ERROR(read_depthwise_stage(ctx, call));
  if (ctx.find(names::kExpansionWeight, -1) == nullptr) return Status::Ok();
  Expansion expansion;
  NRT_TRY(weight, ctx.tensor(names::kExpansionWeight, -1));
  NRT_TRY(bias, ctx.optional_tensor(names::kExpansionBias, -1));
  expansion.weight = std::move(*weight);
  expansion.bias = std::move(*bias);
  NRT_RETURN_IF_ERROR(
      read_batch_norm_and_activation(ctx, names::kExpansionEpilogue, expansion.batch_norm, expansion.activation));
  call.expansion = std::move(expansion);
  return Status::Ok();
}

// A fused convolution node: its own target (the KernelContext's) says how to read the
// convolution's arguments; the epilogue's come by name.
Status convolution_with_epilogue(KernelContext& ctx) {
  for (const ConvolutionForm& form : kForms) {
    if (ctx.target() != form.target) continue;
    return run_node(ctx, [&form](const KernelContext& c) -> Result<ConvolutionCall> {
      NRT_TRY(call, read_call(c, form));
      NRT_RETURN_IF_ERROR(read_epilogue(c, *call));
      return call;
    });
  }
  return ctx.error("is not a convolution a fused node can run");
}

constexpr DeviceKind kCpu = DeviceKind::kCpu;
const KernelRegistration kRegistrations[] = {
    {kForms[0].target, kCpu, {&convolution<0>, false}},
    {kForms[1].target, kCpu, {&convolution<1>, false}},
    {kForms[2].target, kCpu, {&convolution<2>, false}},
    {kForms[3].target, kCpu, {&convolution<3>, false}},
    {kForms[4].target, kCpu, {&convolution<4>, false}},
    {kForms[5].target, kCpu, {&convolution<5>, false}},
    {kForms[6].target, kCpu, {&convolution<6>, false}},
    {convolution_epilogue::kKernelTarget, kCpu, {&convolution_with_epilogue, false}},
};

}  // namespace
}  // namespace nrt::exec::cpu
