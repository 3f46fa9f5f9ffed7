#include "core/device.h"

#include <charconv>

#include "core/format.h"

namespace opsched {

std::string_view DeviceKindName(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kCpu:
      return "cpu";
    case DeviceKind::kCuda:
      return "cuda";
    case DeviceKind::kHip:
      return "hip";
  }
  return "?";
}

std::string Device::ToString() const {
  if (kind == DeviceKind::kCpu) return "cpu";
  return fmt::format("{}:{}", DeviceKindName(kind), index);
}

StatusOr<Device> ParseDevice(std::string_view text) {
  if (text == "cpu") return Device::Cpu();
  for (DeviceKind kind : {DeviceKind::kCuda, DeviceKind::kHip}) {
    std::string_view name = DeviceKindName(kind);
    if (text == name) return Device{kind, 0};
    if (text.size() > name.size() + 1 && text.substr(0, name.size()) == name &&
        text[name.size()] == ':') {
      std::string_view number = text.substr(name.size() + 1);
      int index = 0;
      auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), index);
      if (ec == std::errc() && end == number.data() + number.size() && index >= 0) {
        return Device{kind, index};
      }
    }
  }
  return absl::InvalidArgumentError(
      fmt::format("bad device '{}' (expected cpu, cuda, cuda:N or hip:N)", text));
}

}  // namespace opsched
