// Slice-local tiles. With contiguous tensors and indices shaped like data outside the
// axis, data is [outer, D, inner] and indices/updates are [outer, I, inner]; a column
// (o, j) is one slice along the axis, and the updates of a column only ever touch that
// column. A block takes T consecutive columns: it loads their D values into shared
// memory, applies their I updates there and writes the columns out once. Every byte is
// read or written once, in full sectors: no read-modify-write of scattered elements in
// device memory.
//
// A tile is either part of one outer slice (inner % T == 0: "case A") or whole outer
// slices (T % inner == 0: "case B"); both keep loads and stores contiguous.
//
// Applying: `ordered` gives each column to one thread, which applies its updates in
// order (deterministic for every reduction); otherwise all threads share the tile's
// updates with shared-memory atomics — for none, (a + 1, value) packed in 64 bits and
// combined with max, so the last update along the axis wins, still deterministically.
// With `kAnyWinner` (none, not deterministic) shared updates are plain 32-bit stores:
// one of the competing updates wins, in half the shared memory.
#include <type_traits>

#include "ops/scatter/scatter_cuda_common.cuh"

namespace opsched::scatter::gpu_kernels {
namespace {

using Key = unsigned long long;

struct SliceGeometry {
  int64_t outer = 0;
  int64_t d = 0;      // data's axis size
  int64_t i = 0;      // indices' axis size
  int64_t inner = 1;
  int columns = 1;    // T
  bool case_a = true;
  FastDivmod by_columns, by_inner, by_d_inner, by_i_inner;
};

bool TileShape(const Params& p, int columns, SliceGeometry* g) {
  if (!p.fast || columns < 1 || p.inner < 1) return false;
  g->d = p.axis_size;
  g->i = p.index_axis;
  g->inner = p.inner;
  g->outer = g->d * g->inner > 0 ? p.data_n / (g->d * g->inner) : 0;
  g->columns = columns;
  g->case_a = p.inner % columns == 0;
  if (!g->case_a && columns % p.inner != 0) return false;
  // 32-bit tile arithmetic.
  const int64_t limit = int64_t(1) << 31;
  if (g->d * columns >= limit || g->i * columns >= limit || g->d * g->inner >= limit || g->i * g->inner >= limit) {
    return false;
  }
  g->by_columns = FastDivmod(static_cast<uint32_t>(columns));
  g->by_inner = FastDivmod(static_cast<uint32_t>(g->inner));
  g->by_d_inner = FastDivmod(static_cast<uint32_t>(std::max<int64_t>(g->d * g->inner, 1)));
  g->by_i_inner = FastDivmod(static_cast<uint32_t>(std::max<int64_t>(g->i * g->inner, 1)));
  return true;
}

// The tile's first column, and (case B) how many whole outer slices it holds.
struct Tile {
  int64_t o;         // case A: the outer slice; case B: the first outer slice
  int64_t j0;        // case A: first inner coordinate
  int64_t slices;    // case B: outer slices in this tile
  uint32_t columns;  // valid columns
};

__device__ __forceinline__ Tile TileOf(const SliceGeometry& g) {
  Tile t;
  const int64_t c0 = int64_t(blockIdx.x) * g.columns;
  if (g.case_a) {
    t.o = c0 / g.inner;
    t.j0 = c0 - t.o * g.inner;
    t.slices = 1;
    t.columns = g.columns;
  } else {
    t.o = c0 / g.inner;
    t.j0 = 0;
    const int64_t whole = g.columns / g.inner;
    t.slices = whole < g.outer - t.o ? whole : g.outer - t.o;
    t.columns = static_cast<uint32_t>(t.slices * g.inner);
  }
  return t;
}

// Visits the tile's elements of a [outer, extent, inner] tensor (extent is D for data,
// I for indices) as (offset in the tensor, row along the axis, local column), with
// consecutive threads on consecutive offsets. Each thread first issues `load` for kUnroll
// elements, then `use`s them in order: several loads in flight per thread keep the
// memory system busy.
inline constexpr int kUnroll = 4;

template <typename Load, typename Use>
__device__ __forceinline__ void ForTile(const SliceGeometry& g, const Tile& t, int64_t extent,
                                        const FastDivmod& by_extent_inner, Load&& load, Use&& use) {
  uint32_t count;
  int64_t base;
  if (g.case_a) {
    count = static_cast<uint32_t>(extent) * g.columns;
    base = t.o * extent * g.inner + t.j0;
  } else {
    count = static_cast<uint32_t>(t.slices * extent * g.inner);
    base = t.o * extent * g.inner;
  }
  auto locate = [&](uint32_t e, int64_t* offset, uint32_t* row, uint32_t* column) {
    if (g.case_a) {
      g.by_columns.DivMod(e, row, column);
      *offset = base + int64_t(*row) * g.inner + *column;
    } else {
      uint32_t slice, rest, j;
      by_extent_inner.DivMod(e, &slice, &rest);
      g.by_inner.DivMod(rest, row, &j);
      *column = slice * static_cast<uint32_t>(g.inner) + j;
      *offset = base + e;
    }
  };
  using V = decltype(load(int64_t{}, uint32_t{}, uint32_t{}));
  const uint32_t step = blockDim.x;
  for (uint32_t e0 = threadIdx.x; e0 < count; e0 += kUnroll * step) {
    V v[kUnroll];
    int64_t offset[kUnroll];
    uint32_t row[kUnroll], column[kUnroll];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const uint32_t e = e0 + k * step;
      if (e < count) {
        locate(e, &offset[k], &row[k], &column[k]);
        v[k] = load(offset[k], row[k], column[k]);
      }
    }
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      if (e0 + k * step < count) use(v[k], offset[k], row[k], column[k]);
    }
  }
}

template <typename I, typename S>
struct Update {
  I index;
  S value;
};

template <typename T, typename I, bool kNone, bool kAnyWinner>
__global__ void __launch_bounds__(1024) SliceKernel(Params p, SliceGeometry g, bool ordered, WorkspaceHeader* header, ErrorSlot slot) {
  using S = typename T::Storage;
  constexpr bool kKeyed = kNone && !kAnyWinner;  // (position, value) keys in 64 bits
  using Cell = std::conditional_t<kKeyed, Key, float>;
  extern __shared__ Key shared_raw[];
  Cell* tile = reinterpret_cast<Cell*>(shared_raw);
  if (p.in_place) {
    const Word bad = header->bad;  // the check kernel ran first
    if (bad != 0) {
      if (blockIdx.x == 0 && threadIdx.x == 0) ReportBad<I>(p, bad, slot);
      return;
    }
  }
  const Tile t = TileOf(g);
  const S* __restrict__ data = static_cast<const S*>(p.data);
  const I* __restrict__ indices = static_cast<const I*>(p.indices);
  const S* __restrict__ updates = static_cast<const S*>(p.updates);
  S* __restrict__ out = static_cast<S*>(p.out);
  const uint32_t T_ = static_cast<uint32_t>(g.columns);
  // 1. Load the columns.
  ForTile(
      g, t, g.d, g.by_d_inner, [&](int64_t offset, uint32_t, uint32_t) { return data[offset]; },
      [&](S raw, int64_t, uint32_t row, uint32_t column) {
        const float v = T::Load(raw);
        if constexpr (kKeyed) {
          tile[row * T_ + column] = __float_as_uint(v);  // position 0: any update wins
        } else {
          tile[row * T_ + column] = v;
        }
      });
  __syncthreads();
  // 2. Apply the updates.
  bool bad = false;
  auto fetch = [&](int64_t offset, uint32_t, uint32_t) { return Update<I, S>{indices[offset], updates[offset]}; };
  auto apply = [&](const Update<I, S>& u, int64_t offset, uint32_t a, uint32_t column, bool atomic) {
    int64_t index;
    if (!Normalise(static_cast<int64_t>(u.index), p.axis_size, &index)) {
      if (!bad && !p.in_place) ReportBadPosition<I>(p, &header->bad, offset, slot);
      bad = true;
      return;
    }
    const float v = T::Load(u.value);
    Cell* cell = &tile[uint32_t(index) * T_ + column];
    if constexpr (kAnyWinner) {
      *cell = v;  // shared or in order: a plain store; with sharing, any update wins
    } else if constexpr (kNone) {
      const Key key = (Key(a + 1) << 32) | __float_as_uint(v);
      if (atomic) {
        atomicMax(cell, key);
      } else {
        *cell = key;  // in order: the later update wins
      }
    } else if (atomic) {
      AtomicCombine(cell, v, p.reduction);
    } else {
      *cell = Combine(p.reduction, *cell, v);
    }
  };
  if (ordered) {
    const uint32_t column = threadIdx.x;
    if (column < t.columns) {
      const int64_t o = g.case_a ? t.o : t.o + column / g.inner;
      const int64_t j = g.case_a ? t.j0 + column : column % g.inner;
      const int64_t base = o * g.i * g.inner + j;
      // Fetch kUnroll updates ahead, apply them in order.
      for (int64_t a0 = 0; a0 < g.i; a0 += kUnroll) {
        Update<I, S> u[kUnroll];
#pragma unroll
        for (int k = 0; k < kUnroll; ++k) {
          if (a0 + k < g.i) u[k] = fetch(base + (a0 + k) * g.inner, 0, 0);
        }
#pragma unroll
        for (int k = 0; k < kUnroll; ++k) {
          const int64_t a = a0 + k;
          if (a < g.i) apply(u[k], base + a * g.inner, static_cast<uint32_t>(a), column, false);
        }
      }
    }
  } else {
    ForTile(g, t, g.i, g.by_i_inner, fetch,
            [&](const Update<I, S>& u, int64_t offset, uint32_t a, uint32_t column) {
              apply(u, offset, a, column, true);
            });
  }
  __syncthreads();
  // 3. Store the columns.
  ForTile(
      g, t, g.d, g.by_d_inner,
      [&](int64_t, uint32_t row, uint32_t column) {
        if constexpr (kKeyed) {
          return __uint_as_float(static_cast<unsigned int>(tile[row * T_ + column]));
        } else {
          return tile[row * T_ + column];
        }
      },
      [&](float v, int64_t offset, uint32_t, uint32_t) { out[offset] = T::Store(v); });
}

}  // namespace

size_t SliceSharedBytes(const Params& p, int columns, bool any_winner) {
  SliceGeometry g;
  if (!TileShape(p, columns, &g)) return 0;
  const bool keyed = p.reduction == Reduction::kNone && !any_winner;
  const size_t bytes = static_cast<size_t>(g.d) * columns * (keyed ? 8 : 4);
  return bytes <= kSliceMaxSharedBytes ? std::max<size_t>(bytes, 8) : 0;
}

gpuError_t LaunchSlice(const Params& p, const SliceConfig& config, void* workspace, ErrorSlot slot,
                       gpuStream_t stream) {
  SliceGeometry g;
  const bool any_winner = config.any_winner && p.reduction == Reduction::kNone;
  const size_t shared = SliceSharedBytes(p, config.columns, any_winner);
  if (shared == 0 || !TileShape(p, config.columns, &g)) return gpuErrorInvalidValue;
  auto* header = static_cast<WorkspaceHeader*>(workspace);
  gpuError_t err = ClearHeader(workspace, stream);
  if (err != gpuSuccess) return err;
  return VisitTypes(p, [&]<typename T, typename I>() {
    if (p.n == 0 || g.outer == 0) return LaunchCopyOf<T>(p, CopyConfig{}, stream);
    if (p.in_place) {
      const gpuError_t e = LaunchCheck<I>(p, MakeGeometry(p), &header->bad, stream);
      if (e != gpuSuccess) return e;
    }
    const int64_t columns_total = g.outer * g.inner;
    const int64_t tiles = g.case_a ? columns_total / g.columns
                                   : (g.outer + g.columns / g.inner - 1) / (g.columns / g.inner);
    const int threads = config.ordered ? g.columns : config.threads;
    auto kernel = any_winner                            ? SliceKernel<T, I, true, true>
                  : p.reduction == Reduction::kNone ? SliceKernel<T, I, true, false>
                                                    : SliceKernel<T, I, false, false>;
    gpuError_t e = AllowSharedMemory(reinterpret_cast<const void*>(kernel), shared);
    if (e != gpuSuccess) return e;
    kernel<<<static_cast<unsigned int>(tiles), threads, shared, stream>>>(p, g, config.ordered, header, slot);
    return gpuGetLastError();
  });
}

}  // namespace opsched::scatter::gpu_kernels
