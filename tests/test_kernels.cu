#include "tests/test_kernels.h"

#include "core/gpu/gpu_backend.h"
#include "core/gpu/portability.h"
#include "core/half.h"

#include <string>

namespace opsched::testing {
namespace {

__device__ uint64_t WallClockNs(uint64_t ticks_per_ms) {
#if defined(OPSCHED_HIP)
  return static_cast<uint64_t>(clock64()) * 1000000ull / ticks_per_ms;
#else
  (void)ticks_per_ms;
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
#endif
}

__global__ void SpinKernel(uint64_t nanoseconds, uint64_t ticks_per_ms) {
  uint64_t start = WallClockNs(ticks_per_ms);
  while (WallClockNs(ticks_per_ms) - start < nanoseconds) {
  }
}

__global__ void TwiceOnePlusKernel(float* data, int64_t n) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) data[i] = data[i] * 2.0f + 1.0f;
}

__global__ void AddScalarKernel(const float* x, float* y, int64_t n, float delta) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = x[i] + delta;
}

__global__ void ConversionsKernel(const float* x, uint16_t* half, uint16_t* bf16, const uint16_t* bits, float* back,
                                  int64_t n) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) {
    half[i] = FloatToHalf(x[i]);
    bf16[i] = FloatToBf16(x[i]);
    back[i] = HalfToFloat(bits[i]);
  }
}

}  // namespace

Status LaunchConversions(const Stream& stream, const float* x, uint16_t* half, uint16_t* bf16,
                         const uint16_t* bits, float* back, int64_t n) {
  if (n == 0) return absl::OkStatus();
  const int64_t blocks = (n + 255) / 256;
  ConversionsKernel<<<static_cast<unsigned>(blocks), 256, 0, static_cast<gpuStream_t>(stream.native())>>>(
      x, half, bf16, bits, back, n);
  return gpu::LastLaunchError("ConversionsKernel");
}

Status LaunchSpin(const Stream& stream, int64_t nanoseconds) {
  uint64_t ticks_per_ms = 0;
#if defined(OPSCHED_HIP)
  int khz = 0;
  // clock64() counts shader clock cycles on AMD GPUs; its rate is the clock rate in kHz.
  if (hipDeviceGetAttribute(&khz, hipDeviceAttributeClockRate, stream.device().index) !=
      hipSuccess) {
    return absl::InternalError("hipDeviceAttributeClockRate");
  }
  ticks_per_ms = static_cast<uint64_t>(khz);
#endif
  SpinKernel<<<1, 1, 0, static_cast<gpuStream_t>(stream.native())>>>(
      static_cast<uint64_t>(nanoseconds), ticks_per_ms);
  return gpu::LastLaunchError("SpinKernel");
}

Status LaunchTwiceOnePlus(const Stream& stream, float* data, int64_t n) {
  if (n == 0) return absl::OkStatus();
  int64_t blocks = (n + 255) / 256;
  TwiceOnePlusKernel<<<static_cast<unsigned>(blocks), 256, 0,
                       static_cast<gpuStream_t>(stream.native())>>>(data, n);
  return gpu::LastLaunchError("TwiceOnePlusKernel");
}

Status LaunchAddScalar(const Stream& stream, const float* x, float* y, int64_t n, float delta) {
  if (n == 0) return absl::OkStatus();
  int64_t blocks = (n + 255) / 256;
  AddScalarKernel<<<static_cast<unsigned>(blocks), 256, 0, static_cast<gpuStream_t>(stream.native())>>>(x, y, n,
                                                                                                         delta);
  return gpu::LastLaunchError("AddScalarKernel");
}

#if defined(OPSCHED_HIP)
#define OPSCHED_GRAPH(name) hip##name
using GraphT = hipGraph_t;
using GraphExecT = hipGraphExec_t;
constexpr auto kCaptureGlobal = hipStreamCaptureModeGlobal;
#else
#define OPSCHED_GRAPH(name) cuda##name
using GraphT = cudaGraph_t;
using GraphExecT = cudaGraphExec_t;
constexpr auto kCaptureGlobal = cudaStreamCaptureModeGlobal;
#endif

Status BeginCapture(const Stream& stream) {
  if (OPSCHED_GRAPH(StreamBeginCapture)(static_cast<gpuStream_t>(stream.native()), kCaptureGlobal) != gpuSuccess) {
    return absl::InternalError("StreamBeginCapture");
  }
  return absl::OkStatus();
}

StatusOr<void*> EndCapture(const Stream& stream) {
  GraphT graph = nullptr;
  const gpuError_t ended = OPSCHED_GRAPH(StreamEndCapture)(static_cast<gpuStream_t>(stream.native()), &graph);
  if (ended != gpuSuccess) {
    return absl::InternalError(std::string("StreamEndCapture: ") + gpuGetErrorString(ended));
  }
  GraphExecT exec = nullptr;
  const gpuError_t made = OPSCHED_GRAPH(GraphInstantiateWithFlags)(&exec, graph, 0);
  OPSCHED_GRAPH(GraphDestroy)(graph);
  if (made != gpuSuccess) return absl::InternalError(std::string("GraphInstantiate: ") + gpuGetErrorString(made));
  return static_cast<void*>(exec);
}

Status ReplayGraph(void* graph, const Stream& stream) {
  const gpuError_t e =
      OPSCHED_GRAPH(GraphLaunch)(static_cast<GraphExecT>(graph), static_cast<gpuStream_t>(stream.native()));
  if (e != gpuSuccess) return absl::InternalError(std::string("GraphLaunch: ") + gpuGetErrorString(e));
  return absl::OkStatus();
}

void DestroyGraph(void* graph) {
  if (graph != nullptr) (void)OPSCHED_GRAPH(GraphExecDestroy)(static_cast<GraphExecT>(graph));
}

}  // namespace opsched::testing
