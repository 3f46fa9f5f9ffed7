// Test-only op "bump" (y = x + 1 over f32[n]) and implementations that misbehave on
// purpose: one that computes wrong values, one that crashes its process, one that hangs,
// and a well-behaved one whose run time depends on its knobs (a cost surface); on a GPU,
// one that waits for the device in every call and one that does not.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "core/format.h"
#include "registry/registry.h"
#include "tests/test_kernels.h"
#include "tests/tuner/test_impls.h"

namespace opsched::testing {
namespace {

class BumpOp : public OpDef {
 public:
  std::string_view name() const override { return "bump"; }
  std::vector<std::string> InputNames() const override { return {"x"}; }
  std::vector<std::string> OutputNames() const override { return {"y"}; }
  Status Canonicalize(Workload* w) const override {
    const TensorDesc* x = w->FindTensor("x");
    if (x == nullptr || x->dtype() != DType::kF32 || x->rank() != 1 || !x->is_contiguous()) {
      return absl::InvalidArgumentError("bump takes x=f32[n]");
    }
    return absl::OkStatus();
  }
  std::vector<TensorDesc> OutputDescs(const Workload& w) const override { return {*w.FindTensor("x")}; }
  Status Generate(const Workload&, const GeneratorOptions&, std::mt19937_64& rng,
                  std::vector<HostTensor>* inputs) const override {
    std::uniform_real_distribution<double> u(-1, 1);
    for (int64_t i = 0; i < (*inputs)[0].desc().numel(); ++i) (*inputs)[0].Set(i, u(rng));
    return absl::OkStatus();
  }
  StatusOr<std::vector<std::vector<double>>> Reference(const Workload&,
                                                       const std::vector<HostTensor>& in) const override {
    std::vector<double> y(in[0].desc().numel());
    for (size_t i = 0; i < y.size(); ++i) y[i] = in[0].Get(i) + 1;
    return std::vector<std::vector<double>>{y};
  }
};

class BumpBase : public Implementation {
 public:
  std::string_view op() const override { return "bump"; }
  DeviceKind device_kind() const override { return DeviceKind::kCpu; }
  ImplementationTraits traits() const override { return {}; }
  Status Applicable(const Workload&, const Target&) const override { return absl::OkStatus(); }
  ConfigSpace Space(const Workload&, const Target&) const override { return ConfigSpace(); }

 protected:
  static void Bump(const RunArgs& a, float delta) {
    const float* x = a.tensors[0].data_as<float>();
    float* y = a.tensors[1].data_as<float>();
    for (int64_t i = 0; i < a.tensors[0].desc.numel(); ++i) y[i] = x[i] + delta;
  }
};

// Right results; takes (|a - 11| + |b - 5|) * 20 microseconds plus a little.
class BumpTuned : public BumpBase {
 public:
  std::string_view name() const override { return "bump_tuned"; }
  ConfigSpace Space(const Workload&, const Target&) const override {
    std::vector<int64_t> v;
    for (int i = 1; i <= 16; ++i) v.push_back(i);
    return ConfigSpace().AddInts("a", v).AddInts("b", v);
  }
  // a KiB of workspace: memory-budget tests leave out large a.
  size_t WorkspaceBytes(const Workload&, const Config& c) const override {
    return static_cast<size_t>(c.GetInt("a", 0)) * 1024;
  }
  Status Run(const RunArgs& a) const override {
    Bump(a, 1.0f);
    const int64_t cost = 20 * (std::abs(a.config.GetInt("a", 0) - 11) + std::abs(a.config.GetInt("b", 0) - 5)) + 10;
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(cost);
    while (std::chrono::steady_clock::now() < until) {
    }
    return absl::OkStatus();
  }
};

class BumpWrong : public BumpBase {
 public:
  std::string_view name() const override { return "bump_wrong"; }
  Status Run(const RunArgs& a) const override {
    Bump(a, 1.5f);
    return absl::OkStatus();
  }
};

class BumpCrash : public BumpBase {
 public:
  std::string_view name() const override { return "bump_crash"; }
  Status Run(const RunArgs&) const override {
    raise(SIGSEGV);
    return absl::OkStatus();
  }
};

class BumpHang : public BumpBase {
 public:
  std::string_view name() const override { return "bump_hang"; }
  Status Run(const RunArgs&) const override {
    while (true) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
};

// On a GPU: 40 us of device work, then y = x + 1. bump_cuda_sync then waits for its
// stream, like a vendor call that frees memory it allocated: fast on the device, but the
// host waits for the device in every call.
template <bool kSynchronises>
class BumpCuda : public Implementation {
 public:
  std::string_view op() const override { return "bump"; }
  std::string_view name() const override { return kSynchronises ? "bump_cuda_sync" : "bump_cuda"; }
  DeviceKind device_kind() const override { return DeviceKind::kCuda; }
  ImplementationTraits traits() const override { return {}; }
  Status Applicable(const Workload&, const Target& t) const override {
    return t.kind == DeviceKind::kCuda ? absl::OkStatus() : absl::InvalidArgumentError("needs a CUDA device");
  }
  ConfigSpace Space(const Workload&, const Target&) const override { return ConfigSpace(); }
  Status Run(const RunArgs& a) const override {
    OPSCHED_RETURN_IF_ERROR(LaunchSpin(a.stream, 40000));
    OPSCHED_RETURN_IF_ERROR(LaunchAddScalar(a.stream, a.tensors[0].data_as<float>(), a.tensors[1].data_as<float>(),
                                            a.tensors[0].desc.numel(), 1.0f));
    return kSynchronises ? a.stream.Synchronize() : absl::OkStatus();
  }
};

}  // namespace

Status RegisterBumpOps(Registry& registry) {
  OPSCHED_RETURN_IF_ERROR(registry.AddOp(std::make_unique<BumpOp>()));
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<BumpCuda<false>>()));
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<BumpCuda<true>>()));
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<BumpTuned>()));
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<BumpWrong>()));
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<BumpCrash>()));
  OPSCHED_RETURN_IF_ERROR(registry.AddImplementation(std::make_unique<BumpHang>()));
  return absl::OkStatus();
}

}  // namespace opsched::testing
