#include "strategies/dispatcher.h"

#include <algorithm>

#include "core/format.h"

#include "core/log.h"

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

}  // namespace

Dispatcher::Dispatcher(const Registry& registry, Target target, const records::Database* db,
                       DispatchOptions options)
    : registry_(registry),
      target_(std::move(target)),
      target_key_(records::TargetKey::Of(target_)),
      db_(db),
      options_(options) {}

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
  for (const TensorArg& t : entry->canonical.tensors()) entry->expected.push_back(t.desc);
  const OpDef* op = registry_.FindOp(entry->canonical.op());
  for (const TensorDesc& d : op->OutputDescs(entry->canonical)) entry->expected.push_back(d);
  return cache_.Insert(std::move(entry));
}

StatusOr<Explanation> Dispatcher::Explain(const Workload& workload) const {
  Workload canonical = workload;
  OPSCHED_RETURN_IF_ERROR(registry_.Canonicalize(&canonical));
  Explanation e;
  e.workload = canonical.ToString();
  e.target = target_.ToString();
  OPSCHED_ASSIGN_OR_RETURN(e.decision, DecideCanonical(canonical, &e.considered));
  return e;
}

Status Dispatcher::Usable(const Implementation* impl, std::string_view name,
                          const Config& config, const Workload& canonical) const {
  if (impl == nullptr) {
    return absl::NotFoundError(
        fmt::format("implementation '{}' is not registered in this build", name));
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
  return absl::OkStatus();
}

void Dispatcher::WarnOnce(const records::RecordEntry* entry, std::string_view message) const {
  std::lock_guard<std::mutex> lock(warned_mu_);
  if (warned_.insert(entry).second) Log().warn("skipping a record: {}", message);
}

bool Dispatcher::TryRecords(uint64_t workload_hash, uint64_t fingerprint,
                            const Workload& canonical, Provenance provenance,
                            std::string_view source, std::vector<Considered>* notes,
                            Decision* out) const {
  std::vector<const records::RecordEntry*> ok;
  for (const records::RecordEntry* e : db_->RecordsFor(workload_hash, fingerprint)) {
    if (e->status == records::OK) ok.push_back(e);
  }
  std::stable_sort(ok.begin(), ok.end(), [](const auto* a, const auto* b) {
    return a->median_us < b->median_us;
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
    out->measured_us = e->median_us;
    out->workspace_bytes = impl->WorkspaceBytes(canonical, config);
    const records::TargetProto& from = db_->target(e->target);
    switch (provenance) {
      case Provenance::kExactRecord:
        out->reason = fmt::format("fastest usable ok record on this target: {:.2f} us{}",
                                  e->median_us, RecordOrigin(*db_, *e));
        break;
      case Provenance::kTransferredRecord:
        out->reason = fmt::format(
            "record from {} {} (same arch, other device or library versions): {:.2f} us{}",
            from.device_name(), from.arch(), e->median_us, RecordOrigin(*db_, *e));
        break;
      default:
        out->reason = fmt::format("{}: {:.2f} us there{}", source, e->median_us,
                                  RecordOrigin(*db_, *e));
    }
    Note(notes, source, name, config, "chosen");
    return true;
  }
  return false;
}

StatusOr<Decision> Dispatcher::DecideCanonical(const Workload& canonical,
                                               std::vector<Considered>* notes) const {
  Decision d;
  if (db_ != nullptr) {
    const uint64_t wl = canonical.hash();
    if (TryRecords(wl, target_key_.fingerprint, canonical, Provenance::kExactRecord,
                   "exact record", notes, &d)) {
      return d;
    }
    if (options_.allow_transferred_records) {
      for (uint64_t fp : db_->FingerprintsWithArch(target_key_.arch)) {
        if (fp == target_key_.fingerprint) continue;
        if (TryRecords(wl, fp, canonical, Provenance::kTransferredRecord,
                       "transferred record", notes, &d)) {
          return d;
        }
      }
    }
    if (options_.use_nearest_records) {
      for (const records::Neighbour& n :
           db_->Nearest(canonical, target_, options_.nearest_k,
                        options_.allow_transferred_records)) {
        if (n.distance > options_.nearest_max_distance) {
          if (notes != nullptr) {
            Note(notes, fmt::format("nearest record of '{}'", n.workload->ToString()), "-", Config(),
                 fmt::format("too far (distance {:.2f} > {:.2f})", n.distance, options_.nearest_max_distance));
          }
          break;  // the rest are further still
        }
        const uint64_t fp = db_->target(n.best.entry->target).fingerprint();
        const std::string source = fmt::format("nearest record of '{}' (distance {:.2f})",
                                               n.workload->ToString(), n.distance);
        if (TryRecords(n.workload->hash(), fp, canonical, Provenance::kNearestRecord, source,
                       notes, &d)) {
          return d;
        }
      }
    }
  }
  OPSCHED_ASSIGN_OR_RETURN(d, Heuristic(canonical));
  if (notes != nullptr) {
    Note(notes, "heuristic", d.implementation->name(), d.config, "chosen: " + d.reason);
  }
  return d;
}

StatusOr<Decision> Dispatcher::Heuristic(const Workload& canonical) const {
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
      Config config = rule.default_config ? rule.default_config(canonical, target_) : Config();
      if (try_impl(impl, rule.implementation, std::move(config),
                   fmt::format("strategy rule '{}' (priority {})", rule.when, rule.priority),
                   &d)) {
        return d;
      }
    }
  }
  for (const Implementation* impl : registry_.ImplementationsOf(canonical.op())) {
    if (impl->device_kind() != target_.kind) continue;
    std::vector<Config> legal = impl->Space(canonical, target_).Enumerate(1);
    if (legal.empty()) continue;
    if (try_impl(impl, impl->name(), legal.front(),
                 "no strategy rule applies: first applicable implementation", &d)) {
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
