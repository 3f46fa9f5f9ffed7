// The interpreted-fused pointwise kernel of private slots: one prebuilt kernel runs any
// program.
//
// AccumulatorKernel runs the accumulator form (pointwise_accumulator.h). A thread takes V
// elements of one run of the innermost dimension (consecutive, or spread over its warp's
// span in chunks: SpreadChunk) and runs every instruction over those V lanes: the
// accumulator is V floats in registers (never indexed at run time). The spill slots, V
// lanes each, live in shared memory while the block's fit in 48 KiB (then a thread needs
// at most 64 registers); otherwise up to kRegisterSpillSlots of them in registers, and
// more in the thread's local memory. An instruction's dispatch, a warp-uniform switch
// over its dense key (one per operation and operand kind, DispatchKey), is paid once per
// V elements, and a spill or fetch folded into the instruction runs before it with no
// dispatch of its own; the kernel's parameters are read in place (__grid_constant__),
// never copied per thread. A contiguous input is one packed load (of spread lanes one a
// chunk), a broadcast input is read once, each output one packed store (one a chunk);
// the element's coordinates are kept in registers (the kernel's R: two for iteration
// shapes of rank 2 or less, four up to rank 4, such as a per-channel NCHW broadcast over
// [N, C, H*W]) and each tensor's offset is formed from them where it is loaded or stored.
// Grid-stride over the groups; indices and offsets are 32-bit where every offset fits
// (OffsetsFit32).
//
// Header-only so that the kernels of few lanes (pointwise_cuda_interpreted.cu) and of
// many (pointwise_cuda_accumulator_wide.cu) are built in two translation units: nvcc
// lowers the dispatch switch to a jump table (one indexed branch) only where told to,
// which the wide kernels are (the long chains 2-4% faster on the H100), the narrow ones
// not (the chains of 64 K elements they served took 2-4% longer with it: the dispatch
// waits on the table's load, where a few compares and branches wait less).
#pragma once

#include <cstring>
#include <type_traits>

#include "core/gpu/dependent_launch.cuh"
#include "ops/pointwise/pointwise_cuda.h"
#include "ops/pointwise/pointwise_cuda_common.cuh"

namespace opsched::pointwise::gpu_kernels {

// The accumulator kernels of 8 and 16 lanes (pointwise_cuda_accumulator_wide.cu); vector
// is 8 or 16, else gpuErrorInvalidValue.
gpuError_t LaunchAccumulatorWide(const Bytecode& bc, const AccCode& code, const TensorPointers& p,
                                 const LaunchConfig& c, int vector, gpuStream_t stream);

namespace {

static_assert(sizeof(Bytecode) + sizeof(AccCode) + sizeof(TensorPointers) + sizeof(int) <= 4096,
              "the kernel's parameters fit the classic 4 KiB (HIP, and CUDA before 12.1)");

#if defined(OPSCHED_CUDA)
// x, which the compiler sees as changed here: nothing computed from it moves above (into
// a path that does not need it), and it stays in a register instead of being formed again
// where it is used (from a special register read: S2R, tens of cycles).
template <typename T>
__device__ inline T Opaque(T x) {
  if constexpr (sizeof(T) == 8) {
    asm volatile("" : "+l"(x));
  } else {
    asm volatile("" : "+r"(x));
  }
  return x;
}
#else
template <typename T>
__device__ inline T Opaque(T x) {
  return x;
}
#endif

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
// of thread t is chunk (s * kChunks + c) * B + t of the block's dynamic shared memory,
// so a warp's access to one chunk is consecutive (no bank conflicts). The block size B
// is a template parameter so that a slot is one address and its chunks immediate offsets.
// A read copies the slot into an operand; the slot number is an offset, not a branch.
extern __shared__ float4 spill_smem[];

// One chunk of 1, 2 or 4 floats at a byte offset into spill_smem. On CUDA through a
// shared-window address formed once (SharedSpillSlots), read and written with
// ld/st.shared: when ptxas formed it from the generic pointer it did so again at every
// dispatch (the window's base from the CTA id, 6 instructions; measured on the H100).
template <typename Chunk>
struct SharedChunk {
#if defined(OPSCHED_CUDA)
  static __device__ unsigned Base() { return static_cast<unsigned>(__cvta_generic_to_shared(spill_smem)); }
  static __device__ Chunk Load(unsigned at) {
    Chunk q;
    if constexpr (sizeof(Chunk) == 16) {
      asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(q.x), "=f"(q.y), "=f"(q.z), "=f"(q.w) : "r"(at));
    } else if constexpr (sizeof(Chunk) == 8) {
      asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];" : "=f"(q.x), "=f"(q.y) : "r"(at));
    } else {
      asm volatile("ld.shared.f32 %0, [%1];" : "=f"(q) : "r"(at));
    }
    return q;
  }
  static __device__ void Put(unsigned at, const Chunk& q) {
    if constexpr (sizeof(Chunk) == 16) {
      asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};" ::"r"(at), "f"(q.x), "f"(q.y), "f"(q.z), "f"(q.w)
                   : "memory");
    } else if constexpr (sizeof(Chunk) == 8) {
      asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(at), "f"(q.x), "f"(q.y) : "memory");
    } else {
      asm volatile("st.shared.f32 [%0], %1;" ::"r"(at), "f"(q) : "memory");
    }
  }
#else
  static __device__ unsigned Base() { return 0; }
  static __device__ Chunk Load(unsigned at) {
    return *reinterpret_cast<const Chunk*>(reinterpret_cast<const char*>(spill_smem) + at);
  }
  static __device__ void Put(unsigned at, const Chunk& q) {
    *reinterpret_cast<Chunk*>(reinterpret_cast<char*>(spill_smem) + at) = q;
  }
#endif
};

template <int V, int B>
struct SharedSpillSlots {
  using Chunk = std::conditional_t<V % 4 == 0, float4, std::conditional_t<V % 2 == 0, float2, float>>;
  static constexpr int kLanes = sizeof(Chunk) / sizeof(float);
  static constexpr int kChunks = V / kLanes;
  static constexpr unsigned kChunkStride = B * sizeof(Chunk);  // bytes between a thread's chunks
  static constexpr unsigned kSlotBytes = kChunks * kChunkStride;

  // The thread's chunk 0 of slot 0. It passes through an empty asm so that ptxas keeps
  // it in a register instead of forming it again at every dispatch (measured: the
  // thread index read again, an S2R on the path of every instruction).
  __device__ SharedSpillSlots() {
    unsigned at = SharedChunk<Chunk>::Base() + threadIdx.x * static_cast<unsigned>(sizeof(Chunk));
#if defined(OPSCHED_CUDA)
    asm volatile("" : "+r"(at));
#endif
    mine = at;
  }

  template <typename F>
  __device__ void With(int slot, F&& f) {
    float x[V];
    const unsigned at = Slot(slot);
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const Chunk q = SharedChunk<Chunk>::Load(at + c * kChunkStride);
      const float* lanes = reinterpret_cast<const float*>(&q);
#pragma unroll
      for (int l = 0; l < kLanes; ++l) x[c * kLanes + l] = lanes[l];
    }
    f(x);
  }
  __device__ void Store(int slot, const float* acc) {
    const unsigned at = Slot(slot);
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      Chunk q;
      float* lanes = reinterpret_cast<float*>(&q);
#pragma unroll
      for (int l = 0; l < kLanes; ++l) lanes[l] = acc[c * kLanes + l];
      SharedChunk<Chunk>::Put(at + c * kChunkStride, q);
    }
  }

 private:
  __device__ unsigned Slot(int slot) const { return mine + static_cast<unsigned>(slot) * kSlotBytes; }
  unsigned mine;
};

template <int V, int B>
__device__ inline void Store(SharedSpillSlots<V, B>& spill, int slot, const float* acc) {
  spill.Store(slot, acc);
}

// Registers a thread of the shared-slot kernel keeps: 48 with 16 lanes, 40 with fewer
// (ptxas took 64 and 52-56 unbounded; at these it spills nothing with a rank of 2 or 4,
// and 24 bytes at 16 lanes and rank 8), so that 5 or 6 blocks of 256 stay resident
// instead of 4 where the spill slots' shared memory allows. On the H200 the 8-op chain
// took 159.0 -> 143.0 us with the Need order's two spill slots; 40 at 16 lanes spilled
// to local memory and took 151.0.
constexpr int SharedSlotRegisters(int V) { return V >= 16 ? 48 : 40; }

// The kernel's launch bounds: with private slots the largest block and no bound on
// resident blocks (ptxas then keeps up to 128 registers; a stated 1 let it take 150,
// spilling nothing but slower); with shared slots the block B itself, and enough of them
// resident for SharedSlotRegisters(V) registers a thread.
// (One template argument, Spill: HIP's __launch_bounds__ is a macro, which a comma
// inside a template argument list would split.)
template <typename Spill>
struct Bounds;
template <int S, int V, bool kInRegisters>
struct Bounds<SpillSlots<S, V, kInRegisters>> {
  static constexpr int kThreads = MaxInterpretedBlock(V);
  static constexpr int kMinBlocks = 0;
};
template <int V, int B>
struct Bounds<SharedSpillSlots<V, B>> {
  static constexpr int kThreads = B;
  static constexpr int kMinBlocks = 65536 / (SharedSlotRegisters(V) * B);
};

template <int V, typename F>
__device__ inline void Each(float* acc, F f) {
#pragma unroll
  for (int e = 0; e < V; ++e) acc[e] = f(acc[e]);
}

// acc = f(acc, value), or f(value, acc) with `first`.
template <int V, bool first, typename F>
__device__ inline void EachImmediate(float* acc, float x, F f) {
#pragma unroll
  for (int e = 0; e < V; ++e) acc[e] = first ? f(x, acc[e]) : f(acc[e], x);
}

// acc = f(acc, spill[slot]), or f(spill[slot], acc) with `first` (read in place).
template <int V, bool first, typename Spill, typename F>
__device__ inline void EachSpilled(Spill& spill, int slot, float* acc, F f) {
  spill.With(slot, [&](const float (&x)[V]) {
#pragma unroll
    for (int e = 0; e < V; ++e) acc[e] = first ? f(x[e], acc[e]) : f(acc[e], x[e]);
  });
}

// acc = acc op X, or X op acc, as the mode says: X an immediate or a spill slot.
template <int V, typename Spill, typename F>
__device__ inline void EachPair(const AccInstruction& in, int slot, Spill& spill, float* acc, F f) {
  if (in.mode & kOperandImmediate) {
    if (in.mode & kOperandFirst) {
      EachImmediate<V, true>(acc, in.value, f);
    } else {
      EachImmediate<V, false>(acc, in.value, f);
    }
  } else if (in.mode & kOperandFirst) {
    EachSpilled<V, true>(spill, slot, acc, f);
  } else {
    EachSpilled<V, false>(spill, slot, acc, f);
  }
}

// acc = spill[slot].
template <int V, typename Spill>
__device__ inline void Fetch(Spill& spill, int slot, float* acc) {
  spill.With(slot, [&](const float (&x)[V]) {
#pragma unroll
    for (int e = 0; e < V; ++e) acc[e] = x[e];
  });
}

// Tensor t's offset at the coordinates `coord` (row-major over bc.shape, whose rank is
// at most R). In Index arithmetic: 32-bit where every tensor's offsets fit
// (OffsetsFit32), so a dimension costs one multiply-add.
template <int R, typename Index>
__device__ inline Index OffsetAt(const Bytecode& bc, int t, const Index (&coord)[R]) {
  Index off = 0;
#pragma unroll
  for (int d = 0; d < R; ++d) {
    if (d < bc.rank) off += coord[d] * static_cast<Index>(bc.strides[t][d]);
  }
  return off;
}

// At most 512 threads a block (256 with 16 lanes), so a thread may keep 128 registers
// with private slots: the lanes of accumulator, operand and four spill slots fit without
// spilling. R bounds the iteration shape's rank: 2 for most programs (an elementwise
// chain, a bias broadcast over rows), so that a group keeps two coordinates, not eight,
// and a tensor's offset is two multiply-adds; 4 for per-channel broadcasts in NCHW
// (batch-norm statistics, a squeeze-excite scale: [N, C, H*W]); 8 otherwise.
template <int V, typename Spill, typename Index, int R>
__global__ void __launch_bounds__(Bounds<Spill>::kThreads, Bounds<Spill>::kMinBlocks)
    AccumulatorKernel(const OPSCHED_GRID_CONSTANT Bytecode bc, const OPSCHED_GRID_CONSTANT AccCode code,
                      const OPSCHED_GRID_CONSTANT TensorPointers p, int spread) {
  // A kernel launched as this one's dependent (a hoisted batch-norm plan's kernel after
  // its last first pass) may launch now; it waits for this one's writes before it reads
  // them. Without such a launch after it, this does nothing.
  gpu::AllowDependentLaunch();
  const int inner_dim = bc.rank - 1;
  const Index groups = static_cast<Index>(bc.numel / V);
  const Index stride = static_cast<Index>(gridDim.x) * blockDim.x;
  // With 8 and 16 lanes (the jump-table dispatch) a block steps through the groups
  // together, `first` being the block's first: the loop is uniform, so the compiler knows
  // each instruction's dispatch to be uniform too and sets no convergence barrier around
  // it (BSSY/BSYNC, 2 of the 19 instructions a dispatch took); a thread past the last
  // group (`live` false) runs the instructions too. With fewer lanes each thread steps
  // alone (the few-lane kernels serve chains of some thousand elements, where the uniform
  // loop measured 0.5 us slower).
  constexpr bool kUniform = V >= 8;
  const Index start = static_cast<Index>(blockIdx.x) * blockDim.x + (kUniform ? 0 : threadIdx.x);
  for (Index first = start; first < groups; first += stride) {
    const Index mine = kUniform ? Opaque(first + threadIdx.x) : first;
    const bool live = !kUniform || mine < groups;
    // A thread past the last group reads the last group (no branch on the loads' path:
    // a guard there cost the memory-bound chains 1-2% on the H200) and stores nothing.
    const Index g = live ? mine : groups - 1;
    // Coordinates of the group's first element; the outermost needs no division. Spread
    // lanes (SpreadChunk): group g is lane g % 32 of the span of 32 groups from g - g % 32.
    Index coord[R];
    Index linear = spread ? (g & ~Index(31)) * V + (g & Index(31)) * static_cast<Index>(spread) : g * V;
#pragma unroll
    for (int d = R - 1; d >= 0; --d) {
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
    const unsigned end = static_cast<unsigned>(code.num_instructions) * sizeof(AccInstruction);
    for (unsigned at = 0; at < end; at += sizeof(AccInstruction)) {
      __builtin_assume(at % alignof(AccInstruction) == 0);
      const AccInstruction& in = *reinterpret_cast<const AccInstruction*>(reinterpret_cast<const char*>(code.code) + at);
      // The first word: key, slot and the folded spill and fetch, read at once.
      uint32_t head;
      memcpy(&head, &in, sizeof head);
      const int slot = (head >> 8) & 0xff;
      if (head >> 16) {
        const int spill_first = (head >> 16) & 0xff, fetch_first = head >> 24;
        if (spill_first) Store(spill, spill_first - 1, acc);
        if (fetch_first) Fetch<V>(spill, fetch_first - 1, acc);
      }
#define OPSCHED_UNARY_CASE(OP)                                  \
  case DispatchKey(OpCode::OP):                                 \
    Each<V>(acc, [](float v) { return Unary(OpCode::OP, v); }); \
    break;
#define OPSCHED_MODE_CASE(KEY, OP)                                                              \
  case dispatch::KEY:                                                                           \
    EachPair<V>(in, slot, spill, acc, [](float a, float b) { return Binary(OpCode::OP, a, b); }); \
    break;
      const auto add = [](float a, float b) { return Binary(OpCode::kAdd, a, b); };
      const auto sub = [](float a, float b) { return Binary(OpCode::kSub, a, b); };
      const auto mul = [](float a, float b) { return Binary(OpCode::kMul, a, b); };
      switch (head & 0xff) {
        case dispatch::kLoad: {
          const Index offset = OffsetAt<R, Index>(bc, slot, coord);
          const int64_t step = inner_dim >= 0 ? bc.strides[slot][inner_dim] : 0;
          LoadLanes<V>(spread, bc.types[slot], p.data[slot], offset, step, acc);
          break;
        }
        case dispatch::kConst:
#pragma unroll
          for (int e = 0; e < V; ++e) acc[e] = in.value;
          break;
        case dispatch::kStore: {
          if (!live) break;
          const int t = bc.num_inputs + slot;
          void* out = const_cast<void*>(p.data[t]);
          const Index offset = OffsetAt<R, Index>(bc, t, coord);
          StoreLanes<V>(spread, bc.types[t], out, offset, acc);
          break;
        }
        case dispatch::kFetch:
          Fetch<V>(spill, slot, acc);
          break;
        case dispatch::kSpill:
          Store(spill, slot, acc);
          break;
        case dispatch::kAddImmediate: EachImmediate<V, false>(acc, in.value, add); break;
        case dispatch::kAddSpill: EachSpilled<V, false>(spill, slot, acc, add); break;
        case dispatch::kSubImmediate: EachImmediate<V, false>(acc, in.value, sub); break;
        case dispatch::kRsubImmediate: EachImmediate<V, true>(acc, in.value, sub); break;
        case dispatch::kSubSpill: EachSpilled<V, false>(spill, slot, acc, sub); break;
        case dispatch::kRsubSpill: EachSpilled<V, true>(spill, slot, acc, sub); break;
        case dispatch::kMulImmediate: EachImmediate<V, false>(acc, in.value, mul); break;
        case dispatch::kMulSpill: EachSpilled<V, false>(spill, slot, acc, mul); break;
        case dispatch::kMulAddImmediate: {
          const float m = in.value, c = (&in)[1].value;  // the kOperandWord after it
#pragma unroll
          for (int e = 0; e < V; ++e) acc[e] = MulThenAdd(acc[e], m, c);
          at += sizeof(AccInstruction);  // steps over the word
          break;
        }
        case dispatch::kMulAddSpill: {
          const float m = in.value;
          EachSpilled<V, false>(spill, slot, acc, [m](float a, float x) { return MulThenAdd(a, m, x); });
          break;
        }
        OPSCHED_UNARY_CASE(kNegAbs)
        OPSCHED_MODE_CASE(kDiv, kDiv)
        OPSCHED_MODE_CASE(kMax, kMax)
        OPSCHED_MODE_CASE(kMin, kMin)
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
        default:  // kCastF32: the identity (kOperandWord is stepped over, never dispatched)
          break;
      }
#undef OPSCHED_UNARY_CASE
#undef OPSCHED_MODE_CASE
    }
  }
}

template <int V, int R>
gpuError_t LaunchRank(const Bytecode& bc, const AccCode& code, const TensorPointers& p, const LaunchConfig& c,
                      int spread, gpuStream_t stream) {
  const unsigned grid = GridFor(bc.numel / V, int64_t(c.block) * c.items);
  const size_t spill_bytes = SpillSharedBytes(code, V, c.block);
  if (spill_bytes <= kMaxTileSharedBytes && SharedSpillBlock(c.block, V)) {
    if (c.block == 128) {
      AccumulatorKernel<V, SharedSpillSlots<V, 128>, uint32_t, R>
          <<<grid, 128, spill_bytes, stream>>>(bc, code, p, spread);
    } else if (c.block == 256) {
      AccumulatorKernel<V, SharedSpillSlots<V, 256>, uint32_t, R>
          <<<grid, 256, spill_bytes, stream>>>(bc, code, p, spread);
    } else if constexpr (MaxInterpretedBlock(V) >= 512) {
      AccumulatorKernel<V, SharedSpillSlots<V, 512>, uint32_t, R>
          <<<grid, 512, spill_bytes, stream>>>(bc, code, p, spread);
    }
  } else if (code.num_spills <= kRegisterSpillSlots) {
    AccumulatorKernel<V, SpillSlots<kRegisterSpillSlots, V>, uint32_t, R>
        <<<grid, c.block, 0, stream>>>(bc, code, p, spread);
  } else {
    AccumulatorKernel<V, SpillSlots<kMaxSlots, V>, uint32_t, kMaxRank><<<grid, c.block, 0, stream>>>(bc, code, p,
                                                                                                   spread);
  }
  return gpuGetLastError();
}

template <int V>
gpuError_t Launch(const Bytecode& bc, const AccCode& code, const TensorPointers& p, const LaunchConfig& c,
                  gpuStream_t stream) {
  const int spread = SpreadChunk(bc, V);
  if (!OffsetsFit32(bc)) {
    const unsigned grid = GridFor(bc.numel / V, int64_t(c.block) * c.items);
    AccumulatorKernel<V, SpillSlots<kMaxSlots, V>, int64_t, kMaxRank><<<grid, c.block, 0, stream>>>(bc, code, p,
                                                                                                  spread);
    return gpuGetLastError();
  }
  if (bc.rank <= 2) return LaunchRank<V, 2>(bc, code, p, c, spread, stream);
  if (bc.rank <= 4) return LaunchRank<V, 4>(bc, code, p, c, spread, stream);
  return LaunchRank<V, kMaxRank>(bc, code, p, c, spread, stream);
}

}  // namespace
}  // namespace opsched::pointwise::gpu_kernels
