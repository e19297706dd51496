// Reductions over a list of dims (empty or None: all) with keepdim: sum (integers and bool sum to
// int64; floating types accumulate in double), mean (floating only; empty gives NaN), amax/amin and
// max/min over everything (NaN propagates; an empty reduced extent is an error, as in torch),
// any/all (bool results; empty reductions give false / true), linalg_vector_norm.
#include <algorithm>
#include <cmath>
#include <limits>

#include "executor/kernels/cpu/dimensions.h"
#include "executor/kernels/cpu/dtype_dispatch.h"
#include "executor/kernels/cpu/operand.h"
#include "executor/kernels/cpu/output_slot.h"
#include "executor/kernels/cpu/reduction_plan.h"
#include "executor/kernels/cpu/tensor_copy.h"

namespace nrt::exec::cpu {
namespace {

struct ReductionArguments {
  Tensor self;
  std::vector<int64_t> dims;
  bool keepdim = false;
  std::optional<ScalarType> dtype;
};

// (self, *, dtype) when dim_position < 0, else (self, dim, keepdim, *, dtype).
Result<ReductionArguments> read_reduction(const KernelContext& ctx, int dim_position, bool with_dtype) {
  ReductionArguments args;
  NRT_TRY(self, ctx.tensor("self", 0));
  if (!is_kernel_dtype(self->dtype())) return unsupported_dtype(ctx, self->dtype());
  args.self = *self;
  if (dim_position >= 0) {
    NRT_TRY(dims, ctx.int_list("dim", dim_position, std::vector<int64_t>{}));
    args.dims = *dims;
    NRT_TRY(keepdim, ctx.boolean("keepdim", dim_position + 1, false));
    args.keepdim = *keepdim;
  }
  if (with_dtype) {
    NRT_TRY(dtype, ctx.scalar_type("dtype", dim_position >= 0 ? dim_position + 2 : 1));
    args.dtype = *dtype;
    if (args.dtype && !is_kernel_dtype(*args.dtype)) return unsupported_dtype(ctx, *args.dtype);
  }
  return args;
}

enum class Average { kSum, kMean };

// The sum of one output's reduced elements, in double. Runs along memory are summed in 4 lanes
// (element i into lane i % 4, the lanes added in order at the run's end): a fixed order that
// vectorises, where one running sum was a chain of dependent adds (an RMSNorm's mean over 64
// floats took 5 us for 32 rows).
template <class In>
double sum_in_double(const ReductionPlan& plan, uint8_t* base) {
  double total = 0.0;
  for_each_run_in<1>(plan.reduced, {base}, [&](const std::array<uint8_t*, 1>& p, const std::array<int64_t, 1>& s, int64_t n) {
    double lanes[4] = {};
    int64_t i = 0;
    if (s[0] == static_cast<int64_t>(sizeof(In))) {
      const In* x = reinterpret_cast<const In*>(p[0]);
      for (; i + 4 <= n; i += 4) {
        for (int k = 0; k < 4; ++k) lanes[k] += static_cast<double>(load(x[i + k]));
      }
    }
    for (; i < n; ++i) lanes[i % 4] += static_cast<double>(load(*reinterpret_cast<const In*>(p[0] + i * s[0])));
    total += (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
  });
  return total;
}

Status sum_or_mean(KernelContext& ctx, int dim_position, Average average) {
  NRT_TRY(args, read_reduction(ctx, dim_position, true));
  // An explicit dtype converts the input first, as torch does.
  const Tensor input = args->dtype && *args->dtype != args->self.dtype() ? converted_copy(args->self, *args->dtype)
                                                                         : args->self;
  ScalarType out_dtype = input.dtype();
  if (average == Average::kMean && !is_floating_dtype(out_dtype)) {
    return ctx.error("mean needs a floating input or dtype, got " + std::string(short_name(out_dtype)));
  }
  if (average == Average::kSum && !is_floating_dtype(out_dtype) && !args->dtype) out_dtype = ScalarType::INT64;
  NRT_TRY(mask, reduction_mask(ctx, args->dims, input.dim()));
  const ReductionPlan plan = plan_reduction(input, std::move(*mask), args->keepdim);
  NRT_TRY(out, bind_output(ctx, 0, out_dtype, plan.out_sizes));
  return dispatch_dtype<kAllDtypes>(ctx, input.dtype(), [&](auto tag) {
    using In = typename decltype(tag)::type;
    if constexpr (is_floating_v<In>) {
      const double count = static_cast<double>(plan.reduced_numel);
      for_each_reduction(plan, *out, [&](uint8_t* o, uint8_t* base) {
        double acc = sum_in_double<In>(plan, base);
        if (average == Average::kMean) acc /= count;
        *reinterpret_cast<In*>(o) = convert<In>(acc);
      });
    } else {
      return dispatch_dtype<kIntegral | kBoolean>(ctx, out_dtype, [&](auto out_tag) {
        using Out = typename decltype(out_tag)::type;
        for_each_reduction(plan, *out, [&](uint8_t* o, uint8_t* base) {
          int64_t acc = 0;
          for_each_reduced<In>(plan, base, [&acc](In x) { acc = wrapping_add(acc, static_cast<int64_t>(x)); });
          *reinterpret_cast<Out*>(o) = convert<Out>(acc);
        });
      });
    }
    return Status::Ok();
  });
}

std::string render_ord(double ord) {
  if (std::isinf(ord)) return ord > 0 ? "inf" : "-inf";
  std::string text = std::to_string(ord);
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text;
}

// linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *,
// ScalarType? dtype=None): floating inputs (an explicit dtype converts first, as torch does),
// accumulated in double. ord inf / -inf: the largest / smallest |x|; 0: the count of nonzeros (NaN
// counts); otherwise (sum |x|^ord)^(1/ord). NaN propagates except for ord 0. Over an empty extent
// inf and negative ords are an error, as in torch.
Status linalg_vector_norm(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(ord_value, read_scalar(ctx, "ord", 1, ScalarValue::of_int(2)));
  NRT_TRY(dims, ctx.int_list("dim", 2, std::vector<int64_t>{}));
  NRT_TRY(keepdim, ctx.boolean("keepdim", 3, false));
  NRT_TRY(dtype, ctx.scalar_type("dtype", 4));
  const Tensor input = *dtype && **dtype != self->dtype() ? converted_copy(*self, **dtype) : *self;
  if (!is_floating_dtype(input.dtype())) {
    return ctx.error("linalg_vector_norm needs a floating input or dtype, got " + std::string(short_name(input.dtype())));
  }
  const double ord = ord_value->to_double();
  NRT_TRY(mask, reduction_mask(ctx, *dims, input.dim()));
  const ReductionPlan plan = plan_reduction(input, std::move(*mask), *keepdim);
  // Norms without an identity (max, min, negative powers) have no value over nothing.
  if ((ord < 0 || std::isinf(ord)) && plan.reduced_numel == 0 && product(plan.out_sizes) > 0) {
    return ctx.error("cannot compute the " + render_ord(ord) + " norm over an empty extent (it has no identity)");
  }
  NRT_TRY(out, bind_output(ctx, 0, input.dtype(), plan.out_sizes));
  return dispatch_dtype<kFloating>(ctx, input.dtype(), [&](auto tag) {
    using In = typename decltype(tag)::type;
    for_each_reduction(plan, *out, [&](uint8_t* o, uint8_t* base) {
      double acc = ord == -INFINITY ? INFINITY : 0.0;
      bool nan = false;
      for_each_reduced<In>(plan, base, [&](compute_t<In> x) {
        const double a = std::fabs(static_cast<double>(x));
        nan = nan || std::isnan(a);
        if (ord == INFINITY) {
          acc = std::max(acc, a);
        } else if (ord == -INFINITY) {
          acc = std::min(acc, a);
        } else if (ord == 0.0) {
          acc += a != 0.0 ? 1.0 : 0.0;
        } else if (ord == 1.0) {
          acc += a;
        } else if (ord == 2.0) {
          acc += a * a;
        } else {
          acc += std::pow(a, ord);
        }
      });
      double norm = acc;
      if (nan && ord != 0.0) {  // ord 0 counts a NaN as a nonzero, as torch does
        norm = std::numeric_limits<double>::quiet_NaN();
      } else if (ord == 2.0) {
        norm = std::sqrt(acc);
      } else if (!std::isinf(ord) && ord != 0.0 && ord != 1.0) {
        norm = std::pow(acc, 1.0 / ord);
      }
      *reinterpret_cast<In*>(o) = convert<In>(norm);
    });
    return Status::Ok();
  });
}

Status sum(KernelContext& ctx) { return sum_or_mean(ctx, -1, Average::kSum); }
Status sum_dim(KernelContext& ctx) { return sum_or_mean(ctx, 1, Average::kSum); }
Status mean(KernelContext& ctx) { return sum_or_mean(ctx, -1, Average::kMean); }
Status mean_dim(KernelContext& ctx) { return sum_or_mean(ctx, 1, Average::kMean); }

template <bool kMaximum>
Status extreme_value(KernelContext& ctx, int dim_position) {
  NRT_TRY(args, read_reduction(ctx, dim_position, false));
  const Tensor& input = args->self;
  NRT_TRY(mask, reduction_mask(ctx, args->dims, input.dim()));
  const ReductionPlan plan = plan_reduction(input, std::move(*mask), args->keepdim);
  if (plan.reduced_numel == 0 && product(plan.out_sizes) != 0) {
    return ctx.error("the reduced dimensions are empty and the reduction has no identity");
  }
  NRT_TRY(out, bind_output(ctx, 0, input.dtype(), plan.out_sizes));
  return dispatch_dtype<kAllDtypes>(ctx, input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    for_each_reduction(plan, *out, [&](uint8_t* o, uint8_t* base) {
      bool first = true;
      C best{};
      for_each_reduced<T>(plan, base, [&](C x) {
        if (first) {
          best = x;
          first = false;
          return;
        }
        if constexpr (std::is_floating_point_v<C>) {
          if (std::isnan(best)) return;
          if (std::isnan(x)) {
            best = x;
            return;
          }
        }
        if (kMaximum ? x > best : x < best) best = x;
      });
      *reinterpret_cast<T*>(o) = store<T>(best);
    });
  });
}

enum class Logical { kAny, kAll };

// any / all: .default (self), .dim (self, int dim, bool keepdim=False), .dims (self, int[]? dim,
// bool keepdim=False). The result is bool, uint8 for a uint8 input (as torch).
enum class LogicalDims { kAll, kOne, kList };
template <Logical kOp, LogicalDims kDims>
Status logical_reduction(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  if (!is_kernel_dtype(self->dtype())) return unsupported_dtype(ctx, self->dtype());
  std::vector<int64_t> dims;
  bool keepdim = false;
  if constexpr (kDims != LogicalDims::kAll) {
    if constexpr (kDims == LogicalDims::kOne) {
      NRT_TRY(dim, ctx.int64("dim", 1));
      dims.push_back(*dim);
    } else {
      NRT_TRY(list, ctx.int_list("dim", 1, std::vector<int64_t>{}));
      dims = *list;
    }
    NRT_TRY(keep, ctx.boolean("keepdim", 2, false));
    keepdim = *keep;
  }
  const Tensor& input = *self;
  NRT_TRY(mask, reduction_mask(ctx, dims, input.dim()));
  const ReductionPlan plan = plan_reduction(input, std::move(*mask), keepdim);
  const ScalarType out_dtype = input.dtype() == ScalarType::UINT8 ? ScalarType::UINT8 : ScalarType::BOOL;
  NRT_TRY(out, bind_output(ctx, 0, out_dtype, plan.out_sizes));
  return dispatch_dtype<kAllDtypes>(ctx, input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    for_each_reduction(plan, *out, [&](uint8_t* o, uint8_t* base) {
      bool result = kOp == Logical::kAll;
      for_each_reduced<T>(plan, base, [&result](C x) {
        const bool truth = x != C(0);  // NaN is true, as in torch
        result = kOp == Logical::kAll ? (result && truth) : (result || truth);
      });
      if (out_dtype == ScalarType::UINT8) {
        *o = result ? 1 : 0;
      } else {
        *reinterpret_cast<bool*>(o) = result;
      }
    });
  });
}

constexpr DeviceKind kCpu = DeviceKind::kCpu;
const KernelRegistration kRegistrations[] = {
    {"aten::any.default", kCpu, {&logical_reduction<Logical::kAny, LogicalDims::kAll>, false}},
    {"aten::any.dim", kCpu, {&logical_reduction<Logical::kAny, LogicalDims::kOne>, false}},
    {"aten::any.dims", kCpu, {&logical_reduction<Logical::kAny, LogicalDims::kList>, false}},
    {"aten::all.default", kCpu, {&logical_reduction<Logical::kAll, LogicalDims::kAll>, false}},
    {"aten::all.dim", kCpu, {&logical_reduction<Logical::kAll, LogicalDims::kOne>, false}},
    {"aten::all.dims", kCpu, {&logical_reduction<Logical::kAll, LogicalDims::kList>, false}},
    {"aten::sum.default", kCpu, {&sum, false}},
    {"aten::linalg_vector_norm.default", kCpu, {&linalg_vector_norm, false}},
    {"aten::sum.dim_IntList", kCpu, {&sum_dim, false}},
    {"aten::mean.default", kCpu, {&mean, false}},
    {"aten::mean.dim", kCpu, {&mean_dim, false}},
    {"aten::amax.default", kCpu, {[](KernelContext& ctx) { return extreme_value<true>(ctx, 1); }, false}},
    {"aten::amin.default", kCpu, {[](KernelContext& ctx) { return extreme_value<false>(ctx, 1); }, false}},
    {"aten::max.default", kCpu, {[](KernelContext& ctx) { return extreme_value<true>(ctx, -1); }, false}},
    {"aten::min.default", kCpu, {[](KernelContext& ctx) { return extreme_value<false>(ctx, -1); }, false}},
};

}  // namespace
}  // namespace nrt::exec::cpu
