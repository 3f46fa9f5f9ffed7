// Staged depthwise convolution, nchw (conv2d_cuda.h, LaunchDepthwiseStaged): one filter
// per channel (groups = C = K), a square 3x3, 5x5 or 7x7 filter at stride 1 or 2,
// dilation 1; f32, f16 and bf16 in and out, f32 accumulation, bias and activation fused.
//
// A block takes a tile of output rows of one plane, or several whole planes of a small
// image (7x7, 14x14: too few outputs to fill a block). The input rows the tile reads are
// one contiguous run of x (and the runs of consecutive planes follow each other), so the
// block stages them in shared memory with 16-byte loads, coalesced whatever the width,
// into windows zeroed first, whose rows are padded on both sides: padding reads as
// zeros and no tap is bounds-checked. Where a row is a whole number of 16-byte vectors
// (W a multiple of 4 f32 or 8 f16/bf16 elements, x 16-byte aligned), a row starts
// 16-byte aligned in its window and a thread places each vector it loaded with 16-byte
// shared stores, one index division a vector (the vector staging); elsewhere it places
// element by element. Each thread then computes a strip of
// `rows_per_thread` outputs down one column (or `columns_per_thread` = 2 neighbouring
// columns: a row of window values read once serves both, and the two outputs of a row
// are stored as one vector where aligned) from shared memory, the filter in registers,
// and stores them; neighbouring threads take neighbouring columns, so the stores are
// coalesced too. x is read from DRAM once (the halo rows of neighbouring tiles from L2).
// A batch small enough to leave the grid short of kStagedMinBlocks blocks gets one plane
// per block.
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

struct StagedGeometry {
  int tile_rows;         // output rows of a tile (P when a block takes whole planes)
  int tiles;             // tiles per plane
  int planes_per_block;  // whole planes per block (1 when tiles > 1)
  int window_rows;       // input rows staged per plane, padding rows included
  int pitch;             // floats per staged row: left padding, the row, right padding
  int lead;              // floats before a staged row's first element: pad_w, or pad_w
                         // rounded up to 16 bytes with the vector staging
  bool vector_staging;   // rows placed a 16-byte vector at a time (above)
  uint32_t planes;       // N * C
  FastDivmod channels;   // plane -> (n, c)
  FastDivmod plane_size; // flat index within the staged run -> (plane, element); H * W
  FastDivmod width;      // element of a plane -> (row, column); W
  FastDivmod strips;     // strip of a block of whole planes -> (plane, strip); ceil(P / RPT) * ceil(Q / CPT)
  FastDivmod columns;    // strip of a plane -> (row group, column pair); ceil(Q / CPT)
  FastDivmod row_vectors;  // vector staging: vector of the staged run -> (row, vector); W / vector
  FastDivmod height;       // vector staging, whole planes: row of the run -> (plane, row); H
};

// Elements of a 16-byte vector of x.
inline int VectorElements(const Problem& p) { return p.type == ElementType::kF32 ? 4 : 8; }

// Whether a block places x's rows a 16-byte vector at a time: every row is whole vectors,
// so each run a block stages (whole rows, whole planes) starts 16-byte aligned. Not at
// stride 2 where a warp's one-column strips come from two row groups (Q < 32): its taps
// touch even banks only, and rows a multiple of 4 floats long put both groups on the same
// ones (an f16 5x5 layer with 28 output columns took 13% longer on the H100). (Strips of
// two columns span two row groups below 64 columns; no layer measured there was faster
// with two columns at stride 2, so the bound stays the one measured.)
inline bool VectorStagingFits(const Problem& p) {
  return p.w % VectorElements(p) == 0 && Aligned(p.x, 16) && (p.stride_w == 1 || p.q >= 32);
}

// The input rows a tile of `rows` output rows (rounded up to whole strips) reads.
int WindowRows(int rows, int rows_per_thread, int ks, int st) {
  const int rounded = (rows + rows_per_thread - 1) / rows_per_thread * rows_per_thread;
  return (rounded - 1) * st + ks;
}

// A block stages whole planes several at a time only while the grid keeps at least this
// many blocks (a batch-1 layer of 7x7 planes would otherwise run on fewer blocks than an
// H100 has multiprocessors).
constexpr int64_t kStagedMinBlocks = 1024;

// One 16-byte shared store at `at` (16-byte aligned). Written out: the compiler splits a
// float4 assignment to a computed address into four 4-byte stores, and those conflict on
// the banks (a thread's elements are a vector apart from its neighbours').
__device__ __forceinline__ void StoreShared4(float* at, float a, float b, float c, float d) {
#if defined(OPSCHED_HIP)
  *reinterpret_cast<float4*>(at) = float4{a, b, c, d};
#else
  const auto address = static_cast<uint32_t>(__cvta_generic_to_shared(at));
  asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};" ::"r"(address), "f"(a), "f"(b), "f"(c), "f"(d) : "memory");
#endif
}

// Calls place(v, pack) for vector v of `packs` (v < vectors), this thread's share of the
// block's: kInFlight loads a thread before it places any. A large window's load is
// latency-bound (a block computes nothing until it is staged), so each thread keeps
// several in flight.
template <int kInFlight, typename Pk, typename Place>
__device__ __forceinline__ void ForEachVector(const Pk* __restrict__ packs, int vectors, Place&& place) {
  for (int v0 = threadIdx.x; v0 < vectors; v0 += blockDim.x * kInFlight) {
    Pk pack[kInFlight];
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      const int v = v0 + u * static_cast<int>(blockDim.x);
      if (v < vectors) pack[u] = packs[v];
    }
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      const int v = v0 + u * static_cast<int>(blockDim.x);
      if (v >= vectors) break;
      place(v, pack[u]);
    }
  }
}

// kInFlight: the 16-byte loads a thread issues before it places any (below). kVector:
// the vector staging (g.vector_staging). CPT: columns a strip (1 or 2).
template <typename T, int KS, int ST, int RPT, int CPT, int kInFlight, bool kVector>
__global__ void __launch_bounds__(kDepthwiseMaxBlock) DepthwiseStagedKernel(const Problem p, const StagedGeometry g) {
  using S = typename T::Storage;
  extern __shared__ float4 smem_vectors[];  // 16-byte aligned
  float* const smem = reinterpret_cast<float*>(smem_vectors);
  const S* __restrict__ x = static_cast<const S*>(p.x);
  const S* __restrict__ wt = static_cast<const S*>(p.wt);
  const int W = static_cast<int>(p.w), H = static_cast<int>(p.h);
  const int P = static_cast<int>(p.p), Q = static_cast<int>(p.q);
  const int pad_w = static_cast<int>(p.pad_w);
  const int window = g.window_rows * g.pitch;  // floats of one plane's window
  float* weights = smem + g.planes_per_block * window;

  const uint32_t tile = blockIdx.x % static_cast<uint32_t>(g.tiles);
  const uint32_t plane0 = blockIdx.x / static_cast<uint32_t>(g.tiles) * g.planes_per_block;
  const int planes = g.planes - plane0 < uint32_t(g.planes_per_block) ? int(g.planes - plane0) : g.planes_per_block;
  const int r0 = static_cast<int>(tile) * g.tile_rows;
  const int rows = P - r0 < g.tile_rows ? P - r0 : g.tile_rows;
  const int ih0 = r0 * ST - static_cast<int>(p.pad_h);  // the window's first input row
  const int lo = ih0 > 0 ? ih0 : 0;
  const int hi = ih0 + g.window_rows < H ? ih0 + g.window_rows : H;
  const int inside = hi > lo ? hi - lo : 0;  // window rows inside the image
  const int top = lo - ih0;                  // padding rows above them

  // Zero the windows (the padding rows and columns stay zero), 16 bytes at a time.
  const int zeros = planes * window;
  for (int e = threadIdx.x; e < zeros / 4; e += blockDim.x) reinterpret_cast<float4*>(smem)[e] = float4{0, 0, 0, 0};
  for (int e = zeros / 4 * 4 + static_cast<int>(threadIdx.x); e < zeros; e += blockDim.x) smem[e] = 0.0f;
  __syncthreads();
  // Stage the rows inside the image: `planes` runs of `valid` elements, contiguous in x
  // (several planes only when each window holds the whole plane, so the runs abut).
  // Element e of the run goes to its plane's window at (top + row, lead + column).
  const int valid = inside * W;
  const int total = planes * valid;
  const S* __restrict__ src = x + int64_t(plane0) * H * W + int64_t(lo) * W;
  float* const dst0 = smem + top * g.pitch + g.lead;
  constexpr int kV = 16 / sizeof(S);
  if constexpr (kVector) {
    // Vector v of the run: row v / (W / kV) (of plane row / H where a block holds whole
    // planes: their windows hold every row, so inside == H), elements (v % (W / kV)) * kV on.
    const Pack<S, kV>* __restrict__ packs = reinterpret_cast<const Pack<S, kV>*>(src);
    ForEachVector<kInFlight>(packs, total / kV, [&](int v, const Pack<S, kV>& pack) {
      uint32_t line, vector, j = 0, row;
      g.row_vectors.DivMod(static_cast<uint32_t>(v), &line, &vector);
      row = line;
      if (g.planes_per_block > 1) g.height.DivMod(line, &j, &row);
      float* const d = dst0 + int(j) * window + int(row) * g.pitch + int(vector) * kV;
#pragma unroll
      for (int k = 0; k < kV / 4; ++k) {
        StoreShared4(d + 4 * k, T::Load(pack.v[4 * k]), T::Load(pack.v[4 * k + 1]), T::Load(pack.v[4 * k + 2]),
                     T::Load(pack.v[4 * k + 3]));
      }
    });
  } else {
    struct Place {
      uint32_t j, row, col;
    };
    auto place = [&](int e) {
      Place at;
      uint32_t i;
      g.plane_size.DivMod(static_cast<uint32_t>(e), &at.j, &i);
      g.width.DivMod(i, &at.row, &at.col);
      return at;
    };
    auto put = [&](const Place& at, float v) { dst0[int(at.j) * window + int(at.row) * g.pitch + int(at.col)] = v; };
    const uintptr_t address = reinterpret_cast<uintptr_t>(src);
    int head = address % sizeof(S) == 0 ? int((16 - address % 16) % 16 / sizeof(S)) : total;
    if (head > total) head = total;
    const int vectors = (total - head) / kV;
    for (int e = threadIdx.x; e < head; e += blockDim.x) put(place(e), T::Load(src[e]));
    ForEachVector<kInFlight>(
        reinterpret_cast<const Pack<S, kV>*>(src + head), vectors, [&](int v, const Pack<S, kV>& pack) {
          Place at = place(head + v * kV);  // then step along the row, the rows, the planes
#pragma unroll
          for (int k = 0; k < kV; ++k) {
            put(at, T::Load(pack.v[k]));
            if (++at.col == uint32_t(W)) {
              at.col = 0;
              if (++at.row == uint32_t(inside)) {
                at.row = 0;
                ++at.j;
              }
            }
          }
        });
    for (int e = head + vectors * kV + static_cast<int>(threadIdx.x); e < total; e += blockDim.x) {
      put(place(e), T::Load(src[e]));
    }
  }
  // The planes' filters.
  for (int e = threadIdx.x; e < planes * KS * KS; e += blockDim.x) {
    const int j = e / (KS * KS), t = e - j * KS * KS;
    uint32_t n, c;
    g.channels.DivMod(plane0 + j, &n, &c);
    weights[e] = T::Load(wt[int64_t(c) * p.w_strides[0] + (t / KS) * p.w_strides[2] + (t % KS) * p.w_strides[3]]);
  }
  __syncthreads();

  // Strips of RPT outputs down CPT columns; thread s takes strip s, s + blockDim, ... The
  // padding is in the window (and a last odd column's neighbour reads zeros), so no tap
  // is bounds-checked.
  const int groups = (rows + RPT - 1) / RPT;  // strips per column
  const int per_plane = groups * static_cast<int>(g.columns.divisor);
  S* __restrict__ y = static_cast<S*>(p.y);
  uint32_t loaded = ~0u;
  float wv[KS * KS];
  for (int s = threadIdx.x; s < planes * per_plane; s += blockDim.x) {
    uint32_t j = 0, rem = static_cast<uint32_t>(s), group, pair;
    if (g.planes_per_block > 1) g.strips.DivMod(static_cast<uint32_t>(s), &j, &rem);
    g.columns.DivMod(rem, &group, &pair);
    const int q = static_cast<int>(pair) * CPT;
    if (j != loaded) {
#pragma unroll
      for (int t = 0; t < KS * KS; ++t) wv[t] = weights[int(j) * KS * KS + t];
      loaded = j;
    }
    const float* win = smem + int(j) * window + int(group) * RPT * ST * g.pitch + q * ST + (g.lead - pad_w);
    constexpr int kSpan = (CPT - 1) * ST + KS;  // window columns a row of the strip reads
    float acc[RPT][CPT];
#pragma unroll
    for (int i = 0; i < RPT; ++i) {
#pragma unroll
      for (int cc = 0; cc < CPT; ++cc) acc[i][cc] = 0.0f;
    }
    // Each window value read once, straight into the outputs whose taps it is: with one
    // column, exactly the code before strips of two (a version that loaded a row first
    // and stored through the two-column path ran a batch-1 7x7 5x5 layer 18% slower on
    // the H100).
#pragma unroll
    for (int dr = 0; dr < (RPT - 1) * ST + KS; ++dr) {
#pragma unroll
      for (int s2 = 0; s2 < kSpan; ++s2) {
        const float v = win[dr * g.pitch + s2];
#pragma unroll
        for (int i = 0; i < RPT; ++i) {
          const int r = dr - i * ST;  // compile-time after unrolling
#pragma unroll
          for (int cc = 0; cc < CPT; ++cc) {
            const int t = s2 - cc * ST;
            if (r >= 0 && r < KS && t >= 0 && t < KS) acc[i][cc] = fmaf(v, wv[r * KS + t], acc[i][cc]);
          }
        }
      }
    }
    uint32_t n, c;
    g.channels.DivMod(plane0 + j, &n, &c);
    const int64_t at = int64_t(n) * p.y_strides[0] + int64_t(c) * p.y_strides[1] + int64_t(q) * p.y_strides[3];
    if constexpr (CPT == 1) {
#pragma unroll
      for (int i = 0; i < RPT; ++i) {
        const int r = group * RPT + i;
        if (r < rows) y[at + int64_t(r0 + r) * p.y_strides[2]] = T::Store(Epilogue<T>(p, c, acc[i][0]));
      }
    } else {
      // The two columns as one vector where they are neighbours in memory and aligned as one.
      const bool second = q + 1 < Q;
      const bool pair_store = second && p.y_strides[3] == 1;
#pragma unroll
      for (int i = 0; i < RPT; ++i) {
        const int r = group * RPT + i;
        if (r >= rows) continue;
        S* const out = y + at + int64_t(r0 + r) * p.y_strides[2];
        const S a0 = T::Store(Epilogue<T>(p, c, acc[i][0]));
        const S a1 = T::Store(Epilogue<T>(p, c, acc[i][1]));
        if (pair_store && reinterpret_cast<uintptr_t>(out) % (2 * sizeof(S)) == 0) {
          *reinterpret_cast<Pack<S, 2>*>(out) = Pack<S, 2>{{a0, a1}};
        } else {
          out[0] = a0;
          if (second) out[p.y_strides[3]] = a1;
        }
      }
    }
  }
}

// The launch of `c` for `p`: its geometry and shared bytes; tiles 0 when it does not fit.
struct StagedLaunch {
  StagedGeometry g{};
  size_t shared = 0;
  unsigned blocks = 0;
};

// The launch with the vector staging's layout (`vector`) or the element one.
StagedLaunch PlanLayout(const Problem& p, const DepthwiseStagedConfig& c, bool vector) {
  StagedLaunch l;
  const int ks = static_cast<int>(p.r), st = static_cast<int>(p.stride_h);
  const int P = static_cast<int>(p.p);
  // A staged row: the left padding, the row, and what the last output's taps reach beyond;
  // with the vector staging, rows start and end 16 bytes aligned.
  // (With 2 columns a strip and Q odd, the last strip's second column too.)
  const auto align = [vector](int64_t floats) { return vector ? (floats + 3) / 4 * 4 : floats; };
  const int64_t column_pairs = (p.q + c.columns_per_thread - 1) / c.columns_per_thread;
  const int64_t reach = (column_pairs * c.columns_per_thread - 1) * st + ks;  // columns the strips read
  l.g.lead = static_cast<int>(align(p.pad_w));
  l.g.pitch = static_cast<int>(align(std::max<int64_t>(l.g.lead + p.w, l.g.lead - p.pad_w + reach)));
  l.g.vector_staging = vector;
  const auto bytes = [&](int planes, int window_rows) {
    return (size_t(planes) * window_rows * l.g.pitch + size_t(planes) * ks * ks) * sizeof(float);
  };
  const int64_t planes = p.n * p.c;
  if (c.rows >= P) {  // whole planes, as many as `rows` output rows hold
    l.g.tile_rows = P;
    l.g.tiles = 1;
    l.g.window_rows = WindowRows(P, c.rows_per_thread, ks, st);
    // Several planes only where each window holds all of its plane's rows (the runs abut).
    const bool whole = l.g.window_rows - p.pad_h >= p.h;
    l.g.planes_per_block = whole ? c.rows / P : 1;
    l.g.planes_per_block = static_cast<int>(
        std::min<int64_t>(l.g.planes_per_block, std::max<int64_t>(1, planes / kStagedMinBlocks)));
    while (l.g.planes_per_block > 1 && bytes(l.g.planes_per_block, l.g.window_rows) > kDepthwiseMaxSharedBytes) {
      --l.g.planes_per_block;
    }
  } else {
    l.g.tile_rows = c.rows;
    l.g.tiles = (P + c.rows - 1) / c.rows;
    l.g.window_rows = WindowRows(c.rows, c.rows_per_thread, ks, st);
    l.g.planes_per_block = 1;
  }
  l.shared = bytes(l.g.planes_per_block, l.g.window_rows);
  if (l.shared > kDepthwiseMaxSharedBytes) {
    l.g.tiles = 0;
    return l;
  }
  l.g.planes = static_cast<uint32_t>(planes);
  const auto divisor = [](int64_t d) { return FastDivmod(static_cast<uint32_t>(std::max<int64_t>(d, 1))); };
  l.g.channels = divisor(p.c);
  l.g.plane_size = divisor(p.h * p.w);
  l.g.width = divisor(p.w);
  l.g.columns = divisor(column_pairs);
  l.g.strips = divisor((l.g.tile_rows + c.rows_per_thread - 1) / c.rows_per_thread * column_pairs);
  l.g.row_vectors = divisor(p.w / VectorElements(p));
  l.g.height = divisor(p.h);
  const int64_t blocks = (int64_t(l.g.planes) + l.g.planes_per_block - 1) / l.g.planes_per_block * l.g.tiles;
  if (blocks > kMaxExtent) {
    l.g.tiles = 0;
    return l;
  }
  l.blocks = static_cast<unsigned>(blocks);
  return l;
}

// The vector staging where x allows it and its wider rows cost no planes of a block;
// else the element layout, which decides whether `c` fits at all.
StagedLaunch Plan(const Problem& p, const DepthwiseStagedConfig& c) {
  const StagedLaunch element = PlanLayout(p, c, false);
  if (element.g.tiles == 0 || !VectorStagingFits(p)) return element;
  const StagedLaunch vector = PlanLayout(p, c, true);
  if (vector.g.tiles == 0 || vector.g.planes_per_block < element.g.planes_per_block) return element;
  return vector;
}

// DepthwiseStagedFits but the shared-memory and grid limits, which Plan checks.
bool ShapeAndConfigFit(const Problem& p, const DepthwiseStagedConfig& c) {
  if (p.kind == Kind::kBackward || p.layout != Layout::kNchw || p.groups != p.c || p.k != p.c || !FitsIndexing(p)) {
    return false;
  }
  if (UnrolledFilter(p) == 0 || p.pad_h < 0 || p.pad_w < 0) return false;
  // x contiguous: the rows a tile reads are one run, and consecutive planes follow.
  const int64_t* s = p.x_strides;
  if (s[3] != 1 || s[2] != p.w || s[1] != p.h * p.w || (p.n > 1 && s[0] != p.c * p.h * p.w)) return false;
  if ((c.rows != 4 && c.rows != 8 && c.rows != 16 && c.rows != 32 && c.rows != 64) ||
      (c.rows_per_thread != 1 && c.rows_per_thread != 2 && c.rows_per_thread != 4) || c.rows % c.rows_per_thread != 0 ||
      (c.columns_per_thread != 1 && c.columns_per_thread != 2) ||
      c.block < 64 || c.block > kDepthwiseMaxBlock || c.block % 32 != 0) {
    return false;
  }
  return true;
}

}  // namespace

bool DepthwiseStagedFits(const Problem& p, const DepthwiseStagedConfig& c) {
  return ShapeAndConfigFit(p, c) && (p.n * p.c == 0 || Plan(p, c).g.tiles > 0);
}

LaunchShape DepthwiseStagedLaunch(const Problem& p, const DepthwiseStagedConfig& c) {
  if (!ShapeAndConfigFit(p, c) || p.n * p.c * p.p * p.q == 0) return {};
  const StagedLaunch l = Plan(p, c);
  if (l.g.tiles == 0) return {};
  // Output rows the tiles cover, and planes the blocks cover, against those that exist;
  // and threads with a strip of their own (a thread computes rows_per_thread rows of a column).
  const int64_t plane_slots = int64_t(l.blocks) / l.g.tiles * l.g.planes_per_block;
  const int64_t strips_per_column = (l.g.tile_rows + c.rows_per_thread - 1) / c.rows_per_thread;
  const int64_t column_pairs = l.g.columns.divisor;
  const int64_t strips = int64_t(l.g.planes_per_block) * strips_per_column * column_pairs;
  const double useful = double(p.p) / (double(l.g.tiles) * l.g.tile_rows) * double(l.g.planes) / double(plane_slots) *
                        double(p.q) / double(column_pairs * c.columns_per_thread) *
                        std::min(1.0, double(strips) / c.block);
  return LaunchShape{.blocks = l.blocks, .threads = c.block, .shared_bytes = l.shared, .useful = useful};
}

gpuError_t LaunchDepthwiseStaged(const Problem& p, const DepthwiseStagedConfig& c, gpuStream_t stream) {
  if (!ShapeAndConfigFit(p, c)) return gpuErrorInvalidValue;
  if (p.n * p.c == 0) return gpuSuccess;  // no planes: nothing to write
  const StagedLaunch l = Plan(p, c);  // planned once a call
  if (l.g.tiles == 0) return gpuErrorInvalidValue;
  if (p.p * p.q == 0) return gpuSuccess;
  return VisitType(p, [&]<typename T>() {
    // Four loads in flight a thread where a block stages a tile of one plane of at least
    // four 16-byte vectors a thread (MobileNetV2's stride-2 112x112 layer: 32.5 -> 28.7 us
    // on the H100); one elsewhere (small windows lost 2-20% to the deeper loop, and a
    // block of four whole 28x28 planes 4.5%).
    const int64_t staged_bytes = int64_t(l.g.window_rows) * p.w * int64_t(sizeof(typename T::Storage));
    const bool deep = l.g.planes_per_block == 1 && staged_bytes >= int64_t(16) * 4 * c.block;
    return VisitFilter(p, [&]<int KS, int ST>() {
      if constexpr (KS > 0) {
        const auto launch = [&]<int RPT, int CPT>() {
          const bool vector = l.g.vector_staging;
          if (deep && vector) {
            DepthwiseStagedKernel<T, KS, ST, RPT, CPT, 4, true><<<l.blocks, c.block, l.shared, stream>>>(p, l.g);
          } else if (deep) {
            DepthwiseStagedKernel<T, KS, ST, RPT, CPT, 4, false><<<l.blocks, c.block, l.shared, stream>>>(p, l.g);
          } else if (vector) {
            DepthwiseStagedKernel<T, KS, ST, RPT, CPT, 1, true><<<l.blocks, c.block, l.shared, stream>>>(p, l.g);
          } else {
            DepthwiseStagedKernel<T, KS, ST, RPT, CPT, 1, false><<<l.blocks, c.block, l.shared, stream>>>(p, l.g);
          }
        };
        const auto columns = [&]<int RPT>() {
          if (c.columns_per_thread == 2) {
            launch.template operator()<RPT, 2>();
          } else {
            launch.template operator()<RPT, 1>();
          }
        };
        switch (c.rows_per_thread) {
          case 4:
            columns.template operator()<4>();
            break;
          case 2:
            columns.template operator()<2>();
            break;
          default:
            columns.template operator()<1>();
            break;
        }
        return gpuGetLastError();
      }
      return gpuErrorInvalidValue;  // DepthwiseStagedFits: an unrolled filter
    });
  });
}

}  // namespace opsched::conv2d::gpu_kernels
