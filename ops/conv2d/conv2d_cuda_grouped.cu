// Grouped convolution, nchw, several filters a thread (conv2d_cuda.h: DepthwiseConfig's
// `filters` above 1, LaunchGrouped): thread (n, filter set, p, q run) computes `pixels`
// neighbouring outputs along q for `filters` filters of one group, so each input of the
// group's channels it loads feeds every filter of the set (the direct depthwise kernel,
// one filter a thread, loads them once per filter; the taps neighbouring threads share
// come from L1). A 3x3 filter at stride 1 or 2, dilation 1 (ResNeXt's and RegNet's
// grouped layers), unrolled; f32, f16 and bf16 with f32 accumulation, bias and activation
// fused.
#include <cstdint>

#include "core/gpu/visit.h"
#include "ops/conv2d/conv2d_cuda.h"
#include "ops/conv2d/conv2d_cuda_depthwise_common.cuh"
#include "ops/conv2d/conv2d_math.h"

namespace opsched::conv2d::gpu_kernels {
namespace {

using namespace depthwise;  // NOLINT: the shared kernel helpers

constexpr int kTaps = 3;  // the filter: 3 x 3

template <typename T, int F, int kPixels, int ST>
__global__ void __launch_bounds__(kDepthwiseMaxBlock) GroupedNchwKernel(Problem p, DirectGeometry g) {
  using S = typename T::Storage;
  const uint32_t item = blockIdx.x * blockDim.x + threadIdx.x;
  if (item >= g.items) return;
  uint32_t plane_row, run, plane, oh, n, set;
  g.runs.DivMod(item, &plane_row, &run);
  g.rows.DivMod(plane_row, &plane, &oh);
  g.sets.DivMod(plane, &n, &set);
  const S* __restrict__ x = static_cast<const S*>(p.x);
  const S* __restrict__ w = static_cast<const S*>(p.wt);
  // 32-bit sizes (FitsIndexing); addresses in 64 bits from the strides.
  const int H = static_cast<int>(p.h), W = static_cast<int>(p.w);
  const int cg = static_cast<int>(p.c / p.groups), kg = static_cast<int>(p.k / p.groups);
  const int k0 = static_cast<int>(set) * F;  // F divides kg: the set lies in one group
  const int c0 = k0 / kg * cg;
  const int q0 = static_cast<int>(run) * kPixels;
  const int iw0 = q0 * ST - static_cast<int>(p.pad_w);
  float acc[F][kPixels];
#pragma unroll
  for (int f = 0; f < F; ++f) {
#pragma unroll
    for (int j = 0; j < kPixels; ++j) acc[f][j] = 0.0f;
  }
  for (int c1 = 0; c1 < cg; ++c1) {
    const S* __restrict__ plane_x = x + int64_t(n) * p.x_strides[0] + int64_t(c0 + c1) * p.x_strides[1];
    const S* __restrict__ wc = w + int64_t(k0) * p.w_strides[0] + int64_t(c1) * p.w_strides[1];
#pragma unroll
    for (int r = 0; r < kTaps; ++r) {
      const int ih = static_cast<int>(oh) * ST - static_cast<int>(p.pad_h) + r;
      if (ih < 0 || ih >= H) continue;
      const S* __restrict__ xr = plane_x + int64_t(ih) * p.x_strides[2];
      float wv[F][kTaps];
#pragma unroll
      for (int f = 0; f < F; ++f) {
#pragma unroll
        for (int s2 = 0; s2 < kTaps; ++s2) {
          wv[f][s2] = T::Load(wc[f * p.w_strides[0] + r * p.w_strides[2] + s2 * p.w_strides[3]]);
        }
      }
      AccumulateRow<T, F, kPixels, kTaps, ST>(xr, p.x_strides[3], iw0, W, wv, acc);
    }
  }
  S* __restrict__ y = static_cast<S*>(p.y);
  const int64_t at = int64_t(n) * p.y_strides[0] + int64_t(oh) * p.y_strides[2];
#pragma unroll
  for (int f = 0; f < F; ++f) {
    const int64_t yk = at + int64_t(k0 + f) * p.y_strides[1];
#pragma unroll
    for (int j = 0; j < kPixels; ++j) {
      const int q = q0 + j;
      if (q < p.q) y[yk + int64_t(q) * p.y_strides[3]] = T::Store(Epilogue<T>(p, k0 + f, acc[f][j]));
    }
  }
}

}  // namespace

bool GroupedFits(const Problem& p, const DepthwiseConfig& c) {
  const int64_t kg = p.groups > 0 ? p.k / p.groups : 0;
  const bool filters = (c.filters == 2 || c.filters == 4 || c.filters == 8) && kg % c.filters == 0;
  const bool pixels = c.pixels == 1 || c.pixels == 2 || c.pixels == 4 || c.pixels == 8;
  const bool block = c.block >= 32 && c.block <= kDepthwiseMaxBlock && c.block % 32 == 0;
  if (p.layout != Layout::kNchw || c.rows != 0 || !filters || !pixels || !block ||
      c.filters * c.pixels > kGroupedMaxOutputs || UnrolledFilter(p) != kTaps) {
    return false;
  }
  return p.n * (p.k / c.filters) * p.p * ((p.q + c.pixels - 1) / c.pixels) <= kMaxExtent;
}

gpuError_t LaunchGrouped(const Problem& p, const DepthwiseConfig& c, gpuStream_t stream) {
  if (c.filters < 2 || !DepthwiseFits(p, c)) return gpuErrorInvalidValue;  // DepthwiseFits: GroupedFits
  if (p.n * p.p * p.q == 0 || p.k == 0) return gpuSuccess;
  const DirectGeometry g = MakeDirectGeometry(p, c.pixels, c.filters);
  const unsigned blocks = static_cast<unsigned>((int64_t(g.items) + c.block - 1) / c.block);
  const bool two = p.stride_h == 2;
  return VisitType(p, [&]<typename T>() {
    return VisitPow2UpTo8(c.filters, [&]<int F>() {
      return VisitPow2UpTo8(c.pixels, [&]<int kPixels>() {
        if constexpr (F > 1 && F * kPixels <= kGroupedMaxOutputs) {
          if (two) {
            GroupedNchwKernel<T, F, kPixels, 2><<<blocks, c.block, 0, stream>>>(p, g);
          } else {
            GroupedNchwKernel<T, F, kPixels, 1><<<blocks, c.block, 0, stream>>>(p, g);
          }
          return gpuGetLastError();
        } else {
          return gpuErrorInvalidValue;
        }
      });
    });
  });
}

}  // namespace opsched::conv2d::gpu_kernels
