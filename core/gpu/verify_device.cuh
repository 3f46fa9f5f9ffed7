// Device helpers of the float64 GPU references (ops/<op>/<op>_cuda_reference.cu) and of
// verify_kernels.cu: strided element access of any dtype as double, and double atomics.
// Plain code on purpose: a reference must be obviously correct.
#pragma once

#include <cstdint>

#include "core/gpu/portability.h"
#include "core/half.h"
#include "core/gpu/verify.h"

namespace opsched::gpu {

#if defined(__CUDACC__) || defined(__HIPCC__)

// Element offset of the row-major logical index `e`.
__device__ inline int64_t RefOffset(const RefTensor& t, int64_t e) {
  int64_t offset = 0;
  for (int d = t.rank - 1; d >= 0; --d) {
    const int64_t c = e % t.shape[d];
    e /= t.shape[d];
    offset += c * t.strides[d];
  }
  return offset;
}

__device__ inline double RefLoadAt(const RefTensor& t, int64_t offset) {
  switch (t.type) {
    case kRefF16:
      return HalfToFloat(static_cast<const uint16_t*>(t.data)[offset]);
    case kRefBF16:
      return Bf16ToFloat(static_cast<const uint16_t*>(t.data)[offset]);
    case kRefI32:
      return static_cast<const int32_t*>(t.data)[offset];
    case kRefI64:
      return static_cast<double>(static_cast<const int64_t*>(t.data)[offset]);
    default:
      return static_cast<const float*>(t.data)[offset];
  }
}

// The element at row-major logical index `e`, as a double.
__device__ inline double RefLoad(const RefTensor& t, int64_t e) { return RefLoadAt(t, RefOffset(t, e)); }

// Integer elements exactly (i64 values beyond 2^53 do not survive a double).
__device__ inline int64_t RefLoadIntAt(const RefTensor& t, int64_t offset) {
  return t.type == kRefI64 ? static_cast<const int64_t*>(t.data)[offset]
                           : static_cast<int64_t>(static_cast<const int32_t*>(t.data)[offset]);
}

__device__ inline void AtomicAddDouble(double* p, double v) {
#if defined(OPSCHED_HIP) || (defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 600)
  atomicAdd(p, v);
#else
  auto* u = reinterpret_cast<unsigned long long*>(p);
  unsigned long long old = *u, assumed;
  do {
    assumed = old;
    old = atomicCAS(u, assumed, __double_as_longlong(__longlong_as_double(assumed) + v));
  } while (assumed != old);
#endif
}

// *p = f(*p, v) atomically, for any double function f.
template <typename F>
__device__ inline void AtomicApplyDouble(double* p, double v, F f) {
  auto* u = reinterpret_cast<unsigned long long*>(p);
  unsigned long long old = *u, assumed;
  do {
    assumed = old;
    old = atomicCAS(u, assumed,
                    static_cast<unsigned long long>(__double_as_longlong(f(__longlong_as_double(assumed), v))));
  } while (assumed != old);
}

// Largest of non-negative doubles: their bit patterns order like the values.
__device__ inline void AtomicMaxNonNegative(double* p, double v) {
  atomicMax(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(__double_as_longlong(v)));
}

__device__ inline bool RefIsNan(double v) { return v != v; }

#endif

}  // namespace opsched::gpu
