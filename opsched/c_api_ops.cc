// The C API's ops: each converts and checks its C arguments, then calls the Runtime's
// typed entry point on the caller's stream.
#include <cstring>

#include "core/format.h"
#include "opsched/c_api_internal.h"

using opsched::capi::Guard;
using opsched::capi::RuntimeOf;
using opsched::capi::StreamOf;
using opsched::capi::TensorFromC;

namespace opsched::capi {
namespace {

// `value` as an enum with values 0..last, or InvalidArgument naming `what`.
template <typename Enum>
StatusOr<Enum> EnumFromC(int32_t value, int32_t last, std::string_view what) {
  if (value < 0 || value > last) {
    return absl::InvalidArgumentError(fmt::format("{} {} is unknown (0 to {})", what, value, last));
  }
  return static_cast<Enum>(value);
}

StatusOr<Conv2dParams> ParamsFromC(const opsched_conv2d_params* given, std::string_view what) {
  OPSCHED_ASSIGN_OR_RETURN(const opsched_conv2d_params p,
                           ReadVersioned(given, opsched_conv2d_params_init, sizeof(size_t),
                                         fmt::format("{}: params", what), "opsched_conv2d_params_init"));
  Conv2dParams out;
  for (int i = 0; i < 2; ++i) {
    out.stride[i] = p.stride[i];
    out.pad[i] = p.pad[i];
    out.dilation[i] = p.dilation[i];
  }
  out.groups = p.groups;
  OPSCHED_ASSIGN_OR_RETURN(out.layout, EnumFromC<ConvLayout>(p.layout, OPSCHED_NHWC, fmt::format("{}: layout", what)));
  OPSCHED_ASSIGN_OR_RETURN(out.math, EnumFromC<ConvMath>(p.math, OPSCHED_MATH_TF32, fmt::format("{}: math", what)));
  return out;
}

}  // namespace
}  // namespace opsched::capi

using opsched::capi::EnumFromC;
using opsched::capi::ParamsFromC;

extern "C" {

void opsched_conv2d_params_init(opsched_conv2d_params* params) {
  if (params == nullptr) return;
  std::memset(params, 0, sizeof(*params));
  params->struct_size = sizeof(*params);
  params->stride[0] = params->stride[1] = 1;
  params->dilation[0] = params->dilation[1] = 1;
  params->groups = 1;
  params->layout = OPSCHED_NCHW;
  params->math = OPSCHED_MATH_FP32;
}

opsched_status opsched_scatter(opsched_runtime* runtime, const opsched_tensor* data,
                               const opsched_tensor* indices, const opsched_tensor* updates,
                               const opsched_tensor* out, int64_t axis, int32_t reduction, void* stream) {
  return Guard("scatter", [&]() -> opsched::Status {
    OPSCHED_ASSIGN_OR_RETURN(opsched::Runtime* rt, RuntimeOf(runtime, "scatter"));
    OPSCHED_ASSIGN_OR_RETURN(const opsched::Tensor d, TensorFromC(data, "scatter", "data"));
    OPSCHED_ASSIGN_OR_RETURN(const opsched::Tensor i, TensorFromC(indices, "scatter", "indices"));
    OPSCHED_ASSIGN_OR_RETURN(const opsched::Tensor u, TensorFromC(updates, "scatter", "updates"));
    OPSCHED_ASSIGN_OR_RETURN(const opsched::Tensor o, TensorFromC(out, "scatter", "out"));
    OPSCHED_ASSIGN_OR_RETURN(const auto r, EnumFromC<opsched::ScatterReduction>(
                                               reduction, OPSCHED_SCATTER_MAX, "scatter: reduction"));
    return rt->Scatter(d, i, u, o, axis, r, StreamOf(*rt, stream));
  });
}

opsched_status opsched_reduce(opsched_runtime* runtime, const opsched_tensor* x, const opsched_tensor* y,
                              const int64_t* axes, int32_t num_axes, int32_t op, int32_t keepdims,
                              void* stream) {
  return Guard("reduce", [&]() -> opsched::Status {
    OPSCHED_ASSIGN_OR_RETURN(opsched::Runtime* rt, RuntimeOf(runtime, "reduce"));
    OPSCHED_ASSIGN_OR_RETURN(const opsched::Tensor xt, TensorFromC(x, "reduce", "x"));
    OPSCHED_ASSIGN_OR_RETURN(const opsched::Tensor yt, TensorFromC(y, "reduce", "y"));
    if (num_axes < 0 || (num_axes > 0 && axes == nullptr)) {
      return absl::InvalidArgumentError(fmt::format("reduce: {} axes but no list", num_axes));
    }
    OPSCHED_ASSIGN_OR_RETURN(const auto kind,
                             EnumFromC<opsched::ReduceKind>(op, OPSCHED_REDUCE_SUM_SQUARES, "reduce: op"));
    return rt->Reduce(xt, yt, absl::MakeConstSpan(axes, static_cast<size_t>(num_axes)), kind, keepdims != 0,
                      StreamOf(*rt, stream));
  });
}

opsched_status opsched_bias_grad(opsched_runtime* runtime, const opsched_tensor* dy, const opsched_tensor* db,
                                 int32_t layout, void* stream) {
  return Guard("bias gradient", [&]() -> opsched::Status {
    OPSCHED_ASSIGN_OR_RETURN(opsched::Runtime* rt, RuntimeOf(runtime, "bias gradient"));
    OPSCHED_ASSIGN_OR_RETURN(const opsched::Tensor dyt, TensorFromC(dy, "bias gradient", "dy"));
    OPSCHED_ASSIGN_OR_RETURN(const opsched::Tensor dbt, TensorFromC(db, "bias gradient", "db"));
    OPSCHED_ASSIGN_OR_RETURN(const auto l, EnumFromC<opsched::ConvLayout>(layout, OPSCHED_NHWC, "bias gradient: layout"));
    return rt->BiasGrad(dyt, dbt, l == opsched::ConvLayout::kNhwc ? "nhwc" : "nchw", StreamOf(*rt, stream));
  });
}

opsched_status opsched_conv2d(opsched_runtime* runtime, const opsched_tensor* x, const opsched_tensor* w,
                              const opsched_tensor* y, const opsched_conv2d_params* params, void* stream) {
  return Guard("conv2d", [&]() -> opsched::Status {
    OPSCHED_ASSIGN_OR_RETURN(opsched::Runtime* rt, RuntimeOf(runtime, "conv2d"));
    OPSCHED_ASSIGN_OR_RETURN(const opsched::Tensor xt, TensorFromC(x, "conv2d", "x"));
    OPSCHED_ASSIGN_OR_RETURN(const opsched::Tensor wt, TensorFromC(w, "conv2d", "w"));
    OPSCHED_ASSIGN_OR_RETURN(const opsched::Tensor yt, TensorFromC(y, "conv2d", "y"));
    OPSCHED_ASSIGN_OR_RETURN(const opsched::Conv2dParams p, ParamsFromC(params, "conv2d"));
    return rt->Conv2d(xt, wt, yt, p, StreamOf(*rt, stream));
  });
}

opsched_status opsched_conv2d_bias_act(opsched_runtime* runtime, const opsched_tensor* x, const opsched_tensor* w,
                                       const opsched_tensor* b, const opsched_tensor* y,
                                       const opsched_conv2d_params* params, int32_t activation, void* stream) {
  return Guard("conv2d_bias_act", [&]() -> opsched::Status {
    OPSCHED_ASSIGN_OR_RETURN(opsched::Runtime* rt, RuntimeOf(runtime, "conv2d_bias_act"));
    OPSCHED_ASSIGN_OR_RETURN(const opsched::Tensor xt, TensorFromC(x, "conv2d_bias_act", "x"));
    OPSCHED_ASSIGN_OR_RETURN(const opsched::Tensor wt, TensorFromC(w, "conv2d_bias_act", "w"));
    OPSCHED_ASSIGN_OR_RETURN(const opsched::Tensor bt, TensorFromC(b, "conv2d_bias_act", "b"));
    OPSCHED_ASSIGN_OR_RETURN(const opsched::Tensor yt, TensorFromC(y, "conv2d_bias_act", "y"));
    OPSCHED_ASSIGN_OR_RETURN(const opsched::Conv2dParams p, ParamsFromC(params, "conv2d_bias_act"));
    OPSCHED_ASSIGN_OR_RETURN(const auto act, EnumFromC<opsched::Activation>(activation, OPSCHED_ACT_TANH,
                                                                            "conv2d_bias_act: activation"));
    return rt->Conv2dBiasActivation(xt, wt, bt, yt, p, act, StreamOf(*rt, stream));
  });
}

opsched_status opsched_conv2d_backward(opsched_runtime* runtime, const opsched_tensor* x, const opsched_tensor* w,
                                       const opsched_tensor* dy, const opsched_tensor* dx, const opsched_tensor* dw,
                                       const opsched_tensor* db, const opsched_conv2d_params* params,
                                       void* stream) {
  return Guard("conv2d_backward", [&]() -> opsched::Status {
    OPSCHED_ASSIGN_OR_RETURN(opsched::Runtime* rt, RuntimeOf(runtime, "conv2d_backward"));
    OPSCHED_ASSIGN_OR_RETURN(const opsched::Tensor xt, TensorFromC(x, "conv2d_backward", "x"));
    OPSCHED_ASSIGN_OR_RETURN(const opsched::Tensor wt, TensorFromC(w, "conv2d_backward", "w"));
    OPSCHED_ASSIGN_OR_RETURN(const opsched::Tensor dyt, TensorFromC(dy, "conv2d_backward", "dy"));
    OPSCHED_ASSIGN_OR_RETURN(const opsched::Tensor dxt, TensorFromC(dx, "conv2d_backward", "dx"));
    OPSCHED_ASSIGN_OR_RETURN(const opsched::Tensor dwt, TensorFromC(dw, "conv2d_backward", "dw"));
    opsched::Tensor dbt;
    if (db != nullptr) {
      OPSCHED_ASSIGN_OR_RETURN(dbt, TensorFromC(db, "conv2d_backward", "db"));
    }
    OPSCHED_ASSIGN_OR_RETURN(const opsched::Conv2dParams p, ParamsFromC(params, "conv2d_backward"));
    return rt->Conv2dBackward(xt, wt, dyt, dxt, dwt, db != nullptr ? &dbt : nullptr, p, StreamOf(*rt, stream));
  });
}

}  // extern "C"
