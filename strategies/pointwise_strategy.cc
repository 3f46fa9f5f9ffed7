// Pointwise's strategy: a program that is one of the known chains runs its specialised
// loop; any other runs the bytecode interpreter in one pass. The unfused implementation
// (one pass per operation, an eager framework's way) is the tuner's baseline, never a rule.
//
//  priority  implementation              when                                   default config
//  40        pointwise_cuda_specialised  GPU, the program is a known chain      its default: block=256 items=1, vector 16
//                                                                     bytes a tensor (8 of f16/bf16, 4 of f32)
//                                                                     with 32768 threads left, else 1
//  39        pointwise_cuda_batchnorm    GPU, the program is batch-norm inference its default: block=256 items=1, vector
//                                        (pointwise_batchnorm.h); its hoisted   16 of f16/bf16 over runs of a channel, else 8
//                                        plan (a first pass): as hoisting's
//  37        pointwise_cuda_hoisted      GPU, >= 2 operations an element hoisted its default: the interpreter's rule over
//                                        (pointwise_hoist.h), >= 4M elements    its main program (below)
//  35        pointwise_cuda_interpreted  GPU                                    its default: shared=0 block=128 items=1,
//                                                                     vector the widest dividing the innermost run with
//                                                                     32768 threads left, up to 32 bytes a tensor (16
//                                                                     lanes of f16/bf16, else 8)
//  30        pointwise_cpu_specialised   CPU, the program is a known chain      threads=all (>= 64K elements), else 1
//  25        pointwise_cpu_batchnorm     CPU, the program is batch-norm inference threads=all (>= 64K elements), else 1
//  20        pointwise_cpu_interpreted   CPU, >= 64K elements                   its default: threads=all chunk=65536
//  10        pointwise_cpu_interpreted   CPU                                    threads=1 chunk=65536
// (pointwise_cpu_hoisted, like the unfused ones, only where a record says so.)
//
// Batch-norm inference is one launch that reads a channel's statistics once per run of
// its elements, where hoisting takes two launches and the interpreter's dispatch. Its
// hoisted plan (per-channel factors that are expressions) takes two launches as well, so
// the same bounds as hoisting (x*silu(b) over 4096 channels, one operation hoisted: 61.7
// us with the plan, 52.5 interpreted on the H100).
// Hoisting costs a launch per first pass (a few microseconds) and saves the hoisted
// operations at every output element: the rule takes it where that is at least 8M
// operations a call.
#include "ops/pointwise/pointwise_batchnorm.h"
#include "ops/pointwise/pointwise_def.h"
#include "ops/pointwise/pointwise_match.h"
#include "registry/cpu_knobs.h"
#include "registry/registry.h"
#include "strategies/strategies_register.h"

namespace opsched {
namespace {

int64_t Elements(const Workload& w) {
  StatusOr<std::shared_ptr<const pointwise::Compiled>> c = pointwise::CompiledFor(w);
  return c.ok() ? (*c)->bytecode.numel : 0;
}

// Whether a first pass pays on the GPU: at least 2 operations an output element hoisted,
// over at least 4M elements (the bounds of both hoisted forms, below).
bool HoistingPays(const Workload& w) {
  StatusOr<std::shared_ptr<const pointwise::Compiled>> c = pointwise::HoistedOf(w);
  return c.ok() && (*c)->hoisted->ops_hoisted >= 2 && (*c)->bytecode.numel >= (int64_t(1) << 22);
}

// The CPU implementations' default thread count (registry/cpu_knobs.h): all cores.
int64_t AllThreads(const Target& t) { return CpuThreadCounts(t).back(); }

// A loop's config: all threads from 64K elements, else one.
Config ThreadsBySize(const Workload& w, const Target& t) {
  Config c;
  c.Set("threads", Elements(w) >= 65536 ? AllThreads(t) : 1);
  return c;
}

std::unique_ptr<Strategy> MakePointwiseStrategy() {
  std::vector<StrategyRule> rules = {
      {40, "pointwise_cuda_specialised", "GPU, the program is bias+act, scale+residual, an activation alone or the lstm cell",
       [](const Workload& w, const Target& t) {
         return t.kind == DeviceKind::kCuda && pointwise::SpecialisedChain(w).has_value() && Elements(w) < (int64_t(1) << 32);
       },
       nullptr},
      {39, "pointwise_cuda_batchnorm",
       "GPU, the program is batch-norm inference (hoisted: >= 2 operations an element hoisted, >= 4M elements)",
       [](const Workload& w, const Target& t) {
         if (t.kind != DeviceKind::kCuda) return false;
         StatusOr<pointwise::BatchNormPlan> plan = pointwise::BatchNormPlanFor(w);
         return plan.ok() && plan->numel < (int64_t(1) << 32) && (!plan->hoisted || HoistingPays(w));
       },
       nullptr},
      {37, "pointwise_cuda_hoisted", "GPU, >= 2 operations an output element hoisted, >= 4M elements",
       [](const Workload& w, const Target& t) { return t.kind == DeviceKind::kCuda && HoistingPays(w); },
       nullptr},
      {35, "pointwise_cuda_interpreted", "GPU", [](const Workload&, const Target& t) { return t.kind == DeviceKind::kCuda; },
       nullptr},
      {30, "pointwise_cpu_specialised", "CPU, the program is bias+act, scale+residual, an activation alone or the lstm cell",
       [](const Workload& w, const Target& t) { return OnCpu(t) && pointwise::SpecialisedChain(w).has_value(); },
       ThreadsBySize},
      {25, "pointwise_cpu_batchnorm", "CPU, the program is batch-norm inference",
       [](const Workload& w, const Target& t) { return OnCpu(t) && pointwise::BatchNormPlanFor(w).ok(); },
       ThreadsBySize},
      {20, "pointwise_cpu_interpreted", "CPU, >= 64K elements",
       [](const Workload& w, const Target& t) { return OnCpu(t) && Elements(w) >= 65536; }, nullptr},
      {10, "pointwise_cpu_interpreted", "CPU", [](const Workload&, const Target& t) { return OnCpu(t); },
       [](const Workload&, const Target&) {
         Config c;
         c.Set("threads", 1);
         c.Set("chunk", 65536);
         return c;
       }},
  };
  return std::make_unique<Strategy>("pointwise", std::move(rules));
}

}  // namespace

Status RegisterPointwiseStrategy(Registry& registry) {
  return registry.AddStrategy(MakePointwiseStrategy());
}

}  // namespace opsched
