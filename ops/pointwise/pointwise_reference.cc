#include "ops/pointwise/pointwise_reference.h"

#include <omp.h>

#include <cmath>
#include <limits>

#include "core/half.h"
#include "ops/pointwise/pointwise_cpu_loops.h"

namespace opsched::pointwise {
namespace {

constexpr double kU = 0x1p-24;  // f32 unit roundoff

struct Vb {
  double v;
  double e;  // bound on |f32 evaluation - v|
};

struct Evaluator {
  const std::vector<std::string>& names;
  std::vector<double> loaded;  // this element's input values

  Vb Eval(const Expr& x) const {
    switch (x.op) {
      case OpCode::kLoad:
        for (size_t i = 0; i < names.size(); ++i) {
          if (names[i] == x.name) return {loaded[i], 0};
        }
        return {std::nan(""), 0};
      case OpCode::kConst:
        return {x.value, std::abs(x.value - static_cast<float>(x.value))};
      default: break;
    }
    const Vb a = Eval(x.args[0]);
    const Vb b = x.args.size() > 1 ? Eval(x.args[1]) : Vb{0, 0};
    const double inf = std::numeric_limits<double>::infinity();
    double v = 0, e = 0;
    switch (x.op) {
      case OpCode::kAdd: v = a.v + b.v; e = a.e + b.e + kU * std::abs(v); break;
      case OpCode::kSub: v = a.v - b.v; e = a.e + b.e + kU * std::abs(v); break;
      case OpCode::kMul:
        v = a.v * b.v;
        e = std::abs(a.v) * b.e + std::abs(b.v) * a.e + a.e * b.e + kU * std::abs(v);
        break;
      case OpCode::kDiv:
        v = a.v / b.v;
        e = std::abs(b.v) > b.e ? (a.e + std::abs(v) * b.e) / (std::abs(b.v) - b.e) + 4 * kU * std::abs(v) : inf;
        break;
      case OpCode::kMax:
        v = std::isnan(a.v) || std::isnan(b.v) ? std::nan("") : std::max(a.v, b.v);
        e = std::max(a.e, b.e);
        break;
      case OpCode::kMin:
        v = std::isnan(a.v) || std::isnan(b.v) ? std::nan("") : std::min(a.v, b.v);
        e = std::max(a.e, b.e);
        break;
      case OpCode::kNeg: v = -a.v; e = a.e; break;
      case OpCode::kAbs: v = std::abs(a.v); e = a.e; break;
      case OpCode::kRelu: v = std::isnan(a.v) || a.v > 0 ? a.v : 0.0; e = a.e; break;
      case OpCode::kExp:
        v = std::exp(a.v);
        e = std::abs(v) * std::expm1(a.e) + (4 + 3 * std::abs(a.v)) * kU * std::abs(v);
        break;
      case OpCode::kLog:
        v = std::log(a.v);
        e = std::abs(a.v) > a.e ? a.e / (std::abs(a.v) - a.e) + 4 * kU * std::abs(v) + kU * kU : inf;
        break;
      case OpCode::kSqrt:
        v = std::sqrt(a.v);
        e = a.e / (std::sqrt(std::abs(a.v)) + std::sqrt(std::max(std::abs(a.v) - a.e, 0.0)) + 1e-300) +
            2 * kU * std::abs(v);
        break;
      case OpCode::kRsqrt:
        v = 1.0 / std::sqrt(a.v);
        e = std::abs(a.v) > a.e ? 0.5 * a.e * std::pow(std::abs(a.v) - a.e, -1.5) + 4 * kU * std::abs(v) : inf;
        break;
      case OpCode::kSigmoid:
        v = 1.0 / (1.0 + std::exp(-a.v));
        e = 0.25 * a.e + (10 + 3 * std::abs(a.v)) * kU * std::abs(v);
        break;
      case OpCode::kTanh: v = std::tanh(a.v); e = a.e + 4 * kU * std::abs(v); break;
      case OpCode::kSilu:
        v = a.v / (1.0 + std::exp(-a.v));
        e = 1.1 * a.e + (12 + 3 * std::abs(a.v)) * kU * std::abs(v);
        break;
      case OpCode::kGelu:
        v = 0.5 * a.v * (1.0 + std::erf(a.v / std::sqrt(2.0)));
        e = 1.13 * a.e + 6 * kU * std::abs(a.v);
        break;
      case OpCode::kGeluTanh: {
        const double z = 0.7978845608028654 * (a.v + 0.044715 * a.v * a.v * a.v);
        v = 0.5 * a.v * (1.0 + std::tanh(z));
        e = 1.13 * a.e + 6 * kU * std::abs(a.v) + 0.5 * std::abs(a.v) * 6 * kU * std::abs(z);
        break;
      }
      case OpCode::kCastF16: {
        v = HalfToFloat(FloatToHalf(static_cast<float>(a.v)));
        e = a.e + std::max(2 * 0x1p-11 * std::abs(a.v), 0x1p-24);
        break;
      }
      case OpCode::kCastBF16:
        v = Bf16ToFloat(FloatToBf16(static_cast<float>(a.v)));
        e = a.e + 2 * 0x1p-8 * std::abs(a.v) + 0x1p-126;
        break;
      default: v = a.v; e = a.e; break;  // kCastF32
    }
    return {v, e};
  }
};

// Elements [begin, end) of every output.
void EvaluateRange(const Program& p, const std::vector<HostTensor>& inputs, const Dims& shape, int64_t begin,
                   int64_t end, ReferenceValues* r) {
  const bool with_bounds = !r->bounds.empty();
  Evaluator ev{p.inputs, std::vector<double>(inputs.size())};
  const int rank = static_cast<int>(shape.size());
  std::vector<int64_t> coord(rank);
  for (int64_t i = begin; i < end; ++i) {
    int64_t rest = i;
    for (int d = rank - 1; d >= 0; --d) {
      coord[d] = rest % shape[d];
      rest /= shape[d];
    }
    // Each input's row-major element: the output's coordinates, right-aligned, clamped
    // to 0 along its size-1 dimensions.
    for (size_t t = 0; t < inputs.size(); ++t) {
      const TensorDesc& d = inputs[t].desc();
      int64_t linear = 0;
      for (int k = 0; k < d.rank(); ++k) {
        const int64_t c = d.dim(k) == 1 ? 0 : coord[rank - d.rank() + k];
        linear = linear * d.dim(k) + c;
      }
      ev.loaded[t] = inputs[t].Get(linear);
    }
    for (size_t o = 0; o < p.outputs.size(); ++o) {
      const Vb vb = ev.Eval(p.values[o]);
      r->values[o][i] = vb.v;
      if (with_bounds) r->bounds[o][i] = vb.e;
    }
  }
}

}  // namespace

ReferenceValues EvaluateReference(const Program& p, const std::vector<HostTensor>& inputs,
                                  const Dims& shape, bool with_bounds, int threads) {
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  ReferenceValues r;
  r.values.assign(p.outputs.size(), std::vector<double>(numel));
  if (with_bounds) r.bounds.assign(p.outputs.size(), std::vector<double>(numel));
  if (threads <= 0) threads = omp_get_max_threads();
  cpu::Parallel(numel, kReferenceChunk, threads,
                [&](int64_t begin, int64_t end) { EvaluateRange(p, inputs, shape, begin, end, &r); });
  return r;
}

}  // namespace opsched::pointwise
