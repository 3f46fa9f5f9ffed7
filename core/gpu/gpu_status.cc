#include "core/gpu/gpu_status.h"

#include "core/format.h"

namespace opsched::gpu {

Status ToStatus(gpuError_t err, std::string_view call, std::string_view context) {
  if (err == gpuSuccess) return absl::OkStatus();
  // The call as the vendor names it ("gpuMalloc(&p, n)" -> "cudaMalloc"), without its
  // argument list.
  std::string_view name = call.substr(0, call.find('('));
  if (name.substr(0, 3) == "gpu") name.remove_prefix(3);
  std::string message =
      context.empty()
          ? fmt::format("{}{}: {} ({})", OPSCHED_GPU_BACKEND_NAME, name, gpuGetErrorString(err),
                        gpuGetErrorName(err))
          : fmt::format("{}{}({}): {} ({})", OPSCHED_GPU_BACKEND_NAME, name, context,
                        gpuGetErrorString(err), gpuGetErrorName(err));
  if (err == gpuErrorMemoryAllocation) return absl::ResourceExhaustedError(message);
  return absl::InternalError(message);
}

}  // namespace opsched::gpu
