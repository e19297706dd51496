// Comparisons (eq, ne, lt, le, gt, ge) in the operands' promoted type, and logical and/or/xor
// (operands read as "!= 0"); all give bool tensors.
#include <functional>

#include "executor/kernels/cpu/dtype_dispatch.h"
#include "executor/kernels/cpu/elementwise_loops.h"
#include "executor/kernels/cpu/elementwise_operands.h"
#include "executor/kernels/cpu/output_slot.h"

namespace nrt::exec::cpu {
namespace {

template <class Compare>
Status compare(KernelContext& ctx) {
  ElementwiseOperands ops;
  NRT_RETURN_IF_ERROR(read_elementwise(ctx, {{"self", 0}, {"other", 1}}, ops));
  NRT_TRY(out, bind_output_ref(ctx, 0, ScalarType::BOOL, ops.shape));
  const LoopOperand a = ops.as(0, ops.common), b = ops.as(1, ops.common);
  return dispatch_dtype<kAllDtypes>(ctx, ops.common, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    map_binary<bool, T, T>(**out, a, b, [](C x, C y) { return Compare{}(x, y); });
  });
}

template <class Combine>
Status logical(KernelContext& ctx) {
  ElementwiseOperands ops;
  NRT_RETURN_IF_ERROR(read_elementwise(ctx, {{"self", 0}, {"other", 1}}, ops));
  NRT_TRY(out, bind_output_ref(ctx, 0, ScalarType::BOOL, ops.shape));
  const LoopOperand a = ops.as(0, ScalarType::BOOL), b = ops.as(1, ScalarType::BOOL);
  map_binary<bool, bool, bool>(**out, a, b, [](bool x, bool y) { return Combine{}(x, y); });
  return Status::Ok();
}

constexpr DeviceKind kCpu = DeviceKind::kCpu;
const KernelRegistration kRegistrations[] = {
    {"aten::eq.Tensor", kCpu, {&compare<std::equal_to<>>, false}},
    {"aten::eq.Scalar", kCpu, {&compare<std::equal_to<>>, false}},
    {"aten::ne.Tensor", kCpu, {&compare<std::not_equal_to<>>, false}},
    {"aten::ne.Scalar", kCpu, {&compare<std::not_equal_to<>>, false}},
    {"aten::lt.Tensor", kCpu, {&compare<std::less<>>, false}},
    {"aten::lt.Scalar", kCpu, {&compare<std::less<>>, false}},
    {"aten::le.Tensor", kCpu, {&compare<std::less_equal<>>, false}},
    {"aten::le.Scalar", kCpu, {&compare<std::less_equal<>>, false}},
    {"aten::gt.Tensor", kCpu, {&compare<std::greater<>>, false}},
    {"aten::gt.Scalar", kCpu, {&compare<std::greater<>>, false}},
    {"aten::ge.Tensor", kCpu, {&compare<std::greater_equal<>>, false}},
    {"aten::ge.Scalar", kCpu, {&compare<std::greater_equal<>>, false}},
    {"aten::logical_and.default", kCpu, {&logical<std::logical_and<>>, false}},
    {"aten::logical_or.default", kCpu, {&logical<std::logical_or<>>, false}},
    {"aten::logical_xor.default", kCpu, {&logical<std::not_equal_to<>>, false}},
};

}  // namespace
}  // namespace nrt::exec::cpu
