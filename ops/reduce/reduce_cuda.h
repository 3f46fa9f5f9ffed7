// Reduce kernels on the GPU (own kernels compile for CUDA and HIP; the CUB ones for CUDA
// only). Launchers queue work on a stream and return the launch error; none
// synchronises the host. Own kernels need fewer than 2^31 outputs and terms.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/gpu/portability.h"
#include "core/launch_shape.h"
#include "ops/reduce/reduce_params.h"

namespace opsched::reduce::gpu_kernels {

inline constexpr int64_t kMaxExtent = (int64_t(1) << 31) - 1;

// Rows (the innermost reduced dimension is contiguous): `group` threads share an output
// (or one `split`-th of its terms), loading `vector` contiguous elements at a time;
// groups of <= 32 threads reduce with shuffles, larger ones are a whole block. With
// split > 1 the parts go to a workspace [split][M] (float, or int64 for integers) and a
// second kernel combines them in order (deterministic).
struct RowsConfig {
  int group = 32;
  int block = 256;
  int vector = 4;
  int split = 1;
};
// Whether `vector` elements at a time stay inside rows and aligned (pointer alignment is
// checked at launch, falling back to single elements).
bool RowsVectorFits(const Problem& p, int vector);
gpuError_t LaunchRows(const Problem& p, const RowsConfig& c, void* workspace, gpuStream_t stream);
// The rows kernel's grid (Implementation::MainLaunch), x taken as aligned.
LaunchShape RowsLaunch(const Problem& p, const RowsConfig& c);

// Columns (any layout; coalesced when the innermost kept dimension is contiguous): a block of block_x * block_y
// threads; block_x threads over neighbouring outputs (`vector` each), block_y over
// terms, combined through shared memory in a fixed order; `split` as for rows.
struct ColumnsConfig {
  int block_x = 32;
  int block_y = 8;
  int vector = 4;
  int split = 1;
};
bool ColumnsVectorFits(const Problem& p, int vector);
// With `finish` false and split > 1 the partials stay in the workspace ([split][M]
// floats) for the caller to combine; y is not written.
gpuError_t LaunchColumns(const Problem& p, const ColumnsConfig& c, void* workspace, gpuStream_t stream,
                         bool finish = true);
LaunchShape ColumnsLaunch(const Problem& p, const ColumnsConfig& c);

// Integers (i32, i64 in; sum, max, min; int64 accumulator): `group` threads per output
// stride over its terms and combine in a fixed order, in blocks of `block` threads (the
// group itself when above 32). `columns`: neighbouring threads take neighbouring outputs
// (coalesced where the innermost kept dimension is contiguous; lanes combined through
// shared memory), else neighbouring terms (shuffles). With split > 1 the terms are cut
// into `split` parts whose int64 partials [split][M] (the workspace) a second kernel
// combines in order.
struct IntegerConfig {
  int group = 32;
  int block = 256;
  bool columns = false;
  int split = 1;
};
gpuError_t LaunchInteger(const Problem& p, const IntegerConfig& c, void* workspace, gpuStream_t stream);

// Workspace of a split reduction (rows, columns, integer): partials [split][M], float or
// int64 for integers.
size_t SplitWorkspaceBytes(const Problem& p, int split);

// CUB's DeviceReduce (everything into one output, contiguous x) and
// DeviceSegmentedReduce (contiguous rows, one per output). Workspace: CUB's temporary
// storage plus a float result when the output needs converting.
size_t CubWorkspaceBytes(const Problem& p, bool segmented);
gpuError_t LaunchCub(const Problem& p, bool segmented, void* workspace, size_t workspace_bytes,
                     gpuStream_t stream);

}  // namespace opsched::reduce::gpu_kernels

namespace opsched::reduce::gpu_kernels {

// Staged (rows whose terms are several runs, e.g. an NCHW bias gradient): first the
// columns kernel sums over every reduced dimension but the innermost, into a float
// buffer [M][row] (coalesced: neighbouring threads read neighbouring elements of the
// runs), then the rows kernel reduces that buffer's rows. With split > 1 the first
// stage leaves [split][M][row] partials and the second reduces them with the rows (one
// kernel less). Workspace: the buffer or the partials.
bool StagedApplies(const Problem& p);
// Whether the first stage loads `vector` neighbouring elements at once.
bool StagedVectorFits(const Problem& p, int vector);
size_t StagedWorkspaceBytes(const Problem& p, int split);
gpuError_t LaunchStaged(const Problem& p, const ColumnsConfig& first, int group, void* workspace,
                        gpuStream_t stream);
// The first stage's grid (the columns kernel over the runs).
LaunchShape StagedLaunch(const Problem& p, const ColumnsConfig& first);

}  // namespace opsched::reduce::gpu_kernels
