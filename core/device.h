// Device: where memory lives and work runs (the CPU, or one CUDA / HIP device).
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace opsched {

enum class DeviceKind : uint8_t { kCpu = 0, kCuda = 1, kHip = 2 };

std::string_view DeviceKindName(DeviceKind kind);  // "cpu", "cuda", "hip"

struct Device {
  DeviceKind kind = DeviceKind::kCpu;
  int index = 0;

  static Device Cpu() { return Device{DeviceKind::kCpu, 0}; }
  static Device Cuda(int index) { return Device{DeviceKind::kCuda, index}; }

  bool is_cpu() const { return kind == DeviceKind::kCpu; }
  bool is_gpu() const { return kind != DeviceKind::kCpu; }
  // "cpu", "cuda:0", "hip:1".
  std::string ToString() const;
  bool operator==(const Device& o) const { return kind == o.kind && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  bool operator<(const Device& o) const {
    return kind != o.kind ? kind < o.kind : index < o.index;
  }
};

// Parses "cpu", "cuda", "cuda:N", "hip:N".
StatusOr<Device> ParseDevice(std::string_view text);

}  // namespace opsched
