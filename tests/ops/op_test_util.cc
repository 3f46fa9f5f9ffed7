#include "tests/ops/op_test_util.h"

#include <algorithm>
#include <cstring>

#include "core/format.h"
#include "core/gpu/gpu_backend.h"

namespace opsched::testing {

std::vector<const Implementation*> ApplicableImplementations(const Registry& registry,
                                                             const Workload& workload,
                                                             const Target& target) {
  std::vector<const Implementation*> out;
  for (const Implementation* impl : registry.ImplementationsOf(workload.op())) {
    if (impl->device_kind() == target.kind && impl->Applicable(workload, target).ok()) {
      out.push_back(impl);
    }
  }
  return out;
}

std::vector<Config> SampleConfigs(const ConfigSpace& space, size_t limit, std::mt19937_64& rng) {
  std::vector<Config> all = space.Enumerate();
  if (all.size() <= limit) return all;
  std::vector<Config> out = {all.front()};
  std::shuffle(all.begin() + 1, all.end(), rng);
  out.insert(out.end(), all.begin() + 1, all.begin() + limit);
  return out;
}

Status CheckConfigs(Trial& trial, const Implementation& impl, const std::vector<Config>& configs, bool in_place,
                    int* runs) {
  for (const Config& config : configs) {
    const std::string where = fmt::format("{} [{} {}{}]", trial.workload().ToString(), impl.name(),
                                          config.ToString(), in_place ? ", in place" : "");
    OPSCHED_RETURN_IF_ERROR(Annotate(trial.Run(impl, config), where));
    OPSCHED_RETURN_IF_ERROR(Annotate(trial.Check(impl), where));
    OPSCHED_RETURN_IF_ERROR(Annotate(trial.CheckInputsUnchanged(), where));
    ++*runs;
  }
  return absl::OkStatus();
}

Status CheckAllImplementations(const Registry& registry, const Workload& workload,
                               const Target& target, const TrialOptions& options,
                               size_t configs_per_impl, std::mt19937_64& rng, int* runs) {
  OPSCHED_ASSIGN_OR_RETURN(auto trial, Trial::Create(registry, workload, target, options));
  for (const Implementation* impl : ApplicableImplementations(registry, workload, target)) {
    if (options.in_place && !impl->traits().in_place) continue;
    OPSCHED_RETURN_IF_ERROR(CheckConfigs(*trial, *impl, SampleConfigs(impl->Space(workload, target), configs_per_impl, rng),
                                         options.in_place, runs));
  }
  return absl::OkStatus();
}

Status CheckRuntimeCall(const Registry& registry, const Target& target, const Workload& workload,
                        const RuntimeCall& call) {
  TrialOptions options;
  options.seed = 5;
  OPSCHED_ASSIGN_OR_RETURN(auto trial, Trial::Create(registry, workload, target, options));
  const std::vector<Tensor>& t = trial->tensors();
  OPSCHED_RETURN_IF_ERROR(call(t, trial->stream()));
  std::vector<HostTensor> outputs;
  const size_t first = t.size() - trial->outputs().size();
  for (size_t i = first; i < t.size(); ++i) {
    HostTensor out(trial->outputs()[i - first].desc());
    if (out.storage_bytes() == 0) {
      // An empty output: nothing to copy (and memcpy must not see its null pointers).
    } else if (t[i].device.is_cpu()) {
      std::memcpy(out.data(), t[i].data, out.storage_bytes());
    } else {
      OPSCHED_RETURN_IF_ERROR(gpu::MemcpyAsync(out.data(), t[i].data, out.storage_bytes(), trial->stream().native()));
    }
    outputs.push_back(std::move(out));
  }
  if (target.kind != DeviceKind::kCpu) OPSCHED_RETURN_IF_ERROR(gpu::StreamSynchronize(trial->stream().native()));
  OPSCHED_ASSIGN_OR_RETURN(const std::vector<std::vector<double>>* reference, trial->Reference());
  return Annotate(trial->op().Check(workload, trial->inputs(), outputs, *reference, true, nullptr),
                  workload.ToString());
}

}  // namespace opsched::testing
