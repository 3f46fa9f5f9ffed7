// Pointwise's strategy: a program that is one of the known chains runs its specialised
// loop; any other runs the bytecode interpreter in one pass. The unfused implementation
// (one pass per operation, an eager framework's way) is the tuner's baseline, never a rule.
//
//  priority  implementation              when                                   default config
//  30        pointwise_cpu_specialised   CPU, the program is a known chain      threads=all (>= 64K elements), else 1
//  20        pointwise_cpu_interpreted   CPU, >= 64K elements                   threads=all chunk=65536
//  10        pointwise_cpu_interpreted   CPU                                    threads=1 chunk=65536
#include "ops/pointwise/pointwise_def.h"
#include "ops/pointwise/pointwise_match.h"
#include "strategies/registry.h"

namespace opsched {
namespace {

int64_t Elements(const Workload& w) {
  StatusOr<std::shared_ptr<const pointwise::Compiled>> c = pointwise::CompiledFor(w);
  return c.ok() ? (*c)->bytecode.numel : 0;
}

int64_t AllThreads(const Target& t) {
  int64_t threads = 1;
  while (threads * 2 <= t.sm_count) threads *= 2;
  return threads;
}

std::unique_ptr<Strategy> MakePointwiseStrategy() {
  std::vector<StrategyRule> rules = {
      {30, "pointwise_cpu_specialised", "CPU, the program is bias+act, scale+residual, gelu or the lstm cell",
       [](const Workload& w, const Target& t) { return OnCpu(t) && pointwise::SpecialisedChain(w).has_value(); },
       [](const Workload& w, const Target& t) {
         Config c;
         c.Set("threads", Elements(w) >= 65536 ? AllThreads(t) : 1);
         return c;
       }},
      {20, "pointwise_cpu_interpreted", "CPU, >= 64K elements",
       [](const Workload& w, const Target& t) { return OnCpu(t) && Elements(w) >= 65536; },
       [](const Workload&, const Target& t) {
         Config c;
         c.Set("threads", AllThreads(t));
         c.Set("chunk", 65536);
         return c;
       }},
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

OPSCHED_REGISTER_STRATEGY(MakePointwiseStrategy());

}  // namespace
}  // namespace opsched
