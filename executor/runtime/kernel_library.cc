#include "executor/runtime/kernel_library.h"

#include <dlfcn.h>

#include "serializer/regular_file.h"

namespace nrt::exec {
namespace {

// What the library asks to register, staged until all of it is checked.
struct Registering {
  struct Kernel {
    std::string target;
    DeviceKind device;
    KernelInfo info;
  };
  std::vector<Kernel> kernels;
};

void add_kernel(void* context, const char* target, DeviceKind device, KernelInfo info) {
  static_cast<Registering*>(context)->kernels.push_back({target, device, info});
}

}  // namespace

Result<LoadedKernelLibrary> load_kernel_library(const std::string& path, KernelRegistry& registry,
                                                bool override_existing) {
  // A name without '/' would be searched on the library path: the caller means this file.
  const std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  // Only a regular file: dlopen would block on a FIFO. (It reopens the path; the check is about
  // mistakes, not about a racing attacker, who could swap any library anyway.)
  if (auto opened = open_regular_file(file); !opened) {
    return make_error(ErrorCode::IoOpen, "kernel library " + opened.error().message);
  }
  // RTLD_LOCAL: the library's own symbols (its copy of nrt, if any) do not leak into the host.
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return make_error(ErrorCode::IoOpen, "kernel library " + path + ": " + (why ? why : "cannot be loaded"));
  }
  using Entry = int (*)(const KernelLibraryHost*);
  auto entry = reinterpret_cast<Entry>(dlsym(handle, "nrt_register_kernels"));
  if (entry == nullptr) {
    dlclose(handle);
    return make_error(ErrorCode::InvalidArgument,
                      "kernel library " + path + " exports no nrt_register_kernels (see executor/runtime/kernel_library.h)");
  }
  Registering registering;
  KernelLibraryHost host;
  host.registry = &registering;
  host.add = add_kernel;
  if (int refused = entry(&host); refused != 0) {
    return make_error(ErrorCode::InvalidArgument, "kernel library " + path + " refused to register (code " +
                                                      std::to_string(refused) + "); host kernel ABI is " +
                                                      std::to_string(kKernelLibraryAbi));
  }
  if (!override_existing) {
    std::string conflicts;
    for (const auto& kernel : registering.kernels) {
      const std::string existing = registry.origin(kernel.target, kernel.device);
      if (!existing.empty() && existing != path) conflicts += "\n  " + kernel.target + " (registered by " + existing + ")";
    }
    if (!conflicts.empty()) {
      return make_error(ErrorCode::InvalidArgument, "kernel library " + path +
                                                        " registers targets that already have kernels; pass "
                                                        "--kernel-library-override to replace them:" + conflicts);
    }
  }
  LoadedKernelLibrary loaded;
  for (const auto& kernel : registering.kernels) {
    std::string replaced;
    if (Status s = registry.add(kernel.target, kernel.device, kernel.info, path, override_existing, &replaced); !s) {
      return make_error(ErrorCode::InvalidArgument, "kernel library " + s.error().message);
    }
    loaded.targets.push_back(kernel.target);
    if (!replaced.empty()) loaded.replaced.push_back(kernel.target + " (was " + replaced + ")");
  }
  return loaded;  // the handle stays open: the kernels live in it
}

}  // namespace nrt::exec
