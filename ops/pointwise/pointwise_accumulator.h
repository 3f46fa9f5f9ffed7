// The accumulator form of a pointwise program: the bytecode (pointwise_bytecode.h)
// rewritten for one register, `acc`, that every instruction reads and writes, plus a few
// spill slots for values needed again later. A kernel keeps `acc` in registers (its
// index is never computed at run time); only the spill slots are indexed at run time,
// and only a value used more than once, or the other side of a binary tree, goes there.
// Pointer-free and header-only like the bytecode, passed by value to the device kernel.
//
//   kLoad   acc = input[slot]                 kStore  output[slot] = acc
//   kConst  acc = value                       kFetch  acc = spill[slot]
//   kSpill  spill[slot] = acc                 unary   acc = f(acc)
//   binary  acc = acc op X, or X op acc with kOperandFirst; X = spill[slot], or `value`
//           with kOperandImmediate
//
// The operations, their order and their operands are those of the bytecode, so both
// forms compute bit-identical results.
#pragma once

#include <cstdint>

#include "core/half.h"  // OPSCHED_HD
#include "ops/pointwise/pointwise_bytecode.h"

namespace opsched::pointwise {

// At most one spill, one fetch and the operation per bytecode instruction, every value
// spilled at most once: 3 * kMaxInstructions bounds any program.
inline constexpr int kMaxAccInstructions = 3 * kMaxInstructions;

// On the device (pointwise_cuda_interpreted.cu) spill slots live in shared memory while
// a block's fit in 48 KiB; beyond, a program that needs at most this many keeps them in
// registers, and more go to the thread's local memory.
inline constexpr int kRegisterSpillSlots = 4;

// AccInstruction::mode bits of a binary operation.
inline constexpr uint8_t kOperandImmediate = 1;  // X is `value`, not spill[slot]
inline constexpr uint8_t kOperandFirst = 2;      // acc = X op acc

// The operations numbered densely (0..kNumDispatchKeys-1) so that a kernel's switch over
// them compiles to one indirect branch through a table instead of a search.
OPSCHED_HD inline constexpr uint8_t DispatchKey(OpCode op) {
  const int v = static_cast<int>(op);
  return static_cast<uint8_t>(v <= 4 ? v : v < 40 ? v - 5 : v - 20);
}
inline constexpr int kNumDispatchKeys = DispatchKey(OpCode::kMin) + 1;
static_assert(DispatchKey(OpCode::kCastBF16) + 1 == DispatchKey(OpCode::kAdd), "keys are dense");

struct AccInstruction {
  OpCode op = OpCode::kConst;
  uint8_t slot = 0;  // kLoad: input; kStore: output (0-based); spill slot otherwise
  uint8_t mode = 0;  // binary only
  uint8_t key = DispatchKey(OpCode::kConst);  // DispatchKey(op)
  float value = 0;   // kConst, an immediate operand
};

struct AccCode {
  int32_t num_instructions = 0;
  int32_t num_spills = 0;  // spill slots used (numbered from 0)
  AccInstruction code[kMaxAccInstructions] = {};
};

}  // namespace opsched::pointwise
