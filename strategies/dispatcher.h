// Dispatcher: the run-time choice of implementation and config for a workload on one
// target. The chain, tried in order:
//   1. exact record        — the fastest usable ok record of this workload on this target
//   2. transferred record  — likewise from another target of the same arch (only when
//                            DispatchOptions::allow_transferred_records)
//   3. nearest record      — the config of the nearest tuned workload of the same family,
//                            when it is legal for this workload
//   4. heuristic           — the op's strategy rules, then any applicable implementation
// A record is usable when its implementation is registered, runs on this target kind,
// applies to the workload, its config lies in today's space, and (with the deterministic
// option) the implementation is deterministic; an unusable record is skipped with one
// warning. Decisions are cached per workload; cached lookups take no lock and allocate
// nothing.
#pragma once

#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "core/status.h"
#include "core/target.h"
#include "core/workload.h"
#include "records/database.h"
#include "strategies/decision.h"
#include "strategies/decision_cache.h"
#include "strategies/registry.h"

namespace opsched {

struct DispatchOptions {
  bool deterministic = false;
  bool allow_transferred_records = false;
  bool use_nearest_records = true;
  int nearest_k = 4;
  // A tuned workload further than this (Database::Distance, in log2 units of the
  // dimensions) is no guide: its config is not carried over.
  double nearest_max_distance = 3.0;
};

class Dispatcher {
 public:
  // `db` may be null (no records: heuristics only). Both must outlive the dispatcher.
  Dispatcher(const Registry& registry, Target target, const records::Database* db,
             DispatchOptions options);

  // The cached decision for a workload; computed (workload canonicalised) on first use.
  StatusOr<const CachedDecision*> Decide(const Workload& workload);
  // The decision with every candidate considered; not cached.
  StatusOr<Explanation> Explain(const Workload& workload) const;
  // The strategy's choice alone, ignoring records (what an untuned run would use).
  StatusOr<Decision> Heuristic(const Workload& canonical) const;

  const Target& target() const { return target_; }
  const DispatchOptions& options() const { return options_; }
  const Registry& registry() const { return registry_; }
  size_t cached() const { return cache_.size(); }

 private:
  StatusOr<Decision> DecideCanonical(const Workload& canonical,
                                     std::vector<Considered>* notes) const;
  // OK when `impl` may run `config` for `canonical` on this target.
  Status Usable(const Implementation* impl, std::string_view name, const Config& config,
                const Workload& canonical) const;
  // Tries ok records of (workload hash, fingerprint), fastest first.
  bool TryRecords(uint64_t workload_hash, uint64_t fingerprint, const Workload& canonical,
                  Provenance provenance, std::string_view source,
                  std::vector<Considered>* notes, Decision* out) const;
  void WarnOnce(const records::RecordEntry* entry, std::string_view message) const;

  const Registry& registry_;
  const Target target_;
  const records::TargetKey target_key_;
  const records::Database* db_;
  const DispatchOptions options_;
  DecisionCache cache_;
  mutable std::mutex warned_mu_;
  mutable std::set<const records::RecordEntry*> warned_;
};

}  // namespace opsched
