// What the depthwise kernels (conv2d_cuda_depthwise.cu, conv2d_cuda_depthwise_staged.cu,
// conv2d_cuda_depthwise_nhwc_staged.cu) share: dispatch over the element type and the
// unrolled filter, the bias+activation epilogue, and aligned vectors of elements.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/element.h"
#include "core/gpu/fast_divmod.h"
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

// Whether `ptr` is aligned to `bytes` (vector loads and copies).
inline bool Aligned(const void* ptr, size_t bytes) { return reinterpret_cast<uintptr_t>(ptr) % bytes == 0; }

// Calls fn.template operator()<KS, ST>() for the problem's unrolled filter and stride
// (UnrolledFilter, conv2d_cuda.h; <0, 0> for the general kernels).
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

// The nchw direct kernels' threads: item -> (plane row, q run of `pixels` outputs) ->
// (plane, p) -> (n, filter set of `filters` filters of one group; 1: the filter), in
// 32-bit FastDivmods (conv2d_cuda_depthwise.cu, conv2d_cuda_grouped.cu).
struct DirectGeometry {
  FastDivmod runs;  // item -> (plane row, q run)
  FastDivmod rows;  // plane row -> (n * sets + set, p)
  FastDivmod sets;  // n * sets + set -> (n, set): sets = K / filters
  uint32_t items;
};

inline DirectGeometry MakeDirectGeometry(const Problem& p, int pixels, int filters) {
  DirectGeometry g;
  const int64_t runs = (p.q + pixels - 1) / pixels;
  g.runs = FastDivmod(static_cast<uint32_t>(runs));
  g.rows = FastDivmod(static_cast<uint32_t>(p.p));
  g.sets = FastDivmod(static_cast<uint32_t>(p.k / filters));
  g.items = static_cast<uint32_t>(p.n * (p.k / filters) * p.p * runs);
  return g;
}

// One input row's share of kPixels neighbouring outputs along q, at stride ST, of F
// filters with KS unrolled taps (wv[f][s], dilation 1): each input of the run's span is
// loaded once from row `xr` (elements `x_step` apart; zero outside [0, W)) and multiplied
// into every output and filter that uses it. The nchw direct kernels' inner loop: one
// filter a thread (conv2d_cuda_depthwise.cu) or several of a group (conv2d_cuda_grouped.cu).
template <typename T, int F, int kPixels, int KS, int ST>
__device__ __forceinline__ void AccumulateRow(const typename T::Storage* xr, int64_t x_step, int iw0,
                                              int W, const float (&wv)[F][KS], float (&acc)[F][kPixels]) {
  constexpr int kSpan = (kPixels - 1) * ST + KS;
#pragma unroll
  for (int col = 0; col < kSpan; ++col) {
    const int iw = iw0 + col;
    const float xv = (iw >= 0 && iw < W) ? T::Load(xr[int64_t(iw) * x_step]) : 0.0f;
#pragma unroll
    for (int j = 0; j < kPixels; ++j) {
      const int s2 = col - j * ST;  // compile-time after unrolling
      if (s2 >= 0 && s2 < KS) {
#pragma unroll
        for (int f = 0; f < F; ++f) acc[f][j] = fmaf(xv, wv[f][s2], acc[f][j]);
      }
    }
  }
}

}  // namespace opsched::conv2d::gpu_kernels::depthwise
