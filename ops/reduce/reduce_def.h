// The reduce op family: sum, mean, max, min and sum of squares over any set of axes of a
// tensor of rank <= 6 with any strides, keepdims or not, f32 accumulation.
//   reduce x=f32[128,16,28,28] axes=0,2,3 op=sum keepdims=false
// Attributes: axes (default: all), op (default sum), keepdims (default false), dtype
// (the output's: x's own, or f32; written only when it differs from x's).
#pragma once

#include <string_view>

#include "core/close_bound.h"
#include "core/status.h"
#include "core/workload.h"
#include "ops/reduce/reduce_params.h"

namespace opsched::reduce {

std::string_view OpName(ReduceOp op);  // "sum", "mean", "max", "min", "sumsq"
StatusOr<ReduceOp> ParseOp(std::string_view name);

// The reduced axes of a canonical workload as a bit mask over x's dimensions.
uint32_t ReducedAxisMask(const Workload& canonical);
// Terms summed into each output of a canonical workload (0 when there is no output).
int64_t Terms(const Workload& canonical);
// The check's tolerance (OpDef::Check, and the device check): magnitude is the sum of
// the |terms| of an output (of their squares for sumsq).
CloseBound CheckBound(const Workload& canonical);
// The check's error for output i.
Status MismatchError(const CloseBound& bound, int64_t i, double got, double want, double magnitude, int64_t terms);

// The canonical (outputs x terms) problem of a canonical reduce workload (pointers null).
Problem MakeProblem(const Workload& canonical);

}  // namespace opsched::reduce
