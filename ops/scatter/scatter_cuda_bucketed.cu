// The bucketed scatter: (target, update) pairs are partitioned by the top bits of the
// target with one radix-sort pass, then applied in that order. Stretches of consecutive
// writes fall in one bucket, an L2-sized window of out, so scattered writes are merged
// in L2 instead of each costing a read-modify-write of device memory. The updates travel
// through the sort as they are stored (2, 4 or 8 bytes: f16/bf16, f32/i32, i64). With the
// `windows` knob, out of place over contiguous tensors, each window of out is copied from
// data just before its bucket is applied (scatter_bucket_windows.cuh); otherwise data is
// copied first, with the pairs.
#include "core/gpu/device_algorithms.cuh"
#include "ops/scatter/scatter_bucket_windows.cuh"
#include "ops/scatter/scatter_cuda_common.cuh"

namespace opsched::scatter::gpu_kernels {
namespace {

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
  size_t at = kWordBytes + align(sizeof(Schedule));  // the header, then the windows' schedule
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

// kWindowed: also counts each bucket's pairs, and the last block lays out the windows'
// schedule (no copy then: the windowed apply copies).
template <typename T, typename I, bool kFast32, bool kWindowed>
__global__ void PairsKernel(Params p, Geometry g, bool copy, int vector_bytes, Windows w, WorkspaceHeader* header,
                            Schedule* schedule, uint32_t* keys, typename T::Storage* values) {
  using S = typename T::Storage;
  __shared__ uint32_t hist[kWindowed ? kMaxWindows : 1];
  if constexpr (kWindowed) {
    for (int b = threadIdx.x; b < w.count; b += blockDim.x) hist[b] = 0;
    __syncthreads();
  }
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t tid = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const I* __restrict__ indices = static_cast<const I*>(p.indices);
  const S* __restrict__ updates = static_cast<const S*>(p.updates);
  bool bad = false;
  for (int64_t pos = tid; pos < p.n; pos += stride) {
    const Location l = Locate<kFast32>(p, g, pos);
    int64_t index;
    if (Normalise(static_cast<int64_t>(indices[l.index_offset]), p.axis_size, &index)) {
      const auto key = static_cast<uint32_t>(l.out_base + index * l.axis_stride);
      keys[pos] = key;
      values[pos] = updates[l.update_offset];
      if constexpr (kWindowed) atomicAdd(&hist[key >> w.begin], 1u);
    } else {
      keys[pos] = kSkipKey;
      if (!bad) RecordBad(&header->bad, pos);
      bad = true;
    }
  }
  if constexpr (kWindowed) {
    FlushCounts(w, hist, schedule);
    LayOutIfLast(w, p.data_n, header, schedule);
  } else if (copy) {
    CopyGrid<T>(p, vector_bytes, tid, stride);
  }
}

template <typename T, typename I>
__global__ void ApplyKernel(Params p, const uint32_t* keys, const typename T::Storage* values, const Word* word,
                            ErrorSlot slot) {
  const Word bad = *word;
  if (bad != 0) {
    if (blockIdx.x == 0 && threadIdx.x == 0) ReportBad<I>(p, bad, slot);
    return;
  }
  ApplyPairs<T>(static_cast<typename T::Storage*>(p.out), p.reduction, keys, values, 0, p.n, int64_t(blockIdx.x) * blockDim.x + threadIdx.x,
                int64_t(gridDim.x) * blockDim.x);
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

// The windows of an out-of-place scatter over contiguous tensors; count 0 where the
// windowed apply does not serve (then data is copied first).
Windows WindowsFor(const Params& p, int begin, int vector_bytes, int copy_block, int block, int elem_bytes) {
  Windows w;
  if (p.in_place || !p.fast || p.n == 0 || p.data_n == 0 || begin < 4) return w;
  w.begin = begin;
  w.window = int64_t(1) << begin;
  w.count = static_cast<int>((p.data_n + w.window - 1) / w.window);
  if (w.count > kMaxWindows) return Windows{};
  w.copy_tile = int64_t(copy_block) * kCopyVectors * std::max(vector_bytes / elem_bytes, 1);
  w.apply_tile = int64_t(block) * kApplyItems;
  return w;
}

gpuError_t LaunchBucketed(const Params& p, const CopyConfig& copy, int bucket_bits, int block, bool windows,
                          void* workspace, size_t workspace_bytes, ErrorSlot slot, gpuStream_t stream) {
  const int bits = TargetBits(p);
  const int begin = std::max(0, bits - bucket_bits);
  const Geometry g = MakeGeometry(p);
  const bool fast = UseFast32(p);
  const int vec = VectorBytes(p, copy.vector_bytes);
  return VisitTypes</*kIntegers=*/true>(p, [&]<typename T, typename I>() {
    using S = typename T::Storage;
    const Windows w = windows ? WindowsFor(p, begin, vec, copy.block, block, sizeof(S)) : Windows{};
    const BucketedLayout l = LayoutFor<S>(p);
    if (workspace_bytes < l.total) return gpuErrorMemoryAllocation;
    char* ws = static_cast<char*>(workspace);
    auto* header = reinterpret_cast<WorkspaceHeader*>(ws);
    auto* schedule = reinterpret_cast<Schedule*>(ws + kWordBytes);
    auto* keys_in = reinterpret_cast<uint32_t*>(ws + l.keys_in);
    auto* keys_out = reinterpret_cast<uint32_t*>(ws + l.keys_out);
    auto* values_in = reinterpret_cast<S*>(ws + l.values_in);
    auto* values_out = reinterpret_cast<S*>(ws + l.values_out);
    const bool windowed = w.count > 0;
    gpuError_t e = windowed ? gpuMemsetAsync(ws, 0, kWordBytes + sizeof(Schedule), stream) : ClearHeader(ws, stream);
    if (e != gpuSuccess) return e;
    const int64_t per = std::max<int64_t>(vec / int64_t(sizeof(S)), 1);
    const int64_t work = windowed ? p.n : std::max(p.n, p.in_place ? 0 : p.data_n / per);
    // Windowed, each block adds its counts to the schedule once: a grid of at most 2048
    // blocks (with a block per 256 pairs, 65536 blocks flushing up to 256 counts each, the
    // windowed scatter was slower than the kernel without windows on every line).
    const unsigned grid = Blocks(work, copy.block, windowed ? 2048 : int64_t(1) << 20);
    const bool copy_first = !p.in_place && !windowed;
    auto pairs = [&]<bool kFast32, bool kWindowed>() {
      PairsKernel<T, I, kFast32, kWindowed><<<grid, copy.block, 0, stream>>>(p, g, copy_first, vec, w, header,
                                                                            schedule, keys_in, values_in);
    };
    if (windowed) {
      fast ? pairs.template operator()<true, true>() : pairs.template operator()<false, true>();
    } else {
      fast ? pairs.template operator()<true, false>() : pairs.template operator()<false, false>();
    }
    e = gpuGetLastError();
    if (e == gpuSuccess && p.n > 0) {
      size_t temp_bytes = l.temp_bytes;
      // One pass over the top bits (keys of bad positions, all ones, land last).
      e = gpu::SortPairs(ws + l.temp, temp_bytes, keys_in, keys_out, values_in, values_out, p.n, bits, stream,
                         begin);
    }
    if (e != gpuSuccess) return e;
    if (windowed) {
      // Tickets beyond the schedule's last tile leave at once: every copy tile, and at
      // most one partial apply tile a bucket beyond n / apply_tile.
      int64_t tiles = (p.n + w.apply_tile - 1) / w.apply_tile + w.count;
      for (int b = 0; b < w.count; ++b) tiles += CopyTiles(w, p.data_n, b);
      WindowedApplyKernel<T, I><<<static_cast<unsigned>(tiles), block, 0, stream>>>(p, w, vec, keys_out, values_out,
                                                                                   header, schedule, slot);
    } else {
      ApplyKernel<T, I><<<Blocks(std::max<int64_t>(p.n, 1), block), block, 0, stream>>>(p, keys_out, values_out,
                                                                                        &header->bad, slot);
    }
    return gpuGetLastError();
  });
}

}  // namespace opsched::scatter::gpu_kernels
