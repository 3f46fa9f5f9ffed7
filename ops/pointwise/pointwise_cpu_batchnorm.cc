// pointwise_cpu_batchnorm: batch-norm inference (pointwise_batchnorm.h): every channel's
// mean, scale and shift computed once into a table, then a loop over runs of one channel
// ((x - m) * s + b and the activation per element; channels-last, the channel steps with
// the element). Threads over chunks of elements.
#include <algorithm>
#include <vector>

#include "core/element.h"
#include "ops/pointwise/pointwise_batchnorm.h"
#include "ops/pointwise/pointwise_cpu_loops.h"
#include "ops/pointwise/pointwise_def.h"
#include "ops/pointwise/pointwise_math.h"
#include "ops/pointwise/pointwise_register.h"
#include "registry/cpu_knobs.h"
#include "registry/registry.h"

namespace opsched::pointwise {
namespace {

// The statistics of one channel as the kernels use them.
struct Channel {
  float mean = 0;        // x - 0 is x: an absent m subtracts nothing
  float scale = 1;       // y * 1 is y: absent v and g scale by nothing
  float shift = -0.0f;   // y + -0 is y for every y: an absent b adds nothing
};

Channel ChannelOf(const BatchNormPlan& plan, const Bytecode& bc, const TensorPointers& p, int64_t c) {
  auto param = [&](int k) {
    const int t = plan.param[k];
    return LoadElement(bc.types[t], p.data[t], c * plan.channel_stride[k]);
  };
  Channel ch;
  const bool has_var = plan.param[BatchNormPlan::kVar] >= 0;
  if (plan.param[BatchNormPlan::kMean] >= 0) ch.mean = param(BatchNormPlan::kMean);
  if (has_var) ch.scale = Rsqrt(param(BatchNormPlan::kVar) + plan.eps);
  if (plan.param[BatchNormPlan::kScale] >= 0) {
    const float g = plan.gate ? Sigmoid(param(BatchNormPlan::kScale)) : param(BatchNormPlan::kScale);
    ch.scale = has_var ? g * ch.scale : g;
  }
  if (plan.param[BatchNormPlan::kShift] >= 0) ch.shift = param(BatchNormPlan::kShift);
  return ch;
}

template <typename T>
void RunBatchNorm(const BatchNormPlan& plan, const Bytecode& bc, const TensorPointers& p, int threads) {
  using S = typename T::Storage;
  const S* x = static_cast<const S*>(p.data[plan.x]);
  S* out = static_cast<S*>(const_cast<void*>(p.data[bc.num_inputs]));
  // Every channel's statistics once (runs of one element where channels are innermost).
  std::vector<Channel> table(static_cast<size_t>(plan.numel > 0 ? plan.channels : 0));
  for (int64_t c = 0; c < static_cast<int64_t>(table.size()); ++c) table[c] = ChannelOf(plan, bc, p, c);
  auto element = [&](int64_t i, const Channel& ch) {
    const float y = (T::Load(x[i]) - ch.mean) * ch.scale + ch.shift;
    out[i] = T::Store(plan.act == OpCode::kCastF32 ? y : Unary(plan.act, y));
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
      const Channel& ch = table[run % plan.channels];
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
  // Prepare plans once; Run binds the tensors.
  StatusOr<std::unique_ptr<Prepared>> Prepare(const Workload& w, const Config& config,
                                              const Target& target) const override {
    OPSCHED_ASSIGN_OR_RETURN(std::shared_ptr<const Compiled> c, CompiledFor(w));
    OPSCHED_ASSIGN_OR_RETURN(const BatchNormPlan plan, PlanBatchNorm(*c));
    OPSCHED_ASSIGN_OR_RETURN(const CpuKnobs knobs, CpuThreadKnobs(target).Parse(config));
    const int threads = knobs.threads;
    return MakePrepared(0, [c, plan, threads](const PreparedArgs& a) {
      const Bytecode& bc = c->bytecode;
      const TensorPointers p = cpu::PointersOf(a.tensors.data(), bc.num_inputs + bc.num_outputs);
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
