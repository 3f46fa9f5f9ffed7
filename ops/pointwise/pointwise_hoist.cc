#include "ops/pointwise/pointwise_hoist.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "core/format.h"
#include "ops/pointwise/pointwise_accumulate.h"
#include "ops/pointwise/pointwise_compile.h"

namespace opsched::pointwise {
namespace {

// A set of the outputs' dimensions, one bit each (rank <= 8).
using DimMask = uint32_t;

// The dimensions of the outputs' shape that input `d` varies over (broadcast from the
// right, as Compile does): those where both it and the outputs are longer than 1.
DimMask MaskOf(const TensorDesc& d, const TensorDesc& out) {
  DimMask mask = 0;
  const int shift = out.rank() - d.rank();
  for (int i = 0; i < d.rank(); ++i) {
    if (d.dim(i) != 1 && out.dim(shift + i) != 1) mask |= DimMask{1} << (shift + i);
  }
  return mask;
}

// The outputs' shape with 1 in the dimensions outside `mask`.
Dims ShapeOver(const TensorDesc& out, DimMask mask) {
  Dims shape(out.shape().begin(), out.shape().end());
  for (int i = 0; i < out.rank(); ++i) {
    if (!(mask & (DimMask{1} << i))) shape[i] = 1;
  }
  return shape;
}

int64_t Elements(const Dims& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string ValueName(int k) { return fmt::format("$h{}", k); }  // no tensor name starts with '$'

struct Hoister {
  const std::map<std::string, DimMask>& masks;
  const TensorDesc& out;
  DimMask full = 0;
  int64_t numel = 0;
  std::map<std::string, int> by_text;  // a hoisted subexpression's text -> its value
  std::vector<Expr> values;
  std::vector<DimMask> value_masks;
  int ops_hoisted = 0;

  DimMask Mask(const Expr& e) const {
    if (e.op == OpCode::kLoad) {
      auto it = masks.find(e.name);
      return it == masks.end() ? full : it->second;
    }
    DimMask m = 0;
    for (const Expr& a : e.args) m |= Mask(a);
    return m;
  }

  bool Worth(const Expr& e, DimMask mask) const {
    if (e.op == OpCode::kLoad || e.op == OpCode::kConst || mask == 0 || mask == full) return false;
    return numel / Elements(ShapeOver(out, mask)) >= kMinHoistReuse;
  }

  // Replaces the largest subexpressions worth hoisting (top-down: the first met) by loads
  // of their values; equal ones share a value.
  void Rewrite(Expr* e) {
    const DimMask mask = Mask(*e);
    if (Worth(*e, mask)) {
      const std::string text = ExprText(*e);
      auto it = by_text.find(text);
      int k;
      if (it != by_text.end()) {
        k = it->second;
      } else {
        k = static_cast<int>(values.size());
        by_text.emplace(text, k);
        values.push_back(*e);
        value_masks.push_back(mask);
        ops_hoisted += CountOps(*e);
      }
      Expr load;
      load.op = OpCode::kLoad;
      load.name = ValueName(k);
      load.column = e->column;
      *e = std::move(load);
      return;
    }
    for (Expr& a : e->args) Rewrite(&a);
  }
};

// The bytecode and its accumulator form, or nullopt where the program exceeds their
// limits.
std::optional<std::pair<Bytecode, AccCode>> CompileBoth(const Program& p, const std::vector<TensorDesc>& inputs,
                                                        const std::vector<TensorDesc>& outputs) {
  StatusOr<Bytecode> bc = Compile(p, inputs, outputs);
  if (!bc.ok()) return std::nullopt;
  StatusOr<AccCode> code = ToAccumulatorForm(*bc);
  if (!code.ok()) return std::nullopt;
  return std::make_pair(*std::move(bc), *std::move(code));
}

}  // namespace

std::optional<Hoisted> Hoist(const Program& p, const std::vector<TensorDesc>& inputs,
                             const std::vector<TensorDesc>& outputs) {
  if (outputs.empty() || inputs.size() != p.inputs.size() || outputs[0].rank() > kMaxRank) return std::nullopt;
  const TensorDesc& out = outputs[0];
  if (out.numel() == 0) return std::nullopt;
  std::map<std::string, DimMask> masks;
  for (size_t i = 0; i < inputs.size(); ++i) masks[p.inputs[i]] = MaskOf(inputs[i], out);
  Hoister h{masks, out};
  h.full = MaskOf(out, out);
  h.numel = out.numel();
  Hoisted result;
  result.program = p;
  for (Expr& v : result.program.values) h.Rewrite(&v);
  if (h.values.empty()) return std::nullopt;
  result.ops_hoisted = h.ops_hoisted;

  // The workspace: each value f32 over its own shape, 16-byte aligned.
  std::vector<TensorDesc> value_descs;
  for (size_t k = 0; k < h.values.size(); ++k) {
    value_descs.push_back(TensorDesc::Contiguous(DType::kF32, ShapeOver(out, h.value_masks[k])));
    result.offsets.push_back(result.workspace_bytes);
    result.workspace_bytes += (static_cast<size_t>(value_descs.back().bytes()) + 15) / 16 * 16;
  }

  // One pass per set of dimensions, in order of first appearance.
  std::vector<DimMask> pass_masks;
  for (DimMask m : h.value_masks) {
    if (std::find(pass_masks.begin(), pass_masks.end(), m) == pass_masks.end()) pass_masks.push_back(m);
  }
  for (DimMask m : pass_masks) {
    HoistPass pass;
    Program program;
    std::set<std::string> loads;
    std::vector<TensorDesc> pass_outputs;
    for (size_t k = 0; k < h.values.size(); ++k) {
      if (h.value_masks[k] != m) continue;
      CollectNames(h.values[k], &loads);
      program.outputs.push_back(ValueName(static_cast<int>(k)));
      program.values.push_back(h.values[k]);
      pass.values.push_back(static_cast<int>(k));
      pass_outputs.push_back(value_descs[k]);
    }
    std::vector<TensorDesc> pass_inputs;
    for (size_t i = 0; i < p.inputs.size(); ++i) {
      if (!loads.count(p.inputs[i])) continue;
      program.inputs.push_back(p.inputs[i]);
      pass_inputs.push_back(inputs[i]);
      pass.inputs.push_back(static_cast<int>(i));
    }
    auto compiled = CompileBoth(program, pass_inputs, pass_outputs);
    if (!compiled) return std::nullopt;
    std::tie(pass.bytecode, pass.accumulator) = *std::move(compiled);
    result.passes.push_back(std::move(pass));
  }

  // The main program reads the values after the workload's inputs.
  std::vector<TensorDesc> main_inputs = inputs;
  for (size_t k = 0; k < h.values.size(); ++k) {
    result.program.inputs.push_back(ValueName(static_cast<int>(k)));
    main_inputs.push_back(value_descs[k]);
  }
  auto compiled = CompileBoth(result.program, main_inputs, outputs);
  if (!compiled) return std::nullopt;
  std::tie(result.bytecode, result.accumulator) = *std::move(compiled);
  return result;
}

TensorPointers PassPointers(const Hoisted& h, size_t k, const void* const* tensors, void* workspace) {
  const HoistPass& pass = h.passes[k];
  TensorPointers p;
  int t = 0;
  for (int input : pass.inputs) p.data[t++] = tensors[input];
  for (int value : pass.values) p.data[t++] = static_cast<const char*>(workspace) + h.offsets[value];
  return p;
}

TensorPointers MainPointers(const Hoisted& h, int num_inputs, int num_outputs, const void* const* tensors,
                            void* workspace) {
  TensorPointers p;
  int t = 0;
  for (int i = 0; i < num_inputs; ++i) p.data[t++] = tensors[i];
  for (size_t offset : h.offsets) p.data[t++] = static_cast<const char*>(workspace) + offset;
  for (int o = 0; o < num_outputs; ++o) p.data[t++] = tensors[num_inputs + o];
  return p;
}

}  // namespace opsched::pointwise
