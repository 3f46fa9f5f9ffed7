// The privatized scatter for a small contiguous out: every block keeps a private copy
// of out in shared memory and merges it into a global buffer once; a final pass writes
// out. For none, (position + 1, value) packed in 64 bits and combined with max make the
// last update in row-major order win.
#include <type_traits>

#include "ops/scatter/scatter_cuda_common.cuh"

namespace opsched::scatter::gpu_kernels {
namespace {

using Key = unsigned long long;

__device__ __forceinline__ Key PackKey(int64_t position, float value) {
  return (Key(position + 1) << 32) | __float_as_uint(value);
}

template <bool kNone>
__global__ void InitKernel(void* acc, int64_t n, float identity, WorkspaceHeader* header) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    if constexpr (kNone) {
      static_cast<Key*>(acc)[i] = 0;
    } else {
      static_cast<float*>(acc)[i] = identity;
    }
  }
  if (i == 0) {
    header->bad = 0;
    header->blocks_done = 0;
  }
}

template <typename T, typename I, bool kFast32, bool kNone>
__global__ void PrivatizedKernel(Params p, Geometry g, void* acc, Word* word) {
  using S = typename T::Storage;
  using Acc = std::conditional_t<kNone, Key, float>;
  extern __shared__ Key shared_raw[];
  Acc* local = reinterpret_cast<Acc*>(shared_raw);
  const float identity = Identity(p.reduction);
  for (int64_t t = threadIdx.x; t < p.data_n; t += blockDim.x) {
    if constexpr (kNone) {
      local[t] = 0;
    } else {
      local[t] = identity;
    }
  }
  __syncthreads();
  const I* __restrict__ indices = static_cast<const I*>(p.indices);
  const S* __restrict__ updates = static_cast<const S*>(p.updates);
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  bool bad = false;
  for (int64_t pos = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; pos < p.n; pos += stride) {
    const Location l = Locate<kFast32>(p, g, pos);
    int64_t index;
    if (!Normalise(static_cast<int64_t>(indices[l.index_offset]), p.axis_size, &index)) {
      if (!bad) RecordBad(word, pos);
      bad = true;
      continue;
    }
    const int64_t t = l.out_base + index * l.axis_stride;
    const float v = T::Load(updates[l.update_offset]);
    if constexpr (kNone) {
      atomicMax(&local[t], PackKey(pos, v));
    } else {
      AtomicCombine(&local[t], v, p.reduction);
    }
  }
  __syncthreads();
  const unsigned int identity_bits = __float_as_uint(identity);
  for (int64_t t = threadIdx.x; t < p.data_n; t += blockDim.x) {
    if constexpr (kNone) {
      if (local[t] != 0) atomicMax(&static_cast<Key*>(acc)[t], local[t]);
    } else {
      if (__float_as_uint(local[t]) != identity_bits) AtomicCombine(&static_cast<float*>(acc)[t], local[t], p.reduction);
    }
  }
}

template <typename T, typename I, bool kNone>
__global__ void FinalizeKernel(Params p, const void* acc, const Word* word, ErrorSlot slot) {
  using S = typename T::Storage;
  const Word bad = *word;
  if (bad != 0) {
    if (blockIdx.x == 0 && threadIdx.x == 0) ReportBad<I>(p, bad, slot);
    return;
  }
  const S* __restrict__ data = static_cast<const S*>(p.data);
  S* __restrict__ out = static_cast<S*>(p.out);
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < p.data_n; t += stride) {
    if constexpr (kNone) {
      const Key key = static_cast<const Key*>(acc)[t];
      if (key != 0) out[t] = T::Store(__uint_as_float(static_cast<unsigned int>(key)));
      else if (!p.in_place) out[t] = data[t];
    } else {
      out[t] = T::Store(Combine(p.reduction, T::Load(data[t]), static_cast<const float*>(acc)[t]));
    }
  }
}

template <bool kNone>
gpuError_t Launch(const Params& p, int block, int blocks_per_sm, int sm_count, void* workspace, ErrorSlot slot,
                  gpuStream_t stream) {
  auto* header = static_cast<WorkspaceHeader*>(workspace);
  void* acc = static_cast<char*>(workspace) + kWordBytes;
  const size_t shared = PrivatizedSharedBytes(p);
  InitKernel<kNone><<<Blocks(p.data_n, 256), 256, 0, stream>>>(acc, p.data_n, Identity(p.reduction), header);
  gpuError_t err = gpuGetLastError();
  if (err != gpuSuccess) return err;
  const Geometry g = MakeGeometry(p);
  const bool fast = UseFast32(p);
  const unsigned int grid = static_cast<unsigned int>(std::max(1, sm_count * blocks_per_sm));
  return VisitTypes(p, [&]<typename T, typename I>() {
    auto kernel = fast ? PrivatizedKernel<T, I, true, kNone> : PrivatizedKernel<T, I, false, kNone>;
    gpuError_t e = AllowSharedMemory(reinterpret_cast<const void*>(kernel), shared);
    if (e != gpuSuccess) return e;
    kernel<<<grid, block, shared, stream>>>(p, g, acc, &header->bad);
    e = gpuGetLastError();
    if (e != gpuSuccess) return e;
    FinalizeKernel<T, I, kNone><<<Blocks(p.data_n, 256), 256, 0, stream>>>(p, acc, &header->bad, slot);
    return gpuGetLastError();
  });
}

}  // namespace

size_t PrivatizedSharedBytes(const Params& p) {
  return static_cast<size_t>(p.data_n) * (p.reduction == Reduction::kNone ? sizeof(Key) : sizeof(float));
}

size_t PrivatizedWorkspaceBytes(const Params& p) { return kWordBytes + PrivatizedSharedBytes(p); }

gpuError_t LaunchPrivatized(const Params& p, int block, int blocks_per_sm, int sm_count, void* workspace,
                            ErrorSlot slot, gpuStream_t stream) {
  return p.reduction == Reduction::kNone ? Launch<true>(p, block, blocks_per_sm, sm_count, workspace, slot, stream)
                                         : Launch<false>(p, block, blocks_per_sm, sm_count, workspace, slot, stream);
}

}  // namespace opsched::scatter::gpu_kernels
