// Decision: which implementation and config run a workload, where that choice came
// from, and why — and the Explanation of how the dispatcher reached it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"
#include "registry/implementation.h"

namespace opsched {

// The dispatcher's fallback chain, in the order it is tried.
enum class Provenance {
  kExactRecord,        // measured for this workload on this target
  kTransferredRecord,  // measured for this workload on the same arch, other device/libraries
  kNearestRecord,      // config of the nearest tuned workload, legal for this one
  kHeuristic,          // the op's strategy rules
  kPredicted,          // the learned selector's best predicted candidate
  kVendor,             // the vendor library's own heuristic (cuDNN's), the floor
};

std::string_view ProvenanceName(Provenance provenance);  // "exact record", ...

struct Decision {
  const Implementation* implementation = nullptr;
  Config config;
  Provenance provenance = Provenance::kHeuristic;
  std::string reason;        // one line, e.g. "fastest ok record: 12.30 us (grid, trial 7)"
  double measured_us = -1;   // the record's call time (records/call_time.h), when the choice came from a record
  double predicted_us = -1;  // the selector's prediction, when it has one for the choice
  size_t workspace_bytes = 0;
};

// One candidate the dispatcher looked at.
struct Considered {
  std::string source;          // "exact record", "strategy rule 'rank == 1'", ...
  std::string implementation;
  std::string config;
  std::string verdict;         // "chosen", or why it was passed over
};

struct Explanation {
  std::string workload;  // canonical line
  std::string target;
  Decision decision;
  std::vector<Considered> considered;
  // What the selector said: its prediction, the runner-up and the training workloads
  // nearest to this one (empty without a model).
  std::vector<std::string> model_notes;

  // The decision, its provenance and reason, then every candidate considered.
  std::string ToString() const;
};

}  // namespace opsched
