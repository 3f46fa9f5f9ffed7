// The activation of conv2d_bias_act, on the host and (compiled by nvcc or hipcc) on the
// device, so every implementation applies the same function.
#pragma once

#include <cmath>

#include "core/half.h"
#include "ops/conv2d/conv2d_params.h"

namespace opsched::conv2d {

OPSCHED_HD inline float Activate(Activation act, float v) {
  switch (act) {
    case Activation::kRelu:
      return v > 0.0f ? v : (v != v ? v : 0.0f);  // NaN stays NaN
    case Activation::kSigmoid:
      return 1.0f / (1.0f + expf(-v));
    case Activation::kTanh:
      return tanhf(v);
    default:
      return v;
  }
}

}  // namespace opsched::conv2d
