#include "ops/pointwise/pointwise_batchnorm.h"

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

// The roles of the program's one output, structurally (operand order free where the
// operation commutes).
Status Match(const Program& p, BatchNormPlan* plan) {
  if (p.values.size() != 1) return NotBatchNorm("the program has several outputs");
  const Expr* e = &p.values[0];
  for (OpCode act : {OpCode::kRelu, OpCode::kGelu, OpCode::kGeluTanh, OpCode::kSilu, OpCode::kSigmoid, OpCode::kTanh}) {
    if (e->op == act && e->args.size() == 1) {
      plan->act = act;
      e = &e->args[0];
      break;
    }
  }
  // max(y, 0) is relu(y) but for the sign of a zero y (-0 there, +0 here).
  if (plan->act == OpCode::kCastF32 && e->op == OpCode::kMax && e->args.size() == 2) {
    const bool zero_first = e->args[0].op == OpCode::kConst && e->args[0].value == 0;
    const bool zero_second = e->args[1].op == OpCode::kConst && e->args[1].value == 0;
    if (!zero_first && !zero_second) return NotBatchNorm("a max that is not with 0");
    plan->act = OpCode::kRelu;
    e = &e->args[zero_first ? 1 : 0];
  }
  std::vector<const Expr*> terms;
  Operands(OpCode::kAdd, *e, &terms);
  const Expr* product = terms[0];
  if (terms.size() == 2) {
    const int first = InputNumber(p, *terms[0]), second = InputNumber(p, *terms[1]);
    if ((first >= 0) == (second >= 0)) return NotBatchNorm("the sum is not the product plus a tensor b");
    plan->param[BatchNormPlan::kShift] = first >= 0 ? first : second;
    product = terms[first >= 0 ? 1 : 0];
  } else if (terms.size() != 1) {
    return NotBatchNorm("a sum of more than two terms");
  }
  std::vector<const Expr*> factors;
  Operands(OpCode::kMul, *product, &factors);
  for (const Expr* f : factors) {
    if (f->op == OpCode::kSub && f->args.size() == 2 && plan->x < 0) {
      plan->x = InputNumber(p, f->args[0]);
      plan->param[BatchNormPlan::kMean] = InputNumber(p, f->args[1]);
      if (plan->x < 0 || plan->param[BatchNormPlan::kMean] < 0) return NotBatchNorm("x - m of other than two tensors");
    } else if (f->op == OpCode::kRsqrt && f->args.size() == 1 && plan->param[BatchNormPlan::kVar] < 0) {
      const Expr& sum = f->args[0];
      if (sum.op != OpCode::kAdd || sum.args.size() != 2) return NotBatchNorm("rsqrt of other than v + eps");
      const int c = sum.args[0].op == OpCode::kConst ? 0 : 1;
      if (sum.args[c].op != OpCode::kConst) return NotBatchNorm("rsqrt of other than v + eps");
      plan->eps = static_cast<float>(sum.args[c].value);
      plan->param[BatchNormPlan::kVar] = InputNumber(p, sum.args[1 - c]);
      if (plan->param[BatchNormPlan::kVar] < 0) return NotBatchNorm("rsqrt of other than v + eps");
    } else if (InputNumber(p, *f) >= 0 && plan->param[BatchNormPlan::kScale] < 0) {
      plan->param[BatchNormPlan::kScale] = InputNumber(p, *f);
    } else {
      return NotBatchNorm(fmt::format("an unexpected factor '{}'", ExprText(*f)));
    }
  }
  if (plan->x < 0) return NotBatchNorm("no factor x - m");
  if (plan->param[BatchNormPlan::kVar] < 0) return NotBatchNorm("no factor rsqrt(v + eps)");
  return absl::OkStatus();
}

}  // namespace

StatusOr<BatchNormPlan> PlanBatchNorm(const Compiled& c) {
  BatchNormPlan plan;
  OPSCHED_RETURN_IF_ERROR(Match(c.program, &plan));
  const Bytecode& bc = c.bytecode;
  const int out = bc.num_inputs;
  if (bc.num_outputs != 1) return NotBatchNorm("the program has several outputs");
  if (bc.types[plan.x] != bc.types[out]) return NotBatchNorm("x and the output differ in dtype");
  plan.numel = bc.numel;
  // x: the outputs' layout (contiguous over the iteration shape).
  int64_t contiguous = 1;
  for (int d = bc.rank - 1; d >= 0; --d) {
    if (bc.shape[d] != 1 && bc.strides[plan.x][d] != contiguous) {
      return NotBatchNorm(fmt::format("x ('{}') is not of the output's shape and layout", c.program.inputs[plan.x]));
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
        return NotBatchNorm(fmt::format("'{}' is not per channel (one contiguous dimension)", c.program.inputs[t]));
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
  return plan;
}

StatusOr<BatchNormPlan> BatchNormPlanFor(const Workload& canonical) {
  OPSCHED_ASSIGN_OR_RETURN(std::shared_ptr<const Compiled> c, CompiledFor(canonical));
  return PlanBatchNorm(*c);
}

}  // namespace opsched::pointwise
