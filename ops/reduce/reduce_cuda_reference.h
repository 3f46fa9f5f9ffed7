// The reduce op's float64 reference on the GPU (registry/device_verification.h),
// computed from x's own shape and strides (not from the canonical Problem the
// implementations use): output i walks x's kept dimensions row-major, term j its reduced
// dimensions. One thread per output; outputs of very many terms are split over blocks
// whose partial results combine atomically in double.
#pragma once

#include <cstdint>

#include "core/gpu/portability.h"
#include "core/gpu/verify.h"
#include "ops/reduce/reduce_params.h"

namespace opsched::reduce::gpu_reference {

struct Problem {
  gpu::RefTensor x;
  uint32_t mask = 0;  // reduced axes of x
  ReduceOp op = ReduceOp::kSum;
  int64_t outputs = 0;
  int64_t terms = 0;
};

// ref[i]: the reduction in double; magnitude[i]: the sum of |x| (of x^2 for sumsq).
gpuError_t LaunchReference(const Problem& problem, double* ref, double* magnitude, gpuStream_t stream);

}  // namespace opsched::reduce::gpu_reference
