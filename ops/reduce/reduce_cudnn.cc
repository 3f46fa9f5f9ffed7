// The cuDNN extern: cudnnReduceTensor (the legacy ops API, still in cuDNN 9) for sum,
// mean, max and min of a contiguous f32 or f16 x with an output of the same type.
// A is x as it is, C is y with ones at the reduced axes (keepdims layout); NaN
// propagates.
#include <memory>
#include <vector>

#include "core/format.h"
#include "core/gpu/gpu_backend.h"
#include "extern/cudnn/cudnn_handle.h"
#include "ops/reduce/reduce_def.h"
#include "ops/reduce/reduce_register.h"
#include "registry/knobs.h"
#include "registry/registry.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace opsched::reduce {
namespace {

// RAII for the three descriptors of one call.
class Descriptors {
 public:
  ~Descriptors() {
    if (a_ != nullptr) cudnnDestroyTensorDescriptor(a_);
    if (c_ != nullptr) cudnnDestroyTensorDescriptor(c_);
    if (reduce_ != nullptr) cudnnDestroyReduceTensorDescriptor(reduce_);
  }

  Status Init(const Workload& w) {
    const TensorDesc& x = *w.FindTensor("x");
    const ReduceOp op = *ParseOp(*w.GetString("op"));
    const cudnnDataType_t type = x.dtype() == DType::kF32 ? CUDNN_DATA_FLOAT : CUDNN_DATA_HALF;
    uint32_t mask = 0;
    for (int64_t a : std::get<Dims>(*w.FindAttr("axes"))) mask |= 1u << a;
    // At least 3 dimensions (cuDNN's minimum): trailing ones.
    std::vector<int> a_dims, a_strides, c_dims;
    for (int d = 0; d < x.rank(); ++d) {
      a_dims.push_back(static_cast<int>(x.dim(d)));
      a_strides.push_back(static_cast<int>(x.stride(d)));
      c_dims.push_back((mask & (1u << d)) ? 1 : static_cast<int>(x.dim(d)));
    }
    while (a_dims.size() < 3) {
      a_dims.push_back(1);
      a_strides.push_back(1);
      c_dims.push_back(1);
    }
    std::vector<int> c_strides(c_dims.size(), 1);
    for (int d = static_cast<int>(c_dims.size()) - 2; d >= 0; --d) c_strides[d] = c_strides[d + 1] * c_dims[d + 1];
    for (int d = 0; d < static_cast<int>(a_dims.size()); ++d) {
      if (a_dims[d] == 1) a_strides[d] = d + 1 < static_cast<int>(a_dims.size()) ? a_strides[d + 1] * a_dims[d + 1] : 1;
    }
    OPSCHED_CUDNN_RETURN_IF_ERROR(cudnnCreateTensorDescriptor(&a_));
    OPSCHED_CUDNN_RETURN_IF_ERROR(cudnnCreateTensorDescriptor(&c_));
    OPSCHED_CUDNN_RETURN_IF_ERROR(cudnnCreateReduceTensorDescriptor(&reduce_));
    OPSCHED_CUDNN_RETURN_IF_ERROR(
        cudnnSetTensorNdDescriptor(a_, type, static_cast<int>(a_dims.size()), a_dims.data(), a_strides.data()));
    OPSCHED_CUDNN_RETURN_IF_ERROR(
        cudnnSetTensorNdDescriptor(c_, type, static_cast<int>(c_dims.size()), c_dims.data(), c_strides.data()));
    const cudnnReduceTensorOp_t reduce_op = op == ReduceOp::kSum    ? CUDNN_REDUCE_TENSOR_ADD
                                            : op == ReduceOp::kMean ? CUDNN_REDUCE_TENSOR_AVG
                                            : op == ReduceOp::kMax  ? CUDNN_REDUCE_TENSOR_MAX
                                                                    : CUDNN_REDUCE_TENSOR_MIN;
    OPSCHED_CUDNN_RETURN_IF_ERROR(cudnnSetReduceTensorDescriptor(reduce_, reduce_op, CUDNN_DATA_FLOAT,
                                                                 CUDNN_PROPAGATE_NAN, CUDNN_REDUCE_TENSOR_NO_INDICES,
                                                                 CUDNN_32BIT_INDICES));
    return absl::OkStatus();
  }

  cudnnTensorDescriptor_t a() const { return a_; }
  cudnnTensorDescriptor_t c() const { return c_; }
  cudnnReduceTensorDescriptor_t reduce() const { return reduce_; }

 private:
  cudnnTensorDescriptor_t a_ = nullptr;
  cudnnTensorDescriptor_t c_ = nullptr;
  cudnnReduceTensorDescriptor_t reduce_ = nullptr;
};

// cudnnReduceTensor's workspace for these descriptors (the current device's handle).
StatusOr<size_t> WorkspaceOf(const Descriptors& d) {
  OPSCHED_ASSIGN_OR_RETURN(cudnnHandle_t handle, cudnn::Handle(nullptr));
  size_t bytes = 0;
  OPSCHED_CUDNN_RETURN_IF_ERROR(cudnnGetReductionWorkspaceSize(handle, d.reduce(), d.a(), d.c(), &bytes));
  return bytes;
}

class ReduceCudnn : public Implementation {
 public:
  std::string_view op() const override { return "reduce"; }
  std::string_view name() const override { return "reduce_cudnn"; }
  DeviceKind device_kind() const override { return DeviceKind::kCuda; }
  ImplementationTraits traits() const override {
    // Not deterministic: its summation order is not documented.
    return {.deterministic = false, .vendor_library = true, .uses_cublas = true, .uses_cudnn = true};
  }
  Status Applicable(const Workload& w, const Target&) const override {
    const TensorDesc& x = *w.FindTensor("x");
    const std::string_view op = *w.GetString("op");
    if (op == "sumsq") return absl::InvalidArgumentError("cudnnReduceTensor has no sum of squares");
    if (x.dtype() != DType::kF32 && x.dtype() != DType::kF16) {
      return absl::InvalidArgumentError("cudnnReduceTensor serves f32 and f16");
    }
    if (w.FindAttr("dtype") != nullptr) return absl::InvalidArgumentError("the output type must be x's");
    if (!x.is_contiguous()) return absl::InvalidArgumentError("needs a contiguous x");
    if (x.numel() == 0) return absl::InvalidArgumentError("needs a non-empty x");
    if (MakeProblem(w).length == 1) {
      return absl::InvalidArgumentError("every reduced axis has size 1: cudnnReduceTensor rejects such a copy");
    }
    if (x.numel() >= (int64_t(1) << 31)) return absl::InvalidArgumentError("needs fewer than 2^31 elements");
    return absl::OkStatus();
  }
  ConfigSpace Space(const Workload&, const Target&) const override { return Knobs<NoKnobs>().Space(); }
  size_t WorkspaceBytes(const Workload& w, const Config&) const override {
    Descriptors d;
    if (!d.Init(w).ok()) return 0;  // Prepare reports the error
    return WorkspaceOf(d).value_or(0);
  }
  Status Run(const RunArgs& a) const override { return PrepareAndRun(*this, a); }
  // Prepare makes the descriptors and sizes the workspace; Run binds the tensors.
  StatusOr<std::unique_ptr<Prepared>> Prepare(const Workload& w, const Config& config, const Target&) const override {
    OPSCHED_RETURN_IF_ERROR(Knobs<NoKnobs>().Parse(config).status());
    auto d = std::make_shared<Descriptors>();
    OPSCHED_RETURN_IF_ERROR(d->Init(w));
    OPSCHED_ASSIGN_OR_RETURN(const size_t needed, WorkspaceOf(*d));
    return MakePrepared(needed, [d = std::shared_ptr<const Descriptors>(std::move(d)), needed](const PreparedArgs& a) {
      if (needed > a.workspace_bytes) {
        return absl::InternalError(
            fmt::format("cudnnReduceTensor needs {} bytes of workspace, {} given", needed, a.workspace_bytes));
      }
      OPSCHED_ASSIGN_OR_RETURN(cudnnHandle_t handle, cudnn::Handle(static_cast<cudaStream_t>(a.stream.native())));
      const float one = 1.0f, zero = 0.0f;
      OPSCHED_CUDNN_RETURN_IF_ERROR(cudnnReduceTensor(handle, d->reduce(), nullptr, 0, a.workspace,
                                                      a.workspace_bytes, &one, d->a(), a.tensors[0].data, &zero,
                                                      d->c(), a.tensors[1].data));
      return absl::OkStatus();
    });
  }
};

}  // namespace

Status RegisterCudnn(Registry& registry) {
  return registry.AddImplementation(std::make_unique<ReduceCudnn>());
}

}  // namespace opsched::reduce
