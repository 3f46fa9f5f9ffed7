// Batch-norm inference as a pointwise program: the chain that the batchnorm
// implementations (pointwise_cpu_batchnorm, pointwise_cuda_batchnorm) run with no
// bytecode and with a channel's statistics read once per run of its elements:
//
//   out = clamps(act((x - m) * rsqrt(v + eps) * g + b))
//
// m, v (with its rsqrt), g and b are each optional, at least one present: the folded
// forms act(x * s + b), a per-channel bias act(x + b) or scale x * g are the same chain,
// and g may enter as sigmoid(g): a squeeze-excite gate x * sigmoid(s), s per image and
// channel ([N,C,1,1] against NCHW: N*C channels).
// act is none, relu, gelu, gelu_tanh, silu, sigmoid or tanh; then up to two clamps, a
// max or min with a constant each (max(y, 0), ReLU6's max(0, min(y, 6)), hardtanh).
// Where the program itself is not of this form, its hoisted main program
// (pointwise_hoist.h) may be: a per-channel factor computed from per-channel tensors
// (0.5 * rsqrt(g * g + 1e-5)) is then one of m, v, g, b, written by the hoisting's first
// pass into workspace, and the implementations run that pass first. x has the
// outputs' shape, dtype and layout (contiguous); m, v, g and b are per channel: each
// varies along one dimension of the iteration shape, the same one for all, contiguously
// ([C,1,1] against NCHW, [C] against channels-last), or is one element; fewer channels
// than elements, at most kMaxBatchNormChannels. Statistics may have their own dtype (bf16
// activations with f32 statistics).
//
// The kernels compute s = g * rsqrt(v + eps) and y = (x - m) * s + b per element, in f32,
// each operation rounded (no fused multiply-add), as the interpreter does when the
// program's factors are in that order; the activation and the clamps as
// pointwise_math.h's. The product may hold one constant factor c as well (0.5 * (x - b) *
// s, as a canonical program orders it): folded into the channel's scale, c * s, so that
// form rounds its product in another order than the interpreter (within the check's
// bound). The product may be divided by a constant d as well (a hard-sigmoid squeeze-excite
// scale x * min(max(s + 3, 0), 6) / 6): folded likewise, the factor c / d.
#pragma once

#include <cstdint>

#include "core/status.h"
#include "core/workload.h"
#include "ops/pointwise/pointwise_batchnorm_math.h"
#include "ops/pointwise/pointwise_bytecode.h"
#include "ops/pointwise/pointwise_expr.h"

namespace opsched::pointwise {

struct Compiled;

struct BatchNormPlan {
  enum Param { kMean = 0, kVar = 1, kScale = 2, kShift = 3 };
  int x = -1;                        // the input number of x
  int param[4] = {-1, -1, -1, -1};   // of m, v, g, b; -1 where absent
  float eps = 0;
  float factor = 1;                  // a constant factor over a constant divisor, folded into the scale
  OpCode act = OpCode::kCastF32;     // kCastF32: none
  int64_t numel = 0;
  // Element i of the iteration belongs to channel (i / inner) % channels.
  int64_t channels = 1;
  int64_t inner = 1;
  int channel_stride[4] = {};        // 1: param k per channel; 0: one element (or absent)
  bool gate = false;                 // g enters as sigmoid(g) (a squeeze-excite gate)
  Bound bound[kMaxBounds];           // clamps after act, the inner one first
  // The plan is of the hoisted main program (Compiled::hoisted): its inputs are the
  // workload's, then the hoisted values; its first passes run before the kernel.
  bool hoisted = false;
};

// The most channels a plan takes (the CPU implementation tabulates their statistics).
inline constexpr int64_t kMaxBatchNormChannels = int64_t(1) << 20;

// The plan of a program over its bytecode, or why the batchnorm kernels cannot run it.
StatusOr<BatchNormPlan> PlanBatchNorm(const Program& program, const Bytecode& bc);
// The plan of a compiled program: of the program itself, else of its hoisted main
// program (hoisted set), or why the batchnorm implementations cannot run it (the
// program's own reason).
StatusOr<BatchNormPlan> PlanBatchNorm(const Compiled& c);
// The same for a canonical workload (its compiled form is cached).
StatusOr<BatchNormPlan> BatchNormPlanFor(const Workload& canonical);

}  // namespace opsched::pointwise
