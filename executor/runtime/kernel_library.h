// Kernel libraries: shared objects that add kernels to a process's registry at run time, the way
// a program's custom operators (e.g. `nrt_corpus::enum_probe`, defined by the export script) get
// kernels without rebuilding nrt. `nrt-run --kernel-library PATH` loads them.
//
// A library exports one C function,
//
//   extern "C" int nrt_register_kernels(const nrt::exec::KernelLibraryHost* host);
//
// which checks `host->abi == nrt::exec::kKernelLibraryAbi`, registers each kernel through
// `host->add(host->registry, target, device, info)` and returns 0 (non-zero: refused). It goes
// through `host->add` rather than KernelRegistry::global() because the library may carry its own
// copy of nrt's code, whose registry would not be the host's. The library must be built with the
// same compiler, C++ standard library and nrt headers as the host: kernels exchange Tensors and
// RuntimeValues by reference. kKernelLibraryAbi changes whenever those types or KernelContext
// change layout. Libraries are never unloaded (their kernels stay registered).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "executor/runtime/kernel.h"
#include "core/error.h"

namespace nrt::exec {

inline constexpr uint32_t kKernelLibraryAbi = 3;  // 2: core's own ScalarType, ...; 3: KernelContext carries the seed and random stream

struct KernelLibraryHost {
  uint32_t abi = kKernelLibraryAbi;
  void* registry = nullptr;
  void (*add)(void* registry, const char* target, DeviceKind device, KernelInfo info) = nullptr;
};

struct LoadedKernelLibrary {
  std::vector<std::string> targets;  // every target the library registered
  // With override: "target (was <origin>)" for each kernel the library replaced.
  std::vector<std::string> replaced;
};

// Loads the library at `path` and lets it register its kernels into `registry`. A target the
// registry already has (a built-in kernel, or another library's) is refused, naming both origins,
// unless `override_existing` (nrt-run --kernel-library-override): then the library's kernel
// replaces it and `replaced` names it. Nothing is registered unless all of it can be. Everything
// the library hands `add` is checked: a null, empty, over-long (1024 bytes) or non-UTF-8 target,
// a device kind nrt does not know and a null kernel function are refused. Errors (IoOpen: the
// file cannot be loaded; InvalidArgument: no entry point or one that is not a function, another
// ABI, the library refused, a kernel refused, or a conflict) name the path.
Result<LoadedKernelLibrary> load_kernel_library(const std::string& path,
                                                KernelRegistry& registry = KernelRegistry::global(),
                                                bool override_existing = false);

}  // namespace nrt::exec
