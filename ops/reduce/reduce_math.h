// The arithmetic of every reduce implementation, CPU and GPU alike: the identity of an
// op, the transform of a term, the combination of two partial results (NaN propagates
// through max and min) and the final value. Float types accumulate in float; integers
// (sum, max, min) in int64, where a sum wraps around in two's complement (and an i32
// result is the low 32 bits: the same as summing in i32, as PyTorch does with dtype=int32).
#pragma once

#include <cstdint>
#include <type_traits>

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

OPSCHED_HD inline int64_t IntegerIdentity(ReduceOp op) {
  switch (op) {
    case ReduceOp::kMax:
      return INT64_MIN;
    case ReduceOp::kMin:
      return INT64_MAX;
    default:
      return 0;
  }
}

OPSCHED_HD inline int64_t Combine(ReduceOp op, int64_t a, int64_t b) {
  switch (op) {
    case ReduceOp::kMax:
      return a > b ? a : b;
    case ReduceOp::kMin:
      return a < b ? a : b;
    default:
      return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  }
}

// The accumulator of an element type: float, or int64 for i32 and i64.
template <typename In>
using AccumulatorOf = std::conditional_t<std::is_integral_v<typename In::Compute>, int64_t, float>;

// The identity as an accumulator of type A.
template <typename A>
OPSCHED_HD inline A IdentityOf(ReduceOp op) {
  if constexpr (std::is_same_v<A, int64_t>) {
    return IntegerIdentity(op);
  } else {
    return Identity(op);
  }
}

// The output value of an accumulator over `length` terms.
OPSCHED_HD inline float Finalize(ReduceOp op, float acc, int64_t length, float scale) {
  if (op == ReduceOp::kMean) return length == 0 ? __builtin_nanf("") : acc * scale;
  return acc;
}

// A stored term as accumulated: loaded and transformed (squared for sumsq) in float;
// integers as they are.
template <typename In>
OPSCHED_HD inline AccumulatorOf<In> Term(ReduceOp op, typename In::Storage s) {
  if constexpr (std::is_same_v<AccumulatorOf<In>, float>) {
    return Transform(op, In::Load(s));
  } else {
    return static_cast<int64_t>(In::Load(s));
  }
}

// The stored output of an accumulator: Finalize for floats; integers as they are (an i32
// output keeps the low 32 bits).
template <typename Out, typename A>
OPSCHED_HD inline typename Out::Storage Output(const Problem& p, A acc) {
  if constexpr (std::is_same_v<A, float>) {
    return Out::Store(Finalize(p.op, acc, p.length, p.scale));
  } else {
    return Out::Store(static_cast<typename Out::Compute>(acc));
  }
}

}  // namespace opsched::reduce
