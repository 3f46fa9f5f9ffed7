#include "ops/pointwise/pointwise_compile.h"

#include <algorithm>
#include <map>

#include "core/format.h"
#include "ops/pointwise/pointwise_math.h"

namespace opsched::pointwise {
namespace {

struct Value {
  Instruction in;        // operands a, b as value ids until slots are assigned
  int last_use = -1;     // instruction index
};

// Slots a tree needs (pointwise_expr.h's Need): a constant needs none, since the
// accumulator form folds it into the instruction that uses it. Computing the operand that
// needs more first, `a*0.5 + f(g(a))*h(a)` spills two values instead of three.
int SlotNeed(const Expr& e) { return Need(e, 0); }

struct Emitter {
  const std::vector<std::string>& inputs;
  std::map<std::string, int> by_text;
  std::vector<Value> values;

  int Emit(const Expr& e) {
    const std::string text = ExprText(e);
    if (auto it = by_text.find(text); it != by_text.end()) return it->second;
    Instruction in;
    in.op = e.op;
    if (e.op == OpCode::kLoad) {
      for (size_t i = 0; i < inputs.size(); ++i) {
        if (inputs[i] == e.name) in.a = static_cast<uint8_t>(i);
      }
    } else if (e.op == OpCode::kConst) {
      in.value = static_cast<float>(e.value);
    } else {
      // Operand ids fit: more than kMaxInstructions values is refused below. The operand
      // that needs more slots is computed first (the operands keep their places).
      const bool binary = e.args.size() > 1;
      int a = 0, b = 0;
      if (binary && SlotNeed(e.args[1]) > SlotNeed(e.args[0])) {
        b = Emit(e.args[1]);
        a = Emit(e.args[0]);
      } else {
        a = Emit(e.args[0]);
        if (binary) b = Emit(e.args[1]);
      }
      in.a = static_cast<uint8_t>(std::min(a, 255));
      if (binary) in.b = static_cast<uint8_t>(std::min(b, 255));
    }
    values.push_back(Value{in});
    by_text[text] = static_cast<int>(values.size()) - 1;
    return static_cast<int>(values.size()) - 1;
  }
};

}  // namespace

ElementType ElementTypeOf(DType d) {
  return d == DType::kF16 ? ElementType::kF16 : d == DType::kBF16 ? ElementType::kBF16 : ElementType::kF32;
}

StatusOr<Bytecode> Compile(const Program& p, const std::vector<TensorDesc>& inputs,
                           const std::vector<TensorDesc>& outputs) {
  Bytecode bc;
  const int tensors = static_cast<int>(inputs.size() + outputs.size());
  if (tensors > kMaxTensors) {
    return absl::InvalidArgumentError(
        fmt::format("pointwise: {} tensors, at most {} (inputs and outputs)", tensors, kMaxTensors));
  }
  bc.num_inputs = static_cast<int32_t>(inputs.size());
  bc.num_outputs = static_cast<int32_t>(outputs.size());
  // Per tensor, strides over the outputs' dimensions (0 where broadcast).
  const TensorDesc& out = outputs[0];
  const int rank = out.rank();
  std::vector<std::vector<int64_t>> strides(tensors, std::vector<int64_t>(rank, 0));
  for (int t = 0; t < tensors; ++t) {
    const TensorDesc& d = t < bc.num_inputs ? inputs[t] : outputs[t - bc.num_inputs];
    bc.types[t] = ElementTypeOf(d.dtype());
    const int shift = rank - d.rank();
    for (int i = 0; i < d.rank(); ++i) {
      if (d.dim(i) != 1) strides[t][shift + i] = d.stride(i);
    }
  }
  // Size-1 dimensions dropped, neighbours merged where every tensor allows.
  std::vector<int64_t> shape;
  std::vector<std::vector<int64_t>> merged(tensors);
  for (int i = 0; i < rank; ++i) {
    if (out.dim(i) == 1) continue;
    bool merge = !shape.empty();
    for (int t = 0; t < tensors && merge; ++t) merge = merged[t].back() == strides[t][i] * out.dim(i);
    if (merge) {
      shape.back() *= out.dim(i);
      for (int t = 0; t < tensors; ++t) merged[t].back() = strides[t][i];
    } else {
      shape.push_back(out.dim(i));
      for (int t = 0; t < tensors; ++t) merged[t].push_back(strides[t][i]);
    }
  }
  bc.rank = static_cast<int32_t>(shape.size());
  bc.numel = out.numel();
  for (int i = 0; i < bc.rank; ++i) {
    bc.shape[i] = shape[i];
    for (int t = 0; t < tensors; ++t) bc.strides[t][i] = merged[t][i];
  }
  // Instructions: every value once, then the stores.
  Emitter emitter{p.inputs, {}, {}};
  std::vector<int> results;
  for (const Expr& v : p.values) results.push_back(emitter.Emit(v));
  std::vector<Value>& values = emitter.values;
  const int n = static_cast<int>(values.size());
  if (n + bc.num_outputs > kMaxInstructions) {
    return absl::InvalidArgumentError(fmt::format(
        "pointwise: the program needs {} instructions, at most {}", n + bc.num_outputs, kMaxInstructions));
  }
  for (int i = 0; i < n; ++i) {
    const Instruction& in = values[i].in;
    if (IsUnary(in.op) || IsBinary(in.op)) values[in.a].last_use = i;
    if (IsBinary(in.op)) values[in.b].last_use = i;
  }
  for (int r : results) values[r].last_use = n;  // live until the stores
  // Slots: a value's slot is free after its last use (an operand's slot may become the
  // result's: RunElement reads operands before it writes).
  std::vector<int> slot_of(n, -1);
  std::vector<bool> busy(kMaxSlots, false);
  int slots = 0;
  for (int i = 0; i < n; ++i) {
    Instruction in = values[i].in;
    if (IsUnary(in.op) || IsBinary(in.op)) {
      const int a = in.a, b = in.b;
      in.a = static_cast<uint8_t>(slot_of[a]);
      if (values[a].last_use == i) busy[slot_of[a]] = false;
      if (IsBinary(in.op)) {
        in.b = static_cast<uint8_t>(slot_of[b]);
        if (values[b].last_use == i) busy[slot_of[b]] = false;
      }
    }
    int s = 0;
    while (s < kMaxSlots && busy[s]) ++s;
    if (s == kMaxSlots) {
      return absl::InvalidArgumentError(
          fmt::format("pointwise: the program needs more than {} live values", kMaxSlots));
    }
    // A value never used (only possible for none: every value feeds a result) frees at once.
    busy[s] = values[i].last_use > i;
    slot_of[i] = s;
    slots = std::max(slots, s + 1);
    in.dst = static_cast<uint8_t>(s);
    bc.code[i] = in;
  }
  for (int o = 0; o < bc.num_outputs; ++o) {
    Instruction st;
    st.op = OpCode::kStore;
    st.dst = static_cast<uint8_t>(o);
    st.a = static_cast<uint8_t>(slot_of[results[o]]);
    bc.code[n + o] = st;
  }
  bc.num_instructions = n + bc.num_outputs;
  bc.num_slots = slots;
  return bc;
}

std::string Disassemble(const Bytecode& bc, const Program& p) {
  std::string out;
  for (int k = 0; k < bc.num_instructions; ++k) {
    const Instruction& in = bc.code[k];
    switch (in.op) {
      case OpCode::kLoad: out += fmt::format("s{} = load {}\n", in.dst, p.inputs[in.a]); break;
      case OpCode::kConst: out += fmt::format("s{} = {}\n", in.dst, in.value); break;
      case OpCode::kStore: out += fmt::format("store {} = s{}\n", p.outputs[in.dst], in.a); break;
      default:
        if (IsBinary(in.op) && in.op <= OpCode::kDiv) {
          out += fmt::format("s{} = s{} {} s{}\n", in.dst, in.a, OpName(in.op), in.b);
        } else if (IsBinary(in.op)) {
          out += fmt::format("s{} = {}(s{}, s{})\n", in.dst, OpName(in.op), in.a, in.b);
        } else {
          out += fmt::format("s{} = {}(s{})\n", in.dst, OpName(in.op), in.a);
        }
    }
  }
  return out;
}

}  // namespace opsched::pointwise
