// One channel's batch-norm statistics as both batchnorm implementations apply them
// (pointwise_batchnorm.h): out = act((x - mean) * scale + shift). A plain header that
// host code and device kernels (nvcc, hipcc) both include, so the CPU loop and the GPU
// kernel fold a channel alike.
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

// value[k]: the channel's m, v, g, b (read only where present). scale = g * rsqrt(v + eps),
// g as sigmoid(g) where `gate`.
OPSCHED_HD inline ChannelStats FoldChannel(const float (&value)[4], unsigned present, bool gate, float eps) {
  ChannelStats st;
  if (present & kHasMean) st.mean = value[0];
  if (present & kHasVar) st.scale = Rsqrt(value[1] + eps);
  if (present & kHasScale) {
    const float g = gate ? Sigmoid(value[2]) : value[2];
    st.scale = present & kHasVar ? g * st.scale : g;
  }
  if (present & kHasShift) st.shift = value[3];
  return st;
}

}  // namespace opsched::pointwise
