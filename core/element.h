// Element types as kernels see them: F32, F16 and BF16 name the storage type and the
// conversions to and from float, the type arithmetic happens in. The same tags serve
// CPU loops and (compiled by nvcc or hipcc) device kernels.
#pragma once

#include <cstdint>

#include "core/half.h"

namespace opsched {

struct F32 {
  using Storage = float;
  OPSCHED_HD static float Load(float v) { return v; }
  OPSCHED_HD static float Store(float f) { return f; }
};

struct F16 {
  using Storage = uint16_t;
  OPSCHED_HD static float Load(uint16_t v) { return HalfToFloat(v); }
  OPSCHED_HD static uint16_t Store(float f) { return FloatToHalf(f); }
};

struct BF16 {
  using Storage = uint16_t;
  OPSCHED_HD static float Load(uint16_t v) { return Bf16ToFloat(v); }
  OPSCHED_HD static uint16_t Store(float f) { return FloatToBf16(f); }
};

}  // namespace opsched
