// Activations with parameters or piecewise forms, as torchvision and transformers models use
// them: hardtanh (min_val, max_val) and relu6, hardsigmoid, hardswish, mish, leaky_relu, elu,
// softplus. Floating inputs only, dtype kept (torch refuses integer inputs for all but hardtanh,
// which nrt computes on floating dtypes only). Written branch-free (min/max/select) so that the
// loops vectorise.
#include <algorithm>
#include <cmath>

#include "executor/kernels/cpu/dtype_dispatch.h"
#include "executor/kernels/cpu/elementwise_loops.h"
#include "executor/kernels/cpu/operand.h"
#include "executor/kernels/cpu/output_slot.h"

namespace nrt::exec::cpu {
namespace {

// Runs `make(tag)`'s function over `self` into a new output of self's dtype.
template <class Make>
Status floating_map(KernelContext& ctx, const Tensor& input, Make make) {
  if (!is_floating_dtype(input.dtype())) return unsupported_dtype(ctx, input.dtype());
  NRT_TRY(out, bind_output_ref(ctx, 0, input.dtype(), input.sizes()));
  return dispatch_dtype<kFloating>(ctx, input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    map_unary<T, T>(**out, input, make(tag));
  });
}

Result<double> scalar_arg(const KernelContext& ctx, std::string_view name, int position, double fallback) {
  NRT_TRY(value, read_scalar(ctx, name, position, ScalarValue::of_float(fallback)));
  return value->to_double();
}

// clamp keeping NaN (torch's hardtanh propagates it): max/min written as selects.
template <class C>
C clamp_keep_nan(C x, C lo, C hi) {
  const C low = x < lo ? lo : x;
  return low > hi ? hi : low;
}

Status hardtanh_between(KernelContext& ctx, double min_val, double max_val) {
  NRT_TRY(self, read_tensor(ctx, "self", 0));
  return floating_map(ctx, **self, [&](auto tag) {
    using C = compute_t<typename decltype(tag)::type>;
    const C lo = static_cast<C>(min_val), hi = static_cast<C>(max_val);
    return [lo, hi](C x) { return clamp_keep_nan(x, lo, hi); };
  });
}

// hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1)
Status hardtanh(KernelContext& ctx) {
  NRT_TRY(lo, scalar_arg(ctx, "min_val", 1, -1.0));
  NRT_TRY(hi, scalar_arg(ctx, "max_val", 2, 1.0));
  return hardtanh_between(ctx, *lo, *hi);
}

Status relu6(KernelContext& ctx) { return hardtanh_between(ctx, 0.0, 6.0); }

// hardsigmoid(x) = clamp(x / 6 + 1/2, 0, 1)
Status hardsigmoid(KernelContext& ctx) {
  NRT_TRY(self, read_tensor(ctx, "self", 0));
  return floating_map(ctx, **self, [](auto tag) {
    using C = compute_t<typename decltype(tag)::type>;
    return [](C x) { return clamp_keep_nan(x / C(6) + C(0.5), C(0), C(1)); };
  });
}

// hardswish(x) = x * clamp(x + 3, 0, 6) / 6
Status hardswish(KernelContext& ctx) {
  NRT_TRY(self, read_tensor(ctx, "self", 0));
  return floating_map(ctx, **self, [](auto tag) {
    using C = compute_t<typename decltype(tag)::type>;
    return [](C x) { return x * clamp_keep_nan(x + C(3), C(0), C(6)) / C(6); };
  });
}

// softplus with torch's threshold: x where beta * x > threshold.
template <class C>
C softplus_of(C x, C beta, C threshold) {
  const C bx = beta * x;
  return bx > threshold ? x : std::log1p(std::exp(bx)) / beta;
}

// mish(x) = x * tanh(softplus(x))
Status mish(KernelContext& ctx) {
  NRT_TRY(self, read_tensor(ctx, "self", 0));
  return floating_map(ctx, **self, [](auto tag) {
    using C = compute_t<typename decltype(tag)::type>;
    return [](C x) { return x * std::tanh(softplus_of(x, C(1), C(20))); };
  });
}

// softplus(Tensor self, Scalar beta=1, Scalar threshold=20)
Status softplus(KernelContext& ctx) {
  NRT_TRY(self, read_tensor(ctx, "self", 0));
  NRT_TRY(beta, scalar_arg(ctx, "beta", 1, 1.0));
  NRT_TRY(threshold, scalar_arg(ctx, "threshold", 2, 20.0));
  return floating_map(ctx, **self, [&](auto tag) {
    using C = compute_t<typename decltype(tag)::type>;
    const C b = static_cast<C>(*beta), t = static_cast<C>(*threshold);
    return [b, t](C x) { return softplus_of(x, b, t); };
  });
}

// leaky_relu(Tensor self, Scalar negative_slope=0.01)
Status leaky_relu(KernelContext& ctx) {
  NRT_TRY(self, read_tensor(ctx, "self", 0));
  NRT_TRY(slope, scalar_arg(ctx, "negative_slope", 1, 0.01));
  return floating_map(ctx, **self, [&](auto tag) {
    using C = compute_t<typename decltype(tag)::type>;
    const C s = static_cast<C>(*slope);
    return [s](C x) { return x > C(0) ? x : x * s; };
  });
}

// elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1)
Status elu(KernelContext& ctx) {
  NRT_TRY(self, read_tensor(ctx, "self", 0));
  NRT_TRY(alpha, scalar_arg(ctx, "alpha", 1, 1.0));
  NRT_TRY(scale, scalar_arg(ctx, "scale", 2, 1.0));
  NRT_TRY(input_scale, scalar_arg(ctx, "input_scale", 3, 1.0));
  return floating_map(ctx, **self, [&](auto tag) {
    using C = compute_t<typename decltype(tag)::type>;
    const C a = static_cast<C>(*alpha), s = static_cast<C>(*scale), is = static_cast<C>(*input_scale);
    return [a, s, is](C x) { return x > C(0) ? s * x : s * a * (std::exp(x * is) - C(1)); };
  });
}

constexpr DeviceKind kCpu = DeviceKind::kCpu;
const KernelRegistration kRegistrations[] = {
    {"aten::hardtanh.default", kCpu, {&hardtanh, false}},
    {"aten::relu6.default", kCpu, {&relu6, false}},
    {"aten::hardsigmoid.default", kCpu, {&hardsigmoid, false}},
    {"aten::hardswish.default", kCpu, {&hardswish, false}},
    {"aten::mish.default", kCpu, {&mish, false}},
    {"aten::softplus.default", kCpu, {&softplus, false}},
    {"aten::leaky_relu.default", kCpu, {&leaky_relu, false}},
    {"aten::elu.default", kCpu, {&elu, false}},
};

}  // namespace
}  // namespace nrt::exec::cpu
