// The pointwise op's float64 reference on the GPU (registry/device_verification.h):
// every output's expression tree, flattened to postfix nodes (children needing the
// deeper stack first, so a 4,096-node tree needs at most 13 entries), evaluated per
// element in double with its first-order bound by the same RefApply as the host
// reference (pointwise_reference_math.h). One thread per element; inputs are read
// through their own strides, broadcast over the outputs' shape.
#pragma once

#include <cstdint>

#include "core/gpu/portability.h"
#include "core/gpu/verify.h"

namespace opsched::pointwise::gpu_reference {

inline constexpr int kMaxStack = 32;
inline constexpr int kMaxOutputs = 16;

// One postfix node: a load of input `arg` (-1: an unknown name, NaN), a constant
// `value`, or an operation on the top entries. A binary node with `arg` 1 finds its
// first operand on top (its second operand was evaluated first).
struct Node {
  int32_t op = 0;  // OpCode
  int32_t arg = 0;
  double value = 0;
};

struct Problem {
  int32_t rank = 0;
  int64_t shape[gpu::kRefMaxRank] = {};  // the outputs'
  int64_t numel = 0;
  int32_t num_outputs = 0;
  int32_t begin[kMaxOutputs + 1] = {};  // output o's nodes: [begin[o], begin[o+1])
  const gpu::RefTensor* inputs = nullptr;  // device array
  const Node* nodes = nullptr;             // device array
};

// values[o * numel + i] and bounds[o * numel + i]: output o's element i (row-major)
// and the bound on f32 evaluation's error there.
gpuError_t LaunchReference(const Problem& problem, double* values, double* bounds, gpuStream_t stream);

}  // namespace opsched::pointwise::gpu_reference
