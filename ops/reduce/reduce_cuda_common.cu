#include "ops/reduce/reduce_cuda_common.cuh"

namespace opsched::reduce::gpu_kernels {
namespace {

// One thread per output, partials in order: for many outputs and few parts.
template <typename A, typename Out>
__global__ void FinishThreads(const A* __restrict__ partial, Problem p, int split) {
  const int64_t m = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (m >= p.outputs) return;
  A acc = IdentityOf<A>(p.op);
  for (int j = 0; j < split; ++j) acc = Combine(p.op, acc, partial[int64_t(j) * p.outputs + m]);
  static_cast<typename Out::Storage*>(p.y)[m] = Output<Out>(p, acc);
}

// One block per output: for few outputs of many parts.
template <typename A, typename Out>
__global__ void FinishBlocks(const A* __restrict__ partial, Problem p, int split) {
  __shared__ A shared[32];
  const int64_t m = blockIdx.x;
  A acc = IdentityOf<A>(p.op);
  for (int j = threadIdx.x; j < split; j += blockDim.x) acc = Combine(p.op, acc, partial[int64_t(j) * p.outputs + m]);
  acc = BlockReduce(p.op, acc, shared);
  if (threadIdx.x == 0) static_cast<typename Out::Storage*>(p.y)[m] = Output<Out>(p, acc);
}

}  // namespace

gpuError_t LaunchFinish(const Problem& p, const void* partial, int split, gpuStream_t stream) {
  if (p.outputs == 0) return gpuSuccess;
  return VisitAllTypes(p, [&]<typename In, typename Out>() {
    using A = AccumulatorOf<In>;
    const A* parts = static_cast<const A*>(partial);
    if (split >= 64 && p.outputs <= (int64_t(1) << 31) - 1) {
      FinishBlocks<A, Out><<<static_cast<unsigned>(p.outputs), 256, 0, stream>>>(parts, p, split);
    } else {
      FinishThreads<A, Out><<<static_cast<unsigned>(CeilDiv(p.outputs, 256)), 256, 0, stream>>>(parts, p, split);
    }
    return gpuGetLastError();
  });
}

size_t SplitWorkspaceBytes(const Problem& p, int split) {
  return split > 1 ? static_cast<size_t>(p.outputs) * split * AccumulatorBytes(p.in_type) : 0;
}

}  // namespace opsched::reduce::gpu_kernels
