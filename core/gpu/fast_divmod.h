// FastDivmod: division by a run-time constant through a multiply and a shift
// (Granlund and Montgomery), exact for every 32-bit dividend. Kernels use it for index
// arithmetic, where 64-bit division would dominate a bandwidth-bound loop.
#pragma once

#include <cstdint>

#include "core/half.h"  // OPSCHED_HD

namespace opsched {

struct FastDivmod {
  uint32_t divisor = 1;
  uint32_t multiplier = 1;
  uint32_t shift = 0;

  FastDivmod() = default;
  // `d` must be at least 1.
  explicit FastDivmod(uint32_t d) : divisor(d) {
    shift = 0;
    while ((uint64_t(1) << shift) < d) ++shift;  // ceil(log2(d))
    multiplier = static_cast<uint32_t>(((uint64_t(1) << 32) * ((uint64_t(1) << shift) - d)) / d + 1);
  }

  OPSCHED_HD uint32_t Div(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    const uint32_t hi = __umulhi(n, multiplier);
#else
    const uint32_t hi = static_cast<uint32_t>((uint64_t(n) * multiplier) >> 32);
#endif
    return static_cast<uint32_t>((uint64_t(hi) + n) >> shift);
  }
  OPSCHED_HD void DivMod(uint32_t n, uint32_t* q, uint32_t* r) const {
    *q = Div(n);
    *r = n - *q * divisor;
  }
};

}  // namespace opsched
