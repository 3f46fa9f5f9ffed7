// The staged reduction: columns over the outer reduced dimensions into a float buffer,
// then rows over the innermost one (see reduce_cuda.h).
#include <algorithm>

#include "ops/reduce/reduce_cuda_common.cuh"

namespace opsched::reduce::gpu_kernels {
namespace {

// Drops size-1 kept dimensions and merges neighbours whose strides allow it.
void MergeKept(Problem* p) {
  int n = 0;
  for (int d = 0; d < p->kept_rank; ++d) {
    if (p->kept_shape[d] == 1) continue;
    if (n > 0 && p->kept_strides[n - 1] == p->kept_strides[d] * p->kept_shape[d]) {
      p->kept_shape[n - 1] *= p->kept_shape[d];
      p->kept_strides[n - 1] = p->kept_strides[d];
    } else {
      p->kept_shape[n] = p->kept_shape[d];
      p->kept_strides[n] = p->kept_strides[d];
      ++n;
    }
  }
  p->kept_rank = n;
}

// Stage one: outputs (m, i) for i along the innermost run, terms over the outer
// reduced dimensions; float results, no final step.
Problem First(const Problem& p, void* buffer) {
  Problem a = p;
  a.op = p.op == ReduceOp::kMean ? ReduceOp::kSum : p.op;
  a.out_type = ElementType::kF32;
  a.scale = 1.0f;
  a.kept_shape[a.kept_rank] = p.row;
  a.kept_strides[a.kept_rank] = 1;
  ++a.kept_rank;
  MergeKept(&a);
  a.reduced_rank = p.reduced_rank - 1;
  a.outputs = p.outputs * p.row;
  a.length = p.length / p.row;
  a.rows = false;
  a.row = 1;
  a.columns = true;
  a.y = buffer;
  return a;
}

// Stage two: the buffer's rows [M][row], or with `split` partials [split][M][row] the
// runs of each output in every part.
Problem Second(const Problem& p, const void* buffer, int split) {
  Problem b = p;
  b.op = p.op == ReduceOp::kSumSquares ? ReduceOp::kSum : p.op;  // terms already squared
  b.in_type = ElementType::kF32;
  b.kept_rank = p.outputs > 1 ? 1 : 0;
  b.kept_shape[0] = p.outputs;
  b.kept_strides[0] = p.row;
  b.reduced_rank = 0;
  if (split > 1) {
    b.reduced_shape[b.reduced_rank] = split;
    b.reduced_strides[b.reduced_rank++] = p.outputs * p.row;
  }
  b.reduced_shape[b.reduced_rank] = p.row;
  b.reduced_strides[b.reduced_rank++] = 1;
  b.length = p.row * split;
  b.rows = true;
  b.columns = false;
  b.x = buffer;
  return b;  // scale stays 1/K of the whole reduction for mean
}

size_t BufferBytes(const Problem& p, int split) {
  return static_cast<size_t>(p.outputs) * p.row * std::max(split, 1) * sizeof(float);
}

}  // namespace

bool StagedApplies(const Problem& p) {
  return p.rows && p.reduced_rank >= 2 && p.length > 0 && p.outputs > 0 && p.outputs * p.row <= kMaxExtent &&
         p.length <= kMaxExtent && p.kept_rank < kMaxRank;
}

bool StagedVectorFits(const Problem& p, int vector) { return ColumnsVectorFits(First(p, nullptr), vector); }

size_t StagedWorkspaceBytes(const Problem& p, int split) { return BufferBytes(p, split); }

LaunchShape StagedLaunch(const Problem& p, const ColumnsConfig& first) {
  return StagedApplies(p) ? ColumnsLaunch(First(p, nullptr), first) : LaunchShape{};
}

gpuError_t LaunchStaged(const Problem& p, const ColumnsConfig& first, int group, void* workspace,
                        gpuStream_t stream) {
  if (!StagedApplies(p)) return gpuErrorInvalidValue;
  float* buffer = static_cast<float*>(workspace);
  const Problem a = First(p, buffer);
  // split 1 writes the buffer as y; more leave their partials in it.
  gpuError_t err = LaunchColumns(a, first, buffer, stream, /*finish=*/false);
  if (err != gpuSuccess) return err;
  const Problem b = Second(p, buffer, first.split);
  const RowsConfig second{group, 256, RowsVectorFits(b, 4) ? 4 : 1, 1};
  return LaunchRows(b, second, nullptr, stream);
}

}  // namespace opsched::reduce::gpu_kernels
