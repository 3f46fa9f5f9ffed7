// Element types as kernels see them: each tag names the storage type, the type arithmetic
// happens in (Compute: float for F32, F16 and BF16; the integer itself for I32 and I64)
// and the conversions between them. The same tags serve CPU loops and (compiled by nvcc
// or hipcc) device kernels.
#pragma once

#include <cstdint>

#include "core/half.h"

namespace opsched {

struct F32 {
  using Storage = float;
  using Compute = float;
  OPSCHED_HD static float Load(float v) { return v; }
  OPSCHED_HD static float Store(float f) { return f; }
};

struct F16 {
  using Storage = uint16_t;
  using Compute = float;
  OPSCHED_HD static float Load(uint16_t v) { return HalfToFloat(v); }
  OPSCHED_HD static uint16_t Store(float f) { return FloatToHalf(f); }
};

struct BF16 {
  using Storage = uint16_t;
  using Compute = float;
  OPSCHED_HD static float Load(uint16_t v) { return Bf16ToFloat(v); }
  OPSCHED_HD static uint16_t Store(float f) { return FloatToBf16(f); }
};

// An integer type computes in itself.
template <typename Int>
struct Integer {
  using Storage = Int;
  using Compute = Int;
  OPSCHED_HD static Int Load(Int v) { return v; }
  OPSCHED_HD static Int Store(Int v) { return v; }
};
using I32 = Integer<int32_t>;
using I64 = Integer<int64_t>;

}  // namespace opsched
