// gpu_backend.h for builds without a GPU toolkit: no devices, and every device call
// says why.
#include "core/gpu/gpu_backend.h"

namespace opsched::gpu {
namespace {

Status NoGpu() {
  return absl::FailedPreconditionError(
      "opsched was built without GPU support (no CUDA toolkit was found at build time)");
}

}  // namespace

DeviceKind BackendKind() { return DeviceKind::kCpu; }
int DeviceCount() { return 0; }
std::string NoDeviceReason() { return "opsched was built without GPU support"; }
StatusOr<Target> QueryDeviceTarget(const Device&) { return NoGpu(); }
int MultiprocessorCount(const Device&) { return 1; }
Status SetDevice(const Device&) { return NoGpu(); }
Status DeviceScope::Enter(const Device& device) { return device.is_cpu() ? absl::OkStatus() : NoGpu(); }
DeviceScope::~DeviceScope() = default;
StatusOr<void*> Malloc(const Device&, size_t) { return NoGpu(); }
StatusOr<void*> MallocDuringCapture(const Device&, size_t) { return NoGpu(); }
Status Free(const Device&, void*) { return NoGpu(); }
Status MemcpyAsync(void*, const void*, size_t, void*) { return NoGpu(); }
Status MemsetAsync(void*, int, size_t, void*) { return NoGpu(); }
StatusOr<void*> HostAllocMapped(size_t, void**) { return NoGpu(); }
Status FreeHost(void*) { return NoGpu(); }
StatusOr<void*> StreamCreate(const Device&) { return NoGpu(); }
Status StreamDestroy(void*) { return NoGpu(); }
Status StreamSynchronize(void*) { return NoGpu(); }
Status StreamWaitEvent(void*, void*) { return NoGpu(); }
StatusOr<bool> StreamCapturing(void*) { return NoGpu(); }
Status LaunchHostFunc(void*, void (*)(void*), void*) { return NoGpu(); }
StatusOr<void*> EventCreate(const Device&) { return NoGpu(); }
Status EventDestroy(void*) { return NoGpu(); }
Status EventRecord(void*, void*) { return NoGpu(); }
Status EventSynchronize(void*) { return NoGpu(); }
StatusOr<bool> EventQuery(void*) { return NoGpu(); }
StatusOr<float> EventElapsedMs(void*, void*) { return NoGpu(); }
Status LastLaunchError(std::string_view) { return absl::OkStatus(); }

}  // namespace opsched::gpu
