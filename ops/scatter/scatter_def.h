// The scatter op (ONNX ScatterElements / torch.scatter and scatter_reduce):
//   out = data; for every position p of indices:
//     out[p with p[axis] = indices[p]] (reduction)= updates[p]
// Workload: scatter data=f32[..] indices=i64[..] updates=f32[..] axis=0 reduction=none
#pragma once

#include <string_view>

#include "core/status.h"
#include "core/workload.h"
#include "ops/scatter/scatter_params.h"

namespace opsched::scatter {

std::string_view ReductionName(Reduction r);  // "none", "add", "mul", "min", "max"
StatusOr<Reduction> ParseReduction(std::string_view name);

// "scatter: index 1032 at position [3,0,1] is out of range [-1000,1000) of axis 0", marked
// as a data error (core/data_error.h).
Status OutOfRangeError(const Workload& canonical, int64_t position, int64_t value);

// The check's error for target `target` (row-major in data) holding `got` where
// `allowed` was expected, hit by `count` updates.
Status MismatchError(const TensorDesc& data, int64_t target, double got, std::string_view allowed,
                     int64_t count);

// Kernel parameters of a canonical scatter workload (pointers left null).
Params MakeParams(const Workload& canonical);
// Normalises a (possibly negative) index against the axis size; false when out of range.
inline bool NormaliseIndex(int64_t index, int64_t axis_size, int64_t* out) {
  if (index < -axis_size || index >= axis_size) return false;
  *out = index < 0 ? index + axis_size : index;
  return true;
}

}  // namespace opsched::scatter
