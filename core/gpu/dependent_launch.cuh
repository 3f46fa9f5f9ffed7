// Programmatic dependent launch (CUDA, sm_90 and later): a kernel launched with
// LaunchDependent may begin while the kernel before it in the stream is still running, so
// that its launch and whatever it does before GridDependencyWait() overlap that kernel's
// last blocks. It must call GridDependencyWait() before it reads anything the kernel
// before it writes, or writes anything that kernel reads or writes; after the wait, all of
// that kernel's memory operations are complete and visible. The kernel before it may call
// AllowDependentLaunch() so that the dependent one is launched once all of its blocks run
// (otherwise, as its blocks exit).
//
// Elsewhere (HIP, devices before sm_90, a launch without the attribute) the wait and the
// trigger do nothing and the launch is an ordinary one: stream order holds as always.
#pragma once

#include <utility>

#include "core/gpu/portability.h"

namespace opsched::gpu {

__device__ __forceinline__ void GridDependencyWait() {
#if defined(OPSCHED_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void AllowDependentLaunch() {
#if defined(OPSCHED_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// kernel<<<grid, block, shared, stream>>>(args...), allowed to overlap the kernel before
// it in the stream (see above). Where the attributed launch is refused, an ordinary one.
template <typename... Params, typename... Args>
gpuError_t LaunchDependent(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared, gpuStream_t stream,
                           Args&&... args) {
#if defined(OPSCHED_CUDA)
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared;
  config.stream = stream;
  config.attrs = attribute;
  config.numAttrs = 1;
  if (cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...) == cudaSuccess) return cudaSuccess;
  (void)cudaGetLastError();  // refused: launch it the ordinary way
#endif
  kernel<<<grid, block, shared, stream>>>(std::forward<Args>(args)...);
  return gpuGetLastError();
}

}  // namespace opsched::gpu
