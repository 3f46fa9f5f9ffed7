// The scalar functions of the pointwise language in float, and element loads and stores
// by element type: one definition for the CPU implementations and (compiled by nvcc or
// hipcc, OPSCHED_HD) device kernels, so every implementation rounds alike.
#pragma once

#include <math.h>

#include <cstdint>

#include "core/half.h"
#include "ops/pointwise/pointwise_bytecode.h"

namespace opsched::pointwise {

// NaN propagates through relu, max and min (as in PyTorch).
OPSCHED_HD inline float Relu(float x) { return x > 0.0f || x != x ? x : 0.0f; }
OPSCHED_HD inline float Max(float a, float b) { return a > b || a != a ? a : b; }
OPSCHED_HD inline float Min(float a, float b) { return a < b || a != a ? a : b; }
OPSCHED_HD inline float Sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
OPSCHED_HD inline float Silu(float x) { return x * Sigmoid(x); }
OPSCHED_HD inline float Gelu(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }
OPSCHED_HD inline float GeluTanh(float x) {
  return 0.5f * x * (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
}
OPSCHED_HD inline float Rsqrt(float x) { return 1.0f / sqrtf(x); }

OPSCHED_HD inline float Unary(OpCode op, float x) {
  switch (op) {
    case OpCode::kNeg: return -x;
    case OpCode::kAbs: return fabsf(x);
    case OpCode::kExp: return expf(x);
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
    case OpCode::kDiv: return a / b;
    case OpCode::kMax: return Max(a, b);
    default: return Min(a, b);  // kMin
  }
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
