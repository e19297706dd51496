#include "executor/kernel.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <string>

#include "executor/memory_budget.h"

namespace nrt::exec {
namespace {

template <typename T>
const char* type_name() {
  if constexpr (std::is_same_v<T, Tensor>) return "Tensor";
  if constexpr (std::is_same_v<T, int64_t>) return "int";
  if constexpr (std::is_same_v<T, double>) return "float";
  if constexpr (std::is_same_v<T, bool>) return "bool";
  return "value";
}

}  // namespace

const RuntimeValue* KernelContext::find(std::string_view name, int position) const {
  for (const auto& in : inputs_) {
    if (in.name == name) return in.value;
  }
  if (position >= 0 && static_cast<size_t>(position) < inputs_.size() && inputs_[static_cast<size_t>(position)].name.empty()) {
    return inputs_[static_cast<size_t>(position)].value;
  }
  return nullptr;
}

Error KernelContext::error(const std::string& message) const {
  return make_error(ErrorCode::KernelError, std::string(target_) + ": " + message);
}

Error kernel_memory_error(const KernelContext& context, const std::bad_alloc& failure) {
  return memory_error(std::string(context.target()), failure);
}

Result<Tensor> KernelContext::tensor(std::string_view name, int position) const {
  const RuntimeValue* v = find(name, position);
  if (v == nullptr) return error("missing tensor argument '" + std::string(name) + "'");
  if (const auto* t = std::get_if<Tensor>(v)) return *t;
  return error("argument '" + std::string(name) + "' is not a tensor");
}

Result<std::optional<Tensor>> KernelContext::optional_tensor(std::string_view name, int position) const {
  const RuntimeValue* v = find(name, position);
  if (v == nullptr || std::holds_alternative<std::monostate>(*v)) return std::optional<Tensor>{};
  if (const auto* t = std::get_if<Tensor>(v)) return std::optional<Tensor>(*t);
  return error("argument '" + std::string(name) + "' is not an optional tensor");
}

Result<std::vector<Tensor>> KernelContext::tensor_list(std::string_view name, int position) const {
  const RuntimeValue* v = find(name, position);
  if (v == nullptr) return error("missing tensor list argument '" + std::string(name) + "'");
  if (const auto* t = std::get_if<std::vector<Tensor>>(v)) return *t;
  return error("argument '" + std::string(name) + "' is not a tensor list");
}

Result<int64_t> KernelContext::int64(std::string_view name, int position, std::optional<int64_t> fallback) const {
  const RuntimeValue* v = find(name, position);
  if (v == nullptr || std::holds_alternative<std::monostate>(*v)) {
    if (fallback) return *fallback;
    return error("missing int argument '" + std::string(name) + "'");
  }
  if (const auto* i = std::get_if<int64_t>(v)) return *i;
  if (const auto* b = std::get_if<bool>(v)) return static_cast<int64_t>(*b);
  return error("argument '" + std::string(name) + "' is not an int");
}

Result<double> KernelContext::real(std::string_view name, int position, std::optional<double> fallback) const {
  const RuntimeValue* v = find(name, position);
  if (v == nullptr || std::holds_alternative<std::monostate>(*v)) {
    if (fallback) return *fallback;
    return error("missing float argument '" + std::string(name) + "'");
  }
  if (const auto* d = std::get_if<double>(v)) return *d;
  if (const auto* i = std::get_if<int64_t>(v)) return static_cast<double>(*i);
  if (const auto* b = std::get_if<bool>(v)) return *b ? 1.0 : 0.0;
  return error("argument '" + std::string(name) + "' is not a number");
}

Result<bool> KernelContext::boolean(std::string_view name, int position, std::optional<bool> fallback) const {
  const RuntimeValue* v = find(name, position);
  if (v == nullptr || std::holds_alternative<std::monostate>(*v)) {
    if (fallback) return *fallback;
    return error("missing bool argument '" + std::string(name) + "'");
  }
  if (const auto* b = std::get_if<bool>(v)) return *b;
  if (const auto* i = std::get_if<int64_t>(v)) return *i != 0;
  return error("argument '" + std::string(name) + "' is not a bool");
}

Result<std::vector<int64_t>> KernelContext::int_list(std::string_view name, int position,
                                                     std::optional<std::vector<int64_t>> fallback) const {
  const RuntimeValue* v = find(name, position);
  if (v == nullptr || std::holds_alternative<std::monostate>(*v)) {
    if (fallback) return *fallback;
    return error("missing int list argument '" + std::string(name) + "'");
  }
  if (const auto* l = std::get_if<std::vector<int64_t>>(v)) return *l;
  if (const auto* i = std::get_if<int64_t>(v)) return std::vector<int64_t>{*i};  // int[1] accepts an int
  return error("argument '" + std::string(name) + "' is not an int list");
}

Result<std::optional<ScalarType>> KernelContext::scalar_type(std::string_view name, int position) const {
  const RuntimeValue* v = find(name, position);
  if (v == nullptr || std::holds_alternative<std::monostate>(*v)) return std::optional<ScalarType>{};
  if (const auto* t = std::get_if<ScalarType>(v)) return std::optional<ScalarType>(*t);
  return error("argument '" + std::string(name) + "' is not a dtype");
}

struct KernelRegistry::Impl {
  std::mutex mutex;
  std::map<std::string, KernelInfo, std::less<>> kernels[kNumDeviceKinds];
};

KernelRegistry& KernelRegistry::global() {
  static KernelRegistry registry;
  return registry;
}

KernelRegistry::Impl* KernelRegistry::impl() {
  static Impl impl;
  return &impl;
}

void KernelRegistry::add(std::string_view target, DeviceKind device, KernelInfo info) {
  auto* i = impl();
  std::lock_guard lock(i->mutex);
  i->kernels[static_cast<int>(device)][std::string(target)] = info;
}

const KernelInfo* KernelRegistry::find(std::string_view target, DeviceKind device) const {
  auto* i = const_cast<KernelRegistry*>(this)->impl();
  std::lock_guard lock(i->mutex);
  const auto& table = i->kernels[static_cast<int>(device)];
  auto it = table.find(target);
  return it == table.end() ? nullptr : &it->second;
}

std::vector<std::string> KernelRegistry::targets(DeviceKind device) const {
  auto* i = const_cast<KernelRegistry*>(this)->impl();
  std::lock_guard lock(i->mutex);
  std::vector<std::string> out;
  for (const auto& [name, info] : i->kernels[static_cast<int>(device)]) out.push_back(name);
  return out;
}

}  // namespace nrt::exec
