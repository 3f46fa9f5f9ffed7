// The pointwise op's float64 GPU reference: see pointwise_cuda_reference.h.
#include <algorithm>

#include "core/gpu/verify_device.cuh"
#include "ops/pointwise/pointwise_cuda_reference.h"
#include "ops/pointwise/pointwise_math.h"
#include "ops/pointwise/pointwise_reference_math.h"

namespace opsched::pointwise::gpu_reference {
namespace {

constexpr int kBlock = 256;

__global__ void ReferenceKernel(Problem pr, double* values, double* bounds) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < pr.numel;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t coord[gpu::kRefMaxRank];
    int64_t rest = i;
    for (int d = pr.rank - 1; d >= 0; --d) {
      coord[d] = rest % pr.shape[d];
      rest /= pr.shape[d];
    }
    for (int o = 0; o < pr.num_outputs; ++o) {
      RefValue stack[kMaxStack];
      int top = 0;
      for (int n = pr.begin[o]; n < pr.begin[o + 1]; ++n) {
        const Node node = pr.nodes[n];
        const OpCode op = static_cast<OpCode>(node.op);
        if (op == OpCode::kLoad) {
          if (node.arg < 0) {
            stack[top++] = {__longlong_as_double(0x7ff8000000000000ll), 0};
            continue;
          }
          // The output's coordinates, right-aligned, clamped to 0 along size-1 dimensions.
          const gpu::RefTensor& t = pr.inputs[node.arg];
          int64_t offset = 0;
          for (int k = 0; k < t.rank; ++k) {
            if (t.shape[k] != 1) offset += coord[pr.rank - t.rank + k] * t.strides[k];
          }
          stack[top++] = {gpu::RefLoadAt(t, offset), 0};
        } else if (op == OpCode::kConst) {
          stack[top++] = RefConst(node.value);
        } else if (IsBinary(op)) {
          const RefValue upper = stack[--top], lower = stack[top - 1];
          stack[top - 1] = node.arg ? RefApply(op, upper, lower) : RefApply(op, lower, upper);
        } else {
          stack[top - 1] = RefApply(op, stack[top - 1], RefValue{0, 0});
        }
      }
      values[o * pr.numel + i] = stack[0].v;
      bounds[o * pr.numel + i] = stack[0].e;
    }
  }
}

}  // namespace

gpuError_t LaunchReference(const Problem& pr, double* values, double* bounds, gpuStream_t stream) {
  if (pr.numel == 0) return gpuSuccess;
  const int blocks = static_cast<int>(std::clamp<int64_t>((pr.numel + kBlock - 1) / kBlock, 1, int64_t(1) << 16));
  ReferenceKernel<<<blocks, kBlock, 0, stream>>>(pr, values, bounds);
  return gpuGetLastError();
}

}  // namespace opsched::pointwise::gpu_reference
