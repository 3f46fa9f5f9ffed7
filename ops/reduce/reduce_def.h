// The reduce op family: sum, mean, max, min and sum of squares over any set of axes of a
// tensor of rank <= 6 with any strides, keepdims or not, f32 accumulation.
//   reduce x=f32[128,16,28,28] axes=0,2,3 op=sum keepdims=false
// Attributes: axes (default: all), op (default sum), keepdims (default false), dtype
// (the output's: x's own, or f32; written only when it differs from x's).
#pragma once

#include <string_view>

#include "core/status.h"
#include "core/workload.h"
#include "ops/reduce/reduce_params.h"

namespace opsched::reduce {

std::string_view OpName(ReduceOp op);  // "sum", "mean", "max", "min", "sumsq"
StatusOr<ReduceOp> ParseOp(std::string_view name);

// The canonical (outputs x terms) problem of a canonical reduce workload (pointers null).
Problem MakeProblem(const Workload& canonical);

}  // namespace opsched::reduce
