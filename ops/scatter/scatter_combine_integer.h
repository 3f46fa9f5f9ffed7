// Combining integers for each scatter reduction, shared by the CPU loops and the device
// kernels: add and mul wrap around in two's complement (as PyTorch's do; computed in the
// unsigned type, where overflow is defined), min and max are exact.
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/half.h"
#include "ops/scatter/scatter_params.h"

namespace opsched::scatter {

template <typename C>
OPSCHED_HD inline C CombineInteger(Reduction r, C acc, C v) {
  static_assert(std::is_integral_v<C> && std::is_signed_v<C>, "signed integers only");
  using U = std::make_unsigned_t<C>;
  switch (r) {
    case Reduction::kNone:
      return v;
    case Reduction::kAdd:
      return static_cast<C>(static_cast<U>(acc) + static_cast<U>(v));
    case Reduction::kMul:
      return static_cast<C>(static_cast<U>(acc) * static_cast<U>(v));
    case Reduction::kMin:
      return v < acc ? v : acc;
    case Reduction::kMax:
      return v > acc ? v : acc;
  }
  return v;
}

}  // namespace opsched::scatter
