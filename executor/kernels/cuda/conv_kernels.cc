// Convolution and pooling on CUDA. A convolution is im2col (conv_kernels.cu) and one cuBLASLt
// product per group over the batch (the weight read with batch stride 0), plus the bias; 1-D
// convolutions run as 2-D ones one row high. Pooling and inference batch norm are direct kernels.
// cuDNN is not used yet (docs/CUDA.md).
#include <optional>
#include <string>
#include <vector>

#include "executor/kernels/cpu/output_slot.h"
#include "executor/kernels/cuda/conv_launch.h"
#include "executor/kernels/cuda/kernel_support.h"

namespace nrt::exec::cuda {
namespace {

bool is_floating(ScalarType t) {
  return t == ScalarType::FLOAT32 || t == ScalarType::FLOAT64 || t == ScalarType::FLOAT16 || t == ScalarType::BFLOAT16;
}

// A list argument of `spatial` values (one value repeats), or `fallback`.
Result<std::vector<int64_t>> spatial_list(const KernelContext& ctx, std::string_view name, int position,
                                          std::vector<int64_t> fallback, size_t spatial) {
  NRT_TRY(v, ctx.int_list(name, position, fallback));
  std::vector<int64_t> values = v->empty() ? fallback : *v;
  if (values.size() == 1) values.assign(spatial, values[0]);
  if (values.size() != spatial) return ctx.error(std::string(name) + " must have " + std::to_string(spatial) + " values");
  return values;
}

struct Conv {
  Tensor input, weight;
  std::optional<Tensor> bias;
  size_t spatial = 2;
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups = 1;
};

Status run_conv(KernelContext& ctx, Conv c) {
  if (!is_floating(c.input.dtype()) || c.weight.dtype() != c.input.dtype()) {
    return ctx.error("input and weight must share one floating dtype");
  }
  const bool batched = c.input.dim() == static_cast<int64_t>(c.spatial + 2);
  if (!batched && c.input.dim() != static_cast<int64_t>(c.spatial + 1)) return ctx.error("input has the wrong rank");
  if (c.weight.dim() != static_cast<int64_t>(c.spatial + 2)) return ctx.error("weight has the wrong rank");
  NRT_TRY(x, contiguous(ctx, c.input));
  NRT_TRY(wt, contiguous(ctx, c.weight));
  Window2d w;
  w.n = batched ? x->sizes()[0] : 1;
  w.c = x->sizes()[batched ? 1 : 0];
  w.h = c.spatial == 2 ? x->sizes()[x->sizes().size() - 2] : 1;
  w.w = x->sizes().back();
  w.kh = c.spatial == 2 ? wt->sizes()[2] : 1;
  w.kw = wt->sizes().back();
  const size_t last = c.spatial - 1;
  w.stride_h = c.spatial == 2 ? c.stride[0] : 1;
  w.stride_w = c.stride[last];
  w.pad_h = c.spatial == 2 ? c.padding[0] : 0;
  w.pad_w = c.padding[last];
  w.dilation_h = c.spatial == 2 ? c.dilation[0] : 1;
  w.dilation_w = c.dilation[last];
  const int64_t out_channels = wt->sizes()[0];
  if (c.groups < 1 || w.c % c.groups != 0 || out_channels % c.groups != 0 || wt->sizes()[1] * c.groups != w.c) {
    return ctx.error("groups " + std::to_string(c.groups) + " do not divide the channels of input " + c.input.type_string() +
                     " and weight " + c.weight.type_string());
  }
  w.out_h = (w.h + 2 * w.pad_h - w.dilation_h * (w.kh - 1) - 1) / w.stride_h + 1;
  w.out_w = (w.w + 2 * w.pad_w - w.dilation_w * (w.kw - 1) - 1) / w.stride_w + 1;
  if (w.out_h <= 0 || w.out_w <= 0) return ctx.error("the input is smaller than the kernel");
  std::vector<int64_t> sizes;
  if (batched) sizes.push_back(w.n);
  sizes.push_back(out_channels);
  if (c.spatial == 2) sizes.push_back(w.out_h);
  sizes.push_back(w.out_w);
  NRT_TRY(out, cpu::bind_output(ctx, 0, c.input.dtype(), sizes));
  if (out->numel() == 0) return {};
  const int64_t K = w.c * w.kh * w.kw, L = w.out_h * w.out_w, Kg = K / c.groups, Og = out_channels / c.groups;
  Tensor col = Tensor::empty(c.input.dtype(), {w.n, K, L}, out->device());
  NRT_RETURN_IF_ERROR(launch_result(ctx, launch_im2col(c.input.dtype(), w, x->raw_data(), col.raw_data(), context_of(ctx).stream),
                                    "im2col launch"));
  Tensor result = Tensor::empty(c.input.dtype(), {w.n, out_channels, L}, out->device());
  for (int64_t g = 0; g < c.groups; ++g) {
    // [N, Og, L] = weight_g [Og, Kg] (every batch) @ col_g [N, Kg, L]
    const Tensor weight_g = wt->as_strided({w.n, Og, Kg}, {0, Kg, 1}, wt->storage_offset() + g * Og * Kg);
    const Tensor col_g = col.as_strided({w.n, Kg, L}, {K * L, L, 1}, g * Kg * L);
    Tensor product = c.groups == 1 ? result : Tensor::empty(c.input.dtype(), {w.n, Og, L}, out->device());
    NRT_RETURN_IF_ERROR(batched_product(ctx, weight_g, col_g, product, 1.0));
    if (c.groups > 1) {
      NRT_RETURN_IF_ERROR(copy_into(ctx, result.as_strided({w.n, Og, L}, {out_channels * L, L, 1}, g * Og * L), product));
    }
  }
  if (c.bias) {
    // result += bias[o] for every batch and position, in place.
    NRT_TRY(b, as_dtype(ctx, *c.bias, c.input.dtype()));
    ElementwiseLaunch launch;
    const std::vector<int64_t> full{w.n, out_channels, L};
    const std::vector<int64_t> strides[3] = {result.strides(), result.strides(), {0, b->strides()[0], 0}};
    NRT_TRY(indexer, make_indexer(full, strides));
    launch.indexer = *indexer;
    launch.numel = result.numel();
    launch.out = result.raw_data();
    launch.in[0] = result.raw_data();
    launch.in[1] = b->raw_data();
    launch.in_dtype = launch.out_dtype = c.input.dtype();
    NRT_RETURN_IF_ERROR(launch_result(ctx, launch_binary(BinaryOp::kAdd, launch, context_of(ctx).stream), "bias launch"));
  }
  return copy_into(ctx, *out, result.as_strided(sizes, Tensor::contiguous_strides(sizes), 0));
}

// The arguments both signatures share: input, weight, bias at 0-2, stride, padding, dilation at
// 3-5, groups at `groups_position`.
Status read_and_run(KernelContext& ctx, size_t spatial, int groups_position) {
  Conv c;
  c.spatial = spatial;
  NRT_TRY(input, ctx.tensor("input", 0));
  NRT_TRY(weight, ctx.tensor("weight", 1));
  NRT_TRY(bias, ctx.optional_tensor("bias", 2));
  if (const RuntimeValue* p = ctx.find("padding", 4); p != nullptr && std::holds_alternative<std::string>(*p)) {
    return ctx.error("string padding is not supported on CUDA yet");
  }
  NRT_TRY(stride, spatial_list(ctx, "stride", 3, {1}, spatial));
  NRT_TRY(padding, spatial_list(ctx, "padding", 4, {0}, spatial));
  NRT_TRY(dilation, spatial_list(ctx, "dilation", 5, {1}, spatial));
  NRT_TRY(groups, ctx.int64("groups", groups_position, 1));
  c.input = *input;
  c.weight = *weight;
  c.bias = *bias;
  c.stride = *stride;
  c.padding = *padding;
  c.dilation = *dilation;
  c.groups = *groups;
  return run_conv(ctx, std::move(c));
}

// conv2d/conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1)
Status conv_nd(KernelContext& ctx, size_t spatial) { return read_and_run(ctx, spatial, 6); }

// convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
Status convolution(KernelContext& ctx) {
  NRT_TRY(weight, ctx.tensor("weight", 1));
  NRT_TRY(transposed, ctx.boolean("transposed", 6, false));
  if (*transposed) return ctx.error("transposed convolution is not supported on CUDA");
  if (weight->dim() != 3 && weight->dim() != 4) return ctx.error("only 1-D and 2-D convolutions are supported on CUDA");
  return read_and_run(ctx, static_cast<size_t>(weight->dim() - 2), 8);
}

// Planes of a [N, C, H, W] or [C, H, W] input.
Result<Window2d> planes_of(const KernelContext& ctx, const Tensor& t) {
  if (t.dim() != 3 && t.dim() != 4) return ctx.error("pooling needs a 3-D or 4-D input, got " + t.type_string());
  if (!is_floating(t.dtype())) return ctx.error("pooling needs a floating input");
  Window2d w;
  w.n = t.dim() == 4 ? t.sizes()[0] : 1;
  w.c = t.sizes()[t.sizes().size() - 3];
  w.h = t.sizes()[t.sizes().size() - 2];
  w.w = t.sizes().back();
  return w;
}

std::vector<int64_t> pooled_sizes(const Tensor& t, int64_t out_h, int64_t out_w) {
  std::vector<int64_t> sizes(t.sizes().begin(), t.sizes().end() - 2);
  sizes.push_back(out_h);
  sizes.push_back(out_w);
  return sizes;
}

int64_t pooled(int64_t size, int64_t k, int64_t pad, int64_t stride, int64_t dilation, bool ceil_mode) {
  const int64_t span = size + 2 * pad - dilation * (k - 1) - 1;
  int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  if (ceil_mode && (out - 1) * stride >= size + pad) --out;  // the last window must start inside
  return out;
}

// max_pool2d(self, kernel_size, stride=[], padding=0, dilation=1, ceil_mode=False); with_indices
Status max_pool2d(KernelContext& ctx, bool with_indices) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(w, planes_of(ctx, *self));
  NRT_TRY(kernel, spatial_list(ctx, "kernel_size", 1, {}, 2));
  NRT_TRY(stride, spatial_list(ctx, "stride", 2, *kernel, 2));
  NRT_TRY(padding, spatial_list(ctx, "padding", 3, {0}, 2));
  NRT_TRY(dilation, spatial_list(ctx, "dilation", 4, {1}, 2));
  NRT_TRY(ceil_mode, ctx.boolean("ceil_mode", 5, false));
  w->kh = (*kernel)[0];
  w->kw = (*kernel)[1];
  w->stride_h = (*stride)[0];
  w->stride_w = (*stride)[1];
  w->pad_h = (*padding)[0];
  w->pad_w = (*padding)[1];
  w->dilation_h = (*dilation)[0];
  w->dilation_w = (*dilation)[1];
  if (w->pad_h * 2 > w->kh || w->pad_w * 2 > w->kw) return ctx.error("padding must be at most half the kernel size");
  w->out_h = pooled(w->h, w->kh, w->pad_h, w->stride_h, w->dilation_h, *ceil_mode);
  w->out_w = pooled(w->w, w->kw, w->pad_w, w->stride_w, w->dilation_w, *ceil_mode);
  if (w->out_h <= 0 || w->out_w <= 0) return ctx.error("the output would be empty: the input is too small for the window");
  const auto sizes = pooled_sizes(*self, w->out_h, w->out_w);
  NRT_TRY(out, cpu::bind_output(ctx, 0, self->dtype(), sizes));
  NRT_TRY(x, contiguous(ctx, *self));
  Tensor target = out->is_contiguous() ? *out : Tensor::empty(out->dtype(), sizes, out->device());
  Tensor index_target;
  std::optional<cpu::OutputSlot> index_slot;
  if (with_indices) {
    NRT_TRY(s, cpu::OutputSlot::bind_secondary(ctx, 1, ScalarType::INT64, sizes));
    index_slot = *s;
    index_target = index_slot->tensor().is_contiguous() ? index_slot->tensor()
                                                        : Tensor::empty(ScalarType::INT64, sizes, out->device());
  }
  NRT_RETURN_IF_ERROR(launch_result(ctx,
                                    launch_max_pool2d(self->dtype(), *w, x->raw_data(), target.raw_data(),
                                                      with_indices ? index_target.data<int64_t>() : nullptr,
                                                      context_of(ctx).stream),
                                    "max pool launch"));
  if (!out->is_contiguous()) NRT_RETURN_IF_ERROR(copy_into(ctx, *out, target));
  if (with_indices && !index_slot->tensor().is_contiguous()) NRT_RETURN_IF_ERROR(copy_into(ctx, index_slot->tensor(), index_target));
  return {};
}

// adaptive_avg_pool2d(self, output_size)
Status adaptive_avg_pool2d(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(w, planes_of(ctx, *self));
  NRT_TRY(size, spatial_list(ctx, "output_size", 1, {}, 2));
  w->out_h = (*size)[0];
  w->out_w = (*size)[1];
  if (w->out_h <= 0 || w->out_w <= 0) return ctx.error("output_size must be positive");
  const auto sizes = pooled_sizes(*self, w->out_h, w->out_w);
  NRT_TRY(out, cpu::bind_output(ctx, 0, self->dtype(), sizes));
  NRT_TRY(x, contiguous(ctx, *self));
  Tensor target = out->is_contiguous() ? *out : Tensor::empty(out->dtype(), sizes, out->device());
  NRT_RETURN_IF_ERROR(launch_result(
      ctx, launch_adaptive_avg_pool2d(self->dtype(), *w, x->raw_data(), target.raw_data(), context_of(ctx).stream),
      "adaptive average pool launch"));
  if (!out->is_contiguous()) NRT_RETURN_IF_ERROR(copy_into(ctx, *out, target));
  return {};
}

// batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn) and
// _native_batch_norm_legit_no_training(input, weight, bias, running_mean, running_var, momentum, eps).
Status batch_norm(KernelContext& ctx, bool legit) {
  NRT_TRY(input, ctx.tensor("input", 0));
  if (!legit) {
    NRT_TRY(training, ctx.boolean("training", 5));
    if (*training) return ctx.error("training-mode batch norm is not supported (inference only)");
  }
  NRT_TRY(eps, ctx.real("eps", legit ? 6 : 7));
  if (!is_floating(input->dtype()) || input->dim() < 2) return ctx.error("batch norm needs a floating input of rank >= 2");
  const int64_t channels = input->sizes()[1];
  std::optional<Tensor> params[4];
  const char* names[4] = {"weight", "bias", "running_mean", "running_var"};
  for (int k = 0; k < 4; ++k) {
    NRT_TRY(p, ctx.optional_tensor(names[k], k + 1));
    if (*p) {
      if (p->value().numel() != channels) return ctx.error(std::string(names[k]) + " must have one value per channel");
      NRT_TRY(converted, as_dtype(ctx, **p, input->dtype()));
      NRT_TRY(dense, contiguous(ctx, *converted));
      params[k] = *dense;
    }
  }
  if (!params[2] || !params[3]) return ctx.error("inference batch norm needs running_mean and running_var");
  NRT_TRY(out, cpu::bind_output(ctx, 0, input->dtype(), input->sizes()));
  NRT_TRY(x, contiguous(ctx, *input));
  Tensor target = out->is_contiguous() ? *out : Tensor::empty(out->dtype(), out->sizes(), out->device());
  int64_t inner = 1;
  for (size_t d = 2; d < input->sizes().size(); ++d) inner *= input->sizes()[d];
  NRT_RETURN_IF_ERROR(launch_result(
      ctx,
      launch_batch_norm(input->dtype(), x->raw_data(), params[2]->raw_data(), params[3]->raw_data(),
                        params[0] ? params[0]->raw_data() : nullptr, params[1] ? params[1]->raw_data() : nullptr,
                        target.raw_data(), input->sizes()[0], channels, inner, *eps, context_of(ctx).stream),
      "batch norm launch"));
  if (!out->is_contiguous()) NRT_RETURN_IF_ERROR(copy_into(ctx, *out, target));
  if (legit) {
    for (size_t i = 1; i <= 2; ++i) {
      NRT_TRY(stat, cpu::OutputSlot::bind_secondary(ctx, i, input->dtype(), {0}));
    }
  }
  return {};
}

constexpr DeviceKind kCuda = DeviceKind::kCuda;
const KernelRegistration kRegistrations[] = {
    {"aten::conv2d.default", kCuda, {[](KernelContext& ctx) { return conv_nd(ctx, 2); }, false}},
    {"aten::conv1d.default", kCuda, {[](KernelContext& ctx) { return conv_nd(ctx, 1); }, false}},
    {"aten::convolution.default", kCuda, {&convolution, false}},
    {"aten::max_pool2d.default", kCuda, {[](KernelContext& ctx) { return max_pool2d(ctx, false); }, false}},
    {"aten::max_pool2d_with_indices.default", kCuda, {[](KernelContext& ctx) { return max_pool2d(ctx, true); }, false}},
    {"aten::adaptive_avg_pool2d.default", kCuda, {&adaptive_avg_pool2d, false}},
    {"aten::_adaptive_avg_pool2d.default", kCuda, {&adaptive_avg_pool2d, false}},
    {"aten::batch_norm.default", kCuda, {[](KernelContext& ctx) { return batch_norm(ctx, false); }, false}},
    {"aten::_native_batch_norm_legit_no_training.default", kCuda, {[](KernelContext& ctx) { return batch_norm(ctx, true); }, false}},
};

}  // namespace
}  // namespace nrt::exec::cuda
