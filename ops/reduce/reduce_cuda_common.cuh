// Device helpers shared by the reduce kernels: offsets of linear indices over strided
// dimensions, vector loads, type dispatch, in-group reductions and the kernel that
// combines split partials.
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/element.h"
#include "core/gpu/dependent_launch.cuh"
#include "core/gpu/fast_divmod.h"
#include "core/gpu/portability.h"
#include "core/gpu/visit.h"
#include "ops/reduce/reduce_cuda.h"
#include "ops/reduce/reduce_math.h"
#include "ops/reduce/reduce_params.h"

namespace opsched::reduce::gpu_kernels {

// The offset of a row-major linear index over up to kMaxRank strided dimensions.
struct Odometer {
  int rank = 0;
  FastDivmod size[kMaxRank];
  int64_t stride[kMaxRank] = {};

  Odometer() = default;
  Odometer(int r, const int64_t* shape, const int64_t* strides) : rank(r) {
    for (int d = 0; d < r; ++d) {
      size[d] = FastDivmod(static_cast<uint32_t>(shape[d]));
      stride[d] = strides[d];
    }
  }
  __device__ __forceinline__ int64_t Offset(uint32_t i) const {
    int64_t offset = 0;
#pragma unroll
    for (int d = kMaxRank - 1; d >= 0; --d) {
      if (d < rank) {
        uint32_t q, r;
        size[d].DivMod(i, &q, &r);
        offset += int64_t(r) * stride[d];
        i = q;
      }
    }
    return offset;
  }
};

// `V` contiguous elements loaded at once.
template <typename S, int V>
struct alignas(sizeof(S) * V) Vec {
  S v[V];
};

// `V` contiguous elements through the read-only data cache (x is never written while a
// kernel reads it), as one load of their size: a load through a pointer that a lambda
// captures is otherwise an ordinary one.
template <typename S, int V>
__device__ __forceinline__ Vec<S, V> LoadVec(const S* p) {
  constexpr size_t kBytes = sizeof(S) * V;
  using Word = std::conditional_t<kBytes == 16, uint4,
               std::conditional_t<kBytes == 8, uint2, std::conditional_t<kBytes == 4, unsigned int, unsigned short>>>;
  static_assert(sizeof(Word) == kBytes, "2, 4, 8 or 16 bytes");
  const Word w = __ldg(reinterpret_cast<const Word*>(p));
  Vec<S, V> v;
  __builtin_memcpy(&v, &w, kBytes);
  return v;
}

// Calls fn(std::integral_constant<ReduceOp, op>{}) with the op that combines terms as a
// compile-time constant, so that a loop over terms carries no switch per term (one
// showed up in the PTX of every loop). Mean sums its terms (its scale is the output's).
template <typename Fn>
__device__ __forceinline__ void WithTermOp(ReduceOp op, Fn&& fn) {
  switch (op) {
    case ReduceOp::kMax:
      fn(std::integral_constant<ReduceOp, ReduceOp::kMax>{});
      break;
    case ReduceOp::kMin:
      fn(std::integral_constant<ReduceOp, ReduceOp::kMin>{});
      break;
    case ReduceOp::kSumSquares:
      fn(std::integral_constant<ReduceOp, ReduceOp::kSumSquares>{});
      break;
    default:
      fn(std::integral_constant<ReduceOp, ReduceOp::kSum>{});
  }
}

// Calls fn.template operator()<In, Out>() for the problem's element types: any float
// input type with its own type or f32 out, and f32 in with a 16-bit out (the second
// stage of a staged reduction reads its float buffer). Integers are the integer
// kernel's (reduce_cuda_integer.cu): gpuErrorInvalidValue here.
template <typename Fn>
gpuError_t VisitTypes(const Problem& p, Fn&& fn) {
  auto with_out = [&]<typename In>() {
    switch (p.out_type) {
      case ElementType::kF16:
        return fn.template operator()<In, F16>();
      case ElementType::kBF16:
        return fn.template operator()<In, BF16>();
      default:
        return fn.template operator()<In, F32>();
    }
  };
  switch (p.in_type) {
    case ElementType::kI32:
    case ElementType::kI64:
      return gpuErrorInvalidValue;
    case ElementType::kF16:
      return p.out_type == ElementType::kF32 ? fn.template operator()<F16, F32>() : fn.template operator()<F16, F16>();
    case ElementType::kBF16:
      return p.out_type == ElementType::kF32 ? fn.template operator()<BF16, F32>()
                                             : fn.template operator()<BF16, BF16>();
    default:
      return with_out.template operator()<F32>();
  }
}

// Calls fn.template operator()<In, Out>() for the element types of the own row and
// column kernels: VisitTypes' float pairs, and the integers (i32 in with i32 or i64 out,
// i64 in and out), which accumulate in int64 (AccumulatorOf).
template <typename Fn>
gpuError_t VisitAllTypes(const Problem& p, Fn&& fn) {
  switch (p.in_type) {
    case ElementType::kI32:
      return p.out_type == ElementType::kI64 ? fn.template operator()<I32, I64>() : fn.template operator()<I32, I32>();
    case ElementType::kI64:
      return fn.template operator()<I64, I64>();
    default:
      return VisitTypes(p, fn);
  }
}

// Reduces `v` (a float or int64 accumulator) across groups of `width` lanes (a power of
// two <= 32); every lane of the warp must call it. Every lane of a group ends with the
// group's result.
template <typename A>
__device__ __forceinline__ A GroupReduce(ReduceOp op, A v, int width) {
  for (int o = width / 2; o > 0; o /= 2) v = Combine(op, v, gpuShflXor(v, o, width));
  return v;
}

// Reduces `v` across the whole block (blockDim.x a multiple of 32, <= 1024); the result
// is valid in thread 0. `shared` holds 32 accumulators. Fixed order: deterministic.
template <typename A>
__device__ __forceinline__ A BlockReduce(ReduceOp op, A v, A* shared) {
  v = GroupReduce(op, v, 32);
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  __syncthreads();  // `shared` may still be read by a previous call
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < warps ? shared[lane] : IdentityOf<A>(op);
    v = GroupReduce(op, v, 32);
  }
  return v;
}

// Combines `split` partials [split][M] per output (accumulators: float, or int64 for
// integers) in order and writes y; with split 0 writes the value of an empty reduction.
gpuError_t LaunchFinish(const Problem& p, const void* partial, int split, gpuStream_t stream);

inline int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

inline bool Aligned(const void* ptr, size_t bytes) { return reinterpret_cast<uintptr_t>(ptr) % bytes == 0; }

}  // namespace opsched::reduce::gpu_kernels
