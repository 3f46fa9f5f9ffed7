#include "ops/pointwise/pointwise_batchnorm.h"

#include <cmath>
#include <vector>

#include "core/format.h"
#include "ops/pointwise/pointwise_def.h"

namespace opsched::pointwise {
namespace {

Status NotBatchNorm(std::string_view why) {
  return absl::FailedPreconditionError(
      fmt::format("not batch-norm inference act((x-m)*rsqrt(v+eps)*g+b): {}", why));
}

int InputNumber(const Program& p, const Expr& e) {
  if (e.op != OpCode::kLoad) return -1;
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    if (p.inputs[i] == e.name) return static_cast<int>(i);
  }
  return -1;
}

void Operands(OpCode op, const Expr& e, std::vector<const Expr*>* out) {
  if (e.op == op && e.args.size() == 2) {
    Operands(op, e.args[0], out);
    Operands(op, e.args[1], out);
  } else {
    out->push_back(&e);
  }
}

// The factors of the term that holds x: x - m (or x alone), rsqrt(v + eps), g, a
// constant; each optional but x. Two loads without x - m are x and g either way round: both plans go to
// *out, the layout decides (PlanBatchNorm). The product may be divided by a constant d
// (a hard-sigmoid's x * clamp(s + 3, 0, 6) / 6): folded into the factor as 1/d, where 1/d
// is a finite nonzero float.
Status MatchProduct(const Program& p, const Expr& term, BatchNormPlan plan, std::vector<BatchNormPlan>* out) {
  const Expr* product = &term;
  double divisor = 1;
  if (term.op == OpCode::kDiv && term.args.size() == 2 && term.args[1].op == OpCode::kConst) {
    const float reciprocal = static_cast<float>(1.0 / term.args[1].value);
    if (!std::isfinite(reciprocal) || reciprocal == 0.0f) {
      return NotBatchNorm("a division by a constant without a finite reciprocal");
    }
    divisor = term.args[1].value;
    product = &term.args[0];
  }
  std::vector<const Expr*> factors;
  Operands(OpCode::kMul, *product, &factors);
  std::vector<int> loads;
  bool centred = false, constant = false;
  for (const Expr* f : factors) {
    if (f->op == OpCode::kSub && f->args.size() == 2 && !centred) {
      centred = true;
      plan.x = InputNumber(p, f->args[0]);
      plan.param[BatchNormPlan::kMean] = InputNumber(p, f->args[1]);
      if (plan.x < 0 || plan.param[BatchNormPlan::kMean] < 0) return NotBatchNorm("x - m of other than two tensors");
    } else if (f->op == OpCode::kRsqrt && f->args.size() == 1 && plan.param[BatchNormPlan::kVar] < 0) {
      const Expr& sum = f->args[0];
      const int c = sum.args.size() == 2 && sum.args[0].op == OpCode::kConst ? 0 : 1;
      if (sum.op != OpCode::kAdd || sum.args.size() != 2 || sum.args[c].op != OpCode::kConst ||
          InputNumber(p, sum.args[1 - c]) < 0) {
        return NotBatchNorm("rsqrt of other than v + eps");
      }
      plan.eps = static_cast<float>(sum.args[c].value);
      plan.param[BatchNormPlan::kVar] = InputNumber(p, sum.args[1 - c]);
    } else if (InputNumber(p, *f) >= 0) {
      loads.push_back(InputNumber(p, *f));
    } else if (f->op == OpCode::kConst && !constant) {
      constant = true;
      plan.factor = static_cast<float>(f->value);
    } else if (f->op == OpCode::kSigmoid && f->args.size() == 1 && InputNumber(p, f->args[0]) >= 0 && !plan.gate) {
      plan.gate = true;
      plan.param[BatchNormPlan::kScale] = InputNumber(p, f->args[0]);
    } else {
      return NotBatchNorm(fmt::format("an unexpected factor '{}'", ExprText(*f)));
    }
  }
  if (loads.size() > (centred ? 1u : 2u) - (plan.gate ? 1u : 0u)) {
    return NotBatchNorm("more factors than x, rsqrt(v + eps), g and a constant");
  }
  if (!centred && loads.empty()) return NotBatchNorm("no factor x");
  plan.factor = static_cast<float>(plan.factor / divisor);
  if (centred) {
    if (!loads.empty()) plan.param[BatchNormPlan::kScale] = loads[0];
    out->push_back(plan);
    return absl::OkStatus();
  }
  for (size_t k = 0; k < loads.size(); ++k) {
    BatchNormPlan q = plan;
    q.x = loads[k];
    if (loads.size() == 2) q.param[BatchNormPlan::kScale] = loads[1 - k];
    out->push_back(q);
  }
  return absl::OkStatus();
}

// The constant of a max or min with one constant operand, and which side it is on.
bool ClampOf(const Expr& e, Bound* bound, const Expr** rest) {
  if ((e.op != OpCode::kMax && e.op != OpCode::kMin) || e.args.size() != 2) return false;
  const bool first = e.args[0].op == OpCode::kConst, second = e.args[1].op == OpCode::kConst;
  if (first == second) return false;
  *bound = Bound{e.op, first, static_cast<float>(e.args[first ? 0 : 1].value)};
  *rest = &e.args[first ? 1 : 0];
  return true;
}

// The plans that the program's one output fits, structurally (operand order free where
// the operation commutes); their layouts are checked after.
Status Match(const Program& p, std::vector<BatchNormPlan>* out) {
  if (p.values.size() != 1) return NotBatchNorm("the program has several outputs");
  BatchNormPlan plan;
  const Expr* e = &p.values[0];
  // Clamps, outermost first as met; the plan keeps them innermost first.
  Bound bounds[kMaxBounds];
  int clamps = 0;
  const Expr* rest = nullptr;
  while (clamps < kMaxBounds && ClampOf(*e, &bounds[clamps], &rest)) {
    ++clamps;
    e = rest;
  }
  for (int k = 0; k < clamps; ++k) plan.bound[k] = bounds[clamps - 1 - k];
  for (OpCode act : {OpCode::kRelu, OpCode::kGelu, OpCode::kGeluTanh, OpCode::kSilu, OpCode::kSigmoid, OpCode::kTanh}) {
    if (e->op == act && e->args.size() == 1) {
      plan.act = act;
      e = &e->args[0];
      break;
    }
  }
  // With no activation, an innermost max(y, 0) is relu(y) but for the sign of a zero y
  // (-0 there, +0 here): the plain kernel, not the clamps' (which took the ResNet-50
  // batch-norm + max(y, 0) chain from 24.2 to 25.7 us on the H100).
  if (plan.act == OpCode::kCastF32 && plan.bound[0].op == OpCode::kMax && plan.bound[0].value == 0) {
    plan.act = OpCode::kRelu;
    plan.bound[0] = plan.bound[1];
    plan.bound[1] = Bound{};
  }
  if (e->op == OpCode::kMax || e->op == OpCode::kMin) {
    return NotBatchNorm(fmt::format("a {} that is not a clamp with a constant after the activation",
                                    e->op == OpCode::kMax ? "max" : "min"));
  }
  std::vector<const Expr*> terms;
  Operands(OpCode::kAdd, *e, &terms);
  if (terms.size() > 2) return NotBatchNorm("a sum of more than two terms");
  if (terms.size() == 1) return MatchProduct(p, *terms[0], plan, out);
  // The term that is one tensor is b (either, where both are: x + b).
  bool any = false;
  Status first = absl::OkStatus();
  for (int k = 0; k < 2; ++k) {
    const int b = InputNumber(p, *terms[1 - k]);
    if (b < 0) continue;
    any = true;
    BatchNormPlan q = plan;
    q.param[BatchNormPlan::kShift] = b;
    Status s = MatchProduct(p, *terms[k], q, out);
    if (first.ok()) first = s;
  }
  if (!any) return NotBatchNorm("the sum is not the product plus a tensor b");
  return out->empty() ? first : absl::OkStatus();
}

// Whether `plan`'s tensors have its layouts (x the output's, the statistics per channel),
// filling in the channels.
Status Legal(const Program& program, const Bytecode& bc, BatchNormPlan* plan_out) {
  BatchNormPlan& plan = *plan_out;
  const int out = bc.num_inputs;
  if (bc.num_outputs != 1) return NotBatchNorm("the program has several outputs");
  if (bc.types[plan.x] != bc.types[out]) return NotBatchNorm("x and the output differ in dtype");
  bool statistic = false;
  for (int k = 0; k < 4; ++k) statistic = statistic || plan.param[k] >= 0;
  if (!statistic) return NotBatchNorm("no per-channel operand");
  plan.numel = bc.numel;
  // x: the outputs' layout (contiguous over the iteration shape).
  int64_t contiguous = 1;
  for (int d = bc.rank - 1; d >= 0; --d) {
    if (bc.shape[d] != 1 && bc.strides[plan.x][d] != contiguous) {
      return NotBatchNorm(fmt::format("x ('{}') is not of the output's shape and layout", program.inputs[plan.x]));
    }
    contiguous *= bc.shape[d];
  }
  // Statistics: one dimension each, stride 1, the same dimension for all; or one element.
  int channel_dim = -1;
  for (int k = 0; k < 4; ++k) {
    const int t = plan.param[k];
    if (t < 0) continue;
    int dim = -1;
    for (int d = 0; d < bc.rank; ++d) {
      if (bc.shape[d] == 1 || bc.strides[t][d] == 0) continue;
      if (dim >= 0 || bc.strides[t][d] != 1) {
        return NotBatchNorm(fmt::format("'{}' is not per channel (one contiguous dimension)", program.inputs[t]));
      }
      dim = d;
    }
    if (dim < 0) continue;  // one element
    if (channel_dim >= 0 && dim != channel_dim) return NotBatchNorm("statistics along different dimensions");
    channel_dim = dim;
    plan.channel_stride[k] = 1;
  }
  if (channel_dim >= 0) {
    plan.channels = bc.shape[channel_dim];
    for (int d = channel_dim + 1; d < bc.rank; ++d) plan.inner *= bc.shape[d];
  } else {
    plan.inner = std::max<int64_t>(bc.numel, 1);
  }
  // Statistics as large as x (two full tensors merged into one dimension) are no channels.
  if (plan.channels == plan.numel && plan.numel > 1) return NotBatchNorm("the statistics do not broadcast over x");
  if (plan.channels > kMaxBatchNormChannels) {
    return NotBatchNorm(fmt::format("{} channels, more than {}", plan.channels, kMaxBatchNormChannels));
  }
  return absl::OkStatus();
}

}  // namespace

StatusOr<BatchNormPlan> PlanBatchNorm(const Program& program, const Bytecode& bc) {
  std::vector<BatchNormPlan> plans;
  OPSCHED_RETURN_IF_ERROR(Match(program, &plans));
  if (plans.empty()) return NotBatchNorm("no plan fits");
  Status first = absl::OkStatus();
  for (BatchNormPlan& plan : plans) {
    Status s = Legal(program, bc, &plan);
    if (s.ok()) return plan;
    if (first.ok()) first = s;
  }
  return first;
}

StatusOr<BatchNormPlan> PlanBatchNorm(const Compiled& c) {
  StatusOr<BatchNormPlan> own = PlanBatchNorm(c.program, c.bytecode);
  if (own.ok() || !c.hoisted) return own;
  StatusOr<BatchNormPlan> hoisted = PlanBatchNorm(c.hoisted->program, c.hoisted->bytecode);
  if (!hoisted.ok()) return own.status();
  hoisted->hoisted = true;
  return hoisted;
}

StatusOr<BatchNormPlan> BatchNormPlanFor(const Workload& canonical) {
  OPSCHED_ASSIGN_OR_RETURN(std::shared_ptr<const Compiled> c, CompiledFor(canonical));
  return PlanBatchNorm(*c);
}

}  // namespace opsched::pointwise
