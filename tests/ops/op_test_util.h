// Helpers for op tests: run every implementation (and a sample of its configs) of an op
// on a device against the float64 reference, through tuner/trial.h.
#pragma once

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "registry/registry.h"
#include "tuner/trial.h"

namespace opsched::testing {

// Implementations of `op` that run on `target` and apply to `workload`.
std::vector<const Implementation*> ApplicableImplementations(const Registry& registry,
                                                             const Workload& workload,
                                                             const Target& target);
// Every config of the space when it has at most `limit`, else `limit` drawn at random
// plus the first one.
std::vector<Config> SampleConfigs(const ConfigSpace& space, size_t limit, std::mt19937_64& rng);

// Runs `impl` with each of `configs` on the trial's inputs and checks each result against
// the reference and that the inputs were not modified (`in_place`: named in the errors).
// Returns the first failure, naming the workload, implementation and config. *runs
// counts the checked runs.
Status CheckConfigs(Trial& trial, const Implementation& impl, const std::vector<Config>& configs, bool in_place,
                    int* runs);

// Runs every applicable implementation with sampled configs on fresh inputs and checks
// each result and that the inputs were not modified. Returns the first failure, naming
// the workload, implementation and config. *runs counts the checked runs.
Status CheckAllImplementations(const Registry& registry, const Workload& workload,
                               const Target& target, const TrialOptions& options,
                               size_t configs_per_impl, std::mt19937_64& rng, int* runs);

// Makes a trial of `workload` (outputs poisoned), runs `call` — a Runtime entry point
// given the trial's device tensors (inputs then outputs) and stream — and checks every
// output against the float64 reference.
using RuntimeCall = std::function<Status(const std::vector<Tensor>& tensors, const Stream& stream)>;
Status CheckRuntimeCall(const Registry& registry, const Target& target, const Workload& workload,
                        const RuntimeCall& call);

}  // namespace opsched::testing
