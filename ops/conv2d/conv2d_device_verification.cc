// The conv2d family's device-side verification (registry/device_verification.h), for
// conv2d, conv2d_bias_act and conv2d_backward: inputs generated on the GPU like the
// OpDef's Generate (uniform values, filters scaled by 1/sqrt(fan-in), bias by 1/2), the
// float64 reference and magnitudes there (conv2d_cuda_reference.cu), and each output
// compared under the CPU check's CloseBound (conv2d_reference.h).
#include <cmath>

#include "core/buffer.h"
#include "core/format.h"
#include "core/gpu/gpu_backend.h"
#include "core/gpu/gpu_status.h"
#include "core/gpu/verify.h"
#include "ops/conv2d/conv2d_cuda_reference.h"
#include "ops/conv2d/conv2d_def.h"
#include "ops/conv2d/conv2d_reference.h"
#include "ops/conv2d/conv2d_register.h"
#include "registry/registry.h"

namespace opsched::conv2d {
namespace {

const char* const kOutputs[2][2] = {{"y", ""}, {"dx", "dw"}};

class Conv2dDeviceReference : public DeviceReference {
 public:
  Status Check(absl::Span<const Tensor> outputs, bool, const Stream& stream) const override {
    for (size_t i = 0; i < outputs.size(); ++i) {
      const CloseBound bound = BoundFor(problem_, outputs[i].desc.dtype(), TermsOf(problem_, name(i)));
      OPSCHED_ASSIGN_OR_RETURN(gpu::Mismatch m, gpu::CompareClose(outputs[i], ref_[i], magnitude_[i],
                                                                  max_magnitude_[i], bound, stream.native()));
      if (m.count == 0) continue;
      const Status error = MismatchError(problem_, op_, name(i), m.first, m.got, m.want,
                                         bound.Tolerance(m.magnitude, max_magnitude_[i], m.want), m.magnitude);
      return absl::DataLossError(fmt::format("{} [device check: {} of {} elements of {} differ]", Message(error),
                                             m.count, counts_[i], name(i)));
    }
    return absl::OkStatus();
  }

  StatusOr<std::vector<std::vector<double>>> Download(const Stream& stream) const override {
    std::vector<std::vector<double>> out(outputs_);
    for (int i = 0; i < outputs_; ++i) {
      out[i].resize(static_cast<size_t>(counts_[i]));
      OPSCHED_RETURN_IF_ERROR(gpu::ReadDoubles(ref_[i], counts_[i], out[i].data(), stream.native()));
    }
    return out;
  }

  static StatusOr<std::unique_ptr<Conv2dDeviceReference>> Create(const Workload& w, absl::Span<const Tensor> inputs,
                                                                 const Stream& stream) {
    auto r = std::unique_ptr<Conv2dDeviceReference>(new Conv2dDeviceReference());
    r->op_ = w.op();
    // MakeProblem takes inputs then outputs; only the inputs are read here.
    std::vector<Tensor> tensors(inputs.begin(), inputs.end());
    tensors.resize(5);
    Problem& p = r->problem_;
    p = MakeProblem(w, tensors);
    const bool backward = p.kind == Kind::kBackward;
    r->outputs_ = backward ? 2 : 1;
    r->counts_[0] = backward ? p.n * p.c * p.h * p.w : p.n * p.k * p.p * p.q;
    r->counts_[1] = backward ? p.k * p.channels_per_group() * p.r * p.s : 0;
    const int64_t total = r->counts_[0] + r->counts_[1];
    OPSCHED_ASSIGN_OR_RETURN(r->memory_, Buffer::Allocate(stream.device(), std::max<size_t>(16 * total, 16)));
    double* base = static_cast<double*>(r->memory_.data());
    r->ref_[0] = base;
    r->magnitude_[0] = base + r->counts_[0];
    r->ref_[1] = base + 2 * r->counts_[0];
    r->magnitude_[1] = r->ref_[1] + r->counts_[1];
    OPSCHED_RETURN_IF_ERROR(gpu::ToStatus(
        gpu_reference::LaunchReference(p, r->ref_, r->magnitude_, static_cast<gpuStream_t>(stream.native())),
        fmt::format("{} reference", w.op())));
    for (int i = 0; i < r->outputs_; ++i) {
      OPSCHED_ASSIGN_OR_RETURN(r->max_magnitude_[i],
                               gpu::MaxNonNegative(stream.device(), r->magnitude_[i], r->counts_[i], stream.native()));
    }
    return r;
  }

 private:
  Conv2dDeviceReference() = default;
  std::string_view name(size_t i) const { return kOutputs[problem_.kind == Kind::kBackward ? 1 : 0][i]; }

  std::string op_;
  Problem problem_;
  int outputs_ = 1;
  int64_t counts_[2] = {};
  double* ref_[2] = {};
  double* magnitude_[2] = {};
  double max_magnitude_[2] = {};
  Buffer memory_;
};

class Conv2dDeviceVerification : public DeviceVerification {
 public:
  explicit Conv2dDeviceVerification(Kind kind) : kind_(kind) {}
  std::string_view op() const override { return OpName(kind_); }

  Status Generate(const Workload& w, const GeneratorOptions&, uint64_t seed, absl::Span<const Tensor> inputs,
                  const Stream& stream) const override {
    const Problem p = MakeProblem(w);
    const double scale = 1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(p.reduction_length(), 1)));
    for (size_t i = 0; i < inputs.size(); ++i) {
      // Inputs in OpDef order: x, w, then b (bias + activation) or dy (backward).
      const double f = i == 1 ? scale : (i == 2 && kind_ == Kind::kBiasActivation) ? 0.5 : 1.0;
      OPSCHED_RETURN_IF_ERROR(gpu::Fill(inputs[i], seed, i, gpu::FillOptions{-f, f}, stream.native()));
    }
    return absl::OkStatus();
  }

  StatusOr<std::unique_ptr<DeviceReference>> Reference(const Workload& w, absl::Span<const Tensor> inputs,
                                                       const Stream& stream) const override {
    OPSCHED_ASSIGN_OR_RETURN(std::unique_ptr<Conv2dDeviceReference> r,
                             Conv2dDeviceReference::Create(w, inputs, stream));
    return std::unique_ptr<DeviceReference>(std::move(r));
  }

 private:
  Kind kind_;
};

}  // namespace

Status RegisterDeviceVerification(Registry& registry) {
  OPSCHED_RETURN_IF_ERROR(registry.AddDeviceVerification(std::make_unique<Conv2dDeviceVerification>(Kind::kForward)));
  OPSCHED_RETURN_IF_ERROR(registry.AddDeviceVerification(std::make_unique<Conv2dDeviceVerification>(Kind::kBiasActivation)));
  OPSCHED_RETURN_IF_ERROR(registry.AddDeviceVerification(std::make_unique<Conv2dDeviceVerification>(Kind::kBackward)));
  return absl::OkStatus();
}

}  // namespace opsched::conv2d
