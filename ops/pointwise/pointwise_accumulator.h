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
//   (any of them may first do spill[spill_first - 1] = acc, then acc = spill[fetch_first - 1])
//   binary  acc = acc op X, or X op acc with kOperandFirst; X = spill[slot], or `value`
//           with kOperandImmediate
//   kNegAbs acc = -|acc|                      kMulAdd acc = acc * value + X
//   (kMulAdd: X = spill[slot], or with kOperandImmediate the value of the kOperandWord
//   that follows it; the superinstructions of FuseSuperinstructions)
//
// The operations, their order and their operands are those of the bytecode (a
// superinstruction's operands up to what changes no bit: a negated immediate, the sides
// of an addition), so both forms compute bit-identical results.
#pragma once

#include <cstdint>

#include "core/half.h"  // OPSCHED_HD
#include "ops/pointwise/pointwise_bytecode.h"

namespace opsched::pointwise {

// At most one spill, one fetch and the operation per bytecode instruction, every value
// spilled at most once: 3 * kMaxInstructions bounds any program (before the spills and
// fetches are folded into the instructions after them).
inline constexpr int kMaxAccInstructions = 3 * kMaxInstructions;

// On the device (pointwise_cuda_accumulator.cuh) spill slots live in shared memory while
// a block's fit in 48 KiB; beyond, a program that needs at most this many keeps them in
// registers, and more go to the thread's local memory.
inline constexpr int kRegisterSpillSlots = 4;

// AccInstruction::mode bits of a binary operation.
inline constexpr uint8_t kOperandImmediate = 1;  // X is `value`, not spill[slot]
inline constexpr uint8_t kOperandFirst = 2;      // acc = X op acc

// The kernel's dispatch keys (AccInstruction::key), numbered densely. Add, sub and mul
// have a key for each kind of operand (an immediate, or a spill slot, on either side
// where the order matters), so that the kernel runs them with no branch on the mode;
// division, max and min keep the mode (rarer, and max/min order signed zeros).
namespace dispatch {
inline constexpr uint8_t kLoad = 0;
inline constexpr uint8_t kConst = 1;
inline constexpr uint8_t kStore = 2;
inline constexpr uint8_t kFetch = 3;
inline constexpr uint8_t kSpill = 4;
inline constexpr uint8_t kAddImmediate = 5;   // acc + value (either side: addition commutes)
inline constexpr uint8_t kAddSpill = 6;       // acc + spill[slot]
inline constexpr uint8_t kSubImmediate = 7;   // acc - value
inline constexpr uint8_t kRsubImmediate = 8;  // value - acc
inline constexpr uint8_t kSubSpill = 9;       // acc - spill[slot]
inline constexpr uint8_t kRsubSpill = 10;     // spill[slot] - acc
inline constexpr uint8_t kMulImmediate = 11;  // acc * value
inline constexpr uint8_t kMulSpill = 12;      // acc * spill[slot]
inline constexpr uint8_t kDiv = 13;           // with the mode
inline constexpr uint8_t kMax = 14;           // with the mode
inline constexpr uint8_t kMin = 15;           // with the mode
inline constexpr uint8_t kFirstUnary = 16;    // + (op - kNeg), through kCastBF16
inline constexpr uint8_t kNegAbs = 31;
inline constexpr uint8_t kMulAddImmediate = 32;  // acc * value + the next word's value
inline constexpr uint8_t kMulAddSpill = 33;      // acc * value + spill[slot]
}  // namespace dispatch

OPSCHED_HD inline constexpr uint8_t DispatchKey(OpCode op, uint8_t mode = 0) {
  const int v = static_cast<int>(op);
  if (v <= 4) return static_cast<uint8_t>(v);  // kLoad .. kSpill
  if (op == OpCode::kNegAbs) return dispatch::kNegAbs;
  if (op == OpCode::kMulAdd) return mode & kOperandImmediate ? dispatch::kMulAddImmediate : dispatch::kMulAddSpill;
  // kOperandWord is never dispatched (the kernel steps over it); the identity's key.
  if (op == OpCode::kOperandWord) return dispatch::kFirstUnary + int(OpCode::kCastF32) - int(OpCode::kNeg);
  if (v < static_cast<int>(OpCode::kAdd)) return static_cast<uint8_t>(dispatch::kFirstUnary + v - int(OpCode::kNeg));
  const bool immediate = mode & kOperandImmediate, first = mode & kOperandFirst;
  switch (op) {
    case OpCode::kAdd: return immediate ? dispatch::kAddImmediate : dispatch::kAddSpill;
    case OpCode::kSub:
      if (immediate) return first ? dispatch::kRsubImmediate : dispatch::kSubImmediate;
      return first ? dispatch::kRsubSpill : dispatch::kSubSpill;
    case OpCode::kMul: return immediate ? dispatch::kMulImmediate : dispatch::kMulSpill;
    case OpCode::kDiv: return dispatch::kDiv;
    case OpCode::kMax: return dispatch::kMax;
    default: return dispatch::kMin;
  }
}
inline constexpr int kNumDispatchKeys = dispatch::kMulAddSpill + 1;
static_assert(DispatchKey(OpCode::kNeg) == dispatch::kFirstUnary &&
                  DispatchKey(OpCode::kCastBF16) + 1 == dispatch::kNegAbs,
              "keys are dense");

// An instruction may first spill the accumulator and then fetch a spill slot into it
// (ToAccumulatorForm folds a kSpill and a kFetch into the instruction after them), so
// that the kernel pays one dispatch for the three. The first four bytes are the dispatch
// key, the slot and the two folded slots: the kernel reads them as one word.
struct AccInstruction {
  uint8_t key = DispatchKey(OpCode::kConst);  // DispatchKey(op, mode)
  uint8_t slot = 0;         // kLoad: input; kStore: output (0-based); spill slot otherwise
  uint8_t spill_first = 0;  // 1 + the spill slot that acc is stored to first; 0: none
  uint8_t fetch_first = 0;  // 1 + the spill slot acc is then read from; 0: none
  OpCode op = OpCode::kConst;
  uint8_t mode = 0;  // binary and kMulAdd only
  uint8_t unused[2] = {};
  float value = 0;  // kConst, an immediate operand
};
static_assert(sizeof(AccInstruction) == 12, "three words: the kernel's parameters stay under 4 KiB");

struct AccCode {
  int32_t num_instructions = 0;
  int32_t num_spills = 0;  // spill slots used (numbered from 0)
  AccInstruction code[kMaxAccInstructions] = {};
};

}  // namespace opsched::pointwise
