#include "extern/cudnn/cudnn_handle.h"

#include <absl/container/flat_hash_map.h>

#include "core/format.h"
#include "core/gpu/gpu_status.h"

namespace opsched::cudnn {

StatusOr<cudnnHandle_t> Handle(cudaStream_t stream) {
  thread_local absl::flat_hash_map<int, cudnnHandle_t> handles;
  int device = 0;
  OPSCHED_GPU_RETURN_IF_ERROR(cudaGetDevice(&device), "cuDNN handle");
  cudnnHandle_t& handle = handles[device];
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
}

}  // namespace opsched::cudnn
