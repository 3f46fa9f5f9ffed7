#include "ops/reduce/reduce_def.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/format.h"
#include "ops/reduce/reduce_register.h"
#include "registry/registry.h"

namespace opsched::reduce {
namespace {

constexpr const char* kOpNames[] = {"sum", "mean", "max", "min", "sumsq"};

// The reduced axes of a canonical workload as a mask over x's dimensions.
uint32_t AxisMask(const Workload& w) {
  const AttrValue& axes = *w.FindAttr("axes");
  if (const int64_t* one = std::get_if<int64_t>(&axes)) return 1u << *one;
  uint32_t mask = 0;
  for (int64_t a : std::get<Dims>(axes)) mask |= 1u << a;
  return mask;
}

ElementType ElementTypeOf(DType d) {
  static_assert(int(ElementType::kF32) == int(DType::kF32) && int(ElementType::kF16) == int(DType::kF16) &&
                int(ElementType::kBF16) == int(DType::kBF16) && int(ElementType::kI32) == int(DType::kI32) &&
                int(ElementType::kI64) == int(DType::kI64));
  return static_cast<ElementType>(static_cast<int>(d));
}

DType OutDType(const Workload& w) {
  if (w.FindAttr("dtype") != nullptr) return *ParseDType(*w.GetString("dtype"));
  return w.FindTensor("x")->dtype();
}

// Output index of x's row-major element `linear` (reduced coordinates dropped).
struct OutputIndexer {
  OutputIndexer(const TensorDesc& x, uint32_t mask) : x(x), mask(mask) {}
  int64_t operator()(int64_t linear) const {
    int64_t out = 0, scale = 1;
    for (int d = x.rank() - 1; d >= 0; --d) {
      const int64_t c = linear % x.dim(d);
      linear /= x.dim(d);
      if (!(mask & (1u << d))) {
        out += c * scale;
        scale *= x.dim(d);
      }
    }
    return out;
  }
  const TensorDesc& x;
  uint32_t mask;
};

class ReduceOpDef : public OpDef {
 public:
  std::string_view name() const override { return "reduce"; }
  std::vector<std::string> InputNames() const override { return {"x"}; }
  std::vector<std::string> OutputNames() const override { return {"y"}; }

  Status Canonicalize(Workload* w) const override {
    const TensorDesc* x = w->FindTensor("x");
    if (x == nullptr || w->tensors().size() != 1) {
      return absl::InvalidArgumentError("reduce takes exactly one tensor, x");
    }
    const int rank = x->rank();
    if (rank > kMaxRank) {
      return absl::InvalidArgumentError(
          fmt::format("reduce: x has rank {}, supported ranks are 0 to {}", rank, kMaxRank));
    }
    Dims axes;
    if (const AttrValue* a = w->FindAttr("axes"); a != nullptr) {
      if (const int64_t* one = std::get_if<int64_t>(a)) {
        axes.push_back(*one);
      } else if (const Dims* list = std::get_if<Dims>(a)) {
        axes = *list;
      } else {
        return absl::InvalidArgumentError("reduce: axes must be an integer or a list of integers");
      }
    } else {
      for (int d = 0; d < rank; ++d) axes.push_back(d);
    }
    uint32_t mask = 0;
    for (int64_t a : axes) {
      if (a < -rank || a >= rank) {
        return absl::InvalidArgumentError(
            fmt::format("reduce: axis {} is out of range for rank {}", a, rank));
      }
      const int64_t n = a < 0 ? a + rank : a;
      if (mask & (1u << n)) {
        return absl::InvalidArgumentError(fmt::format("reduce: axis {} is given twice", n));
      }
      mask |= 1u << n;
    }
    Dims canonical_axes;
    for (int d = 0; d < rank; ++d) {
      if (mask & (1u << d)) canonical_axes.push_back(d);
    }
    std::string op = "sum";
    if (w->FindAttr("op") != nullptr) {
      OPSCHED_ASSIGN_OR_RETURN(std::string_view o, w->GetString("op"));
      OPSCHED_RETURN_IF_ERROR(ParseOp(o).status());
      op = std::string(o);
    }
    bool keepdims = false;
    if (w->FindAttr("keepdims") != nullptr) {
      OPSCHED_ASSIGN_OR_RETURN(keepdims, w->GetBool("keepdims"));
    }
    DType out = x->dtype();
    if (w->FindAttr("dtype") != nullptr) {
      OPSCHED_ASSIGN_OR_RETURN(std::string_view name, w->GetString("dtype"));
      OPSCHED_ASSIGN_OR_RETURN(out, ParseDType(name));
      const bool integer = IsInteger(x->dtype());
      if (out != x->dtype() && out != (integer ? DType::kI64 : DType::kF32)) {
        return absl::InvalidArgumentError(fmt::format("reduce: dtype {} is not available for x {} (x's own type or {})",
                                                      name, DTypeName(x->dtype()), integer ? "i64" : "f32"));
      }
    }
    if (IsInteger(x->dtype()) && op != "sum" && op != "max" && op != "min") {
      return absl::InvalidArgumentError(
          fmt::format("reduce: op {} takes f32, f16 or bf16 (x is {}; integers take sum, max and min)", op,
                      DTypeName(x->dtype())));
    }
    for (const Attr& a : w->attrs()) {
      if (a.name != "axes" && a.name != "op" && a.name != "keepdims" && a.name != "dtype") {
        return absl::InvalidArgumentError(
            fmt::format("reduce: unknown attribute '{}' (expected axes, op, keepdims, dtype)", a.name));
      }
    }
    int64_t outputs = 1, terms = 1;
    for (int d = 0; d < rank; ++d) ((mask & (1u << d)) ? terms : outputs) *= x->dim(d);
    if (terms == 0 && outputs > 0 && (op == "max" || op == "min")) {
      return absl::InvalidArgumentError(fmt::format(
          "reduce: {} over an empty set of terms (x {}, axes {}) has no value", op, x->ToString(),
          fmt::join(canonical_axes, ",")));
    }
    Workload canonical("reduce");
    canonical.SetTensor("x", *x);
    canonical.SetAttr("axes", std::move(canonical_axes));
    canonical.SetAttr("op", op);
    canonical.SetAttr("keepdims", keepdims);
    if (out != x->dtype()) canonical.SetAttr("dtype", std::string(DTypeName(out)));
    *w = std::move(canonical);
    return absl::OkStatus();
  }

  std::vector<TensorDesc> OutputDescs(const Workload& w) const override {
    const TensorDesc& x = *w.FindTensor("x");
    const uint32_t mask = AxisMask(w);
    const bool keepdims = *w.GetBool("keepdims");
    std::vector<int64_t> shape;
    for (int d = 0; d < x.rank(); ++d) {
      if (!(mask & (1u << d))) {
        shape.push_back(x.dim(d));
      } else if (keepdims) {
        shape.push_back(1);
      }
    }
    return {TensorDesc::Contiguous(OutDType(w), shape)};
  }

  Status Generate(const Workload&, const GeneratorOptions& options, std::mt19937_64& rng,
                  std::vector<HostTensor>* inputs) const override {
    HostTensor& x = (*inputs)[0];
    if (IsInteger(x.desc().dtype())) {
      // Integers in [-1000, 1000]: sums stay exact in the float64 reference.
      std::uniform_int_distribution<int64_t> value(-1000, 1000);
      for (int64_t i = 0; i < x.desc().numel(); ++i) x.Set(i, static_cast<double>(value(rng)));
      return absl::OkStatus();
    }
    std::uniform_real_distribution<double> value(-1.0, 1.0);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const double specials[] = {std::nan(""), std::numeric_limits<double>::infinity(),
                               -std::numeric_limits<double>::infinity()};
    for (int64_t i = 0; i < x.desc().numel(); ++i) {
      double v = value(rng);
      if (options.special_value_fraction > 0 && unit(rng) < options.special_value_fraction) {
        v = specials[std::uniform_int_distribution<int>(0, 2)(rng)];
      }
      x.Set(i, v);
    }
    return absl::OkStatus();
  }

  StatusOr<std::vector<std::vector<double>>> Reference(
      const Workload& w, const std::vector<HostTensor>& inputs) const override {
    const HostTensor& x = inputs[0];
    OPSCHED_ASSIGN_OR_RETURN(ReduceOp op, ParseOp(*w.GetString("op")));
    const OutputIndexer index(x.desc(), AxisMask(w));
    const int64_t outputs = OutputDescs(w)[0].numel();
    const int64_t terms = outputs == 0 ? 0 : x.desc().numel() / outputs;
    const double nan = std::nan("");
    const double init = op == ReduceOp::kMax   ? -std::numeric_limits<double>::infinity()
                        : op == ReduceOp::kMin ? std::numeric_limits<double>::infinity()
                                               : 0.0;
    std::vector<double> y(outputs, init);
    if (IsInteger(x.desc().dtype())) {
      // Exactly, in int64 wrapping around; an i32 output keeps the low 32 bits.
      std::vector<int64_t> exact(outputs, op == ReduceOp::kMax   ? std::numeric_limits<int64_t>::min()
                                          : op == ReduceOp::kMin ? std::numeric_limits<int64_t>::max()
                                                                 : 0);
      for (int64_t i = 0; i < x.desc().numel(); ++i) {
        const int64_t v = x.GetInt(i);
        int64_t& acc = exact[index(i)];
        acc = op == ReduceOp::kMax   ? std::max(acc, v)
              : op == ReduceOp::kMin ? std::min(acc, v)
                                     : static_cast<int64_t>(static_cast<uint64_t>(acc) + static_cast<uint64_t>(v));
      }
      const bool narrow = OutDType(w) == DType::kI32;
      for (int64_t o = 0; o < outputs; ++o) {
        y[o] = static_cast<double>(narrow ? static_cast<int64_t>(static_cast<int32_t>(exact[o])) : exact[o]);
      }
      return std::vector<std::vector<double>>{std::move(y)};
    }
    for (int64_t i = 0; i < x.desc().numel(); ++i) {
      const double v = x.Get(i);
      double& acc = y[index(i)];
      switch (op) {
        case ReduceOp::kSum:
        case ReduceOp::kMean:
          acc += v;
          break;
        case ReduceOp::kSumSquares:
          acc += v * v;
          break;
        case ReduceOp::kMax:
          acc = std::isnan(acc) || std::isnan(v) ? nan : std::max(acc, v);
          break;
        case ReduceOp::kMin:
          acc = std::isnan(acc) || std::isnan(v) ? nan : std::min(acc, v);
          break;
      }
    }
    if (op == ReduceOp::kMean) {
      for (double& v : y) v = terms == 0 ? nan : v / static_cast<double>(terms);
    }
    return std::vector<std::vector<double>>{std::move(y)};
  }

  // Per output: the sum of the magnitudes of its terms (of their squares for sumsq), the
  // scale of any accumulation error.
  struct Magnitudes : CheckContext {
    std::vector<double> sum;
    int64_t terms = 0;
  };

  std::unique_ptr<CheckContext> PrepareCheck(const Workload& w,
                                             const std::vector<HostTensor>& inputs) const override {
    const HostTensor& x = inputs[0];
    const bool squares = *w.GetString("op") == "sumsq";
    const OutputIndexer index(x.desc(), AxisMask(w));
    auto m = std::make_unique<Magnitudes>();
    const int64_t outputs = OutputDescs(w)[0].numel();
    m->sum.assign(outputs, 0.0);
    m->terms = outputs == 0 ? 0 : x.desc().numel() / outputs;
    for (int64_t i = 0; i < x.desc().numel(); ++i) {
      const double v = x.Get(i);
      m->sum[index(i)] += squares ? v * v : std::abs(v);
    }
    return m;
  }

  Status Check(const Workload& w, const std::vector<HostTensor>& inputs,
               const std::vector<HostTensor>& outputs,
               const std::vector<std::vector<double>>& reference, bool,
               const CheckContext* context) const override {
    std::unique_ptr<CheckContext> local;
    if (context == nullptr) {
      local = PrepareCheck(w, inputs);
      context = local.get();
    }
    const Magnitudes& m = static_cast<const Magnitudes&>(*context);
    const HostTensor& y = outputs[0];
    const CloseBound bound = CheckBound(w);
    for (int64_t i = 0; i < y.desc().numel(); ++i) {
      const double got = y.Get(i);
      const double want = reference[0][i];
      if (!bound.Holds(got, want, m.sum[i], 0)) return MismatchError(bound, i, got, want, m.sum[i], m.terms);
    }
    return absl::OkStatus();
  }

  double Flops(const Workload& w) const override {
    return static_cast<double>(w.FindTensor("x")->numel());
  }

  std::vector<double> ModelFeatures(const Workload& w) const override {
    const Problem p = MakeProblem(w);
    auto lg = [](double v) { return std::log2(1.0 + v); };
    const int64_t inner_kept = p.kept_rank > 0 ? p.kept_strides[p.kept_rank - 1] : 0;
    const int64_t inner_reduced = p.reduced_rank > 0 ? p.reduced_strides[p.reduced_rank - 1] : 0;
    return {lg(p.outputs),
            lg(p.length),
            lg(p.row),
            lg(static_cast<double>(p.outputs) * p.length),
            p.rows ? 1.0 : 0.0,
            p.columns ? 1.0 : 0.0,
            static_cast<double>(p.op),
            static_cast<double>(p.in_type),
            static_cast<double>(p.out_type),
            static_cast<double>(p.kept_rank),
            static_cast<double>(p.reduced_rank),
            lg(static_cast<double>(inner_kept)),
            lg(static_cast<double>(inner_reduced))};
  }
};

struct Dim {
  int64_t size;
  int64_t stride;
};

// Merges neighbours (outer, inner) where outer.stride == inner.stride * inner.size.
std::vector<Dim> Merge(const std::vector<Dim>& dims) {
  std::vector<Dim> out;
  for (const Dim& d : dims) {
    if (!out.empty() && out.back().stride == d.stride * d.size) {
      out.back() = Dim{out.back().size * d.size, d.stride};
    } else {
      out.push_back(d);
    }
  }
  return out;
}

}  // namespace

uint32_t ReducedAxisMask(const Workload& w) { return AxisMask(w); }

int64_t Terms(const Workload& w) {
  const TensorDesc& x = *w.FindTensor("x");
  const uint32_t mask = AxisMask(w);
  int64_t outputs = 1, terms = 1;
  for (int d = 0; d < x.rank(); ++d) (mask & (1u << d) ? terms : outputs) *= x.dim(d);
  return outputs == 0 ? 0 : terms;
}

CloseBound CheckBound(const Workload& w) {
  const std::string_view op = *w.GetString("op");
  const DType out = OutDType(w);
  const double u_out = UnitRoundoff(out);
  const double u_acc = UnitRoundoff(DType::kF32);
  // Any summation order of K terms in f32 is within (K - 1) u sum|x_k| (Higham's gamma
  // bound); mean adds the rounding of 1/K and of the product; then the output rounds
  // once more (with f16's subnormal spacing as the absolute floor). Max and min are exact.
  const double k = static_cast<double>(std::max<int64_t>(Terms(w), 1));
  CloseBound b;
  b.exact = op == "max" || op == "min" || IsInteger(out);
  b.per_magnitude = (k * u_acc / (1 - std::min(0.5, k * u_acc))) * (op == "mean" ? 1.0 / k : 1.0);
  b.relative = u_out + 3 * u_acc;
  b.absolute = out == DType::kF16 ? std::ldexp(1.0, -24) : 1e-38;
  return b;
}

Status MismatchError(const CloseBound& bound, int64_t i, double got, double want, double magnitude, int64_t terms) {
  return absl::DataLossError(fmt::format("reduce: y[{}] is {}, expected {}{} ({} terms)", i, got, want,
                                         bound.exact ? " exactly" : fmt::format(" within {}", bound.Tolerance(magnitude, 0, want)),
                                         terms));
}

std::string_view OpName(ReduceOp op) { return kOpNames[static_cast<int>(op)]; }

StatusOr<ReduceOp> ParseOp(std::string_view name) {
  for (int i = 0; i < 5; ++i) {
    if (name == kOpNames[i]) return static_cast<ReduceOp>(i);
  }
  return absl::InvalidArgumentError(
      fmt::format("reduce: unknown op '{}' (expected sum, mean, max, min or sumsq)", name));
}

Problem MakeProblem(const Workload& w) {
  const TensorDesc& x = *w.FindTensor("x");
  const uint32_t mask = AxisMask(w);
  Problem p;
  p.op = *ParseOp(*w.GetString("op"));
  p.in_type = ElementTypeOf(x.dtype());
  p.out_type = ElementTypeOf(OutDType(w));
  p.outputs = 1;
  p.length = 1;
  std::vector<Dim> kept, reduced;
  for (int d = 0; d < x.rank(); ++d) {
    const bool r = mask & (1u << d);
    (r ? p.length : p.outputs) *= x.dim(d);
    if (x.dim(d) == 1) continue;
    (r ? reduced : kept).push_back(Dim{x.dim(d), x.stride(d)});
  }
  if (p.outputs == 0 || p.length == 0) {
    kept.clear();
    reduced.clear();
  }
  // Kept dimensions stay in y's order: only neighbours merge. Reduced ones may be taken
  // in any order: by decreasing stride, so that the innermost is the densest.
  kept = Merge(kept);
  std::stable_sort(reduced.begin(), reduced.end(), [](const Dim& a, const Dim& b) { return a.stride > b.stride; });
  reduced = Merge(reduced);
  p.kept_rank = static_cast<int32_t>(kept.size());
  for (size_t i = 0; i < kept.size(); ++i) {
    p.kept_shape[i] = kept[i].size;
    p.kept_strides[i] = kept[i].stride;
  }
  p.reduced_rank = static_cast<int32_t>(reduced.size());
  for (size_t i = 0; i < reduced.size(); ++i) {
    p.reduced_shape[i] = reduced[i].size;
    p.reduced_strides[i] = reduced[i].stride;
  }
  p.rows = !reduced.empty() && reduced.back().stride == 1;
  p.row = p.rows ? reduced.back().size : 1;
  p.columns = !kept.empty() && kept.back().stride == 1;
  p.scale = p.op == ReduceOp::kMean && p.length > 0 ? static_cast<float>(1.0 / static_cast<double>(p.length)) : 1.0f;
  return p;
}

Status RegisterDef(Registry& registry) {
  return registry.AddOp(std::make_unique<ReduceOpDef>());
}

}  // namespace opsched::reduce
