#include "ops/pointwise/pointwise_match.h"

namespace opsched::pointwise {
namespace {

int InputIndex(const Program& p, const Expr& e) {
  if (e.op != OpCode::kLoad) return -1;
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    if (p.inputs[i] == e.name) return static_cast<int>(i);
  }
  return -1;
}

bool IsLoad(const Expr& e) { return e.op == OpCode::kLoad; }
bool IsCall(const Expr& e, OpCode op) { return e.op == op && e.args.size() == 1; }
bool IsCallOfLoad(const Expr& e, OpCode op) { return IsCall(e, op) && IsLoad(e.args[0]); }

// The operands of binary `op` in the order that satisfies `ok(first, second)`, if any.
template <typename Ok>
bool EitherOrder(const Expr& e, OpCode op, const Expr** x, const Expr** y, Ok ok) {
  if (e.op != op || e.args.size() != 2) return false;
  for (int swap = 0; swap < 2; ++swap) {
    const Expr& a = e.args[swap];
    const Expr& b = e.args[1 - swap];
    if (ok(a, b)) {
      *x = &a;
      *y = &b;
      return true;
    }
  }
  return false;
}

std::optional<ChainMatch> MatchLstm(const Program& p) {
  for (int c_out = 0; c_out < 2; ++c_out) {
    const Expr& c = p.values[c_out];
    const Expr& h = p.values[1 - c_out];
    // c' = sigmoid(f) * c + sigmoid(i) * tanh(g)
    const Expr *fc = nullptr, *ig = nullptr;
    auto is_fc = [](const Expr& e) {
      const Expr *s, *l;
      return EitherOrder(e, OpCode::kMul, &s, &l,
                         [](const Expr& a, const Expr& b) { return IsCallOfLoad(a, OpCode::kSigmoid) && IsLoad(b); });
    };
    auto is_ig = [](const Expr& e) {
      const Expr *s, *t;
      return EitherOrder(e, OpCode::kMul, &s, &t, [](const Expr& a, const Expr& b) {
        return IsCallOfLoad(a, OpCode::kSigmoid) && IsCallOfLoad(b, OpCode::kTanh);
      });
    };
    if (!EitherOrder(c, OpCode::kAdd, &fc, &ig, [&](const Expr& a, const Expr& b) { return is_fc(a) && is_ig(b); })) {
      continue;
    }
    // h = sigmoid(o) * tanh(c')
    const Expr *so = nullptr, *tc = nullptr;
    const std::string c_text = ExprText(c);
    if (!EitherOrder(h, OpCode::kMul, &so, &tc, [&](const Expr& a, const Expr& b) {
          return IsCallOfLoad(a, OpCode::kSigmoid) && IsCall(b, OpCode::kTanh) && ExprText(b.args[0]) == c_text;
        })) {
      continue;
    }
    const Expr *sf = nullptr, *cin = nullptr, *si = nullptr, *tg = nullptr;
    EitherOrder(*fc, OpCode::kMul, &sf, &cin, [](const Expr& a, const Expr& b) { return IsCallOfLoad(a, OpCode::kSigmoid) && IsLoad(b); });
    EitherOrder(*ig, OpCode::kMul, &si, &tg, [](const Expr& a, const Expr&) { return IsCallOfLoad(a, OpCode::kSigmoid); });
    ChainMatch m;
    m.chain = Chain::kLstmCell;
    m.role[0] = InputIndex(p, si->args[0]);
    m.role[1] = InputIndex(p, sf->args[0]);
    m.role[2] = InputIndex(p, tg->args[0]);
    m.role[3] = InputIndex(p, so->args[0]);
    m.role[4] = InputIndex(p, *cin);
    m.c_out = c_out;
    m.h_out = 1 - c_out;
    return m;
  }
  return std::nullopt;
}

}  // namespace

std::string_view ChainName(Chain c) {
  switch (c) {
    case Chain::kBiasAct: return "bias+act";
    case Chain::kScaleResidual: return "scale+residual";
    case Chain::kActivation: return "activation";
    default: return "lstm cell";
  }
}

std::optional<ChainMatch> MatchChain(const Program& p) {
  if (p.values.size() == 2) return MatchLstm(p);
  if (p.values.size() != 1) return std::nullopt;
  const Expr& v = p.values[0];
  ChainMatch m;
  for (OpCode act : {OpCode::kRelu, OpCode::kGelu, OpCode::kGeluTanh, OpCode::kSilu, OpCode::kSigmoid, OpCode::kTanh}) {
    if (IsCallOfLoad(v, act)) {
      m.chain = Chain::kActivation;
      m.act = act;
      m.role[0] = InputIndex(p, v.args[0]);
      return m;
    }
  }
  for (OpCode act : {OpCode::kRelu, OpCode::kGelu, OpCode::kGeluTanh, OpCode::kSilu, OpCode::kSigmoid, OpCode::kTanh}) {
    if (IsCall(v, act) && v.args[0].op == OpCode::kAdd && IsLoad(v.args[0].args[0]) && IsLoad(v.args[0].args[1])) {
      m.chain = Chain::kBiasAct;
      m.act = act;
      m.role[0] = InputIndex(p, v.args[0].args[0]);
      m.role[1] = InputIndex(p, v.args[0].args[1]);
      return m;
    }
  }
  const Expr *prod = nullptr, *r = nullptr;
  if (EitherOrder(v, OpCode::kAdd, &prod, &r, [](const Expr& a, const Expr& b) {
        return a.op == OpCode::kMul && IsLoad(b) &&
               ((IsLoad(a.args[0]) && (IsLoad(a.args[1]) || a.args[1].op == OpCode::kConst)) ||
                (IsLoad(a.args[1]) && a.args[0].op == OpCode::kConst));
      })) {
    const bool first_const = prod->args[0].op == OpCode::kConst;
    const Expr& x = prod->args[first_const ? 1 : 0];
    const Expr& s = prod->args[first_const ? 0 : 1];
    m.chain = Chain::kScaleResidual;
    m.role[0] = InputIndex(p, x);
    m.role[1] = InputIndex(p, s);
    m.constant = s.op == OpCode::kConst ? static_cast<float>(s.value) : 0.0f;
    m.role[2] = InputIndex(p, *r);
    return m;
  }
  return std::nullopt;
}

}  // namespace opsched::pointwise
