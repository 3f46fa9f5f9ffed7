#include "tuner/study.h"

#include <algorithm>

#include "core/format.h"
#include "tuner/search_policy.h"

namespace opsched {

StatusOr<StudyResult> ReplaySearch(std::string_view policy, const Workload& workload,
                                   const std::vector<Candidate>& candidates,
                                   const std::vector<double>& times_us, int seeds, double within,
                                   size_t batch) {
  if (candidates.size() != times_us.size()) {
    return absl::InvalidArgumentError("one time per candidate");
  }
  StudyResult result;
  result.policy = std::string(policy);
  result.candidates = candidates.size();
  for (double t : times_us) {
    if (t > 0 && (result.best_us == 0 || t < result.best_us)) result.best_us = t;
  }
  if (result.best_us == 0) return absl::InvalidArgumentError("no candidate has a successful measurement");
  const double target = result.best_us / within;
  for (int seed = 1; seed <= seeds; ++seed) {
    PolicyOptions options;
    options.seed = static_cast<uint64_t>(seed);
    OPSCHED_ASSIGN_OR_RETURN(std::unique_ptr<SearchPolicy> p,
                             MakeSearchPolicy(policy, workload, candidates, options));
    int trials = 0;
    bool found = false;
    while (!found) {
      const std::vector<size_t> next = p->Next(batch);
      if (next.empty()) break;
      for (size_t i : next) {
        ++trials;
        p->Observe(i, times_us[i] > 0 ? times_us[i] : -1);
        if (times_us[i] > 0 && times_us[i] <= target) {
          found = true;
          break;
        }
      }
    }
    if (!found) return absl::InternalError(fmt::format("{} never reached the target with seed {}", policy, seed));
    result.trials_to_target.push_back(trials);
  }
  double sum = 0;
  for (int t : result.trials_to_target) sum += t;
  result.mean_trials = sum / static_cast<double>(result.trials_to_target.size());
  return result;
}

}  // namespace opsched
