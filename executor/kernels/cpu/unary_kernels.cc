// Element-wise functions of one tensor: neg, abs, relu, rounding (dtype kept), exp, log, sqrt,
// rsqrt, sigmoid, tanh, ... (integer and bool inputs promote to float32, as torch's "unary float"
// ops do), silu and gelu (floating only), logical_not (bool result).
#include <cmath>
#include <numbers>
#include <optional>

#include "executor/kernels/cpu/dtype_dispatch.h"
#include "executor/kernels/cpu/elementwise_loops.h"
#include "executor/kernels/cpu/fast_math.h"
#include "executor/kernels/cpu/float_activation_loops.h"
#include "executor/kernels/cpu/operand.h"
#include "executor/kernels/cpu/output_slot.h"

namespace nrt::exec::cpu {
namespace {

struct Neg {
  static constexpr unsigned kGroups = kFloating | kIntegral;
  template <class C>
  C operator()(C x) const { return wrapping_neg(x); }
};
struct Abs {
  static constexpr unsigned kGroups = kAllDtypes;
  template <class C>
  C operator()(C x) const {
    if constexpr (std::is_same_v<C, bool> || std::is_unsigned_v<C>) {
      return x;
    } else if constexpr (std::is_floating_point_v<C>) {
      return std::abs(x);
    } else {
      return x < C(0) ? wrapping_neg(x) : x;
    }
  }
};
// torch's sign: (0 < x) - (x < 0), so NaN and -0.0 give +0.0; bool is its own sign.
struct Sign {
  static constexpr unsigned kGroups = kAllDtypes;
  template <class C>
  C operator()(C x) const {
    if constexpr (std::is_same_v<C, bool>) {
      return x;
    } else {
      return static_cast<C>(static_cast<C>(C(0) < x) - static_cast<C>(x < C(0)));
    }
  }
};
struct Relu {
  static constexpr unsigned kGroups = kFloating | kIntegral;
  template <class C>
  // One select, no branch (vectorises); NaN < 0 is false, so NaN passes through as in torch.
  C operator()(C x) const { return x < C(0) ? C(0) : x; }
};
struct Floor {
  static constexpr unsigned kGroups = kFloating | kIntegral;
  template <class C>
  C operator()(C x) const {
    if constexpr (std::is_floating_point_v<C>) return std::floor(x);
    return x;
  }
};
struct Ceil {
  static constexpr unsigned kGroups = kFloating | kIntegral;
  template <class C>
  C operator()(C x) const {
    if constexpr (std::is_floating_point_v<C>) return std::ceil(x);
    return x;
  }
};
struct Round {  // half to even, as torch.round
  static constexpr unsigned kGroups = kFloating | kIntegral;
  template <class C>
  C operator()(C x) const {
    if constexpr (std::is_floating_point_v<C>) return std::nearbyint(x);
    return x;
  }
};
struct Trunc {
  static constexpr unsigned kGroups = kFloating | kIntegral;
  template <class C>
  C operator()(C x) const {
    if constexpr (std::is_floating_point_v<C>) return std::trunc(x);
    return x;
  }
};

// Dtype-preserving ops.
template <class Op>
Status same_dtype_unary(KernelContext& ctx) {
  NRT_TRY(self, read_tensor(ctx, "self", 0));
  const Tensor& input = **self;
  NRT_TRY(out, bind_output_ref(ctx, 0, input.dtype(), input.sizes()));
  return dispatch_dtype<Op::kGroups>(ctx, input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    map_unary<T, T>(**out, input, [](compute_t<T> x) { return Op{}(x); });
  });
}

struct Exp {
  static constexpr std::optional<FloatActivation> kFloatLoop = FloatActivation::kExp;
  template <class C>
  C operator()(C x) const { return exp_of(x); }
};
struct Log {
  template <class C>
  C operator()(C x) const { return std::log(x); }
};
struct Log1p {
  template <class C>
  C operator()(C x) const { return std::log1p(x); }
};
struct Sqrt {
  template <class C>
  C operator()(C x) const { return std::sqrt(x); }
};
struct Rsqrt {
  template <class C>
  C operator()(C x) const { return C(1) / std::sqrt(x); }
};
struct Reciprocal {
  template <class C>
  C operator()(C x) const { return C(1) / x; }
};
struct Sigmoid {
  static constexpr std::optional<FloatActivation> kFloatLoop = FloatActivation::kSigmoid;
  template <class C>
  C operator()(C x) const { return C(1) / (C(1) + exp_of(-x)); }
};
struct Tanh {
  static constexpr std::optional<FloatActivation> kFloatLoop = FloatActivation::kTanh;
  template <class C>
  C operator()(C x) const { return tanh_of(x); }
};
struct Sin {
  template <class C>
  C operator()(C x) const { return std::sin(x); }
};
struct Cos {
  template <class C>
  C operator()(C x) const { return std::cos(x); }
};
struct Erf {
  template <class C>
  C operator()(C x) const { return std::erf(x); }
};
struct Silu {
  static constexpr std::optional<FloatActivation> kFloatLoop = FloatActivation::kSilu;
  template <class C>
  C operator()(C x) const { return x / (C(1) + exp_of(-x)); }
};

// Floating results; integer and bool inputs compute in float32 (torch's default dtype).
template <class Op, bool kPromoteIntegers = true>
Status floating_unary(KernelContext& ctx) {
  NRT_TRY(self, read_tensor(ctx, "self", 0));
  const Tensor& source = **self;
  if (!is_kernel_dtype(source.dtype())) return unsupported_dtype(ctx, source.dtype());
  if (!kPromoteIntegers && !is_floating_dtype(source.dtype())) return unsupported_dtype(ctx, source.dtype());
  const ScalarType dtype = is_floating_dtype(source.dtype()) ? source.dtype() : ScalarType::FLOAT32;
  NRT_TRY(out, bind_output_ref(ctx, 0, dtype, source.sizes()));
  if constexpr (requires { Op::kFloatLoop; }) {
    if (dtype == ScalarType::FLOAT32 && source.dtype() == dtype && source.is_contiguous() && (*out)->is_contiguous()) {
      run_float_activation(*Op::kFloatLoop, (*out)->template data<float>(), source.data<float>(), source.numel());
      return Status::Ok();
    }
  }
  const LoopOperand input = LoopOperand::broadcast(source, dtype, source.sizes());
  return dispatch_dtype<kFloating>(ctx, dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    map_unary<T, T>(**out, input, [](compute_t<T> x) { return Op{}(x); });
  });
}

Status gelu(KernelContext& ctx) {
  NRT_TRY(self, read_tensor(ctx, "self", 0));
  const Tensor& input = **self;
  NRT_TRY(approximate, read_optional_string(ctx, "approximate", 1));
  const std::string mode = approximate->value_or("none");
  if (mode != "none" && mode != "tanh") return ctx.error("approximate must be 'none' or 'tanh', got '" + mode + "'");
  NRT_TRY(out, bind_output_ref(ctx, 0, input.dtype(), input.sizes()));
  const bool tanh_form = mode == "tanh";
  if (input.dtype() == ScalarType::FLOAT32 && input.is_contiguous() && (*out)->is_contiguous()) {
    run_float_activation(tanh_form ? FloatActivation::kGeluTanh : FloatActivation::kGelu, (*out)->data<float>(),
                         input.data<float>(), input.numel());
    return Status::Ok();
  }
  return dispatch_dtype<kFloating>(ctx, input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    if (tanh_form) {
      const C k = static_cast<C>(std::numbers::sqrt2 * std::numbers::inv_sqrtpi);  // sqrt(2/pi)
      map_unary<T, T>(**out, input, [k](C x) {
        return C(0.5) * x * (C(1) + tanh_of(k * (x + C(0.044715) * x * x * x)));
      });
    } else {
      const C inv_sqrt2 = static_cast<C>(1.0 / std::numbers::sqrt2);
      if constexpr (std::is_same_v<C, float>) {
        map_unary<T, T>(**out, input, [](C x) { return fast_gelu(x); });
      } else {
        map_unary<T, T>(**out, input, [inv_sqrt2](C x) { return C(0.5) * x * (C(1) + std::erf(x * inv_sqrt2)); });
      }
    }
  });
}

Status logical_not(KernelContext& ctx) {
  NRT_TRY(self, read_tensor(ctx, "self", 0));
  const Tensor& input = **self;
  NRT_TRY(out, bind_output_ref(ctx, 0, ScalarType::BOOL, input.sizes()));
  return dispatch_dtype<kAllDtypes>(ctx, input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    map_unary<bool, T>(**out, input, [](compute_t<T> x) { return !(x != compute_t<T>(0)); });
  });
}

constexpr DeviceKind kCpu = DeviceKind::kCpu;
const KernelRegistration kRegistrations[] = {
    {"aten::neg.default", kCpu, {&same_dtype_unary<Neg>, false}},
    {"aten::abs.default", kCpu, {&same_dtype_unary<Abs>, false}},
    {"aten::sign.default", kCpu, {&same_dtype_unary<Sign>, false}},
    {"aten::relu.default", kCpu, {&same_dtype_unary<Relu>, false}},
    {"aten::floor.default", kCpu, {&same_dtype_unary<Floor>, false}},
    {"aten::ceil.default", kCpu, {&same_dtype_unary<Ceil>, false}},
    {"aten::round.default", kCpu, {&same_dtype_unary<Round>, false}},
    {"aten::trunc.default", kCpu, {&same_dtype_unary<Trunc>, false}},
    {"aten::exp.default", kCpu, {&floating_unary<Exp>, false}},
    {"aten::log.default", kCpu, {&floating_unary<Log>, false}},
    {"aten::log1p.default", kCpu, {&floating_unary<Log1p>, false}},
    {"aten::sqrt.default", kCpu, {&floating_unary<Sqrt>, false}},
    {"aten::rsqrt.default", kCpu, {&floating_unary<Rsqrt>, false}},
    {"aten::reciprocal.default", kCpu, {&floating_unary<Reciprocal>, false}},
    {"aten::sigmoid.default", kCpu, {&floating_unary<Sigmoid>, false}},
    {"aten::tanh.default", kCpu, {&floating_unary<Tanh>, false}},
    {"aten::sin.default", kCpu, {&floating_unary<Sin>, false}},
    {"aten::cos.default", kCpu, {&floating_unary<Cos>, false}},
    {"aten::erf.default", kCpu, {&floating_unary<Erf>, false}},
    {"aten::silu.default", kCpu, {&floating_unary<Silu, false>, false}},
    {"aten::gelu.default", kCpu, {&gelu, false}},
    {"aten::logical_not.default", kCpu, {&logical_not, false}},
};

}  // namespace
}  // namespace nrt::exec::cpu
