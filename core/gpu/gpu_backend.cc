// CUDA (and, compiled by hipcc, HIP) implementation of gpu_backend.h.
#include "core/gpu/gpu_backend.h"

#include <dlfcn.h>

#include <atomic>

#include "core/format.h"
#include "core/gpu/gpu_status.h"
#include "core/gpu/portability.h"

namespace opsched::gpu {
namespace {

// Version of a vendor library, read from the copy the dynamic loader finds at run time
// (not the headers the build saw): major * 10000 + minor * 100 + patch, or 0 if absent.
int LibraryVersion(const char* const* sonames, const char* symbol, bool by_property) {
  for (const char* const* so = sonames; *so != nullptr; ++so) {
    void* lib = dlopen(*so, RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
    if (lib == nullptr) lib = dlopen(*so, RTLD_LAZY | RTLD_LOCAL);
    if (lib == nullptr) continue;
    int version = 0;
    void* fn = dlsym(lib, symbol);
    if (fn != nullptr && by_property) {
      // cublasGetProperty(libraryPropertyType {MAJOR=0, MINOR=1, PATCH=2}, int*)
      using GetProperty = int (*)(int, int*);
      int major = 0, minor = 0, patch = 0;
      auto get = reinterpret_cast<GetProperty>(fn);
      if (get(0, &major) == 0 && get(1, &minor) == 0 && get(2, &patch) == 0) {
        version = major * 10000 + minor * 100 + patch;
      }
    } else if (fn != nullptr) {
      // cudnnGetVersion(): major * 10000 + minor * 100 + patch since cuDNN 9.
      version = static_cast<int>(reinterpret_cast<size_t (*)()>(fn)());
    }
    dlclose(lib);
    if (version != 0) return version;
  }
  return 0;
}

}  // namespace

DeviceKind BackendKind() {
#if defined(OPSCHED_HIP)
  return DeviceKind::kHip;
#else
  return DeviceKind::kCuda;
#endif
}

int DeviceCount() {
  int count = 0;
  if (gpuGetDeviceCount(&count) != gpuSuccess) {
    gpuGetLastError();  // clear the error the failed query left behind
    return 0;
  }
  return count;
}

std::string NoDeviceReason() {
  int count = 0;
  gpuError_t err = gpuGetDeviceCount(&count);
  if (err != gpuSuccess) {
    gpuGetLastError();
    return fmt::format("{} reports no usable device: {}", OPSCHED_GPU_BACKEND_NAME,
                       gpuGetErrorString(err));
  }
  return count == 0 ? fmt::format("{} reports 0 devices", OPSCHED_GPU_BACKEND_NAME) : "";
}

StatusOr<Target> QueryDeviceTarget(const Device& device) {
  if (device.kind != BackendKind()) {
    return absl::InvalidArgumentError(
        fmt::format("device {} is not a {} device", device.ToString(), OPSCHED_GPU_BACKEND_NAME));
  }
  int count = DeviceCount();
  if (device.index < 0 || device.index >= count) {
    return absl::NotFoundError(fmt::format("no device {} ({} present{}{})", device.ToString(),
                                           count, count == 0 ? "; " : "",
                                           count == 0 ? NoDeviceReason() : ""));
  }
  gpuDeviceProp prop;
  OPSCHED_GPU_RETURN_IF_ERROR(gpuGetDeviceProperties(&prop, device.index), device.ToString());
  Target t;
  t.kind = BackendKind();
  t.device_index = device.index;
  t.device_name = prop.name;
#if defined(OPSCHED_HIP)
  t.arch = prop.gcnArchName;
#else
  t.arch = fmt::format("sm_{}{}", prop.major, prop.minor);
#endif
  t.sm_count = prop.multiProcessorCount;
  t.memory_bytes = static_cast<int64_t>(prop.totalGlobalMem);
  t.l2_bytes = prop.l2CacheSize;
  OPSCHED_GPU_RETURN_IF_ERROR(gpuDriverGetVersion(&t.driver_version), "");
  OPSCHED_GPU_RETURN_IF_ERROR(gpuRuntimeGetVersion(&t.runtime_version), "");
#if !defined(OPSCHED_HIP)
  static const char* const kCublas[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so",
                                        nullptr};
  static const char* const kCudnn[] = {"libcudnn.so.9", "libcudnn.so", nullptr};
  static const int cublas = LibraryVersion(kCublas, "cublasGetProperty", true);
  static const int cudnn = LibraryVersion(kCudnn, "cudnnGetVersion", false);
  t.cublas_version = cublas;
  t.cudnn_version = cudnn;
#endif
  return t;
}

int MultiprocessorCount(const Device& device) {
  static std::atomic<int> cached[64] = {};
  if (device.index < 0 || device.index >= 64) return 1;
  int count = cached[device.index].load(std::memory_order_relaxed);
  if (count > 0) return count;
#if defined(OPSCHED_HIP)
  const auto attribute = hipDeviceAttributeMultiprocessorCount;
  const gpuError_t err = hipDeviceGetAttribute(&count, attribute, device.index);
#else
  const gpuError_t err = cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device.index);
#endif
  if (err != gpuSuccess || count <= 0) {
    gpuGetLastError();
    return 1;
  }
  cached[device.index].store(count, std::memory_order_relaxed);
  return count;
}

Status SetDevice(const Device& device) {
  // Reading the current device is a thread-local lookup; setting it costs more, and the
  // Runtime calls this on every call.
  int current = -1;
  if (gpuGetDevice(&current) == gpuSuccess && current == device.index) return absl::OkStatus();
  OPSCHED_GPU_RETURN_IF_ERROR(gpuSetDevice(device.index), device.ToString());
  return absl::OkStatus();
}

Status DeviceScope::Enter(const Device& device) {
  if (device.is_cpu()) return absl::OkStatus();
  int current = -1;
  OPSCHED_GPU_RETURN_IF_ERROR(gpuGetDevice(&current), "current device");
  if (current == device.index) return absl::OkStatus();
  OPSCHED_GPU_RETURN_IF_ERROR(gpuSetDevice(device.index), device.ToString());
  previous_ = current;
  return absl::OkStatus();
}

DeviceScope::~DeviceScope() {
  if (previous_ >= 0) (void)gpuSetDevice(previous_);
}

StatusOr<void*> Malloc(const Device& device, size_t bytes) {
  OPSCHED_RETURN_IF_ERROR(SetDevice(device));
  void* ptr = nullptr;
  if (bytes == 0) return ptr;
  OPSCHED_GPU_RETURN_IF_ERROR(gpuMalloc(&ptr, bytes),
                              fmt::format("{} bytes on {}", bytes, device.ToString()));
  return ptr;
}

namespace {

// The calling thread's capture mode relaxed for its scope: an allocation made while a
// stream is captured is then not an error that invalidates the capture.
class RelaxedCapture {
 public:
  RelaxedCapture() { ok_ = gpuThreadExchangeStreamCaptureMode(&mode_) == gpuSuccess; }
  ~RelaxedCapture() {
    if (ok_) (void)gpuThreadExchangeStreamCaptureMode(&mode_);
  }

 private:
  gpuStreamCaptureMode mode_ = gpuStreamCaptureModeRelaxed;
  bool ok_ = false;
};

}  // namespace

StatusOr<void*> MallocDuringCapture(const Device& device, size_t bytes) {
  RelaxedCapture relaxed;
  return Malloc(device, bytes);
}

Status Free(const Device& device, void* ptr) {
  if (ptr == nullptr) return absl::OkStatus();
  OPSCHED_RETURN_IF_ERROR(SetDevice(device));
  OPSCHED_GPU_RETURN_IF_ERROR(gpuFree(ptr), device.ToString());
  return absl::OkStatus();
}

Status MemcpyAsync(void* dst, const void* src, size_t bytes, void* stream) {
  if (bytes == 0) return absl::OkStatus();
  OPSCHED_GPU_RETURN_IF_ERROR(
      gpuMemcpyAsync(dst, src, bytes, gpuMemcpyDefault, static_cast<gpuStream_t>(stream)),
      fmt::format("{} bytes", bytes));
  return absl::OkStatus();
}

Status MemsetAsync(void* dst, int value, size_t bytes, void* stream) {
  if (bytes == 0) return absl::OkStatus();
  OPSCHED_GPU_RETURN_IF_ERROR(
      gpuMemsetAsync(dst, value, bytes, static_cast<gpuStream_t>(stream)),
      fmt::format("{} bytes", bytes));
  return absl::OkStatus();
}

StatusOr<void*> HostAllocMapped(size_t bytes, void** device_ptr) {
  // Error slots may run out while a stream is captured: the pool grows then.
  RelaxedCapture relaxed;
  void* host = nullptr;
  OPSCHED_GPU_RETURN_IF_ERROR(gpuHostAlloc(&host, bytes, gpuHostAllocMapped),
                              fmt::format("{} bytes", bytes));
  gpuError_t err = gpuHostGetDevicePointer(device_ptr, host, 0);
  if (err != gpuSuccess) {
    gpuFreeHost(host);
    return ToStatus(err, "gpuHostGetDevicePointer", "");
  }
  return host;
}

Status FreeHost(void* host_ptr) {
  OPSCHED_GPU_RETURN_IF_ERROR(gpuFreeHost(host_ptr), "");
  return absl::OkStatus();
}

StatusOr<void*> StreamCreate(const Device& device) {
  OPSCHED_RETURN_IF_ERROR(SetDevice(device));
  gpuStream_t stream = nullptr;
  OPSCHED_GPU_RETURN_IF_ERROR(gpuStreamCreateWithFlags(&stream, gpuStreamNonBlocking),
                              device.ToString());
  return static_cast<void*>(stream);
}

Status StreamDestroy(void* stream) {
  OPSCHED_GPU_RETURN_IF_ERROR(gpuStreamDestroy(static_cast<gpuStream_t>(stream)), "");
  return absl::OkStatus();
}

Status StreamSynchronize(void* stream) {
  OPSCHED_GPU_RETURN_IF_ERROR(gpuStreamSynchronize(static_cast<gpuStream_t>(stream)), "");
  return absl::OkStatus();
}

StatusOr<bool> StreamCapturing(void* stream) {
  gpuStreamCaptureStatus status = gpuStreamCaptureStatusNone;
  OPSCHED_GPU_RETURN_IF_ERROR(gpuStreamIsCapturing(static_cast<gpuStream_t>(stream), &status), "capture status");
  return status != gpuStreamCaptureStatusNone;
}

Status StreamWaitEvent(void* stream, void* event) {
  OPSCHED_GPU_RETURN_IF_ERROR(gpuStreamWaitEvent(static_cast<gpuStream_t>(stream),
                                                 static_cast<gpuEvent_t>(event), 0),
                              "");
  return absl::OkStatus();
}

Status LaunchHostFunc(void* stream, void (*fn)(void*), void* user) {
  OPSCHED_GPU_RETURN_IF_ERROR(gpuLaunchHostFunc(static_cast<gpuStream_t>(stream), fn, user), "");
  return absl::OkStatus();
}

StatusOr<void*> EventCreate(const Device& device) {
  OPSCHED_RETURN_IF_ERROR(SetDevice(device));
  gpuEvent_t event = nullptr;
  OPSCHED_GPU_RETURN_IF_ERROR(gpuEventCreate(&event), device.ToString());
  return static_cast<void*>(event);
}

Status EventDestroy(void* event) {
  OPSCHED_GPU_RETURN_IF_ERROR(gpuEventDestroy(static_cast<gpuEvent_t>(event)), "");
  return absl::OkStatus();
}

Status EventRecord(void* event, void* stream) {
  OPSCHED_GPU_RETURN_IF_ERROR(
      gpuEventRecord(static_cast<gpuEvent_t>(event), static_cast<gpuStream_t>(stream)), "");
  return absl::OkStatus();
}

Status EventSynchronize(void* event) {
  OPSCHED_GPU_RETURN_IF_ERROR(gpuEventSynchronize(static_cast<gpuEvent_t>(event)), "");
  return absl::OkStatus();
}

StatusOr<bool> EventQuery(void* event) {
  const gpuError_t err = gpuEventQuery(static_cast<gpuEvent_t>(event));
  if (err == gpuErrorNotReady) {
    gpuGetLastError();  // not an error: clear it
    return false;
  }
  OPSCHED_GPU_RETURN_IF_ERROR(err, "");
  return true;
}

StatusOr<float> EventElapsedMs(void* start, void* end) {
  float ms = 0;
  OPSCHED_GPU_RETURN_IF_ERROR(gpuEventElapsedTime(&ms, static_cast<gpuEvent_t>(start),
                                                  static_cast<gpuEvent_t>(end)),
                              "");
  return ms;
}

Status LastLaunchError(std::string_view what) {
  return ToStatus(gpuGetLastError(), "kernel launch", what);
}

}  // namespace opsched::gpu
