// The reduce op's device-side verification (registry/device_verification.h): x
// generated on the GPU like ReduceOpDef::Generate (uniform values, the requested
// fraction of NaN and infinities), the float64 reference there
// (reduce_cuda_reference.cu) and the check's CloseBound (reduce_def.h) applied there.
#include "core/buffer.h"
#include "core/format.h"
#include "core/gpu/gpu_backend.h"
#include "core/gpu/gpu_status.h"
#include "core/gpu/verify.h"
#include "ops/reduce/reduce_cuda_reference.h"
#include "ops/reduce/reduce_def.h"
#include "ops/reduce/reduce_register.h"
#include "registry/registry.h"

namespace opsched::reduce {
namespace {

class ReduceDeviceReference : public DeviceReference {
 public:
  ReduceDeviceReference(const Workload& w, int64_t outputs, Buffer memory)
      : bound_(CheckBound(w)), terms_(Terms(w)), outputs_(outputs), memory_(std::move(memory)) {}

  double* ref() const { return static_cast<double*>(memory_.data()); }
  double* magnitude() const { return ref() + outputs_; }

  Status Check(absl::Span<const Tensor> outputs, bool, const Stream& stream) const override {
    OPSCHED_ASSIGN_OR_RETURN(gpu::Mismatch m,
                             gpu::CompareClose(outputs[0], ref(), magnitude(), 0, bound_, stream.native()));
    if (m.count == 0) return absl::OkStatus();
    const Status error = MismatchError(bound_, m.first, m.got, m.want, m.magnitude, terms_);
    return absl::DataLossError(
        fmt::format("{} [device check: {} of {} outputs differ]", Message(error), m.count, outputs_));
  }

  StatusOr<std::vector<std::vector<double>>> Download(const Stream& stream) const override {
    std::vector<double> y(static_cast<size_t>(outputs_));
    OPSCHED_RETURN_IF_ERROR(gpu::ReadDoubles(ref(), outputs_, y.data(), stream.native()));
    return std::vector<std::vector<double>>{std::move(y)};
  }

 private:
  CloseBound bound_;
  int64_t terms_;
  int64_t outputs_;
  Buffer memory_;
};

class ReduceDeviceVerification : public DeviceVerification {
 public:
  std::string_view op() const override { return "reduce"; }

  Status Generate(const Workload&, const GeneratorOptions& options, uint64_t seed, absl::Span<const Tensor> inputs,
                  const Stream& stream) const override {
    gpu::FillOptions fill;
    fill.special_fraction = options.special_value_fraction;
    if (IsInteger(inputs[0].desc.dtype())) {  // as ReduceOpDef::Generate: [-1000, 1000]
      fill.lo = -1000;
      fill.hi = 1000;
    }
    return gpu::Fill(inputs[0], seed, 0, fill, stream.native());
  }

  StatusOr<std::unique_ptr<DeviceReference>> Reference(const Workload& w, absl::Span<const Tensor> inputs,
                                                       const Stream& stream) const override {
    gpu_reference::Problem pr;
    pr.x = gpu::ToRef(inputs[0]);
    pr.mask = ReducedAxisMask(w);
    OPSCHED_ASSIGN_OR_RETURN(pr.op, ParseOp(*w.GetString("op")));
    pr.terms = Terms(w);
    pr.outputs = 1;
    for (int d = 0; d < pr.x.rank; ++d) {
      if (!(pr.mask & (1u << d))) pr.outputs *= pr.x.shape[d];
    }
    OPSCHED_ASSIGN_OR_RETURN(Buffer memory, Buffer::Allocate(stream.device(), std::max<size_t>(
                                                                                  16 * pr.outputs, 16)));
    auto r = std::make_unique<ReduceDeviceReference>(w, pr.outputs, std::move(memory));
    OPSCHED_RETURN_IF_ERROR(gpu::ToStatus(
        gpu_reference::LaunchReference(pr, r->ref(), r->magnitude(), static_cast<gpuStream_t>(stream.native())),
        "reduce reference"));
    return std::unique_ptr<DeviceReference>(std::move(r));
  }
};

}  // namespace

Status RegisterDeviceVerification(Registry& registry) {
  return registry.AddDeviceVerification(std::make_unique<ReduceDeviceVerification>());
}

}  // namespace opsched::reduce
