// Batch-norm inference as a pointwise program: the chain that the batchnorm
// implementations (pointwise_cpu_batchnorm, pointwise_cuda_batchnorm) run with no
// bytecode and with a channel's statistics read once per run of its elements:
//
//   out = act((x - m) * rsqrt(v + eps) * g + b)
//
// m, v (with its rsqrt), g and b are each optional, at least one present: the folded
// forms act(x * s + b), a per-channel bias act(x + b) or scale x * g are the same chain,
// and g may enter as sigmoid(g): a squeeze-excite gate x * sigmoid(s), s per image and
// channel ([N,C,1,1] against NCHW: N*C channels).
// act is none, relu (or max with 0), gelu, gelu_tanh, silu, sigmoid or tanh. x has the
// outputs' shape, dtype and layout (contiguous); m, v, g and b are per channel: each
// varies along one dimension of the iteration shape, the same one for all, contiguously
// ([C,1,1] against NCHW, [C] against channels-last), or is one element; fewer channels
// than elements, at most kMaxBatchNormChannels. Statistics may have their own dtype (bf16
// activations with f32 statistics).
//
// The kernels compute s = g * rsqrt(v + eps) and y = (x - m) * s + b per element, in f32,
// each operation rounded (no fused multiply-add), as the interpreter does when the
// program's factors are in that order; the activation as pointwise_math.h's.
#pragma once

#include <cstdint>

#include "core/status.h"
#include "core/workload.h"
#include "ops/pointwise/pointwise_bytecode.h"

namespace opsched::pointwise {

struct Compiled;

struct BatchNormPlan {
  enum Param { kMean = 0, kVar = 1, kScale = 2, kShift = 3 };
  int x = -1;                        // the input number of x
  int param[4] = {-1, -1, -1, -1};   // of m, v, g, b; -1 where absent
  float eps = 0;
  OpCode act = OpCode::kCastF32;     // kCastF32: none
  int64_t numel = 0;
  // Element i of the iteration belongs to channel (i / inner) % channels.
  int64_t channels = 1;
  int64_t inner = 1;
  int channel_stride[4] = {};        // 1: param k per channel; 0: one element (or absent)
  bool gate = false;                 // g enters as sigmoid(g) (a squeeze-excite gate)
};

// The most channels a plan takes (the CPU implementation tabulates their statistics).
inline constexpr int64_t kMaxBatchNormChannels = int64_t(1) << 20;

// The plan of a compiled program, or why the batchnorm implementations cannot run it.
StatusOr<BatchNormPlan> PlanBatchNorm(const Compiled& c);
// The same for a canonical workload (its compiled form is cached).
StatusOr<BatchNormPlan> BatchNormPlanFor(const Workload& canonical);

}  // namespace opsched::pointwise
