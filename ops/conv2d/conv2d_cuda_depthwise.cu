// Depthwise and grouped convolution with few channels per group (conv2d_cuda.h,
// LaunchDepthwise): f32, f16 and bf16 in and out, f32 accumulation, bias and activation
// fused. Memory-bound work: each kernel reads x about once from DRAM and writes y once.
//
// nchw: block (n*K + k, tile) computes a tile of rows x columns outputs of one plane;
//   the input window of the tile for each of the group's channels is staged in shared
//   memory as float, each thread computes rows/8 outputs of one column. Or (rows 0)
//   direct: a thread computes `pixels` neighbouring outputs of a row from global memory
//   (for `filters` filters of a group: conv2d_cuda_grouped.cu).
// nhwc: thread (n, p, q-run, channel vector) computes `pixels` neighbouring outputs
//   along q for `vector` neighbouring channels (depthwise with one filter per channel:
//   vector loads and stores along the contiguous channels); the taps it shares with its
//   neighbours come from L1.
#include <algorithm>
#include <cstdint>

#include "core/element.h"
#include "core/gpu/fast_divmod.h"
#include "core/gpu/visit.h"
#include "ops/conv2d/conv2d_cuda.h"
#include "ops/conv2d/conv2d_cuda_depthwise_common.cuh"
#include "ops/conv2d/conv2d_math.h"

namespace opsched::conv2d::gpu_kernels {
namespace {

using namespace depthwise;  // NOLINT: the shared kernel helpers

// The problem's sizes as a kernel instantiation runs them, in 32-bit ints (FitsIndexing):
// KS > 0, a KS x KS filter at stride ST and dilation 1, known at compile time; KS == 0,
// the problem's filter, strides and dilations.
template <int KS, int ST>
struct Dims {
  int sh, sw, dh, dw, r, s;  // strides, dilations, filter
  int h, w;                  // input height and width
  int cg, kg;                // channels and filters per group
  __device__ explicit Dims(const Problem& p)
      : sh(KS > 0 ? ST : static_cast<int>(p.stride_h)),
        sw(KS > 0 ? ST : static_cast<int>(p.stride_w)),
        dh(KS > 0 ? 1 : static_cast<int>(p.dil_h)),
        dw(KS > 0 ? 1 : static_cast<int>(p.dil_w)),
        r(KS > 0 ? KS : static_cast<int>(p.r)),
        s(KS > 0 ? KS : static_cast<int>(p.s)),
        h(static_cast<int>(p.h)),
        w(static_cast<int>(p.w)),
        cg(static_cast<int>(p.c / p.groups)),
        kg(static_cast<int>(p.k / p.groups)) {}
};

// ---- nchw -----------------------------------------------------------------------------

struct NchwGeometry {
  int tiles_q;     // tiles along q per plane
  int in_h, in_w;  // the staged input window of a tile
};

// Block: columns x 8 threads; thread (tx, ty) computes the kRows / 8 neighbouring rows
// from ty * kRows / 8 of column tx. KS > 0: a KS x KS filter at stride ST, dilation 1,
// unrolled, each window column read once into registers for all the thread's rows;
// KS == 0: any filter, stride and dilation.
template <typename T, int kRows, int KS, int ST>
__global__ void __launch_bounds__(kDepthwiseMaxBlock) DepthwiseNchwKernel(Problem p, NchwGeometry g) {
  using S = typename T::Storage;
  extern __shared__ float window[];
  const S* __restrict__ x = static_cast<const S*>(p.x);
  const S* __restrict__ w = static_cast<const S*>(p.wt);
  // 32-bit index arithmetic throughout (FitsIndexing).
  const int columns = blockDim.x / 8;
  const int tx = threadIdx.x % columns, ty = threadIdx.x / columns;
  const int K = static_cast<int>(p.k);
  const int n = static_cast<int>(blockIdx.x) / K, k = static_cast<int>(blockIdx.x) - n * K;
  const int p0 = static_cast<int>(blockIdx.y / g.tiles_q) * kRows;
  const int q0 = static_cast<int>(blockIdx.y % g.tiles_q) * columns;
  const auto [sh, sw, dh, dw, R, S_, H, W, cg, kg] = Dims<KS, ST>(p);
  const int ih0 = p0 * sh - static_cast<int>(p.pad_h), iw0 = q0 * sw - static_cast<int>(p.pad_w);
  const int group = k / kg;
  constexpr int kPer = kRows / 8;
  const int row0 = ty * kPer;  // the thread's first row in the tile
  float acc[kPer];
#pragma unroll
  for (int j = 0; j < kPer; ++j) acc[j] = 0.0f;
  for (int c1 = 0; c1 < cg; ++c1) {
    const int c = group * cg + c1;
    const S* __restrict__ plane = x + int64_t(n) * p.x_strides[0] + int64_t(c) * p.x_strides[1];
    __syncthreads();  // the previous channel's window is no longer read
    // Rows of the window by the block's 8 thread rows, columns by its thread columns.
    for (int wy = ty; wy < g.in_h; wy += 8) {
      const int ih = ih0 + wy;
      float* out_row = window + wy * g.in_w;
      if (ih < 0 || ih >= H) {
        for (int wx = tx; wx < g.in_w; wx += columns) out_row[wx] = 0.0f;
        continue;
      }
      const S* __restrict__ in_row = plane + int64_t(ih) * p.x_strides[2];
      for (int wx = tx; wx < g.in_w; wx += columns) {
        const int iw = iw0 + wx;
        out_row[wx] = (iw >= 0 && iw < W) ? T::Load(in_row[int64_t(iw) * p.x_strides[3]]) : 0.0f;
      }
    }
    __syncthreads();
    const S* __restrict__ wk = w + int64_t(k) * p.w_strides[0] + int64_t(c1) * p.w_strides[1];
    if constexpr (KS > 0) {
      float wr[KS * KS];
#pragma unroll
      for (int r = 0; r < KS; ++r) {
#pragma unroll
        for (int s2 = 0; s2 < KS; ++s2) wr[r * KS + s2] = T::Load(wk[r * p.w_strides[2] + s2 * p.w_strides[3]]);
      }
      constexpr int kSpan = (kPer - 1) * ST + KS;
      const float* base = window + row0 * ST * g.in_w + tx * ST;
#pragma unroll
      for (int s2 = 0; s2 < KS; ++s2) {
        float col[kSpan];
#pragma unroll
        for (int i = 0; i < kSpan; ++i) col[i] = base[i * g.in_w + s2];
#pragma unroll
        for (int j = 0; j < kPer; ++j) {
#pragma unroll
          for (int r = 0; r < KS; ++r) acc[j] = fmaf(col[j * ST + r], wr[r * KS + s2], acc[j]);
        }
      }
    } else {
      for (int r = 0; r < R; ++r) {
        for (int s2 = 0; s2 < S_; ++s2) {
          const float wv = T::Load(wk[r * p.w_strides[2] + s2 * p.w_strides[3]]);
          const float* at = window + (row0 * sh + r * dh) * g.in_w + tx * sw + s2 * dw;
#pragma unroll
          for (int j = 0; j < kPer; ++j) acc[j] = fmaf(at[j * sh * g.in_w], wv, acc[j]);
        }
      }
    }
  }
  typename T::Storage* __restrict__ y = static_cast<typename T::Storage*>(p.y);
  const int q = q0 + tx;
  if (q >= p.q) return;
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    const int row = p0 + row0 + j;
    if (row < p.p) {
      y[int64_t(n) * p.y_strides[0] + int64_t(k) * p.y_strides[1] + int64_t(row) * p.y_strides[2] +
        int64_t(q) * p.y_strides[3]] = T::Store(Epilogue<T>(p, k, acc[j]));
    }
  }
}

// nchw direct: thread (n * K + k, p, q run) computes kPixels neighbouring outputs along q
// from global memory (the taps its neighbours share come from L1): no staging, no
// barrier, little fixed cost per thread. KS > 0: an unrolled KS x KS filter at stride ST,
// dilation 1, each input of the run's rows loaded once.
template <typename T, int kPixels, int KS, int ST>
__global__ void __launch_bounds__(kDepthwiseMaxBlock) DepthwiseNchwDirectKernel(Problem p, DirectGeometry g) {
  using S = typename T::Storage;
  const uint32_t item = blockIdx.x * blockDim.x + threadIdx.x;
  if (item >= g.items) return;
  uint32_t plane_row, run, plane, oh, n, k;
  g.runs.DivMod(item, &plane_row, &run);
  g.rows.DivMod(plane_row, &plane, &oh);
  g.sets.DivMod(plane, &n, &k);  // one filter a set
  const S* __restrict__ x = static_cast<const S*>(p.x);
  const S* __restrict__ w = static_cast<const S*>(p.wt);
  const auto [sh, sw, dh, dw, R, S_, H, W, cg, kg] = Dims<KS, ST>(p);
  const int q0 = static_cast<int>(run) * kPixels;
  const int iw0 = q0 * sw - static_cast<int>(p.pad_w);
  float acc[1][kPixels];  // one filter (AccumulateRow's F)
#pragma unroll
  for (int j = 0; j < kPixels; ++j) acc[0][j] = 0.0f;
  for (int c1 = 0; c1 < cg; ++c1) {
    const int64_t c = int64_t(static_cast<int>(k) / kg) * cg + c1;
    const S* __restrict__ plane_x = x + int64_t(n) * p.x_strides[0] + c * p.x_strides[1];
    const S* __restrict__ wk = w + int64_t(k) * p.w_strides[0] + int64_t(c1) * p.w_strides[1];
    for (int r = 0; r < R; ++r) {
      const int ih = static_cast<int>(oh) * sh - static_cast<int>(p.pad_h) + r * dh;
      if (ih < 0 || ih >= H) continue;
      const S* __restrict__ xr = plane_x + int64_t(ih) * p.x_strides[2];
      if constexpr (KS > 0) {
        float wv[1][KS];
#pragma unroll
        for (int s2 = 0; s2 < KS; ++s2) wv[0][s2] = T::Load(wk[r * p.w_strides[2] + s2 * p.w_strides[3]]);
        AccumulateRow<T, 1, kPixels, KS, ST>(xr, p.x_strides[3], iw0, W, wv, acc);
      } else {
        for (int s2 = 0; s2 < S_; ++s2) {
          const float wv = T::Load(wk[r * p.w_strides[2] + s2 * p.w_strides[3]]);
#pragma unroll
          for (int j = 0; j < kPixels; ++j) {
            const int iw = iw0 + j * sw + s2 * dw;
            if (iw >= 0 && iw < W) acc[0][j] = fmaf(T::Load(xr[int64_t(iw) * p.x_strides[3]]), wv, acc[0][j]);
          }
        }
      }
    }
  }
  S* __restrict__ y = static_cast<S*>(p.y);
  const int64_t at = int64_t(n) * p.y_strides[0] + int64_t(k) * p.y_strides[1] + int64_t(oh) * p.y_strides[2];
#pragma unroll
  for (int j = 0; j < kPixels; ++j) {
    const int q = q0 + j;
    if (q < p.q) y[at + int64_t(q) * p.y_strides[3]] = T::Store(Epilogue<T>(p, k, acc[0][j]));
  }
}

// ---- nhwc -----------------------------------------------------------------------------

struct NhwcGeometry {
  FastDivmod vectors;  // item -> (rest, channel vector)
  FastDivmod runs;     // rest -> (n * P + p, q run)
  FastDivmod rows;     // n * P + p -> (n, p)
  uint32_t items;
};

// V channels per thread (V > 1: one filter per channel, channels contiguous and aligned),
// kPixels outputs along q. KS > 0 (V > 1 only): a KS x KS filter at stride ST, dilation
// 1, unrolled: each input column of the run is loaded once for every output using it.
template <typename T, int V, int kPixels, int KS, int ST>
__global__ void __launch_bounds__(kDepthwiseMaxBlock) DepthwiseNhwcKernel(Problem p, NhwcGeometry g) {
  using S = typename T::Storage;
  const uint32_t item = blockIdx.x * blockDim.x + threadIdx.x;
  if (item >= g.items) return;
  uint32_t rest, vec, row, run, n, oh;
  g.vectors.DivMod(item, &rest, &vec);
  g.runs.DivMod(rest, &row, &run);
  g.rows.DivMod(row, &n, &oh);
  const S* __restrict__ x = static_cast<const S*>(p.x);
  const S* __restrict__ w = static_cast<const S*>(p.wt);
  const int64_t k0 = int64_t(vec) * V;
  const int q0 = static_cast<int>(run) * kPixels;
  const auto [sh, sw, dh, dw, R, S_, H, W, cg, kg] = Dims<KS, ST>(p);
  float acc[kPixels][V];
#pragma unroll
  for (int j = 0; j < kPixels; ++j) {
#pragma unroll
    for (int v = 0; v < V; ++v) acc[j][v] = 0.0f;
  }
  const S* __restrict__ xn = x + int64_t(n) * p.x_strides[0];
  const int iw0 = q0 * sw - static_cast<int>(p.pad_w);
  for (int r = 0; r < R; ++r) {
    const int ih = static_cast<int>(oh) * sh - static_cast<int>(p.pad_h) + r * dh;
    if (ih < 0 || ih >= H) continue;
    const S* __restrict__ xr = xn + int64_t(ih) * p.x_strides[2];
    if constexpr (KS > 0) {
      float wv[KS][V];
#pragma unroll
      for (int s2 = 0; s2 < KS; ++s2) {
#pragma unroll
        for (int v = 0; v < V; ++v) {
          wv[s2][v] = T::Load(w[(k0 + v) * p.w_strides[0] + r * p.w_strides[2] + s2 * p.w_strides[3]]);
        }
      }
      constexpr int kSpan = (kPixels - 1) * ST + KS;
#pragma unroll
      for (int col = 0; col < kSpan; ++col) {
        const int iw = iw0 + col;
        if (iw < 0 || iw >= W) continue;
        const Pack<S, V> xv = *reinterpret_cast<const Pack<S, V>*>(xr + int64_t(iw) * p.x_strides[3] + k0);
        float xf[V];
#pragma unroll
        for (int v = 0; v < V; ++v) xf[v] = T::Load(xv.v[v]);
#pragma unroll
        for (int j = 0; j < kPixels; ++j) {
          const int s2 = col - j * ST;  // compile-time after unrolling
          if (s2 >= 0 && s2 < KS) {
#pragma unroll
            for (int v = 0; v < V; ++v) acc[j][v] = fmaf(xf[v], wv[s2][v], acc[j][v]);
          }
        }
      }
    } else {
      for (int s2 = 0; s2 < S_; ++s2) {
        if constexpr (V > 1) {
          float wv[V];
#pragma unroll
          for (int v = 0; v < V; ++v) wv[v] = T::Load(w[(k0 + v) * p.w_strides[0] + r * p.w_strides[2] + s2 * p.w_strides[3]]);
#pragma unroll
          for (int j = 0; j < kPixels; ++j) {
            const int iw = iw0 + j * sw + s2 * dw;
            if (iw < 0 || iw >= W) continue;
            const Pack<S, V> xv = *reinterpret_cast<const Pack<S, V>*>(xr + int64_t(iw) * p.x_strides[3] + k0);
#pragma unroll
            for (int v = 0; v < V; ++v) acc[j][v] = fmaf(T::Load(xv.v[v]), wv[v], acc[j][v]);
          }
        } else {
          const int group = static_cast<int>(vec) / kg;  // (V == 1: vec is the filter)
          for (int c1 = 0; c1 < cg; ++c1) {
            const float wv = T::Load(w[k0 * p.w_strides[0] + c1 * p.w_strides[1] + r * p.w_strides[2] + s2 * p.w_strides[3]]);
            const int64_t c = int64_t(group) * cg + c1;
#pragma unroll
            for (int j = 0; j < kPixels; ++j) {
              const int iw = iw0 + j * sw + s2 * dw;
              if (iw < 0 || iw >= W) continue;
              acc[j][0] = fmaf(T::Load(xr[int64_t(iw) * p.x_strides[3] + c * p.x_strides[1]]), wv, acc[j][0]);
            }
          }
        }
      }
    }
  }
  S* __restrict__ y = static_cast<S*>(p.y);
#pragma unroll
  for (int j = 0; j < kPixels; ++j) {
    const int q = q0 + j;
    if (q >= p.q) break;
    const int64_t at = int64_t(n) * p.y_strides[0] + int64_t(oh) * p.y_strides[2] + int64_t(q) * p.y_strides[3];
    if constexpr (V > 1) {
      Pack<S, V> out;
#pragma unroll
      for (int v = 0; v < V; ++v) out.v[v] = T::Store(Epilogue<T>(p, k0 + v, acc[j][v]));
      *reinterpret_cast<Pack<S, V>*>(y + at + k0) = out;
    } else {
      y[at + k0 * p.y_strides[1]] = T::Store(Epilogue<T>(p, k0, acc[j][0]));
    }
  }
}

}  // namespace

NchwWindow DepthwiseNchwWindow(const Problem& p, const DepthwiseConfig& c) {
  NchwWindow win;
  win.h = static_cast<int>((c.rows - 1) * p.stride_h + (p.r - 1) * p.dil_h + 1);
  win.w = static_cast<int>((c.columns - 1) * p.stride_w + (p.s - 1) * p.dil_w + 1);
  return win;
}

bool DepthwiseFits(const Problem& p, const DepthwiseConfig& c) {
  if (p.kind == Kind::kBackward || p.groups < 1 || p.c % p.groups != 0 || p.k % p.groups != 0 ||
      p.c / p.groups > kDepthwiseMaxChannelsPerGroup || !FitsIndexing(p)) {
    return false;
  }
  if (c.filters != 1) return GroupedFits(p, c);
  if (p.layout == Layout::kNchw && c.rows == 0) {  // direct
    if ((c.pixels != 1 && c.pixels != 2 && c.pixels != 4 && c.pixels != 8) || c.block < 32 || c.block > kDepthwiseMaxBlock ||
        c.block % 32 != 0) {
      return false;
    }
    return p.n * p.k * p.p * ((p.q + c.pixels - 1) / c.pixels) <= kMaxExtent;
  }
  if (p.layout == Layout::kNchw) {
    if ((c.rows != 8 && c.rows != 16 && c.rows != 32) || (c.columns != 8 && c.columns != 16 && c.columns != 32)) {
      return false;
    }
    const NchwWindow win = DepthwiseNchwWindow(p, c);
    const int64_t tiles = ((p.p + c.rows - 1) / c.rows) * ((p.q + c.columns - 1) / c.columns);
    return int64_t(win.h) * win.w * sizeof(float) <= kDepthwiseMaxSharedBytes && tiles <= 65535;
  }
  if ((c.vector != 1 && c.vector != 2 && c.vector != 4 && c.vector != 8) ||
      (c.pixels != 1 && c.pixels != 2 && c.pixels != 4 && c.pixels != 8) || c.block < 32 || c.block > kDepthwiseMaxBlock || c.block % 32 != 0) {
    return false;
  }
  if (c.vector > 1) {
    // One filter per channel, channels contiguous in x and y, every pixel's vector aligned.
    if (p.groups != p.c || p.k != p.c || p.c % c.vector != 0 || p.x_strides[1] != 1 || p.y_strides[1] != 1 ||
        (p.x_strides[0] % c.vector) != 0 || (p.x_strides[2] % c.vector) != 0 || (p.x_strides[3] % c.vector) != 0) {
      return false;
    }
  }
  return p.n * p.p * ((p.q + c.pixels - 1) / c.pixels) * (p.k / c.vector) <= kMaxExtent;
}

gpuError_t LaunchDepthwise(const Problem& p, const DepthwiseConfig& c, gpuStream_t stream) {
  if (!DepthwiseFits(p, c)) return gpuErrorInvalidValue;
  if (p.n * p.p * p.q == 0 || p.k == 0) return gpuSuccess;
  if (c.filters != 1) return LaunchGrouped(p, c, stream);
  if (p.layout == Layout::kNchw && c.rows == 0) {
    const DirectGeometry g = MakeDirectGeometry(p, c.pixels, 1);
    const unsigned blocks = static_cast<unsigned>((int64_t(g.items) + c.block - 1) / c.block);
    return VisitType(p, [&]<typename T>() {
      return VisitFilter(p, [&]<int KS, int ST>() {
        return VisitPow2UpTo8(c.pixels, [&]<int kPixels>() {
          DepthwiseNchwDirectKernel<T, kPixels, KS, ST><<<blocks, c.block, 0, stream>>>(p, g);
          return gpuGetLastError();
        });
      });
    });
  }
  if (p.layout == Layout::kNchw) {
    const NchwWindow win = DepthwiseNchwWindow(p, c);
    NchwGeometry g;
    g.tiles_q = static_cast<int>((p.q + c.columns - 1) / c.columns);
    g.in_h = win.h;
    g.in_w = win.w;
    const dim3 grid(static_cast<unsigned>(p.n * p.k), static_cast<unsigned>(g.tiles_q * ((p.p + c.rows - 1) / c.rows)));
    const size_t shared = size_t(win.h) * win.w * sizeof(float);
    return VisitType(p, [&]<typename T>() {
      return VisitFilter(p, [&]<int KS, int ST>() {
        switch (c.rows) {
          case 8:
            DepthwiseNchwKernel<T, 8, KS, ST><<<grid, c.columns * 8, shared, stream>>>(p, g);
            break;
          case 16:
            DepthwiseNchwKernel<T, 16, KS, ST><<<grid, c.columns * 8, shared, stream>>>(p, g);
            break;
          default:
            DepthwiseNchwKernel<T, 32, KS, ST><<<grid, c.columns * 8, shared, stream>>>(p, g);
            break;
        }
        return gpuGetLastError();
      });
    });
  }
  const int64_t vbytes = c.vector * ElementBytes(p.type);
  const bool aligned = Aligned(p.x, vbytes) && Aligned(p.y, vbytes);
  const int vector = aligned ? c.vector : 1;  // misaligned pointers: one channel at a time
  NhwcGeometry g;
  const int64_t runs = (p.q + c.pixels - 1) / c.pixels;
  g.vectors = FastDivmod(static_cast<uint32_t>(p.k / vector));
  g.runs = FastDivmod(static_cast<uint32_t>(runs));
  g.rows = FastDivmod(static_cast<uint32_t>(p.p));
  g.items = static_cast<uint32_t>(p.n * p.p * runs * (p.k / vector));
  const unsigned blocks = static_cast<unsigned>((int64_t(g.items) + c.block - 1) / c.block);
  const bool unrolled = UnrolledFilter(p) > 0 && c.pixels > 1 && vector * ElementBytes(p.type) == 16;
  return VisitType(p, [&]<typename T>() {
    auto launch = [&]<int V>() {
      if constexpr (V * sizeof(typename T::Storage) == 16) {
        if (unrolled) {  // 16-byte channel vectors, an unrolled filter, runs of 2, 4 or 8
          return VisitFilter(p, [&]<int KS, int ST>() {
            return VisitPow2UpTo8(c.pixels, [&]<int kPixels>() {
              if constexpr (KS > 0 && kPixels > 1) {
                DepthwiseNhwcKernel<T, V, kPixels, KS, ST><<<blocks, c.block, 0, stream>>>(p, g);
              }
              return gpuGetLastError();
            });
          });
        }
      }
      return VisitPow2UpTo8(c.pixels, [&]<int kPixels>() {
        DepthwiseNhwcKernel<T, V, kPixels, 0, 0><<<blocks, c.block, 0, stream>>>(p, g);
        return gpuGetLastError();
      });
    };
    return VisitPow2UpTo8(vector, launch);
  });
}

}  // namespace opsched::conv2d::gpu_kernels
