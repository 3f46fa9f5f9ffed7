// The compiled form of a pointwise program: a flat, pointer-free struct that a CPU loop
// and a GPU kernel (passed by value as a kernel argument, about 1.7 KB) both execute.
// No opsched or standard headers beyond <cstdint>, so nvcc and hipcc compile it alike.
//
// Layout: tensors are numbered inputs first (canonical name order) then outputs. Every
// tensor is addressed over the program's iteration shape (the outputs' shape, with
// neighbouring dimensions merged where every tensor allows): element `linear` (row-major
// over `shape`) of tensor t lies at sum_d coord_d * strides[t][d] elements from its base;
// a broadcast dimension has stride 0. Outputs are contiguous.
//
// Instructions run in order per element on float registers (slots). A load reads input
// `a` (converted from its element type to float), a store writes slot `a` to output
// `dst` (rounded to its element type); every store comes after every load, so an output
// may alias an input of its own shape (in place).
#pragma once

#include <cstdint>

namespace opsched::pointwise {

inline constexpr int kMaxRank = 8;
inline constexpr int kMaxTensors = 16;       // inputs + outputs
inline constexpr int kMaxInstructions = 64;  // after common subexpressions are shared
inline constexpr int kMaxSlots = 32;         // float registers

enum class ElementType : uint8_t { kF32 = 0, kF16 = 1, kBF16 = 2 };

// Stable numbering: part of the bytecode format a device kernel compiles against.
enum class OpCode : uint8_t {
  kLoad = 0,   // slot[dst] = input[a][offset]
  kConst = 1,  // slot[dst] = value
  kStore = 2,  // output[dst][offset] = slot[a]
  // The accumulator form only (pointwise_accumulator.h):
  kFetch = 3,  // acc = spill[slot]
  kSpill = 4,  // spill[slot] = acc
  // Superinstructions of the accumulator form (FuseSuperinstructions): one dispatch
  // where the pair they replace took two, with the pair's roundings.
  kNegAbs = 5,       // acc = -|acc| (abs, then neg)
  kMulAdd = 6,       // acc = acc * value + X, rounded after the multiply and the add:
                     // X = spill[slot], or with kOperandImmediate the next word's value
  kOperandWord = 7,  // the immediate X of the kMulAdd before it; never run itself
  // unary: slot[dst] = f(slot[a])
  kNeg = 10,
  kAbs = 11,
  kExp = 12,
  kLog = 13,
  kSqrt = 14,
  kRsqrt = 15,
  kRelu = 16,
  kGelu = 17,      // x * Phi(x), erf form
  kGeluTanh = 18,  // tanh approximation
  kSigmoid = 19,
  kTanh = 20,
  kSilu = 21,
  kCastF32 = 22,   // identity (math is f32)
  kCastF16 = 23,   // round to f16 and back
  kCastBF16 = 24,  // round to bf16 and back
  // binary: slot[dst] = slot[a] op slot[b]
  kAdd = 40,
  kSub = 41,
  kMul = 42,
  kDiv = 43,
  kMax = 44,
  kMin = 45,
};

struct Instruction {
  OpCode op = OpCode::kConst;
  uint8_t dst = 0;  // slot; for kStore the output number (0-based among outputs)
  uint8_t a = 0;    // operand slot; for kLoad the input number
  uint8_t b = 0;    // second operand slot (binary ops)
  float value = 0;  // kConst
};

struct Bytecode {
  int32_t num_inputs = 0;
  int32_t num_outputs = 0;
  int32_t num_instructions = 0;
  int32_t num_slots = 0;
  int32_t rank = 0;  // of the merged iteration shape (0: one element)
  int64_t numel = 0;
  int64_t shape[kMaxRank] = {};
  ElementType types[kMaxTensors] = {};      // inputs then outputs
  int64_t strides[kMaxTensors][kMaxRank] = {};  // elements; 0 where broadcast
  Instruction code[kMaxInstructions] = {};
};

// Base pointers, in the bytecode's tensor order (outputs after inputs); kept apart from
// the bytecode so one compiled program serves every call.
struct TensorPointers {
  const void* data[kMaxTensors] = {};
};

// Whether the element count and every tensor's element offsets fit 31 bits, so that a
// kernel may index in 32-bit arithmetic (strides are never negative).
inline bool OffsetsFit32(const Bytecode& bc) {
  constexpr int64_t kLimit = int64_t(1) << 31;
  if (bc.numel >= kLimit) return false;
  for (int t = 0; t < bc.num_inputs + bc.num_outputs; ++t) {
    int64_t last = 0;  // tensor t's largest offset
    for (int d = 0; d < bc.rank; ++d) {
      int64_t term = 0;
      if (bc.shape[d] > 0 && (__builtin_mul_overflow(bc.shape[d] - 1, bc.strides[t][d], &term) ||
                              __builtin_add_overflow(last, term, &last) || last >= kLimit)) {
        return false;
      }
    }
  }
  return true;
}

// How the private-slot interpreter lays a group's `vector` lanes out: 0, consecutive
// elements (one run of `vector`); P > 0, spread over the 32 groups of a warp span in
// chunks of P consecutive elements, chunk c of group g (lane l = g % 32 of the span
// starting at element (g - l) * vector) at span + c * 32 * P + l * P. So a warp's load or
// store of one chunk is 32 * P consecutive elements (512 bytes of f32), where with runs
// of 16 lanes a thread each 16-byte load of the warp used half of every sector it
// touched (spread over 1 KiB of f16, 2 KiB of f32). P is 4 where a tensor is f32, else 8
// (16 bytes of the widest tensor). Spread at 16 lanes where each warp span of 512
// elements lies in one run of the innermost dimension (its extent a multiple). On the
// H200 that took the 8-op chain of bench/suites/pointwise.txt (f32) from 185.6 to 172.7 us
// and three held-out f16 and bf16 chains 0.4-2.9% faster; at 8 lanes spreading measured
// no different from consecutive runs (the chain's 8-lane config 226.9 against 227.7 us),
// so 8 lanes stay consecutive.
inline int SpreadChunk(const Bytecode& bc, int vector) {
  if (bc.rank == 0 || vector != 16 || bc.shape[bc.rank - 1] % (int64_t(32) * vector) != 0) return 0;
  for (int t = 0; t < bc.num_inputs + bc.num_outputs; ++t) {
    if (bc.types[t] == ElementType::kF32) return 4;
  }
  return 8;
}

}  // namespace opsched::pointwise
