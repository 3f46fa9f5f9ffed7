// Search studies: how many trials a policy needs to find a good candidate, replayed over
// the results of an exhaustive run (every candidate of a workload measured once), so
// that policies and seeds are compared on the same numbers without the device.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/workload.h"
#include "tuner/evaluator.h"

namespace opsched {

struct StudyResult {
  std::string policy;
  size_t candidates = 0;
  double best_us = 0;                  // the exhaustive best
  std::vector<int> trials_to_target;   // per seed
  double mean_trials = 0;
};

// Replays `policy` (as MakeSearchPolicy builds it, batches of `batch`) over `candidates`
// whose results are `times_us` (> 0: call time, records/call_time.h; <= 0: failed) for
// seeds 1..seeds, counting the trials until one candidate is within `within` of the best
// (time <= best / within).
// An error when no candidate succeeded or the policy is unknown.
StatusOr<StudyResult> ReplaySearch(std::string_view policy, const Workload& workload,
                                   const std::vector<Candidate>& candidates,
                                   const std::vector<double>& times_us, int seeds, double within,
                                   size_t batch = 4);

}  // namespace opsched
