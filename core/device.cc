#include "core/device.h"

#include <charconv>

namespace nrt {

Result<Device> parse_device(std::string_view text) {
  auto refuse = [&] {
    return make_error(ErrorCode::InvalidArgument,
                      "device '" + std::string(text) + "' is not one of cpu, cuda, cuda:N (N a device index)");
  };
  if (text == "cpu") return Device{DeviceKind::kCpu, 0};
  if (text == "cuda") return Device{DeviceKind::kCuda, 0};
  if (!text.starts_with("cuda:")) return refuse();
  const std::string_view digits = text.substr(5);
  int index = -1;
  auto [end, failed] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  if (digits.empty() || failed != std::errc{} || end != digits.data() + digits.size() || index < 0) return refuse();
  return Device{DeviceKind::kCuda, index};
}

}  // namespace nrt
