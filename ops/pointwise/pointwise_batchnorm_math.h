// One channel's batch-norm statistics as both batchnorm implementations apply them
// (pointwise_batchnorm.h): out = clamps(act((x - mean) * scale + shift)). A plain header
// that host code and device kernels (nvcc, hipcc) both include, so the CPU loop and the
// GPU kernel fold a channel and clamp alike.
#pragma once

#include "ops/pointwise/pointwise_math.h"

namespace opsched::pointwise {

struct ChannelStats {
  float mean = 0;       // x - 0 is x: an absent m subtracts nothing
  float scale = 1;      // y * 1 is y: absent v and g scale by nothing
  float shift = -0.0f;  // y + -0 is y for every y: an absent b adds nothing
};

// Bits of FoldChannel's `present`: which of m, v, g, b the program has.
inline constexpr unsigned kHasMean = 1, kHasVar = 2, kHasScale = 4, kHasShift = 8;

// value[k]: the channel's m, v, g, b (read only where present). scale = factor * g *
// rsqrt(v + eps), g as sigmoid(g) where `gate`; `factor` a constant of the product (1:
// none, exact).
OPSCHED_HD inline ChannelStats FoldChannel(const float (&value)[4], unsigned present, bool gate, float eps,
                                           float factor = 1) {
  ChannelStats st;
  if (present & kHasMean) st.mean = value[0];
  if (present & kHasVar) st.scale = Rsqrt(value[1] + eps);
  if (present & kHasScale) {
    const float g = gate ? Sigmoid(value[2]) : value[2];
    st.scale = present & kHasVar ? g * st.scale : g;
  }
  st.scale = factor * st.scale;
  if (present & kHasShift) st.shift = value[3];
  return st;
}

// A clamp after the activation, as the program writes it: y = op(y, value), or
// op(value, y) where value_first; op kMax or kMin (kCastF32: none). ReLU6 is
// max(0, min(y, 6)): two of them, the inner one first.
struct Bound {
  OpCode op = OpCode::kCastF32;
  bool value_first = false;
  float value = 0;
};
inline constexpr int kMaxBounds = 2;

// y through the clamps, innermost first, each the interpreter's Binary (so the same
// result, signed zeros included).
OPSCHED_HD inline float Bounded(const Bound (&bound)[kMaxBounds], float y) {
  for (int k = 0; k < kMaxBounds && bound[k].op != OpCode::kCastF32; ++k) {
    y = bound[k].value_first ? Binary(bound[k].op, bound[k].value, y) : Binary(bound[k].op, y, bound[k].value);
  }
  return y;
}

}  // namespace opsched::pointwise
