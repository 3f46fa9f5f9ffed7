// The direct convolution on the CPU (the reference's loops in f32 accumulation), for
// the three ops of the family, parallel over (image, channel) pairs.
#include <algorithm>

#include "ops/conv2d/conv2d_cpu_kernels.h"
#include "ops/conv2d/conv2d_def.h"
#include "ops/conv2d/conv2d_register.h"
#include "registry/cpu_knobs.h"
#include "registry/registry.h"

namespace opsched::conv2d {
namespace {

template <Kind K>
class Conv2dCpuDirect : public Implementation {
 public:
  std::string_view op() const override { return OpName(K); }
  std::string_view name() const override {
    return K == Kind::kForward            ? "conv2d_cpu_direct"
           : K == Kind::kBiasActivation ? "conv2d_bias_act_cpu_direct"
                                          : "conv2d_backward_cpu_direct";
  }
  DeviceKind device_kind() const override { return DeviceKind::kCpu; }
  ImplementationTraits traits() const override { return {.deterministic = true}; }
  Status Applicable(const Workload&, const Target&) const override { return absl::OkStatus(); }
  ConfigSpace Space(const Workload&, const Target& target) const override { return CpuThreadKnobs(target).Space(); }
  Status Run(const RunArgs& a) const override { return PrepareAndRun(*this, a); }
  StatusOr<std::unique_ptr<Prepared>> Prepare(const Workload& w, const Config& c, const Target& target) const override {
    OPSCHED_ASSIGN_OR_RETURN(const CpuKnobs knobs, CpuThreadKnobs(target).Parse(c));
    const int threads = knobs.threads;
    return MakePrepared(0, [base = MakeProblem(w), threads](const PreparedArgs& a) {
      const Problem p = WithTensors(base, a.tensors);
      cpu::VisitType(p.type, [&]<typename E>() { cpu::Run<E, float>(p, threads); });
      return absl::OkStatus();
    });
  }
};

using Conv2dCpuDirectForward = Conv2dCpuDirect<Kind::kForward>;
using Conv2dCpuDirectBiasActivation = Conv2dCpuDirect<Kind::kBiasActivation>;
using Conv2dCpuDirectBackward = Conv2dCpuDirect<Kind::kBackward>;

}  // namespace

Status RegisterCpu(Registry& registry) {
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<Conv2dCpuDirectForward>()));
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<Conv2dCpuDirectBiasActivation>()));
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<Conv2dCpuDirectBackward>()));
  return absl::OkStatus();
}

}  // namespace opsched::conv2d
