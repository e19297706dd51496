// softmax and log_softmax along one dim, computed in float (double for float64) on a contiguous
// copy laid out as [outer, dim, inner]: subtract the row maximum, exponentiate, normalise. A row of
// -inf gives NaN, as in torch, except in _safe_softmax (the math attention path's), where it gives
// zeros.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "executor/kernels/cpu/dimensions.h"
#include "executor/kernels/cpu/dtype_dispatch.h"
#include "executor/kernels/cpu/float_activation_loops.h"
#include "executor/kernels/cpu/output_slot.h"
#include "executor/kernels/cpu/tensor_copy.h"

namespace nrt::exec::cpu {
namespace {

enum class Softmax { kPlain, kLog, kSafe };

// The row's largest element, NaN when it holds one.
template <class C>
C row_maximum(const C* x, int64_t extent, int64_t inner) {
  if (inner == 1) return maximum_of(x, extent);
  C maximum = -std::numeric_limits<C>::infinity();
  for (int64_t k = 0; k < extent; ++k) {
    const C v = x[k * inner];
    if (std::isnan(v)) return v;
    if (v > maximum) maximum = v;
  }
  return maximum;
}

// float32 softmax along the last dim (attention's): every row's numerators through one call of
// the vectorised exp (float_activation_loops.h), then each row normalised.
void softmax_float_last_dim(const float* x, float* y, int64_t rows, int64_t extent, Softmax kind) {
  std::vector<float> maxima(static_cast<size_t>(rows)), totals(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) maxima[static_cast<size_t>(r)] = maximum_of(x + r * extent, extent);
  shifted_exponentials(y, x, maxima.data(), rows, extent, totals.data());
  for (int64_t r = 0; r < rows; ++r) {
    float* row = y + r * extent;
    if (kind == Softmax::kSafe && maxima[static_cast<size_t>(r)] == -std::numeric_limits<float>::infinity()) {
      std::fill(row, row + extent, 0.0f);
      continue;
    }
    const float scale = 1.0f / totals[static_cast<size_t>(r)];
    for (int64_t k = 0; k < extent; ++k) row[k] *= scale;
  }
}

template <class C>
void softmax_rows(const C* in, C* out, int64_t outer, int64_t extent, int64_t inner, Softmax kind) {
  const bool log = kind == Softmax::kLog;
  if constexpr (std::is_same_v<C, float>) {
    if (inner == 1 && !log) return softmax_float_last_dim(in, out, outer, extent, kind);
  }
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const C* x = in + o * extent * inner + i;
      C* y = out + o * extent * inner + i;
      const C maximum = row_maximum(x, extent, inner);
      if (kind == Softmax::kSafe && maximum == -std::numeric_limits<C>::infinity()) {
        for (int64_t k = 0; k < extent; ++k) y[k * inner] = C(0);
        continue;
      }
      C total = 0;
      for (int64_t k = 0; k < extent; ++k) {
        const C e = std::exp(x[k * inner] - maximum);
        total += e;
        if (!log) y[k * inner] = e;
      }
      if (log) {
        const C log_total = std::log(total);
        for (int64_t k = 0; k < extent; ++k) y[k * inner] = x[k * inner] - maximum - log_total;
      } else {
        const C scale = C(1) / total;
        for (int64_t k = 0; k < extent; ++k) y[k * inner] *= scale;
      }
    }
  }
}

Status softmax_with(KernelContext& ctx, const Tensor& self, int64_t dim, ScalarType out_dtype, Softmax kind) {
  // An explicit floating dtype converts any input first, as torch does.
  if (!is_kernel_dtype(self.dtype()) || !is_floating_dtype(out_dtype)) {
    return ctx.error("softmax needs a floating input or dtype, got " + std::string(short_name(self.dtype())));
  }
  NRT_TRY(d, wrap_dim(ctx, dim, self.dim()));
  NRT_TRY(slot, OutputSlot::bind(ctx, 0, out_dtype, self.sizes()));
  int64_t outer = 1, extent = 1, inner = 1;
  for (int64_t i = 0; i < self.dim(); ++i) {
    const int64_t s = self.sizes()[static_cast<size_t>(i)];
    if (i < *d) outer *= s;
    else if (i == *d) extent = s;
    else inner *= s;
  }
  const ScalarType compute = out_dtype == ScalarType::FLOAT64 ? ScalarType::FLOAT64 : ScalarType::FLOAT32;
  const Tensor input = contiguous_as(self, compute);
  Tensor staging = slot->staging(compute);
  if (compute == ScalarType::FLOAT64) {
    softmax_rows(input.data<double>(), staging.data<double>(), outer, extent, inner, kind);
  } else {
    softmax_rows(input.data<float>(), staging.data<float>(), outer, extent, inner, kind);
  }
  slot->commit();
  return Status::Ok();
}

// _softmax(Tensor self, int dim, bool half_to_float)
Status softmax_internal(KernelContext& ctx, Softmax kind) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(dim, ctx.int64("dim", 1));
  NRT_TRY(half_to_float, ctx.boolean("half_to_float", 2, false));
  const bool widen = *half_to_float && (self->dtype() == ScalarType::FLOAT16 || self->dtype() == ScalarType::BFLOAT16);
  return softmax_with(ctx, *self, *dim, widen ? ScalarType::FLOAT32 : self->dtype(), kind);
}

// softmax.int(Tensor self, int dim, ScalarType? dtype=None); _safe_softmax likewise.
Status softmax_public(KernelContext& ctx, Softmax kind) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(dim, ctx.int64("dim", 1));
  NRT_TRY(dtype, ctx.scalar_type("dtype", 2));
  return softmax_with(ctx, *self, *dim, dtype->value_or(self->dtype()), kind);
}

constexpr DeviceKind kCpu = DeviceKind::kCpu;
const KernelRegistration kRegistrations[] = {
    {"aten::_softmax.default", kCpu, {[](KernelContext& ctx) { return softmax_internal(ctx, Softmax::kPlain); }, false}},
    {"aten::softmax.int", kCpu, {[](KernelContext& ctx) { return softmax_public(ctx, Softmax::kPlain); }, false}},
    {"aten::_safe_softmax.default", kCpu, {[](KernelContext& ctx) { return softmax_public(ctx, Softmax::kSafe); }, false}},
    {"aten::_log_softmax.default", kCpu, {[](KernelContext& ctx) { return softmax_internal(ctx, Softmax::kLog); }, false}},
    {"aten::log_softmax.int", kCpu, {[](KernelContext& ctx) { return softmax_public(ctx, Softmax::kLog); }, false}},
};

}  // namespace
}  // namespace nrt::exec::cpu
