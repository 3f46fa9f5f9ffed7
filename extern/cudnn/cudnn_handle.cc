#include "extern/cudnn/cudnn_handle.h"

#include <utility>

#include <absl/container/flat_hash_map.h>

#include "core/format.h"
#include "core/gpu/gpu_status.h"

namespace opsched::cudnn {

StatusOr<cudnnHandle_t> Handle(cudaStream_t stream, int slot) {
  // Keyed by (device, slot).
  thread_local absl::flat_hash_map<std::pair<int, int>, cudnnHandle_t> handles;
  int device = 0;
  OPSCHED_GPU_RETURN_IF_ERROR(cudaGetDevice(&device), "cuDNN handle");
  cudnnHandle_t& handle = handles[{device, slot}];
  if (handle == nullptr) {
    const cudnnStatus_t s = cudnnCreate(&handle);
    if (s != CUDNN_STATUS_SUCCESS) {
      handle = nullptr;
      return ToStatus(s, "cudnnCreate");
    }
  }
  OPSCHED_CUDNN_RETURN_IF_ERROR(cudnnSetStream(handle, stream));
  return handle;
}

Status ToStatus(cudnnStatus_t status, std::string_view call) {
  if (status == CUDNN_STATUS_SUCCESS) return absl::OkStatus();
  const std::string message = fmt::format("{}: {}", call, cudnnGetErrorString(status));
#if CUDNN_MAJOR >= 9
  // cuDNN 9 refines a status into a category and a specific error (NOT_SUPPORTED_SHAPE
  // is 3002 in category NOT_SUPPORTED 3000): classify by category so that every
  // refinement of "not supported" reads as Unimplemented (not applicable).
  if (status == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED ||
      status == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED) {
    return absl::ResourceExhaustedError(message);
  }
  switch (CUDNN_STATUS_CATEGORY(status)) {
    case CUDNN_STATUS_NOT_SUPPORTED:
      return absl::UnimplementedError(message);
    case CUDNN_STATUS_BAD_PARAM:
      return absl::InvalidArgumentError(message);
    default:
      return absl::InternalError(message);
  }
#else
  switch (status) {
    case CUDNN_STATUS_NOT_SUPPORTED:
      return absl::UnimplementedError(message);
    case CUDNN_STATUS_BAD_PARAM:
      return absl::InvalidArgumentError(message);
    case CUDNN_STATUS_ALLOC_FAILED:
      return absl::ResourceExhaustedError(message);
    default:
      return absl::InternalError(message);
  }
#endif
}

}  // namespace opsched::cudnn
