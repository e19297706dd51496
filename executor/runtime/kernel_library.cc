#include "executor/runtime/kernel_library.h"

#include <dlfcn.h>
#include <link.h>

#include <cstring>

#include "serializer/program_text.h"
#include "serializer/regular_file.h"

namespace nrt::exec {
namespace {

// The longest target a library may register (torch's longest operator names are under 100 bytes).
constexpr size_t kMaxTargetBytes = 1024;

// What the library asks to register, staged until all of it is checked; what it gets wrong,
// described, instead of the registration (a library's mistake must never stop the host).
struct Registering {
  struct Kernel {
    std::string target;
    DeviceKind device;
    KernelInfo info;
  };
  std::vector<Kernel> kernels;
  std::vector<std::string> problems;
};

bool valid_utf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const size_t length = byte < 0x80 ? 1 : (byte >> 5) == 0x6 ? 2 : (byte >> 4) == 0xe ? 3 : (byte >> 3) == 0x1e ? 4 : 0;
    if (length == 0 || i + length > text.size()) return false;
    for (size_t k = 1; k < length; ++k) {
      if ((static_cast<unsigned char>(text[i + k]) >> 6) != 0x2) return false;
    }
    i += length;
  }
  return true;
}

void add_kernel(void* context, const char* target, DeviceKind device, KernelInfo info) {
  auto& registering = *static_cast<Registering*>(context);
  const size_t index = registering.kernels.size() + registering.problems.size();
  auto refuse = [&](const std::string& why) {
    registering.problems.push_back("kernel " + std::to_string(index) + ": " + why);
  };
  if (target == nullptr) return refuse("a null target");
  const size_t length = strnlen(target, kMaxTargetBytes + 1);
  const std::string_view name(target, length);
  if (length == 0) return refuse("an empty target");
  if (length > kMaxTargetBytes) return refuse("a target longer than " + std::to_string(kMaxTargetBytes) + " bytes");
  if (!valid_utf8(name)) return refuse("target '" + printable(name) + "' is not UTF-8");
  if (static_cast<int>(device) >= kNumDeviceKinds) {
    return refuse("target '" + printable(name) + "' for device kind " + std::to_string(static_cast<int>(device)) +
                  ", which is not one nrt knows");
  }
  if (info.fn == nullptr) return refuse("target '" + printable(name) + "' with a null kernel function");
  registering.kernels.push_back({std::string(name), device, info});
}

// Whether `address` is a function of the library (an ELF STT_FUNC or IFUNC symbol): calling a
// data symbol by that name would jump into data.
bool is_function_symbol(void* address) {
  Dl_info info;
  void* entry = nullptr;
  if (dladdr1(address, &info, &entry, RTLD_DL_SYMENT) == 0 || entry == nullptr) return false;
  const auto* symbol = static_cast<const ElfW(Sym)*>(entry);
  const int type = ELF64_ST_TYPE(symbol->st_info);
  return type == STT_FUNC || type == STT_GNU_IFUNC;
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
  void* symbol = dlsym(handle, "nrt_register_kernels");
  if (symbol == nullptr) {
    dlclose(handle);
    return make_error(ErrorCode::InvalidArgument,
                      "kernel library " + path + " exports no nrt_register_kernels (see executor/runtime/kernel_library.h)");
  }
  if (!is_function_symbol(symbol)) {
    dlclose(handle);
    return make_error(ErrorCode::InvalidArgument, "kernel library " + path +
                                                      ": nrt_register_kernels is not a function (a data symbol of "
                                                      "that name); see executor/runtime/kernel_library.h");
  }
  auto entry = reinterpret_cast<Entry>(symbol);
  Registering registering;
  KernelLibraryHost host;
  host.registry = &registering;
  host.add = add_kernel;
  if (int refused = entry(&host); refused != 0) {
    return make_error(ErrorCode::InvalidArgument, "kernel library " + path + " refused to register (code " +
                                                      std::to_string(refused) + "); host kernel ABI is " +
                                                      std::to_string(kKernelLibraryAbi));
  }
  if (!registering.problems.empty()) {
    std::string problems;
    for (const auto& problem : registering.problems) problems += "\n  " + problem;
    return make_error(ErrorCode::InvalidArgument,
                      "kernel library " + path + " registers kernels nrt refuses (nothing registered):" + problems);
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
