// A kernel library that gets its registration wrong in the way NRT_TEST_BAD_LIBRARY names, for
// tests/executor/kernel_registry_test: nrt must refuse each mistake with an error naming the
// library, never stop or crash the host, and register nothing.
#include <cstdlib>
#include <string>

#include "executor/runtime/kernel_library.h"

namespace {

nrt::Status noop(nrt::exec::KernelContext&) { return nrt::Status::Ok(); }

}  // namespace

extern "C" int nrt_register_kernels(const nrt::exec::KernelLibraryHost* host) {
  using nrt::exec::DeviceKind;
  if (host == nullptr || host->abi != nrt::exec::kKernelLibraryAbi) return 1;
  const char* mode_value = std::getenv("NRT_TEST_BAD_LIBRARY");
  const std::string mode = mode_value ? mode_value : "";
  const nrt::exec::KernelInfo good{&noop, false};
  static const std::string long_target = std::string(2000, 'a') + "::b.default";
  // One valid kernel first: a refused library must register none of it.
  host->add(host->registry, "bad_library::fine.default", DeviceKind::kCpu, good);
  if (mode == "null_target") host->add(host->registry, nullptr, DeviceKind::kCpu, good);
  if (mode == "empty_target") host->add(host->registry, "", DeviceKind::kCpu, good);
  if (mode == "long_target") host->add(host->registry, long_target.c_str(), DeviceKind::kCpu, good);
  if (mode == "not_utf8") host->add(host->registry, "bad_library::\xff\xfe.default", DeviceKind::kCpu, good);
  if (mode == "device_99") host->add(host->registry, "bad_library::op.default", static_cast<DeviceKind>(99), good);
  if (mode == "null_kernel") host->add(host->registry, "aten::add.Tensor", DeviceKind::kCpu, {nullptr, false});
  return 0;
}
