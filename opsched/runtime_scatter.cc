// Runtime::Scatter: the typed entry point. It fills a per-thread workload (no heap
// allocation once warm: names and values fit the small-string and inline buffers) and
// runs it like any other.
#include "opsched/runtime.h"

namespace opsched {
namespace {

const char* ReductionName(ScatterReduction r) {
  switch (r) {
    case ScatterReduction::kAdd:
      return "add";
    case ScatterReduction::kMul:
      return "mul";
    case ScatterReduction::kMin:
      return "min";
    case ScatterReduction::kMax:
      return "max";
    default:
      return "none";
  }
}

}  // namespace

Status Runtime::Scatter(const Tensor& data, const Tensor& indices, const Tensor& updates,
                        const Tensor& out, int64_t axis, ScatterReduction reduction,
                        const Stream& stream) {
  thread_local Workload w;
  w.Clear();
  w.set_op("scatter");
  w.SetTensor("data", data.desc);
  w.SetTensor("indices", indices.desc);
  w.SetTensor("updates", updates.desc);
  w.SetAttr("axis", axis);
  w.SetAttr("reduction", std::string(ReductionName(reduction)));
  const Tensor tensors[] = {data, indices, updates, out};
  return Run(w, tensors, stream);
}

}  // namespace opsched
