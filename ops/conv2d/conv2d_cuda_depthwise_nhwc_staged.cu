// Staged depthwise convolution, nhwc (conv2d_cuda.h, LaunchDepthwiseNhwcStaged): one
// filter per channel (groups = C = K), a square 3x3, 5x5 or 7x7 filter at stride 1 or 2,
// dilation 1; f32, f16 and bf16 in and out, f32 accumulation, bias and activation fused.
//
// A block takes a tile of `rows` x `columns` output pixels of one image for `channels`
// (32 or 16) neighbouring channels. It stages the tile's input window (the
// pixels its taps reach, padding as zeros) for those channels in shared memory in x's
// element type, [window row][window column][channel], and the channels' filters beside it
// as float. Where x allows 16-byte copies along the contiguous channels they are
// asynchronous (cp.async, zero-filled for padding, all in flight at once: the staging
// waits for DRAM once, not once per element a thread copies). Lane l of every group of
// `channels` threads then owns channel l of the block: its filter sits in registers, and
// each thread computes strips of `rows_per_thread` x 2 outputs (rows x columns) of the
// tile, each window element it reads used for every output of the strip that needs it.
// With 32 channels a warp's lanes read 32 neighbouring elements of shared memory at each
// tap (no bank conflict) and store 32 neighbouring channels of one pixel; with 16, the
// two halves of a warp take neighbouring strips (2 pixels apart: other banks for 16-bit
// elements), and the window is half as wide, so that 32 x 32 tiles of 5x5 and 7x7 filters
// fit (less halo an output: on the H100 a ConvNeXt-T bf16 7x7 layer 39.5 -> 34.4 us). x is
// read from DRAM about once (the halo of neighbouring tiles from L2), y written once.
//
// 16-bit 3x3 layers of an even channel count (kPair = 2): a lane owns two neighbouring
// channels, read from shared memory as one 32-bit word and stored as one (y's channels
// contiguous), so that the loads, conversions and stores an output costs are
// halved (Nsight Compute on the H200: the bf16 MobileNetV2 layer of dtypes.txt line 37
// kept the multiprocessors 69% busy issuing and DRAM 25%: instruction-bound).
// (A warp's lanes then read the pixels of neighbouring strips, two columns apart, 128 or
// 64 bytes: a two-way bank conflict on those reads; a wavefront carries as many bytes as
// the one-channel reads did.)
#include <algorithm>
#include <cstdint>

#include "core/element.h"
#include "core/gpu/fast_divmod.h"
#include "ops/conv2d/conv2d_cuda.h"
#include "ops/conv2d/conv2d_cuda_depthwise_common.cuh"
#include "ops/conv2d/conv2d_math.h"

namespace opsched::conv2d::gpu_kernels {
namespace {

using namespace depthwise;  // NOLINT: the shared kernel helpers

constexpr int kCPT = 2;  // output columns of a thread's strip

// 16 bytes from global to shared memory without passing through registers, or zeros
// (src unread) when !valid; CopyWait waits for a thread's copies. Plain loads and stores
// where cp.async is missing (before sm_80, HIP).
__device__ __forceinline__ void Copy16(void* dst, const void* src, bool valid) {
#if defined(OPSCHED_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned to = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(to), "l"(src), "r"(valid ? 16 : 0));
#else
  *static_cast<uint4*>(dst) = valid ? *static_cast<const uint4*>(src) : uint4{0, 0, 0, 0};
#endif
}
__device__ __forceinline__ void CopyWait() {
#if defined(OPSCHED_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;\n" ::);
#endif
}

struct NhwcStagedGeometry {
  int tiles_q, tiles_p, channel_blocks;  // blockIdx.x -> (n, tile row, tile column, channel block)
  int tile_rows, tile_columns;           // output pixels of a tile
  int window_rows, window_columns;       // its staged input window
  bool vectors;                          // x's channels are staged 16 bytes at a time
  // Division by channel_blocks, tiles_q, tiles_p and window_columns (Plan).
  FastDivmod channel_blocks_div, tiles_q_div, tiles_p_div, window_columns_div;
};

int WindowExtent(int outputs, int ks, int st) { return (outputs - 1) * st + ks; }

// The window in x's element type (a multiple of 16 bytes), then the filters as float.
size_t SharedBytes(const NhwcStagedGeometry& g, int ks, int64_t element_bytes, int channels) {
  return (size_t(g.window_rows) * g.window_columns * element_bytes + size_t(ks) * ks * sizeof(float)) * channels;
}

int64_t TilesOf(const Problem& p, const NhwcStagedGeometry& g) {
  return p.n * g.tiles_p * g.tiles_q * g.channel_blocks;
}

// A tile of the grid: image n, output rows from p0, columns from q0, channels from c0.
struct Tile {
  int n, p0, q0, c0;
};

__device__ __forceinline__ Tile TileAt(const NhwcStagedGeometry& g, uint32_t b, int kC) {
  uint32_t q, r;
  Tile t;
  g.channel_blocks_div.DivMod(b, &q, &r);
  t.c0 = static_cast<int>(r) * kC;
  g.tiles_q_div.DivMod(q, &q, &r);
  t.q0 = static_cast<int>(r) * g.tile_columns;
  g.tiles_p_div.DivMod(q, &q, &r);
  t.p0 = static_cast<int>(r) * g.tile_rows;
  t.n = static_cast<int>(q);
  return t;
}

// Stages tile t's input window: element (pixel, channel) at staged[pixel * kC + channel],
// zero where the pixel is padding or the channel is past C. With g.vectors the copies
// are asynchronous (CopyWait waits for them).
template <typename S, int ST, int kC>
__device__ __forceinline__ void StageWindow(const Problem& p, const NhwcStagedGeometry& g, const Tile& t, S* staged) {
  const S* __restrict__ x = static_cast<const S*>(p.x);
  const int C = static_cast<int>(p.c), H = static_cast<int>(p.h), W = static_cast<int>(p.w);
  const int window = g.window_rows * g.window_columns;  // pixels of the window
  const int ih0 = t.p0 * ST - static_cast<int>(p.pad_h), iw0 = t.q0 * ST - static_cast<int>(p.pad_w);
  const S* __restrict__ xn = x + int64_t(t.n) * p.x_strides[0];
  if (g.vectors) {  // channels contiguous, C and x's strides multiples of kV, x aligned
    // A thread copies the same kV channels (blockDim is a multiple of kC) of every
    // pixels_per_pass-th pixel: its window row and column are stepped, not divided out
    // again (a division and the bounds of four coordinates took 62 instructions a copy,
    // a quarter of the kernel's, on the H200).
    constexpr int kV = 16 / sizeof(S);
    constexpr int kPerPixel = kC / kV;
    const int c = (static_cast<int>(threadIdx.x) % kPerPixel) * kV;
    const int pixels_per_pass = static_cast<int>(blockDim.x) / kPerPixel;
    uint32_t row, column;
    g.window_columns_div.DivMod(threadIdx.x / kPerPixel, &row, &column);
    int wr = static_cast<int>(row), wc = static_cast<int>(column);
    g.window_columns_div.DivMod(static_cast<uint32_t>(pixels_per_pass), &row, &column);
    const int step_r = static_cast<int>(row), step_c = static_cast<int>(column);
    const bool channel_valid = t.c0 + c < C;
    const S* __restrict__ xc = xn + (t.c0 + c);
    const int64_t xs2 = p.x_strides[2], xs3 = p.x_strides[3];
    S* dst = staged + (static_cast<int>(threadIdx.x) / kPerPixel) * kC + c;
    for (int pixel = static_cast<int>(threadIdx.x) / kPerPixel; pixel < window;
         pixel += pixels_per_pass, dst += pixels_per_pass * kC) {
      const int ih = ih0 + wr, iw = iw0 + wc;
      const bool valid = channel_valid && static_cast<unsigned>(ih) < static_cast<unsigned>(H) &&
                         static_cast<unsigned>(iw) < static_cast<unsigned>(W);
      Copy16(dst, valid ? xc + ih * xs2 + iw * xs3 : x, valid);
      wr += step_r;
      wc += step_c;
      if (wc >= g.window_columns) {
        wc -= g.window_columns;
        ++wr;
      }
    }
  } else {
    for (int e = threadIdx.x; e < window * kC; e += blockDim.x) {
      const int pixel = e / kC, c = e - pixel * kC;
      const int wr = pixel / g.window_columns, wc = pixel - wr * g.window_columns;
      const int ih = ih0 + wr, iw = iw0 + wc;
      staged[e] = ih >= 0 && ih < H && iw >= 0 && iw < W && t.c0 + c < C
                      ? xn[int64_t(ih) * p.x_strides[2] + int64_t(iw) * p.x_strides[3] + int64_t(t.c0 + c) * p.x_strides[1]]
                      : S(0);  // +0.0 in every element type
    }
  }
}

// kPair neighbouring channels from shared memory (a 16-bit pair as one 32-bit word).
template <typename T, int kPair>
__device__ __forceinline__ void LoadChannels(const typename T::Storage* at, float (&v)[kPair]) {
  if constexpr (kPair == 1) {
    v[0] = T::Load(*at);
  } else {
    static_assert(sizeof(typename T::Storage) == 2, "pairs of 16-bit channels");
    const uint32_t word = *reinterpret_cast<const uint32_t*>(at);
    v[0] = T::Load(static_cast<uint16_t>(word & 0xffffu));
    v[1] = T::Load(static_cast<uint16_t>(word >> 16));
  }
}

// kPair neighbouring channels' outputs into y at `out` (a pair: one 32-bit store; Paired
// checks that y's pairs are aligned words).
template <typename T, int kPair>
__device__ __forceinline__ void StoreChannels(typename T::Storage* out, const float (&a)[kPair]) {
  if constexpr (kPair == 1) {
    *out = T::Store(a[0]);
  } else {
    *reinterpret_cast<uint32_t*>(out) = uint32_t(T::Store(a[0])) | (uint32_t(T::Store(a[1])) << 16);
  }
}

// Computes and stores tile t's outputs of the kPair channels from c (the caller's lane
// times kPair) from its staged window, with the channels' filters `wv` and biases.
template <typename T, int KS, int ST, int RPT, int kC, int kPair>
__device__ __forceinline__ void ComputeTile(const Problem& p, const NhwcStagedGeometry& g, const Tile& t,
                                            const typename T::Storage* staged, const float (&wv)[kPair][KS * KS],
                                            const float (&bias)[kPair], int lane, int worker, int workers) {
  using S = typename T::Storage;
  const int P = static_cast<int>(p.p), Q = static_cast<int>(p.q);
  const int c = t.c0 + lane * kPair;
  // Strips of RPT rows x kCPT columns of outputs; thread `worker` takes strips worker,
  // worker + workers, ... stepping (group, strip column) without dividing.
  const int rows = min(g.tile_rows, P - t.p0), columns = min(g.tile_columns, Q - t.q0);
  const int strip_columns = (columns + kCPT - 1) / kCPT;
  const int groups = (rows + RPT - 1) / RPT;
  int group = worker / strip_columns, sc = worker - group * strip_columns;
  const int64_t ys2 = p.y_strides[2], ys3 = p.y_strides[3];
  S* const y_c = static_cast<S*>(p.y) + int64_t(t.n) * p.y_strides[0] + int64_t(c) * p.y_strides[1];
  const bool fused = p.kind == Kind::kBiasActivation;
  constexpr int kSpanR = (RPT - 1) * ST + KS, kSpanC = (kCPT - 1) * ST + KS;
  while (group < groups) {
    const S* win = staged + ((group * RPT * ST) * g.window_columns + sc * kCPT * ST) * kC + lane * kPair;
    float acc[RPT][kCPT][kPair];
#pragma unroll
    for (int i = 0; i < RPT; ++i) {
#pragma unroll
      for (int j = 0; j < kCPT; ++j) {
#pragma unroll
        for (int h = 0; h < kPair; ++h) acc[i][j][h] = 0.0f;
      }
    }
#pragma unroll
    for (int dr = 0; dr < kSpanR; ++dr) {
      float v[kSpanC][kPair];
#pragma unroll
      for (int tap = 0; tap < kSpanC; ++tap) LoadChannels<T, kPair>(win + (dr * g.window_columns + tap) * kC, v[tap]);
#pragma unroll
      for (int i = 0; i < RPT; ++i) {
        const int r = dr - i * ST;  // compile-time after unrolling
        if (r < 0 || r >= KS) continue;
#pragma unroll
        for (int j = 0; j < kCPT; ++j) {
#pragma unroll
          for (int s2 = 0; s2 < KS; ++s2) {
#pragma unroll
            for (int h = 0; h < kPair; ++h) acc[i][j][h] = fmaf(v[j * ST + s2][h], wv[h][r * KS + s2], acc[i][j][h]);
          }
        }
      }
    }
    // The epilogue once per strip (a uniform branch), then the stores: unchecked for a
    // whole strip, pointers stepped by the strides.
    if (fused) {
#pragma unroll
      for (int i = 0; i < RPT; ++i) {
#pragma unroll
        for (int j = 0; j < kCPT; ++j) {
#pragma unroll
          for (int h = 0; h < kPair; ++h) acc[i][j][h] = Activate(p.act, acc[i][j][h] + bias[h]);
        }
      }
    }
    const int r0 = group * RPT, q = sc * kCPT;
    S* row = y_c + int64_t(t.p0 + r0) * ys2 + int64_t(t.q0 + q) * ys3;
    if (r0 + RPT <= rows && q + kCPT <= columns) {
#pragma unroll
      for (int i = 0; i < RPT; ++i, row += ys2) {
        S* out = row;
#pragma unroll
        for (int j = 0; j < kCPT; ++j, out += ys3) StoreChannels<T, kPair>(out, acc[i][j]);
      }
    } else {
#pragma unroll
      for (int i = 0; i < RPT; ++i, row += ys2) {
        S* out = row;
#pragma unroll
        for (int j = 0; j < kCPT; ++j, out += ys3) {
          if (r0 + i < rows && q + j < columns) StoreChannels<T, kPair>(out, acc[i][j]);
        }
      }
    }
    for (sc += workers; sc >= strip_columns; sc -= strip_columns) ++group;
  }
}

// One tile a block: stage the window and the filters, then compute.
template <typename T, int KS, int ST, int RPT, int kC, int kPair>
__global__ void __launch_bounds__(kDepthwiseMaxBlock) DepthwiseNhwcStagedKernel(const Problem p, const NhwcStagedGeometry g) {
  using S = typename T::Storage;
  extern __shared__ __align__(16) unsigned char shared[];
  const int window = g.window_rows * g.window_columns;  // pixels of the window
  S* const staged = reinterpret_cast<S*>(shared);
  float* const weights = reinterpret_cast<float*>(staged + window * kC);
  const S* __restrict__ wt = static_cast<const S*>(p.wt);
  const int C = static_cast<int>(p.c);
  const Tile t = TileAt(g, blockIdx.x, kC);
  StageWindow<S, ST, kC>(p, g, t, staged);
  // The filters, tap-major: weights[tap * kC + channel].
  for (int e = threadIdx.x; e < KS * KS * kC; e += blockDim.x) {
    const int tap = e / kC, c = t.c0 + (e - tap * kC);
    weights[e] = c < C ? T::Load(wt[int64_t(c) * p.w_strides[0] + (tap / KS) * p.w_strides[2] + (tap % KS) * p.w_strides[3]])
                       : 0.0f;
  }
  CopyWait();
  __syncthreads();

  // kC / kPair lanes a pixel, each with kPair channels (C is even where kPair is 2).
  constexpr int kLanes = kC / kPair;
  const int lane = static_cast<int>(threadIdx.x) % kLanes, worker = static_cast<int>(threadIdx.x) / kLanes;
  const int c = t.c0 + lane * kPair;
  if (c >= C) return;  // (no barrier follows)
  float wv[kPair][KS * KS], bias[kPair];
#pragma unroll
  for (int h = 0; h < kPair; ++h) {
#pragma unroll
    for (int tap = 0; tap < KS * KS; ++tap) wv[h][tap] = weights[tap * kC + lane * kPair + h];
    bias[h] = p.kind == Kind::kBiasActivation ? T::Load(static_cast<const S*>(p.b)[int64_t(c + h) * p.b_stride]) : 0.0f;
  }
  ComputeTile<T, KS, ST, RPT, kC, kPair>(p, g, t, staged, wv, bias, lane, worker, static_cast<int>(blockDim.x) / kLanes);
}

// Two channels a lane: 16-bit elements, a 3x3 filter (a pair's 18 weights in registers;
// 5x5 and 7x7 filters stay one channel a lane), an even channel count, and y's channel
// pairs 4-byte words (contiguous channels, even strides; the launch checks y's alignment).
bool Paired(const Problem& p) {
  const int64_t* ys = p.y_strides;
  return ElementBytes(p.type) == 2 && UnrolledFilter(p) == 3 && p.c % 2 == 0 && ys[1] == 1 && ys[0] % 2 == 0 &&
         ys[2] % 2 == 0 && ys[3] % 2 == 0;
}

// The geometry of `c` for `p`; tiles_p 0 when the config does not fit.
NhwcStagedGeometry Plan(const Problem& p, const DepthwiseStagedConfig& c) {
  NhwcStagedGeometry g{};
  const int ks = static_cast<int>(p.r), st = static_cast<int>(p.stride_h);
  g.tile_rows = static_cast<int>(std::min<int64_t>(c.rows, std::max<int64_t>(p.p, 1)));
  g.tile_columns = static_cast<int>(std::min<int64_t>(c.columns, std::max<int64_t>(p.q, 1)));
  // Whole strips: a tile clipped to the image keeps a multiple of rows_per_thread rows.
  g.tile_rows = (g.tile_rows + c.rows_per_thread - 1) / c.rows_per_thread * c.rows_per_thread;
  g.window_rows = WindowExtent(g.tile_rows, ks, st);
  // Whole strips of kCPT columns: the window reaches the rounded-up columns (zeros past Q).
  g.window_columns = WindowExtent((g.tile_columns + kCPT - 1) / kCPT * kCPT, ks, st);
  g.tiles_p = static_cast<int>((p.p + g.tile_rows - 1) / g.tile_rows);
  g.tiles_q = static_cast<int>((p.q + g.tile_columns - 1) / g.tile_columns);
  g.channel_blocks = static_cast<int>((p.c + c.channels - 1) / c.channels);
  if (SharedBytes(g, ks, ElementBytes(p.type), c.channels) > kDepthwiseMaxSharedBytes || TilesOf(p, g) > kMaxExtent) {
    g.tiles_p = 0;
    return g;
  }
  const auto divider = [](int d) { return FastDivmod(static_cast<uint32_t>(std::max(d, 1))); };
  g.channel_blocks_div = divider(g.channel_blocks);
  g.tiles_q_div = divider(g.tiles_q);
  g.tiles_p_div = divider(g.tiles_p);
  g.window_columns_div = divider(g.window_columns);
  return g;
}

// DepthwiseNhwcStagedFits but the shared-memory and grid limits, which Plan checks.
bool ShapeAndConfigFit(const Problem& p, const DepthwiseStagedConfig& c) {
  if (p.kind == Kind::kBackward || p.layout != Layout::kNhwc || p.groups != p.c || p.k != p.c || !FitsIndexing(p)) {
    return false;
  }
  if (UnrolledFilter(p) == 0 || p.pad_h < 0 || p.pad_w < 0) return false;
  const auto tile = [](int v) { return v >= 4 && v <= 32; };
  const int rpt = c.rows_per_thread;
  if (!tile(c.rows) || !tile(c.columns) || (rpt != 1 && rpt != 2 && rpt != 4 && rpt != 8) || c.rows % rpt != 0 ||
      (c.channels != 16 && c.channels != 32) || c.block < c.channels || c.block > kDepthwiseMaxBlock ||
      c.block % c.channels != 0) {
    return false;
  }
  return true;
}

}  // namespace

bool DepthwiseNhwcStagedFits(const Problem& p, const DepthwiseStagedConfig& c) {
  return ShapeAndConfigFit(p, c) && (p.n * p.p * p.q * p.c == 0 || Plan(p, c).tiles_p > 0);
}

LaunchShape DepthwiseNhwcStagedLaunch(const Problem& p, const DepthwiseStagedConfig& c) {
  if (!ShapeAndConfigFit(p, c) || p.n * p.p * p.q * p.c == 0) return {};
  const NhwcStagedGeometry g = Plan(p, c);
  if (g.tiles_p == 0) return {};
  // Tile rows, tile columns and channel lanes that fall inside the output, and warps
  // with a strip of their own (a lane computes rows_per_thread x kCPT outputs of a channel).
  const int strips = g.tile_rows / c.rows_per_thread * ((g.tile_columns + kCPT - 1) / kCPT);
  const int lanes = Paired(p) ? c.channels / 2 : c.channels;  // lanes a pixel
  const double useful = double(p.p) / (double(g.tiles_p) * g.tile_rows) *
                        double(p.q) / (double(g.tiles_q) * g.tile_columns) *
                        double(p.c) / (double(g.channel_blocks) * c.channels) *
                        std::min(1.0, double(strips) / (c.block / lanes));
  return LaunchShape{.blocks = TilesOf(p, g),
                     .threads = c.block,
                     .shared_bytes = SharedBytes(g, static_cast<int>(p.r), ElementBytes(p.type), c.channels),
                     .useful = useful};
}

gpuError_t LaunchDepthwiseNhwcStaged(const Problem& p, const DepthwiseStagedConfig& c, gpuStream_t stream) {
  if (!ShapeAndConfigFit(p, c)) return gpuErrorInvalidValue;
  if (p.n * p.p * p.q * p.c == 0) return gpuSuccess;
  NhwcStagedGeometry g = Plan(p, c);  // planned once a call
  if (g.tiles_p == 0) return gpuErrorInvalidValue;
  const int64_t kv = 16 / ElementBytes(p.type);
  const int64_t* s = p.x_strides;
  g.vectors = Aligned(p.x, 16) && s[1] == 1 && p.c % kv == 0 && s[0] % kv == 0 && s[2] % kv == 0 && s[3] % kv == 0;
  const bool paired = Paired(p) && Aligned(p.y, 4);
  const unsigned blocks = static_cast<unsigned>(TilesOf(p, g));
  const size_t shared = SharedBytes(g, static_cast<int>(p.r), ElementBytes(p.type), c.channels);
  return VisitType(p, [&]<typename T>() {
    return VisitFilter(p, [&]<int KS, int ST>() {
      if constexpr (KS > 0) {
        const auto launch_rpt = [&]<int RPT, int kC>() {
          if constexpr (KS == 3 && sizeof(typename T::Storage) == 2) {
            if (paired) {
              DepthwiseNhwcStagedKernel<T, KS, ST, RPT, kC, 2><<<blocks, c.block, shared, stream>>>(p, g);
              return;
            }
          }
          DepthwiseNhwcStagedKernel<T, KS, ST, RPT, kC, 1><<<blocks, c.block, shared, stream>>>(p, g);
        };
        const auto launch = [&]<int kC>() {
          switch (c.rows_per_thread) {
            case 8: launch_rpt.template operator()<8, kC>(); break;
            case 4: launch_rpt.template operator()<4, kC>(); break;
            case 2: launch_rpt.template operator()<2, kC>(); break;
            default: launch_rpt.template operator()<1, kC>(); break;
          }
        };
        if (c.channels == 16) {
          launch.template operator()<16>();
        } else {
          launch.template operator()<32>();
        }
        return gpuGetLastError();
      }
      return gpuErrorInvalidValue;  // DepthwiseNhwcStagedFits: an unrolled filter
    });
  });
}

}  // namespace opsched::conv2d::gpu_kernels
