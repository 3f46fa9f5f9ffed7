// The pointwise op: outputs computed elementwise from named inputs by a small program,
// with broadcasting (numpy/PyTorch rules, to the outputs' shape), f32 math and f32,
// f16 or bf16 tensors.
//   pointwise a=f32[64,1024] b=f32[1024] out=f32[64,1024] expr="relu(a+b)*0.5"
// Canonical form: inputs in name order, then expr (normalised; every output assigned,
// in name order), shape (the outputs'), and one `name=dtype` attribute per output:
//   pointwise a=f32[64,1024] b=f32[1024] expr="out=0.5*relu(a+b)" shape=64,1024 out=f32
// Tensors handed to Run: inputs, then outputs, each in name order.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/close_bound.h"
#include "core/status.h"
#include "core/workload.h"
#include "ops/pointwise/pointwise_accumulator.h"
#include "ops/pointwise/pointwise_bytecode.h"
#include "ops/pointwise/pointwise_expr.h"
#include "ops/pointwise/pointwise_hoist.h"

namespace opsched::pointwise {

// What every implementation needs of a canonical workload, built once and cached.
struct Compiled {
  Program program;
  Bytecode bytecode;
  AccCode accumulator;  // the bytecode in accumulator form
  std::vector<TensorDesc> inputs;
  std::vector<TensorDesc> outputs;
  // The program with its subexpressions over fewer dimensions hoisted into first passes
  // (pointwise_hoist.h); nullopt where none is worth it.
  std::optional<Hoisted> hoisted;
};

// The compiled form of a canonical pointwise workload (cached by workload; thread-safe).
StatusOr<std::shared_ptr<const Compiled>> CompiledFor(const Workload& canonical);
// The same where it has a hoisted form (the hoisted implementations apply), else why not.
StatusOr<std::shared_ptr<const Compiled>> HoistedOf(const Workload& canonical);

// The workspace of the unfused baselines (CPU and CUDA): one f32 buffer of every element
// per bytecode slot.
inline size_t UnfusedWorkspaceBytes(const Bytecode& bc) {
  return static_cast<size_t>(bc.num_slots) * static_cast<size_t>(bc.numel) * sizeof(float);
}

// The inputs that feed a log, sqrt, rsqrt or a divisor: Generate draws them positive,
// in [kPositiveLow, kInputHigh), and the others in [kInputLow, kInputHigh) (on the host
// and on the device alike).
std::set<std::string> PositiveInputs(const Program& p);
inline constexpr double kInputLow = -2.0;
inline constexpr double kPositiveLow = 0.1;
inline constexpr double kInputHigh = 2.0;

// The check's error for element `index` of output number `output` (on the host and on
// the device alike): "pointwise: OUT[i] is GOT, expected WANT within TOL (EXPR)".
Status MismatchError(const Program& p, size_t output, int64_t index, double got, double want, double tolerance);

// The check's tolerance for an output of dtype `out`: |got - want| <= 2 * bound + rounding
// of the output, where bound is the element's first-order error estimate of f32
// evaluation (see docs/ops/pointwise.md).
CloseBound CheckBound(DType out);

}  // namespace opsched::pointwise
