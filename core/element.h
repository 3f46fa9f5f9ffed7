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

struct I32 {
  using Storage = int32_t;
  using Compute = int32_t;
  OPSCHED_HD static int32_t Load(int32_t v) { return v; }
  OPSCHED_HD static int32_t Store(int32_t v) { return v; }
};

struct I64 {
  using Storage = int64_t;
  using Compute = int64_t;
  OPSCHED_HD static int64_t Load(int64_t v) { return v; }
  OPSCHED_HD static int64_t Store(int64_t v) { return v; }
};

}  // namespace opsched
