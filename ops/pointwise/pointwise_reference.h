// The float64 reference of a pointwise program: each output's tree evaluated in double
// per element, with a first-order bound on how far f32 evaluation may stray from it
// (rounding of every operation, propagated through the later ones by their slopes).
#pragma once

#include <cstdint>
#include <vector>

#include "core/host_tensor.h"
#include "ops/pointwise/pointwise_expr.h"

namespace opsched::pointwise {

struct ReferenceValues {
  std::vector<std::vector<double>> values;  // per output, row-major
  std::vector<std::vector<double>> bounds;  // per output: the error estimate of f32 math
};

// `inputs` in p.inputs order; `shape` the outputs' shape. Elements are independent, so
// `threads` OpenMP threads (0: OpenMP's default, one a core) evaluate pieces of
// kReferenceChunk contiguous elements (cpu::Parallel), with the same bits as one.
inline constexpr int64_t kReferenceChunk = int64_t{1} << 16;
ReferenceValues EvaluateReference(const Program& p, const std::vector<HostTensor>& inputs,
                                  const Dims& shape, bool with_bounds, int threads = 0);

}  // namespace opsched::pointwise
