// Scatter kernels on the GPU (CUDA, and HIP from the same source). The launchers queue
// work on a stream and return the launch error; none synchronises the host.
//
// Out-of-range indices: every implementation checks every index on the device. Out of
// place, bad positions are skipped (data is never written); in place, all indices are
// checked before anything is written. The first bad position (row-major) and its value
// reach the caller's ErrorSlot, which stays pending when all indices were good.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/error_slot.h"
#include "core/gpu/portability.h"
#include "ops/scatter/scatter_params.h"

namespace opsched::scatter::gpu_kernels {

// The tuned copy of data into out.
struct CopyConfig {
  int block = 256;        // threads per block
  int vector_bytes = 16;  // bytes per load/store: 4, 8 or 16 (falls back when misaligned)
};

// Bytes reserved at the start of every workspace for the bad-index word and counter.
inline constexpr size_t kWordBytes = 256;

// One block: checks every index, copies data into out when `copy`, then one thread
// applies the updates in row-major order. Deterministic; for a handful of updates.
inline constexpr int64_t kSequentialMaxUpdates = 4096;
gpuError_t LaunchSequential(const Params& p, bool copy, int threads, ErrorSlot slot,
                            gpuStream_t stream);

// Copies data into out only (the sequential path's separate copy).
gpuError_t LaunchCopy(const Params& p, const CopyConfig& copy, gpuStream_t stream);

// One thread per update (`items` updates per thread): atomics for add/mul/min/max, plain
// stores for none. With `pairs` where PairsFit (f16/bf16 add, contiguous, an even inner
// extent) and updates and out are 4-byte aligned, a thread takes neighbouring pairs of
// updates and adds a pair whose indices are equal with one half2/bfloat162 atomic.
// Workspace: kWordBytes.
bool PairsFit(const Params& p);
gpuError_t LaunchParallel(const Params& p, const CopyConfig& copy, int block, int items, bool pairs,
                          void* workspace, ErrorSlot slot, gpuStream_t stream);

// Sort (target, position) pairs with a radix sort, reduce each run of equal targets in
// position order, then apply: deterministic, contention-free on duplicate-heavy adds.
size_t SortedWorkspaceBytes(const Params& p);
gpuError_t LaunchSorted(const Params& p, const CopyConfig& copy, int block, void* workspace,
                        size_t workspace_bytes, ErrorSlot slot, gpuStream_t stream);

// A small contiguous out held privately by every block in shared memory: float
// accumulators for add/mul/min/max; for none (position + 1, value) packed in 64 bits
// and combined with max, so the last update in row-major order wins (deterministic).
// Blocks merge into a global buffer; a final pass writes out.
inline constexpr int64_t kPrivatizedMaxElements = 24576;  // 96 KiB of float accumulators
size_t PrivatizedSharedBytes(const Params& p);
size_t PrivatizedWorkspaceBytes(const Params& p);
gpuError_t LaunchPrivatized(const Params& p, int block, int blocks_per_sm, int sm_count,
                            void* workspace, ErrorSlot slot, gpuStream_t stream);

// Slice-local tiles: a block loads `columns` whole slices of data along the axis into
// shared memory, applies their updates there and writes them back once — the fewest
// bytes any scatter moves, no random writes to device memory. `ordered`: one thread per
// column applies its updates in order (deterministic for every reduction); otherwise
// all threads of the block share the tile's updates with shared-memory atomics (packed
// max for none, so still deterministic for none/min/max).
struct SliceConfig {
  int columns = 32;
  int threads = 256;  // ignored when ordered (a thread per column)
  bool ordered = true;
  // Reduction none with plain shared-memory stores: any competing update wins (not
  // deterministic), half the shared memory of the (position, value) keys.
  bool any_winner = false;
};
inline constexpr size_t kSliceMaxSharedBytes = 160 * 1024;
// Shared memory a tile of `columns` needs; 0 when the workload cannot be tiled.
size_t SliceSharedBytes(const Params& p, int columns, bool any_winner = false);
gpuError_t LaunchSlice(const Params& p, const SliceConfig& config, void* workspace, ErrorSlot slot,
                       gpuStream_t stream);

// Column-privatized scatter-add (f32, i32, i64; axis 0 with nothing outside it, contiguous:
// ColumnsFit): a block adds the updates of `chunks`-th of the rows and `columns`
// neighbouring columns into a shared tile of all out rows of those columns, then adds the
// tile's nonzero elements into out (coalesced reductions). Workspace: kWordBytes.
struct ColumnsConfig {
  int columns = 32;  // a power of two dividing block
  int chunks = 16;   // blocks over the update rows, for each slice of columns
  int block = 512;
};
inline constexpr size_t kColumnsMaxSharedBytes = 160 * 1024;
bool ColumnsFit(const Params& p);
size_t ColumnsSharedBytes(const Params& p, int columns);
gpuError_t LaunchColumns(const Params& p, const CopyConfig& copy, const ColumnsConfig& config, void* workspace,
                         ErrorSlot slot, gpuStream_t stream);
// Bucketed: (target, update) pairs partitioned by the top `bucket_bits` bits of the
// target with one radix-sort pass, then applied in that order, so each stretch of writes
// stays in an L2-sized window of out. For large scatters with random targets.
size_t BucketedWorkspaceBytes(const Params& p);
// `windows`: out of place over contiguous tensors, each window of out is copied just
// before its bucket's updates (scatter_bucket_windows.cuh) instead of all of data first.
gpuError_t LaunchBucketed(const Params& p, const CopyConfig& copy, int bucket_bits, int block, bool windows,
                          void* workspace, size_t workspace_bytes, ErrorSlot slot,
                          gpuStream_t stream);

}  // namespace opsched::scatter::gpu_kernels
