// Bitwise and/or/xor (and Python's &, |, ^ on tensors: __and__, __or__, __xor__) and bitwise_not,
// for integer and bool tensors in the operands' promoted type; on bool they are the logical
// operations. Floating operands are an error, as in torch.
#include "executor/kernels/cpu/dtype_dispatch.h"
#include "executor/kernels/cpu/elementwise_loops.h"
#include "executor/kernels/cpu/elementwise_operands.h"
#include "executor/kernels/cpu/output_slot.h"

namespace nrt::exec::cpu {
namespace {

enum class Bitwise { kAnd, kOr, kXor };

template <Bitwise kOp>
Status bitwise(KernelContext& ctx) {
  ElementwiseOperands ops;
  NRT_RETURN_IF_ERROR(read_elementwise(ctx, {{"self", 0}, {"other", 1}}, ops));
  if (is_floating_dtype(ops.common)) {
    return ctx.error("bitwise operations need integer or bool operands, got " + std::string(short_name(ops.common)));
  }
  NRT_TRY(out, bind_output_ref(ctx, 0, ops.common, ops.shape));
  const LoopOperand a = ops.as(0, ops.common), b = ops.as(1, ops.common);
  return dispatch_dtype<kIntegral | kBoolean>(ctx, ops.common, [&](auto tag) {
    using T = typename decltype(tag)::type;
    map_binary<T, T, T>(**out, a, b, [](T x, T y) -> T {
      if constexpr (std::is_same_v<T, bool>) {
        return kOp == Bitwise::kAnd ? (x && y) : kOp == Bitwise::kOr ? (x || y) : (x != y);
      } else {
        return static_cast<T>(kOp == Bitwise::kAnd ? (x & y) : kOp == Bitwise::kOr ? (x | y) : (x ^ y));
      }
    });
  });
}

Status bitwise_not(KernelContext& ctx) {
  NRT_TRY(self, read_tensor(ctx, "self", 0));
  const Tensor& input = **self;
  NRT_TRY(out, bind_output_ref(ctx, 0, input.dtype(), input.sizes()));
  return dispatch_dtype<kIntegral | kBoolean>(ctx, input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    map_unary<T, T>(**out, input, [](T x) -> T {
      if constexpr (std::is_same_v<T, bool>) {
        return !x;
      } else {
        return static_cast<T>(~x);
      }
    });
  });
}

constexpr DeviceKind kCpu = DeviceKind::kCpu;
const KernelRegistration kRegistrations[] = {
    {"aten::bitwise_and.Tensor", kCpu, {&bitwise<Bitwise::kAnd>, false}},
    {"aten::bitwise_and.Scalar", kCpu, {&bitwise<Bitwise::kAnd>, false}},
    {"aten::__and__.Tensor", kCpu, {&bitwise<Bitwise::kAnd>, false}},
    {"aten::__and__.Scalar", kCpu, {&bitwise<Bitwise::kAnd>, false}},
    {"aten::bitwise_or.Tensor", kCpu, {&bitwise<Bitwise::kOr>, false}},
    {"aten::bitwise_or.Scalar", kCpu, {&bitwise<Bitwise::kOr>, false}},
    {"aten::__or__.Tensor", kCpu, {&bitwise<Bitwise::kOr>, false}},
    {"aten::__or__.Scalar", kCpu, {&bitwise<Bitwise::kOr>, false}},
    {"aten::bitwise_xor.Tensor", kCpu, {&bitwise<Bitwise::kXor>, false}},
    {"aten::bitwise_xor.Scalar", kCpu, {&bitwise<Bitwise::kXor>, false}},
    {"aten::__xor__.Tensor", kCpu, {&bitwise<Bitwise::kXor>, false}},
    {"aten::__xor__.Scalar", kCpu, {&bitwise<Bitwise::kXor>, false}},
    {"aten::bitwise_not.default", kCpu, {&bitwise_not, false}},
};

}  // namespace
}  // namespace nrt::exec::cpu
