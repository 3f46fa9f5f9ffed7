// The parallel scatter: one thread per update (several with `items`), atomics for the
// reductions, plain stores for none. Out of place, each thread checks its own indices
// and skips bad ones (data is untouched); in place, a check kernel runs first.
#include <cstdint>
#include <type_traits>

#include "core/gpu/visit.h"
#include "ops/scatter/scatter_cuda_common.cuh"

namespace opsched::scatter::gpu_kernels {
namespace {

// kItems updates a thread, a compile-time count so that the arrays below hold exactly
// those; on the 32-bit path a target is 32 bits. (A run-time count over arrays of 8
// 64-bit targets took 40 registers a thread, against 32 in PyTorch's kernel. The i32
// embedding-style scatter-add that motivated this stayed at 0.72x PyTorch on the H100:
// both kernels keep L2 about 92% busy, and the cause is not found.)
// Out of place it is launched as the copy's dependent (LaunchDependent): it reads its
// indices and updates while the copy of data into out may still run, and waits for the
// copy before it touches out or the header (which the copy clears).
// A bad item is a bit of a mask until the wait (an array of flags took the i64 kernel
// of 8 items to 66 registers, beyond the 64 that blocks of 1024 threads allow).
template <typename T, typename I, bool kFast32, bool kInPlace, int kItems>
__global__ void ParallelKernel(Params p, Geometry g, WorkspaceHeader* header, ErrorSlot slot) {
  using S = typename T::Storage;
  using Target = std::conditional_t<kFast32, int32_t, int64_t>;
  if (kInPlace && StopAfterFailedCheck<I>(p, header, slot)) return;
  const I* __restrict__ indices = static_cast<const I*>(p.indices);
  const S* __restrict__ updates = static_cast<const S*>(p.updates);
  S* out = static_cast<S*>(p.out);
  const int64_t base = int64_t(blockIdx.x) * blockDim.x * kItems + threadIdx.x;
  Target target[kItems];
  typename T::Compute value[kItems];
  unsigned bad = 0;  // bit i: item i's index is out of range (out of place)
  // Load every item first (independent loads in flight), then write.
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    target[i] = -1;
    const int64_t pos = base + int64_t(i) * blockDim.x;
    if (pos < p.n) {
      const Location l = Locate<kFast32>(p, g, pos);
      int64_t index;
      if (Normalise(static_cast<int64_t>(LoadOnce(indices + l.index_offset)), p.axis_size, &index)) {
        target[i] = static_cast<Target>(l.out_base + index * l.axis_stride);
        value[i] = T::Load(LoadOnce(updates + l.update_offset));
      } else if constexpr (!kInPlace) {
        bad |= 1u << i;
      }
    }
  }
  gpu::GridDependencyWait();  // the copy into out, and its clearing of the header, are done
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    if (target[i] >= 0) AtomicCombineElement<T>(out + target[i], value[i], p.reduction);
  }
  ReportFirstBad<I>(p, &header->bad, bad, slot, [&](int i) { return base + int64_t(i) * blockDim.x; });
}

// f16/bf16 add on the fast path with an even inner extent (PairsFit): thread items are
// position pairs (2j, 2j + 1) of one inner row, updates read as one 32-bit word. Equal
// indices put the pair on neighbouring targets, 4-byte aligned: one paired atomic (the
// embedding-gradient case, where a row's indices are all equal); else two single ones.
// Out of place it is the copy's dependent launch, as ParallelKernel.
template <typename T, typename I, bool kInPlace>
__global__ void PairedKernel(Params p, Geometry g, int items, WorkspaceHeader* header, ErrorSlot slot) {
  if (kInPlace && StopAfterFailedCheck<I>(p, header, slot)) return;
  const I* __restrict__ indices = static_cast<const I*>(p.indices);
  const uint32_t* __restrict__ updates = static_cast<const uint32_t*>(p.updates);
  uint16_t* out = static_cast<uint16_t*>(p.out);
  constexpr int kMaxItems = 8;
  const int64_t pairs = p.n / 2;
  const int64_t base = int64_t(blockIdx.x) * blockDim.x * items + threadIdx.x;
  int32_t target[kMaxItems][2];  // 32-bit: PairsFit holds only where out's offsets fit
  uint32_t value[kMaxItems];
  unsigned bad = 0;  // bit 2i + e: position e of pair i is out of range (out of place)
#pragma unroll
  for (int i = 0; i < kMaxItems; ++i) {
    target[i][0] = target[i][1] = -1;
    const int64_t pair = base + int64_t(i) * blockDim.x;
    if (i < items && pair < pairs) {
      const int64_t pos = 2 * pair;
      const Location l = Locate<true>(p, g, pos);
      value[i] = LoadOnce(updates + pair);
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        int64_t index;
        if (Normalise(static_cast<int64_t>(LoadOnce(indices + pos + e)), p.axis_size, &index)) {
          target[i][e] = static_cast<int32_t>(l.out_base + e + index * l.axis_stride);
        } else if constexpr (!kInPlace) {
          bad |= 1u << (2 * i + e);
        }
      }
    }
  }
  gpu::GridDependencyWait();  // as ParallelKernel: the copy into out is done
#pragma unroll
  for (int i = 0; i < kMaxItems; ++i) {
    if (target[i][0] >= 0 && target[i][1] == target[i][0] + 1) {
      AtomicAddPair<T>(out + target[i][0], value[i]);
      continue;
    }
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      if (target[i][e] >= 0) {
        AtomicCombineElement<T>(out + target[i][e], T::Load(static_cast<uint16_t>(value[i] >> (16 * e))),
                                Reduction::kAdd);
      }
    }
  }
  ReportFirstBad<I>(p, &header->bad, bad, slot,
                    [&](int b) { return 2 * (base + int64_t(b / 2) * blockDim.x) + b % 2; });
}

}  // namespace

bool PairsFit(const Params& p) {
  const bool half = p.type == ElementType::kF16 || p.type == ElementType::kBF16;
  return half && p.reduction == Reduction::kAdd && p.fast && p.inner % 2 == 0 && UseFast32(p);
}

gpuError_t LaunchParallel(const Params& p, const CopyConfig& copy, int block, int items, bool pairs, void* workspace,
                          ErrorSlot slot, gpuStream_t stream) {
  auto* header = static_cast<WorkspaceHeader*>(workspace);
  const Geometry g = MakeGeometry(p);
  const bool fast = UseFast32(p);
  return VisitTypes<true>(p, [&]<typename T, typename I>() {
    const gpuError_t e = CopyOrCheck<T, I>(p, copy, g, workspace, stream);
    if (e != gpuSuccess) return e;
    // Pairs need 4-byte aligned updates and out (targets of even positions are even).
    const bool aligned = (reinterpret_cast<uintptr_t>(p.updates) | reinterpret_cast<uintptr_t>(p.out)) % 4 == 0;
    if constexpr (sizeof(typename T::Storage) == 2 && !std::is_integral_v<typename T::Compute>) {
      if (pairs && aligned && PairsFit(p)) {
        const unsigned int pair_blocks = Blocks((p.n / 2 + items - 1) / items, block, INT_MAX);
        if (!p.in_place) {
          return LaunchAfterCopy(p, PairedKernel<T, I, false>, pair_blocks, block, 0, stream, p, g, items, header, slot);
        }
        PairedKernel<T, I, true><<<pair_blocks, block, 0, stream>>>(p, g, items, header, slot);
        return gpuGetLastError();
      }
    }
    const unsigned int blocks = Blocks((p.n + items - 1) / items, block, INT_MAX);
    return VisitPow2UpTo8(items, [&]<int kItems>() {
      if (p.in_place) {
        if (fast) {
          ParallelKernel<T, I, true, true, kItems><<<blocks, block, 0, stream>>>(p, g, header, slot);
        } else {
          ParallelKernel<T, I, false, true, kItems><<<blocks, block, 0, stream>>>(p, g, header, slot);
        }
        return gpuGetLastError();
      }
      auto* const kernel = fast ? ParallelKernel<T, I, true, false, kItems> : ParallelKernel<T, I, false, false, kItems>;
      return LaunchAfterCopy(p, kernel, blocks, block, 0, stream, p, g, header, slot);
    });
  });
}

}  // namespace opsched::scatter::gpu_kernels
