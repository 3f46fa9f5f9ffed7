// Compile-time dispatch of a run-time knob whose values are 1, 2, 4 or 8 (vector widths,
// outputs per thread): kernels are templates over the knob, configs choose at run time.
#pragma once

namespace opsched {

// Calls fn.template operator()<V>() for V = value in {1, 2, 4, 8} (any other value: 1).
template <typename Fn>
auto VisitPow2UpTo8(int value, Fn&& fn) {
  switch (value) {
    case 8:
      return fn.template operator()<8>();
    case 4:
      return fn.template operator()<4>();
    case 2:
      return fn.template operator()<2>();
    default:
      return fn.template operator()<1>();
  }
}

}  // namespace opsched
