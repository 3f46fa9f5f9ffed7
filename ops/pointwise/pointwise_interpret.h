// The per-element interpreters, header-only and OPSCHED_HD (host and device alike):
//   RunAccumulated runs the accumulator form (pointwise_accumulator.h): what the CPU
//                  interpreted loop runs per element, as the GPU kernel does V lanes wide;
//   RunElement     runs the bytecode itself, slot by slot: the definition the accumulator
//                  form must match bit for bit (tests/pointwise/accumulator_test.cc).
//   for each element i: Offsets(bc, i, offsets); RunAccumulated(bc, code, pointers, offsets);
#pragma once

#include <cstdint>

#include "ops/pointwise/pointwise_accumulator.h"
#include "ops/pointwise/pointwise_bytecode.h"
#include "ops/pointwise/pointwise_math.h"

namespace opsched::pointwise {

// The element offset of every tensor (inputs then outputs) for row-major position
// `linear` of the iteration shape.
OPSCHED_HD inline void Offsets(const Bytecode& bc, int64_t linear, int64_t* offsets) {
  const int tensors = bc.num_inputs + bc.num_outputs;
  for (int t = 0; t < tensors; ++t) offsets[t] = 0;
  for (int d = bc.rank - 1; d >= 0; --d) {
    const int64_t c = linear % bc.shape[d];
    linear /= bc.shape[d];
    for (int t = 0; t < tensors; ++t) offsets[t] += c * bc.strides[t][d];
  }
}

// Runs the program for one element whose per-tensor offsets are given.
OPSCHED_HD inline void RunElement(const Bytecode& bc, const TensorPointers& p, const int64_t* offsets) {
  float slot[kMaxSlots];
  for (int k = 0; k < bc.num_instructions; ++k) {
    const Instruction in = bc.code[k];
    switch (in.op) {
      case OpCode::kLoad:
        slot[in.dst] = LoadElement(bc.types[in.a], p.data[in.a], offsets[in.a]);
        break;
      case OpCode::kConst:
        slot[in.dst] = in.value;
        break;
      case OpCode::kStore: {
        const int t = bc.num_inputs + in.dst;
        StoreElement(bc.types[t], const_cast<void*>(p.data[t]), offsets[t], slot[in.a]);
        break;
      }
      default:
        slot[in.dst] = IsBinary(in.op) ? Binary(in.op, slot[in.a], slot[in.b]) : Unary(in.op, slot[in.a]);
        break;
    }
  }
}

// Runs the accumulator form `code` of `bc` for one element.
OPSCHED_HD inline void RunAccumulated(const Bytecode& bc, const AccCode& code, const TensorPointers& p,
                                      const int64_t* offsets) {
  float acc = 0;
  float spill[kMaxSlots];
  for (int k = 0; k < code.num_instructions; ++k) {
    const AccInstruction in = code.code[k];
    if (in.spill_first) spill[in.spill_first - 1] = acc;
    if (in.fetch_first) acc = spill[in.fetch_first - 1];
    switch (in.op) {
      case OpCode::kLoad: acc = LoadElement(bc.types[in.slot], p.data[in.slot], offsets[in.slot]); break;
      case OpCode::kConst: acc = in.value; break;
      case OpCode::kFetch: acc = spill[in.slot]; break;
      case OpCode::kSpill: spill[in.slot] = acc; break;
      case OpCode::kMulAdd: {
        const bool word = (in.mode & kOperandImmediate) && k + 1 < code.num_instructions;
        acc = MulThenAdd(acc, in.value, word ? code.code[++k].value : spill[in.slot]);
        break;
      }
      case OpCode::kOperandWord: break;  // read by the kMulAdd before it
      case OpCode::kStore: {
        const int t = bc.num_inputs + in.slot;
        StoreElement(bc.types[t], const_cast<void*>(p.data[t]), offsets[t], acc);
        break;
      }
      default:
        if (IsBinary(in.op)) {
          const float x = (in.mode & kOperandImmediate) ? in.value : spill[in.slot];
          acc = (in.mode & kOperandFirst) ? Binary(in.op, x, acc) : Binary(in.op, acc, x);
        } else {
          acc = Unary(in.op, acc);
        }
        break;
    }
  }
}

}  // namespace opsched::pointwise
