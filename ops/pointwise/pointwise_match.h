// Structural matching of a normalised program against the chains the specialised
// implementations know (operand order free where the operation commutes):
//   kBiasAct        out = act(x + y), act one of relu gelu gelu_tanh silu sigmoid tanh
//   kScaleResidual  out = x * s + r (s an input or a constant)
//   kActivation     out = act(x), act one of relu gelu gelu_tanh silu sigmoid tanh
//   kLstmCell       c' = sigmoid(f) * c + sigmoid(i) * tanh(g); h = sigmoid(o) * tanh(c')
#pragma once

#include <optional>

#include "ops/pointwise/pointwise_expr.h"

namespace opsched::pointwise {

enum class Chain { kBiasAct, kScaleResidual, kActivation, kLstmCell };

struct ChainMatch {
  Chain chain = Chain::kActivation;
  OpCode act = OpCode::kGelu;  // kBiasAct, kActivation
  // Inputs by role (indices into Program::inputs; -1: the constant):
  //   kBiasAct x, y; kScaleResidual x, s, r; kActivation x; kLstmCell i, f, g, o, c.
  int role[5] = {-1, -1, -1, -1, -1};
  float constant = 0;  // kScaleResidual's s when role[1] is -1
  // kLstmCell: which output is c' and which h.
  int c_out = 0, h_out = 1;
};

std::optional<ChainMatch> MatchChain(const Program& p);
std::string_view ChainName(Chain c);

}  // namespace opsched::pointwise

namespace opsched {
class Workload;
namespace pointwise {
// The chain of a canonical workload when pointwise_cpu_specialised can run it
// (pointwise_cpu_specialised.cc).
std::optional<ChainMatch> SpecialisedChain(const Workload& canonical);
// Input t's period: element i of the iteration reads element i % period of the input
// (the whole input, a trailing-dimensions bias, or 1 for a single element); 0 when the
// input is not periodic.
int64_t Period(const Bytecode& bc, int t);
}  // namespace pointwise
}  // namespace opsched
