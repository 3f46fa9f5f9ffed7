// The bytecode compiler: a bound program and its tensors' descriptors -> Bytecode
// (pointwise_bytecode.h). Equal subtrees are computed once; slots are reused after a
// value's last use; the iteration shape drops size-1 dimensions and merges neighbours
// where every tensor's strides allow.
#pragma once

#include <vector>

#include "core/status.h"
#include "core/tensor_desc.h"
#include "ops/pointwise/pointwise_bytecode.h"
#include "ops/pointwise/pointwise_expr.h"

namespace opsched::pointwise {

// Inputs in p.inputs order, outputs in p.outputs order; outputs share one shape, and
// every input broadcasts to it. Errors when the program exceeds the bytecode's limits.
StatusOr<Bytecode> Compile(const Program& p, const std::vector<TensorDesc>& inputs,
                           const std::vector<TensorDesc>& outputs);

ElementType ElementTypeOf(DType d);

// A readable listing ("s0 = load a", "s2 = s0 + s1", "store out = s2"), for docs and tests.
std::string Disassemble(const Bytecode& bc, const Program& p);

}  // namespace opsched::pointwise
