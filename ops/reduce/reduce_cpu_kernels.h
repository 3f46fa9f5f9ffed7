// Reduce loops on the CPU over the canonical problem: the terms [begin, end) of output m
// accumulated in float (int64 for integers), and the type dispatch shared by the CPU
// implementations.
#pragma once

#include <cstdint>

#include "core/element.h"
#include "ops/reduce/reduce_math.h"
#include "ops/reduce/reduce_params.h"

namespace opsched::reduce::cpu {

inline int64_t KeptOffset(const Problem& p, int64_t m) {
  int64_t offset = 0;
  for (int d = p.kept_rank - 1; d >= 0; --d) {
    offset += (m % p.kept_shape[d]) * p.kept_strides[d];
    m /= p.kept_shape[d];
  }
  return offset;
}

// Accumulates terms [begin, end) of the output whose kept offset is `base`: an odometer
// over the outer reduced dimensions around a strided loop over the innermost one.
template <typename In>
AccumulatorOf<In> Accumulate(const Problem& p, const typename In::Storage* x, int64_t base, int64_t begin,
                             int64_t end) {
  using A = AccumulatorOf<In>;
  A acc = IdentityOf<A>(p.op);
  auto term = [&p](typename In::Storage s) { return Term<In>(p.op, s); };
  if (begin >= end) return acc;
  if (p.reduced_rank == 0) return Combine(p.op, acc, term(x[base]));
  const int last = p.reduced_rank - 1;
  const int64_t inner = p.reduced_shape[last];
  const int64_t stride = p.reduced_strides[last];
  int64_t k = begin;
  while (k < end) {
    // Offset of term k's run along the innermost dimension.
    int64_t rest = k / inner, offset = base;
    const int64_t i0 = k % inner;
    for (int d = last - 1; d >= 0; --d) {
      offset += (rest % p.reduced_shape[d]) * p.reduced_strides[d];
      rest /= p.reduced_shape[d];
    }
    const int64_t stop = std::min<int64_t>(inner, i0 + (end - k));
    const typename In::Storage* run = x + offset;
    for (int64_t i = i0; i < stop; ++i) acc = Combine(p.op, acc, term(run[i * stride]));
    k += stop - i0;
  }
  return acc;
}

// Calls fn.template operator()<In, Out>() for the problem's element types.
template <typename Fn>
void VisitTypes(const Problem& p, Fn&& fn) {
  auto with_out = [&]<typename In>() {
    if (p.out_type == ElementType::kF32) {
      fn.template operator()<In, F32>();
    } else {
      fn.template operator()<In, In>();
    }
  };
  switch (p.in_type) {
    case ElementType::kI32:
      if (p.out_type == ElementType::kI64) {
        fn.template operator()<I32, I64>();
      } else {
        fn.template operator()<I32, I32>();
      }
      break;
    case ElementType::kI64:
      fn.template operator()<I64, I64>();
      break;
    case ElementType::kF16:
      with_out.template operator()<F16>();
      break;
    case ElementType::kBF16:
      with_out.template operator()<BF16>();
      break;
    default:
      with_out.template operator()<F32>();
      break;
  }
}

}  // namespace opsched::reduce::cpu
