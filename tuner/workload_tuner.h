// Tuning one workload on one target: enumerate its candidates (every applicable
// implementation with every config of its space, within the memory budget), take what
// the log already holds for them (resume), measure the seeds first (what the Runtime
// serves today, the rule's and the vendor's choice), cover small spaces, then let the
// search policy spend the rest of the trials; every result becomes a record in the sink
// as it is made. Shared by the session's device threads and the MPI ranks.
#pragma once

#include <string>
#include <vector>

#include "core/target.h"
#include "records/database.h"
#include "registry/registry.h"
#include "tuner/evaluator.h"
#include "tuner/progress.h"
#include "tuner/record_sink.h"
#include "tuner/search_policy.h"
#include "tuner/seeds.h"
#include "tuner/session.h"
#include "tuner/suite.h"

namespace opsched {

struct WorkloadContext {
  const Registry* registry = nullptr;
  const TuneOptions* options = nullptr;
  Target target;                             // the device this workload is tuned on
  CandidateEvaluator* evaluator = nullptr;   // evaluates on `target`
  RecordSink* sink = nullptr;
  const records::Database* known = nullptr;  // records so far (resume), may be null
  std::vector<Seed> seeds;                   // measured first, in order
  Progress* progress = nullptr;
  int lane = 0;
  std::string session_id;
  double time_budget_s = 0;                  // this workload's share; 0: none
  std::vector<TransferExample> transfer;     // for the guided policy
};

// Tunes `entry` (index `index` of its suite). Errors only when the sink fails; a bad
// line or failing candidates are part of the result.
StatusOr<WorkloadResult> TuneWorkload(const SuiteEntry& entry, int index, const WorkloadContext& context);

// Every legal (implementation, config) of a canonical workload on `target`, with the
// workspace each needs; those over `memory_budget` (> 0) are counted in *over_budget.
// `only` (non-empty): just the implementations it names.
struct CandidateSet {
  std::vector<Candidate> candidates;
  std::vector<int64_t> workspace;
  int over_budget = 0;
};
CandidateSet EnumerateCandidates(const Registry& registry, const Workload& canonical, const Target& target,
                                 int64_t memory_budget, const std::vector<std::string>& only = {});

// The ok records of other workloads of the same op on `target` in `db` (at most 20,000),
// for the guided policy's transfer learning; where `db` has none of the op on `target`,
// those of other devices of its arch (a new GPU tuned from an older one's logs).
std::vector<TransferExample> TransferExamples(const records::Database& db, const Target& target,
                                              const Workload& canonical);

}  // namespace opsched
