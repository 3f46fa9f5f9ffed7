// Kernel of core/gpu/l2_flush_kernels.h.
#include <algorithm>
#include <cstdint>

#include "core/gpu/gpu_backend.h"
#include "core/gpu/l2_flush_kernels.h"
#include "core/gpu/portability.h"

namespace opsched::gpu {
namespace {

constexpr int kBlock = 256;
constexpr int kUnroll = 4;  // loads in flight per thread

// Folds the words it loads into one; a thread stores only where the fold equals `never`,
// which the caller picks so that no content of a buffer it memset can give it. The store
// is there so the compiler keeps the loads, and it could only touch the buffer itself.
__global__ void ReadKernel(const uint4* words, int64_t n, uint32_t never, uint32_t* sink) {
  uint32_t fold = 0;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < n; i += kUnroll * stride) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = words[i + u * stride];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) fold ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < n; i += stride) {
    const uint4 v = words[i];
    fold ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (fold == never) *sink = fold;
}

}  // namespace

Status ReadBufferAsync(const void* buffer, size_t bytes, void* stream) {
  const int64_t n = static_cast<int64_t>(bytes / sizeof(uint4));
  if (n == 0) return absl::OkStatus();
  const int blocks = static_cast<int>(std::clamp<int64_t>(n / (kBlock * kUnroll), 1, 4096));
  // A buffer of equal bytes (what L2Flusher memsets) folds to 0 in every thread: the four
  // 32-bit lanes of each word are equal, and x^y^z^w of equal lanes is 0.
  auto* words = static_cast<const uint4*>(buffer);
  ReadKernel<<<blocks, kBlock, 0, static_cast<gpuStream_t>(stream)>>>(
      words, n, 0x9e3779b9u, const_cast<uint32_t*>(reinterpret_cast<const uint32_t*>(buffer)));
  return LastLaunchError("L2 read flush");
}

}  // namespace opsched::gpu
