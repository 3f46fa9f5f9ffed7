#include "ops/reduce/reduce_cuda_common.cuh"

namespace opsched::reduce::gpu_kernels {
namespace {

// One thread per output, partials in order: for many outputs and few parts.
template <typename A, typename Out>
__global__ void FinishThreads(const A* __restrict__ partial, Problem p, int split) {
  gpu::GridDependencyWait();  // the partials are written
  const int64_t m = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (m >= p.outputs) return;
  A acc = IdentityOf<A>(p.op);
  for (int j = 0; j < split; ++j) acc = Combine(p.op, acc, partial[int64_t(j) * p.outputs + m]);
  static_cast<typename Out::Storage*>(p.y)[m] = Output<Out>(p, acc);
}

// One block per output: for few outputs of many parts.
template <typename A, typename Out>
__global__ void FinishBlocks(const A* __restrict__ partial, Problem p, int split) {
  gpu::GridDependencyWait();  // the partials are written
  __shared__ A shared[32];
  const int64_t m = blockIdx.x;
  A acc = IdentityOf<A>(p.op);
  for (int j = threadIdx.x; j < split; j += blockDim.x) acc = Combine(p.op, acc, partial[int64_t(j) * p.outputs + m]);
  acc = BlockReduce(p.op, acc, shared);
  if (threadIdx.x == 0) static_cast<typename Out::Storage*>(p.y)[m] = Output<Out>(p, acc);
}

// Tiles of 32 outputs by 8 part lanes: lane y combines parts y, y + 8, ... of its output
// in order, then lane 0 the 8 lane results in order (deterministic). For many outputs of
// many parts, where a block per output (FinishBlocks) paid a block's start and
// synchronisation per output: 9.3 us (Nsight Compute, the H200) for 4,096 outputs of 64
// parts, where a thread per output took 2.9
// (docs/results/nvidia-h200/reduce-lean-kernels-2026-11-29/).
inline constexpr int kTileOutputs = 32;
inline constexpr int kTileLanes = 8;
// Up to this many outputs, a block each (FinishBlocks) when they have 64 parts or more.
inline constexpr int64_t kFewOutputs = 256;

template <typename A, typename Out>
__global__ void __launch_bounds__(kTileOutputs * kTileLanes) FinishTiles(const A* __restrict__ partial, Problem p, int split) {
  gpu::GridDependencyWait();  // the partials are written
  __shared__ A shared[kTileLanes][kTileOutputs];
  const int64_t m = int64_t(blockIdx.x) * kTileOutputs + threadIdx.x;
  A acc = IdentityOf<A>(p.op);
  if (m < p.outputs) {
    for (int j = threadIdx.y; j < split; j += kTileLanes) acc = Combine(p.op, acc, partial[int64_t(j) * p.outputs + m]);
  }
  shared[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y == 0 && m < p.outputs) {
    for (int y = 1; y < kTileLanes; ++y) acc = Combine(p.op, acc, shared[y][threadIdx.x]);
    static_cast<typename Out::Storage*>(p.y)[m] = Output<Out>(p, acc);
  }
}

}  // namespace

gpuError_t LaunchFinish(const Problem& p, const void* partial, int split, gpuStream_t stream) {
  if (p.outputs == 0) return gpuSuccess;
  return VisitAllTypes(p, [&]<typename In, typename Out>() {
    using A = AccumulatorOf<In>;
    const A* parts = static_cast<const A*>(partial);
    if (split <= 4) {  // a few loads a thread, one thread an output
      return gpu::LaunchDependent(FinishThreads<A, Out>, dim3(static_cast<unsigned>(CeilDiv(p.outputs, 256))), dim3(256), 0,
                                  stream, parts, p, split);
    }
    if (split >= 64 && p.outputs <= kFewOutputs) {  // a block's 256 threads for each output
      return gpu::LaunchDependent(FinishBlocks<A, Out>, dim3(static_cast<unsigned>(p.outputs)), dim3(256), 0, stream, parts,
                                  p, split);
    }
    return gpu::LaunchDependent(FinishTiles<A, Out>, dim3(static_cast<unsigned>(CeilDiv(p.outputs, kTileOutputs))),
                                dim3(kTileOutputs, kTileLanes), 0, stream, parts, p, split);
  });
}

size_t SplitWorkspaceBytes(const Problem& p, int split) {
  return split > 1 ? static_cast<size_t>(p.outputs) * split * AccumulatorBytes(p.in_type) : 0;
}

}  // namespace opsched::reduce::gpu_kernels
