// Convolution (1-D, 2-D and 3-D). Float32 (and float16/bfloat16, computed in float32) goes to
// oneDNN (onednn_convolution.h) where it has an implementation for the shape. Otherwise, and for
// float64: im2col + BLAS, per batch element and group (the input patches of one group form a
// [C/g * kd * kh * kw, od * oh * ow] matrix that the group's weights [oc/g, C/g * kd * kh * kw]
// multiply), and depthwise convolutions (one input channel per group) directly. 1-D and 2-D run
// as 3-D with depth (and height) 1. Floating dtypes only. Transposed convolution is not supported.
#include <algorithm>

#include "executor/kernels/cpu/broadcast.h"
#include "executor/kernels/cpu/dtype_dispatch.h"
#include "executor/kernels/cpu/gemm.h"
#include "executor/kernels/cpu/onednn_convolution.h"
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

// input [N, C, D, H, W], weight [OC, C/g, KD, KH, KW], bias [OC] or undefined, out
// [N, OC, OD, OH, OW]; contiguous, compute dtype.
template <class C>
void conv_forward(const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvParams& p,
                  const Tensor& out) {
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
    OneDnnConvolution shape{batches, channels, out_channels, p.groups, {}, {}, {}, {}, {}, {}, {}};
    for (size_t i = 0; i < kSpatial; ++i) {
      shape.in[i] = e.in[i];
      shape.kernel[i] = e.kernel[i];
      shape.out[i] = e.out[i];
      shape.stride[i] = p.stride[i];
      shape.dilation[i] = p.dilation[i];
      shape.pad_begin[i] = p.pad_begin[i];
      shape.pad_end[i] = p.pad_end[i];
    }
    // A loaded program's weights: oneDNN may keep their reordered copy (onednn_convolution.h).
    const std::shared_ptr<const Storage> weight_storage =
        weight.storage()->constant() ? std::shared_ptr<const Storage>(weight.storage()) : nullptr;
    if (onednn_convolution_forward(shape, input.data<float>(), weight.data<float>(),
                                   bias.defined() ? bias.data<float>() : nullptr, out.data<float>(), weight_storage)) {
      return;
    }
  }
  const int64_t volume = e.in[0] * e.in[1] * e.in[2];
  const int64_t group_channels = channels / p.groups, group_out = out_channels / p.groups;
  if (group_channels == 1 && p.groups > 1) {
    depthwise_forward<C>(input, weight, bias, p, e, out);
    return;
  }
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

struct ConvolutionCall {
  Tensor input, weight;
  std::optional<Tensor> bias;
  std::vector<int64_t> stride, dilation;
  std::vector<int64_t> pad_begin, pad_end;
  int64_t groups = 1;
  size_t spatial = 2;    // 1, 2 or 3 spatial dims
  bool batched = true;   // false: input lacks the batch dim
};

Status run_convolution(KernelContext& ctx, ConvolutionCall call) {
  const Tensor& weight = call.weight;
  if (!is_floating_dtype(call.input.dtype())) return unsupported_dtype(ctx, call.input.dtype());
  if (weight.dtype() != call.input.dtype() || (call.bias && call.bias->dtype() != call.input.dtype())) {
    return ctx.error("input, weight and bias must share one dtype");
  }
  const auto rank = static_cast<int64_t>(call.spatial + 2);
  if (weight.dim() != rank || call.input.dim() != rank - (call.batched ? 0 : 1)) {
    return ctx.error("input " + shape_string(call.input.sizes()) + " and weight " + shape_string(weight.sizes()) +
                     " do not describe a " + std::to_string(call.spatial) + "-D convolution");
  }
  // The canonical 5-D form: add the batch dim, and depth (and height) 1 for fewer spatial dims.
  const size_t missing = kSpatial - call.spatial;  // leading spatial slots of size 1
  auto canonical = [&](const Tensor& t, bool add_batch) {
    std::vector<int64_t> sizes = t.sizes(), strides = t.strides();
    if (add_batch) {
      sizes.insert(sizes.begin(), 1);
      strides.insert(strides.begin(), 0);
    }
    sizes.insert(sizes.begin() + 2, missing, 1);
    strides.insert(strides.begin() + 2, missing, 0);
    return t.as_strided(sizes, strides, t.storage_offset());
  };
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
  NRT_TRY(slot, OutputSlot::bind(ctx, 0, call.input.dtype(), out_sizes));
  const ScalarType compute = call.input.dtype() == ScalarType::FLOAT64 ? ScalarType::FLOAT64 : ScalarType::FLOAT32;
  const Tensor x = contiguous_as(input, compute), k = contiguous_as(w, compute);
  const Tensor b = call.bias ? contiguous_as(*call.bias, compute) : Tensor();
  Tensor staging = slot->staging(compute);
  const Tensor y = staging.as_strided(canonical_out, Tensor::contiguous_strides(canonical_out), staging.storage_offset());
  if (compute == ScalarType::FLOAT64) {
    conv_forward<double>(x, k, b, p, y);
  } else {
    conv_forward<float>(x, k, b, p, y);
  }
  slot->commit();
  return Status::Ok();
}

// convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding,
//             SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups)
Status convolution(KernelContext& ctx) {
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
  call.input = *input;
  call.weight = *weight;
  call.bias = *bias;
  call.stride = *stride;
  call.dilation = *dilation;
  call.pad_begin = *padding;
  call.pad_end = *padding;
  call.groups = *groups;
  return run_convolution(ctx, std::move(call));
}

// conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, SymInt[2] padding=0,
//        SymInt[2] dilation=1, SymInt groups=1); conv1d and conv3d likewise; the .padding overloads take
// padding as "valid" or "same" (stride 1; an odd total pads one more at the end, as torch does).
Status conv_nd(KernelContext& ctx, size_t spatial, bool string_padding) {
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
  call.input = *input;
  call.weight = *weight;
  call.bias = *bias;
  call.stride = *stride;
  call.dilation = *dilation;
  call.groups = *groups;
  return run_convolution(ctx, std::move(call));
}

constexpr DeviceKind kCpu = DeviceKind::kCpu;
const KernelRegistration kRegistrations[] = {
    {"aten::convolution.default", kCpu, {&convolution, false}},
    {"aten::conv2d.default", kCpu, {[](KernelContext& ctx) { return conv_nd(ctx, 2, false); }, false}},
    {"aten::conv2d.padding", kCpu, {[](KernelContext& ctx) { return conv_nd(ctx, 2, true); }, false}},
    {"aten::conv1d.default", kCpu, {[](KernelContext& ctx) { return conv_nd(ctx, 1, false); }, false}},
    {"aten::conv1d.padding", kCpu, {[](KernelContext& ctx) { return conv_nd(ctx, 1, true); }, false}},
    {"aten::conv3d.default", kCpu, {[](KernelContext& ctx) { return conv_nd(ctx, 3, false); }, false}},
    {"aten::conv3d.padding", kCpu, {[](KernelContext& ctx) { return conv_nd(ctx, 3, true); }, false}},
};

}  // namespace
}  // namespace nrt::exec::cpu
