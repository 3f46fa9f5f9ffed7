// The bucketed scatter's windowed apply (knob `windows`=1; out of place, contiguous
// tensors): out is cut into the buckets' windows, and each window is copied from data
// just before its updates are applied, so the updates find it in L2. Copied first and
// applied after the sort, out goes to device memory and is read back by the updates. At
// the best config of each it took 3-9% off seven bucketed lines on the H100 (2026-11-28);
// at some configs it is slower, hence a knob.
//
// One kernel does both, in tiles handed out by a ticket (an atomic counter, so that a
// block waits only on blocks that took earlier tickets and are running or done: no
// deadlock whatever the scheduler's order). The phases, in ticket order: copy window 0,
// copy window 1, apply bucket 0, copy window 2, apply bucket 1, ..., apply the last. An
// apply tile waits until every copy tile of its window has finished (a counter per
// window, fenced), then combines its pairs into out.
//
// The pairs kernel counts the pairs of each bucket; its last block turns the counts
// into each bucket's first pair and each phase's first tile (the Schedule).
#pragma once

#include <cstdint>

#include "ops/scatter/scatter_cuda_common.cuh"

namespace opsched::scatter::gpu_kernels {

inline constexpr int kMaxWindows = 256;   // 2^bucket_bits at most
inline constexpr int kCopyVectors = 8;    // vectors a thread copies in a tile
inline constexpr int kApplyItems = 8;     // pairs a thread applies in a tile
inline constexpr uint32_t kSkipKey = 0xffffffffu;  // the key of a bad position: never applied

// The windows of out: window w holds storage offsets [w * window, (w + 1) * window).
struct Windows {
  int begin = 0;          // a key's window is key >> begin
  int count = 0;          // windows (buckets) in use
  int64_t window = 0;     // elements a window (2^begin)
  int64_t copy_tile = 0;  // elements a copy tile
  int64_t apply_tile = 0;  // pairs an apply tile
};

// Zeroed with the workspace header before the pairs kernel.
struct Schedule {
  uint32_t counts[kMaxWindows];  // pairs of each bucket
  uint32_t copied[kMaxWindows];  // copy tiles of each window done
  uint32_t pair_start[kMaxWindows + 1];
  uint32_t phase_start[2 * kMaxWindows + 1];
  uint32_t ticket;
};

__host__ __device__ inline int64_t WindowElements(const Windows& w, int64_t data_n, int b) {
  const int64_t first = int64_t(b) * w.window;
  return data_n > first ? (data_n - first < w.window ? data_n - first : w.window) : 0;
}

__host__ __device__ inline int64_t CopyTiles(const Windows& w, int64_t data_n, int b) {
  return (WindowElements(w, data_n, b) + w.copy_tile - 1) / w.copy_tile;
}

// Phase p: copy window 0; odd p: copy window (p + 1) / 2 while there is one; even p > 0:
// apply bucket p / 2 - 1; the last phase applies the last bucket.
struct Phase {
  bool copy;
  int bucket;
};
__device__ inline Phase PhaseOf(const Windows& w, int p) {
  if (p == 0) return {true, 0};
  if (p % 2 == 1) return (p + 1) / 2 < w.count ? Phase{true, (p + 1) / 2} : Phase{false, w.count - 1};
  return {false, p / 2 - 1};
}

// Counts a block's keys per bucket (in shared memory, then once into the schedule).
// Every thread of the block calls it with its keys' buckets already added to `hist`.
__device__ inline void FlushCounts(const Windows& w, const uint32_t* hist, Schedule* s) {
  __syncthreads();
  for (int b = threadIdx.x; b < w.count; b += blockDim.x) {
    if (hist[b] != 0) atomicAdd(&s->counts[b], hist[b]);
  }
}

// Called by every thread of every pairs block after FlushCounts: the last block to finish
// lays out the schedule (thread 0, from shared memory: at most 2 * 256 phases).
__device__ inline void LayOutIfLast(const Windows& w, int64_t data_n, WorkspaceHeader* header, Schedule* s) {
  __shared__ bool last;
  __shared__ uint32_t counts[kMaxWindows];
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();  // this block's counts are visible before it counts itself done
    last = atomicAdd(&header->blocks_done, 1u) == gridDim.x - 1;
    if (last) __threadfence();
  }
  __syncthreads();
  if (!last) return;
  for (int b = threadIdx.x; b < w.count; b += blockDim.x) counts[b] = *static_cast<volatile uint32_t*>(&s->counts[b]);
  __syncthreads();
  if (threadIdx.x != 0) return;
  uint32_t pairs = 0, tiles = 0;
  for (int b = 0; b < w.count; ++b) {
    s->pair_start[b] = pairs;
    pairs += counts[b];
  }
  s->pair_start[w.count] = pairs;
  for (int p = 0; p < 2 * w.count; ++p) {
    s->phase_start[p] = tiles;
    const Phase ph = PhaseOf(w, p);
    tiles += ph.copy ? static_cast<uint32_t>(CopyTiles(w, data_n, ph.bucket))
                     : (counts[ph.bucket] + static_cast<uint32_t>(w.apply_tile) - 1) / static_cast<uint32_t>(w.apply_tile);
  }
  s->phase_start[2 * w.count] = tiles;
}

// Combines pairs [first, end) of the sorted arrays into out, over threads tid, tid +
// stride, ... (both applies: the whole array over the grid, or a tile over its block).
// out and the reduction by value: a reference to the kernel's Params would copy them to
// local memory where this is not inlined.
template <typename T>
__device__ __forceinline__ void ApplyPairs(typename T::Storage* out, Reduction reduction, const uint32_t* keys,
                                           const typename T::Storage* values, int64_t first, int64_t end, int64_t tid,
                                           int64_t stride) {
  for (int64_t i = first + tid; i < end; i += stride) {
    const uint32_t key = keys[i];
    if (key != kSkipKey) AtomicCombineElement<T>(out + key, T::Load(values[i]), reduction);
  }
}

template <typename T, typename I>
__global__ void WindowedApplyKernel(Params p, Windows w, int vector_bytes, const uint32_t* keys,
                                    const typename T::Storage* values, WorkspaceHeader* header, Schedule* s,
                                    ErrorSlot slot) {
  using S = typename T::Storage;
  __shared__ uint32_t ticket;
  __shared__ int phase;
  if (threadIdx.x == 0) {
    ticket = atomicAdd(&s->ticket, 1u);
    int lo = 0, hi = 2 * w.count;  // the phase p with phase_start[p] <= ticket < phase_start[p + 1]
    while (hi - lo > 1) {
      const int mid = (lo + hi) / 2;
      if (s->phase_start[mid] <= ticket) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    phase = ticket < s->phase_start[2 * w.count] ? lo : -1;
  }
  __syncthreads();
  const Word bad = *static_cast<volatile Word*>(&header->bad);
  if (ticket == 0 && threadIdx.x == 0 && bad != 0) ReportBad<I>(p, bad, slot);
  if (phase < 0) return;
  const Phase ph = PhaseOf(w, phase);
  const int64_t tile = ticket - s->phase_start[phase];
  if (ph.copy) {
    const int64_t window_first = int64_t(ph.bucket) * w.window;
    const int64_t first = window_first + tile * w.copy_tile;
    const int64_t end = window_first + WindowElements(w, p.data_n, ph.bucket);
    const auto* data = static_cast<const S*>(p.data);
    const int64_t tile_end = first + w.copy_tile < end ? first + w.copy_tile : end;
    if (vector_bytes == 16) {  // else (unaligned) one element at a time
      CopyRange<16>(data, static_cast<S*>(p.out), first, tile_end, threadIdx.x, blockDim.x);
    } else {
      CopyRange<0>(data, static_cast<S*>(p.out), first, tile_end, threadIdx.x, blockDim.x);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      __threadfence();  // the tile is visible before it is counted
      atomicAdd(&s->copied[ph.bucket], 1u);
    }
    return;
  }
  if (bad != 0) return;  // nothing is applied where an index is bad (out holds data)
  if (threadIdx.x == 0) {
    const uint32_t need = static_cast<uint32_t>(CopyTiles(w, p.data_n, ph.bucket));
    while (*static_cast<volatile uint32_t*>(&s->copied[ph.bucket]) < need) {
#if !defined(OPSCHED_HIP)
      __nanosleep(64);
#endif
    }
    __threadfence();
  }
  __syncthreads();
  const int64_t first = int64_t(s->pair_start[ph.bucket]) + tile * w.apply_tile;
  const int64_t bucket_end = s->pair_start[ph.bucket + 1];
  ApplyPairs<T>(static_cast<S*>(p.out), p.reduction, keys, values, first, first + w.apply_tile < bucket_end ? first + w.apply_tile : bucket_end,
                threadIdx.x, blockDim.x);
}

}  // namespace opsched::scatter::gpu_kernels
