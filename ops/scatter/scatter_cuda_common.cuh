// Device helpers shared by the scatter kernels: locating a position's index, update and
// target; the bad-index word; reporting to the host's error slot; the copy of data into
// out; type dispatch and launch arithmetic.
//
// The bad-index word (first 8 bytes of the workspace, zeroed by the launcher together
// with the block counter that follows it) holds kWordBias - p for the smallest bad
// position p seen (atomicMax keeps the smallest p); 0 means no bad index. A kernel
// writes the host's error slot only when there is an error; an op that finished with
// its slot still pending found none.
#pragma once

#include <algorithm>
#include <climits>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "core/element.h"
#include "core/error_slot.h"
#include "core/gpu/dependent_launch.cuh"
#include "core/gpu/fast_divmod.h"
#include "core/gpu/portability.h"
#include "ops/scatter/scatter_atomics.cuh"
#include "ops/scatter/scatter_cuda.h"
#include "ops/scatter/scatter_params.h"

namespace opsched::scatter::gpu_kernels {

using Word = unsigned long long;
inline constexpr Word kWordBias = Word(1) << 62;

// Records a bad position in the word; true where it is now the smallest recorded.
__device__ __forceinline__ bool RecordBad(Word* word, int64_t position) {
  const Word mine = kWordBias - static_cast<Word>(position);
  return atomicMax(word, mine) < mine;
}
__device__ __forceinline__ int64_t BadPosition(Word word) {
  return static_cast<int64_t>(kWordBias - word);
}

// The workspace prefix: the bad-index word and a count of finished blocks (the windowed
// bucketed scatter's and the privatized scatter's).
struct WorkspaceHeader {
  Word bad;
  unsigned int blocks_done;
};
static_assert(sizeof(WorkspaceHeader) <= kWordBytes, "header fits its reserved bytes");

inline gpuError_t ClearHeader(void* workspace, gpuStream_t stream) {
  return gpuMemsetAsync(workspace, 0, sizeof(WorkspaceHeader), stream);
}

// Index arithmetic of the fast path in 32 bits (n and data_n below 2^31).
struct Geometry {
  FastDivmod inner;
  FastDivmod index_axis;
};

inline bool UseFast32(const Params& p) {
  return p.fast && p.n < (int64_t(1) << 31) && p.data_n < (int64_t(1) << 31);
}

inline Geometry MakeGeometry(const Params& p) {
  Geometry g;
  if (UseFast32(p)) {
    g.inner = FastDivmod(static_cast<uint32_t>(std::max<int64_t>(p.inner, 1)));
    g.index_axis = FastDivmod(static_cast<uint32_t>(std::max<int64_t>(p.index_axis, 1)));
  }
  return g;
}

// Where position `pos` of indices reads its index and update, and where along the axis
// it writes: out[out_base + index * axis_stride].
struct Location {
  int64_t index_offset;
  int64_t update_offset;
  int64_t out_base;
  int64_t axis_stride;
};

template <bool kFast32>
__device__ __forceinline__ Location Locate(const Params& p, const Geometry& g, int64_t pos) {
  Location l;
  if constexpr (kFast32) {
    uint32_t rest, inner_coord, outer, along;
    g.inner.DivMod(static_cast<uint32_t>(pos), &rest, &inner_coord);
    g.index_axis.DivMod(rest, &outer, &along);
    l.index_offset = pos;
    l.update_offset = pos;
    l.out_base = int64_t(outer) * p.axis_size * p.inner + inner_coord;
    l.axis_stride = p.inner;
  } else {
    int64_t rest = pos;
    l.index_offset = l.update_offset = l.out_base = 0;
#pragma unroll
    for (int d = kMaxRank - 1; d >= 0; --d) {
      if (d >= p.rank) continue;
      const int64_t c = rest % p.shape[d];
      rest /= p.shape[d];
      l.index_offset += c * p.index_strides[d];
      l.update_offset += c * p.update_strides[d];
      if (d != p.axis) l.out_base += c * p.out_strides[d];
    }
    l.axis_stride = p.out_strides[p.axis];
  }
  return l;
}

// Normalises a raw index; false when out of range.
__device__ __forceinline__ bool Normalise(int64_t raw, int64_t axis_size, int64_t* index) {
  if (raw < -axis_size || raw >= axis_size) return false;
  *index = raw < 0 ? raw + axis_size : raw;
  return true;
}

template <typename I>
__device__ int64_t IndexAt(const Params& p, int64_t pos) {
  const Location l = Locate<false>(p, Geometry(), pos);
  return static_cast<int64_t>(static_cast<const I*>(p.indices)[l.index_offset]);
}

// Writes the bad position `word` holds, and the index found there, into the slot (not
// its state).
template <typename I>
__device__ void WriteBadPosition(const Params& p, Word word, volatile ErrorSlotData* s) {
  const int64_t position = BadPosition(word);
  s->position = position;
  // A position beyond the indices cannot come from the check: report it as is rather
  // than read past the tensor.
  s->value = position >= 0 && position < p.n ? IndexAt<I>(p, position) : 0;
}

// Publishes a bad index to the host-visible slot (nothing when `word` is 0).
template <typename I>
__device__ void ReportBad(const Params& p, Word word, ErrorSlot slot) {
  volatile ErrorSlotData* s = slot.device;
  if (word == 0 || s == nullptr) return;
  WriteBadPosition<I>(p, word, s);
  __threadfence_system();
  s->state = kSlotError;
}

// Publishes the position the word holds, and the index found there, to the host's slot.
// Several threads may publish at once (ReportBadPosition): each rewrites the slot until
// the word still holds what it wrote once its writes are visible. The word only moves to
// smaller positions, so the slot ends with the smallest and its own value.
template <typename I>
__device__ void PublishBad(const Params& p, const Word* word, ErrorSlot slot) {
  volatile ErrorSlotData* s = slot.device;
  if (s == nullptr) return;
  const volatile Word* current = word;
  Word seen = *current;
  while (true) {
    WriteBadPosition<I>(p, seen, s);
    __threadfence_system();
    const Word now = *current;
    if (now == seen) break;
    seen = now;
  }
  s->state = kSlotError;
}

// Records a bad position in the word. The thread that makes it the smallest recorded so
// far publishes it (PublishBad); a thread that finds a smaller one recorded leaves that to
// its recorder. No thread waits for others, and a kernel that meets no bad index does
// nothing more. (A report by the last block to finish made every block count itself
// with an atomic: 1.2 us of the 25.3 us that the i64 assignment of 2^20 took with it on
// the H200, docs/results/nvidia-h200/scatter-report-2026-11-29/.)
template <typename I>
__device__ void ReportBadPosition(const Params& p, Word* word, int64_t position, ErrorSlot slot) {
  if (!RecordBad(word, position)) return;  // a smaller position is recorded
  __threadfence_system();  // the word's new value before the slot's writes
  PublishBad<I>(p, word, slot);
}

// ReportBadPosition for the first of a thread's bad positions, bit k of `bad` standing
// for position_of(k) (increasing in k): the word keeps the smallest position of the grid,
// so a thread's first is all it needs to report.
template <typename I, typename PositionOf>
__device__ __forceinline__ void ReportFirstBad(const Params& p, Word* word, unsigned bad, ErrorSlot slot,
                                               PositionOf position_of) {
  if (bad != 0) ReportBadPosition<I>(p, word, position_of(__ffs(static_cast<int>(bad)) - 1), slot);
}

// In place, the check kernel ran first: true (the first block reporting) when it found a
// bad index, so that the kernel writes nothing.
template <typename I>
__device__ __forceinline__ bool StopAfterFailedCheck(const Params& p, WorkspaceHeader* header, ErrorSlot slot) {
  const Word bad = header->bad;  // written by the check kernel before this one
  if (bad == 0) return false;
  if (blockIdx.x == 0 && threadIdx.x == 0) ReportBad<I>(p, bad, slot);
  return true;
}

// Checks every index over the grid; the first bad position goes to *word.
template <typename I, bool kFast32>
__device__ void CheckGrid(const Params& p, const Geometry& g, int64_t tid, int64_t stride, Word* word) {
  const I* __restrict__ indices = static_cast<const I*>(p.indices);
  for (int64_t pos = tid; pos < p.n; pos += stride) {
    const Location l = Locate<kFast32>(p, g, pos);
    int64_t index;
    if (!Normalise(static_cast<int64_t>(indices[l.index_offset]), p.axis_size, &index)) {
      RecordBad(word, pos);
      return;  // this thread's later positions are larger
    }
  }
}

// A load of what the kernel reads once (indices, updates, the copy's source): L2's
// evict-first policy (`ld.global.cs`), so that these streams leave out's lines in L2 for
// the reductions that follow (H200: the bf16 embedding-gradient scatter-add of dtypes.txt
// 150.7 -> 140.8 us, the i64 one 98.4 -> 91.4, the bf16 max over 169343 rows 1267 -> 1175;
// the other scatter lines within 1%). The bucketed, column, privatized, sorted and slice
// scatters load plainly: the same loads there gained nothing, and the plain slice kernel
// ran 5% slower (docs/results/nvidia-h200/scatter-evict-first-2026-11-29/). HIP: a plain
// load.
template <typename V>
__device__ __forceinline__ V LoadOnce(const V* p) {
#if defined(__CUDA_ARCH__)
  return __ldcs(p);
#else
  return *p;
#endif
}

// Copies elements [first, end) of contiguous data into out, kVectorBytes at a time (0, or
// no more than an element: one element at a time; first a multiple of a vector's
// elements), over threads tid, tid + stride, ... The width is a template parameter: a
// kernel that tests several at run time holds more registers (the windowed bucketed
// scatter's bf16 apply 32 -> 40, its blocks of 1024 one a multiprocessor instead of two).
template <int kVectorBytes, typename S>
__device__ __forceinline__ void CopyRange(const S* __restrict__ data, S* __restrict__ out, int64_t first,
                                          int64_t end, int64_t tid, int64_t stride) {
  int64_t tail = first;
  if constexpr (kVectorBytes > static_cast<int>(sizeof(S))) {
    using V = std::conditional_t<kVectorBytes == 16, uint4, std::conditional_t<kVectorBytes == 8, uint2, unsigned int>>;
    static_assert(sizeof(V) == kVectorBytes, "16, 8 or 4 bytes");
    constexpr int64_t kPer = kVectorBytes / static_cast<int64_t>(sizeof(S));
    const int64_t vectors_end = end / kPer;
    for (int64_t i = first / kPer + tid; i < vectors_end; i += stride) {
      reinterpret_cast<V*>(out)[i] = LoadOnce(reinterpret_cast<const V*>(data) + i);
    }
    tail = vectors_end * kPer;
  }
  for (int64_t i = tail + tid; i < end; i += stride) out[i] = LoadOnce(data + i);
}

// Copies data into out over the grid (vector_bytes wide when contiguous and aligned).
template <typename T>
__device__ void CopyGrid(const Params& p, int vector_bytes, int64_t tid, int64_t stride) {
  using S = typename T::Storage;
  const S* __restrict__ data = static_cast<const S*>(p.data);
  S* __restrict__ out = static_cast<S*>(p.out);
  if (!p.fast) {
    for (int64_t i = tid; i < p.data_n; i += stride) {
      int64_t rest = i, din = 0, dout = 0;
      for (int d = p.rank - 1; d >= 0; --d) {
        const int64_t c = rest % p.data_shape[d];
        rest /= p.data_shape[d];
        din += c * p.data_strides[d];
        dout += c * p.out_strides[d];
      }
      out[dout] = data[din];
    }
    return;
  }
  switch (vector_bytes) {
    case 16:
      return CopyRange<16>(data, out, 0, p.data_n, tid, stride);
    case 8:
      return CopyRange<8>(data, out, 0, p.data_n, tid, stride);
    case 4:
      return CopyRange<4>(data, out, 0, p.data_n, tid, stride);
    default:
      return CopyRange<0>(data, out, 0, p.data_n, tid, stride);
  }
}

// `clear` (when given): a workspace header this kernel zeroes too, in place of a memset
// of its own before it (one launch less for the kernels that copy, then scatter).
template <typename T>
__global__ void CopyKernel(Params p, int vector_bytes, WorkspaceHeader* clear) {
  gpu::AllowDependentLaunch();  // the scatter after it may start (it waits for this copy)
  if (clear != nullptr && blockIdx.x == 0 && threadIdx.x == 0) *clear = WorkspaceHeader{};
  CopyGrid<T>(p, vector_bytes, int64_t(blockIdx.x) * blockDim.x + threadIdx.x,
              int64_t(gridDim.x) * blockDim.x);
}

template <typename I, bool kFast32>
__global__ void CheckKernel(Params p, Geometry g, Word* word) {
  CheckGrid<I, kFast32>(p, g, int64_t(blockIdx.x) * blockDim.x + threadIdx.x,
                        int64_t(gridDim.x) * blockDim.x, word);
}

// Calls fn.template operator()<T, I>() for the params' element and index types. Only
// kernels written for integers too (kIntegers) are instantiated for I32 and I64; the
// others answer an integer element type with gpuErrorInvalidValue (their Applicable
// refuses it first).
template <bool kIntegers = false, typename Fn>
gpuError_t VisitTypes(const Params& p, Fn&& fn) {
  auto with_index = [&]<typename T>() {
    return p.index64 ? fn.template operator()<T, int64_t>() : fn.template operator()<T, int32_t>();
  };
  switch (p.type) {
    case ElementType::kF32:
      return with_index.template operator()<F32>();
    case ElementType::kF16:
      return with_index.template operator()<F16>();
    case ElementType::kBF16:
      return with_index.template operator()<BF16>();
    case ElementType::kI32:
      if constexpr (kIntegers) return with_index.template operator()<I32>();
      break;
    case ElementType::kI64:
      if constexpr (kIntegers) return with_index.template operator()<I64>();
      break;
  }
  return gpuErrorInvalidValue;
}

inline unsigned int Blocks(int64_t work, int block, int64_t cap = 1 << 20) {
  const int64_t b = (std::max<int64_t>(work, 1) + block - 1) / block;
  return static_cast<unsigned int>(std::min(b, cap));
}

// Narrows the copy's vector width to what the pointers' alignment allows.
inline int VectorBytes(const Params& p, int requested) {
  int bytes = requested;
  const uintptr_t a = reinterpret_cast<uintptr_t>(p.data) | reinterpret_cast<uintptr_t>(p.out);
  while (bytes > 4 && (a % bytes) != 0) bytes /= 2;
  return (a % bytes) == 0 ? bytes : 1;
}

// out = data (out of place) with the tuned copy.
template <typename T>
// Copies data into out when out of place; `clear` (when given) is a workspace header
// zeroed before the kernels that follow on the stream, by the copy when there is one.
gpuError_t LaunchCopyOf(const Params& p, const CopyConfig& copy, gpuStream_t stream, WorkspaceHeader* clear = nullptr) {
  if (p.in_place || p.data_n == 0) return clear != nullptr ? ClearHeader(clear, stream) : gpuSuccess;
  const int vec = VectorBytes(p, copy.vector_bytes);
  const int64_t per = std::max<int64_t>(vec / int64_t(sizeof(typename T::Storage)), 1);
  CopyKernel<T><<<Blocks(p.data_n / per, copy.block), copy.block, 0, stream>>>(p, vec, clear);
  return gpuGetLastError();
}

// Checks every index into the word (in place: before anything is written).
template <typename I>
gpuError_t LaunchCheck(const Params& p, const Geometry& g, Word* word, gpuStream_t stream) {
  if (p.n == 0) return gpuSuccess;
  if (UseFast32(p)) {
    CheckKernel<I, true><<<Blocks(p.n, 256), 256, 0, stream>>>(p, g, word);
  } else {
    CheckKernel<I, false><<<Blocks(p.n, 256), 256, 0, stream>>>(p, g, word);
  }
  return gpuGetLastError();
}

// What a scatter that checks its indices as it goes does before its kernel: out of place,
// copies data into out (the copy clears the header); in place, clears the header and
// checks every index, so that nothing is written where one is bad (StopAfterFailedCheck).
template <typename T, typename I>
gpuError_t CopyOrCheck(const Params& p, const CopyConfig& copy, const Geometry& g, void* workspace,
                       gpuStream_t stream) {
  auto* header = static_cast<WorkspaceHeader*>(workspace);
  if (!p.in_place) return LaunchCopyOf<T>(p, copy, stream, header);
  const gpuError_t e = ClearHeader(workspace, stream);
  return e != gpuSuccess ? e : LaunchCheck<I>(p, g, &header->bad, stream);
}

// Launches a kernel after CopyOrCheck: as the copy kernel's programmatic dependent where
// one ran (out of place with data: the kernel waits for it with GridDependencyWait before
// it touches out or the header), else an ordinary launch (in place the check's word must
// be complete before the kernel reads it; with no data a memset, not a kernel, ran).
template <typename... KernelParams, typename... Args>
gpuError_t LaunchAfterCopy(const Params& p, void (*kernel)(KernelParams...), unsigned int blocks, int block,
                           size_t shared, gpuStream_t stream, Args&&... args) {
  if (!p.in_place && p.data_n != 0) {
    return gpu::LaunchDependent(kernel, blocks, block, shared, stream, std::forward<Args>(args)...);
  }
  kernel<<<blocks, block, shared, stream>>>(std::forward<Args>(args)...);
  return gpuGetLastError();
}

// Raises a kernel's dynamic shared memory limit (needed above 48 KiB), once per kernel
// and size.
gpuError_t AllowSharedMemory(const void* kernel, size_t bytes);

}  // namespace opsched::scatter::gpu_kernels
