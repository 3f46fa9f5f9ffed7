// Combining a value into memory for each scatter reduction: plain stores for none,
// reductions (`red`, no old value returned) for add, compare-and-swap loops for
// mul/min/max (NaN-propagating) and for 16-bit types but paired adds, in global or shared
// memory. Integers (i32, i64) use the native integer reductions for add/min/max (add
// wraps around) and a compare-and-swap loop for mul.
#pragma once

#include <type_traits>

#include "core/element.h"
#include "core/gpu/portability.h"
#include "ops/scatter/scatter_combine_integer.h"
#include "ops/scatter/scatter_params.h"

#if !defined(OPSCHED_HIP)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace opsched::scatter {

OPSCHED_HD inline float Combine(Reduction r, float acc, float v) {
  switch (r) {
    case Reduction::kNone:
      return v;
    case Reduction::kAdd:
      return acc + v;
    case Reduction::kMul:
      return acc * v;
    case Reduction::kMin:
      return (acc != acc || v != v) ? BitsFloat(0x7fc00000u) : (v < acc ? v : acc);
    case Reduction::kMax:
      return (acc != acc || v != v) ? BitsFloat(0x7fc00000u) : (v > acc ? v : acc);
  }
  return v;
}

OPSCHED_HD inline int32_t Combine(Reduction r, int32_t acc, int32_t v) { return CombineInteger(r, acc, v); }
OPSCHED_HD inline int64_t Combine(Reduction r, int64_t acc, int64_t v) { return CombineInteger(r, acc, v); }

// The value that leaves any element unchanged under `r` (not defined for none).
OPSCHED_HD inline float Identity(Reduction r) {
  switch (r) {
    case Reduction::kMul:
      return 1.0f;
    case Reduction::kMin:
      return BitsFloat(0x7f800000u);
    case Reduction::kMax:
      return BitsFloat(0xff800000u);
    default:
      return 0.0f;
  }
}

// Reductions whose old value nobody reads, as PTX `red.global` (the fire-and-forget
// RED) where the address is global; shared memory keeps the atomic. An `atomicAdd` on
// a generic pointer becomes a generic ATOM, which returns every old value: Nsight
// Compute on the H100 showed the parallel scatter's i32 embedding-style scatter-add
// moving 738 MB from L2 back to the SMs where PyTorch's RED moves 201 MB, in 316 us
// against 227. (A generic `red` is an ATOM too.) HIP keeps the atomics.
#if defined(OPSCHED_HIP)
#define OPSCHED_RED_OR(ptx, reg, addr, v, fallback) fallback
#else
#define OPSCHED_RED_OR(ptx, reg, addr, v, fallback)                                                        \
  if (__isGlobal(addr)) {                                                                                 \
    asm volatile("red.global." ptx " [%0], %1;" ::"l"(__cvta_generic_to_global(addr)), reg(v) : "memory"); \
  } else {                                                                                                \
    fallback;                                                                                             \
  }
#endif

__device__ __forceinline__ void RedAdd(float* addr, float v) {
  OPSCHED_RED_OR("add.f32", "f", addr, v, atomicAdd(addr, v));
}

__device__ __forceinline__ void RedAdd(int32_t* addr, int32_t v) {
  OPSCHED_RED_OR("add.s32", "r", addr, v, atomicAdd(addr, v));
}

__device__ __forceinline__ void RedAdd(int64_t* addr, int64_t v) {  // wraps around, as u64
  OPSCHED_RED_OR("add.u64", "l", addr, v,
                 atomicAdd(reinterpret_cast<unsigned long long*>(addr), static_cast<unsigned long long>(v)));
}

__device__ __forceinline__ void RedMin(int32_t* addr, int32_t v) {
  OPSCHED_RED_OR("min.s32", "r", addr, v, atomicMin(addr, v));
}

__device__ __forceinline__ void RedMax(int32_t* addr, int32_t v) {
  OPSCHED_RED_OR("max.s32", "r", addr, v, atomicMax(addr, v));
}

__device__ inline void AtomicCombine(float* addr, float v, Reduction r) {
  if (r == Reduction::kNone) {
    *addr = v;
    return;
  }
  if (r == Reduction::kAdd) {
    RedAdd(addr, v);
    return;
  }
  unsigned int* word = reinterpret_cast<unsigned int*>(addr);
  unsigned int old = *word, assumed;
  do {
    assumed = old;
    const float cur = __uint_as_float(assumed);
    const unsigned int next = __float_as_uint(Combine(r, cur, v));
    if (next == assumed) return;
    old = atomicCAS(word, assumed, next);
  } while (assumed != old);
}

template <typename T>
__device__ inline void AtomicAddPair(uint16_t* addr, uint32_t bits);

// 16-bit element: add with a paired (half2/bfloat162) atomic on the aligned 32-bit word
// holding it, the neighbour's addend -0 (x + -0 == x for every x, signed zeros
// included), as PyTorch's fastAtomicAdd does with +0; else a CAS loop on that word.
template <typename T>
__device__ inline void AtomicCombine(uint16_t* addr, float v, Reduction r) {
  if (r == Reduction::kNone) {
    *addr = T::Store(v);
    return;
  }
  if (r == Reduction::kAdd) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
    const uint32_t value = T::Store(v), minus_zero = 0x8000u;
    AtomicAddPair<T>(reinterpret_cast<uint16_t*>(a & ~uintptr_t(3)),
                     (a & 2) ? (value << 16) | minus_zero : (minus_zero << 16) | value);
    return;
  }
  const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  unsigned int* word = reinterpret_cast<unsigned int*>(a & ~uintptr_t(3));
  const unsigned int shift = (a & 2) ? 16u : 0u;
  unsigned int old = *word, assumed;
  do {
    assumed = old;
    const uint16_t cur = static_cast<uint16_t>((assumed >> shift) & 0xffffu);
    const uint16_t next = T::Store(Combine(r, T::Load(cur), v));
    if (next == cur) return;
    old = atomicCAS(word, assumed, (assumed & ~(0xffffu << shift)) | (unsigned(next) << shift));
  } while (assumed != old);
}

__device__ inline void AtomicCombine(int32_t* addr, int32_t v, Reduction r) {
  switch (r) {
    case Reduction::kNone:
      *addr = v;
      return;
    case Reduction::kAdd:
      RedAdd(addr, v);
      return;
    case Reduction::kMin:
      RedMin(addr, v);
      return;
    case Reduction::kMax:
      RedMax(addr, v);
      return;
    case Reduction::kMul:
      break;
  }
  int32_t old = *addr, assumed;
  do {
    assumed = old;
    old = atomicCAS(addr, assumed, CombineInteger(r, assumed, v));
  } while (assumed != old);
}

__device__ inline void AtomicCombine(int64_t* addr, int64_t v, Reduction r) {
  using W = unsigned long long;
  static_assert(sizeof(W) == sizeof(int64_t), "64-bit words");
  switch (r) {
    case Reduction::kNone:
      *addr = v;
      return;
    case Reduction::kAdd:
      RedAdd(addr, v);
      return;
#if !defined(OPSCHED_HIP)  // (HIP has no signed 64-bit atomicMin/Max: the loop below)
    case Reduction::kMin:
      OPSCHED_RED_OR("min.s64", "l", addr, v, atomicMin(reinterpret_cast<long long*>(addr), static_cast<long long>(v)));
      return;
    case Reduction::kMax:
      OPSCHED_RED_OR("max.s64", "l", addr, v, atomicMax(reinterpret_cast<long long*>(addr), static_cast<long long>(v)));
      return;
#endif
    default:
      break;
  }
  W* word = reinterpret_cast<W*>(addr);
  W old = *word, assumed;
  do {
    assumed = old;
    old = atomicCAS(word, assumed, static_cast<W>(CombineInteger(r, static_cast<int64_t>(assumed), v)));
  } while (assumed != old);
}

// Adds two neighbouring 16-bit elements at a 4-byte aligned `addr` with one paired
// atomic (half2 / bfloat162: each half rounds as the single-element atomic does); `bits`
// holds the two addends, the first in the low half.
template <typename T>
__device__ inline void AtomicAddPair(uint16_t* addr, uint32_t bits) {
#if !defined(OPSCHED_HIP)
  if constexpr (std::is_same_v<T, F16>) {
    union {
      uint32_t u;
      __half2 h;
    } v{bits};
    OPSCHED_RED_OR("add.noftz.f16x2", "r", addr, bits, atomicAdd(reinterpret_cast<__half2*>(addr), v.h));
  } else {
    union {
      uint32_t u;
      __nv_bfloat162 h;
    } v{bits};
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900  // bf16x2 `red` needs sm_90
    atomicAdd(reinterpret_cast<__nv_bfloat162*>(addr), v.h);
#else
    OPSCHED_RED_OR("add.noftz.bf16x2", "r", addr, bits,
                   atomicAdd(reinterpret_cast<__nv_bfloat162*>(addr), v.h));
#endif
  }
#else
  // HIP: a CAS loop over the word, both halves added in float and rounded once each.
  unsigned int* word = reinterpret_cast<unsigned int*>(addr);
  unsigned int old = *word, assumed;
  do {
    assumed = old;
    const uint16_t lo = T::Store(T::Load(static_cast<uint16_t>(assumed & 0xffffu)) +
                                 T::Load(static_cast<uint16_t>(bits & 0xffffu)));
    const uint16_t hi = T::Store(T::Load(static_cast<uint16_t>(assumed >> 16)) + T::Load(static_cast<uint16_t>(bits >> 16)));
    old = atomicCAS(word, assumed, (unsigned(hi) << 16) | lo);
  } while (assumed != old);
#endif
}

template <typename T>
__device__ inline void AtomicCombineElement(typename T::Storage* addr, typename T::Compute v, Reduction r) {
  if constexpr (std::is_same_v<T, F32> || std::is_integral_v<typename T::Compute>) {
    AtomicCombine(addr, v, r);
  } else {
    AtomicCombine<T>(addr, v, r);
  }
}

#undef OPSCHED_RED_OR

}  // namespace opsched::scatter
