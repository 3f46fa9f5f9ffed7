// Search policies over one workload's candidates (every applicable implementation with
// every config of its space): exhaustive grid, random, and XGBoost-guided. A policy
// proposes indices into the candidate list and learns from each result.
#pragma once

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/workload.h"
#include "selector/booster.h"
#include "tuner/evaluator.h"
#include "tuner/features.h"

namespace opsched {

class SearchPolicy {
 public:
  virtual ~SearchPolicy() = default;
  virtual std::string_view name() const = 0;
  // Up to `batch` candidates not proposed before; empty when none is left.
  virtual std::vector<size_t> Next(size_t batch) = 0;
  // The result of candidate i: its call time (records/call_time.h), or a negative value for a failure.
  virtual void Observe(size_t i, double time_us) = 0;
};

// A measured example from another workload, for the guided policy's transfer learning.
struct TransferExample {
  Workload workload;
  Candidate candidate;
  double time_us;
};

struct PolicyOptions {
  uint64_t seed = 1;
  double exploration = 0.15;  // guided: fraction of each batch drawn at random
  size_t initial = 8;         // guided: random candidates before the first model
  std::vector<TransferExample> transfer;
};

// "grid", "random" or "xgb"; an error names the known policies.
StatusOr<std::unique_ptr<SearchPolicy>> MakeSearchPolicy(std::string_view name,
                                                         const Workload& workload,
                                                         const std::vector<Candidate>& candidates,
                                                         const PolicyOptions& options);

}  // namespace opsched
