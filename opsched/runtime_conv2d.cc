// Runtime::Conv2d, Conv2dBiasActivation and Conv2dBackward: typed entry points over the
// conv2d family. Like Scatter and Reduce they fill a per-thread workload (no allocation
// once warm) and run it like any other.
#include "opsched/runtime.h"

namespace opsched {
namespace {

const char* ActivationName(Activation act) {
  switch (act) {
    case Activation::kRelu:
      return "relu";
    case Activation::kSigmoid:
      return "sigmoid";
    case Activation::kTanh:
      return "tanh";
    default:
      return "identity";
  }
}

// The conv2d-family workload of `op` over x and w with `params`.
Workload& ConvWorkload(std::string_view op, const Tensor& x, const Tensor& w, const Conv2dParams& params) {
  thread_local Workload wl;
  wl.Clear();
  wl.set_op(op);
  wl.SetTensor("x", x.desc);
  wl.SetTensor("w", w.desc);
  wl.SetAttr("stride", Dims{params.stride[0], params.stride[1]});
  wl.SetAttr("pad", Dims{params.pad[0], params.pad[1]});
  wl.SetAttr("dilation", Dims{params.dilation[0], params.dilation[1]});
  wl.SetAttr("groups", params.groups);
  wl.SetAttr("layout", std::string(params.layout == ConvLayout::kNhwc ? "nhwc" : "nchw"));
  wl.SetAttr("math", std::string(params.math == ConvMath::kTf32 ? "tf32" : "fp32"));
  return wl;
}

}  // namespace

Status Runtime::Conv2d(const Tensor& x, const Tensor& w, const Tensor& y, const Conv2dParams& params,
                       const Stream& stream) {
  Workload& wl = ConvWorkload("conv2d", x, w, params);
  const Tensor tensors[] = {x, w, y};
  return Run(wl, tensors, stream);
}

Status Runtime::Conv2dBiasActivation(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& y,
                                     const Conv2dParams& params, Activation act, const Stream& stream) {
  Workload& wl = ConvWorkload("conv2d_bias_act", x, w, params);
  wl.SetTensor("b", b.desc);
  wl.SetAttr("act", std::string(ActivationName(act)));
  const Tensor tensors[] = {x, w, b, y};
  return Run(wl, tensors, stream);
}

Status Runtime::Conv2dBackward(const Tensor& x, const Tensor& w, const Tensor& dy, const Tensor& dx,
                               const Tensor& dw, const Tensor* db, const Conv2dParams& params,
                               const Stream& stream) {
  Workload& wl = ConvWorkload("conv2d_backward", x, w, params);
  wl.SetTensor("dy", dy.desc);
  const Tensor tensors[] = {x, w, dy, dx, dw};
  OPSCHED_RETURN_IF_ERROR(Run(wl, tensors, stream));
  if (db == nullptr) return absl::OkStatus();
  return BiasGrad(dy, *db, params.layout == ConvLayout::kNhwc ? "nhwc" : "nchw", stream);
}

}  // namespace opsched
