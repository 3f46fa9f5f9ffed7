// Runtime::Reduce and Runtime::BiasGrad: typed entry points over the reduce op. Like
// Scatter they fill a per-thread workload and run it like any other.
#include "core/format.h"
#include "opsched/runtime.h"

namespace opsched {
namespace {

const char* OpName(ReduceKind op) {
  switch (op) {
    case ReduceKind::kMean:
      return "mean";
    case ReduceKind::kMax:
      return "max";
    case ReduceKind::kMin:
      return "min";
    case ReduceKind::kSumSquares:
      return "sumsq";
    default:
      return "sum";
  }
}

}  // namespace

Status Runtime::Reduce(const Tensor& x, const Tensor& y, absl::Span<const int64_t> axes, ReduceKind op,
                       bool keepdims, const Stream& stream) {
  thread_local Workload w;
  w.Clear();
  w.set_op("reduce");
  w.SetTensor("x", x.desc);
  Dims all;
  if (axes.empty()) {
    for (int d = 0; d < x.desc.rank(); ++d) all.push_back(d);
  } else {
    all.assign(axes.begin(), axes.end());
  }
  w.SetAttr("axes", std::move(all));
  w.SetAttr("op", std::string(OpName(op)));
  w.SetAttr("keepdims", keepdims);
  if (y.desc.dtype() != x.desc.dtype()) w.SetAttr("dtype", std::string(DTypeName(y.desc.dtype())));
  const Tensor tensors[] = {x, y};
  return Run(w, tensors, stream);
}

Status Runtime::BiasGrad(const Tensor& dy, const Tensor& db, std::string_view layout, const Stream& stream) {
  const int rank = dy.desc.rank();
  if (rank < 2) {
    return absl::InvalidArgumentError(
        fmt::format("bias gradient: dy {} needs a batch and a channel axis", dy.desc.ToString()));
  }
  int channel;
  if (layout == "nchw") {
    channel = 1;
  } else if (layout == "nhwc") {
    channel = rank - 1;
  } else {
    return absl::InvalidArgumentError(fmt::format("bias gradient: unknown layout '{}' (nchw or nhwc)", layout));
  }
  int64_t axes[8];
  int n = 0;
  for (int d = 0; d < rank && n < 8; ++d) {
    if (d != channel) axes[n++] = d;
  }
  return Reduce(dy, db, absl::MakeConstSpan(axes, n), ReduceKind::kSum, false, stream);
}

}  // namespace opsched
