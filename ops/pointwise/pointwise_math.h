// The scalar functions of the pointwise language in float, and element loads and stores
// by element type: one definition for the CPU implementations and (compiled by nvcc or
// hipcc, OPSCHED_HD) device kernels, so the implementations of one device round alike.
#pragma once

#include <math.h>

#include <cstdint>

#include "core/half.h"
#include "ops/pointwise/pointwise_bytecode.h"

namespace opsched::pointwise {

// On a CUDA device exp, division and rsqrt take the approximations that Triton, and so
// torch.compile, emits for f32 (read in the PTX torch.compile generated for the suite's
// chains: docs/results/nvidia-h100/pointwise/fast-math/):
//   exp(x) = ex2.approx(x * log2 e): 2 ulp, plus about |x| units of roundoff from the
//            rounded argument; .ftz (Triton's is not): below x = -87.3, where exp is
//            subnormal, 0 instead (within every f32 check's absolute 2^-124), in 2
//            instructions where the guard for subnormal results took 5. What divides by
//            such a result or takes its log then meets 0 (inf, -inf) where the subnormal
//            gave about 1e38 (-87 to -103), as sigmoid's flush already does;
//   a / b  = div.full.f32: 2 ulp over the full range (unlike __fdividef, right for
//            |b| > 2^126);
//   1 / sqrt(x) = rsqrt.approx: 2 ulp.
// On the 8-op chain of bench/suites/pointwise.txt they cut the executed instructions from
// 105 to 92 an element and the time by 15%. tanh, erf, log and sqrt stay accurate, as in
// torch.compile's code. Sigmoid (and silu through it) goes further than Triton: below.
// The CPU and HIP builds keep the C library's functions. The float64 check
// (pointwise_reference.cc) bounds both.
#if defined(__CUDA_ARCH__)
__device__ inline float Exp(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x * 1.44269504088896341f));
  return y;
}
__device__ inline float Divide(float a, float b) {
  float y;
  asm("div.full.f32 %0, %1, %2;" : "=f"(y) : "f"(a), "f"(b));
  return y;
}
__device__ inline float Rsqrt(float x) {
  float y;
  asm("rsqrt.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
#else
OPSCHED_HD inline float Exp(float x) { return expf(x); }
OPSCHED_HD inline float Divide(float a, float b) { return a / b; }
OPSCHED_HD inline float Rsqrt(float x) { return 1.0f / sqrtf(x); }
#endif

// NaN propagates through relu, max and min (as in PyTorch).
OPSCHED_HD inline float Relu(float x) { return x > 0.0f || x != x ? x : 0.0f; }
OPSCHED_HD inline float Max(float a, float b) { return a > b || a != a ? a : b; }
OPSCHED_HD inline float Min(float a, float b) { return a < b || a != a ? a : b; }
#if defined(__CUDA_ARCH__)
// 1 / (1 + 2^(-x log2 e)) through ex2.approx.ftz and rcp.approx.ftz: 4 instructions where
// Exp's guard for subnormal results and div.full's for divisors beyond 2^126 took 13 (the
// 8-op chain's sigmoid and tanh were 41% of its executed instructions on the H200). The
// flushes change nothing above the subnormal range: 1 + a subnormal exponential rounds
// to 1 either way, and only for x below -87.3, where sigmoid itself is subnormal, the
// result is 0 instead (within every f32 check's absolute 2^-124). rcp.approx is within 1
// ulp, div.full within 2.
__device__ inline float Sigmoid(float x) {
  float e, y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(x * -1.44269504088896341f));
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(1.0f + e));
  return y;
}
#else
OPSCHED_HD inline float Sigmoid(float x) { return Divide(1.0f, 1.0f + Exp(-x)); }
#endif
OPSCHED_HD inline float Silu(float x) { return x * Sigmoid(x); }
OPSCHED_HD inline float Gelu(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }
OPSCHED_HD inline float GeluTanh(float x) {
  return 0.5f * x * (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
}

OPSCHED_HD inline float Unary(OpCode op, float x) {
  switch (op) {
    case OpCode::kNeg: return -x;
    case OpCode::kAbs: return fabsf(x);
    case OpCode::kNegAbs: return -fabsf(x);
    case OpCode::kExp: return Exp(x);
    case OpCode::kLog: return logf(x);
    case OpCode::kSqrt: return sqrtf(x);
    case OpCode::kRsqrt: return Rsqrt(x);
    case OpCode::kRelu: return Relu(x);
    case OpCode::kGelu: return Gelu(x);
    case OpCode::kGeluTanh: return GeluTanh(x);
    case OpCode::kSigmoid: return Sigmoid(x);
    case OpCode::kTanh: return tanhf(x);
    case OpCode::kSilu: return Silu(x);
    case OpCode::kCastF16: return HalfToFloat(FloatToHalf(x));
    case OpCode::kCastBF16: return Bf16ToFloat(FloatToBf16(x));
    default: return x;  // kCastF32
  }
}

OPSCHED_HD inline float Binary(OpCode op, float a, float b) {
  switch (op) {
    case OpCode::kAdd: return a + b;
    case OpCode::kSub: return a - b;
    case OpCode::kMul: return a * b;
    case OpCode::kDiv: return Divide(a, b);
    case OpCode::kMax: return Max(a, b);
    default: return Min(a, b);  // kMin
  }
}

// a * m + x with the product rounded before the sum (the bytecode's multiply, then its
// add: kMulAdd), never contracted to a fused multiply-add: on CUDA devices through the
// intrinsics nvcc never fuses; under clang (hipcc, whose intrinsics are plain operators,
// and which contracts by default for HIP) with contraction off.
OPSCHED_HD inline float MulThenAdd(float a, float m, float x) {
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
#if defined(__CUDA_ARCH__)
  return __fadd_rn(__fmul_rn(a, m), x);
#else
  const float product = a * m;
  return product + x;
#endif
}

OPSCHED_HD inline bool IsUnary(OpCode op) { return op >= OpCode::kNeg && op <= OpCode::kCastBF16; }
OPSCHED_HD inline bool IsBinary(OpCode op) { return op >= OpCode::kAdd && op <= OpCode::kMin; }

OPSCHED_HD inline float LoadElement(ElementType type, const void* base, int64_t offset) {
  switch (type) {
    case ElementType::kF16: return HalfToFloat(static_cast<const uint16_t*>(base)[offset]);
    case ElementType::kBF16: return Bf16ToFloat(static_cast<const uint16_t*>(base)[offset]);
    default: return static_cast<const float*>(base)[offset];
  }
}

OPSCHED_HD inline void StoreElement(ElementType type, void* base, int64_t offset, float v) {
  switch (type) {
    case ElementType::kF16: static_cast<uint16_t*>(base)[offset] = FloatToHalf(v); break;
    case ElementType::kBF16: static_cast<uint16_t*>(base)[offset] = FloatToBf16(v); break;
    default: static_cast<float*>(base)[offset] = v; break;
  }
}

}  // namespace opsched::pointwise
