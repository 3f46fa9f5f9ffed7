#include "ops/pointwise/pointwise_def.h"

#include <cmath>
#include <functional>
#include <optional>
#include <limits>
#include <map>
#include <set>

#include "core/format.h"
#include "ops/pointwise/pointwise_compile.h"
#include "ops/pointwise/pointwise_reference.h"
#include "ops/pointwise/pointwise_register.h"
#include "registry/registry.h"

namespace opsched::pointwise {
namespace {

Status Error(std::string_view message) { return absl::InvalidArgumentError(fmt::format("pointwise: {}", message)); }

// The first column at which `name` is loaded in any output's tree (0 if none).
int FirstUse(const Program& p, const std::string& name) {
  int best = 0;
  std::function<void(const Expr&)> walk = [&](const Expr& e) {
    if (e.op == OpCode::kLoad && e.name == name && (best == 0 || e.column < best)) best = e.column;
    for (const Expr& a : e.args) walk(a);
  };
  for (const Expr& v : p.values) walk(v);
  return best;
}

class PointwiseOpDef : public OpDef {
 public:
  std::string_view name() const override { return "pointwise"; }
  // Named by each workload (its expr); Run receives inputs then outputs, in name order.
  std::vector<std::string> InputNames() const override { return {"<inputs by name>"}; }
  std::vector<std::string> OutputNames() const override { return {"<outputs by name>"}; }

  Status Canonicalize(Workload* w) const override {
    const AttrValue* expr = w->FindAttr("expr");
    if (expr == nullptr || !std::holds_alternative<std::string>(*expr)) {
      return Error("needs expr=\"...\", the program (e.g. expr=\"relu(a+b)*0.5\")");
    }
    // Declared tensors: every tensor, and every name=dtype attribute (an output).
    std::map<std::string, TensorDesc> tensors;
    std::map<std::string, DType> attr_outputs;
    std::vector<std::string> declared;
    for (const TensorArg& t : w->tensors()) {
      if (t.name == "expr" || t.name == "shape") return Error(fmt::format("'{}' is reserved, not a tensor name", t.name));
      if (!IsFloating(t.desc.dtype())) {
        return Error(fmt::format("tensor '{}' is {}, expected f32, f16 or bf16", t.name, DTypeName(t.desc.dtype())));
      }
      if (t.desc.rank() > kMaxRank) return Error(fmt::format("tensor '{}' has rank {}, at most {}", t.name, t.desc.rank(), kMaxRank));
      tensors[t.name] = t.desc;
      declared.push_back(t.name);
    }
    for (const Attr& a : w->attrs()) {
      if (a.name == "expr" || a.name == "shape") continue;
      const std::string* word = std::get_if<std::string>(&a.value);
      StatusOr<DType> dtype = word ? ParseDType(*word) : StatusOr<DType>(absl::InvalidArgumentError(""));
      if (!dtype.ok() || !IsFloating(*dtype)) {
        return Error(fmt::format("unknown attribute '{}' (expected expr, shape, or an output's dtype: "
                                 "name=f32, f16 or bf16)", a.name));
      }
      attr_outputs[a.name] = *dtype;
      declared.push_back(a.name);
    }
    OPSCHED_ASSIGN_OR_RETURN(Program p, BindProgram(std::get<std::string>(*expr), declared));
    // The outputs' shape: the shape attribute, else the output tensors', else the inputs'
    // broadcast.
    std::optional<Dims> shape;
    if (w->FindAttr("shape") != nullptr) {
      OPSCHED_ASSIGN_OR_RETURN(shape, w->GetInts("shape"));
    }
    std::vector<TensorDesc> outputs;
    for (const std::string& o : p.outputs) {
      if (auto it = tensors.find(o); it != tensors.end()) {
        if (!it->second.is_contiguous()) return Error(fmt::format("output '{}' must be contiguous", o));
        if (shape && it->second.shape() != *shape) {
          return Error(fmt::format("output '{}' is {}, but the outputs' shape is [{}]", o, it->second.ToString(),
                                   fmt::join(*shape, ",")));
        }
        shape = it->second.shape();
      }
    }
    if (!shape) {
      Dims b;
      for (const std::string& i : p.inputs) {
        const Dims& s = tensors[i].shape();
        if (s.size() > b.size()) b.insert(b.begin(), s.size() - b.size(), 1);
        for (size_t k = 0; k < s.size(); ++k) {
          int64_t& d = b[b.size() - s.size() + k];
          if (d == 1) d = s[k];
        }
      }
      shape = b;
    }
    if (static_cast<int>(shape->size()) > kMaxRank) return Error(fmt::format("outputs have rank {}, at most {}", shape->size(), kMaxRank));
    for (const std::string& o : p.outputs) {
      const DType dt = tensors.count(o) ? tensors[o].dtype() : attr_outputs[o];
      OPSCHED_ASSIGN_OR_RETURN(TensorDesc d, TensorDesc::CheckedContiguous(dt, *shape));
      outputs.push_back(d);
    }
    std::vector<TensorDesc> inputs;
    for (const std::string& i : p.inputs) {
      const TensorDesc& d = tensors[i];
      bool fits = d.rank() <= static_cast<int>(shape->size());
      for (int k = 0; fits && k < d.rank(); ++k) {
        const int64_t want = (*shape)[shape->size() - d.rank() + k];
        fits = d.dim(k) == want || d.dim(k) == 1;
      }
      if (!fits) {
        return absl::InvalidArgumentError(fmt::format(
            "pointwise: expr column {}: broadcasting shape mismatch: input '{}' [{}] does not broadcast to the "
            "outputs' shape [{}]",
            FirstUse(p, i), i, fmt::join(d.shape(), ","), fmt::join(*shape, ",")));
      }
      inputs.push_back(d);
    }
    OPSCHED_RETURN_IF_ERROR(Compile(p, inputs, outputs).status());
    Workload canonical("pointwise");
    for (size_t k = 0; k < inputs.size(); ++k) canonical.SetTensor(p.inputs[k], inputs[k]);
    canonical.SetAttr("expr", ProgramText(p));
    canonical.SetAttr("shape", *shape);
    for (size_t k = 0; k < outputs.size(); ++k) {
      canonical.SetAttr(p.outputs[k], std::string(DTypeName(outputs[k].dtype())));
    }
    *w = std::move(canonical);
    return absl::OkStatus();
  }

  std::vector<TensorDesc> OutputDescs(const Workload& w) const override {
    const Dims shape = *w.GetInts("shape");
    std::vector<TensorDesc> out;
    for (const Attr& a : w.attrs()) {
      if (a.name == "expr" || a.name == "shape") continue;
      out.push_back(TensorDesc::Contiguous(*ParseDType(std::get<std::string>(a.value)), shape));
    }
    return out;
  }

  Status Generate(const Workload& w, const GeneratorOptions& options, std::mt19937_64& rng,
                  std::vector<HostTensor>* inputs) const override {
    OPSCHED_ASSIGN_OR_RETURN(std::shared_ptr<const Compiled> c, CompiledFor(w));
    const std::set<std::string> positive = PositiveInputs(c->program);
    std::uniform_real_distribution<double> any(kInputLow, kInputHigh), pos(kPositiveLow, kInputHigh), unit(0.0, 1.0);
    const double specials[] = {std::nan(""), std::numeric_limits<double>::infinity(),
                               -std::numeric_limits<double>::infinity()};
    for (size_t t = 0; t < inputs->size(); ++t) {
      HostTensor& x = (*inputs)[t];
      const bool p = positive.count(c->program.inputs[t]) > 0;
      for (int64_t i = 0; i < x.desc().numel(); ++i) {
        double v = p ? pos(rng) : any(rng);
        if (options.special_value_fraction > 0 && unit(rng) < options.special_value_fraction) {
          v = specials[std::uniform_int_distribution<int>(0, 2)(rng)];
        }
        x.Set(i, v);
      }
    }
    return absl::OkStatus();
  }

  StatusOr<std::vector<std::vector<double>>> Reference(const Workload& w,
                                                       const std::vector<HostTensor>& inputs) const override {
    OPSCHED_ASSIGN_OR_RETURN(std::shared_ptr<const Compiled> c, CompiledFor(w));
    return EvaluateReference(c->program, inputs, c->outputs[0].shape(), false).values;
  }

  struct Bounds : CheckContext {
    std::vector<std::vector<double>> bounds;
  };

  std::unique_ptr<CheckContext> PrepareCheck(const Workload& w, const std::vector<HostTensor>& inputs) const override {
    StatusOr<std::shared_ptr<const Compiled>> c = CompiledFor(w);
    auto b = std::make_unique<Bounds>();
    if (c.ok()) b->bounds = EvaluateReference((*c)->program, inputs, (*c)->outputs[0].shape(), true).bounds;
    return b;
  }

  Status Check(const Workload& w, const std::vector<HostTensor>& inputs, const std::vector<HostTensor>& outputs,
               const std::vector<std::vector<double>>& reference, bool, const CheckContext* context) const override {
    OPSCHED_ASSIGN_OR_RETURN(std::shared_ptr<const Compiled> c, CompiledFor(w));
    std::unique_ptr<CheckContext> local;
    if (context == nullptr) {
      local = PrepareCheck(w, inputs);
      context = local.get();
    }
    const Bounds& b = static_cast<const Bounds&>(*context);
    if (outputs.size() != reference.size() || b.bounds.size() != outputs.size()) {
      return absl::InternalError("pointwise: output, reference and bound counts differ");
    }
    for (size_t o = 0; o < outputs.size(); ++o) {
      const CloseBound bound = CheckBound(outputs[o].desc().dtype());
      for (int64_t i = 0; i < outputs[o].desc().numel(); ++i) {
        const double got = outputs[o].Get(i), want = reference[o][i];
        if (!bound.Holds(got, want, b.bounds[o][i], 0)) {
          return MismatchError(c->program, o, i, got, want, bound.Tolerance(b.bounds[o][i], 0, want));
        }
      }
    }
    return absl::OkStatus();
  }

  double Flops(const Workload& w) const override {
    StatusOr<std::shared_ptr<const Compiled>> c = CompiledFor(w);
    if (!c.ok()) return 0;
    int ops = 0;
    for (const Expr& v : (*c)->program.values) ops += CountOps(v);
    return static_cast<double>((*c)->bytecode.numel) * ops;
  }

  std::vector<double> ModelFeatures(const Workload& w) const override {
    StatusOr<std::shared_ptr<const Compiled>> c = CompiledFor(w);
    if (!c.ok()) return std::vector<double>(8, 0.0);
    const Bytecode& bc = (*c)->bytecode;
    int transcendental = 0, broadcast = 0, bytes = 0;
    for (int k = 0; k < bc.num_instructions; ++k) {
      const OpCode op = bc.code[k].op;
      transcendental += op == OpCode::kExp || op == OpCode::kLog || op == OpCode::kTanh || op == OpCode::kSigmoid ||
                        op == OpCode::kSilu || op == OpCode::kGelu || op == OpCode::kGeluTanh;
    }
    for (const TensorDesc& d : (*c)->inputs) {
      broadcast += d.numel() != bc.numel;
      bytes += static_cast<int>(DTypeSize(d.dtype()));
    }
    for (const TensorDesc& d : (*c)->outputs) bytes += static_cast<int>(DTypeSize(d.dtype()));
    return {std::log2(1.0 + static_cast<double>(bc.numel)),
            static_cast<double>(bc.num_inputs),
            static_cast<double>(bc.num_outputs),
            static_cast<double>(bc.num_instructions),
            static_cast<double>(transcendental),
            static_cast<double>(broadcast),
            static_cast<double>(bytes),
            static_cast<double>(bc.rank)};
  }
};

// Adds the inputs that `e` loads where a log, sqrt, rsqrt or a divisor takes them
// (`positive`: e itself is such an operand).
void CollectPositive(const Expr& e, bool positive, std::set<std::string>* out) {
  if (e.op == OpCode::kLoad && positive) out->insert(e.name);
  const bool arg_positive = positive || e.op == OpCode::kLog || e.op == OpCode::kSqrt || e.op == OpCode::kRsqrt;
  for (size_t i = 0; i < e.args.size(); ++i) {
    CollectPositive(e.args[i], arg_positive || (e.op == OpCode::kDiv && i == 1), out);
  }
}

}  // namespace

std::set<std::string> PositiveInputs(const Program& p) {
  std::set<std::string> positive;
  for (const Expr& v : p.values) CollectPositive(v, false, &positive);
  return positive;
}

Status MismatchError(const Program& p, size_t output, int64_t index, double got, double want, double tolerance) {
  return absl::DataLossError(fmt::format("pointwise: {}[{}] is {}, expected {} within {} ({})", p.outputs[output],
                                         index, got, want, tolerance, ExprText(p.values[output])));
}

CloseBound CheckBound(DType out) {
  CloseBound b;
  b.per_magnitude = 2;  // twice the first-order estimate
  b.relative = UnitRoundoff(out) + 0x1p-23;
  b.absolute = out == DType::kF16 ? 0x1p-24 : 0x1p-124;
  return b;
}

Status RegisterDef(Registry& registry) {
  return registry.AddOp(std::make_unique<PointwiseOpDef>());
}

}  // namespace opsched::pointwise
