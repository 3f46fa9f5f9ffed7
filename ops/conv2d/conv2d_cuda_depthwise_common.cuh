// What the depthwise kernels (conv2d_cuda_depthwise.cu, conv2d_cuda_depthwise_staged.cu)
// share: dispatch over the element type and the unrolled filter, the bias+activation
// epilogue, and aligned vectors of elements.
#pragma once

#include <cstdint>

#include "core/element.h"
#include "ops/conv2d/conv2d_cuda.h"
#include "ops/conv2d/conv2d_math.h"

namespace opsched::conv2d::gpu_kernels::depthwise {

// Calls fn.template operator()<T>() for the problem's element type.
template <typename Fn>
inline gpuError_t VisitType(const Problem& p, Fn&& fn) {
  switch (p.type) {
    case ElementType::kF16:
      return fn.template operator()<F16>();
    case ElementType::kBF16:
      return fn.template operator()<BF16>();
    default:
      return fn.template operator()<F32>();
  }
}

template <typename T>
__device__ __forceinline__ float Epilogue(const Problem& p, int64_t k, float acc) {
  if (p.kind != Kind::kBiasActivation) return acc;
  return Activate(p.act, acc + T::Load(static_cast<const typename T::Storage*>(p.b)[k * p.b_stride]));
}

template <typename S, int V>
struct alignas(sizeof(S) * V) Pack {
  S v[V];
};

// The unrolled filter size of a problem: 3, 5 or 7 for square filters at equal strides
// of 1 or 2 and dilation 1; 0 otherwise (the general kernels).
inline int UnrolledFilter(const Problem& p) {
  const bool square = p.r == p.s && (p.r == 3 || p.r == 5 || p.r == 7);
  const bool strides = p.stride_h == p.stride_w && (p.stride_h == 1 || p.stride_h == 2);
  return square && strides && p.dil_h == 1 && p.dil_w == 1 ? static_cast<int>(p.r) : 0;
}

// Calls fn.template operator()<KS, ST>() for the problem's unrolled filter and stride
// (<0, 0> for the general kernels).
template <typename Fn>
inline gpuError_t VisitFilter(const Problem& p, Fn&& fn) {
  const int ks = UnrolledFilter(p);
  const bool two = p.stride_h == 2;
  switch (ks) {
    case 3:
      return two ? fn.template operator()<3, 2>() : fn.template operator()<3, 1>();
    case 5:
      return two ? fn.template operator()<5, 2>() : fn.template operator()<5, 1>();
    case 7:
      return two ? fn.template operator()<7, 2>() : fn.template operator()<7, 1>();
    default:
      return fn.template operator()<0, 0>();
  }
}

}  // namespace opsched::conv2d::gpu_kernels::depthwise
