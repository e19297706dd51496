// argmax/argmin (over one dim, or over the flattened tensor when dim is None) and max.dim/min.dim
// (values and indices). torch's rules: the first occurrence wins ties, NaN counts as the extreme
// of both (the first NaN wins), bool compares as an integer. Empty reduced extents are errors.
#include <cmath>

#include "executor/kernels/cpu/dimensions.h"
#include "executor/kernels/cpu/dtype_dispatch.h"
#include "executor/kernels/cpu/output_slot.h"
#include "executor/kernels/cpu/reduction_plan.h"

namespace nrt::exec::cpu {
namespace {

// True when `x` replaces `best` as the running extreme.
template <bool kMaximum, class C>
bool replaces(C x, C best) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(best)) return false;
    if (std::isnan(x)) return true;
  }
  if constexpr (std::is_same_v<C, bool>) {
    return kMaximum ? static_cast<int>(x) > static_cast<int>(best) : static_cast<int>(x) < static_cast<int>(best);
  } else {
    return kMaximum ? x > best : x < best;
  }
}

// Writes indices (int64) into output `index_output`, and values into output 0 when `with_values`.
template <bool kMaximum>
Status arg_extreme(KernelContext& ctx, const Tensor& input, std::optional<int64_t> dim, bool keepdim,
                   bool with_values) {
  if (!is_kernel_dtype(input.dtype())) return unsupported_dtype(ctx, input.dtype());
  std::vector<bool> mask(static_cast<size_t>(input.dim()), !dim.has_value());
  if (dim) {
    NRT_TRY(d, wrap_dim(ctx, *dim, input.dim()));
    if (input.dim() > 0) mask[static_cast<size_t>(*d)] = true;
  }
  const ReductionPlan plan = plan_reduction(input, std::move(mask), keepdim);
  if (plan.reduced_numel == 0) return ctx.error("cannot reduce over an empty dimension: the result is undefined");
  // max.dim's indices are its secondary output; argmax's its only one.
  auto index_slot = with_values ? OutputSlot::bind_secondary(ctx, 1, ScalarType::INT64, plan.out_sizes)
                                : OutputSlot::bind(ctx, 0, ScalarType::INT64, plan.out_sizes);
  if (!index_slot) return index_slot.error();
  const Tensor* indices = &index_slot->tensor();
  Tensor values;
  if (with_values) {
    NRT_TRY(v, bind_output(ctx, 0, input.dtype(), plan.out_sizes));
    values = *v;
  }
  return dispatch_dtype<kAllDtypes>(ctx, input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    // The running extreme of one output element: its value and its position in the reduced dims.
    auto extreme = [&plan](uint8_t* base, C* best_value) {
      int64_t position = 0, best_position = 0;
      C best{};
      for_each_reduced<T>(plan, base, [&](C x) {
        if (position == 0 || replaces<kMaximum>(x, best)) {
          best = x;
          best_position = position;
        }
        ++position;
      });
      *best_value = best;
      return best_position;
    };
    if (with_values) {
      for_each_reduction(plan, values, *indices, [&](uint8_t* v, uint8_t* i, uint8_t* base) {
        C best{};
        *reinterpret_cast<int64_t*>(i) = extreme(base, &best);
        *reinterpret_cast<T*>(v) = store<T>(best);
      });
    } else {
      for_each_reduction(plan, *indices, [&](uint8_t* i, uint8_t* base) {
        C best{};
        *reinterpret_cast<int64_t*>(i) = extreme(base, &best);
      });
    }
  });
}

// argmax(Tensor self, int? dim=None, bool keepdim=False)
template <bool kMaximum>
Status arg_reduce(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  const RuntimeValue* dim_value = ctx.find("dim", 1);
  std::optional<int64_t> dim;
  if (dim_value != nullptr && !std::holds_alternative<std::monostate>(*dim_value)) {
    NRT_TRY(d, ctx.int64("dim", 1));
    dim = *d;
  }
  NRT_TRY(keepdim, ctx.boolean("keepdim", 2, false));
  return arg_extreme<kMaximum>(ctx, *self, dim, *keepdim, false);
}

// max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
template <bool kMaximum>
Status extreme_with_indices(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(dim, ctx.int64("dim", 1));
  NRT_TRY(keepdim, ctx.boolean("keepdim", 2, false));
  return arg_extreme<kMaximum>(ctx, *self, *dim, *keepdim, true);
}

constexpr DeviceKind kCpu = DeviceKind::kCpu;
const KernelRegistration kRegistrations[] = {
    {"aten::argmax.default", kCpu, {&arg_reduce<true>, false}},
    {"aten::argmin.default", kCpu, {&arg_reduce<false>, false}},
    {"aten::max.dim", kCpu, {&extreme_with_indices<true>, false}},
    {"aten::min.dim", kCpu, {&extreme_with_indices<false>, false}},
};

}  // namespace
}  // namespace nrt::exec::cpu
