// The interpreted-fused pointwise kernels: one prebuilt kernel runs any program.
//
// AccumulatorKernel runs the accumulator form (pointwise_accumulator.h). A thread takes V
// consecutive elements of one run of the innermost dimension and runs every instruction
// over those V lanes: the accumulator is V floats in registers (never indexed at run
// time). The spill slots, V lanes each, live in shared memory while the block's fit in
// 48 KiB (then a thread needs at most 64 registers); otherwise up to kRegisterSpillSlots
// of them in registers, and more in the thread's local memory. An instruction's
// dispatch, a warp-uniform switch over its dense key, is paid once per V elements; the
// kernel's parameters are read in place (__grid_constant__), never copied per thread. A
// contiguous input is one packed load, a broadcast input is read once, each output one
// packed store; the element's coordinates are kept in registers and each tensor's offset
// is formed from them where it is loaded or stored. Grid-stride over the groups; indices
// are 32-bit when the iteration space allows.
//
// TileKernel (the `shared` knob) runs the bytecode with its slots in shared memory.
#include "ops/pointwise/pointwise_cuda.h"

#include <type_traits>

#include "ops/pointwise/pointwise_cuda_common.cuh"

namespace opsched::pointwise::gpu_kernels {
namespace {

#if defined(OPSCHED_CUDA)
// Kernel parameters read in place (indexed at run time) instead of copied to local memory.
#define OPSCHED_GRID_CONSTANT __grid_constant__
#else
#define OPSCHED_GRID_CONSTANT
#endif

// The spill slots, V lanes each. Few slots live in registers: `With(slot, f)` calls f on
// the slot's lanes through a chain of warp-uniform branches on its number, so no array is
// indexed at run time and nothing is copied (before, a slot was read by selecting among all
// of them, V moves per slot and access: 36 of the 8-op chain's 118 instructions an
// element). Many slots live in the thread's local memory, indexed.
template <int S, int V, bool kInRegisters = (S <= kRegisterSpillSlots)>
struct SpillSlots {
  float r[S][V];
  template <int I = 0, typename F>
  __device__ void With(int slot, F&& f) {
    if constexpr (I + 1 < S) {
      if (slot == I) {
        f(r[I]);
      } else {
        With<I + 1>(slot, f);
      }
    } else {
      f(r[I]);
    }
  }
};

template <int S, int V>
struct SpillSlots<S, V, false> {
  float r[S][V];
  template <typename F>
  __device__ void With(int slot, F&& f) {
    f(r[slot]);
  }
};

// spill[slot] = acc (registers or local memory).
template <int S, int V>
__device__ inline void Store(SpillSlots<S, V>& spill, int slot, const float* acc) {
  spill.With(slot, [&](float (&x)[V]) {
#pragma unroll
    for (int e = 0; e < V; ++e) x[e] = acc[e];
  });
}

// The spill slots in shared memory, while they fit (kMaxTileSharedBytes a block), so that
// a thread's registers hold only the accumulator, one operand and the math: at most 64,
// where four register slots of 16 lanes took 64 alone (128 a thread, a quarter of the
// SM's warps resident). A slot's V lanes are chunks of up to 4 floats; chunk c of slot s
// of thread t is chunk (s * kChunks + c) * blockDim + t of the block's dynamic shared
// memory, so a warp's access to one chunk is consecutive (no bank conflicts). A read
// copies the slot into an operand; the slot number is an offset, not a branch.
extern __shared__ float4 spill_smem[];

template <int V>
struct SharedSpillSlots {
  using Chunk = std::conditional_t<V % 4 == 0, float4, std::conditional_t<V % 2 == 0, float2, float>>;
  static constexpr int kLanes = sizeof(Chunk) / sizeof(float);
  static constexpr int kChunks = V / kLanes;

  __device__ SharedSpillSlots() : mine(reinterpret_cast<Chunk*>(spill_smem) + threadIdx.x), stride(blockDim.x) {}

  template <typename F>
  __device__ void With(int slot, F&& f) {
    float x[V];
    const Chunk* p = Slot(slot);
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const Chunk q = p[c * stride];
      const float* lanes = reinterpret_cast<const float*>(&q);
#pragma unroll
      for (int l = 0; l < kLanes; ++l) x[c * kLanes + l] = lanes[l];
    }
    f(x);
  }
  __device__ void Store(int slot, const float* acc) {
    Chunk* p = Slot(slot);
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      Chunk q;
      float* lanes = reinterpret_cast<float*>(&q);
#pragma unroll
      for (int l = 0; l < kLanes; ++l) lanes[l] = acc[c * kLanes + l];
      p[c * stride] = q;
    }
  }

 private:
  __device__ Chunk* Slot(int slot) const { return mine + static_cast<unsigned>(slot) * kChunks * stride; }
  Chunk* mine;      // chunk 0 of slot 0 of this thread
  unsigned stride;  // chunks between a thread's consecutive chunks
};

template <int V>
__device__ inline void Store(SharedSpillSlots<V>& spill, int slot, const float* acc) {
  spill.Store(slot, acc);
}

// The kernel's launch bound on resident blocks: none with private slots (ptxas then keeps
// up to 128 registers; a stated 1 let it take 150, spilling nothing but slower), and with
// shared slots enough blocks of the largest size for 64 registers a thread.
template <typename Spill>
inline constexpr int kMinBlocks = 0;
template <int V>
inline constexpr int kMinBlocks<SharedSpillSlots<V>> = 65536 / (64 * MaxInterpretedBlock(V));

template <int V, typename F>
__device__ inline void Each(float* acc, F f) {
#pragma unroll
  for (int e = 0; e < V; ++e) acc[e] = f(acc[e]);
}

// acc = acc op X, or X op acc; X an immediate or a spill slot (read in place).
template <int V, typename Spill, typename F>
__device__ inline void EachPair(const AccInstruction& in, Spill& spill, float* acc, F f) {
  if (in.mode & kOperandImmediate) {
    const float x = in.value;
    if (in.mode & kOperandFirst) {
#pragma unroll
      for (int e = 0; e < V; ++e) acc[e] = f(x, acc[e]);
    } else {
#pragma unroll
      for (int e = 0; e < V; ++e) acc[e] = f(acc[e], x);
    }
  } else if (in.mode & kOperandFirst) {
    spill.With(in.slot, [&](const float (&x)[V]) {
#pragma unroll
      for (int e = 0; e < V; ++e) acc[e] = f(x[e], acc[e]);
    });
  } else {
    spill.With(in.slot, [&](const float (&x)[V]) {
#pragma unroll
      for (int e = 0; e < V; ++e) acc[e] = f(acc[e], x[e]);
    });
  }
}

// Tensor t's offset at the coordinates `coord` (row-major over bc.shape).
template <typename Index>
__device__ inline int64_t OffsetAt(const Bytecode& bc, int t, const Index (&coord)[kMaxRank]) {
  int64_t off = 0;
#pragma unroll
  for (int d = 0; d < kMaxRank; ++d) {
    if (d < bc.rank) off += static_cast<int64_t>(coord[d]) * bc.strides[t][d];
  }
  return off;
}

// At most 512 threads a block (256 with 16 lanes), so a thread may keep 128 registers
// with private slots: the lanes of accumulator, operand and four spill slots fit without
// spilling.
template <int V, typename Spill, typename Index>
__global__ void __launch_bounds__(MaxInterpretedBlock(V), kMinBlocks<Spill>)
    AccumulatorKernel(const OPSCHED_GRID_CONSTANT Bytecode bc, const OPSCHED_GRID_CONSTANT AccCode code,
                      const OPSCHED_GRID_CONSTANT TensorPointers p) {
  const int inner_dim = bc.rank - 1;
  const Index groups = static_cast<Index>(bc.numel / V);
  const Index stride = static_cast<Index>(gridDim.x) * blockDim.x;
  for (Index g = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; g < groups; g += stride) {
    // Coordinates of the group's first element; the outermost needs no division.
    Index coord[kMaxRank];
    Index linear = g * V;
#pragma unroll
    for (int d = kMaxRank - 1; d >= 0; --d) {
      coord[d] = 0;
      if (d == 0) {
        coord[0] = linear;
      } else if (d < bc.rank) {
        const Index size = static_cast<Index>(bc.shape[d]);
        coord[d] = linear % size;
        linear /= size;
      }
    }
    float acc[V];
    Spill spill;
    for (int k = 0; k < code.num_instructions; ++k) {
      const AccInstruction in = code.code[k];
#define OPSCHED_UNARY_CASE(OP)                                      \
  case DispatchKey(OpCode::OP):                                     \
    Each<V>(acc, [](float v) { return Unary(OpCode::OP, v); }); \
    break;
#define OPSCHED_BINARY_CASE(OP)                                                                 \
  case DispatchKey(OpCode::OP):                                                                 \
    EachPair<V>(in, spill, acc, [](float a, float b) { return Binary(OpCode::OP, a, b); }); \
    break;
      switch (in.key) {
        case DispatchKey(OpCode::kLoad):
          LoadRun<V>(bc.types[in.slot], p.data[in.slot], OffsetAt<Index>(bc, in.slot, coord),
                     inner_dim >= 0 ? bc.strides[in.slot][inner_dim] : 0, acc);
          break;
        case DispatchKey(OpCode::kConst):
#pragma unroll
          for (int e = 0; e < V; ++e) acc[e] = in.value;
          break;
        case DispatchKey(OpCode::kStore): {
          const int t = bc.num_inputs + in.slot;
          StoreRun<V>(bc.types[t], const_cast<void*>(p.data[t]), OffsetAt<Index>(bc, t, coord), acc);
          break;
        }
        case DispatchKey(OpCode::kFetch):
          spill.With(in.slot, [&](const float (&x)[V]) {
#pragma unroll
            for (int e = 0; e < V; ++e) acc[e] = x[e];
          });
          break;
        case DispatchKey(OpCode::kSpill):
          Store(spill, in.slot, acc);
          break;
        OPSCHED_UNARY_CASE(kNeg)
        OPSCHED_UNARY_CASE(kAbs)
        OPSCHED_UNARY_CASE(kExp)
        OPSCHED_UNARY_CASE(kLog)
        OPSCHED_UNARY_CASE(kSqrt)
        OPSCHED_UNARY_CASE(kRsqrt)
        OPSCHED_UNARY_CASE(kRelu)
        OPSCHED_UNARY_CASE(kGelu)
        OPSCHED_UNARY_CASE(kGeluTanh)
        OPSCHED_UNARY_CASE(kSigmoid)
        OPSCHED_UNARY_CASE(kTanh)
        OPSCHED_UNARY_CASE(kSilu)
        OPSCHED_UNARY_CASE(kCastF16)
        OPSCHED_UNARY_CASE(kCastBF16)
        OPSCHED_BINARY_CASE(kAdd)
        OPSCHED_BINARY_CASE(kSub)
        OPSCHED_BINARY_CASE(kMul)
        OPSCHED_BINARY_CASE(kDiv)
        OPSCHED_BINARY_CASE(kMax)
        OPSCHED_BINARY_CASE(kMin)
        default:  // kCastF32: the identity
          break;
      }
#undef OPSCHED_UNARY_CASE
#undef OPSCHED_BINARY_CASE
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
gpuError_t Launch(const Bytecode& bc, const AccCode& code, const TensorPointers& p, const LaunchConfig& c,
                  gpuStream_t stream) {
  const int64_t groups = bc.numel / V;
  const unsigned grid = GridFor(groups, int64_t(c.block) * c.items);
  const size_t spill_bytes = SpillSharedBytes(code, V, c.block);
  if (bc.numel >= (int64_t(1) << 31)) {
    AccumulatorKernel<V, SpillSlots<kMaxSlots, V>, int64_t><<<grid, c.block, 0, stream>>>(bc, code, p);
  } else if (spill_bytes <= kMaxTileSharedBytes) {
    AccumulatorKernel<V, SharedSpillSlots<V>, uint32_t><<<grid, c.block, spill_bytes, stream>>>(bc, code, p);
  } else if (code.num_spills <= kRegisterSpillSlots) {
    AccumulatorKernel<V, SpillSlots<kRegisterSpillSlots, V>, uint32_t><<<grid, c.block, 0, stream>>>(bc, code, p);
  } else {
    AccumulatorKernel<V, SpillSlots<kMaxSlots, V>, uint32_t><<<grid, c.block, 0, stream>>>(bc, code, p);
  }
  return gpuGetLastError();
}

}  // namespace

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
    case 8: return Launch<8>(bc, code, p, c, stream);
    case 16: return Launch<16>(bc, code, p, c, stream);
    default: return Launch<1>(bc, code, p, c, stream);
  }
}

}  // namespace opsched::pointwise::gpu_kernels
