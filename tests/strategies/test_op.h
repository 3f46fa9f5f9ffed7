// A test-only op, "scale" (y = factor * x over f32[n]), with three implementations and
// a strategy, registered into a caller's Registry: the dispatcher and runtime tests use
// it to reach every branch of the decision chain.
#pragma once

#include <atomic>
#include <functional>
#include <string>

#include "registry/registry.h"

namespace opsched::testing {

// Counts Run calls per implementation (to see which one ran), and Prepare calls.
struct ScaleRuns {
  std::atomic<int> loop{0};
  std::atomic<int> blocked{0};
  std::atomic<int> prepared{0};  // Prepare calls of any implementation
  // scale_cpu_blocked's traits say it calls cuDNN (records of other cuDNN versions then
  // do not hold for it).
  bool blocked_calls_cudnn = false;
};

// Registers op "scale", implementations "scale_cpu_loop" (deterministic, knob unroll in
// {1,2,4}), "scale_cpu_blocked" (non-deterministic trait, knob block in {64,256,1024},
// applicable when n >= 64 and n % 64 == 0, in place), "scale_cuda" (a CUDA
// implementation that never runs on the CPU) and the strategy:
//   priority 20  scale_cpu_blocked block=1024  when n >= 4096
//   priority 10  scale_cpu_loop    unroll=8    always (8 is outside the space: the
//                                              dispatcher falls back to unroll=1)
// `blocked_fits`: where the blocked rule says its implementation fits (StrategyRule::fits).
void RegisterScaleOp(Registry* registry, ScaleRuns* runs, std::string blocked_fits_when = "",
                     std::function<bool(const Workload&, const Target&, const Config&)> blocked_fits = nullptr);

}  // namespace opsched::testing
