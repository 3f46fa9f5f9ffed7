// Scatter kernels on the GPU (CUDA, and HIP from the same source). The launchers queue
// work on a stream and return the launch error; none synchronises the host.
//
// Out-of-range indices: every implementation checks all indices on the device before
// it writes out, records the first bad position in a device word (multi-kernel
// implementations) and reports it through the caller's ErrorSlot; nothing is written
// then (out-of-place calls may have copied data into out).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/error_slot.h"
#include "core/gpu/portability.h"
#include "ops/scatter/scatter_params.h"

namespace opsched::scatter::gpu_kernels {

// The tuned copy of data into out (and the index check that rides along).
struct CopyConfig {
  int block = 256;        // threads per block
  int vector_bytes = 16;  // bytes per load/store: 4, 8 or 16 (falls back when misaligned)
};

// The device word that holds the first bad position; a workspace prefix.
inline constexpr size_t kWordBytes = 256;  // keeps what follows aligned

// One block: checks every index, copies data into out when `copy`, then one thread
// applies the updates in row-major order. Deterministic; for a handful of updates.
gpuError_t LaunchSequential(const Params& p, bool copy, int threads, ErrorSlot slot,
                            gpuStream_t stream);

// Copies data into out only (the sequential path's separate copy).
gpuError_t LaunchCopy(const Params& p, const CopyConfig& copy, gpuStream_t stream);

// One thread per update (`items` updates per thread): atomics for add/mul/min/max,
// plain stores for none. Workspace: kWordBytes.
gpuError_t LaunchParallel(const Params& p, const CopyConfig& copy, int block, int items,
                          void* workspace, ErrorSlot slot, gpuStream_t stream);

// Sort (target, position) pairs with a radix sort, reduce each run of equal targets in
// position order, then apply: deterministic, contention-free on duplicate-heavy adds.
size_t SortedWorkspaceBytes(const Params& p);
gpuError_t LaunchSorted(const Params& p, const CopyConfig& copy, int block, void* workspace,
                        size_t workspace_bytes, ErrorSlot slot, gpuStream_t stream);

// For add/mul/min/max into a small contiguous out: each block accumulates into a
// private copy of out in shared memory (float), blocks merge with atomics into a float
// buffer, a final pass writes out = data (reduction) buffer.
inline constexpr int64_t kPrivatizedMaxElements = 24576;  // 96 KiB of shared memory
size_t PrivatizedWorkspaceBytes(const Params& p);
gpuError_t LaunchPrivatized(const Params& p, int block, int blocks_per_sm, int sm_count,
                            void* workspace, ErrorSlot slot, gpuStream_t stream);

}  // namespace opsched::scatter::gpu_kernels
