// Graph plumbing for lists: _operator.getitem picks element i (negative counts from the end) of a
// Tensor[], Tensor?[], int[], float[] or bool[] value. The result aliases the list's element, so
// it is registered as a view. Lists themselves are built by the executor from node arguments
// (torch.export records list construction inline), so no packing kernel is needed.
#include "executor/kernels/cpu/output_slot.h"

namespace nrt::exec::cpu {
namespace {

template <class List, class Pick>
Status pick(KernelContext& ctx, const List& list, int64_t index, Pick element) {
  const auto size = static_cast<int64_t>(list.size());
  if (index < -size || index >= size) {
    return ctx.error("index " + std::to_string(index) + " is out of range for a list of " + std::to_string(size));
  }
  return set_output(ctx, 0, element(list[static_cast<size_t>(index < 0 ? index + size : index)]));
}

Status getitem(KernelContext& ctx) {
  if (ctx.inputs().size() < 2) return ctx.error("expects a list and an index");
  const RuntimeValue& list = *ctx.inputs()[0].value;
  const RuntimeValue& index_value = *ctx.inputs()[1].value;
  const auto* index = std::get_if<int64_t>(&index_value);
  if (index == nullptr) return ctx.error("the index is not an int");
  if (const auto* l = std::get_if<std::vector<Tensor>>(&list)) {
    return pick(ctx, *l, *index, [](const Tensor& t) { return RuntimeValue(t); });
  }
  if (const auto* l = std::get_if<std::vector<std::optional<Tensor>>>(&list)) {
    return pick(ctx, *l, *index,
                [](const std::optional<Tensor>& t) { return t ? RuntimeValue(*t) : RuntimeValue(std::monostate{}); });
  }
  if (const auto* l = std::get_if<std::vector<int64_t>>(&list)) {
    return pick(ctx, *l, *index, [](int64_t v) { return RuntimeValue(v); });
  }
  if (const auto* l = std::get_if<std::vector<double>>(&list)) {
    return pick(ctx, *l, *index, [](double v) { return RuntimeValue(v); });
  }
  if (const auto* l = std::get_if<std::vector<bool>>(&list)) {
    return pick(ctx, *l, *index, [](bool v) { return RuntimeValue(v); });
  }
  return ctx.error("the first argument is not a list");
}

const KernelRegistration kRegistrations[] = {
    {"_operator.getitem", DeviceKind::kCpu, {&getitem, true}},
};

}  // namespace
}  // namespace nrt::exec::cpu
