// The conv2d family's float64 reference and the error bound its check allows.
#pragma once

#include <string_view>
#include <vector>

#include "core/close_bound.h"
#include "core/host_tensor.h"
#include "core/status.h"
#include "ops/conv2d/conv2d_params.h"

namespace opsched::conv2d {

// The outputs of `problem` (a canonical workload's; its pointers are ignored) on `inputs`, in
// float64, each row-major in its layout. With `magnitudes`, each output element is
// instead the sum of the magnitudes of the products (and bias) it accumulates.
StatusOr<std::vector<std::vector<double>>> ReferenceOutputs(const Problem& problem, const std::vector<HostTensor>& inputs,
                                                            bool magnitudes);

// The most terms one element of `output` ("y", "dx" or "dw") sums.
int64_t TermsOf(const Problem& problem, std::string_view output);

// A CloseBound (core/close_bound.h):
// |got - want| <= per_magnitude * m + transform * max_m + relative * |want| + absolute,
// with m the sum of |products| (and |bias|) of the element and max_m the largest m of its
// output tensor:
//  - accumulation in f32 in any order: Higham's gamma_T = T u / (1 - T u), doubled;
//  - transform-based algorithms (Winograd, FFT) round in transformed space, where one
//    output's error scales with its whole input tile, not with its own products
//    (measured: cuDNN's winograd_nonfused at 645 u of a 9-term output's own m, far less
//    of max_m): 1024 u of max_m up to 3x3 filters, times (R*S/9)^2 above, where
//    transform constants grow (measured on a 5x5 depthwise 14x14 f32 layer, H100,
//    2026-11-23: winograd_nonfused about 4700 u, a cuDNN graph engine about 1170 u of
//    max_m; the bound there is 7900 u);
//  - tf32: each product's two inputs rounded to a 10-bit mantissa (2^-10 each, which
//    covers truncation as well as rounding);
//  - the output's own rounding (f16, bf16; twice more of m where the sum is rounded
//    before the bias is added) and the activation's f32 evaluation.
// The transform term is CloseBound's per_max_magnitude.
CloseBound BoundFor(const Problem& problem, DType output, int64_t terms);

// Whether transform-based algorithms (Winograd, FFT) may serve `problem`: with
// math=fp32 only for filters up to 3x3. Above, cuDNN's transforms lose more than the
// transform term of BoundFor covers (measured on a 5x5 depthwise layer, H100,
// 2026-11-23: winograd_nonfused at 8000 u of max_m in f32, an FFT graph engine at 4% of
// an f16 output). The cuDNN legacy algorithms and graph engines both ask this.
bool TransformsAllowed(const Problem& problem);

// The check's error for element e of output `output` ("y", "dx", "dw") of op `op`.
Status MismatchError(const Problem& problem, std::string_view op, std::string_view output, int64_t e, double got,
                     double want, double tolerance, double magnitude);

}  // namespace opsched::conv2d
