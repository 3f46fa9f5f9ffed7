// The arithmetic of every reduce implementation, CPU and GPU alike: the identity of an
// op, the transform of a term, the combination of two partial results (NaN propagates
// through max and min) and the final value. Accumulation is always in float.
#pragma once

#include "core/half.h"  // OPSCHED_HD
#include "ops/reduce/reduce_params.h"

namespace opsched::reduce {

OPSCHED_HD inline float Identity(ReduceOp op) {
  switch (op) {
    case ReduceOp::kMax:
      return -__builtin_huge_valf();
    case ReduceOp::kMin:
      return __builtin_huge_valf();
    default:
      return 0.0f;
  }
}

OPSCHED_HD inline float Transform(ReduceOp op, float v) { return op == ReduceOp::kSumSquares ? v * v : v; }

OPSCHED_HD inline float Combine(ReduceOp op, float a, float b) {
  switch (op) {
    case ReduceOp::kMax:
      return (a > b || a != a) ? a : b;
    case ReduceOp::kMin:
      return (a < b || a != a) ? a : b;
    default:
      return a + b;
  }
}

// The output value of an accumulator over `length` terms.
OPSCHED_HD inline float Finalize(ReduceOp op, float acc, int64_t length, float scale) {
  if (op == ReduceOp::kMean) return length == 0 ? __builtin_nanf("") : acc * scale;
  return acc;
}

}  // namespace opsched::reduce
