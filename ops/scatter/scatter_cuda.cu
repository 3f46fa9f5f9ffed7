// Scatter kernels (see scatter_cuda.h). Written once for CUDA and HIP.
#include "ops/scatter/scatter_cuda.h"

#include <algorithm>
#include <atomic>
#include <climits>

#include "core/element.h"
#include "core/gpu/device_algorithms.cuh"
#include "core/gpu/fast_divmod.h"
#include "ops/scatter/scatter_atomics.cuh"

namespace opsched::scatter::gpu_kernels {

// The reduction as a binary functor for ReduceByKey (the sort-based path). Named (not in
// an anonymous namespace) because the vendor library instantiates kernels with it.
struct CombineOp {
  Reduction reduction;
  __host__ __device__ float operator()(float a, float b) const { return Combine(reduction, a, b); }
};

namespace {

using Word = unsigned long long;
// "No bad index": what gpuMemsetAsync(word, 0x7f, 8) leaves, larger than any position.
constexpr Word kNoBad = 0x7f7f7f7f7f7f7f7full;

// Index arithmetic of the fast path in 32 bits (n and data_n below 2^31).
struct Geometry {
  FastDivmod inner;
  FastDivmod index_axis;
};

Geometry MakeGeometry(const Params& p) {
  Geometry g;
  if (p.fast && p.n < (int64_t(1) << 31) && p.data_n < (int64_t(1) << 31)) {
    g.inner = FastDivmod(static_cast<uint32_t>(std::max<int64_t>(p.inner, 1)));
    g.index_axis = FastDivmod(static_cast<uint32_t>(std::max<int64_t>(p.index_axis, 1)));
  }
  return g;
}

bool UseFast32(const Params& p) {
  return p.fast && p.n < (int64_t(1) << 31) && p.data_n < (int64_t(1) << 31);
}

// Where position `pos` of indices reads its index and update, and where along the
// axis it writes: out[base + index * axis_stride].
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

// Publishes the outcome of the index check to the host-visible slot.
template <typename I>
__device__ void Report(const Params& p, Word bad, ErrorSlot slot) {
  volatile ErrorSlotData* s = slot.device;
  if (s == nullptr) return;
  if (bad != kNoBad) {
    s->position = static_cast<int64_t>(bad);
    // A position beyond the indices cannot come from the check: report it as is
    // rather than read past the tensor.
    s->value = bad < static_cast<Word>(p.n) ? IndexAt<I>(p, static_cast<int64_t>(bad)) : 0;
    __threadfence_system();
    s->state = kSlotError;
  } else {
    __threadfence_system();
    s->state = kSlotOk;
  }
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
  const int64_t per_vector = vector_bytes / static_cast<int64_t>(sizeof(S));
  const int64_t vectors = per_vector > 1 ? p.data_n / per_vector : 0;
  if (vector_bytes == 16) {
    for (int64_t i = tid; i < vectors; i += stride) {
      reinterpret_cast<uint4*>(out)[i] = reinterpret_cast<const uint4*>(data)[i];
    }
  } else if (vector_bytes == 8) {
    for (int64_t i = tid; i < vectors; i += stride) {
      reinterpret_cast<uint2*>(out)[i] = reinterpret_cast<const uint2*>(data)[i];
    }
  } else if (vector_bytes == 4 && per_vector > 1) {
    for (int64_t i = tid; i < vectors; i += stride) {
      reinterpret_cast<unsigned int*>(out)[i] = reinterpret_cast<const unsigned int*>(data)[i];
    }
  }
  for (int64_t i = vectors * std::max<int64_t>(per_vector, 1) + tid; i < p.data_n; i += stride) {
    out[i] = data[i];
  }
}

// Checks every index over the grid; the first bad position goes to *word.
template <typename I, bool kFast32>
__device__ void CheckGrid(const Params& p, const Geometry& g, int64_t tid, int64_t stride,
                          Word* word) {
  const I* __restrict__ indices = static_cast<const I*>(p.indices);
  for (int64_t pos = tid; pos < p.n; pos += stride) {
    const Location l = Locate<kFast32>(p, g, pos);
    int64_t index;
    if (!Normalise(static_cast<int64_t>(indices[l.index_offset]), p.axis_size, &index)) {
      atomicMin(word, static_cast<Word>(pos));
      return;  // this thread's later positions are larger
    }
  }
}

template <typename T, typename I, bool kFast32>
__global__ void PrologueKernel(Params p, Geometry g, bool copy, int vector_bytes, Word* word) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (word != nullptr) CheckGrid<I, kFast32>(p, g, tid, stride, word);
  if (copy) CopyGrid<T>(p, vector_bytes, tid, stride);
}

template <typename T, typename I, bool kFast32>
__global__ void ParallelKernel(Params p, Geometry g, int items, const Word* word,
                               ErrorSlot slot) {
  using S = typename T::Storage;
  const Word bad = *word;
  if (blockIdx.x == 0 && threadIdx.x == 0) Report<I>(p, bad, slot);
  if (bad != kNoBad) return;
  const I* __restrict__ indices = static_cast<const I*>(p.indices);
  const S* __restrict__ updates = static_cast<const S*>(p.updates);
  S* out = static_cast<S*>(p.out);
  constexpr int kMaxItems = 8;
  const int64_t base = int64_t(blockIdx.x) * blockDim.x * items + threadIdx.x;
  int64_t target[kMaxItems];
  float value[kMaxItems];
  // Load every item first (independent loads in flight), then write.
#pragma unroll
  for (int i = 0; i < kMaxItems; ++i) {
    target[i] = -1;
    const int64_t pos = base + int64_t(i) * blockDim.x;
    if (i < items && pos < p.n) {
      const Location l = Locate<kFast32>(p, g, pos);
      int64_t index = static_cast<int64_t>(indices[l.index_offset]);
      if (index < 0) index += p.axis_size;
      target[i] = l.out_base + index * l.axis_stride;
      value[i] = T::Load(updates[l.update_offset]);
    }
  }
#pragma unroll
  for (int i = 0; i < kMaxItems; ++i) {
    if (target[i] >= 0) AtomicCombineElement<T>(out + target[i], value[i], p.reduction);
  }
}

template <typename T, typename I>
__global__ void SequentialKernel(Params p, bool copy, ErrorSlot slot) {
  using S = typename T::Storage;
  __shared__ Word bad;
  if (threadIdx.x == 0) bad = kNoBad;
  __syncthreads();
  CheckGrid<I, false>(p, Geometry(), threadIdx.x, blockDim.x, &bad);
  if (copy) CopyGrid<T>(p, 1, threadIdx.x, blockDim.x);
  __syncthreads();
  if (threadIdx.x != 0) return;
  if (bad == kNoBad) {
    const I* indices = static_cast<const I*>(p.indices);
    const S* updates = static_cast<const S*>(p.updates);
    S* out = static_cast<S*>(p.out);
    for (int64_t pos = 0; pos < p.n; ++pos) {
      const Location l = Locate<false>(p, Geometry(), pos);
      int64_t index = static_cast<int64_t>(indices[l.index_offset]);
      if (index < 0) index += p.axis_size;
      S& dst = out[l.out_base + index * l.axis_stride];
      dst = T::Store(Combine(p.reduction, T::Load(dst), T::Load(updates[l.update_offset])));
    }
  }
  Report<I>(p, bad, slot);
}

// ---- sort-based ----

template <typename K>
struct SortedLayout {
  size_t keys_in, keys_out, values_in, values_out, gathered, unique, aggregates, runs, temp;
  size_t temp_bytes, total;
};

int KeyBits(uint64_t max_key) {
  int bits = 1;
  while (bits < 64 && (uint64_t(1) << bits) <= max_key) ++bits;
  return bits;
}

template <typename K>
SortedLayout<K> LayoutFor(const Params& p) {
  auto align = [](size_t x) { return (x + 255) / 256 * 256; };
  const size_t n = static_cast<size_t>(std::max<int64_t>(p.n, 1));
  SortedLayout<K> l;
  size_t at = kWordBytes;
  l.keys_in = at;
  at += align(n * sizeof(K));
  l.keys_out = at;
  at += align(n * sizeof(K));
  l.values_in = at;
  at += align(n * sizeof(K));
  l.values_out = at;
  at += align(n * sizeof(K));
  l.gathered = at;
  at += align(n * sizeof(float));
  l.unique = at;
  at += align(n * sizeof(K));
  l.aggregates = at;
  at += align(n * sizeof(float));
  l.runs = at;
  at += align(sizeof(int64_t));
  l.temp = at;
  size_t sort_bytes = 0, reduce_bytes = 0;
  gpu::SortPairs<K, K>(nullptr, sort_bytes, nullptr, nullptr, nullptr, nullptr, p.n, 8 * sizeof(K),
                       nullptr);
  gpu::ReduceByKey(nullptr, reduce_bytes, static_cast<const K*>(nullptr), static_cast<K*>(nullptr),
                   static_cast<const float*>(nullptr), static_cast<float*>(nullptr),
                   static_cast<int64_t*>(nullptr), CombineOp{p.reduction}, p.n, nullptr);
  l.temp_bytes = std::max(sort_bytes, reduce_bytes);
  l.total = at + align(l.temp_bytes);
  return l;
}

bool Use64BitKeys(const Params& p) {
  return p.n >= (int64_t(1) << 32) - 1 || p.data_n >= (int64_t(1) << 32) - 1;
}

template <typename T, typename I, bool kFast32, typename K>
__global__ void KeysKernel(Params p, Geometry g, bool copy, int vector_bytes, Word* word,
                           K* keys, K* positions) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const I* __restrict__ indices = static_cast<const I*>(p.indices);
  Word first_bad = kNoBad;
  for (int64_t pos = tid; pos < p.n; pos += stride) {
    const Location l = Locate<kFast32>(p, g, pos);
    int64_t index;
    K key = 0;
    if (Normalise(static_cast<int64_t>(indices[l.index_offset]), p.axis_size, &index)) {
      key = static_cast<K>(l.out_base + index * l.axis_stride);
    } else if (first_bad == kNoBad) {
      first_bad = static_cast<Word>(pos);
    }
    keys[pos] = key;
    positions[pos] = static_cast<K>(pos);
  }
  if (first_bad != kNoBad) atomicMin(word, first_bad);
  if (copy) CopyGrid<T>(p, vector_bytes, tid, stride);
}

template <typename T, bool kFast32, typename K>
__global__ void GatherKernel(Params p, Geometry g, const K* positions, float* gathered) {
  using S = typename T::Storage;
  const S* __restrict__ updates = static_cast<const S*>(p.updates);
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < p.n; i += stride) {
    const Location l = Locate<kFast32>(p, g, static_cast<int64_t>(positions[i]));
    gathered[i] = T::Load(updates[l.update_offset]);
  }
}

template <typename T, typename I, typename K>
__global__ void ApplyRunsKernel(Params p, const K* unique, const float* aggregates,
                                const int64_t* runs, const Word* word, ErrorSlot slot) {
  using S = typename T::Storage;
  const Word bad = *word;
  if (blockIdx.x == 0 && threadIdx.x == 0) Report<I>(p, bad, slot);
  if (bad != kNoBad) return;
  S* out = static_cast<S*>(p.out);
  const int64_t count = *runs;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    S& dst = out[unique[i]];
    dst = T::Store(Combine(p.reduction, T::Load(dst), aggregates[i]));
  }
}

// ---- privatized ----

__global__ void PrivatizedInitKernel(float* acc, int64_t n, float identity, Word* word) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) acc[i] = identity;
  if (i == 0) *word = kNoBad;
}

template <typename T, typename I, bool kFast32>
__global__ void PrivatizedKernel(Params p, Geometry g, float* acc, Word* word) {
  using S = typename T::Storage;
  extern __shared__ float local[];
  const float identity = Identity(p.reduction);
  for (int64_t t = threadIdx.x; t < p.data_n; t += blockDim.x) local[t] = identity;
  __syncthreads();
  const I* __restrict__ indices = static_cast<const I*>(p.indices);
  const S* __restrict__ updates = static_cast<const S*>(p.updates);
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  Word first_bad = kNoBad;
  for (int64_t pos = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; pos < p.n; pos += stride) {
    const Location l = Locate<kFast32>(p, g, pos);
    int64_t index;
    if (!Normalise(static_cast<int64_t>(indices[l.index_offset]), p.axis_size, &index)) {
      if (first_bad == kNoBad) first_bad = static_cast<Word>(pos);
      continue;
    }
    AtomicCombine(&local[l.out_base + index * l.axis_stride], T::Load(updates[l.update_offset]),
                  p.reduction);
  }
  if (first_bad != kNoBad) atomicMin(word, first_bad);
  __syncthreads();
  const unsigned int identity_bits = __float_as_uint(identity);
  for (int64_t t = threadIdx.x; t < p.data_n; t += blockDim.x) {
    const float v = local[t];
    if (__float_as_uint(v) != identity_bits) AtomicCombine(&acc[t], v, p.reduction);
  }
}

template <typename T, typename I>
__global__ void PrivatizedFinalizeKernel(Params p, const float* acc, const Word* word,
                                         ErrorSlot slot) {
  using S = typename T::Storage;
  const Word bad = *word;
  if (blockIdx.x == 0 && threadIdx.x == 0) Report<I>(p, bad, slot);
  if (bad != kNoBad) return;
  const S* __restrict__ data = static_cast<const S*>(p.data);
  S* __restrict__ out = static_cast<S*>(p.out);
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < p.data_n; t += stride) {
    out[t] = T::Store(Combine(p.reduction, T::Load(data[t]), acc[t]));
  }
}

// ---- dispatch helpers ----

// Calls fn.template operator()<T, I>() for the params' types.
template <typename Fn>
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
  }
  return gpuSuccess;
}

unsigned int Blocks(int64_t work, int block, int64_t cap = 1 << 20) {
  const int64_t b = (std::max<int64_t>(work, 1) + block - 1) / block;
  return static_cast<unsigned int>(std::min(b, cap));
}

// Narrows the copy's vector width to what the pointers' alignment allows.
int VectorBytes(const Params& p, int requested) {
  int bytes = requested;
  const uintptr_t a = reinterpret_cast<uintptr_t>(p.data) | reinterpret_cast<uintptr_t>(p.out);
  while (bytes > 4 && (a % bytes) != 0) bytes /= 2;
  return (a % bytes) == 0 ? bytes : 1;
}

}  // namespace

gpuError_t LaunchSequential(const Params& p, bool copy, int threads, ErrorSlot slot,
                            gpuStream_t stream) {
  return VisitTypes(p, [&]<typename T, typename I>() {
    SequentialKernel<T, I><<<1, threads, 0, stream>>>(p, copy && !p.in_place, slot);
    return gpuGetLastError();
  });
}

gpuError_t LaunchCopy(const Params& p, const CopyConfig& copy, gpuStream_t stream) {
  if (p.in_place || p.data_n == 0) return gpuSuccess;
  const int vec = VectorBytes(p, copy.vector_bytes);
  return VisitTypes(p, [&]<typename T, typename I>() {
    const int64_t per = std::max<int64_t>(vec / int64_t(sizeof(typename T::Storage)), 1);
    PrologueKernel<T, I, false><<<Blocks(p.data_n / per, copy.block), copy.block, 0, stream>>>(
        p, Geometry(), true, vec, nullptr);
    return gpuGetLastError();
  });
}

gpuError_t LaunchParallel(const Params& p, const CopyConfig& copy, int block, int items,
                          void* workspace, ErrorSlot slot, gpuStream_t stream) {
  Word* word = static_cast<Word*>(workspace);
  gpuError_t err = gpuMemsetAsync(word, 0x7f, sizeof(Word), stream);
  if (err != gpuSuccess) return err;
  const Geometry g = MakeGeometry(p);
  const int vec = VectorBytes(p, copy.vector_bytes);
  const bool fast = UseFast32(p);
  return VisitTypes(p, [&]<typename T, typename I>() {
    const int64_t per = std::max<int64_t>(vec / int64_t(sizeof(typename T::Storage)), 1);
    const int64_t work = std::max(p.n, p.in_place ? 0 : p.data_n / per);
    const unsigned int prologue_blocks = Blocks(work, copy.block);
    const unsigned int blocks = Blocks((p.n + items - 1) / items, block, INT_MAX);
    if (fast) {
      PrologueKernel<T, I, true><<<prologue_blocks, copy.block, 0, stream>>>(p, g, !p.in_place, vec, word);
      ParallelKernel<T, I, true><<<blocks, block, 0, stream>>>(p, g, items, word, slot);
    } else {
      PrologueKernel<T, I, false><<<prologue_blocks, copy.block, 0, stream>>>(p, g, !p.in_place, vec, word);
      ParallelKernel<T, I, false><<<blocks, block, 0, stream>>>(p, g, items, word, slot);
    }
    return gpuGetLastError();
  });
}

size_t SortedWorkspaceBytes(const Params& p) {
  return Use64BitKeys(p) ? LayoutFor<uint64_t>(p).total : LayoutFor<uint32_t>(p).total;
}

namespace {

template <typename K>
gpuError_t LaunchSortedWith(const Params& p, const CopyConfig& copy, int block, void* workspace,
                            size_t workspace_bytes, ErrorSlot slot, gpuStream_t stream) {
  const SortedLayout<K> l = LayoutFor<K>(p);
  if (workspace_bytes < l.total) return gpuErrorMemoryAllocation;
  char* ws = static_cast<char*>(workspace);
  Word* word = reinterpret_cast<Word*>(ws);
  K* keys_in = reinterpret_cast<K*>(ws + l.keys_in);
  K* keys_out = reinterpret_cast<K*>(ws + l.keys_out);
  K* values_in = reinterpret_cast<K*>(ws + l.values_in);
  K* values_out = reinterpret_cast<K*>(ws + l.values_out);
  float* gathered = reinterpret_cast<float*>(ws + l.gathered);
  K* unique = reinterpret_cast<K*>(ws + l.unique);
  float* aggregates = reinterpret_cast<float*>(ws + l.aggregates);
  int64_t* runs = reinterpret_cast<int64_t*>(ws + l.runs);
  void* temp = ws + l.temp;
  gpuError_t err = gpuMemsetAsync(word, 0x7f, sizeof(Word), stream);
  if (err != gpuSuccess) return err;
  err = gpuMemsetAsync(runs, 0, sizeof(int64_t), stream);
  if (err != gpuSuccess) return err;
  const Geometry g = MakeGeometry(p);
  const int vec = VectorBytes(p, copy.vector_bytes);
  const bool fast = UseFast32(p);
  // Keys are storage offsets into out: bounded by its storage extent.
  int64_t extent = 1;
  for (int d = 0; d < p.rank; ++d) extent += (p.data_shape[d] - 1) * p.out_strides[d];
  const int bits = KeyBits(static_cast<uint64_t>(std::max<int64_t>(extent, 1)));
  err = VisitTypes(p, [&]<typename T, typename I>() {
    const int64_t per = std::max<int64_t>(vec / int64_t(sizeof(typename T::Storage)), 1);
    const int64_t work = std::max(p.n, p.in_place ? 0 : p.data_n / per);
    if (fast) {
      KeysKernel<T, I, true, K><<<Blocks(work, copy.block), copy.block, 0, stream>>>(
          p, g, !p.in_place, vec, word, keys_in, values_in);
    } else {
      KeysKernel<T, I, false, K><<<Blocks(work, copy.block), copy.block, 0, stream>>>(
          p, g, !p.in_place, vec, word, keys_in, values_in);
    }
    return gpuGetLastError();
  });
  if (err != gpuSuccess || p.n == 0) {
    if (err == gpuSuccess) {
      err = VisitTypes(p, [&]<typename T, typename I>() {
        ApplyRunsKernel<T, I, K><<<1, 32, 0, stream>>>(p, unique, aggregates, runs, word, slot);
        return gpuGetLastError();
      });
    }
    return err;
  }
  size_t temp_bytes = l.temp_bytes;
  err = gpu::SortPairs(temp, temp_bytes, keys_in, keys_out, values_in, values_out, p.n, bits, stream);
  if (err != gpuSuccess) return err;
  return VisitTypes(p, [&]<typename T, typename I>() {
    if (fast) {
      GatherKernel<T, true, K><<<Blocks(p.n, block), block, 0, stream>>>(p, g, values_out, gathered);
    } else {
      GatherKernel<T, false, K><<<Blocks(p.n, block), block, 0, stream>>>(p, g, values_out, gathered);
    }
    gpuError_t e = gpuGetLastError();
    if (e != gpuSuccess) return e;
    size_t reduce_bytes = l.temp_bytes;
    e = gpu::ReduceByKey(temp, reduce_bytes, static_cast<const K*>(keys_out), unique,
                         static_cast<const float*>(gathered), aggregates, runs,
                         CombineOp{p.reduction}, p.n, stream);
    if (e != gpuSuccess) return e;
    ApplyRunsKernel<T, I, K><<<Blocks(p.n, block), block, 0, stream>>>(p, unique, aggregates,
                                                                        runs, word, slot);
    return gpuGetLastError();
  });
}

}  // namespace

gpuError_t LaunchSorted(const Params& p, const CopyConfig& copy, int block, void* workspace,
                        size_t workspace_bytes, ErrorSlot slot, gpuStream_t stream) {
  return Use64BitKeys(p)
             ? LaunchSortedWith<uint64_t>(p, copy, block, workspace, workspace_bytes, slot, stream)
             : LaunchSortedWith<uint32_t>(p, copy, block, workspace, workspace_bytes, slot, stream);
}

size_t PrivatizedWorkspaceBytes(const Params& p) {
  return kWordBytes + static_cast<size_t>(p.data_n) * sizeof(float);
}

gpuError_t LaunchPrivatized(const Params& p, int block, int blocks_per_sm, int sm_count,
                            void* workspace, ErrorSlot slot, gpuStream_t stream) {
  Word* word = static_cast<Word*>(workspace);
  float* acc = reinterpret_cast<float*>(static_cast<char*>(workspace) + kWordBytes);
  const size_t shared = static_cast<size_t>(p.data_n) * sizeof(float);
  PrivatizedInitKernel<<<Blocks(p.data_n, 256), 256, 0, stream>>>(acc, p.data_n,
                                                                  Identity(p.reduction), word);
  gpuError_t err = gpuGetLastError();
  if (err != gpuSuccess) return err;
  const Geometry g = MakeGeometry(p);
  const bool fast = UseFast32(p);
  const unsigned int grid = static_cast<unsigned int>(std::max(1, sm_count * blocks_per_sm));
  return VisitTypes(p, [&]<typename T, typename I>() {
    auto kernel = fast ? PrivatizedKernel<T, I, true> : PrivatizedKernel<T, I, false>;
    if (shared > 48 * 1024) {
      // Raise the kernel's dynamic shared memory limit once per process.
      static std::atomic<bool> raised[2] = {false, false};
      if (!raised[fast].exchange(true)) {
        gpuError_t e = gpuFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                                           gpuFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(kPrivatizedMaxElements * sizeof(float)));
        if (e != gpuSuccess) {
          raised[fast] = false;
          return e;
        }
      }
    }
    kernel<<<grid, block, shared, stream>>>(p, g, acc, word);
    gpuError_t e = gpuGetLastError();
    if (e != gpuSuccess) return e;
    PrivatizedFinalizeKernel<T, I><<<Blocks(p.data_n, 256), 256, 0, stream>>>(p, acc, word, slot);
    return gpuGetLastError();
  });
}

}  // namespace opsched::scatter::gpu_kernels
