#include "executor/runtime/kernel.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

#include "executor/runtime/memory_budget.h"

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
  struct Entry {
    KernelInfo info;
    std::string origin;
  };
  mutable std::mutex mutex;
  std::map<std::string, Entry, std::less<>> kernels[kNumDeviceKinds];
};

KernelRegistry::KernelRegistry() : impl_(std::make_unique<Impl>()) {}
KernelRegistry::~KernelRegistry() = default;

KernelRegistry& KernelRegistry::global() {
  static KernelRegistry registry;
  return registry;
}

Status KernelRegistry::add(std::string_view target, DeviceKind device, KernelInfo info, std::string_view origin,
                           bool replace, std::string* replaced) {
  std::lock_guard lock(impl_->mutex);
  auto& table = impl_->kernels[static_cast<int>(device)];
  auto it = table.find(target);
  if (it == table.end()) {
    table.emplace(std::string(target), Impl::Entry{info, std::string(origin)});
    return {};
  }
  Impl::Entry& entry = it->second;
  if (entry.origin == origin && entry.info.fn == info.fn && entry.info.is_view == info.is_view) return {};
  if (!replace) {
    const std::string kind = device == DeviceKind::kCpu ? "cpu" : "cuda";
    return make_error(ErrorCode::InvalidArgument, std::string(target) + " has a " + kind + " kernel from " + entry.origin +
                                                      "; " + std::string(origin) + " registers another");
  }
  if (replaced != nullptr) *replaced = entry.origin;
  entry = Impl::Entry{info, std::string(origin)};
  return {};
}

const KernelInfo* KernelRegistry::find(std::string_view target, DeviceKind device) const {
  std::lock_guard lock(impl_->mutex);
  const auto& table = impl_->kernels[static_cast<int>(device)];
  auto it = table.find(target);
  return it == table.end() ? nullptr : &it->second.info;
}

std::string KernelRegistry::origin(std::string_view target, DeviceKind device) const {
  std::lock_guard lock(impl_->mutex);
  const auto& table = impl_->kernels[static_cast<int>(device)];
  auto it = table.find(target);
  return it == table.end() ? std::string() : it->second.origin;
}

std::vector<std::string> KernelRegistry::targets(DeviceKind device) const {
  std::lock_guard lock(impl_->mutex);
  std::vector<std::string> out;
  for (const auto& [name, entry] : impl_->kernels[static_cast<int>(device)]) out.push_back(name);
  return out;
}

bool register_for_devices(std::span<const NamedKernel> kernels, std::initializer_list<DeviceKind> devices,
                          const char* origin) {
  for (const NamedKernel& kernel : kernels) {
    for (DeviceKind device : devices) KernelRegistration(kernel.target, device, kernel.info, origin);
  }
  return true;
}

KernelRegistration::KernelRegistration(std::string_view target, DeviceKind device, KernelInfo info, const char* origin) {
  if (Status s = KernelRegistry::global().add(target, device, info, origin); !s) {
    std::fprintf(stderr, "nrt: duplicate built-in kernel: %s\n", s.error().message.c_str());
    std::abort();
  }
}

}  // namespace nrt::exec
