// Turns a CUDA/HIP error code into a Status naming the call and its context.
#pragma once

#include <string_view>

#include "core/gpu/portability.h"
#include "core/status.h"

namespace opsched::gpu {

// OK for gpuSuccess; otherwise e.g. "cudaMalloc(4096 bytes): out of memory
// (cudaErrorMemoryAllocation)" with code ResourceExhausted for allocation failures and
// Internal for the rest.
Status ToStatus(gpuError_t err, std::string_view call, std::string_view context = {});

}  // namespace opsched::gpu

// Evaluates a CUDA/HIP runtime call and returns its error as a Status.
#define OPSCHED_GPU_RETURN_IF_ERROR(call, context) \
  OPSCHED_RETURN_IF_ERROR(::opsched::gpu::ToStatus((call), #call, (context)))
