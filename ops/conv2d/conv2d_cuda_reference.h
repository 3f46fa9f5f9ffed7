// The conv2d family's float64 reference on the GPU (registry/device_verification.h):
// one thread per output element of y (forward, bias + activation), dx or dw (backward),
// each summing its products in double in the order of the CPU reference
// (conv2d_cpu_kernels.h) and, beside it, the sum of their magnitudes that bounds the
// rounding error of a float computation (conv2d_reference.h). Element e of an output is
// its row-major index in the output's layout shape, as the CPU reference writes it.
#pragma once

#include "core/gpu/portability.h"
#include "ops/conv2d/conv2d_params.h"

namespace opsched::conv2d::gpu_reference {

// The problem's pointers x, wt, b and y (dy) are read; for the forward kinds ref[0] and
// magnitude[0] receive y's, for the backward ref[0]/magnitude[0] dx's and
// ref[1]/magnitude[1] dw's.
gpuError_t LaunchReference(const Problem& problem, double* const ref[2], double* const magnitude[2],
                           gpuStream_t stream);

}  // namespace opsched::conv2d::gpu_reference
