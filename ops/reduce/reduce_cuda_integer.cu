// The integer reduction (reduce_cuda.h, LaunchInteger): i32/i64 terms accumulated in int64
// (sums wrap around), `group` threads per output striding over its terms, combined in a
// fixed order (deterministic).
#include "ops/reduce/reduce_cuda_common.cuh"

namespace opsched::reduce::gpu_kernels {
namespace {

__device__ __forceinline__ int64_t ShflXor(int64_t v, int lane_mask, int width) {
  const long long w = static_cast<long long>(v);
#if defined(OPSCHED_HIP)
  return __shfl_xor(w, lane_mask, width);
#else
  return __shfl_xor_sync(0xffffffffu, w, lane_mask, width);
#endif
}

// Threads [m * group, (m + 1) * group) of the grid reduce output m; group is a power of
// two <= 32 dividing blockDim.x, or blockDim.x itself (one output per block).
template <typename In, typename Out>
__global__ void IntegerKernel(Problem p, Odometer kept, Odometer reduced, int group) {
  using S = typename In::Storage;
  const S* __restrict__ x = static_cast<const S*>(p.x);
  auto* __restrict__ y = static_cast<typename Out::Storage*>(p.y);
  const int outputs_per_block = blockDim.x / group;
  const int64_t m = int64_t(blockIdx.x) * outputs_per_block + threadIdx.x / group;
  const int lane = threadIdx.x % group;
  const bool active = m < p.outputs;
  int64_t acc = IntegerIdentity(p.op);
  if (active) {
    const int64_t base = kept.Offset(static_cast<uint32_t>(m));
    for (int64_t k = lane; k < p.length; k += group) {
      acc = Combine(p.op, acc, static_cast<int64_t>(x[base + reduced.Offset(static_cast<uint32_t>(k))]));
    }
  }
  const int width = group < 32 ? group : 32;
  for (int o = width / 2; o > 0; o /= 2) acc = Combine(p.op, acc, ShflXor(acc, o, width));
  if (group > 32) {
    __shared__ int64_t warps[32];
    if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = acc;
    __syncthreads();
    if (threadIdx.x != 0) return;
    for (int w = 1; w < group / 32; ++w) acc = Combine(p.op, acc, warps[w]);
  } else if (lane != 0) {
    return;
  }
  if (active) y[m] = Out::Store(static_cast<typename Out::Compute>(acc));
}

}  // namespace

gpuError_t LaunchInteger(const Problem& p, int group, int block, gpuStream_t stream) {
  if (p.outputs == 0) return gpuSuccess;
  if (group < 1 || (group & (group - 1)) != 0 || group > 1024 || (group > 32 && block != group) || block % group != 0 ||
      block > 1024) {
    return gpuErrorInvalidValue;
  }
  const Odometer kept(p.kept_rank, p.kept_shape, p.kept_strides);
  const Odometer reduced(p.reduced_rank, p.reduced_shape, p.reduced_strides);
  const unsigned blocks = static_cast<unsigned>(CeilDiv(p.outputs, block / group));
  auto launch = [&]<typename In, typename Out>() {
    IntegerKernel<In, Out><<<blocks, block, 0, stream>>>(p, kept, reduced, group);
    return gpuGetLastError();
  };
  switch (p.in_type) {
    case ElementType::kI32:
      return p.out_type == ElementType::kI64 ? launch.template operator()<I32, I64>()
                                             : launch.template operator()<I32, I32>();
    case ElementType::kI64:
      return launch.template operator()<I64, I64>();
    default:
      return gpuErrorInvalidValue;
  }
}

}  // namespace opsched::reduce::gpu_kernels
