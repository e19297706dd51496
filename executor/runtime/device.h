// The executor's names for core's device types (core/device.h).
#pragma once

#include "core/device.h"

namespace nrt::exec {

using nrt::Device;
using nrt::DeviceKind;
using nrt::kNumDeviceKinds;

}  // namespace nrt::exec
