#include "tuner/seeds.h"

#include <algorithm>
#include <cmath>

#include "records/database.h"
#include "selector/selector.h"

namespace opsched {

std::vector<Seed> SeedCandidates(const Dispatcher& served, const Workload& canonical,
                                 const Dispatcher* other_devices) {
  std::vector<Seed> seeds;
  auto add = [&](const Decision& d, std::string source) {
    if (d.implementation == nullptr) return;
    Candidate c{std::string(d.implementation->name()), d.config};
    if (std::none_of(seeds.begin(), seeds.end(), [&](const Seed& s) { return s.candidate == c; })) {
      seeds.push_back(Seed{std::move(c), std::move(source)});
    }
  };
  if (StatusOr<Explanation> e = served.Explain(canonical); e.ok()) {
    add(e->decision, e->decision.provenance == Provenance::kHeuristic ? "heuristic" : "served");
  }
  if (StatusOr<Decision> rule = served.Heuristic(canonical); rule.ok()) add(*rule, "heuristic");
  if (StatusOr<Decision> vendor = served.Vendor(canonical); vendor.ok()) add(*vendor, "vendor");
  if (other_devices != nullptr) {
    if (StatusOr<Explanation> e = other_devices->Explain(canonical); e.ok()) add(e->decision, "transferred");
  }
  // The model's own best guess, even where the Runtime would not trust it.
  const Selector* selector = served.selector();
  if (selector == nullptr && other_devices != nullptr) selector = other_devices->selector();
  const OpDef* op = served.registry().FindOp(canonical.op());
  if (selector != nullptr && op != nullptr && selector->HasOp(canonical.op())) {
    const std::vector<Candidate> candidates = served.LegalCandidates(canonical);
    StatusOr<std::vector<double>> t = selector->Rank(served.registry(), canonical, served.target(), candidates);
    if (t.ok()) {
      size_t best = candidates.size();
      for (size_t i = 0; i < candidates.size(); ++i) {
        if (!std::isnan((*t)[i]) && (best == candidates.size() || (*t)[i] < (*t)[best])) best = i;
      }
      if (best < candidates.size()) {
        const Candidate& c = candidates[best];
        if (std::none_of(seeds.begin(), seeds.end(), [&](const Seed& s) { return s.candidate == c; })) {
          seeds.push_back(Seed{c, "predicted"});
        }
      }
    }
  }
  return seeds;
}

std::unique_ptr<Dispatcher> OtherDevicesDispatcher(const Registry& registry, const Target& target,
                                                   const records::Database* db, const Selector* model) {
  const bool model_here = model != nullptr && model->Serves(target, false).ok();
  const bool model_transfers = model != nullptr && model->Serves(target, true).ok();
  const records::TargetKey key = records::TargetKey::Of(target);
  const bool other_records = db != nullptr && db->CountFor(key, true) > db->CountFor(key, false);
  if (!other_records && (model_here || !model_transfers)) return nullptr;
  return std::make_unique<Dispatcher>(registry, target, db, DispatchOptions{.allow_transferred_records = true},
                                      model_transfers ? model : nullptr);
}

}  // namespace opsched
