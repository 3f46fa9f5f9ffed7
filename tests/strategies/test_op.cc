#include "tests/strategies/test_op.h"

#include "core/format.h"

namespace opsched::testing {
namespace {

class ScaleOp : public OpDef {
 public:
  std::string_view name() const override { return "scale"; }
  std::vector<std::string> InputNames() const override { return {"x"}; }
  std::vector<std::string> OutputNames() const override { return {"y"}; }
  Status Canonicalize(Workload* w) const override {
    const TensorDesc* x = w->FindTensor("x");
    if (x == nullptr || w->tensors().size() != 1) {
      return absl::InvalidArgumentError("scale takes one tensor x");
    }
    if (x->dtype() != DType::kF32 || x->rank() != 1) {
      return absl::InvalidArgumentError("scale: x must be f32[n]");
    }
    if (w->FindAttr("factor") == nullptr) w->SetAttr("factor", 2.0);
    OPSCHED_ASSIGN_OR_RETURN(double factor, w->GetFloat("factor"));
    w->SetAttr("factor", factor);
    return absl::OkStatus();
  }
  std::vector<TensorDesc> OutputDescs(const Workload& w) const override {
    return {*w.FindTensor("x")};
  }
  Status Generate(const Workload&, const GeneratorOptions&, std::mt19937_64& rng,
                  std::vector<HostTensor>* inputs) const override {
    std::uniform_real_distribution<double> u(-1, 1);
    for (int64_t i = 0; i < (*inputs)[0].desc().numel(); ++i) (*inputs)[0].Set(i, u(rng));
    return absl::OkStatus();
  }
  StatusOr<std::vector<std::vector<double>>> Reference(
      const Workload& w, const std::vector<HostTensor>& inputs) const override {
    const double factor = *w.GetFloat("factor");
    std::vector<double> y(inputs[0].desc().numel());
    for (size_t i = 0; i < y.size(); ++i) y[i] = factor * inputs[0].Get(i);
    return std::vector<std::vector<double>>{y};
  }
};

Status RunScale(const RunArgs& a) {
  const float factor = static_cast<float>(*a.workload.GetFloat("factor"));
  const float* x = a.tensors[0].data_as<float>();
  float* y = a.tensors[1].data_as<float>();
  for (int64_t i = 0; i < a.tensors[0].desc.numel(); ++i) y[i] = factor * x[i];
  return absl::OkStatus();
}

class ScaleLoop : public Implementation {
 public:
  explicit ScaleLoop(ScaleRuns* runs) : runs_(runs) {}
  std::string_view op() const override { return "scale"; }
  std::string_view name() const override { return "scale_cpu_loop"; }
  DeviceKind device_kind() const override { return DeviceKind::kCpu; }
  ImplementationTraits traits() const override { return {true, false, false}; }
  Status Applicable(const Workload&, const Target&) const override { return absl::OkStatus(); }
  ConfigSpace Space(const Workload&, const Target&) const override {
    return ConfigSpace().AddInts("unroll", {1, 2, 4});
  }
  StatusOr<std::unique_ptr<Prepared>> Prepare(const Workload& w, const Config& c, const Target& t) const override {
    ++runs_->prepared;
    return Implementation::Prepare(w, c, t);
  }
  Status Run(const RunArgs& a) const override {
    ++runs_->loop;
    return RunScale(a);
  }

 private:
  ScaleRuns* runs_;
};

class ScaleBlocked : public Implementation {
 public:
  explicit ScaleBlocked(ScaleRuns* runs) : runs_(runs) {}
  std::string_view op() const override { return "scale"; }
  std::string_view name() const override { return "scale_cpu_blocked"; }
  DeviceKind device_kind() const override { return DeviceKind::kCpu; }
  ImplementationTraits traits() const override {
    return {.deterministic = false, .in_place = true, .uses_cudnn = runs_->blocked_calls_cudnn};
  }
  Status Applicable(const Workload& w, const Target&) const override {
    const int64_t n = w.FindTensor("x")->dim(0);
    if (n < 64 || n % 64 != 0) {
      return absl::InvalidArgumentError(fmt::format("needs n a multiple of 64, n is {}", n));
    }
    return absl::OkStatus();
  }
  ConfigSpace Space(const Workload& w, const Target&) const override {
    const int64_t n = w.FindTensor("x")->dim(0);
    return ConfigSpace()
        .AddInts("block", {64, 256, 1024})
        .Constrain("block divides n", [n](const Config& c) { return n % c.GetInt("block", 1) == 0; });
  }
  size_t WorkspaceBytes(const Workload&, const Config& c) const override {
    return static_cast<size_t>(c.GetInt("block", 0)) * sizeof(float);
  }
  StatusOr<std::unique_ptr<Prepared>> Prepare(const Workload& w, const Config& c, const Target& t) const override {
    ++runs_->prepared;
    return Implementation::Prepare(w, c, t);
  }
  Status Run(const RunArgs& a) const override {
    ++runs_->blocked;
    if (a.workspace == nullptr || a.workspace_bytes < a.config.GetInt("block", 0) * sizeof(float)) {
      return absl::InternalError("workspace missing");
    }
    return RunScale(a);
  }

 private:
  ScaleRuns* runs_;
};

class ScaleCuda : public Implementation {
 public:
  std::string_view op() const override { return "scale"; }
  std::string_view name() const override { return "scale_cuda"; }
  DeviceKind device_kind() const override { return DeviceKind::kCuda; }
  ImplementationTraits traits() const override { return {true, false, false}; }
  Status Applicable(const Workload&, const Target&) const override { return absl::OkStatus(); }
  ConfigSpace Space(const Workload&, const Target&) const override { return ConfigSpace(); }
  Status Run(const RunArgs&) const override {
    return absl::InternalError("scale_cuda must never run in these tests");
  }
};

}  // namespace

void RegisterScaleOp(Registry* registry, ScaleRuns* runs, std::string blocked_fits_when,
                     std::function<bool(const Workload&, const Target&, const Config&)> blocked_fits) {
  (void)registry->AddOp(std::make_unique<ScaleOp>());
  (void)registry->AddImplementation(std::make_unique<ScaleLoop>(runs));
  (void)registry->AddImplementation(std::make_unique<ScaleBlocked>(runs));
  (void)registry->AddImplementation(std::make_unique<ScaleCuda>());
  auto n_of = [](const Workload& w) { return w.FindTensor("x")->dim(0); };
  (void)registry->AddStrategy(std::make_unique<Strategy>(
      "scale",
      std::vector<StrategyRule>{
          {10, "scale_cpu_loop", "always", Always,
           [](const Workload&, const Target&) { return Config().Set("unroll", int64_t(8)); }},
          {20, "scale_cpu_blocked", "n >= 4096",
           [n_of](const Workload& w, const Target& t) { return OnCpu(t) && n_of(w) >= 4096; },
           [](const Workload&, const Target&) { return Config().Set("block", int64_t(1024)); },
           std::move(blocked_fits_when), std::move(blocked_fits)},
      }));
}

}  // namespace opsched::testing
