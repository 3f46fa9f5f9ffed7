// One operation of the float64 reference of a pointwise program, with its first-order
// bound on how far f32 evaluation may stray (pointwise_reference.h): the one definition
// that the host reference (pointwise_reference.cc) and the device one
// (pointwise_cuda_reference.cu) both evaluate, so that the two agree to the last bits
// their math libraries give. Plain code for nvcc, hipcc and the host compiler.
#pragma once

#include <math.h>

#include <limits>

#include "core/half.h"
#include "ops/pointwise/pointwise_bytecode.h"

namespace opsched::pointwise {

// A value and the bound on |f32 evaluation - value|.
struct RefValue {
  double v = 0;
  double e = 0;
};

inline constexpr double kRefUnitRoundoff = 0x1p-24;  // f32

// `ulps` roundings of a result v: none where v is 0 (exp and sigmoid of -inf are 0 in f32
// too, and ulps, which grow with |x|, would make the bound inf * 0 = NaN).
OPSCHED_HD inline double RefRounding(double ulps, double v) { return v == 0 ? 0.0 : ulps * kRefUnitRoundoff * fabs(v); }

OPSCHED_HD inline RefValue RefConst(double value) {
  const double rounded = static_cast<float>(value);
  return {value, fabs(value - rounded)};
}

// The result of `op` (unary or binary; not a load, constant or store) on a and b (b
// unused by unary operations).
OPSCHED_HD inline RefValue RefApply(OpCode op, RefValue a, RefValue b) {
  constexpr double kU = kRefUnitRoundoff;
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const bool a_nan = a.v != a.v, b_nan = b.v != b.v;
  double v = 0, e = 0;
  switch (op) {
    case OpCode::kAdd: v = a.v + b.v; e = a.e + b.e + kU * fabs(v); break;
    case OpCode::kSub: v = a.v - b.v; e = a.e + b.e + kU * fabs(v); break;
    case OpCode::kMul:
      v = a.v * b.v;
      e = fabs(a.v) * b.e + fabs(b.v) * a.e + a.e * b.e + kU * fabs(v);
      break;
    case OpCode::kDiv:
      v = a.v / b.v;
      e = fabs(b.v) > b.e ? (a.e + fabs(v) * b.e) / (fabs(b.v) - b.e) + 4 * kU * fabs(v) : inf;
      break;
    case OpCode::kMax:
      v = a_nan || b_nan ? nan : (a.v < b.v ? b.v : a.v);
      e = a.e < b.e ? b.e : a.e;
      break;
    case OpCode::kMin:
      v = a_nan || b_nan ? nan : (b.v < a.v ? b.v : a.v);
      e = a.e < b.e ? b.e : a.e;
      break;
    case OpCode::kNeg: v = -a.v; e = a.e; break;
    case OpCode::kAbs: v = fabs(a.v); e = a.e; break;
    case OpCode::kRelu: v = a_nan || a.v > 0 ? a.v : 0.0; e = a.e; break;
    case OpCode::kExp:
      v = exp(a.v);
      e = fabs(v) * expm1(a.e) + RefRounding(4 + 3 * fabs(a.v), v);
      break;
    case OpCode::kLog:
      v = log(a.v);
      e = fabs(a.v) > a.e ? a.e / (fabs(a.v) - a.e) + 4 * kU * fabs(v) + kU * kU : inf;
      break;
    case OpCode::kSqrt: {
      v = sqrt(a.v);
      const double below = fabs(a.v) - a.e;
      e = a.e / (sqrt(fabs(a.v)) + sqrt(below < 0 ? 0.0 : below) + 1e-300) + 2 * kU * fabs(v);
      break;
    }
    case OpCode::kRsqrt:
      v = 1.0 / sqrt(a.v);
      e = fabs(a.v) > a.e ? 0.5 * a.e * pow(fabs(a.v) - a.e, -1.5) + 4 * kU * fabs(v) : inf;
      break;
    case OpCode::kSigmoid:
      v = 1.0 / (1.0 + exp(-a.v));
      e = 0.25 * a.e + RefRounding(10 + 3 * fabs(a.v), v);
      break;
    case OpCode::kTanh: v = tanh(a.v); e = a.e + 4 * kU * fabs(v); break;
    case OpCode::kSilu:
      v = a.v / (1.0 + exp(-a.v));
      e = 1.1 * a.e + RefRounding(12 + 3 * fabs(a.v), v);
      break;
    case OpCode::kGelu:
      v = 0.5 * a.v * (1.0 + erf(a.v / sqrt(2.0)));
      e = 1.13 * a.e + 6 * kU * fabs(a.v);
      break;
    case OpCode::kGeluTanh: {
      const double z = 0.7978845608028654 * (a.v + 0.044715 * a.v * a.v * a.v);
      v = 0.5 * a.v * (1.0 + tanh(z));
      e = 1.13 * a.e + 6 * kU * fabs(a.v) + 0.5 * fabs(a.v) * 6 * kU * fabs(z);
      break;
    }
    case OpCode::kCastF16: {
      v = HalfToFloat(FloatToHalf(static_cast<float>(a.v)));
      const double rounding = 2 * 0x1p-11 * fabs(a.v);
      e = a.e + (rounding < 0x1p-24 ? 0x1p-24 : rounding);
      break;
    }
    case OpCode::kCastBF16:
      v = Bf16ToFloat(FloatToBf16(static_cast<float>(a.v)));
      e = a.e + 2 * 0x1p-8 * fabs(a.v) + 0x1p-126;
      break;
    default: v = a.v; e = a.e; break;  // kCastF32
  }
  return {v, e};
}

}  // namespace opsched::pointwise
