// Where a tensor's bytes live. Kernels are registered per device kind; CUDA (and later devices)
// plug in beside the CPU without changing the executor. The schema names more device types
// (fb::DeviceType); core/schema_enums.h maps the ones nrt runs and refuses the rest.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.h"

namespace nrt {

enum class DeviceKind : uint8_t { kCpu = 0, kCuda = 1 };
inline constexpr int kNumDeviceKinds = 2;

struct Device {
  DeviceKind kind = DeviceKind::kCpu;
  int index = 0;
  friend bool operator==(const Device&, const Device&) = default;
  std::string to_string() const { return kind == DeviceKind::kCpu ? "cpu" : "cuda:" + std::to_string(index); }
};

// "cpu", "cuda" (device 0) or "cuda:N" (as torch names devices); anything else is InvalidArgument.
Result<Device> parse_device(std::string_view text);

}  // namespace nrt
