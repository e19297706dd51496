#include "executor/runtime/constant_arguments.h"

#include <algorithm>
#include <string>

#include "executor/runtime/storage.h"

namespace nrt::exec {
namespace {

bool same_tensor(const Tensor& a, const Tensor& b) {
  return a.storage() == b.storage() && a.dtype() == b.dtype() && a.storage_offset() == b.storage_offset() &&
         a.sizes() == b.sizes() && a.strides() == b.strides();
}

// A value whose contents stay put while the frame holds it: a plain value, or a tensor in a
// constant storage.
bool is_constant(const RuntimeValue& value) {
  if (const auto* t = std::get_if<Tensor>(&value)) return t->defined() && t->storage() && t->storage()->constant();
  return std::holds_alternative<std::monostate>(value) || std::holds_alternative<int64_t>(value) ||
         std::holds_alternative<double>(value) || std::holds_alternative<bool>(value) ||
         std::holds_alternative<std::string>(value) || std::holds_alternative<std::vector<int64_t>>(value) ||
         std::holds_alternative<std::vector<double>>(value) || std::holds_alternative<std::vector<bool>>(value) ||
         std::holds_alternative<ScalarType>(value);
}

bool same(const RuntimeValue& seen, const RuntimeValue& now) {
  if (seen.index() != now.index()) return false;
  if (const auto* t = std::get_if<Tensor>(&seen)) return same_tensor(*t, std::get<Tensor>(now));
  return std::visit(
      [&](const auto& a) {
        using T = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return true;
        } else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, double> || std::is_same_v<T, bool> ||
                             std::is_same_v<T, std::string> || std::is_same_v<T, std::vector<int64_t>> ||
                             std::is_same_v<T, std::vector<double>> || std::is_same_v<T, std::vector<bool>> ||
                             std::is_same_v<T, ScalarType>) {
          return a == std::get<T>(now);
        } else {
          return false;  // never kept (is_constant)
        }
      },
      seen);
}

}  // namespace

std::optional<ConstantArguments> ConstantArguments::of(const KernelContext& ctx,
                                                       std::span<const std::string_view> per_call) {
  ConstantArguments kept;
  for (const NamedValue& argument : ctx.inputs()) {
    const bool fresh = std::find(per_call.begin(), per_call.end(), argument.name) != per_call.end();
    if (!fresh && !is_constant(*argument.value)) return std::nullopt;
    kept.per_call_.push_back(fresh);
    kept.values_.push_back(fresh ? RuntimeValue{} : *argument.value);
  }
  return kept;
}

bool ConstantArguments::match(const KernelContext& ctx) const {
  const std::span<const NamedValue> arguments = ctx.inputs();
  if (arguments.size() != values_.size()) return false;
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (!per_call_[i] && !same(values_[i], *arguments[i].value)) return false;
  }
  return true;
}

}  // namespace nrt::exec
