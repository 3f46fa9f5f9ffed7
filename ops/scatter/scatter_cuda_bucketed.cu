// The bucketed scatter: (target, update) pairs are partitioned by the top bits of the
// target with one radix-sort pass, then applied in that order. Stretches of consecutive
// writes fall in one bucket, an L2-sized window of out, so scattered writes are merged
// in L2 instead of each costing a read-modify-write of device memory. The updates travel
// through the sort as they are stored (2, 4 or 8 bytes: f16/bf16, f32/i32, i64).
#include "core/gpu/device_algorithms.cuh"
#include "ops/scatter/scatter_cuda_common.cuh"

namespace opsched::scatter::gpu_kernels {
namespace {

constexpr uint32_t kSkip = 0xffffffffu;  // the key of a bad position: never applied

struct BucketedLayout {
  size_t keys_in, keys_out, values_in, values_out, temp, temp_bytes, total;
};

int Bits(uint64_t max_key) {
  int bits = 1;
  while (bits < 32 && (uint64_t(1) << bits) <= max_key) ++bits;
  return bits;
}

// Bits of the largest target (a storage offset into out).
int TargetBits(const Params& p) {
  int64_t extent = 1;
  for (int d = 0; d < p.rank; ++d) extent += (p.data_shape[d] - 1) * p.out_strides[d];
  return Bits(static_cast<uint64_t>(std::max<int64_t>(extent, 1)));
}

// S: the stored element type, the sort's values.
template <typename S>
BucketedLayout LayoutFor(const Params& p) {
  auto align = [](size_t x) { return (x + 255) / 256 * 256; };
  const size_t n = static_cast<size_t>(std::max<int64_t>(p.n, 1));
  BucketedLayout l;
  size_t at = kWordBytes;
  for (size_t* field : {&l.keys_in, &l.keys_out}) {
    *field = at;
    at += align(n * sizeof(uint32_t));
  }
  for (size_t* field : {&l.values_in, &l.values_out}) {
    *field = at;
    at += align(n * sizeof(S));
  }
  l.temp = at;
  l.temp_bytes = 0;  // the most the sort of any bucket width needs: all target bits
  gpu::SortPairs<uint32_t, S>(nullptr, l.temp_bytes, nullptr, nullptr, nullptr, nullptr, p.n, TargetBits(p),
                              nullptr, 0);
  l.total = at + align(l.temp_bytes);
  return l;
}

template <typename T, typename I, bool kFast32>
__global__ void PairsKernel(Params p, Geometry g, bool copy, int vector_bytes, Word* word, uint32_t* keys,
                            typename T::Storage* values) {
  using S = typename T::Storage;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const I* __restrict__ indices = static_cast<const I*>(p.indices);
  const S* __restrict__ updates = static_cast<const S*>(p.updates);
  bool bad = false;
  for (int64_t pos = tid; pos < p.n; pos += stride) {
    const Location l = Locate<kFast32>(p, g, pos);
    int64_t index;
    if (Normalise(static_cast<int64_t>(indices[l.index_offset]), p.axis_size, &index)) {
      keys[pos] = static_cast<uint32_t>(l.out_base + index * l.axis_stride);
      values[pos] = updates[l.update_offset];
    } else {
      keys[pos] = kSkip;
      if (!bad) RecordBad(word, pos);
      bad = true;
    }
  }
  if (copy) CopyGrid<T>(p, vector_bytes, tid, stride);
}

template <typename T, typename I>
__global__ void ApplyKernel(Params p, const uint32_t* keys, const typename T::Storage* values, const Word* word,
                            ErrorSlot slot) {
  using S = typename T::Storage;
  const Word bad = *word;
  if (bad != 0) {
    if (blockIdx.x == 0 && threadIdx.x == 0) ReportBad<I>(p, bad, slot);
    return;
  }
  S* out = static_cast<S*>(p.out);
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < p.n; i += stride) {
    const uint32_t key = keys[i];
    if (key != kSkip) AtomicCombineElement<T>(out + key, T::Load(values[i]), p.reduction);
  }
}

}  // namespace

size_t BucketedWorkspaceBytes(const Params& p) {
  size_t total = 0;
  VisitTypes</*kIntegers=*/true>(p, [&]<typename T, typename I>() {
    total = LayoutFor<typename T::Storage>(p).total;
    return gpuSuccess;
  });
  return total;
}

gpuError_t LaunchBucketed(const Params& p, const CopyConfig& copy, int bucket_bits, int block, void* workspace,
                          size_t workspace_bytes, ErrorSlot slot, gpuStream_t stream) {
  const int bits = TargetBits(p);
  const int begin = std::max(0, bits - bucket_bits);
  const Geometry g = MakeGeometry(p);
  const bool fast = UseFast32(p);
  const int vec = VectorBytes(p, copy.vector_bytes);
  return VisitTypes</*kIntegers=*/true>(p, [&]<typename T, typename I>() {
    using S = typename T::Storage;
    const BucketedLayout l = LayoutFor<S>(p);
    if (workspace_bytes < l.total) return gpuErrorMemoryAllocation;
    char* ws = static_cast<char*>(workspace);
    Word* word = &reinterpret_cast<WorkspaceHeader*>(ws)->bad;
    auto* keys_in = reinterpret_cast<uint32_t*>(ws + l.keys_in);
    auto* keys_out = reinterpret_cast<uint32_t*>(ws + l.keys_out);
    auto* values_in = reinterpret_cast<S*>(ws + l.values_in);
    auto* values_out = reinterpret_cast<S*>(ws + l.values_out);
    gpuError_t e = ClearHeader(ws, stream);
    if (e != gpuSuccess) return e;
    const int64_t per = std::max<int64_t>(vec / int64_t(sizeof(S)), 1);
    const int64_t work = std::max(p.n, p.in_place ? 0 : p.data_n / per);
    if (fast) {
      PairsKernel<T, I, true><<<Blocks(work, copy.block), copy.block, 0, stream>>>(p, g, !p.in_place, vec, word,
                                                                                  keys_in, values_in);
    } else {
      PairsKernel<T, I, false><<<Blocks(work, copy.block), copy.block, 0, stream>>>(p, g, !p.in_place, vec, word,
                                                                                   keys_in, values_in);
    }
    e = gpuGetLastError();
    if (e == gpuSuccess && p.n > 0) {
      size_t temp_bytes = l.temp_bytes;
      // One pass over the top bits (keys of bad positions, all ones, land last).
      e = gpu::SortPairs(ws + l.temp, temp_bytes, keys_in, keys_out, values_in, values_out, p.n, bits, stream,
                         begin);
    }
    if (e != gpuSuccess) return e;
    ApplyKernel<T, I><<<Blocks(std::max<int64_t>(p.n, 1), block), block, 0, stream>>>(p, keys_out, values_out,
                                                                                      word, slot);
    return gpuGetLastError();
  });
}

}  // namespace opsched::scatter::gpu_kernels
