#include "extern/cublas/cublas_handle.h"

#include <absl/container/flat_hash_map.h>

#include <array>

#include "core/format.h"
#include "core/gpu/gpu_status.h"

namespace opsched::cublas {
namespace {

StatusOr<cublasHandle_t> CreateHandle() {
  cublasHandle_t handle = nullptr;
  OPSCHED_CUBLAS_RETURN_IF_ERROR(cublasCreate(&handle));
  Status s = ToStatus(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  if (s.ok()) s = ToStatus(cublasSetAtomicsMode(handle, CUBLAS_ATOMICS_NOT_ALLOWED), "cublasSetAtomicsMode");
  if (s.ok()) s = ToStatus(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST), "cublasSetPointerMode");
  if (!s.ok()) {
    cublasDestroy(handle);
    return s;
  }
  return handle;
}

}  // namespace

StatusOr<cublasHandle_t> Handle(cudaStream_t stream, int slot) {
  if (slot < 0 || slot >= kSlots) {
    return absl::InvalidArgumentError(fmt::format("cuBLAS handle slot {} outside [0, {})", slot, kSlots));
  }
  thread_local absl::flat_hash_map<int, std::array<cublasHandle_t, kSlots>> handles;
  int device = 0;
  OPSCHED_GPU_RETURN_IF_ERROR(cudaGetDevice(&device), "cuBLAS handle");
  auto [it, inserted] = handles.try_emplace(device);
  if (inserted) it->second.fill(nullptr);
  cublasHandle_t& handle = it->second[slot];
  if (handle == nullptr) {
    OPSCHED_ASSIGN_OR_RETURN(handle, CreateHandle());
  }
  OPSCHED_CUBLAS_RETURN_IF_ERROR(cublasSetStream(handle, stream));
  return handle;
}

Status ToStatus(cublasStatus_t status, std::string_view call) {
  if (status == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  const std::string message =
      fmt::format("{}: {} ({})", call, cublasGetStatusString(status), cublasGetStatusName(status));
  switch (status) {
    case CUBLAS_STATUS_NOT_SUPPORTED:
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return absl::UnimplementedError(message);
    case CUBLAS_STATUS_INVALID_VALUE:
      return absl::InvalidArgumentError(message);
    case CUBLAS_STATUS_ALLOC_FAILED:
      return absl::ResourceExhaustedError(message);
    default:
      return absl::InternalError(message);
  }
}

}  // namespace opsched::cublas
