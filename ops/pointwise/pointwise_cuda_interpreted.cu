// The interpreted-fused pointwise kernels: one prebuilt kernel runs any program.
//
// AccumulatorKernel (pointwise_cuda_accumulator.cuh) runs the accumulator form; this file
// launches it with 1, 2 or 4 lanes, pointwise_cuda_accumulator_wide.cu with 8 or 16.
// TileKernel (the `shared` knob) runs the bytecode with its slots in shared memory.
#include "ops/pointwise/pointwise_cuda.h"

#include "ops/pointwise/pointwise_cuda_accumulator.cuh"

namespace opsched::pointwise::gpu_kernels {
namespace {

// The element offset of row-major position `linear` in tensor t.
template <typename Index>
__device__ inline int64_t OffsetOf(const Bytecode& bc, int t, Index linear) {
  int64_t off = 0;
  for (int d = bc.rank - 1; d >= 0; --d) {
    const Index size = static_cast<Index>(bc.shape[d]);
    off += static_cast<int64_t>(linear % size) * bc.strides[t][d];
    linear /= size;
  }
  return off;
}

// The slots in shared memory: a block takes a tile of blockDim * per_thread elements,
// thread j elements j, j + blockDim, ...; slot k of its e-th element lives at
// tile[k][j + e * blockDim] (private to the thread, no bank conflicts, no sync). Each
// instruction runs over the thread's elements before the next: one dispatch per
// instruction and tile, coalesced scalar loads and stores, and a small loop body.
template <typename Index>
__global__ void __launch_bounds__(1024) TileKernel(const Bytecode bc, const TensorPointers p, int per_thread) {
  extern __shared__ float tile[];
  const Index numel = static_cast<Index>(bc.numel);
  const int width = blockDim.x * per_thread;
  for (Index base = static_cast<Index>(blockIdx.x) * width; base < numel; base += static_cast<Index>(gridDim.x) * width) {
    const int count = numel - base < static_cast<Index>(width) ? static_cast<int>(numel - base) : width;
    for (int k = 0; k < bc.num_instructions; ++k) {
      const Instruction in = bc.code[k];
      float* d = tile + in.dst * width;
      const float* a = tile + in.a * width;
      const float* b = tile + in.b * width;
#pragma unroll 1
      for (int j = threadIdx.x; j < count; j += blockDim.x) {
        switch (in.op) {
          case OpCode::kLoad:
            d[j] = LoadElement(bc.types[in.a], p.data[in.a], OffsetOf<Index>(bc, in.a, base + j));
            break;
          case OpCode::kConst:
            d[j] = in.value;
            break;
          case OpCode::kStore: {
            const int t = bc.num_inputs + in.dst;
            StoreElement(bc.types[t], const_cast<void*>(p.data[t]), static_cast<int64_t>(base + j), a[j]);
            break;
          }
          default:
            d[j] = IsBinary(in.op) ? Binary(in.op, a[j], b[j]) : Unary(in.op, a[j]);
            break;
        }
      }
    }
  }
}

}  // namespace

bool SharedSpillBlock(int block, int vector) {
  return (block == 128 || block == 256 || block == 512) && block <= MaxInterpretedBlock(vector);
}

size_t SpillSharedBytes(const AccCode& code, int vector, int block) {
  return static_cast<size_t>(code.num_spills) * vector * sizeof(float) * block;
}

bool VectorFits(const Bytecode& bc, int vector) {
  if (vector <= 1) return true;
  if (bc.rank == 0) return false;
  return bc.shape[bc.rank - 1] % vector == 0;
}

size_t TileSharedBytes(const Bytecode& bc, const LaunchConfig& c) {
  return static_cast<size_t>(bc.num_slots > 0 ? bc.num_slots : 1) * c.block * c.vector * sizeof(float);
}

gpuError_t LaunchInterpreted(const Bytecode& bc, const AccCode& code, const TensorPointers& p,
                             const LaunchConfig& c, gpuStream_t stream) {
  if (c.block < 1 || c.items < 1) return gpuErrorInvalidValue;  // GridFor divides by their product
  if (bc.numel == 0) return gpuSuccess;
  if (c.shared_slots) {
    const size_t shared = TileSharedBytes(bc, c);
    if (shared > kMaxTileSharedBytes) return gpuErrorInvalidValue;
    const unsigned grid = GridFor(bc.numel, int64_t(c.block) * c.vector * c.items);
    if (bc.numel < (int64_t(1) << 31)) {
      TileKernel<uint32_t><<<grid, c.block, shared, stream>>>(bc, p, c.vector);
    } else {
      TileKernel<int64_t><<<grid, c.block, shared, stream>>>(bc, p, c.vector);
    }
    return gpuGetLastError();
  }
  const int vector = VectorFits(bc, c.vector) ? c.vector : 1;
  if (c.block > MaxInterpretedBlock(vector)) return gpuErrorInvalidValue;  // AccumulatorKernel's launch bound
  switch (vector) {
    case 2: return Launch<2>(bc, code, p, c, stream);
    case 4: return Launch<4>(bc, code, p, c, stream);
    case 8:
    case 16: return LaunchAccumulatorWide(bc, code, p, c, vector, stream);
    default: return Launch<1>(bc, code, p, c, stream);
  }
}

}  // namespace opsched::pointwise::gpu_kernels
