// IEEE binary16 (f16) and bfloat16 (bf16) conversions, round to nearest even, NaN and
// infinity preserved; on the host and, compiled by nvcc or hipcc, on the device. In CUDA
// device code the conversions are the hardware's single cvt instructions (the same
// rounding, subnormals and overflow; a NaN becomes the canonical NaN), where the bit
// manipulation below would cost a kernel 10 to 25 instructions per element and a branch.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define OPSCHED_HD __host__ __device__
#else
#define OPSCHED_HD
#endif

namespace opsched {

OPSCHED_HD inline uint32_t FloatBits(float f) {
  uint32_t u;
  __builtin_memcpy(&u, &f, sizeof u);
  return u;
}

OPSCHED_HD inline float BitsFloat(uint32_t u) {
  float f;
  __builtin_memcpy(&f, &u, sizeof f);
  return f;
}

OPSCHED_HD inline uint16_t FloatToBf16(float f) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  uint16_t h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
#endif
  uint32_t u = FloatBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

OPSCHED_HD inline float Bf16ToFloat(uint16_t h) { return BitsFloat(uint32_t(h) << 16); }

OPSCHED_HD inline uint16_t FloatToHalf(float f) {
#if defined(__CUDA_ARCH__)
  uint16_t h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
#endif
  const uint32_t u = FloatBits(f);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (abs < 0x38800000u) {
    // Subnormal half (or zero): value = m * 2^-24 with m < 1024.
    if (abs < 0x33000000u) return static_cast<uint16_t>(sign);  // rounds to 0
    const uint32_t exp = abs >> 23;
    const uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - exp;  // 14 + (113 - exp) ... as bits to drop from 24
    uint32_t half_mant = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half_mant & 1u))) ++half_mant;
    return static_cast<uint16_t>(sign | half_mant);
  }
  // Normal: rebias the exponent (127 -> 15) and round the mantissa to 10 bits.
  uint32_t bits = abs - 0x38000000u;
  const uint32_t rem = bits & 0x1fffu;
  bits >>= 13;
  if (rem > 0x1000u || (rem == 0x1000u && (bits & 1u))) ++bits;
  return static_cast<uint16_t>(sign | bits);
}

OPSCHED_HD inline float HalfToFloat(uint16_t h) {
#if defined(__CUDA_ARCH__)
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
#endif
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    if (mant == 0) return BitsFloat(sign);
    // Subnormal: mant * 2^-24.
    const float v = static_cast<float>(mant) * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  if (exp == 31) return BitsFloat(sign | 0x7f800000u | (mant << 13));
  return BitsFloat(sign | ((exp + 112) << 23) | (mant << 13));
}

}  // namespace opsched
