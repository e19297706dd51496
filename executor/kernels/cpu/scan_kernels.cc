// Kernels that walk one dimension of their input line by line: cumsum and cumprod (with an
// optional dtype; integer and bool inputs accumulate in int64 as torch does, floating ones in
// double and are stored in their own dtype), and diff (n-th forward difference along a dim,
// with optional prepend/append tensors; bool differences are `!=`, as in torch).
#include <array>
#include <vector>

#include "executor/kernels/cpu/dimensions.h"
#include "executor/kernels/cpu/dtype_dispatch.h"
#include "executor/kernels/cpu/output_slot.h"
#include "executor/kernels/cpu/strided_iteration.h"
#include "executor/kernels/cpu/tensor_copy.h"
#include "executor/kernels/cpu/view_strides.h"

namespace nrt::exec::cpu {
namespace {

// Calls line(out start, in start) for every line along `dim` of `in` and `out` (same sizes
// except along dim). Strides along dim are in bytes: out_step, in_step.
template <class Line>
void for_each_line(const Tensor& out, const Tensor& in, int64_t dim, Line&& line) {
  if (in.numel() == 0 || out.numel() == 0) return;
  // Each tensor narrowed to one element along dim: its elements are the starts of its lines.
  const Tensor out_lines = narrow_view(out, dim, 0, 1), in_lines = narrow_view(in, dim, 0, 1);
  for_each_run<2>(out_lines.sizes(), {&out_lines, &in_lines},
                  [&](const std::array<uint8_t*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
                    for (int64_t i = 0; i < n; ++i) line(p[0] + i * s[0], p[1] + i * s[1]);
                  });
}

enum class Scan { kSum, kProduct };

// cumsum / cumprod(Tensor self, int dim, *, ScalarType? dtype=None)
template <Scan kScan>
Status cumulative(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  if (!is_kernel_dtype(self->dtype())) return unsupported_dtype(ctx, self->dtype());
  NRT_TRY(dim_arg, ctx.int64("dim", 1));
  NRT_TRY(dtype, ctx.scalar_type("dtype", 2));
  if (*dtype && !is_kernel_dtype(**dtype)) return unsupported_dtype(ctx, **dtype);
  // A 0-d tensor scans as one element along dim 0 or -1.
  const Tensor input = self->dim() == 0 ? self->as_strided({1}, {1}, self->storage_offset()) : *self;
  NRT_TRY(dim, wrap_dim(ctx, *dim_arg, input.dim()));
  const ScalarType out_dtype = dtype->value_or(is_floating_dtype(self->dtype()) ? self->dtype() : ScalarType::INT64);
  // The input in the dtype the scan stores (torch converts first when dtype is given).
  const Tensor source = input.dtype() == out_dtype ? input : converted_copy(input, out_dtype);
  NRT_TRY(bound, bind_output(ctx, 0, out_dtype, self->sizes()));
  const Tensor out = self->dim() == 0 ? bound->as_strided({1}, {1}, bound->storage_offset()) : *bound;
  const int64_t length = input.size(*dim);
  return dispatch_dtype<kAllDtypes>(ctx, out_dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = std::conditional_t<is_floating_v<T>, double, int64_t>;
    const int64_t in_step = source.strides()[static_cast<size_t>(*dim)] * static_cast<int64_t>(sizeof(T));
    const int64_t out_step = out.strides()[static_cast<size_t>(*dim)] * static_cast<int64_t>(sizeof(T));
    for_each_line(out, source, *dim, [&](uint8_t* o, uint8_t* x) {
      Acc acc = kScan == Scan::kSum ? Acc(0) : Acc(1);
      for (int64_t i = 0; i < length; ++i) {
        const Acc v = static_cast<Acc>(load(*reinterpret_cast<const T*>(x + i * in_step)));
        if constexpr (kScan == Scan::kSum) {
          if constexpr (std::is_integral_v<Acc>) acc = wrapping_add(acc, v); else acc += v;
        } else {
          if constexpr (std::is_integral_v<Acc>) acc = wrapping_mul(acc, v); else acc *= v;
        }
        *reinterpret_cast<T*>(o + i * out_step) = convert<T>(acc);
      }
    });
  });
}

// diff(Tensor self, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None)
Status diff(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  if (!is_kernel_dtype(self->dtype())) return unsupported_dtype(ctx, self->dtype());
  if (self->dim() == 0) return ctx.error("diff expects a tensor of at least one dimension");
  NRT_TRY(n, ctx.int64("n", 1, 1));
  if (*n < 0) return ctx.error("order must be non-negative, got " + std::to_string(*n));
  NRT_TRY(dim_arg, ctx.int64("dim", 2, -1));
  NRT_TRY(dim, wrap_dim(ctx, *dim_arg, self->dim()));
  NRT_TRY(prepend, ctx.optional_tensor("prepend", 3));
  NRT_TRY(append, ctx.optional_tensor("append", 4));

  // The line to difference: prepend, self and append joined along dim, in self's dtype.
  std::vector<Tensor> parts;
  const std::optional<Tensor> self_part = *self;
  const std::array<const std::optional<Tensor>*, 3> candidates{&*prepend, &self_part, &*append};
  for (const std::optional<Tensor>* part : candidates) {
    if (!part->has_value()) continue;
    const Tensor& t = **part;
    if (t.dtype() != self->dtype()) return ctx.error("prepend and append must have the dtype of self");
    bool fits = t.dim() == self->dim();
    for (int64_t d = 0; fits && d < t.dim(); ++d) fits = d == *dim || t.sizes()[d] == self->sizes()[d];
    if (!fits) return ctx.error("prepend and append must match self " + self->type_string() + " except along dim");
    parts.push_back(t);
  }
  int64_t length = 0;
  for (const Tensor& t : parts) length += t.size(*dim);
  std::vector<int64_t> joined_sizes = self->sizes();
  joined_sizes[static_cast<size_t>(*dim)] = length;
  Tensor joined = parts.size() == 1 ? *self : Tensor::empty(self->dtype(), joined_sizes);
  if (parts.size() > 1) {
    int64_t at = 0;
    for (const Tensor& t : parts) {
      copy_into(narrow_view(joined, *dim, at, t.size(*dim)), t);
      at += t.size(*dim);
    }
  }
  const int64_t out_length = std::max<int64_t>(length - *n, 0);
  std::vector<int64_t> out_sizes = joined_sizes;
  out_sizes[static_cast<size_t>(*dim)] = out_length;
  NRT_TRY(out, bind_output(ctx, 0, self->dtype(), out_sizes));
  if (out_length == 0) return Status::Ok();
  return dispatch_dtype<kAllDtypes>(ctx, self->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const int64_t in_step = joined.strides()[static_cast<size_t>(*dim)] * static_cast<int64_t>(sizeof(T));
    const int64_t out_step = out->strides()[static_cast<size_t>(*dim)] * static_cast<int64_t>(sizeof(T));
    std::vector<C> line(static_cast<size_t>(length));
    for_each_line(*out, joined, *dim, [&](uint8_t* o, uint8_t* x) {
      for (int64_t i = 0; i < length; ++i) line[static_cast<size_t>(i)] = load(*reinterpret_cast<const T*>(x + i * in_step));
      for (int64_t k = 0; k < *n; ++k) {
        for (int64_t i = 0; i + 1 < length - k; ++i) {
          const C a = line[static_cast<size_t>(i)], b = line[static_cast<size_t>(i + 1)];
          if constexpr (std::is_same_v<C, bool>) {
            line[static_cast<size_t>(i)] = a != b;
          } else if constexpr (std::is_integral_v<C>) {
            line[static_cast<size_t>(i)] = wrapping_sub(b, a);
          } else {
            line[static_cast<size_t>(i)] = b - a;
          }
        }
      }
      for (int64_t i = 0; i < out_length; ++i) {
        *reinterpret_cast<T*>(o + i * out_step) = store<T>(line[static_cast<size_t>(i)]);
      }
    });
  });
}

constexpr DeviceKind kCpu = DeviceKind::kCpu;
const KernelRegistration kRegistrations[] = {
    {"aten::cumsum.default", kCpu, {&cumulative<Scan::kSum>, false}},
    {"aten::cumprod.default", kCpu, {&cumulative<Scan::kProduct>, false}},
    {"aten::diff.default", kCpu, {&diff, false}},
};

}  // namespace
}  // namespace nrt::exec::cpu
