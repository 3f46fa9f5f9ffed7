#include "ops/conv2d/conv2d_reference.h"

#include <algorithm>
#include <cmath>
#include <thread>

#include "core/format.h"
#include "ops/conv2d/conv2d_cpu_kernels.h"
#include "ops/conv2d/conv2d_def.h"

namespace opsched::conv2d {
namespace {

// A tensor's elements as float64, row-major in its own shape.
std::vector<double> Dense(const HostTensor& t) {
  std::vector<double> v(static_cast<size_t>(t.desc().numel()));
  for (int64_t i = 0; i < t.desc().numel(); ++i) v[i] = t.Get(i);
  return v;
}

// The strides of Dense()'s copy of `t` (row-major in its shape), in logical order.
void DenseStrides(Layout layout, const TensorDesc& t, int64_t out[4]) {
  LogicalStrides(layout, TensorDesc::ContiguousStrides(t.shape()), out);
}

int Threads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

}  // namespace

StatusOr<std::vector<std::vector<double>>> ReferenceOutputs(const Problem& problem, const std::vector<HostTensor>& inputs,
                                                            bool magnitudes) {
  Problem p = problem;
  std::vector<std::vector<double>> in;
  for (const HostTensor& t : inputs) in.push_back(Dense(t));
  DenseStrides(p.layout, inputs[0].desc(), p.x_strides);
  DenseStrides(p.layout, inputs[1].desc(), p.w_strides);
  p.x = in[0].data();
  p.wt = in[1].data();
  std::vector<std::vector<double>> out;
  if (p.kind == Kind::kBackward) {
    DenseStrides(p.layout, inputs[2].desc(), p.y_strides);
    p.y = in[2].data();
    out.emplace_back(static_cast<size_t>(p.n * p.c * p.h * p.w));
    out.emplace_back(static_cast<size_t>(p.k * p.channels_per_group() * p.r * p.s));
    p.dx = out[0].data();
    p.dw = out[1].data();
  } else {
    if (p.kind == Kind::kBiasActivation) {
      p.b = in[2].data();
      p.b_stride = 1;
    }
    out.emplace_back(static_cast<size_t>(p.n * p.k * p.p * p.q));
    p.y = out[0].data();
  }
  if (magnitudes) {
    cpu::Run<cpu::F64, double, true>(p, Threads());
  } else {
    cpu::Run<cpu::F64, double, false>(p, Threads());
  }
  return out;
}

int64_t TermsOf(const Problem& p, std::string_view output) {
  if (output == "dx") return p.filters_per_group() * p.r * p.s;
  if (output == "dw") return p.n * p.p * p.q;
  return p.reduction_length() + (p.kind == Kind::kBiasActivation ? 1 : 0);
}

Status MismatchError(const Problem& p, std::string_view op, std::string_view output, int64_t e, double got,
                     double want, double tolerance, double magnitude) {
  return absl::DataLossError(fmt::format("{}: {}[{}] is {}, expected {} within {} (math {}, sum of |products| {})", op,
                                         output, e, got, want, tolerance, p.math == Math::kTf32 ? "tf32" : "fp32",
                                         magnitude));
}

bool TransformsAllowed(const Problem& p) { return p.math != Math::kFp32 || p.r * p.s <= 9; }

CloseBound BoundFor(const Problem& p, DType output, int64_t terms) {
  const double u = std::ldexp(1.0, -24);
  const double t = static_cast<double>(std::max<int64_t>(terms, 1));
  const double gamma = t * u / (1 - std::min(0.5, t * u));
  const double u_out = output == DType::kF16 ? std::ldexp(1.0, -11) : output == DType::kBF16 ? std::ldexp(1.0, -8) : 0.0;
  CloseBound b;
  // Accumulation, tf32 inputs, and for f16/bf16 the roundings of the sum before the
  // bias is added (unfused paths); transforms scale with the tensor's largest magnitude.
  b.per_magnitude = 2 * gamma + (p.math == Math::kTf32 ? 2 * std::ldexp(1.0, -10) : 0.0) + 2 * u_out;
  // Transform errors grow with the filter (Winograd's transform constants, FFT tiles):
  // 1024 u for up to 3x3, times the square of the filter's size relative to 3x3 above.
  const double taps = static_cast<double>(p.r * p.s) / 9.0;
  b.per_max_magnitude = 1024 * u * std::max(1.0, taps * taps);
  b.relative = u_out + 4 * u;
  // f16's subnormal spacing; the activations' f32 evaluation (sigmoid, tanh) within a
  // few ulps of values below 1.
  b.absolute = (output == DType::kF16 ? std::ldexp(1.0, -24) : 0.0) + 8 * u;
  return b;
}

}  // namespace opsched::conv2d
