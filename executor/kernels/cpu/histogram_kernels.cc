// histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0): counts of self's elements in `bins`
// equal-width bins over [min, max], as torch computes them: float32 and float64 inputs, the bin of
// x is int((x - min) * bins / (max - min)) in the input's dtype (no search of the neighbouring
// edges, as torch's histc), x == max falls in the last bin, and elements outside the range (NaN
// among them) are not counted. min == max takes the range from the data (an error when it is not
// finite), widened by 1 on each side when the data is constant (or empty).
#include <algorithm>
#include <cmath>
#include <limits>

#include "executor/kernels/cpu/dtype_dispatch.h"
#include "executor/kernels/cpu/operand.h"
#include "executor/kernels/cpu/output_slot.h"
#include "executor/kernels/cpu/tensor_copy.h"

namespace nrt::exec::cpu {
namespace {

template <class C>
Status histogram(KernelContext& ctx, const Tensor& self, int64_t bins, double min, double max) {
  const Tensor x = contiguous_as(self, self.dtype());
  const C* values = x.data<C>();
  const int64_t n = x.numel();
  C lo = static_cast<C>(min), hi = static_cast<C>(max);
  if (lo == hi && n > 0) {
    lo = std::numeric_limits<C>::infinity();
    hi = -std::numeric_limits<C>::infinity();
    for (int64_t i = 0; i < n; ++i) {
      if (std::isnan(values[i])) {
        lo = hi = values[i];
        break;
      }
      lo = std::min(lo, values[i]);
      hi = std::max(hi, values[i]);
    }
  }
  if (!std::isfinite(lo) || !std::isfinite(hi)) {
    return ctx.error("the range [" + std::to_string(lo) + ", " + std::to_string(hi) + "] is not finite");
  }
  if (lo == hi) {
    lo -= 1;
    hi += 1;
  }
  NRT_TRY(out, OutputSlot::bind(ctx, 0, self.dtype(), {bins}));
  Tensor counts = out->staging(self.dtype());
  C* bin = counts.data<C>();
  for (int64_t b = 0; b < bins; ++b) bin[b] = C(0);
  const C width = hi - lo, scale = static_cast<C>(bins);
  for (int64_t i = 0; i < n; ++i) {
    const C v = values[i];
    if (!(v >= lo && v <= hi)) continue;  // NaN fails both
    auto pos = static_cast<int64_t>((v - lo) * scale / width);
    if (v == hi || pos >= bins) pos = bins - 1;
    bin[pos] += C(1);
  }
  out->commit();
  return Status::Ok();
}

Status histc(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(bins, ctx.int64("bins", 1, 100));
  NRT_TRY(min, read_scalar(ctx, "min", 2, ScalarValue::of_int(0)));
  NRT_TRY(max, read_scalar(ctx, "max", 3, ScalarValue::of_int(0)));
  if (*bins <= 0) return ctx.error("bins must be > 0, got " + std::to_string(*bins));
  if (min->to_double() > max->to_double()) return ctx.error("max must be larger than min");
  if (self->dtype() == ScalarType::FLOAT64) return histogram<double>(ctx, *self, *bins, min->to_double(), max->to_double());
  if (self->dtype() == ScalarType::FLOAT32) return histogram<float>(ctx, *self, *bins, min->to_double(), max->to_double());
  return unsupported_dtype(ctx, self->dtype());
}

constexpr DeviceKind kCpu = DeviceKind::kCpu;
const KernelRegistration kRegistrations[] = {
    {"aten::histc.default", kCpu, {&histc, false}},
};

}  // namespace
}  // namespace nrt::exec::cpu
