#include "executor/runtime/in_place_target.h"

namespace nrt::exec {

FunctionalCandidates functional_candidates(std::string_view target) {
  FunctionalCandidates out;
  const size_t colons = target.find("::");
  if (colons == std::string_view::npos) return out;
  const std::string_view ns = target.substr(0, colons + 2);
  std::string_view rest = target.substr(colons + 2);
  const size_t dot = rest.find('.');
  const std::string_view name = rest.substr(0, dot);
  const std::string_view overload = dot == std::string_view::npos ? std::string_view("default") : rest.substr(dot + 1);
  if (name.empty()) return out;
  auto joined = [&](std::string_view n, std::string_view o) { return std::string(ns) + std::string(n) + "." + std::string(o); };

  // Dunder in-place operators: __iand__ is __and__ in place.
  if (name.size() > 5 && name.starts_with("__i") && name.ends_with("__")) {
    out.kind = MutationKind::kInPlace;
    out.targets.push_back(joined("__" + std::string(name.substr(3)), overload));
    return out;
  }
  if (name.size() > 1 && name.back() == '_' && !name.ends_with("__")) {
    out.kind = MutationKind::kInPlace;
    out.targets.push_back(joined(name.substr(0, name.size() - 1), overload));
    return out;
  }
  if (overload == "out") {
    out.kind = MutationKind::kOut;
    out.targets.push_back(joined(name, "Tensor"));
    out.targets.push_back(joined(name, "default"));
    return out;
  }
  if (overload.size() > 4 && overload.ends_with("_out")) {
    out.kind = MutationKind::kOut;
    out.targets.push_back(joined(name, overload.substr(0, overload.size() - 4)));
    return out;
  }
  if (overload.starts_with("out_")) {  // div.out_mode -> div.Tensor_mode
    out.kind = MutationKind::kOut;
    out.targets.push_back(joined(name, "Tensor_" + std::string(overload.substr(4))));
    return out;
  }
  return out;
}

bool computes_into_self(std::string_view functional_target) {
  static constexpr std::string_view kElementwise[] = {
      "aten::relu.default",     "aten::hardtanh.default", "aten::relu6.default",   "aten::silu.default",
      "aten::gelu.default",     "aten::sigmoid.default",  "aten::tanh.default",    "aten::hardswish.default",
      "aten::hardsigmoid.default", "aten::leaky_relu.default", "aten::elu.default", "aten::add.Tensor",
      "aten::sub.Tensor",       "aten::mul.Tensor",       "aten::div.Tensor",      "aten::add.Scalar",
      "aten::mul.Scalar",
  };
  for (std::string_view known : kElementwise) {
    if (known == functional_target) return true;
  }
  return false;
}

ResolvedKernel resolve_kernel(const KernelRegistry& registry, std::string_view target, DeviceKind device) {
  ResolvedKernel resolved;
  if (const KernelInfo* own = registry.find(target, device); own != nullptr && own->fn != nullptr) {
    resolved.kernel = own;
    return resolved;
  }
  const FunctionalCandidates candidates = functional_candidates(target);
  for (const std::string& functional : candidates.targets) {
    const KernelInfo* info = registry.find(functional, device);
    // A functional view kernel stands in only where its result is the input itself (dropout_ in
    // inference); the executor refuses any other view result (t_, squeeze_ change metadata).
    if (info == nullptr || info->fn == nullptr) continue;
    const KernelInfo* copy = registry.find(kWriteBackTarget, device);
    if (copy == nullptr || copy->fn == nullptr) break;
    resolved.kernel = info;
    resolved.write_back = copy->fn;
    resolved.mutation = candidates.kind;
    resolved.functional_target = functional;
    return resolved;
  }
  return resolved;
}

}  // namespace nrt::exec
