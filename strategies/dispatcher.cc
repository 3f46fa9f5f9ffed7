#include "strategies/dispatcher.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "core/format.h"
#include "core/log.h"
#include "selector/candidate_encoding.h"
#include "selector/selector.h"
#include "strategies/neighbour_blend.h"

namespace opsched {
namespace {

void Note(std::vector<Considered>* notes, std::string_view source, std::string_view impl,
          const Config& config, std::string_view verdict) {
  if (notes == nullptr) return;
  notes->push_back(Considered{std::string(source), std::string(impl), config.ToString(),
                              std::string(verdict)});
}

std::string RecordOrigin(const records::Database& db, const records::RecordEntry& e) {
  StatusOr<records::Record> r = db.Fetch(e);
  if (!r.ok()) return "";
  const records::ProvenanceProto& p = r->provenance();
  return fmt::format(", {} search, session {}, trial {}", p.search_policy(), p.session_id(),
                     p.trial_index());
}

// Says when an exact record was measured with other vendor library versions (those its
// implementation does not call; records::Database::SetLibraryUse).
std::string OtherLibraries(const records::TargetProto& from, const Target& here) {
  std::vector<std::string> other;
  if (from.cublas_version() != here.cublas_version) other.push_back(fmt::format("cuBLAS {}", from.cublas_version()));
  if (from.cudnn_version() != here.cudnn_version) other.push_back(fmt::format("cuDNN {}", from.cudnn_version()));
  if (other.empty()) return "";
  return fmt::format(" (measured with {}, which this implementation does not call)", fmt::join(other, " and "));
}

// Says when a record's call time is its host time (records/call_time.h).
std::string HostBoundNote(const records::RecordEntry& e) {
  if (!(e.call_us > e.median_us)) return "";
  return fmt::format(" per call, host-bound (device {:.2f} us)", e.median_us);
}

}  // namespace

Dispatcher::Dispatcher(const Registry& registry, Target target, const records::Database* db,
                       DispatchOptions options, const Selector* selector)
    : registry_(registry),
      target_(std::move(target)),
      target_key_(records::TargetKey::Of(target_)),
      db_(db),
      options_(std::move(options)),
      selector_(selector),
      model_other_libraries_(selector != nullptr ? selector->OtherLibraries(target_).value_or(LibraryUse{false, false})
                                                 : LibraryUse{false, false}) {}

bool Dispatcher::ModelMeasuredOtherVersionsOf(std::string_view implementation) const {
  if (!model_other_libraries_.cublas && !model_other_libraries_.cudnn) return false;  // no lookup needed
  return CallsAny(registry_.LibraryUseOf(implementation), model_other_libraries_);
}

StatusOr<const CachedDecision*> Dispatcher::Decide(const Workload& workload) {
  // The in-memory fast hash: the stable one (for records) is needed only on a miss.
  const uint64_t hash = workload.FastHash();
  if (const CachedDecision* hit = cache_.Find(hash, workload)) return hit;
  auto entry = std::make_unique<CachedDecision>();
  entry->hash = hash;
  entry->workload = workload;
  entry->canonical = workload;
  OPSCHED_RETURN_IF_ERROR(registry_.Canonicalize(&entry->canonical));
  OPSCHED_ASSIGN_OR_RETURN(entry->decision, DecideCanonical(entry->canonical, nullptr));
  if (prepare_) {
    const Decision& d = entry->decision;
    StatusOr<std::unique_ptr<Prepared>> prepared = d.implementation->Prepare(entry->canonical, d.config, target_);
    if (!prepared.ok()) {
      return Annotate(prepared.status(), fmt::format("preparing {} {}", d.implementation->name(), d.config.ToString()));
    }
    entry->decision.workspace_bytes = (*prepared)->workspace_bytes();
    entry->prepared = *std::move(prepared);
  }
  for (const TensorArg& t : entry->canonical.tensors()) entry->expected.push_back(t.desc);
  const OpDef* op = registry_.FindOp(entry->canonical.op());
  for (const TensorDesc& d : op->OutputDescs(entry->canonical)) entry->expected.push_back(d);
  const CachedDecision* cached = cache_.Insert(std::move(entry));
  if (observer_) observer_(*cached);
  return cached;
}

StatusOr<Explanation> Dispatcher::Explain(const Workload& workload) const {
  Workload canonical = workload;
  OPSCHED_RETURN_IF_ERROR(registry_.Canonicalize(&canonical));
  Explanation e;
  e.workload = canonical.ToString();
  e.target = target_.ToString();
  OPSCHED_ASSIGN_OR_RETURN(e.decision, DecideCanonical(canonical, &e.considered, &e.model_notes));
  return e;
}

Status Dispatcher::Usable(const Implementation* impl, std::string_view name,
                          const Config& config, const Workload& canonical) const {
  if (impl == nullptr) {
    return absl::NotFoundError(
        fmt::format("implementation '{}' is not registered in this build", name));
  }
  if (options_.offline) {
    const OfflineSpace* space = options_.offline(canonical);
    const Candidate c{std::string(name), config};
    if (space == nullptr || std::find(space->candidates.begin(), space->candidates.end(), c) == space->candidates.end()) {
      return absl::NotFoundError("not among the workload's measured candidates (offline)");
    }
    return absl::OkStatus();
  }
  if (impl->op() != canonical.op()) {
    return absl::InvalidArgumentError(
        fmt::format("'{}' implements {}, not {}", name, impl->op(), canonical.op()));
  }
  if (impl->device_kind() != target_.kind) {
    return absl::FailedPreconditionError(fmt::format(
        "runs on {}, the target is {}", DeviceKindName(impl->device_kind()),
        DeviceKindName(target_.kind)));
  }
  Status applicable = impl->Applicable(canonical, target_);
  if (!applicable.ok()) return Annotate(applicable, "not applicable");
  Status in_space = impl->Space(canonical, target_).Check(config);
  if (!in_space.ok()) return Annotate(in_space, "config outside today's space");
  return WithinWorkspaceLimit(impl, config, canonical);
}

Status Dispatcher::WithinWorkspaceLimit(const Implementation* impl, const Config& config,
                                        const Workload& canonical) const {
  if (options_.max_workspace_bytes == SIZE_MAX) return absl::OkStatus();
  const size_t bytes = impl->WorkspaceBytes(canonical, config);
  if (bytes <= options_.max_workspace_bytes) return absl::OkStatus();
  return absl::ResourceExhaustedError(fmt::format("needs {} bytes of workspace, more than max_workspace_bytes {}",
                                                  bytes, options_.max_workspace_bytes));
}

void Dispatcher::WarnOnce(const records::RecordEntry* entry, std::string_view message) const {
  std::lock_guard<std::mutex> lock(warned_mu_);
  if (warned_.insert(entry).second) Log().warn("skipping a record: {}", message);
}

bool Dispatcher::TryRecords(const std::vector<const records::RecordEntry*>& records, const Workload& canonical,
                            Provenance provenance, std::string_view source, std::vector<Considered>* notes,
                            Decision* out) const {
  std::vector<const records::RecordEntry*> ok;
  for (const records::RecordEntry* e : records) {
    if (e->status == records::OK) ok.push_back(e);
  }
  std::stable_sort(ok.begin(), ok.end(), [](const auto* a, const auto* b) {
    return a->call_us < b->call_us;
  });
  // Records of this workload that cannot be used are bad (stale or foreign) and warned
  // about; a nearest workload's config that does not fit this one is merely passed over.
  const bool own_workload = provenance != Provenance::kNearestRecord;
  for (const records::RecordEntry* e : ok) {
    const std::string& name = db_->implementation(e->implementation);
    const Implementation* impl = registry_.FindImplementation(name);
    const Config& config = db_->config(e->config);
    if (options_.deterministic && impl != nullptr && !impl->traits().deterministic) {
      Note(notes, source, name, config, "not deterministic (deterministic dispatch)");
      continue;
    }
    Status usable = Usable(impl, name, config, canonical);
    if (!usable.ok()) {
      Note(notes, source, name, config, Message(usable));
      if (own_workload) {
        WarnOnce(e, fmt::format("{} {} for '{}': {}", name, config.ToString(),
                                canonical.ToString(), usable.message()));
      }
      continue;
    }
    out->implementation = impl;
    out->config = config;
    out->provenance = provenance;
    out->measured_us = e->call_us;
    out->workspace_bytes = impl->WorkspaceBytes(canonical, config);
    const records::TargetProto& from = db_->target(e->target);
    switch (provenance) {
      case Provenance::kExactRecord:
        out->reason = fmt::format("fastest usable ok record on this target: {:.2f} us{}{}{}", e->call_us,
                                  HostBoundNote(*e), OtherLibraries(from, target_), RecordOrigin(*db_, *e));
        break;
      case Provenance::kTransferredRecord:
        out->reason = fmt::format(
            "record from {} {} (same arch, other device or library versions): {:.2f} us{}",
            from.device_name(), from.arch(), e->call_us, RecordOrigin(*db_, *e));
        break;
      default:
        out->reason = fmt::format("{}: {:.2f} us there{}", source, e->call_us,
                                  RecordOrigin(*db_, *e));
    }
    Note(notes, source, name, config, "chosen");
    return true;
  }
  return false;
}

StatusOr<Decision> Dispatcher::DecideCanonical(const Workload& canonical, std::vector<Considered>* notes,
                                               std::vector<std::string>* model_notes) const {
  Decision d;
  const uint64_t wl = canonical.hash();
  const bool hidden = options_.hidden_workloads.count(wl) > 0;
  if (db_ != nullptr && !hidden) {
    if (TryRecords(db_->ExactRecordsFor(wl, target_key_), canonical, Provenance::kExactRecord, "exact record", notes,
                   &d)) {
      return d;
    }
    if (options_.allow_transferred_records) {
      for (uint64_t fp : db_->FingerprintsWithArch(target_key_.arch)) {
        if (fp == target_key_.fingerprint) continue;
        if (TryRecords(db_->RecordsFor(wl, fp), canonical, Provenance::kTransferredRecord, "transferred record", notes,
                       &d)) {
          return d;
        }
      }
    }
  }
  std::optional<FloorPicks> picks;  // computed once, by whichever step needs them first
  const Prediction predicted = TryPredicted(canonical, notes, model_notes, &picks, &d);
  if (predicted == Prediction::kDecided) return d;
  if (db_ != nullptr && options_.use_nearest_records && predicted != Prediction::kContested) {
    for (const records::Neighbour& n :
         db_->Nearest(canonical, target_, options_.nearest_k + static_cast<int>(options_.hidden_workloads.size()),
                      options_.allow_transferred_records)) {
      if (options_.hidden_workloads.count(n.workload->hash())) continue;
      if (n.distance > options_.nearest_max_distance) {
        if (notes != nullptr) {
          Note(notes, fmt::format("nearest record of '{}'", n.workload->ToString()), "-", Config(),
               fmt::format("too far (distance {:.2f} > {:.2f})", n.distance, options_.nearest_max_distance));
        }
        break;  // the rest are further still
      }
      const std::string source = fmt::format("nearest record of '{}' (distance {:.2f})",
                                             n.workload->ToString(), n.distance);
      // The neighbour's records that hold here, or, for a transferred best, its target's.
      const std::vector<const records::RecordEntry*> theirs =
          n.best.transferred ? db_->RecordsFor(n.workload->hash(), db_->target(n.best.entry->target).fingerprint())
                             : db_->ExactRecordsFor(n.workload->hash(), target_key_);
      if (TryRecords(theirs, canonical, Provenance::kNearestRecord, source, notes, &d)) {
        return d;
      }
    }
  }
  return Floor(canonical, notes, picks ? *std::move(picks) : Picks(canonical));
}

Decision Dispatcher::Make(const Implementation* impl, Config config, Provenance provenance, std::string reason,
                          const Workload& canonical) const {
  Decision d;
  d.implementation = impl;
  d.workspace_bytes = impl->WorkspaceBytes(canonical, config);
  d.config = std::move(config);
  d.provenance = provenance;
  d.reason = std::move(reason);
  return d;
}

std::vector<Candidate> Dispatcher::LegalCandidates(const Workload& canonical) const {
  std::vector<Candidate> out;
  if (options_.offline) {
    if (const OfflineSpace* space = options_.offline(canonical)) {
      for (const Candidate& c : space->candidates) {
        const Implementation* impl = registry_.FindImplementation(c.implementation);
        if (impl != nullptr && (!options_.deterministic || impl->traits().deterministic)) out.push_back(c);
      }
    }
    return out;
  }
  for (const Implementation* impl : registry_.ImplementationsOf(canonical.op())) {
    if (impl->device_kind() != target_.kind) continue;
    if (options_.deterministic && !impl->traits().deterministic) continue;
    if (!impl->Applicable(canonical, target_).ok()) continue;
    for (Config& config : impl->Space(canonical, target_).Enumerate()) {
      if (!WithinWorkspaceLimit(impl, config, canonical).ok()) continue;
      out.push_back(Candidate{std::string(impl->name()), std::move(config)});
    }
  }
  return out;
}

namespace {

// Training workloads whose fastest candidates form the pool the model ranks.
constexpr int kPoolNeighbours = 4;
// A pick that a nearest training workload measured at this slowdown or more is contested.
constexpr double kContested = 1.5;
// A pick that the time model predicts at this slowdown over the pool's fastest or more is
// contested.
constexpr double kDisagree = 1.5;
// The floor's two picks measured on a near tuned workload: the faster one decides when it
// is this much faster there (else the model's ranking, or the vendor's pick, as without).
constexpr double kVerdict = 1.1;

}  // namespace

Dispatcher::Prediction Dispatcher::TryPredicted(const Workload& canonical, std::vector<Considered>* notes,
                                                std::vector<std::string>* model_notes,
                                                std::optional<FloorPicks>* picks, Decision* out) const {
  if (selector_ == nullptr || !options_.use_model || !selector_->HasOp(canonical.op())) return Prediction::kNone;
  const OpDef* op = registry_.FindOp(canonical.op());
  if (op == nullptr) return Prediction::kNone;
  const std::vector<Selector::Neighbour> near = selector_->Nearest(*op, canonical, kPoolNeighbours);
  if (model_notes != nullptr) {
    for (const Selector::Neighbour& n : near) {
      model_notes->push_back(fmt::format("training workload at distance {:.2f} (best {:.2f} us): {}", n.distance,
                                         n.best_us, n.workload));
    }
  }
  // The model's records of cuDNN (cuBLAS) ran with other versions than this target's (a
  // process that loaded PyTorch's cuDNN): it ranks only candidates that call neither, and
  // only where the nearest training workloads' fastest candidate is one of those (else a
  // vendor algorithm was the best there, and the floor decides here: the rule's pick or
  // the vendor's, made with this version).
  if (model_other_libraries_.cublas || model_other_libraries_.cudnn) {
    for (const Selector::Neighbour& n : near) {
      if (n.top.empty()) continue;
      const std::string fastest = n.top.front().substr(0, n.top.front().find(' '));
      if (!ModelMeasuredOtherVersionsOf(fastest)) continue;
      const std::string why = fmt::format(
          "the fastest candidate of the training workload '{}', {}, calls a vendor library the model measured with "
          "other versions",
          n.workload, fastest);
      if (model_notes != nullptr) model_notes->push_back("not used: " + why);
      return Prediction::kNone;
    }
  }
  // The pool: the fastest candidates of the nearest training workloads that are legal
  // here. The model ranks within it, so that it never extrapolates to a candidate that was
  // fast nowhere near this workload (and a first decision checks a few dozen candidates,
  // not the whole space); the whole legal space when none of theirs is legal.
  std::vector<Candidate> candidates;
  // The nearest training workload with a fastest candidate legal here: one none of whose
  // fastest can run here (another layout's kernels) says nothing about which candidate
  // wins here, so it does not make the model trusted (a batch-1 nchw 1152x7x7 5x5
  // depthwise layer beside a channels-last 16x7x7x1152 one: 1.5x its best served).
  double legal_distance = INFINITY;
  {
    std::set<std::string> seen;
    std::map<const Implementation*, std::optional<ConfigSpace>> spaces;  // nullopt: not applicable
    for (const Selector::Neighbour& n : near) {
      const size_t before = candidates.size();
      for (const std::string& key : n.top) {
        if (!seen.insert(key).second) continue;
        const size_t cut = key.find(' ');
        const Implementation* impl = registry_.FindImplementation(key.substr(0, cut));
        StatusOr<Config> config = ParseConfig(cut == std::string::npos ? "-" : key.substr(cut + 1));
        if (impl == nullptr || !config.ok() || impl->op() != canonical.op() || impl->device_kind() != target_.kind ||
            (options_.deterministic && !impl->traits().deterministic) || ModelMeasuredOtherVersionsOf(impl->name())) {
          continue;
        }
        if (options_.offline) {
          if (Usable(impl, impl->name(), *config, canonical).ok()) candidates.push_back(Candidate{std::string(impl->name()), *config});
          continue;
        }
        auto [it, inserted] = spaces.try_emplace(impl);
        if (inserted && impl->Applicable(canonical, target_).ok()) it->second = impl->Space(canonical, target_);
        if (it->second && it->second->Contains(*config) && WithinWorkspaceLimit(impl, *config, canonical).ok()) {
          candidates.push_back(Candidate{std::string(impl->name()), *config});
        }
      }
      if (candidates.size() > before) legal_distance = std::min(legal_distance, n.distance);
    }
  }
  const bool pooled = !candidates.empty();
  if (!pooled) {
    candidates = LegalCandidates(canonical);
    candidates.erase(std::remove_if(candidates.begin(), candidates.end(),
                                    [this](const Candidate& c) { return ModelMeasuredOtherVersionsOf(c.implementation); }),
                     candidates.end());
  }
  // The floor's picks (the rule's and the vendor's) join the pool, so that a prediction
  // is never a candidate the model ranks below what the floor would serve. (Over the
  // shipped H100 records this took the holdout study from 1.221 to 1.179.)
  if (pooled) {
    *picks = Picks(canonical);
    for (const StatusOr<Decision>* floor : {&(*picks)->rule, &(*picks)->vendor}) {
      if (!floor->ok() || ModelMeasuredOtherVersionsOf((*floor)->implementation->name())) continue;
      Candidate c{std::string((*floor)->implementation->name()), (*floor)->config};
      if (std::find(candidates.begin(), candidates.end(), c) == candidates.end()) candidates.push_back(std::move(c));
    }
  }
  if (model_notes != nullptr) {
    model_notes->push_back(pooled ? fmt::format("ranked {} candidates: the fastest of the nearest training workloads "
                                                "that are legal here, and the rule's and the vendor's picks",
                                                candidates.size())
                                  : fmt::format("ranked all {} legal candidates (none of the nearest training "
                                                "workloads' fastest is legal here)",
                                                candidates.size()));
  }
  // Both boosters over the pool, the candidates encoded once: the ranking decides, the
  // time model says the microseconds and checks the ranking (below).
  StatusOr<Selector::Predictions> both = selector_->RankAndTime(registry_, canonical, target_, candidates);
  if (!both.ok()) {
    if (model_notes != nullptr) model_notes->push_back(fmt::format("no prediction: {}", both.status().message()));
    return Prediction::kNone;
  }
  std::vector<double>& predicted = both->slowdown;
  const std::vector<double>& pool_us = both->us;
  if (pooled) BlendWithNeighbours(near, candidates, RunsAtNeighbours(registry_, target_, near, candidates), &predicted);
  size_t best = candidates.size(), second = candidates.size();
  for (size_t i = 0; i < candidates.size(); ++i) {
    const double t = predicted[i];
    if (std::isnan(t)) continue;
    if (best == candidates.size() || t < predicted[best]) {
      second = best;
      best = i;
    } else if (second == candidates.size() || t < predicted[second]) {
      second = i;
    }
  }
  if (best == candidates.size()) {
    if (model_notes != nullptr) model_notes->push_back("the model knows none of the applicable implementations");
    return Prediction::kNone;
  }
  const Candidate& c = candidates[best];
  // The predicted times of the best and the runner-up, for the record and for explain.
  const auto us_of = [&](size_t i) { return std::isnan(pool_us[i]) ? -1.0 : pool_us[i]; };
  const double best_us = us_of(best);
  if (model_notes != nullptr) {
    model_notes->push_back(fmt::format("best predicted: {} {} at {:.2f} us (slowdown over the best {:.3f})",
                                       c.implementation, c.config.ToString(), best_us, predicted[best]));
    if (second < candidates.size()) {
      model_notes->push_back(fmt::format("runner-up: {} {} at {:.2f} us (slowdown {:.3f})",
                                         candidates[second].implementation, candidates[second].config.ToString(),
                                         us_of(second), predicted[second]));
    }
    size_t unknown = 0;
    for (double t : predicted) unknown += std::isnan(t);
    if (unknown > 0) model_notes->push_back(fmt::format("{} candidates of implementations it never saw", unknown));
  }
  // (No neighbour's fastest legal here: the whole space was ranked, trusted by the nearest.)
  const double distance = near.empty() ? INFINITY : pooled ? legal_distance : near.front().distance;
  // The whole space ranked, but the model never saw the implementation that the floor
  // (the rule, or the vendor's heuristic) would run: it cannot weigh its pick against
  // what would be served without it, so the floor decides. (On the H200 logs, a fold's
  // model that knew one of the nine legal scatter implementations picked it for the hot
  // 1,024-float scatter-add: 3.02 s measured, the rule's privatized kernel 150 us.)
  if (!pooled) {
    if (!picks->has_value()) *picks = Picks(canonical);
    for (const StatusOr<Decision>* floor : {&(*picks)->rule, &(*picks)->vendor}) {
      if (!floor->ok() || selector_->KnowsImplementation(canonical.op(), (*floor)->implementation->name())) continue;
      const std::string why = fmt::format("the model never saw {}, which the {} would run", (*floor)->implementation->name(),
                                          floor == &(*picks)->rule ? "rule" : "vendor's heuristic");
      if (model_notes != nullptr) model_notes->push_back("not trusted: " + why);
      Note(notes, "predicted", c.implementation, c.config, "not trusted: " + why);
      return Prediction::kNone;
    }
  }
  // The two models disagree: the time model predicts the ranking model's pick at
  // kDisagree x the fastest of the pool or slower. Neither is to be trusted here, and the
  // floor decides. (Over the shipped H100 records, averaged over six fold counts from 5
  // to 20, this took the holdout study from 1.106 to 1.092.)
  if (!std::isnan(pool_us[best])) {
    size_t fastest = best;
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (!std::isnan(pool_us[i]) && pool_us[i] < pool_us[fastest]) fastest = i;
    }
    if (pool_us[best] >= kDisagree * pool_us[fastest]) {
      const std::string why = fmt::format(
          "contested: the time model predicts it at {:.2f}x the fastest of the pool ({} {}, {:.2f} us)",
          pool_us[best] / pool_us[fastest], candidates[fastest].implementation, candidates[fastest].config.ToString(),
          pool_us[fastest]);
      if (model_notes != nullptr) model_notes->push_back(why);
      Note(notes, "predicted", candidates[best].implementation, candidates[best].config, "not trusted: " + why);
      return Prediction::kContested;
    }
  }
  // Contested: one of the nearest training workloads measured the pick at 1.5x its best
  // or slower. The neighbours disagree about it, so the model has no confidence here and
  // the floor decides, not a neighbour's record either (a 1x256x14x14 3x3 layer: the
  // N=32 neighbours had Winograd the fastest, the nearest, 1x512x7x7, measured it at
  // 2.6x its best).
  const std::string key = CandidateKey(c);
  for (const Selector::Neighbour& n : near) {
    for (size_t j = 0; j < n.top.size() && j < n.top_slowdown.size(); ++j) {
      if (n.top[j] == key && n.top_slowdown[j] >= kContested) {
        const std::string why = fmt::format("contested: {:.2f}x the best of the training workload '{}' (distance {:.2f})",
                                            n.top_slowdown[j], n.workload, n.distance);
        if (model_notes != nullptr) model_notes->push_back(why);
        Note(notes, "predicted", c.implementation, c.config, "not trusted: " + why);
        return Prediction::kContested;
      }
    }
  }
  if (const std::optional<std::string> why = ContestedByRecords(canonical, c, kContested)) {
    if (model_notes != nullptr) model_notes->push_back(*why);
    Note(notes, "predicted", c.implementation, c.config, "not trusted: " + *why);
    return Prediction::kContested;
  }
  if (const std::string why = AgainstRules(c, canonical); !why.empty()) {
    if (model_notes != nullptr) model_notes->push_back("contested: " + why);
    Note(notes, "predicted", c.implementation, c.config, "not trusted: " + why);
    return Prediction::kContested;
  }
  if (!(distance <= options_.model_max_distance)) {
    Note(notes, "predicted", c.implementation, c.config,
         fmt::format("not trusted: the nearest training workload with a candidate legal here is at distance "
                     "{:.2f} > {:.2f}",
                     distance, options_.model_max_distance));
    return Prediction::kNone;
  }
  const Implementation* impl = registry_.FindImplementation(c.implementation);
  *out = Make(impl, c.config, Provenance::kPredicted,
              fmt::format("best predicted of {} candidates ({:.2f} us); nearest training workload with a "
                          "candidate legal here at distance {:.2f}",
                          candidates.size(), best_us, distance),
              canonical);
  out->predicted_us = best_us;
  Note(notes, "predicted", c.implementation, c.config, "chosen");
  return Prediction::kDecided;
}

StatusOr<Decision> Dispatcher::Vendor(const Workload& canonical) const {
  if (options_.offline) {
    const OfflineSpace* space = options_.offline(canonical);
    const Implementation* impl =
        space != nullptr && space->vendor ? registry_.FindImplementation(space->vendor->implementation) : nullptr;
    if (impl == nullptr) return absl::NotFoundError("no recorded vendor choice (offline)");
    return Make(impl, space->vendor->config, Provenance::kVendor,
                fmt::format("the vendor library's own heuristic ({}, as recorded)", impl->name()), canonical);
  }
  for (const Implementation* impl : registry_.ImplementationsOf(canonical.op())) {
    if (impl->device_kind() != target_.kind) continue;
    StatusOr<Config> config = impl->VendorChoice(canonical, target_);
    if (!config.ok()) continue;
    if (options_.deterministic && !impl->traits().deterministic) continue;
    if (!Usable(impl, impl->name(), *config, canonical).ok()) continue;
    return Make(impl, *std::move(config), Provenance::kVendor,
                fmt::format("the vendor library's own heuristic ({})", impl->name()), canonical);
  }
  return absl::NotFoundError(fmt::format("no vendor heuristic serves {}", canonical.op()));
}

StatusOr<Decision> Dispatcher::Floor(const Workload& canonical, std::vector<Considered>* notes,
                                     FloorPicks picks) const {
  StatusOr<Decision>& rule = picks.rule;
  StatusOr<Decision>& vendor = picks.vendor;
  if (!vendor.ok()) {
    if (rule.ok() && notes != nullptr) {
      Note(notes, "heuristic", rule->implementation->name(), rule->config, "chosen: " + rule->reason);
    }
    return rule;
  }
  if (!rule.ok()) {
    Note(notes, "vendor heuristic", vendor->implementation->name(), vendor->config, "chosen: no rule applies");
    return vendor;
  }
  if (rule->implementation == vendor->implementation && rule->config == vendor->config) {
    Note(notes, "heuristic", rule->implementation->name(), rule->config, "chosen: the vendor's heuristic agrees");
    return rule;
  }
  // Both apply. The nearest tuned workload that measured both decides where one was
  // kVerdict x faster there (strategies/floor_verdict.cc); else the model decides when it
  // knows both implementations (its ranking); else the vendor's choice is the floor (what
  // a framework would run by default).
  const Candidate vendor_pick{std::string(vendor->implementation->name()), vendor->config};
  if (const std::optional<FloorVerdict> v = NeighboursVerdict(canonical, rule->implementation->name(), vendor_pick)) {
    const bool rule_wins = v->vendor_us >= kVerdict * v->rule_us;
    if (rule_wins || v->rule_us >= kVerdict * v->vendor_us) {
      Decision& pick = rule_wins ? *rule : *vendor;
      const Decision& other = rule_wins ? *vendor : *rule;
      pick.reason += fmt::format(
          "; the nearest tuned workload that measured both, '{}' (distance {:.2f}), ran the rule's pick ({} {}) in "
          "{:.2f} us and the vendor's in {:.2f} us",
          v->workload, v->distance, v->rule_there.implementation, v->rule_there.config.ToString(), v->rule_us,
          v->vendor_us);
      Note(notes, "floor", other.implementation->name(), other.config, "slower on the nearest tuned workload");
      Note(notes, "floor", pick.implementation->name(), pick.config, "chosen");
      return pick;
    }
  }
  const OpDef* op = registry_.FindOp(canonical.op());
  if (selector_ != nullptr && options_.use_model && op != nullptr) {
    const std::vector<Candidate> two = {
        Candidate{std::string(rule->implementation->name()), rule->config},
        Candidate{std::string(vendor->implementation->name()), vendor->config}};
    const StatusOr<Selector::Predictions> both = selector_->RankAndTime(registry_, canonical, target_, two);
    if (both.ok() && !std::isnan(both->slowdown[0]) && !std::isnan(both->slowdown[1])) {
      const std::vector<double>& t = both->us;
      const int p = both->slowdown[0] <= both->slowdown[1] ? 0 : 1;
      Decision& pick = p == 0 ? *rule : *vendor;
      const Decision& other = p == 0 ? *vendor : *rule;
      pick.predicted_us = t[p];
      pick.reason = fmt::format("{}: predicted {:.2f} us against {:.2f} us for the {}", pick.reason, t[p], t[1 - p],
                                other.provenance == Provenance::kVendor ? "vendor's heuristic" : "rule");
      // The time model predicts the ranking's choice kDisagree x slower or more: said, not
      // followed. (Following it took the holdout study at 10 folds from 1.098 to 1.080, but
      // on the H100 it turned two held-out lines the wrong way: the DeepLabv3 dilated 3x3
      // from the rule's im2col GEMM, 730 us, to cuDNN's pick, 1,095 us, and a Mask R-CNN
      // 3x3 from cuDNN's pick, 104 us, to the rule's, 112 us.)
      const bool disagree = !std::isnan(t[0]) && !std::isnan(t[1]) && t[p] >= kDisagree * t[1 - p];
      if (disagree) pick.reason += " (the models disagree: ranked first, predicted slower; the ranking decides)";
      Note(notes, "floor", other.implementation->name(), other.config,
           disagree ? "ranked below (though predicted faster)" : "predicted slower");
      Note(notes, "floor", pick.implementation->name(), pick.config, "chosen");
      return pick;
    }
  }
  vendor->reason += fmt::format("; the floor where no model knows better (the rule would take {} {})",
                                rule->implementation->name(), rule->config.ToString());
  Note(notes, "heuristic", rule->implementation->name(), rule->config, "passed over for the vendor's heuristic");
  Note(notes, "vendor heuristic", vendor->implementation->name(), vendor->config, "chosen");
  return vendor;
}

// Where a rule says where its implementation fits (StrategyRule::fits) and `pick` is
// not there: that place, in words; empty otherwise.
std::string Dispatcher::AgainstRules(const Candidate& pick, const Workload& canonical) const {
  const Strategy* strategy = registry_.FindStrategy(canonical.op());
  if (strategy == nullptr) return "";
  for (const StrategyRule& rule : strategy->rules()) {
    if (rule.implementation == pick.implementation && rule.fits && !rule.fits(canonical, target_, pick.config)) {
      return fmt::format("{} {} fits only where {}", pick.implementation, pick.config.ToString(), rule.fits_when);
    }
  }
  return "";
}

// A rule without a config of its own takes the implementation's default (its space's
// preferred values), not whatever the space enumerates first.
StatusOr<Config> Dispatcher::RuleConfig(const StrategyRule& rule, const Implementation* impl,
                                        const Workload& canonical) const {
  if (rule.default_config) return rule.default_config(canonical, target_);
  if (impl == nullptr) return absl::NotFoundError(fmt::format("'{}' is not registered", rule.implementation));
  return impl->DefaultConfig(canonical, target_);
}

// Offline, today's rules decide where the workload's records can say what they serve:
// the first rule that holds and whose implementation was measured for the workload (so
// it applies there) gives its config, which counts when it was measured too, and is
// unknown when it was not (the study reports what today's code serves, or nothing).
// Where no rule's implementation was measured, the rule's choice recorded at tuning time
// stands in (rules change; records stay).
StatusOr<Decision> Dispatcher::OfflineHeuristic(const Workload& canonical) const {
  const OfflineSpace* space = options_.offline(canonical);
  if (space == nullptr) return absl::NotFoundError("no measured candidates (offline)");
  if (const Strategy* strategy = registry_.FindStrategy(canonical.op())) {
    for (const StrategyRule& rule : strategy->rules()) {
      if (rule.holds && !rule.holds(canonical, target_)) continue;
      const Implementation* impl = registry_.FindImplementation(rule.implementation);
      if (impl == nullptr || (options_.deterministic && !impl->traits().deterministic)) continue;
      const auto measured = [&](const Candidate& c) { return c.implementation == rule.implementation; };
      if (std::none_of(space->candidates.begin(), space->candidates.end(), measured)) continue;
      StatusOr<Config> config = RuleConfig(rule, impl, canonical);
      if (config.ok()) {
        const Candidate c{rule.implementation, *config};
        if (std::find(space->candidates.begin(), space->candidates.end(), c) != space->candidates.end()) {
          return Make(impl, *config, Provenance::kHeuristic,
                      fmt::format("strategy rule '{}' (priority {})", rule.when, rule.priority), canonical);
        }
        // Today's decision was never measured for the workload: unknown, not the old one.
        return absl::NotFoundError(fmt::format("today's rule '{}' takes {} {}, never measured for it (offline)",
                                               rule.when, rule.implementation, config->ToString()));
      }
      break;
    }
  }
  const Implementation* impl = space->rule ? registry_.FindImplementation(space->rule->implementation) : nullptr;
  if (impl == nullptr) return absl::NotFoundError("no rule choice measured (offline)");
  return Make(impl, space->rule->config, Provenance::kHeuristic, "strategy rule (as recorded)", canonical);
}

StatusOr<Decision> Dispatcher::Heuristic(const Workload& canonical) const {
  if (options_.offline) return OfflineHeuristic(canonical);
  std::vector<std::string> rejected;
  auto try_impl = [&](const Implementation* impl, std::string_view name, Config config,
                      std::string_view why, Decision* out) {
    if (options_.deterministic && impl != nullptr && !impl->traits().deterministic) {
      rejected.push_back(fmt::format("{}: not deterministic", name));
      return false;
    }
    Status usable = Usable(impl, name, config, canonical);
    if (!usable.ok() && impl != nullptr && absl::IsInvalidArgument(usable) &&
        Message(usable).find("config outside") != std::string_view::npos) {
      // The rule's default config does not fit this workload: take the closest legal one.
      StatusOr<Config> closest = impl->Space(canonical, target_).Closest(config);
      if (closest.ok()) {
        config = *std::move(closest);
        usable = Usable(impl, name, config, canonical);
      }
    }
    if (!usable.ok()) {
      rejected.push_back(fmt::format("{}: {}", name, usable.message()));
      return false;
    }
    out->implementation = impl;
    out->config = std::move(config);
    out->provenance = Provenance::kHeuristic;
    out->reason = std::string(why);
    out->workspace_bytes = impl->WorkspaceBytes(canonical, out->config);
    return true;
  };
  Decision d;
  if (const Strategy* strategy = registry_.FindStrategy(canonical.op())) {
    for (const StrategyRule& rule : strategy->rules()) {
      if (rule.holds && !rule.holds(canonical, target_)) continue;
      const Implementation* impl = registry_.FindImplementation(rule.implementation);
      Config config;
      if (rule.default_config || (impl != nullptr && impl->Applicable(canonical, target_).ok())) {
        if (StatusOr<Config> c = RuleConfig(rule, impl, canonical); c.ok()) config = *std::move(c);
      }
      if (try_impl(impl, rule.implementation, std::move(config),
                   fmt::format("strategy rule '{}' (priority {})", rule.when, rule.priority),
                   &d)) {
        return d;
      }
    }
  }
  for (const Implementation* impl : registry_.ImplementationsOf(canonical.op())) {
    if (impl->device_kind() != target_.kind) continue;
    StatusOr<Config> fallback = impl->DefaultConfig(canonical, target_);
    if (!fallback.ok()) continue;
    if (try_impl(impl, impl->name(), *std::move(fallback),
                 "no strategy rule applies: first applicable implementation, its default config", &d)) {
      return d;
    }
  }
  std::string why;
  for (const std::string& r : rejected) why += "\n  " + r;
  return absl::NotFoundError(fmt::format("no implementation of {} applies to '{}' on {}{}",
                                         canonical.op(), canonical.ToString(),
                                         target_.device().ToString(), why));
}

}  // namespace opsched
