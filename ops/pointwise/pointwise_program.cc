// Binding a parsed program to its tensors, normalisation and the canonical text.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>

#include "core/format.h"
#include "ops/pointwise/pointwise_expr.h"

namespace opsched::pointwise {
namespace {

// Inlining assigned names may grow a tree: past this many nodes a program is refused.
constexpr int kMaxNodes = 4096;

Status ErrorAt(int column, std::string_view message) {
  return absl::InvalidArgumentError(fmt::format("expr column {}: {}", column, message));
}

bool Commutative(OpCode op) {
  return op == OpCode::kAdd || op == OpCode::kMul || op == OpCode::kMax || op == OpCode::kMin;
}

int Precedence(const Expr& e) {
  switch (e.op) {
    case OpCode::kAdd:
    case OpCode::kSub: return 1;
    case OpCode::kMul:
    case OpCode::kDiv: return 2;
    case OpCode::kNeg: return 3;
    case OpCode::kConst: return e.value < 0 || (e.value == 0 && std::signbit(e.value)) ? 3 : 4;
    default: return 4;
  }
}

bool Infix(OpCode op) {
  return op == OpCode::kAdd || op == OpCode::kSub || op == OpCode::kMul || op == OpCode::kDiv;
}

int CountNodes(const Expr& e) {
  int n = 1;
  for (const Expr& a : e.args) n += CountNodes(a);
  return n;
}

struct Binder {
  const std::set<std::string>& declared;
  const std::set<std::string>& assigned;
  std::map<std::string, Expr> env;  // assigned so far
  std::set<std::string> used;

  Status Resolve(Expr* e) {
    if (e->op == OpCode::kLoad) {
      used.insert(e->name);
      if (auto it = env.find(e->name); it != env.end()) {
        *e = it->second;
        return absl::OkStatus();
      }
      if (assigned.count(e->name)) return ErrorAt(e->column, fmt::format("'{}' is used before it is assigned", e->name));
      if (!declared.count(e->name)) return ErrorAt(e->column, fmt::format("undefined name '{}'", e->name));
      return absl::OkStatus();
    }
    for (Expr& a : e->args) OPSCHED_RETURN_IF_ERROR(Resolve(&a));
    return absl::OkStatus();
  }
};

void Flatten(OpCode op, Expr e, std::vector<Expr>* out) {
  if (e.op == op) {
    for (Expr& a : e.args) Flatten(op, std::move(a), out);
  } else {
    out->push_back(std::move(e));
  }
}

}  // namespace

Expr Normalise(Expr e) {
  for (Expr& a : e.args) a = Normalise(std::move(a));
  if (e.op == OpCode::kCastF32) return std::move(e.args[0]);
  if (e.op == OpCode::kNeg) {
    Expr& x = e.args[0];
    if (x.op == OpCode::kConst) {
      x.value = -x.value;
      x.column = e.column;
      return std::move(x);
    }
    if (x.op == OpCode::kNeg) return std::move(x.args[0]);
    return e;
  }
  if (!Commutative(e.op)) return e;
  std::vector<Expr> operands;
  const int column = e.column;
  const OpCode op = e.op;
  Flatten(op, std::move(e), &operands);
  std::vector<std::pair<std::string, Expr>> keyed;
  for (Expr& o : operands) keyed.emplace_back(ExprText(o), std::move(o));
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  Expr out = std::move(keyed[0].second);
  for (size_t i = 1; i < keyed.size(); ++i) {
    out = Expr{op, 0, "", {std::move(out), std::move(keyed[i].second)}, column};
  }
  return out;
}

std::string ExprText(const Expr& e) {
  switch (e.op) {
    case OpCode::kLoad: return e.name;
    case OpCode::kConst: {
      char buf[64];
      auto [end, ec] = std::to_chars(buf, buf + sizeof buf, e.value);
      return std::string(buf, ec == std::errc() ? end : buf);
    }
    default: break;
  }
  auto wrap = [](const Expr& x, bool paren) { return paren ? "(" + ExprText(x) + ")" : ExprText(x); };
  const int p = Precedence(e);
  if (e.op == OpCode::kNeg) return "-" + wrap(e.args[0], Precedence(e.args[0]) < 3);
  if (Infix(e.op)) {
    const std::string right = wrap(e.args[1], Precedence(e.args[1]) <= p);
    // "a- -b", not "a--b".
    return wrap(e.args[0], Precedence(e.args[0]) < p) + std::string(OpName(e.op)) +
           (right[0] == '-' ? " " : "") + right;
  }
  std::string out = std::string(OpName(e.op)) + "(";
  for (size_t i = 0; i < e.args.size(); ++i) out += (i ? "," : "") + ExprText(e.args[i]);
  return out + ")";
}

std::string ProgramText(const Program& p) {
  std::string out;
  for (size_t i = 0; i < p.outputs.size(); ++i) {
    out += (i ? "; " : "") + p.outputs[i] + "=" + ExprText(p.values[i]);
  }
  return out;
}

void CollectNames(const Expr& e, std::set<std::string>* names) {
  if (e.op == OpCode::kLoad) names->insert(e.name);
  for (const Expr& a : e.args) CollectNames(a, names);
}

int Need(const Expr& e, int constant) {
  if (e.op == OpCode::kLoad) return 1;
  if (e.args.empty()) return constant;
  const int a = Need(e.args[0], constant);
  if (e.args.size() == 1) return a;
  const int b = Need(e.args[1], constant);
  return a == b ? a + 1 : std::max(a, b);
}

int CountOps(const Expr& e) {
  int n = e.op == OpCode::kLoad || e.op == OpCode::kConst ? 0 : 1;
  for (const Expr& a : e.args) n += CountOps(a);
  return n;
}

StatusOr<Program> BindProgram(std::string_view text, const std::vector<std::string>& declared_list) {
  OPSCHED_ASSIGN_OR_RETURN(std::vector<Statement> statements, ParseStatements(text));
  const std::set<std::string> declared(declared_list.begin(), declared_list.end());
  if (statements.size() == 1 && statements[0].target.empty()) {
    // A bare expression assigns the one declared tensor it does not use.
    std::set<std::string> names;
    CollectNames(statements[0].value, &names);
    std::vector<std::string> unused;
    for (const std::string& d : declared) {
      if (!names.count(d)) unused.push_back(d);
    }
    if (unused.empty()) {
      return ErrorAt(1, "output not assigned: the expression uses every declared tensor (declare an output "
                        "tensor, or write out=...)");
    }
    if (unused.size() > 1) {
      return ErrorAt(1, fmt::format("the expression does not use {}: declare one output, or name the outputs "
                                    "(out=...)",
                                    fmt::join(unused, ", ")));
    }
    statements[0].target = unused[0];
  }
  std::set<std::string> assigned;
  for (const Statement& s : statements) {
    if (s.target.empty()) {
      return ErrorAt(s.column, "in a program of several statements each assigns a name (name=...)");
    }
    if (!assigned.insert(s.target).second) return ErrorAt(s.column, fmt::format("'{}' is assigned twice", s.target));
  }
  Binder binder{declared, assigned, {}, {}};
  for (Statement& s : statements) {
    OPSCHED_RETURN_IF_ERROR(binder.Resolve(&s.value));
    if (CountNodes(s.value) > kMaxNodes) {
      return ErrorAt(s.column, fmt::format("'{}' expands to more than {} nodes", s.target, kMaxNodes));
    }
    binder.env[s.target] = s.value;
  }
  Program p;
  std::map<std::string, Expr> outputs;
  for (Statement& s : statements) {
    if (declared.count(s.target)) {
      outputs[s.target] = Normalise(std::move(s.value));
    } else if (!binder.used.count(s.target)) {
      return ErrorAt(s.column, fmt::format("'{}' is assigned but never used and is no declared tensor "
                                           "(declare it to make it an output)",
                                           s.target));
    }
  }
  for (const std::string& d : declared) {
    if (assigned.count(d)) continue;
    if (!binder.used.count(d)) {
      return ErrorAt(1, fmt::format("input '{}' is declared but not used (or an output not assigned)", d));
    }
    p.inputs.push_back(d);
  }
  if (outputs.empty()) return ErrorAt(1, "output not assigned: no statement assigns a declared tensor");
  for (auto& [name, value] : outputs) {
    p.outputs.push_back(name);
    p.values.push_back(std::move(value));
  }
  return p;
}

}  // namespace opsched::pointwise
