// The GPU runtime as opsched uses it: device discovery and properties, memory, streams
// and events, every failure a Status. Built for CUDA (gpu_backend.cc compiled against
// cudart, and with hipcc for HIP) or, without a toolkit, as gpu_backend_none.cc where
// every call says the build has no GPU support. Handles are opaque (void*) so that no
// caller needs the vendor headers.
#pragma once

#include <cstddef>
#include <string>

#include "core/device.h"
#include "core/status.h"
#include "core/target.h"

namespace opsched::gpu {

// kCuda, kHip, or kCpu when the build has no GPU support.
DeviceKind BackendKind();
// Number of usable devices; 0 when none (no driver, no device, no GPU build).
int DeviceCount();
// Why DeviceCount() is 0 (empty when it is not), for test skip messages and logs.
std::string NoDeviceReason();

StatusOr<Target> QueryDeviceTarget(const Device& device);
// Multiprocessors of a device (cached after the first query; 1 when unknown).
int MultiprocessorCount(const Device& device);
Status SetDevice(const Device& device);
// Makes a device current for its scope and gives the calling thread its own current
// device back when it ends (a library call must not change the caller's device). A CPU
// device has nothing to make current: Enter does nothing.
class DeviceScope {
 public:
  DeviceScope() = default;
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  ~DeviceScope();
  Status Enter(const Device& device);

 private:
  int previous_ = -1;  // the caller's device, when Enter changed it
};

StatusOr<void*> Malloc(const Device& device, size_t bytes);
// Malloc that is legal while a stream of this thread is being captured (the capture mode
// relaxed around it, as PyTorch's allocator does): the memory is the caller's, not the
// graph's, and must outlive every graph that uses it.
StatusOr<void*> MallocDuringCapture(const Device& device, size_t bytes);
Status Free(const Device& device, void* ptr);
// Copies between any two of host and device memory, ordered on `stream`.
Status MemcpyAsync(void* dst, const void* src, size_t bytes, void* stream);
Status MemsetAsync(void* dst, int value, size_t bytes, void* stream);

// Page-locked host memory the device can also address (zero-copy): returns the host
// pointer and sets *device_ptr to the device's address of the same bytes. Legal while a
// stream is captured (like MallocDuringCapture).
StatusOr<void*> HostAllocMapped(size_t bytes, void** device_ptr);
Status FreeHost(void* host_ptr);

StatusOr<void*> StreamCreate(const Device& device);
Status StreamDestroy(void* stream);
Status StreamSynchronize(void* stream);
Status StreamWaitEvent(void* stream, void* event);
// True while `stream` is being captured into a CUDA graph (work is recorded, not run).
StatusOr<bool> StreamCapturing(void* stream);
// Runs fn(user) on a runtime thread once the work queued on `stream` before it is done;
// work queued after it waits for fn to return (fn must not call the GPU runtime).
Status LaunchHostFunc(void* stream, void (*fn)(void*), void* user);

StatusOr<void*> EventCreate(const Device& device);
Status EventDestroy(void* event);
Status EventRecord(void* event, void* stream);
Status EventSynchronize(void* event);
// True when the work before the event has finished (does not wait).
StatusOr<bool> EventQuery(void* event);
StatusOr<float> EventElapsedMs(void* start, void* end);

// The error of the last kernel launch (cleared), named after `what`.
Status LastLaunchError(std::string_view what);

}  // namespace opsched::gpu
