// The sort-based scatter: (target, position) pairs sorted with a stable radix sort, each
// run of equal targets reduced in position order (ReduceByKey, in f32 for the float types
// and in the integer itself for i32/i64), then applied — one write per distinct target.
// Deterministic; contention-free on duplicate-heavy adds.
#include "core/gpu/device_algorithms.cuh"
#include "ops/scatter/scatter_cuda_common.cuh"

namespace opsched::scatter::gpu_kernels {

// The reduction as a binary functor for ReduceByKey. Named (not in an anonymous
// namespace) because the vendor library instantiates kernels with it.
template <typename C>
struct CombineOp {
  Reduction reduction;
  __host__ __device__ C operator()(C a, C b) const { return Combine(reduction, a, b); }
};

namespace {

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

bool Use64BitKeys(const Params& p) {
  return p.n >= (int64_t(1) << 32) - 1 || p.data_n >= (int64_t(1) << 32) - 1;
}

// K: the sort's key type; C: the type updates are reduced in.
template <typename K, typename C>
SortedLayout<K> LayoutFor(const Params& p) {
  auto align = [](size_t x) { return (x + 255) / 256 * 256; };
  const size_t n = static_cast<size_t>(std::max<int64_t>(p.n, 1));
  SortedLayout<K> l;
  size_t at = kWordBytes;
  for (size_t* field : {&l.keys_in, &l.keys_out, &l.values_in, &l.values_out}) {
    *field = at;
    at += align(n * sizeof(K));
  }
  l.gathered = at;
  at += align(n * sizeof(C));
  l.unique = at;
  at += align(n * sizeof(K));
  l.aggregates = at;
  at += align(n * sizeof(C));
  l.runs = at;
  at += align(sizeof(int64_t));
  l.temp = at;
  size_t sort_bytes = 0, reduce_bytes = 0;
  gpu::SortPairs<K, K>(nullptr, sort_bytes, nullptr, nullptr, nullptr, nullptr, p.n, 8 * sizeof(K), nullptr);
  gpu::ReduceByKey(nullptr, reduce_bytes, static_cast<const K*>(nullptr), static_cast<K*>(nullptr),
                   static_cast<const C*>(nullptr), static_cast<C*>(nullptr),
                   static_cast<int64_t*>(nullptr), CombineOp<C>{p.reduction}, p.n, nullptr);
  l.temp_bytes = std::max(sort_bytes, reduce_bytes);
  l.total = at + align(l.temp_bytes);
  return l;
}

template <typename T, typename I, bool kFast32, typename K>
__global__ void KeysKernel(Params p, Geometry g, bool copy, int vector_bytes, Word* word, K* keys,
                           K* positions) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const I* __restrict__ indices = static_cast<const I*>(p.indices);
  bool bad = false;
  for (int64_t pos = tid; pos < p.n; pos += stride) {
    const Location l = Locate<kFast32>(p, g, pos);
    int64_t index;
    K key = 0;
    if (Normalise(static_cast<int64_t>(indices[l.index_offset]), p.axis_size, &index)) {
      key = static_cast<K>(l.out_base + index * l.axis_stride);
    } else if (!bad) {
      bad = true;
      RecordBad(word, pos);  // this thread's first (smallest) bad position
    }
    keys[pos] = key;
    positions[pos] = static_cast<K>(pos);
  }
  if (copy) CopyGrid<T>(p, vector_bytes, tid, stride);
}

template <typename T, bool kFast32, typename K>
__global__ void GatherKernel(Params p, Geometry g, const K* positions, typename T::Compute* gathered) {
  using S = typename T::Storage;
  const S* __restrict__ updates = static_cast<const S*>(p.updates);
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < p.n; i += stride) {
    const Location l = Locate<kFast32>(p, g, static_cast<int64_t>(positions[i]));
    gathered[i] = T::Load(updates[l.update_offset]);
  }
}

template <typename T, typename I, typename K>
__global__ void ApplyRunsKernel(Params p, const K* unique, const typename T::Compute* aggregates, const int64_t* runs,
                                const Word* word, ErrorSlot slot) {
  using S = typename T::Storage;
  const Word bad = *word;
  if (bad != 0) {
    if (blockIdx.x == 0 && threadIdx.x == 0) ReportBad<I>(p, bad, slot);
    return;
  }
  S* out = static_cast<S*>(p.out);
  const int64_t count = *runs;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    S& dst = out[unique[i]];
    dst = T::Store(Combine(p.reduction, T::Load(dst), aggregates[i]));
  }
}

template <typename K, typename T, typename I>
gpuError_t LaunchSortedWith(const Params& p, const CopyConfig& copy, int block, void* workspace,
                            size_t workspace_bytes, ErrorSlot slot, gpuStream_t stream) {
  using C = typename T::Compute;
  const SortedLayout<K> l = LayoutFor<K, C>(p);
  if (workspace_bytes < l.total) return gpuErrorMemoryAllocation;
  char* ws = static_cast<char*>(workspace);
  Word* word = &reinterpret_cast<WorkspaceHeader*>(ws)->bad;
  K* keys_in = reinterpret_cast<K*>(ws + l.keys_in);
  K* keys_out = reinterpret_cast<K*>(ws + l.keys_out);
  K* values_in = reinterpret_cast<K*>(ws + l.values_in);
  K* values_out = reinterpret_cast<K*>(ws + l.values_out);
  C* gathered = reinterpret_cast<C*>(ws + l.gathered);
  K* unique = reinterpret_cast<K*>(ws + l.unique);
  C* aggregates = reinterpret_cast<C*>(ws + l.aggregates);
  int64_t* runs = reinterpret_cast<int64_t*>(ws + l.runs);
  void* temp = ws + l.temp;
  gpuError_t err = ClearHeader(ws, stream);
  if (err == gpuSuccess) err = gpuMemsetAsync(runs, 0, sizeof(int64_t), stream);
  if (err != gpuSuccess) return err;
  const Geometry g = MakeGeometry(p);
  const int vec = VectorBytes(p, copy.vector_bytes);
  const bool fast = UseFast32(p);
  // Keys are storage offsets into out: bounded by its storage extent.
  int64_t extent = 1;
  for (int d = 0; d < p.rank; ++d) extent += (p.data_shape[d] - 1) * p.out_strides[d];
  const int bits = KeyBits(static_cast<uint64_t>(std::max<int64_t>(extent, 1)));
  const int64_t per = std::max<int64_t>(vec / int64_t(sizeof(typename T::Storage)), 1);
  const int64_t work = std::max(p.n, p.in_place ? 0 : p.data_n / per);
  if (fast) {
    KeysKernel<T, I, true, K><<<Blocks(work, copy.block), copy.block, 0, stream>>>(
        p, g, !p.in_place, vec, word, keys_in, values_in);
  } else {
    KeysKernel<T, I, false, K><<<Blocks(work, copy.block), copy.block, 0, stream>>>(
        p, g, !p.in_place, vec, word, keys_in, values_in);
  }
  gpuError_t e = gpuGetLastError();
  if (e == gpuSuccess && p.n > 0) {
    size_t temp_bytes = l.temp_bytes;
    e = gpu::SortPairs(temp, temp_bytes, keys_in, keys_out, values_in, values_out, p.n, bits, stream);
    if (e == gpuSuccess) {
      if (fast) {
        GatherKernel<T, true, K><<<Blocks(p.n, block), block, 0, stream>>>(p, g, values_out, gathered);
      } else {
        GatherKernel<T, false, K><<<Blocks(p.n, block), block, 0, stream>>>(p, g, values_out, gathered);
      }
      e = gpuGetLastError();
    }
    if (e == gpuSuccess) {
      size_t reduce_bytes = l.temp_bytes;
      e = gpu::ReduceByKey(temp, reduce_bytes, static_cast<const K*>(keys_out), unique,
                           static_cast<const C*>(gathered), aggregates, runs, CombineOp<C>{p.reduction},
                           p.n, stream);
    }
  }
  if (e != gpuSuccess) return e;
  ApplyRunsKernel<T, I, K><<<Blocks(std::max<int64_t>(p.n, 1), block), block, 0, stream>>>(
      p, unique, aggregates, runs, word, slot);
  return gpuGetLastError();
}

}  // namespace

size_t SortedWorkspaceBytes(const Params& p) {
  size_t bytes = 0;
  VisitTypes<true>(p, [&]<typename T, typename I>() {
    using C = typename T::Compute;
    bytes = Use64BitKeys(p) ? LayoutFor<uint64_t, C>(p).total : LayoutFor<uint32_t, C>(p).total;
    return gpuSuccess;
  });
  return bytes;
}

gpuError_t LaunchSorted(const Params& p, const CopyConfig& copy, int block, void* workspace,
                        size_t workspace_bytes, ErrorSlot slot, gpuStream_t stream) {
  return VisitTypes<true>(p, [&]<typename T, typename I>() {
    return Use64BitKeys(p)
               ? LaunchSortedWith<uint64_t, T, I>(p, copy, block, workspace, workspace_bytes, slot, stream)
               : LaunchSortedWith<uint32_t, T, I>(p, copy, block, workspace, workspace_bytes, slot, stream);
  });
}

}  // namespace opsched::scatter::gpu_kernels
