// pointwise_cpu_batchnorm: batch-norm inference (pointwise_batchnorm.h): every channel's
// mean, scale and shift computed once into a table, then a loop over runs of one channel
// ((x - m) * s + b, the activation and the clamps per element; channels-last, the channel
// steps with the element). Threads over chunks of elements. A hoisted plan runs the
// hoisting's first passes (one thread: per-channel sizes) before it.
#include <algorithm>
#include <vector>

#include "core/element.h"
#include "ops/pointwise/pointwise_batchnorm.h"
#include "ops/pointwise/pointwise_batchnorm_math.h"
#include "ops/pointwise/pointwise_cpu_loops.h"
#include "ops/pointwise/pointwise_def.h"
#include "ops/pointwise/pointwise_math.h"
#include "ops/pointwise/pointwise_register.h"
#include "registry/cpu_knobs.h"
#include "registry/registry.h"

namespace opsched::pointwise {
namespace {

ChannelStats ChannelOf(const BatchNormPlan& plan, const Bytecode& bc, const TensorPointers& p, int64_t c) {
  float value[4] = {};
  unsigned present = 0;
  for (int k = 0; k < 4; ++k) {
    const int t = plan.param[k];
    if (t < 0) continue;
    present |= 1u << k;
    value[k] = LoadElement(bc.types[t], p.data[t], c * plan.channel_stride[k]);
  }
  return FoldChannel(value, present, plan.gate, plan.eps, plan.factor);
}

template <typename T>
void RunBatchNorm(const BatchNormPlan& plan, const Bytecode& bc, const TensorPointers& p, int threads) {
  using S = typename T::Storage;
  const S* x = static_cast<const S*>(p.data[plan.x]);
  S* out = static_cast<S*>(const_cast<void*>(p.data[bc.num_inputs]));
  // Every channel's statistics once (runs of one element where channels are innermost).
  std::vector<ChannelStats> table(static_cast<size_t>(plan.numel > 0 ? plan.channels : 0));
  for (int64_t c = 0; c < static_cast<int64_t>(table.size()); ++c) table[c] = ChannelOf(plan, bc, p, c);
  auto element = [&](int64_t i, const ChannelStats& ch) {
    const float y = (T::Load(x[i]) - ch.mean) * ch.scale + ch.shift;
    out[i] = T::Store(Bounded(plan.bound, Unary(plan.act, y)));  // kCastF32 (no activation) is the identity
  };
  cpu::Parallel(plan.numel, 65536, threads, [&](int64_t begin, int64_t end) {
    if (plan.inner == 1) {  // the channel steps with the element
      for (int64_t i = begin, c = begin % plan.channels; i < end; ++i) {
        element(i, table[c]);
        if (++c == plan.channels) c = 0;
      }
      return;
    }
    for (int64_t i = begin; i < end;) {
      const int64_t run = i / plan.inner;
      const ChannelStats& ch = table[run % plan.channels];
      for (const int64_t stop = std::min(end, (run + 1) * plan.inner); i < stop; ++i) element(i, ch);
    }
  });
}

class PointwiseCpuBatchNorm : public Implementation {
 public:
  std::string_view op() const override { return "pointwise"; }
  std::string_view name() const override { return "pointwise_cpu_batchnorm"; }
  DeviceKind device_kind() const override { return DeviceKind::kCpu; }
  ImplementationTraits traits() const override { return {.deterministic = true, .in_place = true}; }
  Status Applicable(const Workload& w, const Target&) const override { return BatchNormPlanFor(w).status(); }
  ConfigSpace Space(const Workload&, const Target& target) const override { return CpuThreadKnobs(target).Space(); }
  size_t WorkspaceBytes(const Workload& w, const Config&) const override {
    StatusOr<std::shared_ptr<const Compiled>> c = CompiledFor(w);
    StatusOr<BatchNormPlan> plan = BatchNormPlanFor(w);
    return c.ok() && plan.ok() && plan->hoisted ? (*c)->hoisted->workspace_bytes : 0;
  }
  // Prepare plans once; Run binds the tensors.
  StatusOr<std::unique_ptr<Prepared>> Prepare(const Workload& w, const Config& config,
                                              const Target& target) const override {
    OPSCHED_ASSIGN_OR_RETURN(std::shared_ptr<const Compiled> c, CompiledFor(w));
    OPSCHED_ASSIGN_OR_RETURN(const BatchNormPlan plan, PlanBatchNorm(*c));
    OPSCHED_ASSIGN_OR_RETURN(const CpuKnobs knobs, CpuThreadKnobs(target).Parse(config));
    const int threads = knobs.threads;
    const size_t workspace = plan.hoisted ? c->hoisted->workspace_bytes : 0;
    return MakePrepared(workspace, [c, plan, threads, workspace](const PreparedArgs& a) -> Status {
      // The hoisted plan: the first passes into workspace, then the kernel over the main
      // program's tensors (the workload's inputs, the hoisted values, the output).
      const Bytecode& bc = plan.hoisted ? c->hoisted->bytecode : c->bytecode;
      TensorPointers p;
      if (!plan.hoisted) {
        p = cpu::PointersOf(a.tensors.data(), bc.num_inputs + bc.num_outputs);
      } else {
        const int inputs = static_cast<int>(c->inputs.size()), outputs = static_cast<int>(c->outputs.size());
        OPSCHED_ASSIGN_OR_RETURN(
            p, RunFirstPasses(*c->hoisted, a.tensors, inputs, outputs, a.workspace, a.workspace_bytes,
                              "pointwise_cpu_batchnorm", [](size_t, const HoistPass& pass, const TensorPointers& q) {
                                cpu::Interpret(pass.bytecode, pass.accumulator, q, 1, pass.bytecode.numel);
                                return absl::OkStatus();
                              }));
      }
      switch (bc.types[plan.x]) {
        case ElementType::kF16: RunBatchNorm<F16>(plan, bc, p, threads); break;
        case ElementType::kBF16: RunBatchNorm<BF16>(plan, bc, p, threads); break;
        default: RunBatchNorm<F32>(plan, bc, p, threads); break;
      }
      return absl::OkStatus();
    });
  }
  Status Run(const RunArgs& a) const override { return PrepareAndRun(*this, a); }
};

}  // namespace

Status RegisterCpuBatchNorm(Registry& registry) {
  return registry.AddImplementation(std::make_unique<PointwiseCpuBatchNorm>());
}

}  // namespace opsched::pointwise
