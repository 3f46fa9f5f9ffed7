// Rewrites a compiled bytecode program into the accumulator form
// (pointwise_accumulator.h): the same operations in the same order, with each value kept
// in the accumulator until the next operation takes it, spilled only when a later
// instruction needs it again, constants folded into the operation that uses them, and
// some adjacent pairs run as one superinstruction (-abs, a multiply then an add).
#pragma once

#include <string>

#include "core/status.h"
#include "ops/pointwise/pointwise_accumulator.h"
#include "ops/pointwise/pointwise_bytecode.h"
#include "ops/pointwise/pointwise_expr.h"

namespace opsched::pointwise {

// Errors only when the bytecode is malformed (an operand read before it is written).
StatusOr<AccCode> ToAccumulatorForm(const Bytecode& bc);

// A readable listing, one line a dispatch ("acc = load a", "acc = acc * 0.5",
// "spill0 = acc; acc = spill1; acc = relu(acc)" where a spill and a fetch are folded into
// the instruction, "acc = acc * 2 + -1" for a kMulAdd and the word after it, "store out =
// acc"), for docs and tests.
std::string Disassemble(const AccCode& code, const Program& p);

}  // namespace opsched::pointwise
