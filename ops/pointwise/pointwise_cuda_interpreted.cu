// The interpreted-fused pointwise kernel: one prebuilt kernel runs any program's
// bytecode (pointwise_bytecode.h). A thread takes V consecutive elements of one run of
// the innermost dimension, runs every instruction over those V lanes (slots V wide, so
// an instruction's dispatch is paid once per V elements), loads a contiguous input with
// one packed load, reads a broadcast input once, and writes each output with one
// packed store; grid-stride over the groups. Indices are 32-bit when the iteration
// space allows.
#include "ops/pointwise/pointwise_cuda.h"
#include "ops/pointwise/pointwise_cuda_common.cuh"

namespace opsched::pointwise::gpu_kernels {
namespace {

template <typename Index>
__device__ inline void OffsetsOf(const Bytecode& bc, Index linear, int tensors, int64_t* off) {
  for (int t = 0; t < tensors; ++t) off[t] = 0;
  for (int d = bc.rank - 1; d >= 0; --d) {
    const Index size = static_cast<Index>(bc.shape[d]);
    const Index c = linear % size;
    linear /= size;
    for (int t = 0; t < tensors; ++t) off[t] += static_cast<int64_t>(c) * bc.strides[t][d];
  }
}

template <int V, typename Index>
__global__ void __launch_bounds__(1024) InterpretKernel(const Bytecode bc, const TensorPointers p) {
  const int tensors = bc.num_inputs + bc.num_outputs;
  const int inner_dim = bc.rank - 1;
  const Index groups = static_cast<Index>(bc.numel / V);
  const Index stride = static_cast<Index>(gridDim.x) * blockDim.x;
  for (Index g = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; g < groups; g += stride) {
    int64_t off[kMaxTensors];
    OffsetsOf<Index>(bc, g * V, tensors, off);
    float s[kMaxSlots][V];
    for (int k = 0; k < bc.num_instructions; ++k) {
      const Instruction in = bc.code[k];
      float* d = s[in.dst];
      switch (in.op) {
        case OpCode::kLoad:
          LoadRun<V>(bc.types[in.a], p.data[in.a], off[in.a], inner_dim >= 0 ? bc.strides[in.a][inner_dim] : 0, d);
          break;
        case OpCode::kConst:
#pragma unroll
          for (int e = 0; e < V; ++e) d[e] = in.value;
          break;
        case OpCode::kStore: {
          const int t = bc.num_inputs + in.dst;
          StoreRun<V>(bc.types[t], const_cast<void*>(p.data[t]), off[t], s[in.a]);
          break;
        }
        default:
          if (IsBinary(in.op)) {
            float a[V], b[V];
#pragma unroll
            for (int e = 0; e < V; ++e) {
              a[e] = s[in.a][e];
              b[e] = s[in.b][e];
            }
#pragma unroll
            for (int e = 0; e < V; ++e) d[e] = Binary(in.op, a[e], b[e]);
          } else {
            float a[V];
#pragma unroll
            for (int e = 0; e < V; ++e) a[e] = s[in.a][e];
#pragma unroll
            for (int e = 0; e < V; ++e) d[e] = Unary(in.op, a[e]);
          }
          break;
      }
    }
  }
}

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

template <int V>
gpuError_t Launch(const Bytecode& bc, const TensorPointers& p, const LaunchConfig& c, gpuStream_t stream) {
  const int64_t groups = bc.numel / V;
  const unsigned grid = GridFor(groups, int64_t(c.block) * c.items);
  if (bc.numel < (int64_t(1) << 31)) {
    InterpretKernel<V, uint32_t><<<grid, c.block, 0, stream>>>(bc, p);
  } else {
    InterpretKernel<V, int64_t><<<grid, c.block, 0, stream>>>(bc, p);
  }
  return gpuGetLastError();
}

}  // namespace

bool VectorFits(const Bytecode& bc, int vector) {
  if (vector <= 1) return true;
  if (bc.rank == 0) return false;
  return bc.shape[bc.rank - 1] % vector == 0;
}

size_t TileSharedBytes(const Bytecode& bc, const LaunchConfig& c) {
  return static_cast<size_t>(bc.num_slots > 0 ? bc.num_slots : 1) * c.block * c.vector * sizeof(float);
}

gpuError_t LaunchInterpreted(const Bytecode& bc, const TensorPointers& p, const LaunchConfig& c,
                             gpuStream_t stream) {
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
  switch (vector) {
    case 2: return Launch<2>(bc, p, c, stream);
    case 4: return Launch<4>(bc, p, c, stream);
    case 8: return Launch<8>(bc, p, c, stream);
    default: return Launch<1>(bc, p, c, stream);
  }
}

}  // namespace opsched::pointwise::gpu_kernels
