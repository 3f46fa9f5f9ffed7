#include "ops/pointwise/pointwise_accumulate.h"

#include <algorithm>
#include <cstdint>

#include "core/format.h"
#include "ops/pointwise/pointwise_math.h"

namespace opsched::pointwise {
namespace {

uint32_t Bit(int slot) { return uint32_t{1} << slot; }

bool Immediate(const AccInstruction& in) { return (in.mode & kOperandImmediate) != 0; }

// Replaces adjacent pairs by the kernel's superinstructions, one dispatch where the pair
// took two, each computing what the pair computed bit for bit:
//   abs; neg                   -> kNegAbs
//   * m; + c   (m, c immediate) -> kMulAdd m, c       acc * m + c (c + acc * m alike)
//   * m; - c                   -> kMulAdd m, -c      x - c is x + -c
//   * m; c - acc               -> kMulAdd -m, c      -(x * m) is x * -m (rounding is symmetric)
//   * m; + spill s             -> kMulAdd m, spill s
//   * m; spill s - acc         -> kMulAdd -m, spill s
// An immediate c goes to a kOperandWord after the kMulAdd (the two keep the pair's two
// words). Runs before Folded, so a pair is adjacent only with no spill or fetch between.
AccCode FuseSuperinstructions(const AccCode& code) {
  AccCode out;
  out.num_spills = code.num_spills;
  auto push = [&out](const AccInstruction& in) {
    out.code[out.num_instructions] = in;
    out.code[out.num_instructions++].key = DispatchKey(in.op, in.mode);
  };
  for (int k = 0; k < code.num_instructions; ++k) {
    const AccInstruction& in = code.code[k];
    const AccInstruction* next = k + 1 < code.num_instructions ? &code.code[k + 1] : nullptr;
    if (next && in.op == OpCode::kAbs && next->op == OpCode::kNeg) {
      AccInstruction fused;
      fused.op = OpCode::kNegAbs;
      push(fused);
      ++k;
      continue;
    }
    const bool first = next && (next->mode & kOperandFirst);
    const bool sum = next && (next->op == OpCode::kAdd || (next->op == OpCode::kSub && (Immediate(*next) || first)));
    if (in.op == OpCode::kMul && Immediate(in) && sum) {
      AccInstruction fused;
      fused.op = OpCode::kMulAdd;
      fused.value = next->op == OpCode::kSub && first ? -in.value : in.value;
      if (Immediate(*next)) {
        fused.mode = kOperandImmediate;
        push(fused);
        AccInstruction word;
        word.op = OpCode::kOperandWord;
        word.value = next->op == OpCode::kSub && !first ? -next->value : next->value;
        push(word);
      } else {
        fused.slot = next->slot;
        push(fused);
      }
      ++k;
      continue;
    }
    out.code[out.num_instructions++] = in;
  }
  return out;
}

// Folds each kSpill and kFetch into the instruction after them (spill_first,
// fetch_first), so that the kernel dispatches once for the three. Where the next
// instruction has no room (a spill after a fetch, or a second of either), the earlier
// ones stay instructions of their own; the order of effects is unchanged.
AccCode Folded(const AccCode& code) {
  AccCode out;
  out.num_spills = code.num_spills;
  int spill = 0, fetch = 0;  // pending: 1 + the slot, 0: none
  auto push = [&out](OpCode op, int slot) {
    AccInstruction& in = out.code[out.num_instructions++];
    in = AccInstruction{};
    in.op = op;
    in.key = DispatchKey(op);
    in.slot = static_cast<uint8_t>(slot);
  };
  auto flush = [&] {
    if (spill) push(OpCode::kSpill, spill - 1);
    if (fetch) push(OpCode::kFetch, fetch - 1);
    spill = fetch = 0;
  };
  for (int k = 0; k < code.num_instructions; ++k) {
    AccInstruction in = code.code[k];
    if (in.op == OpCode::kSpill) {
      if (spill || fetch) flush();
      spill = 1 + in.slot;
    } else if (in.op == OpCode::kFetch) {
      if (fetch) flush();
      fetch = 1 + in.slot;
    } else {
      in.spill_first = static_cast<uint8_t>(spill);
      in.fetch_first = static_cast<uint8_t>(fetch);
      spill = fetch = 0;
      out.code[out.num_instructions++] = in;
    }
  }
  flush();
  return out;
}

// live_after[k]: the slots whose value after bytecode instruction k is read later.
void Liveness(const Bytecode& bc, uint32_t* live_after) {
  uint32_t live = 0;
  for (int k = bc.num_instructions - 1; k >= 0; --k) {
    live_after[k] = live;
    const Instruction& in = bc.code[k];
    if (in.op == OpCode::kStore) {
      live |= Bit(in.a);
      continue;
    }
    live &= ~Bit(in.dst);
    if (IsUnary(in.op) || IsBinary(in.op)) live |= Bit(in.a);
    if (IsBinary(in.op)) live |= Bit(in.b);
  }
}

class Rewriter {
 public:
  explicit Rewriter(const Bytecode& bc) : bc_(bc) { Liveness(bc, live_after_); }

  StatusOr<AccCode> Run() {
    for (int k = 0; k < bc_.num_instructions; ++k) {
      k_ = k;
      const Instruction& in = bc_.code[k];
      switch (in.op) {
        case OpCode::kConst:
          if (acc_ == in.dst) acc_ = -1;
          Forget(in.dst);
          constant_[in.dst] = true;
          value_[in.dst] = in.value;
          break;
        case OpCode::kLoad:
          OPSCHED_RETURN_IF_ERROR(Preserve(in.dst));
          OPSCHED_RETURN_IF_ERROR(Emit(OpCode::kLoad, in.a));
          Define(in.dst);
          break;
        case OpCode::kStore:
          OPSCHED_RETURN_IF_ERROR(Bring(in.a, -1));
          OPSCHED_RETURN_IF_ERROR(Emit(OpCode::kStore, in.dst));
          break;
        default:
          OPSCHED_RETURN_IF_ERROR(IsBinary(in.op) ? BinaryOp(in) : UnaryOp(in));
          break;
      }
      // Spill slots of values no longer needed are free again.
      for (int s = 0; s < kMaxSlots; ++s) {
        if (!(live_after_[k] & Bit(s))) Release(s);
      }
    }
    return Folded(FuseSuperinstructions(code_));
  }

 private:
  Status UnaryOp(const Instruction& in) {
    OPSCHED_RETURN_IF_ERROR(Bring(in.a, in.dst));
    OPSCHED_RETURN_IF_ERROR(Preserve(in.dst));
    OPSCHED_RETURN_IF_ERROR(Emit(in.op, 0));
    Define(in.dst);
    return absl::OkStatus();
  }

  Status BinaryOp(const Instruction& in) {
    int other = in.b;
    uint8_t mode = 0;
    if (acc_ == in.b && acc_ != in.a) {
      other = in.a;
      mode = kOperandFirst;
    } else {
      OPSCHED_RETURN_IF_ERROR(Bring(in.a, in.dst));
    }
    AccInstruction op;
    op.op = in.op;
    if (constant_[other]) {
      op.mode = mode | kOperandImmediate;
      op.value = value_[other];
    } else {
      if (spill_of_[other] < 0) {
        if (acc_ != other) return Malformed(other);
        OPSCHED_RETURN_IF_ERROR(Spill());  // x op x
      }
      op.mode = mode;
      op.slot = static_cast<uint8_t>(spill_of_[other]);
    }
    OPSCHED_RETURN_IF_ERROR(Preserve(in.dst));
    OPSCHED_RETURN_IF_ERROR(Push(op));
    Define(in.dst);
    return absl::OkStatus();
  }

  // Makes the accumulator hold slot s's value (dst: the slot the current instruction
  // writes, whose old value is dead).
  Status Bring(int s, int dst) {
    if (acc_ == s) return absl::OkStatus();
    OPSCHED_RETURN_IF_ERROR(Preserve(dst));
    if (constant_[s]) {
      AccInstruction c;
      c.op = OpCode::kConst;
      c.value = value_[s];
      OPSCHED_RETURN_IF_ERROR(Push(c));
    } else if (spill_of_[s] >= 0) {
      OPSCHED_RETURN_IF_ERROR(Emit(OpCode::kFetch, spill_of_[s]));
    } else {
      return Malformed(s);
    }
    acc_ = s;
    return absl::OkStatus();
  }

  // Before the accumulator is overwritten: spills its value if a later instruction
  // reads it and it is not kept elsewhere.
  Status Preserve(int dst) {
    if (acc_ < 0 || acc_ == dst || !(live_after_[k_] & Bit(acc_))) return absl::OkStatus();
    if (constant_[acc_] || spill_of_[acc_] >= 0) return absl::OkStatus();
    return Spill();
  }

  // The accumulator's value to the lowest free spill slot (at most kMaxSlots values are
  // live at once, so one is free).
  Status Spill() {
    int free = 0;
    while (free < kMaxSlots && (busy_ & Bit(free))) ++free;
    if (free == kMaxSlots) return absl::InternalError("pointwise: more live values than spill slots");
    busy_ |= Bit(free);
    spill_of_[acc_] = free;
    code_.num_spills = std::max(code_.num_spills, free + 1);
    return Emit(OpCode::kSpill, free);
  }

  // Slot `dst` now holds the accumulator's new value.
  void Define(int dst) {
    Forget(dst);
    acc_ = dst;
  }

  void Forget(int s) {
    Release(s);
    constant_[s] = false;
  }

  void Release(int s) {
    if (spill_of_[s] >= 0) busy_ &= ~Bit(spill_of_[s]);
    spill_of_[s] = -1;
  }

  Status Emit(OpCode op, int slot) {
    AccInstruction in;
    in.op = op;
    in.slot = static_cast<uint8_t>(slot);
    return Push(in);
  }

  Status Push(const AccInstruction& in) {
    if (code_.num_instructions >= kMaxAccInstructions) {
      return absl::InternalError("pointwise: the accumulator form exceeds its instruction bound");
    }
    code_.code[code_.num_instructions] = in;
    code_.code[code_.num_instructions++].key = DispatchKey(in.op, in.mode);
    return absl::OkStatus();
  }

  Status Malformed(int s) const {
    return absl::InternalError(fmt::format("pointwise: bytecode instruction {} reads slot {} before it is written", k_, s));
  }

  const Bytecode& bc_;
  uint32_t live_after_[kMaxInstructions] = {};
  int k_ = 0;
  int acc_ = -1;  // the bytecode slot whose current value the accumulator holds
  int spill_of_[kMaxSlots] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                              -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
  bool constant_[kMaxSlots] = {};
  float value_[kMaxSlots] = {};
  uint32_t busy_ = 0;  // spill slots in use
  AccCode code_;
};

}  // namespace

StatusOr<AccCode> ToAccumulatorForm(const Bytecode& bc) {
  if (bc.num_instructions < 0 || bc.num_instructions > kMaxInstructions) {
    return absl::InvalidArgumentError("pointwise: bytecode instruction count out of range");
  }
  for (int k = 0; k < bc.num_instructions; ++k) {
    const Instruction& in = bc.code[k];
    const bool load = in.op == OpCode::kLoad, store = in.op == OpCode::kStore;
    const bool known = load || store || in.op == OpCode::kConst || IsUnary(in.op) || IsBinary(in.op);
    const bool slots_ok = (store || in.dst < kMaxSlots) && (load || in.a < kMaxSlots) && in.b < kMaxSlots;
    const bool tensor_ok = (!load || in.a < bc.num_inputs) && (!store || in.dst < bc.num_outputs);
    if (!known || !slots_ok || !tensor_ok) {
      return absl::InvalidArgumentError(fmt::format("pointwise: bytecode instruction {} is malformed", k));
    }
  }
  return Rewriter(bc).Run();
}

std::string Disassemble(const AccCode& code, const Program& p) {
  std::string out;
  for (int k = 0; k < code.num_instructions; ++k) {
    const AccInstruction& in = code.code[k];
    if (in.spill_first) out += fmt::format("spill{} = acc; ", in.spill_first - 1);
    if (in.fetch_first) out += fmt::format("acc = spill{}; ", in.fetch_first - 1);
    switch (in.op) {
      case OpCode::kLoad: out += fmt::format("acc = load {}\n", p.inputs[in.slot]); break;
      case OpCode::kConst: out += fmt::format("acc = {}\n", in.value); break;
      case OpCode::kStore: out += fmt::format("store {} = acc\n", p.outputs[in.slot]); break;
      case OpCode::kFetch: out += fmt::format("acc = spill{}\n", in.slot); break;
      case OpCode::kSpill: out += fmt::format("spill{} = acc\n", in.slot); break;
      case OpCode::kNegAbs: out += "acc = -abs(acc)\n"; break;
      case OpCode::kMulAdd: {
        const bool word = Immediate(in) && k + 1 < code.num_instructions;
        out += word ? fmt::format("acc = acc * {} + {}\n", in.value, code.code[++k].value)
                    : fmt::format("acc = acc * {} + spill{}\n", in.value, in.slot);
        break;
      }
      case OpCode::kOperandWord: out += fmt::format("word {}\n", in.value); break;
      default:
        if (IsBinary(in.op)) {
          const std::string x = in.mode & kOperandImmediate ? fmt::format("{}", in.value) : fmt::format("spill{}", in.slot);
          const std::string l = in.mode & kOperandFirst ? x : "acc";
          const std::string r = in.mode & kOperandFirst ? "acc" : x;
          out += in.op <= OpCode::kDiv ? fmt::format("acc = {} {} {}\n", l, OpName(in.op), r)
                                       : fmt::format("acc = {}({}, {})\n", OpName(in.op), l, r);
        } else {
          out += fmt::format("acc = {}(acc)\n", OpName(in.op));
        }
    }
  }
  return out;
}

}  // namespace opsched::pointwise
