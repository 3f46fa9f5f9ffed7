// The conv2d op family: three ops over one problem (ops/conv2d/conv2d_params.h).
//   conv2d          x=f32[32,64,56,56] w=f32[64,64,3,3] stride=1,1 pad=1,1 dilation=1,1
//                   groups=1 layout=nchw math=fp32                         -> y
//   conv2d_bias_act the same plus b=f32[K] act=relu                       -> y
//   conv2d_backward the same plus dy=f32[N,K,P,Q]                         -> dx, dw
// Run receives tensors in these orders: conv2d (x, w, y); conv2d_bias_act (x, w, b, y);
// conv2d_backward (x, w, dy, dx, dw). Attributes default to stride 1,1, pad 0,0,
// dilation 1,1, groups 1, layout nchw, math fp32, act identity. The backward bias
// gradient is the reduce family's (Runtime::BiasGrad).
#pragma once

#include <string_view>

#include "absl/types/span.h"
#include "core/status.h"
#include "core/tensor.h"
#include "core/workload.h"
#include "ops/conv2d/conv2d_params.h"

namespace opsched::conv2d {

// "conv2d", "conv2d_bias_act", "conv2d_backward".
std::string_view OpName(Kind kind);
std::string_view ActivationName(Activation act);  // "identity", "relu", "sigmoid", "tanh"
StatusOr<Activation> ParseActivation(std::string_view name);

// `strides` of a tensor in `layout`'s dimension order (nchw or nhwc; kcrs or krsc for
// filters), permuted into logical (n, c, h, w) / (k, c, r, s) order as Problem keeps them.
void LogicalStrides(Layout layout, absl::Span<const int64_t> strides, int64_t out[4]);

// The problem of a canonical conv2d-family workload, pointers null.
Problem MakeProblem(const Workload& canonical);
// The problem with its pointers taken from Run's tensors (in the orders above).
Problem MakeProblem(const Workload& canonical, absl::Span<const Tensor> tensors);
// `p` (made by MakeProblem(canonical)) with its pointers taken from `tensors`: what a
// prepared implementation does per call instead of parsing the workload again.
Problem WithTensors(Problem p, absl::Span<const Tensor> tensors);

}  // namespace opsched::conv2d
