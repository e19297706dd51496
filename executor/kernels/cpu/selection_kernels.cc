// Element selection: where(condition, self, other) and masked_fill (the result type of where is
// torch.result_type of the values, the condition does not take part; masked_fill keeps self's
// dtype), tril/triu, and clamp/clamp_min/clamp_max with scalar or tensor bounds (NaN in the input
// or in a bound propagates; a lower bound above the upper one gives the upper bound).
#include <cmath>
#include <cstring>

#include "executor/kernels/cpu/broadcast.h"
#include "executor/kernels/cpu/dtype_dispatch.h"
#include "executor/kernels/cpu/elementwise_loops.h"
#include "executor/kernels/cpu/elementwise_operands.h"
#include "executor/kernels/cpu/output_slot.h"
#include "executor/kernels/cpu/tensor_copy.h"

namespace nrt::exec::cpu {
namespace {

Status where(KernelContext& ctx) {
  NRT_TRY(cond, read_tensor(ctx, "condition", 0));
  if ((*cond)->dtype() != ScalarType::BOOL && (*cond)->dtype() != ScalarType::UINT8) {
    return ctx.error("condition must be bool, got " + std::string(short_name((*cond)->dtype())));
  }
  ElementwiseOperands ops;
  NRT_RETURN_IF_ERROR(read_elementwise(ctx, {{"condition", 0}, {"self", 1}, {"other", 2}}, ops));
  const ScalarType dtype = operands_result_type(ops.operands().subspan(1));
  if (dtype == ScalarType::UNKNOWN) return ctx.error("operand dtypes have no common type");
  NRT_TRY(out, bind_output_ref(ctx, 0, dtype, ops.shape));
  const LoopOperand o = LoopOperand::of(**out);
  const LoopOperand c = ops.as(0, ScalarType::BOOL), a = ops.as(1, dtype), b = ops.as(2, dtype);
  return dispatch_dtype<kAllDtypes>(ctx, dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    // Select stored elements (no round trip through the compute type).
    for_each_run<4>(ops.shape, {&o, &c, &a, &b},
                    [](const std::array<uint8_t*, 4>& p, const std::array<int64_t, 4>& s, int64_t n) {
                      for (int64_t i = 0; i < n; ++i) {
                        const bool pick = *reinterpret_cast<const bool*>(p[1] + i * s[1]);
                        *reinterpret_cast<T*>(p[0] + i * s[0]) = *reinterpret_cast<const T*>(p[pick ? 2 : 3] + i * s[pick ? 2 : 3]);
                      }
                    });
  });
}

// masked_fill.Scalar(Tensor self, Tensor mask, Scalar value); masked_fill.Tensor(..., Tensor value) with
// a 0-d value.
Status masked_fill(KernelContext& ctx) {
  NRT_TRY(self_arg, read_tensor(ctx, "self", 0));
  const Tensor& self = **self_arg;
  if (!is_kernel_dtype(self.dtype())) return unsupported_dtype(ctx, self.dtype());
  NRT_TRY(mask_arg, read_tensor(ctx, "mask", 1));
  const Tensor& mask = **mask_arg;
  if (mask.dtype() != ScalarType::BOOL) return ctx.error("mask must be bool, got " + std::string(short_name(mask.dtype())));
  NRT_TRY(value, read_operand(ctx, "value", 2));
  if (value->tensor != nullptr && value->tensor->dim() != 0) {
    return ctx.error("value must be a 0-d tensor, got " + shape_string(value->tensor->sizes()));
  }
  DimVector shape(self.sizes());
  if (!broadcast_into(shape, mask.sizes())) {
    return ctx.error("shapes " + shape_string(self.sizes()) + " and " + shape_string(mask.sizes()) + " do not broadcast");
  }
  NRT_TRY(out, bind_output_ref(ctx, 0, self.dtype(), shape));
  const LoopOperand o = LoopOperand::of(**out);
  const LoopOperand m = LoopOperand::broadcast(mask, mask.dtype(), shape);
  const LoopOperand x = LoopOperand::broadcast(self, self.dtype(), shape);
  const LoopOperand fill = LoopOperand::read(*value, self.dtype(), shape);
  return dispatch_dtype<kAllDtypes>(ctx, self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for_each_run<4>(shape, {&o, &m, &fill, &x},
                    [](const std::array<uint8_t*, 4>& p, const std::array<int64_t, 4>& s, int64_t n) {
                      for (int64_t i = 0; i < n; ++i) {
                        const bool pick = *reinterpret_cast<const bool*>(p[1] + i * s[1]);
                        *reinterpret_cast<T*>(p[0] + i * s[0]) = *reinterpret_cast<const T*>(p[pick ? 2 : 3] + i * s[pick ? 2 : 3]);
                      }
                    });
  });
}

// tril(Tensor self, int diagonal=0) / triu: zero the elements above / below the diagonal of the
// last two dims.
template <bool kLower>
Status triangle(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  if (self->dim() < 2) return ctx.error("expects at least 2 dimensions, got " + shape_string(self->sizes()));
  NRT_TRY(diagonal, ctx.int64("diagonal", 1, 0));
  NRT_TRY(out, bind_output(ctx, 0, self->dtype(), self->sizes()));
  if (!copy_into(*out, *self)) return unsupported_dtype(ctx, self->dtype());
  const int64_t rows = self->sizes()[self->sizes().size() - 2], cols = self->sizes().back();
  const int64_t matrices = self->numel() / std::max<int64_t>(rows * cols, 1);
  const auto element = static_cast<int64_t>(out->element_size());
  // Walk the matrices of the output through a view over its leading dims.
  std::vector<int64_t> lead_sizes(out->sizes().begin(), out->sizes().end() - 2);
  std::vector<int64_t> lead_strides(out->strides().begin(), out->strides().end() - 2);
  const Tensor lead = out->as_strided(lead_sizes, lead_strides, out->storage_offset());
  const int64_t row_stride = out->strides()[out->strides().size() - 2] * element;
  const int64_t col_stride = out->strides().back() * element;
  if (matrices == 0) return Status::Ok();
  for_each_run<1>(lead_sizes, {&lead}, [&](const std::array<uint8_t*, 1>& p, const std::array<int64_t, 1>& s, int64_t n) {
    for (int64_t k = 0; k < n; ++k) {
      uint8_t* base = p[0] + k * s[0];
      for (int64_t i = 0; i < rows; ++i) {
        for (int64_t j = 0; j < cols; ++j) {
          const bool zero = kLower ? j - i > *diagonal : j - i < *diagonal;
          if (zero) std::memset(base + i * row_stride + j * col_stride, 0, static_cast<size_t>(element));
        }
      }
    }
  });
  return Status::Ok();
}

template <class C>
C clamp_value(C x, C low, C high, bool has_low, bool has_high) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(x)) return x;
    if (has_low && std::isnan(low)) return low;
    if (has_high && std::isnan(high)) return high;
  }
  if (has_low && x < low) x = low;
  if (has_high && x > high) x = high;
  return x;
}

// Bounds are read from `low` and `high` (None when absent); tensor bounds broadcast.
Status clamp_with(KernelContext& ctx, std::string_view low_name, std::string_view high_name) {
  std::array<Operand, 3> operand_slots;  // self, then the bounds given
  size_t count = 0;
  NRT_TRY(self, read_operand(ctx, "self", 0));
  operand_slots[count++] = *self;
  bool has_low = false, has_high = false;
  auto add_bound = [&](std::string_view name, int position, bool* has) -> Status {
    if (name.empty()) return Status::Ok();
    const RuntimeValue* v = ctx.find(name, position);
    if (v == nullptr || std::holds_alternative<std::monostate>(*v)) return Status::Ok();
    NRT_TRY(op, read_operand(ctx, name, position));
    operand_slots[count++] = *op;
    *has = true;
    return Status::Ok();
  };
  if (auto s = add_bound(low_name, 1, &has_low); !s.ok()) return s;
  if (auto s = add_bound(high_name, low_name.empty() ? 1 : 2, &has_high); !s.ok()) return s;
  if (!has_low && !has_high) return ctx.error("at least one of min and max must be given");
  const std::span<const Operand> operands(operand_slots.data(), count);
  DimVector shape;
  if (!operands_broadcast_shape(operands, shape)) return ctx.error("input and bounds do not broadcast");
  const ScalarType dtype = operands_result_type(operands);
  if (dtype == ScalarType::UNKNOWN) return ctx.error("operand dtypes have no common type");
  if (dtype == ScalarType::BOOL) return ctx.error("clamp of bool tensors is not supported");
  NRT_TRY(out, bind_output_ref(ctx, 0, dtype, shape));
  // An absent bound is never used (clamp_value skips it); a scalar zero stands in for it.
  const Operand absent{};
  const LoopOperand x = LoopOperand::read(operands[0], dtype, shape);
  const LoopOperand low = LoopOperand::read(has_low ? operands[1] : absent, dtype, shape);
  const LoopOperand high = LoopOperand::read(has_high ? operands[has_low ? 2 : 1] : absent, dtype, shape);
  return dispatch_dtype<kFloating | kIntegral>(ctx, dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    map_ternary<T, T, T, T>(**out, x, low, high,
                            [has_low, has_high](C v, C l, C h) { return clamp_value(v, l, h, has_low, has_high); });
  });
}

Status clamp(KernelContext& ctx) { return clamp_with(ctx, "min", "max"); }
Status clamp_min(KernelContext& ctx) { return clamp_with(ctx, "min", ""); }
Status clamp_max(KernelContext& ctx) { return clamp_with(ctx, "", "max"); }

constexpr DeviceKind kCpu = DeviceKind::kCpu;
const KernelRegistration kRegistrations[] = {
    {"aten::where.self", kCpu, {&where, false}},
    {"aten::where.ScalarSelf", kCpu, {&where, false}},
    {"aten::where.ScalarOther", kCpu, {&where, false}},
    {"aten::where.Scalar", kCpu, {&where, false}},
    {"aten::masked_fill.Scalar", kCpu, {&masked_fill, false}},
    {"aten::masked_fill.Tensor", kCpu, {&masked_fill, false}},
    {"aten::tril.default", kCpu, {&triangle<true>, false}},
    {"aten::triu.default", kCpu, {&triangle<false>, false}},
    {"aten::clamp.default", kCpu, {&clamp, false}},
    {"aten::clamp.Tensor", kCpu, {&clamp, false}},
    {"aten::clamp_min.default", kCpu, {&clamp_min, false}},
    {"aten::clamp_min.Tensor", kCpu, {&clamp_min, false}},
    {"aten::clamp_max.default", kCpu, {&clamp_max, false}},
    {"aten::clamp_max.Tensor", kCpu, {&clamp_max, false}},
};

}  // namespace
}  // namespace nrt::exec::cpu
