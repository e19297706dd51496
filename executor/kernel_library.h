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

#include "executor/kernel.h"
#include "serializer/error.h"

namespace nrt::exec {

inline constexpr uint32_t kKernelLibraryAbi = 1;

struct KernelLibraryHost {
  uint32_t abi = kKernelLibraryAbi;
  void* registry = nullptr;
  void (*add)(void* registry, const char* target, DeviceKind device, KernelInfo info) = nullptr;
};

// Loads the library at `path` and lets it register its kernels into `registry`; returns the
// targets it registered. Errors (IoOpen: the file cannot be loaded; InvalidArgument: no entry
// point, another ABI, or the library refused) name the path.
Result<std::vector<std::string>> load_kernel_library(const std::string& path,
                                                     KernelRegistry& registry = KernelRegistry::global());

}  // namespace nrt::exec
