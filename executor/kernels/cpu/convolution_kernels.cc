// 2-D convolution (1-D as height 1) through im2col + BLAS, per batch element and group: the
// input patches of one group form a [C/g * kh * kw, oh * ow] matrix that the group's weights
// [oc/g, C/g * kh * kw] multiply. Floating dtypes only (float16/bfloat16 computed in float32).
// Transposed convolution is not supported.
#include <algorithm>

#include "executor/kernels/cpu/broadcast.h"
#include "executor/kernels/cpu/dtype_dispatch.h"
#include "executor/kernels/cpu/gemm.h"
#include "executor/kernels/cpu/output_slot.h"
#include "executor/kernels/cpu/tensor_copy.h"

namespace nrt::exec::cpu {
namespace {

struct Conv2dParams {
  int64_t stride[2] = {1, 1};
  int64_t pad_begin[2] = {0, 0};
  int64_t pad_end[2] = {0, 0};
  int64_t dilation[2] = {1, 1};
  int64_t groups = 1;
};

template <class C>
void im2col(const C* image, int64_t channels, int64_t height, int64_t width, int64_t kh, int64_t kw,
            int64_t out_h, int64_t out_w, const Conv2dParams& p, C* columns) {
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t ki = 0; ki < kh; ++ki) {
      for (int64_t kj = 0; kj < kw; ++kj) {
        C* row = columns + ((c * kh + ki) * kw + kj) * out_h * out_w;
        for (int64_t oy = 0; oy < out_h; ++oy) {
          const int64_t y = oy * p.stride[0] - p.pad_begin[0] + ki * p.dilation[0];
          for (int64_t ox = 0; ox < out_w; ++ox) {
            const int64_t x = ox * p.stride[1] - p.pad_begin[1] + kj * p.dilation[1];
            row[oy * out_w + ox] =
                (y >= 0 && y < height && x >= 0 && x < width) ? image[(c * height + y) * width + x] : C(0);
          }
        }
      }
    }
  }
}

// input [N, C, H, W], weight [OC, C/g, KH, KW], bias [OC] or undefined; contiguous, compute dtype.
template <class C>
void conv2d_forward(const Tensor& input, const Tensor& weight, const Tensor& bias, const Conv2dParams& p,
                    const Tensor& out) {
  const int64_t batches = input.sizes()[0], channels = input.sizes()[1];
  const int64_t height = input.sizes()[2], width = input.sizes()[3];
  const int64_t out_channels = weight.sizes()[0], kh = weight.sizes()[2], kw = weight.sizes()[3];
  const int64_t out_h = out.sizes()[2], out_w = out.sizes()[3];
  const int64_t group_channels = channels / p.groups, group_out = out_channels / p.groups;
  const int64_t patch = group_channels * kh * kw, positions = out_h * out_w;
  const ScalarType dtype = out.dtype();
  const bool direct = kh == 1 && kw == 1 && p.stride[0] == 1 && p.stride[1] == 1 && p.pad_begin[0] == 0 &&
                      p.pad_begin[1] == 0 && p.pad_end[0] == 0 && p.pad_end[1] == 0;
  Tensor columns = direct ? Tensor() : Tensor::empty(dtype, {patch, positions});
  for (int64_t n = 0; n < batches; ++n) {
    for (int64_t g = 0; g < p.groups; ++g) {
      const int64_t input_offset = input.storage_offset() + (n * channels + g * group_channels) * height * width;
      Tensor cols;
      if (direct) {
        cols = input.as_strided({patch, positions}, {positions, 1}, input_offset);
      } else {
        im2col(input.data<C>() + (input_offset - input.storage_offset()), group_channels, height, width, kh, kw,
               out_h, out_w, p, columns.data<C>());
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
  size_t spatial = 2;    // 1 or 2 spatial dims
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
  // Canonical 4-D forms: add the batch dim, and height 1 for 1-D.
  Tensor input = call.input, w = weight;
  if (!call.batched) {
    std::vector<int64_t> sizes = input.sizes(), strides = input.strides();
    sizes.insert(sizes.begin(), 1);
    strides.insert(strides.begin(), 0);
    input = input.as_strided(sizes, strides, input.storage_offset());
  }
  Conv2dParams p;
  p.groups = call.groups;
  const size_t first = call.spatial == 1 ? 1 : 0;  // 1-D parameters go to the width slot
  for (size_t i = 0; i < call.spatial; ++i) {
    p.stride[first + i] = call.stride[i];
    p.dilation[first + i] = call.dilation[i];
    p.pad_begin[first + i] = call.pad_begin[i];
    p.pad_end[first + i] = call.pad_end[i];
  }
  if (call.spatial == 1) {
    auto add_height = [](const Tensor& t) {
      std::vector<int64_t> sizes = t.sizes(), strides = t.strides();
      sizes.insert(sizes.begin() + 2, 1);
      strides.insert(strides.begin() + 2, 0);
      return t.as_strided(sizes, strides, t.storage_offset());
    };
    input = add_height(input);
    w = add_height(w);
  }
  const int64_t channels = input.sizes()[1], out_channels = w.sizes()[0];
  if (p.groups <= 0 || channels % p.groups != 0 || out_channels % p.groups != 0 || w.sizes()[1] * p.groups != channels) {
    return ctx.error("input channels " + std::to_string(channels) + ", weight " + shape_string(weight.sizes()) +
                     " and groups " + std::to_string(p.groups) + " do not fit");
  }
  if (call.bias && call.bias->sizes() != std::vector<int64_t>{out_channels}) {
    return ctx.error("bias " + shape_string(call.bias->sizes()) + " must have " + std::to_string(out_channels) + " elements");
  }
  int64_t out_size[2];
  for (int i = 0; i < 2; ++i) {
    if (p.stride[i] <= 0 || p.dilation[i] <= 0 || p.pad_begin[i] < 0 || p.pad_end[i] < 0) {
      return ctx.error("stride and dilation must be positive and padding non-negative");
    }
    const int64_t extent = input.sizes()[2 + static_cast<size_t>(i)] + p.pad_begin[i] + p.pad_end[i] -
                           p.dilation[i] * (w.sizes()[2 + static_cast<size_t>(i)] - 1) - 1;
    if (extent < 0) return ctx.error("the kernel is larger than the padded input");
    out_size[i] = extent / p.stride[i] + 1;
  }
  std::vector<int64_t> out_sizes{input.sizes()[0], out_channels};
  if (call.spatial == 2) out_sizes.push_back(out_size[0]);
  out_sizes.push_back(out_size[1]);
  if (!call.batched) out_sizes.erase(out_sizes.begin());
  NRT_TRY(slot, OutputSlot::bind(ctx, 0, call.input.dtype(), out_sizes));
  const ScalarType compute = call.input.dtype() == ScalarType::FLOAT64 ? ScalarType::FLOAT64 : ScalarType::FLOAT32;
  const Tensor x = contiguous_as(input, compute), k = contiguous_as(w, compute);
  const Tensor b = call.bias ? contiguous_as(*call.bias, compute) : Tensor();
  Tensor staging = slot->staging(compute);
  const Tensor y = staging.as_strided({input.sizes()[0], out_channels, out_size[0], out_size[1]},
                                      Tensor::contiguous_strides({input.sizes()[0], out_channels, out_size[0], out_size[1]}),
                                      staging.storage_offset());
  if (compute == ScalarType::FLOAT64) {
    conv2d_forward<double>(x, k, b, p, y);
  } else {
    conv2d_forward<float>(x, k, b, p, y);
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
  if (weight->dim() != 3 && weight->dim() != 4) {
    return ctx.error("only 1-D and 2-D convolutions are supported, weight is " + shape_string(weight->sizes()));
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
//        SymInt[2] dilation=1, SymInt groups=1); conv1d likewise; the .padding overloads take
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
};

}  // namespace
}  // namespace nrt::exec::cpu
