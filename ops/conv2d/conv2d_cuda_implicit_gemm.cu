// Implicit-GEMM forward convolution: per group, Y (M = N*P*Q pixels x K/G filters) =
// A (pixels x C/G*R*S taps, gathered from x on the fly) * B (taps x filters, from w).
//
// A block computes a BM x BN tile of Y, stepping through the taps BK = 8 at a time.
// Tiles of A and B go through registers into shared memory (two buffers: the global
// loads of the next step are in flight while the FMAs of this one run), stored
// k-major ([BK][BM + 4], [BK][BN + 4]; the padding keeps the transposing stores free of
// bank conflicts) so that each thread reads its TM rows and TN columns as float4s.
// Thread (tm, tn) owns rows {chunk * BM/(TM/4) + tm*4 + 0..3} and columns likewise:
// spreading a thread's rows over the tile keeps a warp's float4 reads contiguous.
//
// Layouts differ in which index the threads of a warp follow, so that both the gathers
// from x and the stores to y are coalesced:
//  nchw: taps ordered (c, r, s); loading threads follow pixels (consecutive q are
//        consecutive x addresses); compute threads follow rows, so the epilogue stores
//        four consecutive pixels of one filter as a float4.
//  nhwc: taps ordered (r, s, c'); loading threads follow taps (consecutive c are
//        consecutive addresses); compute threads follow columns, storing four
//        consecutive filters of a pixel as a float4.
#include <cstdint>

#include "core/gpu/fast_divmod.h"
#include "ops/conv2d/conv2d_cuda.h"
#include "ops/conv2d/conv2d_math.h"

namespace opsched::conv2d::gpu_kernels {
namespace {

inline constexpr int BK = 8;
inline constexpr int kPad = 4;

struct Geometry {
  FastDivmod pq;     // pixel -> (n, p*Q + q)
  FastDivmod q;      // p*Q + q -> (p, q)
  FastDivmod rs;     // nchw tap -> (c, r*S + s)
  FastDivmod cg;     // nhwc tap -> (r*S + s, c')
  FastDivmod s;      // r*S + s -> (r, s)
  uint32_t pixels;   // M
  int kg;            // filters per group
  int cg_count;      // channels per group
  int taps;          // C/G*R*S
  int n_tiles;       // ceil(K/G / BN)
  bool w_flat;       // a filter's taps are contiguous in the tap order: offset k*ws0 + tap
  bool vector_store; // the epilogue may store float4s (see VectorStoreOk)
};

// (c, r, s) of tap `t` in the layout's tap order.
template <bool kNhwc>
__device__ __forceinline__ void SplitTap(const Geometry& g, uint32_t t, uint32_t* c, uint32_t* r, uint32_t* s) {
  uint32_t rs;
  if constexpr (kNhwc) {
    g.cg.DivMod(t, &rs, c);
  } else {
    g.rs.DivMod(t, c, &rs);
  }
  g.s.DivMod(rs, r, s);
}

// Where one output pixel's receptive field starts.
struct PixelOrigin {
  int64_t base;  // x offset of (n, first channel of the group, 0, 0)
  int h0, w0;
  bool valid;
};

__device__ __forceinline__ PixelOrigin OriginOf(const Problem& p, const Geometry& g, uint32_t m, int group) {
  PixelOrigin o{0, 0, 0, m < g.pixels};
  if (!o.valid) return o;
  uint32_t n, pq, op, oq;
  g.pq.DivMod(m, &n, &pq);
  g.q.DivMod(pq, &op, &oq);
  o.base = int64_t(n) * p.x_strides[0] + int64_t(group) * g.cg_count * p.x_strides[1];
  o.h0 = static_cast<int>(op * p.stride_h - p.pad_h);
  o.w0 = static_cast<int>(oq * p.stride_w - p.pad_w);
  return o;
}

__device__ __forceinline__ float LoadX(const Problem& p, const float* __restrict__ x, const PixelOrigin& o,
                                       uint32_t c, uint32_t r, uint32_t s) {
  const int h = o.h0 + static_cast<int>(r * p.dil_h);
  const int w = o.w0 + static_cast<int>(s * p.dil_w);
  if (!o.valid || h < 0 || h >= p.h || w < 0 || w >= p.w) return 0.0f;
  return x[o.base + int64_t(c) * p.x_strides[1] + int64_t(h) * p.x_strides[2] + int64_t(w) * p.x_strides[3]];
}

template <int BM, int BN, int TM, int TN, bool kNhwc>
struct Tile {
  static constexpr int kThreads = (BM / TM) * (BN / TN);
  static constexpr int kAPer = BM * BK / kThreads;  // A elements each thread loads per step
  static constexpr int kBPer = BN * BK / kThreads;
  static_assert(TM % 4 == 0 && TN % 4 == 0, "threads own float4 runs of rows and columns");
  static_assert(kThreads % BM == 0 && kThreads % BK == 0, "load mappings cover the tile evenly");
  static_assert(kAPer >= 1 && kBPer >= 1 && (kThreads / BK) * kBPer == BN, "B load mapping");

  // Row of register i of thread row `tm` (and column likewise).
  static __device__ __forceinline__ int Row(int tm, int i) { return (i / 4) * (BM / (TM / 4)) + tm * 4 + (i % 4); }
  static __device__ __forceinline__ int Col(int tn, int j) { return (j / 4) * (BN / (TN / 4)) + tn * 4 + (j % 4); }
};

template <int BM, int BN, int TM, int TN, bool kNhwc>
__global__ void __launch_bounds__((BM / TM) * (BN / TN)) ImplicitGemmKernel(Problem p, Geometry g) {
  using T = Tile<BM, BN, TM, TN, kNhwc>;
  __shared__ __align__(16) float As[2][BK][BM + kPad];
  __shared__ __align__(16) float Bs[2][BK][BN + kPad];

  const float* __restrict__ x = static_cast<const float*>(p.x);
  const float* __restrict__ w = static_cast<const float*>(p.wt);
  const int tid = threadIdx.x;
  const int group = static_cast<int>(blockIdx.y) / g.n_tiles;
  const int n_block = (static_cast<int>(blockIdx.y) - group * g.n_tiles) * BN;
  const uint32_t m_block = blockIdx.x * BM;
  const int64_t k_base = int64_t(group) * g.kg;  // first filter of the group

  // ---- Load mappings -------------------------------------------------------------------
  // A: nchw threads follow pixels (one pixel, kAPer taps each); nhwc threads follow taps
  // (one tap, kAPer pixels each).
  constexpr int kAStep = kNhwc ? T::kThreads / BK : T::kThreads / BM;
  const int a_fixed = kNhwc ? tid % BK : tid % BM;  // the tap (nhwc) or pixel (nchw)
  const int a_first = kNhwc ? tid / BK : tid / BM;
  PixelOrigin origin[kNhwc ? T::kAPer : 1];
#pragma unroll
  for (int i = 0; i < (kNhwc ? T::kAPer : 1); ++i) {
    origin[i] = OriginOf(p, g, m_block + (kNhwc ? a_first + i * kAStep : a_fixed), group);
  }
  // B: threads follow taps; each loads kBPer filters.
  constexpr int kBStep = T::kThreads / BK;
  const int b_tap = tid % BK;
  const int b_first = tid / BK;
  int64_t w_row[T::kBPer];  // offset of each loaded filter, or -1 past the group's end
#pragma unroll
  for (int j = 0; j < T::kBPer; ++j) {
    const int n = n_block + b_first + j * kBStep;
    w_row[j] = n < g.kg ? (k_base + n) * p.w_strides[0] : -1;
  }

  float a_reg[T::kAPer];
  float b_reg[T::kBPer];
  auto load_global = [&](int t0) {
    if constexpr (kNhwc) {
      const uint32_t t = t0 + a_fixed;
      uint32_t c = 0, r = 0, s = 0;
      if (t < uint32_t(g.taps)) SplitTap<true>(g, t, &c, &r, &s);
#pragma unroll
      for (int i = 0; i < T::kAPer; ++i) a_reg[i] = t < uint32_t(g.taps) ? LoadX(p, x, origin[i], c, r, s) : 0.0f;
    } else {
#pragma unroll
      for (int i = 0; i < T::kAPer; ++i) {
        const uint32_t t = t0 + a_first + i * kAStep;
        a_reg[i] = 0.0f;
        if (t < uint32_t(g.taps)) {
          uint32_t c, r, s;
          SplitTap<false>(g, t, &c, &r, &s);
          a_reg[i] = LoadX(p, x, origin[0], c, r, s);
        }
      }
    }
    const uint32_t t = t0 + b_tap;
    int64_t tap_offset = t;
    if (!g.w_flat && t < uint32_t(g.taps)) {
      uint32_t c, r, s;
      SplitTap<kNhwc>(g, t, &c, &r, &s);
      tap_offset = int64_t(c) * p.w_strides[1] + int64_t(r) * p.w_strides[2] + int64_t(s) * p.w_strides[3];
    }
#pragma unroll
    for (int j = 0; j < T::kBPer; ++j) {
      b_reg[j] = (t < uint32_t(g.taps) && w_row[j] >= 0) ? w[w_row[j] + tap_offset] : 0.0f;
    }
  };
  auto store_shared = [&](int buf) {
#pragma unroll
    for (int i = 0; i < T::kAPer; ++i) {
      if constexpr (kNhwc) {
        As[buf][a_fixed][a_first + i * kAStep] = a_reg[i];
      } else {
        As[buf][a_first + i * kAStep][a_fixed] = a_reg[i];
      }
    }
#pragma unroll
    for (int j = 0; j < T::kBPer; ++j) Bs[buf][b_tap][b_first + j * kBStep] = b_reg[j];
  };

  // ---- Compute mapping -------------------------------------------------------------------
  constexpr int kRowThreads = BM / TM;
  constexpr int kColThreads = BN / TN;
  const int tm = kNhwc ? tid / kColThreads : tid % kRowThreads;
  const int tn = kNhwc ? tid % kColThreads : tid / kRowThreads;

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i) {
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
  }

  const int steps = (g.taps + BK - 1) / BK;
  load_global(0);
  store_shared(0);
  __syncthreads();
  for (int step = 0; step < steps; ++step) {
    const int buf = step & 1;
    const bool more = step + 1 < steps;
    if (more) load_global((step + 1) * BK);
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; i += 4) {
        const float4 v = *reinterpret_cast<const float4*>(&As[buf][kk][T::Row(tm, i)]);
        a[i] = v.x, a[i + 1] = v.y, a[i + 2] = v.z, a[i + 3] = v.w;
      }
#pragma unroll
      for (int j = 0; j < TN; j += 4) {
        const float4 v = *reinterpret_cast<const float4*>(&Bs[buf][kk][T::Col(tn, j)]);
        b[j] = v.x, b[j + 1] = v.y, b[j + 2] = v.z, b[j + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
      }
    }
    if (more) store_shared(buf ^ 1);
    __syncthreads();
  }

  // ---- Epilogue: bias, activation, stores ---------------------------------------------------
  float* __restrict__ y = static_cast<float*>(p.y);
  const bool fused = p.kind == Kind::kBiasActivation;
  const float* __restrict__ bias = static_cast<const float*>(p.b);
  float bias_v[TN];
#pragma unroll
  for (int j = 0; j < TN; ++j) {
    const int n = n_block + T::Col(tn, j);
    bias_v[j] = fused && n < g.kg ? bias[(k_base + n) * p.b_stride] : 0.0f;
  }
#pragma unroll
  for (int i = 0; i < TM; i += 4) {
    int64_t row_offset[4];
    bool row_valid[4];
#pragma unroll
    for (int ii = 0; ii < 4; ++ii) {
      const uint32_t m = m_block + T::Row(tm, i + ii);
      row_valid[ii] = m < g.pixels;
      row_offset[ii] = 0;
      if (row_valid[ii]) {
        uint32_t n, pq, op, oq;
        g.pq.DivMod(m, &n, &pq);
        g.q.DivMod(pq, &op, &oq);
        row_offset[ii] = int64_t(n) * p.y_strides[0] + int64_t(op) * p.y_strides[2] + int64_t(oq) * p.y_strides[3];
      }
    }
#pragma unroll
    for (int j = 0; j < TN; j += 4) {
      const int n0 = n_block + T::Col(tn, j);
      float v[4][4];
#pragma unroll
      for (int ii = 0; ii < 4; ++ii) {
#pragma unroll
        for (int jj = 0; jj < 4; ++jj) {
          const float t = acc[i + ii][j + jj];
          v[ii][jj] = fused ? Activate(p.act, t + bias_v[j + jj]) : t;
        }
      }
      if constexpr (kNhwc) {
        // Four consecutive filters of each pixel.
#pragma unroll
        for (int ii = 0; ii < 4; ++ii) {
          if (!row_valid[ii]) continue;
          const int64_t base = row_offset[ii] + (k_base + n0) * p.y_strides[1];
          if (g.vector_store && n0 + 3 < g.kg) {
            *reinterpret_cast<float4*>(y + base) = make_float4(v[ii][0], v[ii][1], v[ii][2], v[ii][3]);
          } else {
#pragma unroll
            for (int jj = 0; jj < 4; ++jj) {
              if (n0 + jj < g.kg) y[base + jj * p.y_strides[1]] = v[ii][jj];
            }
          }
        }
      } else {
        // Four consecutive pixels of each filter.
        const bool vector = g.vector_store && row_valid[3] && row_offset[3] == row_offset[0] + 3;
#pragma unroll
        for (int jj = 0; jj < 4; ++jj) {
          const int n = n0 + jj;
          if (n >= g.kg) continue;
          const int64_t k_offset = (k_base + n) * p.y_strides[1];
          if (vector) {
            *reinterpret_cast<float4*>(y + row_offset[0] + k_offset) =
                make_float4(v[0][jj], v[1][jj], v[2][jj], v[3][jj]);
          } else {
#pragma unroll
            for (int ii = 0; ii < 4; ++ii) {
              if (row_valid[ii]) y[row_offset[ii] + k_offset] = v[ii][jj];
            }
          }
        }
      }
    }
  }
}

// Whether float4 stores of four neighbours along the store direction (pixels for nchw,
// filters for nhwc) are aligned wherever they are contiguous: y 16-byte aligned and
// every stride that moves between such runs a multiple of 4.
bool VectorStoreOk(const Problem& p) {
  if ((reinterpret_cast<uintptr_t>(p.y) & 15) != 0) return false;
  const int64_t* ys = p.y_strides;
  if (p.layout == Layout::kNchw) {
    // Runs start at pixels m = 4i; contiguous when ys3 = 1 and ys2 = Q (checked per run).
    return ys[3] == 1 && ys[2] == p.q && (p.p * p.q) % 4 == 0 && ys[0] % 4 == 0 && ys[1] % 4 == 0;
  }
  return ys[1] == 1 && (p.k / p.groups) % 4 == 0 && ys[0] % 4 == 0 && ys[2] % 4 == 0 && ys[3] % 4 == 0;
}

bool WeightsFlat(const Problem& p) {
  const int64_t* ws = p.w_strides;
  const int64_t cg = p.c / p.groups;
  if (p.layout == Layout::kNchw) return ws[3] == 1 && ws[2] == p.s && ws[1] == p.r * p.s;
  return ws[1] == 1 && ws[3] == cg && ws[2] == p.s * cg;
}

template <int BM, int BN, int TM, int TN>
gpuError_t LaunchTile(const Problem& p, const Geometry& g, gpuStream_t stream) {
  const dim3 grid((g.pixels + BM - 1) / BM, static_cast<unsigned>(p.groups) * g.n_tiles);
  constexpr int kThreads = (BM / TM) * (BN / TN);
  if (p.layout == Layout::kNhwc) {
    ImplicitGemmKernel<BM, BN, TM, TN, true><<<grid, kThreads, 0, stream>>>(p, g);
  } else {
    ImplicitGemmKernel<BM, BN, TM, TN, false><<<grid, kThreads, 0, stream>>>(p, g);
  }
  return gpuGetLastError();
}

}  // namespace

bool ImplicitGemmTileExists(int bm, int bn) {
  return (bm == 64 && (bn == 32 || bn == 64)) || (bm == 128 && (bn == 64 || bn == 128));
}

gpuError_t LaunchImplicitGemm(const Problem& p, const ImplicitGemmConfig& c, gpuStream_t stream) {
  if (p.type != ElementType::kF32 || p.kind == Kind::kBackward || !ImplicitGemmTileExists(c.bm, c.bn) ||
      p.groups < 1 || p.k % p.groups != 0 || p.c % p.groups != 0 || !FitsIndexing(p)) {
    return gpuErrorInvalidValue;
  }
  const int64_t pixels = p.n * p.p * p.q;
  if (pixels == 0 || p.k == 0) return gpuSuccess;
  Geometry g;
  g.pq = FastDivmod(static_cast<uint32_t>(p.p * p.q));
  g.q = FastDivmod(static_cast<uint32_t>(p.q));
  g.rs = FastDivmod(static_cast<uint32_t>(p.r * p.s));
  g.cg = FastDivmod(static_cast<uint32_t>(p.c / p.groups));
  g.s = FastDivmod(static_cast<uint32_t>(p.s));
  g.pixels = static_cast<uint32_t>(pixels);
  g.kg = static_cast<int>(p.k / p.groups);
  g.cg_count = static_cast<int>(p.c / p.groups);
  g.taps = static_cast<int>(p.reduction_length());
  g.n_tiles = (g.kg + c.bn - 1) / c.bn;
  g.w_flat = WeightsFlat(p);
  g.vector_store = VectorStoreOk(p);
  if (int64_t(p.groups) * g.n_tiles > 65535) return gpuErrorInvalidValue;
  if (c.bm == 64) {
    return c.bn == 32 ? LaunchTile<64, 32, 4, 4>(p, g, stream) : LaunchTile<64, 64, 4, 4>(p, g, stream);
  }
  return c.bn == 64 ? LaunchTile<128, 64, 8, 4>(p, g, stream) : LaunchTile<128, 128, 8, 8>(p, g, stream);
}

}  // namespace opsched::conv2d::gpu_kernels
