// The pointwise language: expression trees, the parser of program text and the
// program a workload runs (outputs bound to normalised expressions over its inputs).
//
//   program   := statement { ';' statement } [';']
//   statement := [name '='] expr          (a bare expr only as the program's one statement)
//   expr      := term { ('+' | '-') term }
//   term      := unary { ('*' | '/') unary }
//   unary     := '-' unary | primary
//   primary   := number | name | name '(' expr { ',' expr } ')' | '(' expr ')'
// Functions: neg abs exp log sqrt rsqrt relu gelu gelu_tanh sigmoid tanh silu f32 f16
// bf16 (one argument), max min (two). A name is a declared tensor or a name assigned by an
// earlier statement (its f32 value, before any output rounding).
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "ops/pointwise/pointwise_bytecode.h"

namespace opsched::pointwise {

struct Expr {
  OpCode op = OpCode::kConst;
  double value = 0;   // kConst
  std::string name;   // kLoad: the tensor (or, before binding, any name)
  std::vector<Expr> args;
  int column = 0;     // 1-based, in the program text
};

struct Statement {
  std::string target;  // empty: a bare expression
  int column = 0;
  Expr value;
};

// Parses program text; errors read "expr column N: ...".
StatusOr<std::vector<Statement>> ParseStatements(std::string_view text);

// A program bound to its tensors: inputs in name order, outputs in name order each with
// its normalised expression (assigned names inlined, loads name inputs).
struct Program {
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<Expr> values;  // one per output
};

// Binds parsed statements to the declared tensor names: names assigned become outputs
// (or temporaries when not declared), the others inputs. A single bare expression
// assigns the one declared tensor it does not use. Errors name the column.
StatusOr<Program> BindProgram(std::string_view text, const std::vector<std::string>& declared);

// The normalised form of a tree: constants folded into negation, f32() and double
// negation dropped, operands of + * max min flattened and sorted by their text.
Expr Normalise(Expr e);
// The canonical text of a tree (shortest round-trip numbers, minimal parentheses) and of
// a program ("out=...", several joined by "; ").
std::string ExprText(const Expr& e);
std::string ProgramText(const Program& p);

// The spelling of a function or operator ("relu", "+").
std::string_view OpName(OpCode op);
// Operations in a tree (loads and constants not counted).
int CountOps(const Expr& e);
// The values that wait at once while `e` is computed, its operands in the better order
// (Ershov's number): a load 1, a constant `constant` (0 where the instruction using it
// holds it, 1 where it takes a place like a load), a unary operation its operand's need,
// a binary one the larger of its operands' or one more where they tie. Computing the
// operand that needs more first keeps that few waiting.
int Need(const Expr& e, int constant);
// Adds the names a tree loads to `names`.
void CollectNames(const Expr& e, std::set<std::string>* names);

}  // namespace opsched::pointwise
