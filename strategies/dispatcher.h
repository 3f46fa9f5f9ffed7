// Dispatcher: the run-time choice of implementation and config for a workload on one
// target. The chain, tried in order:
//   1. exact record        — the fastest usable ok record of this workload on this target
//   2. transferred record  — likewise from another target of the same arch (only when
//                            DispatchOptions::allow_transferred_records)
//   3. predicted           — the learned selector's best candidate by predicted time
//                            (among its nearest training workloads' fastest and the
//                            floor's two picks), when a model is loaded, this workload
//                            lies near its training data (DispatchOptions::
//                            model_max_distance) and no near training workload measured
//                            the pick at 1.5x its best or slower, nor the nearest tuned
//                            workload of the records that measured it (else it is
//                            contested and step 4 is skipped: the floor decides)
//   4. nearest record      — the config of the nearest tuned workload of the same family,
//                            when it is legal for this workload
//   5. floor               — the better of the op's strategy rule and the vendor's own
//                            heuristic (cuDNN's), by the model's prediction when it knows
//                            both implementations, else the vendor's (a framework's
//                            default is never beaten downwards); then any applicable
//                            implementation with its default config
// A record is usable when its implementation is registered, runs on this target kind,
// applies to the workload, its config lies in today's space, and (with the deterministic
// option) the implementation is deterministic; an unusable record is skipped with one
// warning. Decisions are cached per workload; cached lookups take no lock and allocate
// nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <mutex>
#include <set>
#include <vector>

#include "core/status.h"
#include "core/target.h"
#include "core/workload.h"
#include "records/database.h"
#include "strategies/dispatch_options.h"
#include "strategies/decision.h"
#include "strategies/decision_cache.h"
#include "registry/registry.h"

namespace opsched {

class Selector;

class Dispatcher {
 public:
  // `db` may be null (no records), and `selector` (no model). All must outlive the
  // dispatcher.
  Dispatcher(const Registry& registry, Target target, const records::Database* db,
             DispatchOptions options, const Selector* selector = nullptr);

  // The cached decision for a workload; computed (workload canonicalised) on first use.
  StatusOr<const CachedDecision*> Decide(const Workload& workload);
  // The cached decision for a workload, or null when it has none yet (never decides).
  const CachedDecision* Cached(const Workload& workload) const {
    return cache_.Find(workload.FastHash(), workload);
  }
  // Called with every decision Decide computes (not with cached ones), on the deciding
  // thread; possibly twice for one workload when two threads decide it at once. Set it
  // before the first Decide.
  using DecisionObserver = std::function<void(const CachedDecision&)>;
  void set_observer(DecisionObserver observer) { observer_ = std::move(observer); }
  // With `prepare`, every decision Decide computes is also prepared for this target
  // (Implementation::Prepare, the target's device current): CachedDecision::prepared is
  // set, and a failing Prepare fails Decide (nothing is cached). The Runtime prepares;
  // offline users (explain, study) do not. Set it before the first Decide.
  void set_prepare(bool prepare) { prepare_ = prepare; }
  // The decision with every candidate considered; not cached.
  StatusOr<Explanation> Explain(const Workload& workload) const;
  // The strategy's choice alone, ignoring records (what an untuned run would use).
  StatusOr<Decision> Heuristic(const Workload& canonical) const;
  // The vendor library's own choice (cuDNN's heuristic), where an implementation has one.
  StatusOr<Decision> Vendor(const Workload& canonical) const;
  // Every candidate the dispatcher may choose for `canonical`: applicable implementations
  // on this target (deterministic ones with that option) with every config of their space.
  std::vector<Candidate> LegalCandidates(const Workload& canonical) const;
  const Selector* selector() const { return selector_; }

  const Target& target() const { return target_; }
  const DispatchOptions& options() const { return options_; }
  const Registry& registry() const { return registry_; }
  size_t cached() const { return cache_.size(); }

 private:
  StatusOr<Decision> DecideCanonical(const Workload& canonical, std::vector<Considered>* notes,
                                     std::vector<std::string>* model_notes = nullptr) const;
  // OK when `impl` may run `config` for `canonical` on this target.
  Status Usable(const Implementation* impl, std::string_view name, const Config& config,
                const Workload& canonical) const;
  // True when the model's records of `implementation` ran with other versions of a vendor
  // library it calls than this target's.
  bool ModelMeasuredOtherVersionsOf(std::string_view implementation) const;
  // Tries the ok ones of `records` (one workload's), fastest first.
  bool TryRecords(const std::vector<const records::RecordEntry*>& records, const Workload& canonical,
                  Provenance provenance, std::string_view source,
                  std::vector<Considered>* notes, Decision* out) const;
  // OK unless `config` needs more workspace than DispatchOptions::max_workspace_bytes.
  Status WithinWorkspaceLimit(const Implementation* impl, const Config& config, const Workload& canonical) const;
  void WarnOnce(const records::RecordEntry* entry, std::string_view message) const;
  // The floor's two picks for one workload: the rule's and the vendor's heuristic's.
  struct FloorPicks {
    StatusOr<Decision> rule;
    StatusOr<Decision> vendor;
  };
  FloorPicks Picks(const Workload& canonical) const { return {Heuristic(canonical), Vendor(canonical)}; }
  // The selector's choice when it is confident; *model_notes gets what it said, *picks the
  // floor's picks when it ranked them. kContested: its nearest training workloads disagree
  // about its pick, or the nearest tuned workload that measured it does
  // (ContestedByRecords), or a rule says its implementation does not fit here
  // (AgainstRules), so neither the pick nor a neighbour's record serves, the floor does.
  enum class Prediction { kDecided, kNone, kContested };
  Prediction TryPredicted(const Workload& canonical, std::vector<Considered>* notes,
                          std::vector<std::string>* model_notes, std::optional<FloorPicks>* picks,
                          Decision* out) const;
  // Heuristic over OfflineSpace: today's rules where the records show their
  // implementation (NotFound, unknown, where they lack today's config), else the rule's
  // pick recorded at tuning time.
  StatusOr<Decision> OfflineHeuristic(const Workload& canonical) const;
  // Where a rule's `fits` says `pick` does not fit the workload: that, in words; else "".
  std::string AgainstRules(const Candidate& pick, const Workload& canonical) const;
  // The rule's own config, else `impl`'s default (ConfigSpace::Default).
  StatusOr<Config> RuleConfig(const StrategyRule& rule, const Implementation* impl, const Workload& canonical) const;
  // The rule's pick for `canonical`: live, what Heuristic serves; offline, the first
  // strategy rule that holds whose implementation `there` (the workload's records) shows,
  // with its config (strategies/floor_verdict.cc).
  std::optional<Candidate> RuleCandidate(const Workload& canonical,
                                         const std::vector<const records::RecordEntry*>& there) const;
  // The nearest_k nearest tuned workloads with records on this target (hidden ones, a
  // study's, do not count), within nearest_max_distance, nearest first; none without
  // records or with use_nearest_records off (strategies/floor_verdict.cc).
  std::vector<records::Neighbour> TunedNeighbours(const Workload& canonical) const;
  // The fastest ok measurement among `records` (one workload's) of `candidate`, or of
  // any candidate when it is null; infinity where there is none.
  double FastestMeasured(const std::vector<const records::RecordEntry*>& records, const Candidate* candidate) const;
  // Of TunedNeighbours, the nearest on which the rule runs `rule_implementation`
  // and which measured both the rule's pick there and `vendor`: the two times it measured.
  // None without records, with use_nearest_records off, or without such a workload.
  struct FloorVerdict {
    std::string workload;
    double distance = 0;
    Candidate rule_there;
    double rule_us = 0;
    double vendor_us = 0;
  };
  std::optional<FloorVerdict> NeighboursVerdict(const Workload& canonical, std::string_view rule_implementation,
                                                const Candidate& vendor) const;
  // Where the nearest of TunedNeighbours that measured `pick` ran it at
  // `contested` x its best or slower: why, in words; else none (strategies/records_contest.cc).
  std::optional<std::string> ContestedByRecords(const Workload& canonical, const Candidate& pick,
                                                double contested) const;
  // The better of the rule's and the vendor's picks (see the chain above).
  StatusOr<Decision> Floor(const Workload& canonical, std::vector<Considered>* notes, FloorPicks picks) const;
  // Fills a decision for `impl` with `config`.
  Decision Make(const Implementation* impl, Config config, Provenance provenance, std::string reason,
                const Workload& canonical) const;

  const Registry& registry_;
  const Target target_;
  const records::TargetKey target_key_;
  const records::Database* db_;
  const DispatchOptions options_;
  const Selector* selector_;
  // The vendor libraries whose versions the model's training records ran with and this
  // target does not (Selector::OtherLibraries): candidates calling them are not ranked.
  const LibraryUse model_other_libraries_;
  DecisionCache cache_;
  DecisionObserver observer_;
  bool prepare_ = false;
  mutable std::mutex warned_mu_;
  mutable std::set<const records::RecordEntry*> warned_;
};

}  // namespace opsched
