#include "ops/pointwise/pointwise_reference.h"

#include <omp.h>

#include <cmath>

#include "ops/pointwise/pointwise_cpu_loops.h"
#include "ops/pointwise/pointwise_reference_math.h"

namespace opsched::pointwise {
namespace {

struct Evaluator {
  const std::vector<std::string>& names;
  std::vector<double> loaded;  // this element's input values

  RefValue Eval(const Expr& x) const {
    switch (x.op) {
      case OpCode::kLoad:
        for (size_t i = 0; i < names.size(); ++i) {
          if (names[i] == x.name) return {loaded[i], 0};
        }
        return {std::nan(""), 0};
      case OpCode::kConst: return RefConst(x.value);
      default: break;
    }
    const RefValue a = Eval(x.args[0]);
    const RefValue b = x.args.size() > 1 ? Eval(x.args[1]) : RefValue{0, 0};
    return RefApply(x.op, a, b);
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
      const RefValue vb = ev.Eval(p.values[o]);
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
