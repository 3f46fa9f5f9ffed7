#include <map>
#include <mutex>

#include "ops/scatter/scatter_cuda_common.cuh"

namespace opsched::scatter::gpu_kernels {

gpuError_t AllowSharedMemory(const void* kernel, size_t bytes) {
  if (bytes <= 48 * 1024) return gpuSuccess;
  static std::mutex mu;
  static std::map<const void*, size_t> allowed;
  std::lock_guard<std::mutex> lock(mu);
  size_t& limit = allowed[kernel];
  if (limit >= bytes) return gpuSuccess;
  const gpuError_t e =
      gpuFuncSetAttribute(kernel, gpuFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
  if (e == gpuSuccess) limit = bytes;
  return e;
}

}  // namespace opsched::scatter::gpu_kernels
