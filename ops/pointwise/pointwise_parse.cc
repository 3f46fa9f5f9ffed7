// The recursive-descent parser of pointwise program text (grammar in pointwise_expr.h).
#include <cctype>
#include <charconv>

#include "core/format.h"
#include "ops/pointwise/pointwise_expr.h"

namespace opsched::pointwise {
namespace {

struct Function {
  const char* name;
  OpCode op;
  int arity;
};

constexpr Function kFunctions[] = {
    {"neg", OpCode::kNeg, 1},       {"abs", OpCode::kAbs, 1},         {"exp", OpCode::kExp, 1},
    {"log", OpCode::kLog, 1},       {"sqrt", OpCode::kSqrt, 1},       {"rsqrt", OpCode::kRsqrt, 1},
    {"relu", OpCode::kRelu, 1},     {"gelu", OpCode::kGelu, 1},       {"gelu_tanh", OpCode::kGeluTanh, 1},
    {"sigmoid", OpCode::kSigmoid, 1}, {"tanh", OpCode::kTanh, 1},     {"silu", OpCode::kSilu, 1},
    {"f32", OpCode::kCastF32, 1},   {"f16", OpCode::kCastF16, 1},     {"bf16", OpCode::kCastBF16, 1},
    {"max", OpCode::kMax, 2},       {"min", OpCode::kMin, 2},
};

constexpr int kMaxDepth = 64;

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  StatusOr<std::vector<Statement>> Program() {
    std::vector<Statement> out;
    while (true) {
      Skip();
      if (pos_ >= s_.size()) break;
      Statement st;
      st.column = Column();
      // name '=' starts an assignment.
      const size_t save = pos_;
      std::string_view name = Name();
      Skip();
      if (!name.empty() && pos_ < s_.size() && s_[pos_] == '=') {
        ++pos_;
        st.target = std::string(name);
      } else {
        pos_ = save;
      }
      OPSCHED_ASSIGN_OR_RETURN(st.value, Sum(0));
      out.push_back(std::move(st));
      Skip();
      if (pos_ >= s_.size()) break;
      if (s_[pos_] != ';') return Error(fmt::format("expected an operator, ';' or the end, got '{}'", s_[pos_]));
      ++pos_;
    }
    if (out.empty()) return Error("empty program");
    return out;
  }

 private:
  int Column() const { return static_cast<int>(pos_) + 1; }
  Status Error(std::string_view message) const { return ErrorAt(Column(), message); }
  static Status ErrorAt(int column, std::string_view message) {
    return absl::InvalidArgumentError(fmt::format("expr column {}: {}", column, message));
  }
  void Skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  std::string_view Name() {
    const size_t start = pos_;
    if (pos_ < s_.size() && (std::isalpha(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) {
      while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
    }
    return s_.substr(start, pos_ - start);
  }

  StatusOr<Expr> Sum(int depth) {
    OPSCHED_ASSIGN_OR_RETURN(Expr left, Product(depth));
    while (true) {
      Skip();
      if (pos_ >= s_.size() || (s_[pos_] != '+' && s_[pos_] != '-')) return left;
      const int column = Column();
      const OpCode op = s_[pos_++] == '+' ? OpCode::kAdd : OpCode::kSub;
      OPSCHED_ASSIGN_OR_RETURN(Expr right, Product(depth));
      left = Expr{op, 0, "", {std::move(left), std::move(right)}, column};
    }
  }

  StatusOr<Expr> Product(int depth) {
    OPSCHED_ASSIGN_OR_RETURN(Expr left, Unary(depth));
    while (true) {
      Skip();
      if (pos_ >= s_.size() || (s_[pos_] != '*' && s_[pos_] != '/')) return left;
      const int column = Column();
      const OpCode op = s_[pos_++] == '*' ? OpCode::kMul : OpCode::kDiv;
      OPSCHED_ASSIGN_OR_RETURN(Expr right, Unary(depth));
      left = Expr{op, 0, "", {std::move(left), std::move(right)}, column};
    }
  }

  StatusOr<Expr> Unary(int depth) {
    if (depth > kMaxDepth) return Error(fmt::format("nested more than {} deep", kMaxDepth));
    Skip();
    if (pos_ < s_.size() && s_[pos_] == '-') {
      const int column = Column();
      ++pos_;
      OPSCHED_ASSIGN_OR_RETURN(Expr operand, Unary(depth + 1));
      return Expr{OpCode::kNeg, 0, "", {std::move(operand)}, column};
    }
    return Primary(depth);
  }

  StatusOr<Expr> Primary(int depth) {
    Skip();
    if (pos_ >= s_.size()) return Error("expected a value, got the end");
    const int column = Column();
    const char c = s_[pos_];
    if (c == '(') {
      ++pos_;
      OPSCHED_ASSIGN_OR_RETURN(Expr inner, Sum(depth + 1));
      Skip();
      if (pos_ >= s_.size() || s_[pos_] != ')') return Error("expected ')'");
      ++pos_;
      return inner;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return Number();
    std::string_view name = Name();
    if (name.empty()) return Error(fmt::format("expected a value, got '{}'", c));
    Skip();
    if (pos_ >= s_.size() || s_[pos_] != '(') return Expr{OpCode::kLoad, 0, std::string(name), {}, column};
    const Function* fn = nullptr;
    for (const Function& f : kFunctions) {
      if (name == f.name) fn = &f;
    }
    if (fn == nullptr) return ErrorAt(column, fmt::format("unknown function '{}'", name));
    ++pos_;
    Expr call{fn->op, 0, "", {}, column};
    while (true) {
      OPSCHED_ASSIGN_OR_RETURN(Expr arg, Sum(depth + 1));
      call.args.push_back(std::move(arg));
      Skip();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == ')') break;
      return Error("expected ',' or ')'");
    }
    ++pos_;
    if (static_cast<int>(call.args.size()) != fn->arity) {
      return ErrorAt(column, fmt::format("{} takes {} argument{}, got {}", fn->name, fn->arity,
                                         fn->arity == 1 ? "" : "s", call.args.size()));
    }
    return call;
  }

  StatusOr<Expr> Number() {
    const int column = Column();
    const size_t start = pos_;
    auto digits = [&] {
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    };
    digits();
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      digits();
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      digits();
    }
    const std::string_view text = s_.substr(start, pos_ - start);
    double v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size()) {
      return ErrorAt(column, fmt::format("bad number '{}'", text));
    }
    if (pos_ < s_.size() && (std::isalpha(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) {
      return Error(fmt::format("unexpected '{}' after the number", s_[pos_]));
    }
    return Expr{OpCode::kConst, v, "", {}, column};
  }

  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace

StatusOr<std::vector<Statement>> ParseStatements(std::string_view text) { return Parser(text).Program(); }

std::string_view OpName(OpCode op) {
  switch (op) {
    case OpCode::kAdd: return "+";
    case OpCode::kSub: return "-";
    case OpCode::kMul: return "*";
    case OpCode::kDiv: return "/";
    case OpCode::kLoad: return "load";
    case OpCode::kConst: return "const";
    case OpCode::kStore: return "store";
    default:
      for (const Function& f : kFunctions) {
        if (f.op == op) return f.name;
      }
      return "?";
  }
}

}  // namespace opsched::pointwise
