// Runtime::Pointwise: the pointwise op's typed entry point. The program text and the
// named tensors make a workload (inputs and outputs as tensors, expr the text); the
// dispatcher's cache is keyed by it, so a program is parsed, canonicalised and compiled
// once per (text, tensor descriptors) and later calls only look it up.
#include <algorithm>

#include "core/format.h"
#include "opsched/runtime.h"

namespace opsched {

Status Runtime::Pointwise(std::string_view program, absl::Span<const NamedTensor> inputs,
                          absl::Span<const NamedTensor> outputs, const Stream& stream) {
  constexpr size_t kMaxTensors = 16;
  if (inputs.size() + outputs.size() > kMaxTensors) {
    return absl::InvalidArgumentError(
        fmt::format("pointwise: {} tensors, at most {}", inputs.size() + outputs.size(), kMaxTensors));
  }
  // The canonical order: inputs by name, then outputs by name.
  const NamedTensor* order[kMaxTensors];
  size_t n = 0;
  for (const NamedTensor& t : inputs) order[n++] = &t;
  for (const NamedTensor& t : outputs) order[n++] = &t;
  auto by_name = [](const NamedTensor* a, const NamedTensor* b) { return a->name < b->name; };
  std::sort(order, order + inputs.size(), by_name);
  std::sort(order + inputs.size(), order + n, by_name);
  thread_local Workload w;
  w.Clear();
  w.set_op("pointwise");
  Tensor tensors[kMaxTensors];
  for (size_t i = 0; i < n; ++i) {
    if (w.FindTensor(order[i]->name) != nullptr) {
      return absl::InvalidArgumentError(fmt::format("pointwise: tensor '{}' is given twice", order[i]->name));
    }
    w.SetTensor(order[i]->name, order[i]->tensor.desc);
    tensors[i] = order[i]->tensor;
  }
  w.SetAttr("expr", std::string(program));
  return Run(w, absl::MakeConstSpan(tensors, n), stream);
}

}  // namespace opsched
