// Seeds: the candidates a tuning session measures first for a workload — what the
// Runtime would serve today (exact, transferred, nearest or predicted record, or the
// floor), then the strategy rule's choice, the vendor's own pick and the model's best
// guess where they differ —
// so that a record written by even a one-trial session is never worse than what was
// served before it.
#pragma once

#include <string>
#include <vector>

#include "core/workload.h"
#include "strategies/dispatcher.h"
#include "tuner/evaluator.h"

namespace opsched {

struct Seed {
  Candidate candidate;
  // The search policy name its record carries: "heuristic" (the rules), "served"
  // (a record or the model decided), "vendor" (cuDNN's heuristic), "predicted" (the
  // model's best guess where the Runtime does not trust it).
  std::string source;
};

// Distinct seeds for `canonical`, in the order to measure them. `served` holds the
// records (and model) a Runtime would load.
std::vector<Seed> SeedCandidates(const Dispatcher& served, const Workload& canonical);

}  // namespace opsched
