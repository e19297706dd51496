// 2-D pooling over [N, C, H, W] or [C, H, W] inputs, floating dtypes, computed in float (double
// for float64): max_pool2d (with indices: flat h * W + w positions in the input plane; NaN wins,
// the last NaN of a window as in torch's loop; ties keep the first), avg_pool2d
// (count_include_pad, divisor_override, ceil_mode as torch), and adaptive_avg_pool2d (windows
// [floor(i*H/oh), ceil((i+1)*H/oh))); adaptive_avg_pool1d over [N, C, L] or [C, L] as planes
// one row high; adaptive_avg_pool3d over volumes; and upsample_bilinear2d, the resampling that shares these planes.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <tuple>

#include "executor/runtime/convolution_epilogue.h"
#include "executor/runtime/intra_op_threads.h"
#include "executor/kernels/cpu/broadcast.h"
#include "executor/kernels/cpu/channels_last_layout.h"
#include "executor/kernels/cpu/channels_last_max_pool.h"
#include "executor/kernels/cpu/cpu_features.h"
#include "executor/kernels/cpu/dtype_dispatch.h"
#include "executor/kernels/cpu/output_slot.h"
#include "executor/kernels/cpu/tensor_copy.h"

namespace nrt::exec::cpu {
namespace {

struct Planes {
  Tensor input;  // contiguous compute dtype [planes, D, H, W]
  int64_t planes = 0, depth = 1, height = 0, width = 0;  // depth: 1 unless read as volumes
  std::vector<int64_t> leading;  // [N, C] or [C]
};

// [N, C, H, W] or [C, H, W] as planes; with spatial 3, [N, C, D, H, W] or [C, D, H, W] as volumes.
Result<Planes> read_planes(const KernelContext& ctx, const Tensor& self, int64_t spatial = 2) {
  if (!is_floating_dtype(self.dtype())) return unsupported_dtype(ctx, self.dtype());
  if (self.dim() != spatial + 1 && self.dim() != spatial + 2) {
    return ctx.error("expects a " + std::to_string(spatial + 1) + "-D or " + std::to_string(spatial + 2) +
                     "-D input, got " + shape_string(self.sizes()));
  }
  Planes p;
  p.leading.assign(self.sizes().begin(), self.sizes().end() - spatial);
  if (spatial == 3) p.depth = self.sizes()[self.sizes().size() - 3];
  p.height = self.sizes()[self.sizes().size() - 2];
  p.width = self.sizes().back();
  p.planes = 1;
  for (int64_t s : p.leading) p.planes *= s;
  const ScalarType compute = self.dtype() == ScalarType::FLOAT64 ? ScalarType::FLOAT64 : ScalarType::FLOAT32;
  p.input = contiguous_as(self, compute);
  return p;
}

Result<std::vector<int64_t>> pair(const KernelContext& ctx, std::string_view name, int position,
                                  std::vector<int64_t> fallback) {
  NRT_TRY(values, ctx.int_list(name, position, fallback));
  if (values->size() == 1) values->push_back((*values)[0]);
  if (values->size() != 2) return ctx.error(std::string(name) + " must have 1 or 2 values, got " + shape_string(*values));
  return values;
}

// torch's pooling_output_shape.
int64_t pooled_size(int64_t input, int64_t kernel, int64_t pad, int64_t stride, int64_t dilation, bool ceil_mode) {
  const int64_t numerator = input + 2 * pad - dilation * (kernel - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  // Floor division (the numerator may be negative).
  int64_t out = (numerator >= 0 ? numerator / stride : -((-numerator + stride - 1) / stride)) + 1;
  // The last window must start inside the input or its left padding.
  if (ceil_mode && (out - 1) * stride >= input + pad) --out;
  return out;
}

struct Window {
  int64_t kernel[2], stride[2], pad[2], dilation[2];
  bool ceil_mode = false;
};

// kernel_size, stride (empty: kernel), padding, [dilation], ceil_mode at the given positions.
Result<Window> read_window(const KernelContext& ctx, bool with_dilation) {
  NRT_TRY(kernel, pair(ctx, "kernel_size", 1, {}));
  NRT_TRY(stride_list, ctx.int_list("stride", 2, std::vector<int64_t>{}));
  NRT_TRY(stride, stride_list->empty() ? Result<std::vector<int64_t>>(*kernel) : pair(ctx, "stride", 2, {}));
  NRT_TRY(padding, pair(ctx, "padding", 3, {0}));
  std::vector<int64_t> dilation{1, 1};
  if (with_dilation) {
    NRT_TRY(d, pair(ctx, "dilation", 4, {1}));
    dilation = *d;
  }
  NRT_TRY(ceil_mode, ctx.boolean("ceil_mode", with_dilation ? 5 : 4, false));
  Window w;
  for (size_t i = 0; i < 2; ++i) {
    w.kernel[i] = (*kernel)[i];
    w.stride[i] = (*stride)[i];
    w.pad[i] = (*padding)[i];
    w.dilation[i] = dilation[i];
    if (w.kernel[i] <= 0 || w.stride[i] <= 0 || w.dilation[i] <= 0 || w.pad[i] < 0) {
      return ctx.error("kernel_size, stride and dilation must be positive and padding non-negative");
    }
    if (w.pad[i] > (w.dilation[i] * (w.kernel[i] - 1) + 1) / 2) {
      return ctx.error("padding must be at most half of the effective kernel size");
    }
  }
  w.ceil_mode = *ceil_mode;
  return w;
}

std::vector<int64_t> output_sizes(const Planes& p, int64_t out_h, int64_t out_w) {
  std::vector<int64_t> sizes = p.leading;
  sizes.push_back(out_h);
  sizes.push_back(out_w);
  return sizes;
}

// The running maximum after `v`: a NaN wins and stays, as in max_pool2d's per-window loop; a
// select the compiler vectorises in the loops over a row.
template <class C>
C nan_winning_max(C best, C v) {
  return (v > best || v != v) && best == best ? v : best;
}

}  // namespace

void max_pool_row(const ChannelsLastPoolWindow& w, const float* image, int64_t oy, int64_t out_w, float* row) {
  const int64_t c = w.channels;
  for (int64_t ox = 0; ox < out_w; ++ox) {
    float* target = row + ox * w.out_x;
    std::fill(target, target + c, -std::numeric_limits<float>::infinity());
    for (int64_t ky = 0; ky < w.kernel[0]; ++ky) {
      const int64_t y = oy * w.stride[0] - w.pad[0] + ky * w.dilation[0];
      if (y < 0 || y >= w.H) continue;
      for (int64_t kx = 0; kx < w.kernel[1]; ++kx) {
        const int64_t x = ox * w.stride[1] - w.pad[1] + kx * w.dilation[1];
        if (x < 0 || x >= w.W) continue;
        const float* source = image + y * w.in_y + x * w.in_x;
        for (int64_t k = 0; k < c; ++k) target[k] = nan_winning_max(target[k], source[k]);
      }
    }
  }
}

namespace {

// max_pool2d over a channels-last float32 [N, C, H, W], written channels-last where the plan marked
// the result (only convolutions read it: convolution_epilogue.h's kChannelsLastOutput): each output
// position takes the maximum of its window's rows of C channels, tap by tap in the order of
// plane_max below, with the same nan_winning_max, so the values are the same bits (a row at a time:
// channels_last_max_pool.h). resnet18 at 1 thread: its stem convolution 2.65 -> 2.35 ms (no reorder
// to NCHW), the pool 0.96 -> 0.64, and 0.17 with the AVX-512 row.
Status max_pool2d_channels_last(KernelContext& ctx, const Tensor& self) {
  NRT_TRY(w, read_window(ctx, true));
  const int64_t n = self.sizes()[0], c = self.sizes()[1], H = self.sizes()[2], W = self.sizes()[3];
  const int64_t out_h = pooled_size(H, w->kernel[0], w->pad[0], w->stride[0], w->dilation[0], w->ceil_mode);
  const int64_t out_w = pooled_size(W, w->kernel[1], w->pad[1], w->stride[1], w->dilation[1], w->ceil_mode);
  if (out_h <= 0 || out_w <= 0) return ctx.error("the output would be empty: the input is too small for the window");
  NRT_TRY(out, bind_channels_last_output(ctx, 0, {n, c, out_h, out_w}));
  const ChannelsLastPoolWindow window{{w->kernel[0], w->kernel[1]}, {w->stride[0], w->stride[1]}, {w->pad[0], w->pad[1]},
                                {w->dilation[0], w->dilation[1]}, H, W, c, self.strides()[2], self.strides()[3],
                                out->strides()[3]};
  const float* in = self.data<float>();
  float* result = out->data<float>();
  const int64_t in_n = self.strides()[0], out_n = out->strides()[0], out_y = out->strides()[2];
  const bool avx512 = cpu_has_avx512f();
  parallel_for(n * out_h, std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(out_w * c, 1)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t row = begin; row < end; ++row) {
                   const int64_t image = row / out_h, oy = row % out_h;
                   float* target = result + image * out_n + oy * out_y;
                   if (avx512) {
                     avx512::max_pool_row(window, in + image * in_n, oy, out_w, target);
                   } else {
                     max_pool_row(window, in + image * in_n, oy, out_w, target);
                   }
                 }
               });
  return Status::Ok();
}

// max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1,
//            bool ceil_mode=False); with_indices also returns the int64 positions.
Status max_pool2d(KernelContext& ctx, bool with_indices) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(channels_last, ctx.boolean(convolution_epilogue::kChannelsLastOutput, -1, false));
  if (*channels_last && !with_indices && self->dtype() == ScalarType::FLOAT32 && is_channels_last(*self) &&
      !self->is_contiguous()) {
    return max_pool2d_channels_last(ctx, *self);
  }
  NRT_TRY(planes, read_planes(ctx, *self));
  NRT_TRY(w, read_window(ctx, true));
  const int64_t out_h = pooled_size(planes->height, w->kernel[0], w->pad[0], w->stride[0], w->dilation[0], w->ceil_mode);
  const int64_t out_w = pooled_size(planes->width, w->kernel[1], w->pad[1], w->stride[1], w->dilation[1], w->ceil_mode);
  if (out_h <= 0 || out_w <= 0) return ctx.error("the output would be empty: the input is too small for the window");
  const std::vector<int64_t> sizes = output_sizes(*planes, out_h, out_w);
  NRT_TRY(slot, OutputSlot::bind(ctx, 0, self->dtype(), sizes));
  std::optional<OutputSlot> index_slot;
  Tensor index_staging;
  if (with_indices) {
    NRT_TRY(s, OutputSlot::bind_secondary(ctx, 1, ScalarType::INT64, sizes));
    index_slot = *s;
    index_staging = index_slot->staging(ScalarType::INT64);
  }
  Tensor staging = slot->staging(planes->input.dtype());
  auto run = [&](auto zero) {
    using C = decltype(zero);
    const C* in = planes->input.data<C>();
    C* out = staging.data<C>();
    int64_t* indices = with_indices ? index_staging.data<int64_t>() : nullptr;
    const int64_t H = planes->height, W = planes->width;
    // Without indices: per output row, tap by tap over the row's outputs (a loop the compiler
    // vectorises); NaN wins as in the per-window loop below. Planes split over the intra-op threads.
    auto plane_max = [&](int64_t plane) {
      const C* image = in + plane * H * W;
      C* target = out + plane * out_h * out_w;
      std::fill(target, target + out_h * out_w, -std::numeric_limits<C>::infinity());
      for (int64_t ky = 0; ky < w->kernel[0]; ++ky) {
        for (int64_t kx = 0; kx < w->kernel[1]; ++kx) {
          const int64_t first_x = kx * w->dilation[1] - w->pad[1];
          const int64_t x_lo = first_x >= 0 ? 0 : (-first_x + w->stride[1] - 1) / w->stride[1];
          const int64_t x_hi = W - 1 - first_x < 0 ? 0 : std::min(out_w, (W - 1 - first_x) / w->stride[1] + 1);
          for (int64_t oy = 0; oy < out_h; ++oy) {
            const int64_t y = oy * w->stride[0] - w->pad[0] + ky * w->dilation[0];
            if (y < 0 || y >= H) continue;
            const C* line = image + y * W + first_x;
            C* row = target + oy * out_w;
            const int64_t step = w->stride[1];
            for (int64_t ox = x_lo; ox < x_hi; ++ox) row[ox] = nan_winning_max(row[ox], line[ox * step]);
          }
        }
      }
    };
    if (!with_indices) {
      parallel_for(planes->planes, std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(out_h * out_w, 1)),
                   [&](int64_t begin, int64_t end) {
                     for (int64_t plane = begin; plane < end; ++plane) plane_max(plane);
                   });
      return;
    }
    for (int64_t plane = 0; plane < planes->planes; ++plane) {
      const C* image = in + plane * planes->height * planes->width;
      for (int64_t oy = 0; oy < out_h; ++oy) {
        int64_t y0 = oy * w->stride[0] - w->pad[0];
        const int64_t y1 = std::min(y0 + (w->kernel[0] - 1) * w->dilation[0] + 1, planes->height);
        while (y0 < 0) y0 += w->dilation[0];
        for (int64_t ox = 0; ox < out_w; ++ox) {
          int64_t x0 = ox * w->stride[1] - w->pad[1];
          const int64_t x1 = std::min(x0 + (w->kernel[1] - 1) * w->dilation[1] + 1, planes->width);
          while (x0 < 0) x0 += w->dilation[1];
          int64_t best_index = y0 * planes->width + x0;
          C best = -std::numeric_limits<C>::infinity();
          for (int64_t y = y0; y < y1; y += w->dilation[0]) {
            for (int64_t x = x0; x < x1; x += w->dilation[1]) {
              const C v = image[y * planes->width + x];
              if (v > best || std::isnan(v)) {
                best = v;
                best_index = y * planes->width + x;
              }
            }
          }
          const int64_t o = (plane * out_h + oy) * out_w + ox;
          out[o] = best;
          if (indices) indices[o] = best_index;
        }
      }
    }
  };
  if (planes->input.dtype() == ScalarType::FLOAT64) {
    run(0.0);
  } else {
    run(0.0f);
  }
  slot->commit();
  if (index_slot) index_slot->commit();
  return Status::Ok();
}

// avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False,
//            bool count_include_pad=True, int? divisor_override=None)
Status avg_pool2d(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(planes, read_planes(ctx, *self));
  NRT_TRY(w, read_window(ctx, false));
  NRT_TRY(include_pad, ctx.boolean("count_include_pad", 5, true));
  std::optional<int64_t> divisor;
  if (const RuntimeValue* v = ctx.find("divisor_override", 6); v && !std::holds_alternative<std::monostate>(*v)) {
    NRT_TRY(d, ctx.int64("divisor_override", 6));
    if (*d == 0) return ctx.error("divisor_override must be nonzero");
    divisor = *d;
  }
  const int64_t out_h = pooled_size(planes->height, w->kernel[0], w->pad[0], w->stride[0], 1, w->ceil_mode);
  const int64_t out_w = pooled_size(planes->width, w->kernel[1], w->pad[1], w->stride[1], 1, w->ceil_mode);
  if (out_h <= 0 || out_w <= 0) return ctx.error("the output would be empty: the input is too small for the window");
  NRT_TRY(slot, OutputSlot::bind(ctx, 0, self->dtype(), output_sizes(*planes, out_h, out_w)));
  Tensor staging = slot->staging(planes->input.dtype());
  const int64_t H = planes->height, W = planes->width;
  auto run = [&](auto zero) {
    using C = decltype(zero);
    const C* in = planes->input.data<C>();
    C* out = staging.data<C>();
    for (int64_t plane = 0; plane < planes->planes; ++plane) {
      const C* image = in + plane * H * W;
      for (int64_t oy = 0; oy < out_h; ++oy) {
        for (int64_t ox = 0; ox < out_w; ++ox) {
          int64_t y0 = oy * w->stride[0] - w->pad[0], x0 = ox * w->stride[1] - w->pad[1];
          int64_t y1 = std::min(y0 + w->kernel[0], H + w->pad[0]), x1 = std::min(x0 + w->kernel[1], W + w->pad[1]);
          const int64_t padded_count = (y1 - y0) * (x1 - x0);
          y0 = std::max<int64_t>(y0, 0);
          x0 = std::max<int64_t>(x0, 0);
          y1 = std::min(y1, H);
          x1 = std::min(x1, W);
          const int64_t o = (plane * out_h + oy) * out_w + ox;
          if (y0 >= y1 || x0 >= x1) {
            out[o] = C(0);
            continue;
          }
          double sum = 0.0;
          for (int64_t y = y0; y < y1; ++y) {
            for (int64_t x = x0; x < x1; ++x) sum += static_cast<double>(image[y * W + x]);
          }
          const int64_t count = divisor ? *divisor : *include_pad ? padded_count : (y1 - y0) * (x1 - x0);
          out[o] = static_cast<C>(sum / static_cast<double>(count));
        }
      }
    }
  };
  if (planes->input.dtype() == ScalarType::FLOAT64) {
    run(0.0);
  } else {
    run(0.0f);
  }
  slot->commit();
  return Status::Ok();
}

// Adaptive average pooling of `planes` to out_d x out_h x out_w (out_d 1 for planes), written as
// an output of `out_sizes`. Each output cell averages the window [floor(i*D/od), ceil((i+1)*D/od))
// of every dim.
Status adaptive_average(KernelContext& ctx, ScalarType dtype, const Planes& planes, int64_t out_d, int64_t out_h,
                        int64_t out_w, const std::vector<int64_t>& out_sizes) {
  if (out_d < 0 || out_h < 0 || out_w < 0) return ctx.error("output_size must be non-negative");
  if ((planes.depth == 0 || planes.height == 0 || planes.width == 0) && out_d * out_h * out_w > 0) {
    return ctx.error("cannot pool an empty plane to a non-empty output");
  }
  NRT_TRY(slot, OutputSlot::bind(ctx, 0, dtype, out_sizes));
  Tensor staging = slot->staging(planes.input.dtype());
  const int64_t D = planes.depth, H = planes.height, W = planes.width;
  auto start = [](int64_t i, int64_t in, int64_t out) { return i * in / out; };
  auto end = [](int64_t i, int64_t in, int64_t out) { return ((i + 1) * in + out - 1) / out; };
  // Each window sums in the element type (as torch's CPU kernel: float for float32), in window
  // order; kBlock planes at a time, whose independent sums overlap (one plane's sums are a chain
  // of dependent adds: most of efficientnet's pooling time).
  constexpr int64_t kBlock = 8;
  auto run = [&](auto zero) {
    using C = decltype(zero);
    const C* in = planes.input.data<C>();
    C* out = staging.data<C>();
    const int64_t volume_size = D * H * W, out_volume = out_d * out_h * out_w;
    for (int64_t first = 0; first < planes.planes; first += kBlock) {
      const int64_t count = std::min(kBlock, planes.planes - first);
      const C* volume = in + first * volume_size;
      C* written = out + first * out_volume;
      for (int64_t oz = 0; oz < out_d; ++oz) {
        const int64_t z0 = start(oz, D, out_d), z1 = end(oz, D, out_d);
        for (int64_t oy = 0; oy < out_h; ++oy) {
          const int64_t y0 = start(oy, H, out_h), y1 = end(oy, H, out_h);
          for (int64_t ox = 0; ox < out_w; ++ox) {
            const int64_t x0 = start(ox, W, out_w), x1 = end(ox, W, out_w);
            C sums[kBlock] = {};
            for (int64_t z = z0; z < z1; ++z) {
              for (int64_t y = y0; y < y1; ++y) {
                for (int64_t x = x0; x < x1; ++x) {
                  const int64_t at = (z * H + y) * W + x;
                  for (int64_t k = 0; k < count; ++k) sums[k] += volume[k * volume_size + at];
                }
              }
            }
            const auto divisor = static_cast<C>((z1 - z0) * (y1 - y0) * (x1 - x0));
            const int64_t position = (oz * out_h + oy) * out_w + ox;
            for (int64_t k = 0; k < count; ++k) written[k * out_volume + position] = sums[k] / divisor;
          }
        }
      }
    }
  };
  if (planes.input.dtype() == ScalarType::FLOAT64) {
    run(0.0);
  } else {
    run(0.0f);
  }
  slot->commit();
  return Status::Ok();
}

// The global average of a float32 channels-last [N, C, H, W] (a convolution's result the plan
// had written so, convolution_epilogue.h) without reordering it: each channel's sum runs over
// the positions in the order adaptive_average's windows take them, so the bits are the same.
Status global_average_channels_last(KernelContext& ctx, const Tensor& self) {
  const int64_t n = self.sizes()[0], c = self.sizes()[1], positions = self.sizes()[2] * self.sizes()[3];
  NRT_TRY(slot, OutputSlot::bind(ctx, 0, ScalarType::FLOAT32, {n, c, 1, 1}));
  Tensor staging = slot->staging(ScalarType::FLOAT32);
  const float* in = self.data<float>();
  float* out = staging.data<float>();
  const auto divisor = static_cast<float>(positions);
  for (int64_t image = 0; image < n; ++image) {
    float* sums = out + image * c;
    std::fill(sums, sums + c, 0.0f);
    for (int64_t p = 0; p < positions; ++p) {
      const float* row = in + (image * positions + p) * c;
      for (int64_t k = 0; k < c; ++k) sums[k] += row[k];
    }
    for (int64_t k = 0; k < c; ++k) sums[k] /= divisor;
  }
  slot->commit();
  return Status::Ok();
}

// adaptive_avg_pool2d(Tensor self, SymInt[2] output_size)
Status adaptive_avg_pool2d(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(size, pair(ctx, "output_size", 1, {}));
  if (*size == std::vector<int64_t>{1, 1} && self->dtype() == ScalarType::FLOAT32 && is_channels_last(*self) &&
      !self->is_contiguous() && self->numel() > 0) {
    return global_average_channels_last(ctx, *self);
  }
  NRT_TRY(planes, read_planes(ctx, *self));
  return adaptive_average(ctx, self->dtype(), *planes, 1, (*size)[0], (*size)[1],
                          output_sizes(*planes, (*size)[0], (*size)[1]));
}

// adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) over [N, C, D, H, W] or [C, D, H, W].
Status adaptive_avg_pool3d(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(planes, read_planes(ctx, *self, 3));
  NRT_TRY(size, ctx.int_list("output_size", 1));
  if (size->size() == 1) size->assign(3, (*size)[0]);
  if (size->size() != 3) return ctx.error("output_size must have 1 or 3 values, got " + shape_string(*size));
  std::vector<int64_t> out_sizes = planes->leading;
  out_sizes.insert(out_sizes.end(), size->begin(), size->end());
  return adaptive_average(ctx, self->dtype(), *planes, (*size)[0], (*size)[1], (*size)[2], out_sizes);
}

// adaptive_avg_pool1d(Tensor self, int[1] output_size) over [N, C, L] or [C, L]: the 2-D pooling
// of planes one row high.
Status adaptive_avg_pool1d(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  if (self->dim() != 2 && self->dim() != 3) {
    return ctx.error("expects a 2-D or 3-D input, got " + shape_string(self->sizes()));
  }
  NRT_TRY(size, ctx.int_list("output_size", 1));
  if (size->size() != 1) return ctx.error("output_size must have 1 value, got " + shape_string(*size));
  std::vector<int64_t> sizes = self->sizes(), strides = self->strides();
  sizes.insert(sizes.end() - 1, 1);
  strides.insert(strides.end() - 1, 0);
  NRT_TRY(planes, read_planes(ctx, self->as_strided(sizes, strides, self->storage_offset())));
  std::vector<int64_t> out_sizes = planes->leading;
  out_sizes.push_back((*size)[0]);
  return adaptive_average(ctx, self->dtype(), *planes, 1, 1, (*size)[0], out_sizes);
}

// torch's area_pixel_compute_scale: the source step per output step.
double source_scale(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  if (align_corners) return out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
  if (scale && *scale > 0) return 1.0 / *scale;
  return static_cast<double>(in) / static_cast<double>(out);
}

// upsample_bilinear2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors)
// upsample_bilinear2d(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h, float? scales_w)
// torch's rule per output pixel: source = scale * dst (align_corners) or scale * (dst + 0.5) - 0.5
// clamped at 0; the two neighbours floor(source) and the next (the last stays), weighted by the
// fraction, in the compute dtype (float, double for float64).
Status upsample_bilinear2d(KernelContext& ctx, bool vec) {
  NRT_TRY(self, ctx.tensor(vec ? "input" : "self", 0));
  if (self->dim() != 4) return ctx.error("expects a 4-D input, got " + shape_string(self->sizes()));
  NRT_TRY(planes, read_planes(ctx, *self));
  NRT_TRY(align_corners, ctx.boolean("align_corners", 2));
  std::optional<double> scale_h, scale_w;
  std::vector<int64_t> size;
  if (vec) {
    const RuntimeValue* given = ctx.find("output_size", 1);
    if (given != nullptr && std::holds_alternative<std::vector<int64_t>>(*given)) size = std::get<std::vector<int64_t>>(*given);
    const RuntimeValue* factors = ctx.find("scale_factors", 3);
    if (factors != nullptr && std::holds_alternative<std::vector<double>>(*factors)) {
      const auto& f = std::get<std::vector<double>>(*factors);
      if (f.size() != 2) return ctx.error("scale_factors must have 2 values");
      if (!size.empty()) return ctx.error("give output_size or scale_factors, not both");
      scale_h = f[0];
      scale_w = f[1];
      if (!(f[0] > 0) || !(f[1] > 0) || !std::isfinite(f[0]) || !std::isfinite(f[1])) {
        return ctx.error("scale_factors must be positive and finite");
      }
      size = {static_cast<int64_t>(std::floor(static_cast<double>(planes->height) * f[0])),
              static_cast<int64_t>(std::floor(static_cast<double>(planes->width) * f[1]))};
    }
    if (size.empty()) return ctx.error("needs output_size or scale_factors");
  } else {
    NRT_TRY(s, ctx.int_list("output_size", 1));
    size = *s;
    for (auto [name, position, target] : {std::tuple{"scales_h", 3, &scale_h}, std::tuple{"scales_w", 4, &scale_w}}) {
      if (const RuntimeValue* v = ctx.find(name, position); v != nullptr && std::holds_alternative<double>(*v)) {
        *target = std::get<double>(*v);
      }
    }
  }
  if (size.size() != 2 || size[0] <= 0 || size[1] <= 0) return ctx.error("output_size must be two positive sizes");
  const int64_t H = planes->height, W = planes->width, out_h = size[0], out_w = size[1];
  if (H == 0 || W == 0) return ctx.error("cannot resample an empty plane");
  NRT_TRY(slot, OutputSlot::bind(ctx, 0, self->dtype(), output_sizes(*planes, out_h, out_w)));
  Tensor staging = slot->staging(planes->input.dtype());
  auto run = [&](auto zero) {
    using C = decltype(zero);
    // Per output row (column): the two source rows (columns) and their weights.
    auto taps = [&](int64_t in, int64_t out, std::optional<double> scale, std::vector<int64_t>& lo,
                    std::vector<int64_t>& hi, std::vector<C>& w_hi) {
      const C step = static_cast<C>(source_scale(in, out, *align_corners, scale));
      for (int64_t o = 0; o < out; ++o) {
        C src = *align_corners ? step * static_cast<C>(o) : step * (static_cast<C>(o) + C(0.5)) - C(0.5);
        if (src < C(0)) src = C(0);
        const auto low = static_cast<int64_t>(src);
        lo.push_back(low);
        hi.push_back(low < in - 1 ? low + 1 : low);
        w_hi.push_back(src - static_cast<C>(low));
      }
    };
    std::vector<int64_t> y0, y1, x0, x1;
    std::vector<C> wy, wx;
    taps(H, out_h, scale_h, y0, y1, wy);
    taps(W, out_w, scale_w, x0, x1, wx);
    const C* in = planes->input.data<C>();
    C* out = staging.data<C>();
    for (int64_t plane = 0; plane < planes->planes; ++plane) {
      const C* image = in + plane * H * W;
      for (int64_t oy = 0; oy < out_h; ++oy) {
        const C* r0 = image + y0[static_cast<size_t>(oy)] * W;
        const C* r1 = image + y1[static_cast<size_t>(oy)] * W;
        const C h1 = wy[static_cast<size_t>(oy)], h0 = C(1) - h1;
        for (int64_t ox = 0; ox < out_w; ++ox) {
          const auto a = static_cast<size_t>(x0[static_cast<size_t>(ox)]), b = static_cast<size_t>(x1[static_cast<size_t>(ox)]);
          const C w1 = wx[static_cast<size_t>(ox)], w0 = C(1) - w1;
          out[(plane * out_h + oy) * out_w + ox] = h0 * (w0 * r0[a] + w1 * r0[b]) + h1 * (w0 * r1[a] + w1 * r1[b]);
        }
      }
    }
  };
  if (planes->input.dtype() == ScalarType::FLOAT64) {
    run(0.0);
  } else {
    run(0.0f);
  }
  slot->commit();
  return Status::Ok();
}

constexpr DeviceKind kCpu = DeviceKind::kCpu;
const KernelRegistration kRegistrations[] = {
    {"aten::upsample_bilinear2d.vec", kCpu, {[](KernelContext& ctx) { return upsample_bilinear2d(ctx, true); }, false}},
    {"aten::upsample_bilinear2d.default", kCpu, {[](KernelContext& ctx) { return upsample_bilinear2d(ctx, false); }, false}},
    {"aten::max_pool2d.default", kCpu, {[](KernelContext& ctx) { return max_pool2d(ctx, false); }, false}},
    {"aten::max_pool2d_with_indices.default", kCpu, {[](KernelContext& ctx) { return max_pool2d(ctx, true); }, false}},
    {"aten::avg_pool2d.default", kCpu, {&avg_pool2d, false}},
    {"aten::adaptive_avg_pool2d.default", kCpu, {&adaptive_avg_pool2d, false}},
    {"aten::_adaptive_avg_pool2d.default", kCpu, {&adaptive_avg_pool2d, false}},
    {"aten::adaptive_avg_pool1d.default", kCpu, {&adaptive_avg_pool1d, false}},
    {"aten::adaptive_avg_pool3d.default", kCpu, {&adaptive_avg_pool3d, false}},
    {"aten::_adaptive_avg_pool3d.default", kCpu, {&adaptive_avg_pool3d, false}},
};

}  // namespace
}  // namespace nrt::exec::cpu
