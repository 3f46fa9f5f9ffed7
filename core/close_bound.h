// CloseBound: when a computed value is close enough to its float64 reference. One
// definition serves an op's CPU check and its device check (core/gpu/verify.h):
//   |got - want| <= per_magnitude * magnitude + per_max_magnitude * max_magnitude
//                   + relative * |want| + absolute
// where `magnitude` is the element's scale of rounding (e.g. the sum of |terms| it
// accumulates) and `max_magnitude` the largest over its tensor. `exact` comparisons, and
// every non-finite reference (NaN, +-Inf), demand equality (NaN matches NaN).
#pragma once

#include "core/half.h"

namespace opsched {

struct CloseBound {
  double per_magnitude = 0;
  double per_max_magnitude = 0;
  double relative = 0;
  double absolute = 0;
  bool exact = false;

  OPSCHED_HD double Tolerance(double magnitude, double max_magnitude, double want) const {
    return per_magnitude * magnitude + per_max_magnitude * max_magnitude +
           relative * (want < 0 ? -want : want) + absolute;
  }
  OPSCHED_HD bool Holds(double got, double want, double magnitude, double max_magnitude) const {
    const bool finite = want == want && want - want == 0;  // neither NaN nor infinite
    if (exact || !finite) return got == want || (got != got && want != want);
    const double d = got - want;
    return (d < 0 ? -d : d) <= Tolerance(magnitude, max_magnitude, want);  // NaN fails
  }
};

}  // namespace opsched
